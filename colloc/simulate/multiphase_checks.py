"""Forward simulation of a multi-phase solution, phase by phase, with the jump maps applied between phases.

Phase 1 is integrated from its own initial state (:func:`colloc.verify.simulate_controls`).
Every later phase starts where the simulation of the phase before it ended,
mapped through the connection between them: continuity, a jump map
``x_b(0) = Δ(x_a(T))`` or an impact (Newton's law solved for ``v⁺`` at the
simulated pre-impact state, :func:`colloc.model.impact.solve_impact`).  So the
reported error of a later phase includes everything the earlier phases and
jumps let through, as a real run of the hybrid system would.  A periodic
connection (last phase back to the first) is checked once more at the end:
``periodic_error`` is the largest difference between the mapped simulated
end state and the first phase's initial state.

A phase whose kinematic constraints the mapped start breaks (a position-level
residual above the tolerance) restarts from the file's own state instead: a DAE
cannot start off its constraints (IDAS stalls, ``IDA_TOO_MUCH_WORK``), and an
unstable open-loop motion drifts however accurate the file is (Solo12's jump:
0.18 in the largest state by take-off, the feet centimetres off their landing
points).  The residual is reported (``restarts``); the file's own accuracy is
judged by the per-interval simulations, the junctions and the connections, and
the restarted phase's simulation from its own start.

Each phase runs on its own clock (``t0`` of its Problem); times reported are
global (phase i starts where phase i − 1 ends).
"""
from __future__ import annotations

import math

import casadi as ca
import numpy as np

from .checks import DYNAMICS_TOLERANCE, TOLERANCE, Check, basic_checks, check_columns, check_solution
from .consistency import phases_objective_check, with_consistency_checks
from ..errors import FileFormatError
from ..model.component import TIME
from ..model.impact import solve_impact
from ..results.phased_trajectory import PhasedTrajectory
from ..results.trajectory import SolveResult, Trajectory
from .verify import report, simulate_controls


def verify_phases(mp, trajectory, tolerance=TOLERANCE, **options) -> dict:
    """Simulate every phase of ``trajectory`` (a solution of ``mp``), applying the jump maps between them.

    Parameters
    ----------
    mp : MultiPhaseProblem
    trajectory : PhasedTrajectory, Trajectory with a ``phase`` column, SolveResult or path
    tolerance : float
        Largest position-level constraint residual (:func:`constraint_residual`) of a phase's start state that
        the phase's simulation starts from; beyond it the phase restarts from the file's own state (see the
        module doc).
    **options
        Passed to :func:`colloc.verify.simulate_controls` (``substeps``, ``rtol``, ``atol``).

    Returns
    -------
    dict
        ``phases``: one :func:`simulate_controls` dict per phase (times global);
        ``jump_errors``: ``{connection: largest |Δ(x_sim(T)) − x_b(0)|}`` for every connection;
        ``periodic_error`` (float or None); ``restarts``: ``{phase: constraint residual of the start the
        phase before gave}`` for the phases restarted from the file's state; ``max_error``, ``final_error``
        (of the last phase), ``success`` and ``message``.
    """
    phases = _phases(mp, trajectory)
    sims, start, jump_errors, restarts = [], None, {}, {}
    for i, (ph, traj) in enumerate(zip(mp.phases, phases)):
        offset = traj.time[0] - ph.problem.t0_value
        local = Trajectory(traj.time - offset, {k: traj[k] for k in traj.names}, traj.kinds, traj.parameters, traj.metadata)
        drift = constraint_residual(ph.problem, local, start)
        if drift > tolerance:  # an inconsistent start of the phase's DAE: restart from the file's own state
            restarts[ph.name], start = drift, None
        sim = simulate_controls(ph.problem, local, initial=start, **options)
        sim["time"] = sim["time"] + offset
        sims.append(sim)
        start = None
        for c in mp.connections:
            if c.a != i:
                continue
            target = phases[c.b]
            mapped = jump_map(mp, c, sim, local)
            jump_errors[c.name] = max((abs(v - target[k][0]) for k, v in mapped.items()), default=0.0)
            if c.b == i + 1:
                start = mapped
    periodic = [c.name for c in mp.connections if c.b <= c.a]
    failed = [f"phase `{ph.name}`: {s['message']}" for ph, s in zip(mp.phases, sims) if not s["success"]]
    return dict(phases=sims, phase_names=[p.name for p in mp.phases], jump_errors=jump_errors, restarts=restarts,
                periodic_error=max((jump_errors[n] for n in periodic), default=None),
                max_error=max(s["max_error"] for s in sims), final_error=sims[-1]["final_error"],
                success=not failed, message="; ".join(failed) or "integrated every phase over its whole horizon",
                integrator=", ".join(sorted({s["integrator"] for s in sims})))


def constraint_residual(problem, local, start) -> float:
    """Largest ``|φ(q)|`` of ``problem``'s holonomic constraints (invariants included) at the state ``start``
    (``{state: value}``, the file's first row where it lacks one); 0 for ``start`` None or no constraint."""
    rows = [k.position for k in problem.model.constraints if k.kind == "holonomic" and k.position is not None]
    if start is None or not rows:
        return 0.0
    model = problem.model
    syms = [v.symbol for v in model.states] + [v.symbol for v in model.parameters]
    vals = [start.get(v.name, local[v.name][0]) for v in model.states] + [local.parameters[v.name] for v in model.parameters]
    out = _evaluate([ca.vertcat(*rows)], syms + [TIME], vals + [local.time[0]])[0]  # a rheonomic φ at the phase's start
    return float(np.abs(out).max(initial=0.0))


def jump_map(mp, connection, sim, local) -> dict:
    """The start state of phase ``b`` that ``connection`` gives from the simulated end of phase ``a``.

    Endpoint values at ``T``: the simulated states, the trajectory's controls and
    multipliers; an impact's ``v⁺`` and impulse ``P`` solve Newton's law there.
    """
    c = connection
    pa = mp.phases[c.a].problem
    ends = pa.endpoint_symbols("tf")
    values = {name: sim["states"][name][-1] for name in sim["states"]}
    values.update({name: local[name][-1] for name in local.names if name not in values and name in ends})
    syms = [ends[n] for n in values] + [pa.tf, pa.t0]
    vals = list(values.values()) + [local.time[-1], local.time[0]]
    syms += [v.symbol for v in pa.model.parameters]
    vals += [local.parameters[v.name] for v in pa.model.parameters]
    if c.impact is not None:
        imp, (qm, vm) = c.impact, c.pre
        M, J = (ca.substitute(m, imp.body.q, qm) for m in (imp.mass_matrix, imp.jacobian))
        Mv, Jv, vv = (np.array(a, dtype=float) for a in _evaluate([M, J, vm], syms, vals))
        vplus, P = solve_impact(Mv, Jv, vv.ravel(), imp.restitution)
        syms += list(ca.vertsplit(c.variables[0])) + list(ca.vertsplit(c.variables[1]))
        vals += list(vplus) + list(P)
    names = list(c.targets)
    out = _evaluate([ca.vertcat(*[ca.SX(c.targets[n]) for n in names])], syms, vals)[0] if names else np.zeros(0)
    return dict(zip(names, np.asarray(out, dtype=float).ravel()))


def _evaluate(exprs, syms, vals):
    """``exprs`` at ``syms = vals``; a symbol left over is named (by its name, e.g. a parameter of phase b)."""
    by_name = {s.name(): v for s, v in zip(syms, vals)}
    known = {s.element_hash() for s in syms}
    extra = [s for e in exprs for s in ca.symvar(ca.SX(e)) if s.element_hash() not in known]
    for s in extra:
        if s.name() not in by_name:
            raise FileFormatError(f"The jump map uses `{s.name()}`, which the trajectory does not give.")
    extra = list({s.element_hash(): s for s in extra}.values())
    f = ca.Function("jump", [ca.vertcat(*syms, *extra)], [ca.SX(e) for e in exprs])
    out = f(np.array(list(vals) + [by_name[s.name()] for s in extra], dtype=float))
    return [np.array(o) for o in (out if isinstance(out, (list, tuple)) else [out])]


def _phases(mp, trajectory) -> list:
    if isinstance(trajectory, SolveResult):
        trajectory = trajectory.trajectory
    elif not isinstance(trajectory, Trajectory):
        trajectory = Trajectory.read(trajectory)
    phases = PhasedTrajectory.split(trajectory).phases
    if len(phases) != len(mp.phases):
        raise FileFormatError(f"The trajectory has {len(phases)} phases but `{mp.name}` has {len(mp.phases)}.")
    return phases


def check_phases(mp, trajectory, tolerance=TOLERANCE, dynamics_tolerance=DYNAMICS_TOLERANCE, interval_errors=None) -> list:
    """The checks a single-phase file gets (:func:`colloc.simulate.checks.check_solution`), per phase.

    Each check's name starts with its phase (``burn/bounds``).  Before them: ``phases`` (the file has one
    block of rows per phase, in order); after each phase's own checks ``PHASE/guard:NAME`` (the guard is
    zero at the phase's end); then ``junctions`` (each phase starts where the one before it ends) and
    ``connection:NAME`` (the file's start of phase b is the jump map of its end of phase a).  A phase
    whose time, horizon or finiteness check fails gets no further checks, nor do the junctions.
    """
    if not isinstance(trajectory, Trajectory):
        trajectory = trajectory.trajectory if isinstance(trajectory, SolveResult) else Trajectory.read(trajectory)
    phases = PhasedTrajectory.split(trajectory).phases
    order = _order(mp, trajectory, phases, tolerance)
    if not order.passed:
        return [order]
    checks, locals_, sound = [order], [], True
    for i, (ph, traj) in enumerate(zip(mp.phases, phases)):
        offset = 0.0 if i == 0 else traj.time[0] - ph.problem.t0_value  # later phases run on their own clock
        # the recorded objective is the whole file's: checked once, over every phase (`objective` below)
        meta = {k: v for k, v in traj.metadata.items() if k != "objective"}
        local = Trajectory(traj.time - offset, {k: traj[k] for k in traj.names}, traj.kinds, traj.parameters, meta)
        local.source = f"{getattr(trajectory, 'source', 'the trajectory')}` phase `{ph.name}"
        locals_.append(local)
        check_columns(ph.problem, local)  # a file of another problem: bad input, not a failed check
        own = check_solution(ph.problem, local, tolerance, dynamics_tolerance, interval_errors)
        if interval_errors is not None:
            own = with_consistency_checks(ph.problem, local, own, tolerance, dynamics_tolerance)
        if all(c.passed for c in basic_checks(ph.problem, local, tolerance)):
            own += _guards(ph, local, tolerance)
        else:
            sound = False
        checks += [Check(f"{ph.name}/{c.name}", c.passed, c.value, c.limit, c.message) for c in own]
    if sound:
        checks += [_junctions(mp, phases, tolerance)] + [_connection(mp, c, locals_, tolerance) for c in mp.connections]
        if interval_errors is not None:
            checks.append(phases_objective_check(mp, locals_, trajectory.metadata.get("objective"), tolerance))
    return checks


def _order(mp, trajectory, phases, tol) -> Check:
    """One block of rows per phase, in order, each starting where the previous one ends."""
    if len(phases) != len(mp.phases):
        return Check("phases", False, len(phases), len(mp.phases), f"the file has {_count(len(phases))}; `{mp.name}` has {len(mp.phases)}")
    index = np.concatenate([np.full(p.time.size, float(i)) for i, p in enumerate(phases)]) if "phase" not in trajectory \
        else trajectory["phase"]
    odd = np.flatnonzero(~np.isfinite(index) | (index != np.round(index)))
    if odd.size:  # such a row belongs to no phase: it would be left out silently
        k = int(odd[0])
        return Check("phases", False, float(index[k]), 0.0, f"row {k + 1} has phase {index[k]:g}, not the index of a phase")
    if np.any(np.diff(index) < 0) or np.any(np.diff(index) > 1):
        k = int(np.flatnonzero((np.diff(index) < 0) | (np.diff(index) > 1))[0])
        return Check("phases", False, float(index[k + 1]), float(index[k]),
                     f"the phases are out of order: row {k + 2} belongs to phase {index[k + 1]:g} after phase {index[k]:g}")
    return Check("phases", True, 0.0, tol, f"{_count(len(phases))} in order")


def _junctions(mp, phases, tol) -> Check:
    """Each phase starts at the time the one before it ends."""
    for ph, a, b in zip(mp.phases[1:], phases, phases[1:]):
        gap = float(b.time[0] - a.time[-1])
        if not abs(gap) <= tol * max(1.0, abs(a.time[-1])):
            return Check("junctions", False, gap, tol, f"phase `{ph.name}` starts at t = {b.time[0]:.8g}, "
                                                       f"but the phase before it ends at t = {a.time[-1]:.8g}")
    return Check("junctions", True, 0.0, tol, "each phase starts where the one before it ends")


def _count(n) -> str:
    return f"{n} phase{'s' if n != 1 else ''}"


def _guards(phase, local, tol) -> list:
    """Each guard of the phase is zero at the phase's last row."""
    from .checks import symbol_values

    out = []
    for g in phase.guards:
        syms = ca.symvar(g.expr)
        args = symbol_values(syms, local, [local.time.size - 1])
        if args is None:
            out.append(Check(f"guard:{g.name}", False, np.nan, tol, "the file lacks a value this guard uses"))
            continue
        value = float(ca.Function("guard", syms, [g.expr]).call([float(a[0]) for a in args])[0])
        ok = abs(value) <= tol
        out.append(Check(f"guard:{g.name}", ok, abs(value), tol,
                         f"{value:.3g} at the phase's end" + ("" if ok else f" (t = {local.time[-1]:.8g}); the phase should end where it is 0")))
    return out


def _connection(mp, connection, locals_, tol) -> Check:
    """The file's start of phase b against the jump map of the file's end of phase a."""
    c = connection
    a, b = locals_[c.a], locals_[c.b]
    names = [v.name for v in mp.phases[c.a].problem.model.states]
    mapped = jump_map(mp, c, {"states": {n: a[n] for n in names}}, a)
    worst, text = 0.0, f"phase `{mp.phases[c.b].name}` starts where the connection puts the end of `{mp.phases[c.a].name}`"
    for name, value in mapped.items():
        err = abs(value - b[name][0])
        if not err <= tol * max(1.0, abs(value)) and not err <= worst:
            worst, text = err, f"`{name}` starts phase `{mp.phases[c.b].name}` at {b[name][0]:.8g}; the connection gives {value:.8g}"
    return Check(f"connection:{c.name}", worst == 0.0, worst, tol, text)


def verify_file(mp, traj, tolerance=TOLERANCE, dynamics_tolerance=DYNAMICS_TOLERANCE) -> tuple[bool, str]:
    """``colloc verify`` of a multi-phase file: per-phase checks, phase-by-phase simulation with the jump
    maps, then event-driven re-simulation; whether everything passed, and the report of each (``colloc verify``
    prints it).

    The checks are those of a single-phase file, per phase (time, horizon, finite values, boundary
    conditions, bounds, path and endpoint constraints, each interval simulated alone), with the phases'
    order, guards and connections.
    The simulation integrates each phase over the file's own phase times; the re-simulation
    forgets the schedule (guards found by root-finding, impacts re-applied) and reports the event
    times it finds against the file's.  A failed check or a guard never reached fails the verification.
    """
    from .checks import report as checks_report
    from ..errors import CollocError
    from .resimulation import format_resimulation, resimulate_phases
    from .verify import interval_errors

    problem = mp
    checks = check_phases(problem, traj, tolerance, dynamics_tolerance, interval_errors)
    lines = [checks_report(checks, tolerance, dynamics_tolerance)]
    failed = [c for c in checks if not c.passed]
    if any(c.name.endswith(("/time", "/horizon", "/finite")) or c.name in ("phases", "junctions") for c in failed):
        # nothing more can be judged (and a simulation would say nothing)
        return False, "\n".join(lines + [f"verification failed: {failed[0].name}: {failed[0].message}."])
    sim = verify_phases(problem, traj, tolerance=tolerance)
    lines.append(report_phases(sim))
    ok = sim["success"] and not failed
    if any(phase.guards for phase in problem.phases):
        try:
            events = resimulate_phases(problem, traj)
        except (CollocError, ImportError) as e:
            lines.append(f"event-driven re-simulation skipped: {e}")
        else:
            lines += ["event-driven re-simulation (guards found by root-finding, jumps re-applied):", format_resimulation(events)]
            missing = [r["name"] for r in events["phases"] if r["event"] is not None and not math.isfinite(r["time_found"])]
            if missing:
                lines.append(f"verification failed: the guard of phase `{missing[0]}` is never reached in re-simulation.")
                ok = False
    if failed:
        lines.append(f"verification failed: {failed[0].name}: {failed[0].message}" + (f" (and {len(failed) - 1} more)." if len(failed) > 1 else "."))
    if ok:
        lines.append("verified: every check passed, every phase simulated, every event found.")
    return ok, "\n".join(lines)


def report_phases(result) -> str:
    """A few lines per phase, then the jump and periodicity errors."""
    lines = [f"forward simulation of {len(result['phases'])} phases ({result['integrator']}): {result['message']}"]
    for name, sim in zip(result["phase_names"], result["phases"]):
        lines.append(f"phase {name}:")
        lines += ["  " + line for line in report(sim).splitlines()[1:]]
    for name, err in result["jump_errors"].items():
        lines.append(f"  jump {name:25s} start-state error {err:.3e}")
    for name, drift in result.get("restarts", {}).items():
        lines.append(f"  phase {name} restarted from the file's state: the simulated start breaks its constraints by {drift:.3e}")
    return "\n".join(lines)
