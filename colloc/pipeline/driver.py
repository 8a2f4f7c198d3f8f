"""The one solve pipeline: validate → mesh → guess → build → backend → result.

Every kind of problem goes through :func:`run`: a :class:`colloc.Problem` by
the transcription its scheme selects in :mod:`colloc.transcription.registry` (collocation, or the
midpoint variational integrator, each with its contact-implicit form), and a
multi-phase problem by the transcription it names
(``MultiPhaseProblem.transcription``).  :func:`build_nlp` stops after the
build (``colloc info``).  Nothing here imports the public ``solve`` module
back; refinement sits on top of this module.
"""
from __future__ import annotations

import dataclasses
import time as _time

from .accuracy import check_tolerance, with_accuracy
from .phase_accuracy import with_phase_accuracy
from ..solvers import check as check_backend
from ..solvers import get_backend
from .options import SolveOptions
from ..errors import OptionError, ProblemError
from ..transcription.nonfinite import HINT, describe, rows_at, trial_points
from ..model.problem import Problem
from ..model.scale import MAX_MAGNITUDE, horizon_note, large_values
from ..results.trajectory import Status
from ..transcription.base import Transcription, slack_warnings
from ..transcription.multiphase import MultiPhase
from ..transcription.registry import by_scheme


def transcription(problem, options: SolveOptions | None = None, **keywords) -> Transcription:
    """The transcription of ``problem`` with these settings (``options`` and keywords of :func:`colloc.solve`), every
    one of them checked (nothing is built)."""
    o = SolveOptions.of(options, **keywords)
    if isinstance(problem, Problem):
        problem.validate()
        rows = {} if o.relaxation is None else dict(relaxation=o.relaxation)  # the complementarity rows' ε
        return by_scheme(o.scheme).make(problem, o.scheme, o.intervals, o.mesh, **o.transcription, **rows)
    if o.contact is not None:
        raise OptionError(f"contact='implicit' solves a single-phase colloc.Problem; got {type(problem).__name__} (its phases fix the contact schedule already).")
    make = getattr(problem, "transcription", None)
    if not callable(make):
        raise ProblemError(f"solve() takes a colloc.Problem or MultiPhaseProblem; got {type(problem).__name__}.")
    return make(scheme=o.scheme, intervals=o.intervals, mesh=o.mesh, **o.transcription)


def build_nlp(problem, options: SolveOptions | None = None, **keywords):
    """The NLP ``colloc.solve`` would hand to IPOPT, with its layout and labelled rows (nothing is solved).

    Arguments as :func:`colloc.solve` (or ``options``); only the transcription's and the guess are used.
    Returns the NLP (``nlp.layout.size`` variables, ``nlp.rows.size`` constraints, ``nlp.rows.labels()``).
    """
    o = SolveOptions.of(options, **keywords)
    tr = transcription(problem, o)
    return tr.build(tr.warm_start(o.guess))


def run(problem, options: SolveOptions | None = None, **keywords):
    """Solve ``problem`` once on one mesh; ``options`` and keywords as :func:`colloc.solve` (no ``refine``,
    ``starts``, or contact homotopy options, which :func:`colloc.pipeline.solve.run_pipeline` routes elsewhere)."""
    o = SolveOptions.of(options, **keywords)
    o.refuse(("refine", "starts", "relaxation", "complementarity_tolerance", "relaxation_factor"),
             "One run solves once on one mesh; `{name}` selects another pipeline: pass it to colloc.solve.")
    tolerance = check_tolerance(o.accuracy)
    solver = get_backend(o.backend)
    tr = transcription(problem, o)
    check_backend(solver, tr, o.progress, o.checkpoint)
    warm = tr.warm_start(o.guess)
    solver_opts = solver.options(o.solver_options(), o.verbose)

    start = _time.perf_counter()
    nlp = tr.build(warm)
    to_trajectory = lambda w: tr.trajectory(nlp, w, dict(status="checkpoint", success=False))  # noqa: E731
    sol, stats, build_seconds, solve_seconds = solver.run(nlp, solver_opts, o.expand, o.progress, o.checkpoint, to_trajectory, start)
    assess = with_phase_accuracy if isinstance(tr, MultiPhase) else with_accuracy
    res = assess(tr, nlp, sol, result(tr, nlp, sol, stats, build_seconds, solve_seconds, solver), tolerance)
    short = horizon_note(problem) if not res.success and res.status != Status.INTERRUPTED else ""
    if short:  # the horizon, not the guess, is the likely cause
        res = dataclasses.replace(res, message=f"{res.message} {short}")
    elif (res.status in (Status.INFEASIBLE, Status.RESTORATION_FAILED) and warm is None and _straight_guess(problem)
            and not res.stats.get("nonfinite_evaluations")):  # a NaN, not the guess's shape, is the cause then
        res = dataclasses.replace(res, message=res.message + TRIVIAL_GUESS_HINT)
    return res


TRIVIAL_GUESS_HINT = (" The guess was constant or a straight line in time, where the dynamics can be degenerate"
                      " (e.g. a heading guessed ≡ 0 gives no sideways motion); a non-trivial guess is the likely cure.")


def _straight_guess(problem) -> bool:
    """Whether every variable's guess is constant or linear in time (the default rules, or such user guesses).

    Local infeasibility from such a guess is usually the guess's fault, not
    contradictory bounds: the constraint Jacobian is often rank-deficient there.
    """
    guesses = getattr(problem, "guesses", None)
    return guesses is not None and all(kind in ("constant", "linear") for kind, _ in guesses.values())


def result(tr, nlp, sol, stats, build_seconds, solve_seconds, solver):
    """The SolveResult of one backend run: status and hint, trajectory, violations by label, slacks."""
    o = solver.outcome(nlp, sol, stats, nlp.terms)
    slacks = tr.slacks(nlp, o.w)
    traj = tr.trajectory(nlp, o.w, dict(status=o.status.value, success=o.success, objective=o.objective, iterations=o.iterations,
                                        **tr.result_metadata()))
    o = _no_minimum(nlp, sol, o, traj)
    message = o.message
    # a failure among values a double cannot resolve: name the largest (diverging iterates of an unbounded problem
    # are named already; a converged solve met IPOPT's tolerances, however large its values)
    if not o.success and o.status != Status.UNBOUNDED:
        large = large_values(o.w, _plain_name(nlp), _variable_label(nlp, traj))
        message = f"{large} {message}" if large else message
    if not o.success and o.status != Status.INTERRUPTED:
        found = _non_finite(tr, nlp, o, stats, traj)
        if found:  # the NaN is the cause; IPOPT's status is how it ended
            message = f"{found} {o.message}" if o.status == Status.INVALID_NUMBER else f"{found} {HINT} IPOPT stopped with: {o.message}"
    return tr.result(
        nlp, o.w, traj, success=o.success, status=o.status, message=message, objective=o.objective, terms=o.terms,
        iterations=o.iterations, build_seconds=build_seconds, solve_seconds=solve_seconds,
        violations=nlp.rows.violations(o.g), worst=nlp.rows.worst(o.g, 10), slacks=slacks, warnings=slack_warnings(slacks),
        stats=dict(stats), nlp_size=dict(variables=int(nlp.layout.size), constraints=int(nlp.rows.size)))


def _no_minimum(nlp, sol, o, traj):
    """``o`` flagged when the objective has no minimum: IPOPT's iterates diverged, or IPOPT accepted the guess
    without a step where a feasible direction still lowers the objective (:mod:`colloc.unbounded`)."""
    from . import unbounded

    variable_label = _variable_label(nlp, traj)
    if o.status == Status.UNBOUNDED and not o.objective < -MAX_MAGNITUDE:  # grown iterates, no falling objective: a scale
        found = False, "IPOPT stopped because its iterates passed 1e20 (`Diverging_Iterates`) while the objective did not fall."
    elif o.status == Status.UNBOUNDED:
        found = True, unbounded.diverged(nlp, o.w, variable_label, o.objective)
    elif o.success and o.iterations == 0 and o.terms:
        found = unbounded.not_a_minimum(nlp, sol, o.w, o.g, variable_label)
    else:
        return o
    if found is None:
        return o
    endless, message = found
    status = Status.UNBOUNDED if endless else Status.FAILED
    traj.metadata.update(status=status.value, success=False)
    return o._replace(status=status, success=False, message=message)


def _variable_label(nlp, traj):
    """``j -> "`m.u` at grid point 3 (t = 0.3)"``: entry ``j`` of ``w`` by its variable's name and time (the
    labels of ``w`` are made at the first call: most results never need one)."""
    label, names = _time_labels(nlp, traj)[1], []

    def variable_label(j):
        if not names:
            names.extend(nlp.layout.labels())
        return label(names[j])

    return variable_label


def _plain_name(nlp):
    """``j ->`` the variable's own name (``m.u``) of entry ``j`` of ``w``."""
    def name(j):
        label = nlp.layout.labels()[j]
        return label.partition(":")[2].rpartition("@k=")[0] or label

    return name


def _non_finite(tr, nlp, o, stats, traj) -> str:
    """What went NaN or inf (constraint rows, derivatives, cost terms, with times), or ``""``.

    From CasADi's reports of failed evaluations during the run, the constraint values and cost terms at
    the iterate IPOPT returned, and each cost term at the trial points of the last step.
    """
    import math

    events = stats.get("nonfinite_evaluations") or []
    cost_parts = lambda w: tr.cost_parts(nlp, w)  # noqa: E731
    row_time, variable_time = _time_labels(nlp, traj)
    row_label = lambda i: row_time(nlp.rows.label(i))  # noqa: E731
    labels = []

    def variable_label(j):
        if not labels:
            labels.extend(nlp.layout.labels())
        return variable_time(labels[j])

    at_guess = o.iterations == 0 and all(e.iteration == 0 for e in events)
    where = "at the guess" if at_guess else "at the last iterate"
    found = []
    rows = rows_at(o.g, row_label)
    if rows:
        found.append(f"Constraint {rows} are not finite {where}.".replace("row ", "row ", 1))
    if not all(math.isfinite(v) for v in o.terms.values()) and not any(e.function == "nlp_f" for e in events):
        terms = cost_parts(o.w)
        names = [k for k, v in o.terms.items() if not math.isfinite(v)]
        found.append(f"The objective is not finite {where}: " + (", ".join(terms) or "cost " + ", ".join(f"`{n}`" for n in names)) + ".")
    if events:
        text = describe(events, row_label, variable_label, cost_parts, trial_points(o.w, stats.get("previous_iterate")))
        found.append(text.replace("appeared in iteration 0 at points IPOPT tried", "appeared at the guess") if at_guess else text)
    return " ".join(found)


def _time_labels(nlp, traj):
    """Row and variable labels with the time of their grid point (defects: their interval)."""
    grid = getattr(nlp, "grid", None)  # multi-phase NLPs have one per phase: labels without times

    def when(label, interval):
        head, _, k = label.rpartition("@k=")
        if grid is None or not k.isdigit():
            return label
        k = int(k)
        if interval:
            if k >= grid.num_intervals:
                return label
            a, b = traj.time[grid.interval_starts[k]], traj.time[grid.interval_ends[k]]
            return f"{label} (t = {a:.6g} … {b:.6g})"
        return f"{label} (t = {traj.time[k]:.6g})" if k < traj.time.size else label

    def row(label):
        kind = label.split(":", 1)[0]
        return label if kind == "boundary" else when(label, kind.startswith("defect"))

    def variable(label):
        block, _, rest = label.partition(":")
        name, _, k = rest.rpartition("@k=")
        if block in ("x", "z", "u", "lam") and grid is not None and k.isdigit() and int(k) < traj.time.size:
            return f"`{name}` at grid point {k} (t = {traj.time[int(k)]:.6g})"  # a variable, by its own name
        if block == "p":
            return f"parameter `{name}`"
        return "the final time" if block == "tf" else label

    return row, variable
