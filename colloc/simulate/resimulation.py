"""Re-simulation of a multi-phase result, event by event: do its phases, events and jumps hold?

A multi-phase solution says *when* each phase ends (its guard) and what the
jump does (an :class:`~colloc.Impact` or a jump map).  :func:`resimulate_phases`
forgets the schedule: from the result's initial state and with its controls
(each phase's own interpolant), it integrates each phase's model (scipy's
``solve_ivp``, DOP853) until the phase's guard is reached in its direction,
applies the connection to the next phase (Newton's law for an impact, with
``v⁺`` and ``P`` recomputed), and goes on.  A guard root is accepted where the
phase's ranged final conditions hold (e.g. the walker's ``θ(T) ≤ 0`` skips the
mid-stance scuffing); the integration runs on through the others.  The report
compares, per phase, the event time found with the result's and the states.

Only models without bilateral kinematic constraints (no multipliers) are
re-simulated; their states may belong to any components.

Legend: ``x`` states, ``u`` controls, ``p`` parameters, ``g`` guard, ``T`` end of a phase.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from ..errors import ModelError, OptionError
from ..discretization.interpolant import Interpolant
from ..model.component import TIME
from ..results.phased_trajectory import PhasedTrajectory

_SIGN = {"decreasing": -1, "increasing": 1, "either": 0}


def resimulate_phases(problem, result, rtol=1e-12, atol=1e-12, horizon=2.0) -> dict:
    """Re-simulate a multi-phase result from its initial state and controls, with event detection.

    Parameters
    ----------
    problem : MultiPhaseProblem
        The problem the result solves.
    result : MultiPhaseResult, PhasedTrajectory or Trajectory with a ``phase`` column
    rtol, atol : float
        Integrator tolerances.
    horizon : float
        A phase's guard is sought up to ``horizon`` times the result's duration of that phase.

    Returns
    -------
    dict
        ``phases``: one dict per phase with ``name``, ``event`` (guard name or
        None), ``time_found`` and ``time_result`` (global end times; NaN if no
        accepted root), ``time_error``, ``state_error`` (largest
        ``|x_sim − x_result|`` at the result's grid times of the phase),
        ``end_error`` (states at the end), ``errors`` per state, ``impulse``
        (normal impulses of an impact at the phase's end); ``periodic_error``
        (post-jump state of the last phase against the result's initial state,
        or None); ``max_time_error``, ``max_state_error``.
    """
    traj = result.trajectory if hasattr(result, "trajectory") else result
    traj = PhasedTrajectory.split(traj)
    if len(traj.phases) != len(problem.phases):
        raise ModelError(f"The result has {len(traj.phases)} phases but problem `{problem.name}` has {len(problem.phases)}.")
    x = None
    start = float(traj.phases[0].time[0])
    out, periodic_error = [], None
    for i, (phase, ptraj) in enumerate(zip(problem.phases, traj.phases)):
        model = phase.problem.model
        names = [v.name for v in model.states]
        if x is None:
            x = np.array([ptraj[n][0] for n in names])
        par = np.array([traj.parameters[v.name] for v in model.parameters])
        sim = _phase(phase, ptraj, x, start, par, rtol, atol, horizon)
        out.append(sim["report"])
        conns = [c for c in problem.connections if c.a == i]
        nxt = [c for c in conns if c.kind == "link"]
        per = [c for c in conns if c.kind == "periodic"]
        if nxt:
            b = problem.phases[nxt[0].b]
            x, sim["report"]["impulse"] = _jump(nxt[0], phase, b, sim, traj.parameters, traj.phases[nxt[0].b])
            start = sim["end_time"]
        elif per:
            b = problem.phases[per[0].b]
            xb, sim["report"]["impulse"] = _jump(per[0], phase, b, sim, traj.parameters, traj.phases[per[0].b])
            first = traj.phases[per[0].b]
            periodic_error = float(np.abs(xb - np.array([first[v.name][0] for v in b.problem.model.states])).max())
    return dict(phases=out, periodic_error=periodic_error,
                max_time_error=max(float(np.nan_to_num(r["time_error"], nan=np.inf)) for r in out),
                max_state_error=max(r["state_error"] for r in out))


def solve_ivp_function():
    """scipy's ``solve_ivp``, imported when a simulation runs (scipy is the optional ``events`` extra)."""
    try:
        from scipy.integrate import solve_ivp
    except ImportError:
        raise OptionError("The event-driven simulator integrates with scipy; install it: python -m pip install -e \".[events]\".") from None
    return solve_ivp


def _phase(phase, ptraj, x0, start, par, rtol, atol, horizon):
    """Integrate one phase from ``x0`` at global time ``start`` up to its accepted guard root."""
    solve_ivp = solve_ivp_function()
    pr = phase.problem
    model = pr.model
    if model.multipliers:
        raise ModelError(f"Phase `{phase.name}` has kinematic constraints (multiplier `{model.multipliers[0].name}`); re-simulation supports unconstrained phase models.")
    names = [v.name for v in model.states]
    f = model.dynamics("explicit")
    xs, us, ps = model.vector("state"), model.vector("control"), model.vector("parameter")
    lam = ca.SX(0, 1)
    # one flat argument: a CasADi call from Python costs per argument, and this runs in the RHS
    rhs_fn = ca.Function("rhs", [ca.vertcat(TIME, xs, us, ps)], [f(TIME, xs, ca.SX(0, 1), us, lam, ps)[0]])
    u_of = _controls(ptraj, [v.name for v in model.controls])
    shift = pr.t0_value - start  # the phase's own clock
    duration = float(ptraj.time[-1] - ptraj.time[0])
    rhs = lambda t, y: rhs_fn(np.concatenate([[t + shift], y, u_of(t), par])).full().ravel()
    guards = [(g, ca.Function("guard", [TIME, xs, ps], [g.expr])) for g in phase.guards]
    events = []
    for g, fn in guards:
        ev = (lambda t, y, fn=fn: float(fn(t + shift, y, par)))
        ev.terminal, ev.direction = True, _SIGN[g.direction]
        events.append(ev)
    t_end = start + (horizon * duration if guards else duration)
    t, y, found, event = start, np.asarray(x0, dtype=float), np.nan, None
    pieces = []
    while t < t_end:
        sol = solve_ivp(rhs, (t, t_end), y, method="DOP853", rtol=rtol, atol=atol, events=events or None, dense_output=True)
        pieces.append(sol.sol)
        if sol.status != 1:
            t, y = float(sol.t[-1]), sol.y[:, -1]
            if not guards:
                found = t
            break
        j = min((k for k, te in enumerate(sol.t_events) if te.size), key=lambda k: sol.t_events[k][0])
        t, y = float(sol.t_events[j][0]), sol.y_events[j][0]
        if _accepted(pr, names, y):
            found, event = t, guards[j][0].name
            break
        step = 1e-7 * max(duration, 1e-3)  # step past a rejected root before looking again
        pieces.append(solve_ivp(rhs, (t, t + step), y, method="DOP853", rtol=rtol, atol=atol, dense_output=True).sol)
        t, y = t + step, pieces[-1](t + step)
    grid = ptraj.time[ptraj.time <= min(t, ptraj.time[-1])]
    sim = np.array([_evaluate(pieces, tk) for tk in grid]).reshape(grid.size, len(names))
    ref = np.array([ptraj[n][:grid.size] for n in names]).T
    err = np.abs(sim - ref)
    end_err = np.abs(y - np.array([ptraj[n][-1] for n in names]))
    t_result = float(ptraj.time[-1])
    report = dict(name=phase.name, event=event, time_found=float(found), time_result=t_result,
                  time_error=abs(found - t_result), state_error=float(err.max(initial=0.0)),
                  end_error=float(end_err.max()), errors=dict(zip(names, map(float, err.max(axis=0, initial=0.0)))),
                  impulse=None)
    return dict(report=report, end_time=t, end_state=y, controls=u_of(min(t, t_result)), names=names)


def _accepted(problem, names, y):
    """True where the phase's ranged final conditions hold (equalities are the optimiser's business)."""
    for name, (lo, hi) in problem.final_bounds.items():
        if name in names and lo < hi:
            val = y[names.index(name)]
            if not (lo - 1e-9 <= val <= hi + 1e-9):
                return False
    return True


def _evaluate(pieces, t):
    for sol in pieces:
        if sol.t_min - 1e-14 <= t <= sol.t_max + 1e-14:
            return sol(t)
    return pieces[-1](t)


def _controls(ptraj, names):
    """``u(t)``: the phase's controls as its dense output holds them."""
    if not names:
        return lambda t: np.zeros(0)
    itp = Interpolant(ptraj)
    controls = [itp.control(n) for n in names]
    return lambda t: np.array([u(t) for u in controls])


def _jump(conn, pa, pb, sim, parameters, btraj):
    """The state at the start of phase ``b`` from the simulated end of phase ``a`` (and the normal impulses)."""
    pr = pa.problem
    ends = pr.endpoint_symbols("tf")
    values = dict(zip(sim["names"], sim["end_state"]))
    values.update(zip([v.name for v in pr.model.controls], sim["controls"]))
    syms, vals = [], []
    for name, sym in ends.items():
        if name in values:
            syms.append(sym)
            vals.append(values[name])
    for v in pr.model.parameters:
        syms.append(v.symbol)
        vals.append(parameters[v.name])
    impulse = None
    targets = {k: ca.SX(e) for k, e in conn.targets.items()}
    if conn.impact is not None:
        qm, vm = (_numeric(e, syms, vals) for e in conn.pre)
        vplus, P = conn.impact.velocity_after(qm, vm, {k: parameters[k] for k in parameters})
        syms += [conn.variables[0], conn.variables[1]]
        vals += [vplus, P]
        impulse = [float(P[k]) for k in conn.impact.normal]
    names_b = [v.name for v in pb.problem.model.states]
    x = np.array([_numeric(targets[n], syms, vals)[0] if n in targets else btraj[n][0] for n in names_b])
    return x, impulse


def _numeric(expr, syms, vals):
    flat_syms = ca.vertcat(*[ca.vec(s) for s in syms]) if syms else ca.SX(0, 1)
    flat_vals = np.concatenate([np.atleast_1d(np.asarray(v, dtype=float)).ravel() for v in vals]) if vals else np.zeros(0)
    fn = ca.Function("value", [flat_syms], [ca.SX(expr)])
    return np.asarray(fn(flat_vals)).ravel()


def format_resimulation(report) -> str:
    """A one-screen table of a :func:`resimulate_phases` report (one line per phase)."""
    lines = [f"{'phase':16s} {'event':14s} {'t found':>14s} {'t result':>14s} {'|Δt|':>9s} {'max |Δx|':>9s} {'end |Δx|':>9s}"]
    for r in report["phases"]:
        lines.append(f"{r['name']:16s} {str(r['event']):14s} {r['time_found']:14.9f} {r['time_result']:14.9f} "
                     f"{r['time_error']:9.2e} {r['state_error']:9.2e} {r['end_error']:9.2e}")
    if report["periodic_error"] is not None:
        lines.append(f"periodicity of the re-simulated step: {report['periodic_error']:.2e}")
    return "\n".join(lines)


__all__ = ["resimulate_phases", "format_resimulation"]
