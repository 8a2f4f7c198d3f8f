"""The one solve pipeline: validate → mesh → guess → build → backend → result.

Every kind of problem goes through :func:`run`: a :class:`colloc.Problem` by
collocation (:class:`~colloc.transcription.collocation.Collocation`) or by the
midpoint variational integrator (``scheme="midpoint-vi"``,
:class:`~colloc.transcription.midpoint_vi.MidpointVITranscription`), and a
multi-phase problem by the transcription it names
(``MultiPhaseProblem.transcription``).  :func:`build_nlp` stops after the
build (``colloc info``).  Nothing here imports the public ``solve`` module
back; refinement sits on top of this module.
"""
from __future__ import annotations

import dataclasses
import time as _time

from .backends import get_backend
from .errors import OptionError, ProblemError
from .problem import Problem
from .trajectory import Status
from .transcription.base import Transcription, slack_warnings
from .transcription.collocation import Collocation
from .transcription.contacts import ContactCollocation
from .transcription.midpoint_vi import SCHEME as MIDPOINT_VI
from .transcription.midpoint_vi import MidpointVITranscription


def transcription(problem, scheme="hermite-simpson", intervals=None, mesh=None, **options) -> Transcription:
    """The transcription of ``problem`` with these settings, every one of them checked (nothing is built)."""
    if isinstance(problem, Problem):
        problem.validate()
        if options.get("contact") is not None:
            return ContactCollocation(problem, scheme, intervals, mesh, **options)
        if scheme == MIDPOINT_VI:
            return MidpointVITranscription(problem, intervals, mesh, **options)
        return Collocation(problem, scheme, intervals, mesh, **options)
    if options.get("contact") is not None:
        raise OptionError(f"contact='implicit' solves a single-phase colloc.Problem; got {type(problem).__name__} (its phases fix the contact schedule already).")
    make = getattr(problem, "transcription", None)
    if not callable(make):
        raise ProblemError(f"solve() takes a colloc.Problem or MultiPhaseProblem; got {type(problem).__name__}.")
    return make(scheme=scheme, intervals=intervals, mesh=mesh, **options)


def build_nlp(problem, scheme="hermite-simpson", intervals=None, mesh=None, guess=None, **options):
    """The NLP ``colloc.solve`` would hand to IPOPT, with its layout and labelled rows (nothing is solved).

    Arguments as :func:`colloc.solve`.  Returns the NLP (``nlp.layout.size``
    variables, ``nlp.rows.size`` constraints, ``nlp.rows.labels()``).
    """
    tr = transcription(problem, scheme, intervals, mesh, **options)
    return tr.build(tr.warm_start(guess))


def run(problem, scheme="hermite-simpson", intervals=None, mesh=None, guess=None, ipopt=None, verbose=False, expand=True,
        progress=None, checkpoint=None, backend="ipopt", **options):
    """Solve ``problem`` once on one mesh; arguments as :func:`colloc.solve` (no ``refine``)."""
    solver = get_backend(backend)
    tr = transcription(problem, scheme, intervals, mesh, **options)
    warm = tr.warm_start(guess)
    solver_opts = solver.options(ipopt, verbose)

    start = _time.perf_counter()
    nlp = tr.build(warm)
    to_trajectory = lambda w: tr.trajectory(nlp, w, dict(status="checkpoint", success=False))  # noqa: E731
    sol, stats, build_seconds, solve_seconds = solver.run(nlp, solver_opts, expand, progress, checkpoint, to_trajectory, start)
    res = result(tr, nlp, sol, stats, build_seconds, solve_seconds, solver)
    if res.status in (Status.INFEASIBLE, Status.RESTORATION_FAILED) and warm is None and _straight_guess(problem):
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
    return tr.result(
        nlp, o.w, traj, success=o.success, status=o.status, message=o.message, objective=o.objective, terms=o.terms,
        iterations=o.iterations, build_seconds=build_seconds, solve_seconds=solve_seconds,
        violations=nlp.rows.violations(o.g), worst=nlp.rows.worst(o.g, 10), slacks=slacks, warnings=slack_warnings(slacks),
        stats=dict(stats), nlp_size=dict(variables=int(nlp.layout.size), constraints=int(nlp.rows.size)))
