"""Contact-implicit solves: the relaxation homotopy, the contact schedule found, event-driven verification.

``colloc.solve(problem, contact="implicit", ...)`` transcribes the contacts the
model declares as forces, impulses and complementarity rows
(:mod:`colloc.transcription.contacts`; with ``scheme="midpoint-vi"``, as impulses
at the steps of the discrete Euler–Lagrange equations,
:mod:`colloc.transcription.contact_vi`) and solves the mathematical program with
complementarity constraints (MPCC) by **Scholtes' relaxation** (Scholtes, SIAM
J. Optim. 11 (2001) 918–936): every product ``a·b`` of a complementarity pair
(``a, b ≥ 0``) is bounded by ``ε`` instead of 0, and ``ε`` is driven from
``relaxation`` down to ``complementarity_tolerance`` by a factor per solve,
each solve warm-started from the last (only the row bounds change, the NLP is
built once).  A relaxed problem satisfies the MPCC's constraint
qualifications, which IPOPT needs; an unrelaxed one has no strictly feasible
point.  Measured on the block and bar problems (docs/contacts.md, "Contact-implicit
solves"), the homotopy from 1e-1 finds the block's stick phase where a single
solve at 1e-8, or a homotopy from 1e-6, ends sliding throughout (J = 4.0370
for T = 4); an exact penalty
on the nonnegative products failed on the same problems and is not offered.

The result carries ``result.contact``: the complementarity residual per contact
(largest product ``a·b`` of its pairs), the schedule found (time spans in which each
contact is open, closed, sticking or sliding), the impacts (time and impulse)
and the homotopy's steps.  :func:`verify_contact` re-simulates a result with
the event-driven simulator (:func:`colloc.simulate_events`) and reports the
state error.
"""
from __future__ import annotations

import dataclasses
import time as _time

import numpy as np

from ..solvers import get_backend
from .contact_accuracy import with_contact_accuracy
from . import driver
from .driver import result as make_result
from ..discretization.grid import locate
from ..discretization.interpolant import last_rows_at
from ..errors import OptionError
from .options import FACTOR, RELAXATION, TOLERANCE, SolveOptions  # noqa: F401 - the homotopy's defaults, re-exported
from ..results.trajectory import SolveResult, Status, Trajectory
from ..transcription.contacts import CLOSED_GAP, COMPLEMENTARITY

#: With free steps, the homotopy's steps with a larger ε are solved on the mesh given, the rest with free steps.
FREE_FROM = 1e-3
#: IPOPT options of the warm-started steps of the homotopy (the user's ``ipopt`` overrides them).
WARM = {"bound_push": 1e-9, "bound_frac": 1e-9, "mu_init": 1e-6}
#: IPOPT options of the steps after the first, which also start from the last step's multipliers: without them
#: IPOPT sets every bound multiplier to 1, far from the barrier's μ, and each step of Solo12's stance took 50–80
#: iterations to walk back to a solution that had hardly moved.
WARM_MULTIPLIERS = {"warm_start_init_point": "yes", "warm_start_bound_push": 1e-9, "warm_start_bound_frac": 1e-9,
                    "warm_start_slack_bound_push": 1e-9, "warm_start_slack_bound_frac": 1e-9, "warm_start_mult_bound_push": 1e-9}
#: IPOPT options of one more try of a step that ended in restoration failure, from that step's last iterate, with
#: IPOPT's own multipliers (none carried over) and this barrier (over the user's ``mu_init``): measured on Solo12's
#: schedule-free jump from a standing guess, three steps that failed in restoration (43, 51 and 52 intervals) each
#: converged when restarted so, in 38, 65 and 293 iterations (docs/contacts.md).
RETRY = {"mu_init": 1e-4}
#: IPOPT options of every step: MUMPS's permuting scaling (MC64, IPOPT's default), which colloc's defaults turn
#: off; the complementarity rows are degenerate and without it the pushed block took 813 iterations, not 395.
CONTACT_IPOPT = {"mumps_permuting_scaling": 7}
#: Grid sequencing: with free steps, a mesh of more than ``SEQUENCE_ABOVE`` intervals first solves the whole homotopy on every
#: k-th of its mesh points (k = 4, 5, 3 or 2, at least ``COARSE_MIN`` intervals left), then only the steps with
#: ε ≤ ``SEQUENCE_FROM`` on the mesh itself, starting from the coarse solution (docs/performance.md).
SEQUENCE_ABOVE, COARSE_MIN, SEQUENCE_FROM = 40, 10, 1e-4
#: Gap below which a contact counts as closed, and sliding speed above which it slides, in the schedule.
GAP_TOLERANCE, SLIDE_TOLERANCE = CLOSED_GAP, 1e-4


def schedule(eps_start, eps_end, factor):
    """The relaxations ``ε₀, ε₀ r, …`` down to (and ending at) ``eps_end``."""
    for name, v in (("relaxation", eps_start), ("complementarity_tolerance", eps_end)):
        if not (isinstance(v, (int, float)) and 0 <= v < np.inf):
            raise OptionError(f"`{name}` must be a finite number ≥ 0; got {v!r}.")
    if not (isinstance(factor, (int, float)) and 0 < factor < 1):
        raise OptionError(f"`relaxation_factor` must lie in (0, 1); got {factor!r}.")
    if eps_end > eps_start:
        raise OptionError(f"`complementarity_tolerance` ({eps_end:g}) must not exceed `relaxation` ({eps_start:g}).")
    out = [float(eps_start)]
    while out[-1] * factor > eps_end * (1 + 1e-12):
        out.append(out[-1] * factor)
    if out[-1] != eps_end:
        out.append(float(eps_end))
    return out


def set_relaxation(nlp, eps):
    """Set ``ε`` in the bounds of every complementarity row (one-sided ``≤ ε``, two-sided ``|·| ≤ ε``)."""
    for b in nlp.rows.blocks:
        if b.kind == COMPLEMENTARITY:
            b.upper[:] = eps
            b.lower[np.isfinite(b.lower)] = -eps


def solve_contact(problem, options: SolveOptions | None = None, **keywords) -> SolveResult:
    """Solve a problem with ``contact="implicit"`` by the relaxation homotopy (module docstring).

    ``options`` and keywords as :func:`colloc.solve`, with ``relaxation`` (first ε, default 1e-1),
    ``complementarity_tolerance`` (last ε, default 1e-8) and ``relaxation_factor``
    (default 0.1).  A step that ends in restoration failure is tried once more from its own last
    iterate with IPOPT's multipliers and barrier started afresh (``RETRY``); the homotopy stops early at the
    first step that does not converge; the result is that step's.  With ``free_steps`` the steps with
    ε > ``FREE_FROM`` (1e-3) are solved on the mesh given and the rest, warm-started
    from there, with the interval lengths free; ``result.contact["steps"]`` lists both.
    With free steps, a mesh of more than ``SEQUENCE_ABOVE`` (40) intervals is solved by grid sequencing:
    the whole homotopy on a coarse mesh (every k-th mesh point), then the steps with
    ε ≤ ``SEQUENCE_FROM`` on the mesh given, from the coarse solution; should those fail,
    the whole homotopy on the mesh given.
    """
    o = SolveOptions.of(options, **keywords)
    if o.contact is None:
        o = o.replace(contact="implicit")
    o.refuse(("starts",), "The contact homotopy solves from one guess; `{name}` goes to colloc.solve, which runs each start.")
    steps_eps = schedule(*o.homotopy())
    tr = driver.transcription(problem, o.replace(relaxation=steps_eps[0]))
    return _sequenced(problem, o, tr, steps_eps, get_backend(o.backend))[0]


def _sequenced(problem, o, tr, steps_eps, solver):
    """:func:`_solve` on ``tr``, by way of a coarse mesh when its steps are free and it has more than ``SEQUENCE_ABOVE``
    intervals.

    At 100 and 200 intervals the steps of a loose ε on the mesh itself crawl (pushed block, T = 2: 118 and 877
    iterations at ε = 0.1, and at 200 the ε = 1e-3 step ended infeasible), while the coarse mesh's homotopy is
    cheap and its solution, subdivided, is already near the fine one's at a small ε.
    """
    # with free steps only: on a fixed mesh the fine steps cannot move what the coarse mesh placed (the hopper at
    # 50 intervals ended in a gait 7.6 % dearer, 914.2 against 849.3, and from ε = 1e-2 or 1e-1 not at all)
    free = tr.free_steps
    k = _coarse_factor(tr.mesh) if free and tr.mesh.size - 1 > SEQUENCE_ABOVE else None
    fine_eps = [e for e in steps_eps if e <= SEQUENCE_FROM * (1 + 1e-9)]
    if k and fine_eps and len(fine_eps) < len(steps_eps):
        coarse_tr = driver.transcription(problem, o.replace(intervals=None, mesh=tr.mesh[::k], relaxation=steps_eps[0]))
        coarse, values, grid = _sequenced(problem, o, coarse_tr, steps_eps, solver)
        if coarse.success:
            fine_tr = driver.transcription(problem, o.replace(intervals=None, mesh=tr.mesh, relaxation=fine_eps[0]))
            fine, values, fine_grid = _homotopy(fine_tr, o.replace(guess=None), fine_eps, solver, blocks=_fine_blocks(values, grid, k))
            if fine.success:
                steps = [dict(s, intervals=grid.num_intervals) for s in coarse.contact["steps"]] + fine.contact["steps"]
                return dataclasses.replace(fine, iterations=coarse.iterations + fine.iterations,
                                           build_seconds=coarse.build_seconds + fine.build_seconds,
                                           solve_seconds=coarse.solve_seconds + fine.solve_seconds,
                                           contact=dict(fine.contact, steps=steps)), values, fine_grid
    return _solve(problem, o, tr, steps_eps, solver)


def _solve(problem, o, tr, steps_eps, solver):
    """The homotopy on ``tr``'s mesh; with free steps its loose steps on the fixed mesh first (see :func:`solve_contact`)."""
    if tr.free_steps and steps_eps[0] > FREE_FROM >= steps_eps[-1]:
        # the loose relaxations on the mesh given: free steps there end more often where an interval shrinks to
        # its bound to hold a spurious stick phase (block T = 2: 11/20 random starts against 18/20)
        fixed = driver.transcription(problem, o.replace(intervals=None, mesh=tr.mesh, relaxation=steps_eps[0], free_steps=False))
        first, values, _ = _homotopy(fixed, o, [e for e in steps_eps if e > FREE_FROM], solver)
        if first.success:
            # the same mesh: every block of the fixed NLP starts where it ended (the trajectory's columns leave
            # out the sliding-speed bounds γ, which a guess of 0 made infeasible by the sliding speed itself), and
            # IPOPT starts warm, as between the steps of one homotopy
            second, values, grid = _homotopy(tr, o.replace(guess=first.trajectory), [e for e in steps_eps if e <= FREE_FROM],
                                             solver, blocks=values)
            steps = first.contact["steps"] + second.contact["steps"]
            return dataclasses.replace(second, iterations=first.iterations + second.iterations,
                                       build_seconds=first.build_seconds + second.build_seconds,
                                       solve_seconds=first.solve_seconds + second.solve_seconds,
                                       contact=dict(second.contact, steps=steps)), values, grid
    return _homotopy(tr, o, steps_eps, solver)


def _homotopy(tr, options, steps_eps, solver, blocks=None):
    """One homotopy over ``steps_eps`` on the transcription ``tr``, warm-started solve by solve from ``options.guess``;
    returns the SolveResult and the last iterate's blocks ``{name: values}``.  ``blocks``: blocks of a solution of a
    looser relaxation on the same mesh, which the first solve starts from, warm, as the later ones do."""
    ipopt = options.ipopt
    solver_opts = {**solver.options(ipopt, options.verbose), **CONTACT_IPOPT, **(WARM if blocks else {}), **(ipopt or {})}
    warm = tr.warm_start(options.guess)
    start = _time.perf_counter()
    nlp = tr.build(warm)
    blocks = blocks(nlp) if callable(blocks) else blocks
    for name, b in nlp.layout.blocks.items():
        if blocks and name in blocks and np.shape(blocks[name]) == b.guess.shape:
            b.guess[:] = np.clip(blocks[name], b.lower, b.upper)
    to_trajectory = lambda w: tr.trajectory(nlp, w, dict(status="checkpoint", success=False))  # noqa: E731
    steps, build_total, solve_total, iterations, multipliers = [], 0.0, 0.0, 0, None
    for k, eps in enumerate(steps_eps):
        set_relaxation(nlp, eps)
        for retry in (False, True):
            # positional: monitored (None: when progress or checkpoints ask), the last step's multipliers, reuse the solver
            sol, stats, build_s, solve_s = solver.run(nlp, solver_opts if not retry else retry_opts, options.expand, options.progress,
                                                      options.checkpoint, to_trajectory, start, None, None if retry else multipliers, True)
            build_total, solve_total = build_total + build_s, solve_total + solve_s
            o = solver.outcome(nlp, sol, stats, nlp.terms)
            iterations += o.iterations
            steps.append(dict(relaxation=eps, status=o.status.value, iterations=o.iterations, objective=o.objective,
                              **({"retry": True} if retry else {})))
            if o.success or retry or o.status is not Status.RESTORATION_FAILED:
                break
            # a step that failed in restoration: once more from its own last iterate, IPOPT's multipliers and barrier
            # started afresh (RETRY)
            last = nlp.layout.unpack(o.w)
            for b in nlp.layout.blocks.values():
                b.guess[:] = np.clip(last[b.name], b.lower, b.upper)
            retry_opts = {**{k_: v for k_, v in solver_opts.items() if k_ not in WARM_MULTIPLIERS}, **WARM, **(ipopt or {}), **RETRY}
            start = _time.perf_counter()
        if not o.success:
            break
        values = nlp.layout.unpack(o.w)
        for b in nlp.layout.blocks.values():
            b.guess[:] = values[b.name]
        start = _time.perf_counter()
        # IPOPT pushes a starting point off its bounds by 1e-2, which would lift every sticking contact's
        # sliding speed off zero and every zero force into the cone: warm steps start where the last ended
        solver_opts = {**solver_opts, **WARM, **WARM_MULTIPLIERS, **(ipopt or {})}
        multipliers = (np.asarray(sol["lam_x"]).ravel(), np.asarray(sol["lam_g"]).ravel())
    res = make_result(tr, nlp, sol, stats, build_total, solve_total, solver)
    info = contact_report(nlp, o.g, res.trajectory, steps)
    traj = res.trajectory
    traj.metadata.update(contact_schedule=info["schedule"], impacts=info["impacts"], complementarity=info["complementarity"],
                         homotopy=steps)
    return with_contact_accuracy(tr, nlp, dataclasses.replace(res, iterations=iterations, contact=info)), nlp.layout.unpack(o.w), nlp.grid


def _coarse_factor(mesh):
    """``k`` such that every ``k``-th point of ``mesh`` makes the coarse mesh of grid sequencing, or None: the
    first of 4, 5, 3, 2 that divides the number of intervals and leaves at least ``COARSE_MIN`` of them, an even
    number if one does (the coarse mesh then keeps the mid-horizon point, where a symmetric guess puts its event:
    the ball's dip to the ground, whose impulse is seeded on the mesh point nearest to it, found no bounce on
    25 intervals and found it on 20)."""
    n = mesh.size - 1
    ks = [k for k in (4, 5, 3, 2) if n % k == 0 and n // k >= COARSE_MIN]
    return next((k for k in ks if (n // k) % 2 == 0), ks[0] if ks else None)


def _fine_blocks(values, coarse, k):
    """``nlp -> blocks``: the blocks of an NLP with ``k`` intervals in each of the ``coarse`` grid's, from its
    solved blocks ``values``.

    Grid points: their coarse interval's values at its nodes, linear in between, the interval ending on its own
    end values (free steps: ``zm``, ``um``).  Intervals: their coarse interval's forces; fractions divided by
    ``k``.  Impulses and pre-impact speeds: the coarse ones at coarse mesh points (``Π = P/h̄`` times ``k``, the
    same impulse), none in between.
    """
    def blocks(nlp):
        grid, nodes = nlp.grid, coarse.scheme.nodes
        n, stride = grid.num_intervals, grid.stride
        p = np.arange(grid.num_points)
        i = np.minimum(p // stride, n - 1)
        at_point = (i // k, ((i % k) + grid.scheme.nodes[p - stride * i]) / k)
        inner = np.arange(n - 1)
        at_end, boundary = (inner // k, ((inner % k) + 1.0) / k), inner % k == k - 1
        out = {name: values[name] for name in ("tf", "p") if name in values}
        for name, end in (("x", None), ("z", "zm"), ("u", "um"), ("lam", None), ("cg3", None)):
            if name not in values:
                continue
            A = np.array(values[name], dtype=float)[:, coarse.nodes_of_intervals]  # (rows, interval, node)
            if end in values and coarse.num_intervals > 1:
                A[:, :-1, -1] = values[end]
            out[name] = _linear(A, nodes, *at_point)
            if end in values and n > 1:
                out[end] = _linear(A, nodes, *at_end)
        for name in ("cn", "cbp", "cbm", "cg", "cf3", "steps"):
            if name in values:
                out[name] = np.asarray(values[name])[:, np.arange(n) // k] / (k if name == "steps" else 1.0)
        if np.size(values.get("vm", ())) and n > 1:  # impacts at the inner mesh points
            out["vm"] = out["x"][nlp.contact.speed_rows][:, grid.mesh_points[1:-1]]
            out["vm"][:, boundary] = values["vm"]
            for name, scale in (("pn", k), ("pbp", k), ("pbm", k), ("pg", 1.0), ("pf3", k), ("pg3", 1.0)):
                if name not in values:
                    continue
                out[name] = np.zeros((np.shape(values[name])[0], n - 1))
                out[name][:, boundary] = scale * np.asarray(values[name])
        return out
    return blocks


def _linear(A, nodes, interval, s):
    """Values at local times ``s`` of ``interval`` (arrays), linear between the node values ``A[:, interval, node]``."""
    j, t = locate(nodes, s)
    return (1 - t) * A[:, interval, j] + t * A[:, interval, j + 1]


def contact_report(nlp, g, traj, steps) -> dict:
    """Complementarity residual per contact, the schedule and the impacts.

    The residual of a one-sided row ``a·b ≤ ε`` is its positive part, of a two-sided one ``|a·b|``.
    """
    comp = {c.name: 0.0 for c in nlp.contact.contacts}
    for b, vals in nlp.rows.values(g, COMPLEMENTARITY):
        vals = np.where(np.isfinite(b.lower.reshape(vals.T.shape).T), np.abs(vals), np.maximum(vals, 0.0))
        for i, n in enumerate(b.names):
            key = n.rsplit(".", 1)[0]
            comp[key] = max(comp[key], float(vals[i].max()) if vals.size else 0.0)
    return dict(complementarity=comp, schedule=contact_schedule(nlp.contact, traj), impacts=impacts(nlp.contact, traj),
                steps=steps, relaxation=steps[-1]["relaxation"] if steps else None)


def contact_schedule(rows, traj) -> dict:
    """``{contact: [[t_start, t_end, mode], …]}`` with mode ``open``, ``closed`` (frictionless), ``stick`` or ``slide``."""
    t = traj.time
    X = np.array([traj[s] for s in traj.of_kind("state")])
    P = np.array([traj.parameters[n] for n in traj.parameters]) if traj.parameters else np.zeros(0)
    gaps = rows.gaps(X, P)
    out = {}
    for i, c in enumerate(rows.contacts):
        closed = gaps[i] <= GAP_TOLERANCE * max(1.0, float(np.abs(gaps[i]).max()))
        modes = np.where(closed, "closed", "open").astype(object)
        if c.friction > 0:
            sd = _sliding_speed(rows, X, P, i)
            slide = np.abs(sd) > SLIDE_TOLERANCE * max(1.0, float(np.abs(sd).max()))
            modes = np.where(closed, np.where(slide, "slide", "stick"), "open").astype(object)
        out[c.name] = _segments(t, modes)
    return out


def _sliding_speed(rows, X, P, i):
    ng = X.shape[1]
    nc, nf = len(rows.contacts), len(rows.frictional)
    sd = np.asarray(rows.point.map(ng)(X, P, np.zeros((nc, ng)), np.zeros((nf, ng)), np.zeros((nf, ng)))[3]).reshape(nf, ng)
    return sd[rows.frictional.index(i)]


def _segments(t, modes):
    out, start = [], 0
    for k in range(1, len(modes) + 1):
        if k == len(modes) or modes[k] != modes[start]:
            out.append([float(t[start]), float(t[k - 1]), str(modes[start])])
            start = k
    return out


def impacts(rows, traj, tolerance=1e-6) -> list:
    """``[{time, contact, impulse}]`` for every impulse above ``tolerance`` (times max impulse, at least absolute)."""
    out = []
    for c in rows.contacts:
        P = traj[f"{c.name}.impulse"]
        scale = max(1.0, float(P.max(initial=0.0)))
        for k in np.flatnonzero(P > tolerance * scale):
            out.append(dict(time=float(traj.time[k]), contact=c.name, impulse=float(P[k])))
    return sorted(out, key=lambda d: d["time"])


def verify_contact(problem, trajectory, **options) -> dict:
    """Re-simulate a contact-implicit result with the event-driven simulator; the state error over time.

    The simulation starts from the file's initial state and applies its controls
    (:func:`colloc.simulate.contact_checks.simulate_file`); it knows nothing of the schedule the optimizer found.

    Returns
    -------
    dict
        ``time``, ``errors`` ``{state: |x_sim − x_file|}`` on the file's grid, ``final_error``,
        ``max_error``, ``events`` (the simulator's), ``simulated`` (its Trajectory).
    """
    from ..simulate.contact_checks import simulate_file

    traj = trajectory.trajectory if isinstance(trajectory, SolveResult) else trajectory
    if not isinstance(traj, Trajectory):
        traj = Trajectory.read(traj)
    t = traj.time
    sim, system = simulate_file(problem, traj, **options)
    names = system.coordinate_names + system.speed_names
    at = last_rows_at(sim.time, {n: sim[n] for n in names}, t)  # the simulator's rows before and after an event: the last
    errors = {n: np.abs(at[n] - traj[n]) for n in names}
    over = np.max(np.array(list(errors.values())), axis=0)
    return dict(time=t, errors=errors, error_over_time=over, final_error=float(over[-1]), max_error=float(over.max()),
                events=sim.metadata.get("events", []), simulated=sim)


def report_contact(sim) -> str:
    lines = [f"event-driven re-simulation: {len(sim['events'])} event(s): "
             + ", ".join(f"{e['kind']} of {e['contact']} at t = {e['time']:.6g}" for e in sim["events"][:8])
             + (" …" if len(sim["events"]) > 8 else ""),
             f"  final state error  {sim['final_error']:.3e}   largest over time  {sim['max_error']:.3e}"]
    for name, e in sim["errors"].items():
        lines.append(f"  {name:30s} final {e[-1]:.3e}   largest {np.max(e):.3e}")
    return "\n".join(lines)


def verify_file(problem, traj, tolerance, dynamics_tolerance) -> tuple[bool, str]:
    """``colloc verify`` of a contact-implicit file: every check of a single-phase file with the file's contact
    forces, the event-driven re-simulation over the whole horizon, Newton's law at each impulse and each impact
    time found again (:func:`colloc.simulate.contact_checks.check_contact_file`); whether all pass, and their
    report (``colloc verify`` prints it)."""
    from ..simulate.checks import check_columns
    from ..simulate.checks import report as checks_report
    from ..simulate.contact_checks import check_contact_file

    check_columns(problem, traj)
    checks, info = check_contact_file(problem, traj, tolerance, dynamics_tolerance)
    lines = [checks_report(checks, tolerance=tolerance, dynamics_tolerance=dynamics_tolerance)]
    if info:
        lines.append(report_contact(info["simulation"]))
    failed = [c for c in checks if not c.passed]
    if failed:
        lines.append(f"verification failed: {failed[0].name}: {failed[0].message}" + (f" (and {len(failed) - 1} more)." if len(failed) > 1 else "."))
    else:
        lines.append("verified: every check passed, and the event-driven simulation follows the file over the whole horizon.")
    return not failed, "\n".join(lines)
