"""The tolerance of a contact-implicit file's whole-horizon re-simulation: a Gronwall estimate of its global error.

Tolerance of the whole-horizon comparison.  The file is a collocation
solution; the simulation may depart from it by the scheme's error and no more.
Per state, the local errors ``d_k`` (the end of interval ``k`` integrated
alone) add up to a global error that first-order propagation bounds
(Hairer, Nørsett & Wanner, *Solving ODEs I*, §II.3, "Lady Windermere's fan"):
``E_{k+1} = |exp(J_k h_k)| E_k + d_k``, componentwise, ``J_k = ∂f/∂x`` at the
start of interval ``k`` (the model's right-hand side with the file's contact
forces).  Two errors the one-interval integrations cannot see are added to
``d_k``: the file's force is constant on each interval while the contact law's
(the simulator's) varies, which leaves a speed error of at most
``h_k |M⁻¹Wᵀ| δF_k`` (``δF_k`` the range of the simulator's forces over the
interval, which no edit of the file changes), and likewise the force error
``δf`` the relaxation of maximal dissipation allows (``√(2μλ r/|ṡ|)`` for a circular
cone, ``r`` the file's dissipation residual, which the contact check bounds;
:meth:`colloc.simulate.contact_terms.ContactTerms.dissipation`), each moving the
coordinates by ``½ h_k`` times that speed error; and an impact multiplies ``E``
by its saltation factor ``S = 1 + e + ‖f⁺ − f⁻‖_∞ ‖∇φ‖₁ / |φ̇⁻|`` (the reset's
gain on the normal speed plus the state jump a shifted impact time causes;
Aizerman & Gantmacher 1958).  A state passes at a mesh point when its error is
at most ``SAFETY · E + tolerance · scale`` (``SAFETY = 10``; ``tolerance`` the
constraint tolerance of ``colloc verify``, default 1e-6, covers the
complementarity relaxation the solve ends on, which leaves forces off by up to
``ε`` over the complementary speed; ``scale`` the local scale of
:func:`colloc.simulate.consistency.point_scale`).  A tamperer who edits a state
inflates that interval's local error; so each ``d_k`` counts for at most
``CAP = 1000`` times the state's median local error over all intervals
(:func:`robust_local_errors`): an edit confined to fewer than half the
intervals cannot raise the tolerance past that.  An impact time passes within
the gap's tolerance (``|∇φ|`` times the states') over the closing speed
``|φ̇⁻|``, at most its longer interval; an impulse when it differs
from Newton's by at most ``(1 + e)`` times the effective mass ``1 / (W_n M⁻¹ W_nᵀ)``
times ``|W_n|`` applied to the speeds' tolerance of that interval alone (and its force error, if Newton's is 0).
"""
from __future__ import annotations

import casadi as ca
import numpy as np

#: Factor between the Gronwall estimate of the scheme's error and the tolerance of the whole-horizon comparison.
SAFETY = 10.0
#: Largest ratio of an interval's local error, as the budget counts it, to the median over all intervals.
CAP = 1e3
#: Impulse (relative to max(1, the largest impulse of any contact)) below which a file's impulse is no impact.
IMPACT = 1e-6


def _parameters(model, traj):
    return np.array([traj.parameters[v.name] for v in model.parameters]).reshape(-1, 1)


def impulses(rows, traj):
    """The file's normal and friction impulses, shapes ``(num_contacts, num_points)``, ``(num_tangents, num_points)``
    (the frictional contacts' tangent rows stacked, :meth:`colloc.simulate.contact_terms.ContactTerms.friction_columns`)."""
    n = traj.time.size
    Pn = np.array([traj[f"{c.name}.impulse"] for c in rows.contacts]).reshape(-1, n)
    Pt = np.array([traj[c] for c in rows.friction_columns("friction_impulse")]).reshape(-1, n)
    return Pn, Pt


def robust_local_errors(errors, cap=CAP) -> np.ndarray:
    """``errors`` (shape ``(n,)``), each at most ``cap`` times their median over all intervals: an edit must
    spread over half the intervals to raise the budget past ``cap`` times a correct file's."""
    e = np.asarray(errors, dtype=float)
    return np.minimum(e, cap * np.median(e)) if e.size else e


def _right_hand_side(problem, forcing):
    """``(t, x, u, p, w) -> (ẋ, ∂ẋ/∂x)``: the model's explicit right-hand side with the contact forcing."""
    from .verify import _point

    model = problem.model
    point, meta, _ = _point(problem)
    t, x, u, p = ca.SX.sym("t"), model.vector("state"), model.vector("control"), model.vector("parameter")
    w = ca.SX.sym("w", forcing.size1_in(2))
    z, lam = ca.SX.zeros(len(meta["z_names"])), ca.SX.zeros(len(model.multipliers))
    xdot = point(t, x, z, u, lam, p)[0] + forcing(x, p, w)
    return ca.Function("contact_rhs", [t, x, u, p, w], [xdot, ca.jacobian(xdot, x)])


def force_errors(problem, traj, grid, simulated) -> np.ndarray:
    """Per interval, the speed error a constant force leaves where the contact law's force varies:
    ``h_k max_i Σ_j |(M⁻¹ Wᵀ)_ij| δF_j``, ``δF_j`` the range of the simulator's force ``j`` over the interval
    (normal and friction), ``M, W`` at the interval's start (shape ``(n,)``)."""
    sim, system = simulated
    ts = sim.time
    forces = [f"{c.name}.normal_force" for c in system.contacts]
    for c in system.contacts:
        if c.num_tangents and f"{c.name}.friction_force" in sim.names:
            forces.append(f"{c.name}.friction_force")
        elif c.num_tangents:
            forces += [f"{c.name}.friction_force_{k + 1}" for k in range(c.num_tangents) if f"{c.name}.friction_force_{k + 1}" in sim.names]
    F = np.array([sim[n] for n in forces]).reshape(len(forces), -1)
    names = [v.name for v in problem.model.states]
    p = np.array([traj.parameters[n] for n in system.parameter_names])
    out = np.zeros(grid.num_intervals)
    for k, (a, b) in enumerate(zip(grid.interval_starts, grid.interval_ends)):
        t0, t1 = traj.time[a], traj.time[b]
        rows = np.flatnonzero((ts > t0) & (ts < t1))
        rows = np.concatenate([np.flatnonzero(ts == t0)[-1:], rows, np.flatnonzero(ts == t1)[:1]]).astype(int)
        if not rows.size:
            continue
        spread = F[:, rows].max(axis=1) - F[:, rows].min(axis=1)
        x = {n: traj[n][a] for n in names}
        u = np.array([traj[n][a] for n in system.control_names])
        T = system.evaluate(t0, np.array([x[n] for n in system.coordinate_names]), np.array([x[n] for n in system.speed_names]), u, p)
        cols = [T["Wn"][i] for i in range(system.nc)]
        cols += [T["Wt"][r] for i, c in enumerate(system.contacts) if c.num_tangents and system.friction[i] > 0 for r in system.tangent_rows[i]]
        A = np.linalg.solve(T["M"], np.array(cols).T) if cols else np.zeros((system.nv, 0))
        out[k] = (t1 - t0) * float((np.abs(A[:, :spread.size]) @ spread).max(initial=0.0))
    return out


def error_budget(problem, traj, setup, signed, simulated, floor=1e-6) -> dict:
    """The Gronwall estimate of the file's global error per state and the tolerances derived from it (module doc).

    Returns
    -------
    dict
        ``robust`` local errors counted, shape ``(num_states, n)``, ``force`` (speed error of constant forces,
        ``(n,)``), ``estimate`` ``E`` at the mesh points, shape ``(num_states, n + 1)``, ``tolerance`` there,
        ``impacts``: per impulse of the file ``row, contact, time, interval`` (None off the mesh points), and
        at mesh points ``before`` (the pre-impact state the interval alone reaches), ``speed`` (its normal speed),
        ``saltation``, ``time_tolerance``, ``speed_tolerance``, ``rest_tolerance`` (with the force error).
    """
    from scipy.linalg import expm

    model, rows, itp = problem.model, setup["rows"], setup["interpolant"]
    grid, n = itp.grid, itp.num_intervals
    starts, ends = grid.interval_starts, grid.interval_ends
    names = [v.name for v in model.states]
    X = np.array([traj[v] for v in names]).reshape(len(names), -1)
    U = np.array([traj[v.name] for v in model.controls]).reshape(len(model.controls), traj.time.size)
    Uend = U[:, ends].copy()
    for k, v in enumerate(model.controls):
        Uend[k] = setup["control_ends"].get(v.name, Uend[k])
    P, W = _parameters(model, traj), setup["first_forces"]
    rhs = _right_hand_side(problem, setup["forcing"])
    local = np.abs(np.array([signed[v] for v in names])).reshape(len(names), n)
    robust = np.array([robust_local_errors(np.nan_to_num(e, nan=np.inf)) for e in local]).reshape(local.shape)
    force = force_errors(problem, traj, grid, simulated) + rows.relaxation_errors(traj, grid, _parameters(model, traj))
    d = robust.copy()
    d[rows.speed_rows] += force
    # a force error δF over h moves the coordinates by ½h² M⁻¹Wᵀ δF (through N(q), whose entries are at most 1)
    d[rows.coordinate_rows] += 0.5 * itp.h * force
    before = setup["targets"] + np.array([signed[v] for v in names]).reshape(len(names), n)
    found = _file_impacts(problem, traj, setup, rows, before, Uend, rhs)
    salt = {it["interval"]: it["saltation"] for it in found if it["interval"] is not None}
    E, unsalted = np.zeros((len(names), n + 1)), np.zeros((len(names), n + 1))
    for k, s in enumerate(starts):
        J = np.asarray(rhs(traj.time[s], X[:, s], U[:, s], P, W[:, k])[1], dtype=float)
        growth = np.abs(expm(np.clip(J * itp.h[k], -50.0, 50.0)))
        unsalted[:, k + 1] = growth @ E[:, k] + d[:, k]
        E[:, k + 1] = unsalted[:, k + 1] * max(salt.get(k, 1.0), 1.0)
    from .consistency import point_scale

    scale = np.array([point_scale(traj[v], grid)[grid.mesh_points] for v in names])
    tol = SAFETY * E + floor * scale
    for it in found:
        if it["interval"] is not None:
            k, m = it["interval"], it["interval"] + 1
            gap_error = float(it["gradient"] @ (SAFETY * unsalted[:, m] + floor * scale[:, m]))
            it["time_tolerance"] = min(gap_error / max(abs(it["speed"]), 1e-12), float(np.max(itp.h[k:k + 2])))
            it["speed_tolerance"], it["rest_tolerance"] = (SAFETY * e[:, k] + floor * scale[:, m] for e in (robust, d))
    return dict(robust=robust, force=force, estimate=E, tolerance=tol, impacts=found, local=local, scale=scale, floor=floor)


def _file_impacts(problem, traj, setup, rows, before, Uend, rhs) -> list:
    """Each impulse of the file, with the pre-impact state its interval reaches alone, the normal speed there,
    the gap's gradient and the impact's saltation factor (module doc)."""
    model, itp = problem.model, setup["interpolant"]
    ends = itp.grid.interval_ends
    X = np.array([traj[v.name] for v in model.states]).reshape(len(model.states), -1)
    U = np.array([traj[v.name] for v in model.controls]).reshape(len(model.controls), traj.time.size)
    P, W = _parameters(model, traj), setup["first_forces"]
    x, p = model.vector("state"), model.vector("parameter")
    zeros = [ca.SX.zeros(len(rows.contacts)), ca.SX.zeros(rows.num_tangents)]
    gap, yd = rows.point(x, p, *zeros)[1:3]
    normal = ca.Function("normal", [x, p], [yd, ca.jacobian(gap, x)])
    Pn, _ = impulses(rows, traj)
    end_of = {int(j): k for k, j in enumerate(ends[:-1])}
    found = []
    # the largest impulse of every contact sets the scale, as for the simulator's impacts (resimulate): a residue of
    # 1e-6 N s on a contact that never strikes is no impact to find again
    scale = max(1.0, float(Pn.max(initial=0.0)))
    for i, c in enumerate(rows.contacts):
        for j in np.flatnonzero(Pn[i] > IMPACT * scale):
            item = dict(row=int(j), contact=c.name, index=i, time=float(traj.time[j]), interval=end_of.get(int(j)), impulse=float(Pn[i, j]))
            k = item["interval"]
            if k is not None:
                speeds, G = (np.asarray(a, dtype=float) for a in normal(before[:, k], P))
                f_minus = np.asarray(rhs(traj.time[j], before[:, k], Uend[:, k], P, setup["last_forces"][:, k])[0]).ravel()
                f_plus = np.asarray(rhs(traj.time[j], X[:, j], U[:, j], P, W[:, k + 1])[0]).ravel()
                speed = float(speeds.ravel()[i])
                jump = float(np.abs(f_plus - f_minus).max() * np.abs(G[i]).sum()) / max(abs(speed), 1e-12)
                item.update(before=before[:, k], speed=speed, control=Uend[:, k], gradient=np.abs(G[i]), saltation=1.0 + c.restitution + jump)
            found.append(item)
    return found


__all__ = ["error_budget", "force_errors", "robust_local_errors", "impulses", "SAFETY", "CAP", "IMPACT"]
