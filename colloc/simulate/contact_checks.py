"""Does a contact-implicit file solve its problem?  The checks ``colloc verify`` makes of such a file.

A contact-implicit file (``colloc.solve(..., contact="implicit")``) holds, besides
states and controls, the contact forces (``NAME.normal_force``, ``NAME.friction_force``,
in 3-D ``NAME.friction_force_1``, ``_2`` along the contact's tangents: written at the
grid points) and the impulses (``NAME.impulse``, ``NAME.friction_impulse`` or
``_1``, ``_2``: nonzero only at the interior mesh points where an impact acts; the
state there holds the post-impact speeds ``v⁺``); the terms they enter are built from
the model's contacts (:class:`colloc.simulate.contact_terms.ContactTerms`).
It gets every check of a single-phase file, with those forces:

* **time, horizon, finite, initial, final, bounds, path, boundary**:
  :func:`colloc.simulate.checks.check_solution`'s, unchanged;
* **grid, defects, derivatives** (:func:`colloc.simulate.consistency.consistency_checks`):
  each interval's defects closed on the values it ends on (pre-impact states), each
  derivative column against the model with the contact forces' generalised force;
  **objective**: recomputed with each interval's end controls, to within the pull of
  free steps towards the given mesh (not in the file) at most;
* **contact**: every gap ``≥ 0`` at every grid point, forces and impulses ``≥ 0``,
  friction inside its cone (``|f| ≤ μ λ``, or the polygon of a polyhedral cone),
  maximal dissipation ``max_{g ∈ cone}(−gᵀṡ) + fᵀṡ ≤ tolerance`` (the friction opposes
  the sliding with the whole cone), no force on an interval whose gap opens,
  impulses only at interior mesh points (constraint tolerance);
* **dynamics** (one per state): each interval integrated alone from the file's
  state at its start with its controls (the value it ends on where a control
  jumps) *and its contact forces* as the file holds them
  (:func:`colloc.transcription.force_points.interval_forces`), ending on the pre-impact state
  ``v⁻ = v⁺ − M⁻¹(W_nᵀP + W_tᵀP_t)`` where an impulse acts;
  :func:`colloc.simulate.verify.interval_errors` with the forcing of :func:`interval_contact`; where every
  loaded contact sticks, the event-driven simulation of the interval alone counts if it ends nearer
  (:mod:`colloc.simulate.held_intervals`: a planted foot's force follows the motion);
* **between grid points**: :func:`colloc.simulate.limits.checks`;
* **resimulation**: the event-driven simulator (:func:`colloc.simulate.events.simulate_events`),
  from the file's initial state with its controls (the scheme's own interpolant)
  and knowing nothing of its schedule, against the file at every mesh point;
* **newton**: each impulse recomputed by the simulator's impact law (Newton's
  restitution, all closed contacts at once) from the pre-impact state that the
  interval before it reaches when integrated from the file's state at its start;
* **impact times**: each impact of the file found again by the simulator (bar those within the
  ``newton`` limit of zero), and none found that the file lacks (one at ``t_f``, where the file
  holds the state just before it, is a landing: the file is compared with the state before it).

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

import math

import casadi as ca
import numpy as np

from .checks import Check, basic_checks, departure, solution_checks, _dynamics
from .contact_terms import ContactTerms
from .held_intervals import better_of, held_interval_errors, sticking_intervals
from ..discretization.interpolant import last_rows_at
from ..errors import SimulationError
from ..transcription.registry import of_trajectory

#: Factor between the Gronwall estimate of the scheme's error and the tolerance of the whole-horizon comparison.
SAFETY = 10.0
#: Largest ratio of an interval's local error, as the budget counts it, to the median over all intervals.
CAP = 1e3


def _variational(traj) -> bool:
    """Whether ``traj`` holds the nodes of discrete Euler–Lagrange equations (no collocation interpolant)."""
    made_by = of_trajectory(traj)
    return made_by is not None and made_by.variational


#: Impulse (relative to max(1, the largest impulse of any contact)) below which a file's impulse is no impact.
IMPACT = 1e-6


def interval_contact(problem, traj) -> dict:
    """What the per-interval integration of a contact-implicit file needs (:func:`colloc.simulate.verify.interval_errors`).

    Returns
    -------
    dict
        ``forcing`` CasADi Function ``(x, p, w) -> ẋ`` (``M⁻¹(W_nᵀλ + W_tᵀf)`` in the speed rows), ``inputs``
        ``w`` per interval, shape ``(num_contacts + num_frictional, n)`` (at each collocation point with
        ``forcing_nodes``; the forces at each interval's ends ``first_forces``, ``last_forces``:
        :func:`colloc.transcription.force_points.interval_forces`), ``control_ends`` ``{control: (n,)}``,
        ``targets`` the states each interval ends on, shape ``(num_states, n)`` (pre-impact speeds where an
        impulse acts), and ``rows`` (:class:`colloc.simulate.contact_terms.ContactTerms`).
    """
    from ..discretization.interpolant import Interpolant
    from ..transcription.contacts import END
    from ..transcription.force_points import interval_forces

    model = problem.model
    rows = ContactTerms(problem)
    itp = Interpolant(traj)
    starts, ends = itp.grid.interval_starts, itp.grid.interval_ends
    nc, nf = len(rows.contacts), rows.num_tangents
    x, p, w = model.vector("state"), model.vector("parameter"), ca.SX.sym("w", nc + nf)
    xd = ca.SX.zeros(x.numel(), 1)
    xd[rows.speed_rows] = x[rows.speed_rows] - rows.pre_impact(x, p, w[:nc], w[nc:])
    forcing = ca.Function("contact_forcing", [x, p, w], [xd])
    W = np.array([traj[f"{c.name}.normal_force"] for c in rows.contacts]
                 + [traj[n] for n in rows.friction_columns()]).reshape(nc + nf, traj.time.size)
    X = np.array([traj[v.name] for v in model.states]).reshape(len(model.states), -1)
    P = _parameters(model, traj)
    Pn, Pt = impulses(rows, traj)
    targets = X[:, ends].copy()
    pre = rows.pre_impact.map(ends.size)(X[:, ends], P, Pn[:, ends], Pt[:, ends])
    targets[rows.speed_rows] = np.asarray(pre).reshape(len(rows.speed_rows), -1)
    control_ends = {c.name: traj[c.name + END][ends] for c in model.controls if c.name + END in traj}
    names = [f"{c.name}.normal_force" for c in rows.contacts] + rows.friction_columns()
    W_end = np.array([traj[n + END] if n + END in traj else w for n, w in zip(names, W)]).reshape(W.shape)
    placement = traj.metadata.get("contact_forces", "interval")
    inputs, first, last = interval_forces(placement, itp.grid, W, W_end)
    return dict(forcing=forcing, inputs=inputs, forcing_nodes=placement == "collocation", first_forces=first, last_forces=last,
                control_ends=control_ends, targets=targets, rows=rows, interpolant=itp)


def consistency_contact(problem, traj, setup) -> dict:
    """What :func:`colloc.simulate.consistency.consistency_checks` needs of a contact-implicit file: each
    interval's end values ``{state: (x_end, f_end)}`` (pre-impact states; the derivatives there, of the
    interval's own forces and end controls when the steps were free, else the mesh point's stored ones, as
    the transcription closes its defects) and ``force(rows)``, the contact forces' generalised force in the
    residual rows at grid rows ``rows``."""
    from .consistency import step_pull_bound
    from ..transcription import make_options, point_function
    from ..transcription.contacts import END

    model, rows, itp = problem.model, setup["rows"], setup["interpolant"]
    ends = itp.grid.interval_ends
    names = [v.name for v in model.states]
    point, meta = point_function(problem, make_options())
    implicit = {n[:-len(".dot")] for n in meta["z_names"]}
    free = traj.metadata.get("free_steps", any(c.name + END in traj for c in model.controls))
    P = _parameters(model, traj)
    U = np.array([traj[v.name][ends] for v in model.controls]).reshape(len(model.controls), ends.size)
    for k, v in enumerate(model.controls):
        U[k] = setup["control_ends"].get(v.name, U[k])
    Z = np.array([traj[z][ends] for z in meta["z_names"]]).reshape(len(meta["z_names"]), ends.size)
    lam = np.zeros((len(model.multipliers), ends.size))
    X = setup["targets"]
    xdot = np.asarray(point.map(ends.size)(traj.time[ends][None, :], X, Z, U, lam, P)[0]).reshape(len(names), -1)
    rhs = _right_hand_side(problem, setup["forcing"])
    own = np.asarray(rhs.map(ends.size)(traj.time[ends][None, :], X, U, P, setup["last_forces"])[0]).reshape(len(names), -1)
    out = {}
    for i, n in enumerate(names):
        f = (own[i] if free else traj[n + ".dot"][ends]) if n in implicit else xdot[i]
        out[n] = (X[i], f)
    nc, nf = len(rows.contacts), rows.num_tangents
    npts = traj.time.size
    F = np.array([traj[f"{c.name}.normal_force"] for c in rows.contacts]).reshape(nc, npts)
    T = np.array([traj[n] for n in rows.friction_columns()]).reshape(nf, npts)
    Xall = np.array([traj[n] for n in names]).reshape(len(names), -1)

    def force(r):
        r = np.asarray(r)
        return np.asarray(rows.point.map(r.size)(Xall[:, r], P, F[:, r], T[:, r])[0]).reshape(-1, r.size)

    return dict(ends=out, force=force, control_ends=setup["control_ends"], slack=step_pull_bound(traj, ends.size) if free else 0.0)


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


def check_contact_file(problem, traj, tolerance, dynamics_tolerance) -> tuple[list, dict]:
    """Every check of a contact-implicit file (module doc); returns the checks and the measurements behind them."""
    from .consistency import consistency_checks
    from .limits import checks as between_grid_points
    from .verify import interval_errors

    checks = basic_checks(problem, traj, tolerance)
    if not all(c.passed for c in checks):
        return checks, {}
    checks += solution_checks(problem, traj, tolerance)
    if _variational(traj):
        return _variational_checks(problem, traj, checks, dynamics_tolerance)
    setup = interval_contact(problem, traj)
    checks.append(_contact_rows_check(setup["rows"], problem, traj, tolerance))
    checks += consistency_checks(problem, traj, tolerance, dynamics_tolerance, consistency_contact(problem, traj, setup))
    signed, mesh_times, message = interval_errors(problem, traj, contact=setup, signed=True)
    allowed = sticking_intervals(problem, traj, setup)  # planted feet: their forces follow the motion, held by the contact law
    signed, _ = better_of(signed, held_interval_errors(problem, traj, setup, allowed) if allowed.any() else None, traj, allowed)
    local = {n: np.abs(e) for n, e in signed.items()}
    checks += _dynamics(problem, traj, dynamics_tolerance, lambda *_: (local, mesh_times, message))
    checks += between_grid_points(problem, traj)
    try:
        simulated = simulate_file(problem, traj)
    except SimulationError as e:  # a failed re-simulation is a failed check, reported with how far it had strayed
        away = departure(traj, getattr(e, "partial", None), [v.name for v in problem.model.states], setup["interpolant"].grid.mesh_points)
        return checks + [Check("resimulation", False, math.inf, 1.0, f"the event-driven simulation stopped: {str(e).rstrip('.') if away else e}{away}")], {}
    budget = error_budget(problem, traj, setup, signed, simulated, floor=tolerance)
    sim = resimulate(problem, traj, setup, budget, simulated)
    checks += [_resimulation_check(traj, sim, budget), _newton_check(problem, traj, setup, signed, budget, tolerance),
               _impact_time_check(traj, sim, budget)]
    return checks, dict(simulation=sim, budget=budget, local_errors=local)


def _variational_checks(problem, traj, checks, dynamics_tolerance) -> tuple[list, dict]:
    """A ``midpoint-vi`` file has no interpolant to integrate interval by interval, so no error estimate: its
    event-driven re-simulation (held controls) is held to ``dynamics_tolerance`` × each state's
    max(1, median |x|) at every grid point (a median, which a few edited values cannot inflate)."""
    sim, system = simulate_file(problem, traj)
    names = system.coordinate_names + system.speed_names
    errors = {n: np.abs(v - traj[n]) for n, v in last_rows_at(sim.time, {n: sim[n] for n in names}, traj.time).items()}
    limits = {n: dynamics_tolerance * max(1.0, float(np.median(np.abs(traj[n])))) for n in names}
    name = max(names, key=lambda n: errors[n].max() / limits[n])
    k, ratio = int(np.argmax(errors[name])), float(errors[name].max() / limits[name])
    text = (f"the event-driven simulation stays within {dynamics_tolerance:.0e} × max(1, median |x|) of every state "
            f"(largest ratio {ratio:.2g}; {traj.metadata.get('scheme')}: no interval-by-interval error estimate)" if ratio <= 1 else
            f"`{name}` differs from the event-driven simulation by {errors[name][k]:.3e} at t = {traj.time[k]:.6g}, "
            f"beyond {limits[name]:.1e}")
    over = np.max(np.array(list(errors.values())), axis=0)
    sim_info = dict(simulated=sim, system=system, errors=errors, error_over_time=over, final_error=float(over[-1]),
                    max_error=float(over.max()), events=sim.metadata.get("events", []))
    return checks + [Check("resimulation", ratio <= 1, ratio, 1.0, text)], dict(simulation=sim_info)


def _contact_rows_check(rows, problem, traj, tol) -> Check:
    """Gaps ≥ 0, forces and impulses ≥ 0, friction inside its cone, no force where a gap of its interval
    opens, impulses only at interior mesh points; each against ``tol · max(1, local scale)``."""
    from ..discretization.interpolant import Interpolant

    grid = Interpolant(traj).grid
    X = np.array([traj[v.name] for v in problem.model.states]).reshape(len(problem.model.states), -1)
    gaps = rows.gaps(X, _parameters(problem.model, traj))
    Pn, Pt = impulses(rows, traj)
    inner = np.zeros(traj.time.size, dtype=bool)
    inner[grid.mesh_points[1:-1]] = True
    offsets = list(np.concatenate([[0], np.cumsum(rows.tangents)]).astype(int))
    lam_all = np.array([traj[f"{c.name}.normal_force"] for c in rows.contacts]).reshape(len(rows.contacts), traj.time.size)
    ft_all = np.array([traj[n] for n in rows.friction_columns()]).reshape(rows.num_tangents, traj.time.size)
    dissipation = rows.dissipation(X, _parameters(problem.model, traj), lam_all, ft_all)[0]
    owned = [grid.node(j) for j in grid.scheme.collocation_indices] if traj.metadata.get("contact_forces") == "collocation" else [grid.interval_starts]
    found = []  # (excess, message)
    for i, c in enumerate(rows.contacts):
        lam, scale = traj[f"{c.name}.normal_force"], max(1.0, float(np.median(np.abs(traj[f"{c.name}.normal_force"]))))
        found.append((-gaps[i].min() - tol, f"`{c.name}` penetrates: gap {gaps[i].min():.3e} at t = {traj.time[np.argmin(gaps[i])]:.6g}"))
        found.append((-lam.min() - tol * scale, f"`{c.name}.normal_force` is {lam.min():.3e} < 0"))
        found.append((-Pn[i].min() - tol, f"`{c.name}.impulse` is {Pn[i].min():.3e} < 0"))
        open_force = (np.maximum(gaps[i], 0.0)[grid.nodes_of_intervals] * lam[owned].max(axis=0)[:, None]).max()
        found.append((open_force - tol * scale, f"`{c.name}` pushes while its gap is open (gap × force {open_force:.3e})"))
        stray = np.flatnonzero(~inner & (np.abs(Pn[i]) > IMPACT * max(1.0, np.abs(Pn[i]).max())))
        if stray.size:
            found.append((np.inf, f"`{c.name}.impulse` is {Pn[i, stray[0]]:.6g} at t = {traj.time[stray[0]]:.6g}, "
                                  "not an interior mesh point where an impulse can act"))
        if i in rows.frictional:
            sl = slice(*offsets[rows.frictional.index(i):][:2])
            f = np.array([traj[n] for n in rows.friction_columns()[sl]])
            found.append((rows.cone_excess(i, lam, f).max() - tol * scale, f"the friction force of `{c.name}` leaves its cone (μ = {c.friction:g})"))
            found.append((rows.cone_excess(i, Pn[i], Pt[sl]).max() - tol, f"the friction impulse of `{c.name}` leaves its cone"))
            r = dissipation[rows.frictional.index(i)]
            found.append((r.max() - tol * scale, f"the friction force of `{c.name}` does not oppose the sliding with its whole cone "
                                                 f"(μλ|ṡ| + fᵀṡ = {r.max():.3e} at t = {traj.time[np.argmax(r)]:.6g})"))
    worst = max(found, key=lambda e: e[0])
    if worst[0] <= 0:
        return Check("contact", True, 0.0, tol, f"gaps, forces, impulses and friction cones of {len(rows.contacts)} contact(s) hold")
    return Check("contact", False, float(worst[0]), tol, worst[1])


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


def _scales(problem, traj, grid) -> np.ndarray:
    """Largest :func:`colloc.simulate.consistency.point_scale` over the states, at every grid point."""
    from .consistency import point_scale

    return np.max([point_scale(traj[v.name], grid) for v in problem.model.states], axis=0)


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
    return dict(robust=robust, force=force, estimate=E, tolerance=tol, impacts=found, local=local, scale=scale)


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


def simulate_file(problem, traj, **options):
    """The event-driven simulation of the file's model from its initial state with its controls (the scheme's
    control interpolant, :meth:`colloc.discretization.interpolant.Interpolant.control`, jumping where a ``NAME.interval_end`` column says so);
    returns the simulated Trajectory and the :class:`colloc.simulate.events.ContactSystem`."""
    from .events import ContactSystem, simulate_events
    from ..discretization.interpolant import Interpolant
    from ..transcription.contacts import END

    model, t = problem.model, traj.time
    itp = Interpolant(traj)
    if itp.held:  # while a contact sticks the motion may not change at all: steps of a twentieth of the file's
        options.setdefault("max_step", float(np.min(np.diff(np.linspace(t[0], t[-1], 20 * (t.size - 1) + 1)))))
    ends = itp.grid.interval_ends
    controls = {c.name: itp.control(c.name, traj[c.name + END][ends] if c.name + END in traj.names else None) for c in model.controls}
    system = ContactSystem(model)
    q0, v0 = ([traj[n][0] for n in names] for names in (system.coordinate_names, system.speed_names))
    # a file's gap may be negative by the relaxation's tolerance (1e-8): closed, not penetrating, for the simulator
    p = [traj.parameters[n] for n in system.parameter_names]
    u0 = [controls[n](t[0]) for n in system.control_names]
    gaps = system.evaluate(float(t[0]), np.array(q0), np.array(v0), np.array(u0), np.array(p))["gap"]
    options.setdefault("gap_tolerance", max(1e-9, -2.0 * float(gaps.min(initial=0.0))))
    return simulate_events(system, float(t[-1]), q0, v0, controls=controls, parameters=traj.parameters or None, t0=float(t[0]),
                           times=t, **options), system


def resimulate(problem, traj, setup, budget, simulated=None, **options) -> dict:
    """The event-driven simulation against the file at every grid point; each file impact matched to the
    simulator's nearest impact of the same contact (the file's post-impact state against the simulator's),
    a simulated impact in the last interval at ``t_f`` (to the final state's tolerance) that the file lacks taken as a
    landing (the file against the state before it).

    Returns
    -------
    dict
        ``simulated`` (Trajectory), ``errors`` ``{state: (num_points,)}``, ``error_over_time``, ``matched``
        ``[(file impact, simulated event or None)]``, ``extra`` (simulated impacts the file lacks), ``landing``.
    """
    sim, system = simulated or simulate_file(problem, traj, **options)
    t, ts = traj.time, sim.time
    names = [v.name for v in problem.model.states]
    at = last_rows_at(ts, {n: sim[n] for n in names}, t)
    scale = max(1.0, max(it["impulse"] for it in budget["impacts"]) if budget["impacts"] else 1.0)
    events = [e for e in sim.metadata.get("events", []) if e["kind"] == "impact" and e["impulse"] > IMPACT * scale]
    used, matched = set(), []
    for it in budget["impacts"]:
        options_ = [k for k, e in enumerate(events) if e["contact"] == it["contact"] and k not in used]
        k = min(options_, key=lambda k: abs(events[k]["time"] - it["time"]), default=None)
        matched.append((it, None if k is None else events[k]))
        if k is not None:
            used.add(k)
            row = np.flatnonzero(ts == events[k]["time"])[-1]  # after the simulator's impact
            for n in names:
                at[n][it["row"]] = sim[n][row]
    extra, landing = [events[k] for k in range(len(events)) if k not in used], None
    for e in extra:  # in the last interval (a slow impact elsewhere would pass the product below at any time)
        if e["time"] >= t[-2] and abs(e["time"] - t[-1]) * max(abs(e["speed"]), 1e-12) <= budget["tolerance"][:, -1].max():
            landing, row = e, np.flatnonzero(ts == e["time"])[0]  # before the simulator's impact
            for n in names:
                at[n][-1] = sim[n][row]
    extra = [e for e in extra if e is not landing]
    errors = {n: np.abs(at[n] - traj[n]) for n in names}
    over = np.max(np.array(list(errors.values())), axis=0)
    return dict(simulated=sim, system=system, errors=errors, error_over_time=over, final_error=float(over[-1]),
                max_error=float(over.max()), events=sim.metadata.get("events", []), matched=matched, extra=extra, landing=landing)


def _resimulation_check(traj, sim, budget) -> Check:
    """The event-driven simulation against the file at every mesh point, state by state, against ``SAFETY · E``."""
    from ..discretization.interpolant import Interpolant

    mesh = Interpolant(traj).grid.mesh_points
    names = list(sim["errors"])
    err = np.array([sim["errors"][n][mesh] for n in names])
    ratio = err / budget["tolerance"]
    r, k = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    worst = float(ratio[r, k])
    sim["ratio"] = ratio.max(axis=0)
    if worst <= 1.0:
        return Check("resimulation", True, worst, 1.0, f"the event-driven simulation stays within {SAFETY:g} × the scheme's "
                                                      f"error estimate at {mesh.size} mesh points (largest ratio {worst:.2g})")
    return Check("resimulation", False, worst, 1.0,
                 f"`{names[r]}` differs from the event-driven simulation by {err[r, k]:.3e} at t = {traj.time[mesh[k]]:.6g}, "
                 f"beyond {budget['tolerance'][r, k]:.2e} ({SAFETY:g} × the scheme's error estimate)")


def _newton_check(problem, traj, setup, signed, budget, tol) -> Check:
    """Each impulse against the simulator's impact law from the state its interval reaches alone (none: with its force error)."""
    from .events import ContactSystem, impact_impulses
    from ..transcription.contacts import CLOSED_GAP

    model = problem.model
    system = ContactSystem(model)
    names = [v.name for v in model.states]
    P = {v.name: traj.parameters[v.name] for v in model.parameters}
    p = np.array([P[n] for n in system.parameter_names])
    worst, text = 0.0, f"{sum(it['interval'] is not None for it in budget['impacts'])} impulse(s) obey Newton's law"
    for it in budget["impacts"]:
        if it["interval"] is None:
            return Check("newton", False, math.inf, 1.0, f"`{it['contact']}` has an impulse at t = {it['time']:.6g}, off the mesh points")
        x = dict(zip(names, it["before"]))
        q, v = np.array([x[n] for n in system.coordinate_names]), np.array([x[n] for n in system.speed_names])
        T = system.evaluate(it["time"], q, v, it["control"], p)
        gap_tol = CLOSED_GAP * max(1.0, float(np.abs(T["gap"]).max()))
        newton, _ = impact_impulses(system, it["time"], q, v, it["control"], p, gap_tolerance=gap_tol)
        i = it["index"]
        Wn = T["Wn"][i]
        m_eff = 1.0 / max(float(Wn @ np.linalg.solve(T["M"], Wn)), 1e-300)
        e = system.restitution[i]
        dv = dict(zip(names, it["rest_tolerance" if newton[i] == 0 else "speed_tolerance"]))
        limit = (1 + e) * m_eff * float(np.abs(Wn) @ np.array([dv[n] for n in system.speed_names])) + tol * max(1.0, newton[i])
        ratio = abs(it["impulse"] - newton[i]) / limit
        it.update(newton=float(newton[i]), newton_limit=limit)
        if ratio > worst:
            worst = ratio
            if ratio > 1:
                text = (f"`{it['contact']}` at t = {it['time']:.6g}: the file's impulse {it['impulse']:.6g}, Newton's law from the "
                        f"state the interval before reaches gives {newton[i]:.6g} (limit {limit:.1e})")
    return Check("newton", worst <= 1.0, worst, 1.0, text)


def _impact_time_check(traj, sim, budget) -> Check:
    """Each impact of the file beyond Newton's limit of zero found again by the simulator within its time tolerance, and none more."""
    matched = [(it, e) for it, e in sim["matched"] if e is not None or it["impulse"] > it.get("newton_limit", 0.0)]
    worst, text = 0.0, f"{len(matched)} impact(s) found again by the simulator ({len(sim['matched']) - len(matched)} within Newton's limit of zero)"
    for it, e in matched:
        if e is None:
            return Check("impact times", False, math.inf, 1.0, f"the simulator finds no impact of `{it['contact']}` near t = {it['time']:.6g}")
        limit = it.get("time_tolerance", 0.0)
        ratio = abs(e["time"] - it["time"]) / limit if limit > 0 else math.inf
        h = float(np.min(np.abs(np.diff(traj.time[max(it["row"] - 1, 0):it["row"] + 2]))))
        it["time_error"] = abs(e["time"] - it["time"])
        if ratio > worst:
            worst = ratio
            if ratio > 1:
                text = (f"`{it['contact']}`: the file's impact at t = {it['time']:.8g}, the simulator's at {e['time']:.8g} "
                        f"(difference {abs(e['time'] - it['time']):.2e} = {abs(e['time'] - it['time']) / h:.2g} grid steps; limit {limit:.1e})")
    for e in sim["extra"][:1]:  # the first simulated impact the file lacks
        return Check("impact times", False, math.inf, 1.0, f"the simulator finds an impact of `{e['contact']}` at t = {e['time']:.6g} "
                                                         "that the file does not have")
    if sim["landing"] is not None and worst <= 1:
        text += f"; a landing at t_f = {traj.time[-1]:.6g}"
    return Check("impact times", worst <= 1.0, worst, 1.0, text)


__all__ = ["check_contact_file", "interval_contact", "error_budget", "resimulate", "simulate_file", "robust_local_errors",
           "SAFETY", "CAP"]
