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
  impulses only at interior mesh points (constraint tolerance; the rows that grow with a
  force, its cone, dissipation and open-gap rows, times the force's local scale there);
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

The tolerances of the last three come from the Gronwall estimate of the file's global error
(:mod:`colloc.simulate.contact_budget`).
"""
from __future__ import annotations

import math

import casadi as ca
import numpy as np

from .checks import Check, basic_checks, departure, point_scale, solution_checks, _dynamics
from .contact_budget import CAP, IMPACT, SAFETY, _parameters, _right_hand_side, error_budget, impulses, robust_local_errors  # noqa: F401
from .contact_terms import ContactTerms
from .held_intervals import better_of, held_interval_errors, local_impacts, sticking_intervals
from ..discretization.interpolant import Interpolant, last_rows_at
from ..errors import SimulationError
from ..transcription.registry import of_trajectory


def _variational(traj) -> bool:
    """Whether ``traj`` holds the nodes of discrete Euler–Lagrange equations (no collocation interpolant)."""
    made_by = of_trajectory(traj)
    return made_by is not None and made_by.variational


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
    ends = itp.grid.interval_ends
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
    own_ends = traj.metadata.get("own_ends", free)  # own_ends=True closes fixed-mesh intervals on their own too
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
        f = (own[i] if own_ends else traj[n + ".dot"][ends]) if n in implicit else xdot[i]
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
    opens, impulses only at interior mesh points; each against ``tol`` times the force's scale (the cone, dissipation
    and open-gap rows against its local scale at their point, :func:`colloc.simulate.checks.point_scale`)."""
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
        lam = traj[f"{c.name}.normal_force"]
        scale = max(1.0, float(np.median(np.abs(lam))))
        local = point_scale(lam, grid.nodes_of_intervals)  # the rows homogeneous in the forces: against the force there
        found.append((-gaps[i].min() - tol, f"`{c.name}` penetrates: gap {gaps[i].min():.3e} at t = {traj.time[np.argmin(gaps[i])]:.6g}"))
        found.append((-lam.min() - tol * scale, f"`{c.name}.normal_force` is {lam.min():.3e} < 0"))
        found.append((-Pn[i].min() - tol, f"`{c.name}.impulse` is {Pn[i].min():.3e} < 0"))
        product = np.maximum(gaps[i], 0.0)[grid.nodes_of_intervals] * lam[owned].max(axis=0)[:, None]
        excess = product - tol * local[grid.nodes_of_intervals]
        found.append((excess.max(), f"`{c.name}` pushes while its gap is open (gap × force {product.flat[np.argmax(excess)]:.3e})"))
        stray = np.flatnonzero(~inner & (np.abs(Pn[i]) > IMPACT * max(1.0, np.abs(Pn[i]).max())))
        if stray.size:
            found.append((np.inf, f"`{c.name}.impulse` is {Pn[i, stray[0]]:.6g} at t = {traj.time[stray[0]]:.6g}, "
                                  "not an interior mesh point where an impulse can act"))
        if i in rows.frictional:
            sl = slice(*offsets[rows.frictional.index(i):][:2])
            f = np.array([traj[n] for n in rows.friction_columns()[sl]])
            found.append(((rows.cone_excess(i, lam, f) - tol * local).max(), f"the friction force of `{c.name}` leaves its cone (μ = {c.friction:g})"))
            found.append((rows.cone_excess(i, Pn[i], Pt[sl]).max() - tol, f"the friction impulse of `{c.name}` leaves its cone"))
            r = dissipation[rows.frictional.index(i)]
            k = int(np.argmax(r - tol * local))
            found.append((r[k] - tol * local[k], f"the friction force of `{c.name}` does not oppose the sliding with its whole cone "
                                                 f"(μλ|ṡ| + fᵀṡ = {r[k]:.3e} at t = {traj.time[k]:.6g})"))
    worst = max(found, key=lambda e: e[0])
    if worst[0] <= 0:
        return Check("contact", True, 0.0, tol, f"gaps, forces, impulses and friction cones of {len(rows.contacts)} contact(s) hold")
    return Check("contact", False, float(worst[0]), tol, worst[1])


def simulate_file(problem, traj, **options):
    """The event-driven simulation of the file's model from its initial state with its controls (the scheme's
    control interpolant, :meth:`colloc.discretization.interpolant.Interpolant.control`, jumping where a ``NAME.interval_end`` column says so);
    returns the simulated Trajectory and the :class:`colloc.simulate.events.ContactSystem`."""
    from .control_signals import solution_controls
    from .events import ContactSystem, simulate_events
    from ..discretization.interpolant import Interpolant
    from ..transcription.contacts import END

    model, t = problem.model, traj.time
    itp = Interpolant(traj)
    if itp.held:  # while a contact sticks the motion may not change at all: steps of a twentieth of the file's
        options.setdefault("max_step", float(np.min(np.diff(np.linspace(t[0], t[-1], 20 * (t.size - 1) + 1)))))
    ends = itp.grid.interval_ends
    system = ContactSystem(model)
    ends_of = {n: traj[n + END][ends] for n in system.control_names if n + END in traj.names}
    controls = solution_controls(itp, system.control_names, ends_of)  # all at once: one interval search per call
    q0, v0 = ([traj[n][0] for n in names] for names in (system.coordinate_names, system.speed_names))
    # a file's gap may be negative by the relaxation's tolerance (1e-8): closed, not penetrating, for the simulator
    p = [traj.parameters[n] for n in system.parameter_names]
    u0 = controls(t[0])
    gaps = system.evaluate(float(t[0]), np.array(q0), np.array(v0), np.array(u0), np.array(p))["gap"]
    options.setdefault("gap_tolerance", max(1e-9, -2.0 * float(gaps.min(initial=0.0))))
    # Painlevé's paradox, which a light leg meets where its foot lands sliding at the file's tolerance, is an
    # impact without collision: an impulse the file lacks, judged as any other (check `impact times`)
    options.setdefault("paradox", "impact")
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
    slight = [e for e in extra if _within_tolerance(e, sim, system, traj, budget)]
    extra = [e for e in extra if not any(e is f for f in slight)]
    local = [_found_locally(problem, traj, e, IMPACT * scale, budget) for e in extra]
    drift = [e for e, f in zip(extra, local) if f is None]
    extra = [f for f in local if f is not None]  # as the simulation from the file's own state finds them
    errors = {n: np.abs(at[n] - traj[n]) for n in names}
    over = np.max(np.array(list(errors.values())), axis=0)
    # an impact excused as within the scheme's error changes the simulated speeds by up to what it excuses, from then on
    allowance = np.zeros((len(names), t.size))
    for e in slight:
        later = t >= e["time"] - 1e-12 * max(1.0, abs(t[-1]))
        for r, n in enumerate(names):
            allowance[r, later] += e["excused"].get(n, 0.0)
    return dict(simulated=sim, system=system, errors=errors, error_over_time=over, final_error=float(over[-1]),
                max_error=float(over.max()), events=sim.metadata.get("events", []), matched=matched, extra=extra, landing=landing,
                slight=slight, drift=drift, allowance=allowance)


def _found_locally(problem, traj, event, smallest, budget) -> dict | None:
    """The impact of the same contact the simulator finds when started from the file's own state at the mesh point
    an interval before the impact's (an impulse above ``smallest`` and beyond the scheme's error,
    :func:`_within_tolerance`, by the next mesh point), or None: an impact only the whole-horizon simulation finds is
    its open-loop drift, not the file's.  A failed local simulation keeps the event."""
    from ..discretization.grid import locate
    from ..discretization.interpolant import Interpolant

    rows = Interpolant(traj).grid.mesh_points
    mesh = traj.time[rows]
    k = int(locate(mesh, event["time"])[0][0])
    local = local_impacts(problem, traj, int(rows[max(k - 1, 0)]), float(mesh[min(k + 1, mesh.size - 1)]))
    if local is None:
        return event
    sim, system, found = local
    return next((e for e in found if e["contact"] == event["contact"] and e["impulse"] > smallest
                 and not _within_tolerance(e, sim, system, traj, budget)), None)


#: Gap [m] within which a file's contact counts as reached in :func:`_grazing`, besides the coordinates' tolerance: the
#: relaxation's (a file's gap may be negative by 1e-8, as :func:`simulate_file` allows).
GRAZING_GAP = 1e-8


def _within_tolerance(event, sim, system, traj, budget) -> bool:
    """Whether a simulated impact the file lacks is within the scheme's error in its interval ``k``: either

    * its impulse changes the normal speed, ``P W_n M⁻¹ W_nᵀ``, by no more than ``|W_n| · tol_v``, ``tol_v`` the
      speeds' ``SAFETY`` times their local error there plus the constraint tolerance (as a file's own impulse within
      Newton's limit of zero is excused; the local error, not the whole-horizon estimate, which may be far larger).
      A foot the scheme leaves approaching at 7e-5 m/s in stance is struck by the simulator with an impulse that small;
    * or it is a **grazing arrival** (:func:`_grazing`): the file itself reaches the surface at rest there, and the
      simulator strikes it no faster than a gap error within the scheme's allows;
    * or it falls **inside a stance** (:func:`_stance`): the file's contact is closed at the mesh point and loaded over
      the interval that ends there, and the normal speed the impulse stops is within what the coordinates' tolerance
      allows the derivative of the scheme's polynomial there."""
    from ..discretization.grid import locate
    from ..discretization.interpolant import Interpolant

    mesh = traj.time[Interpolant(traj).grid.mesh_points]
    m = min(int(locate(mesh, event["time"])[0][0]) + 1, mesh.size - 1)
    i = [c.name for c in system.contacts].index(event["contact"])
    row = np.flatnonzero(sim.time == event["time"])[0]  # before the impact
    q, v = (np.array([sim[n][row] for n in names]) for names in (system.coordinate_names, system.speed_names))
    u = np.array([sim[n][row] if n in sim else 0.0 for n in system.control_names])
    p = np.array([traj.parameters[n] for n in system.parameter_names])
    T = system.evaluate(event["time"], q, v, u, p)
    Wn = T["Wn"][i]
    local = SAFETY * budget["robust"][:, m - 1] + budget["floor"] * budget["scale"][:, m]
    tol = dict(zip([v.name for v in system.model.states], local))
    allowed = float(np.abs(Wn) @ np.array([tol.get(n, 0.0) for n in system.speed_names]))
    unit = np.linalg.solve(T["M"], Wn)  # the speeds a unit impulse changes
    change = event["impulse"] * float(Wn @ unit)  # the normal speed the impulse changes (a plastic strike's approach speed)
    bound = allowed if change <= allowed else max(
        (b for b in (_grazing(event, i, (q, v, u, p, T), system, traj, tol, allowed),
                     _stance(event, i, (q, v, u, p, T), system, traj, budget, tol, allowed)) if b is not None), default=None)
    if bound is None or change > bound:  # an impact without collision (no approach speed) is judged by its change too
        return False
    # the speeds an impulse stopping that normal speed changes: the resimulation's tolerance from the impact on
    event["excused"] = dict(zip(system.speed_names, np.abs(unit) * bound / max(float(Wn @ unit), 1e-300)))
    return True


def _grazing(event, i, at, system, traj, tol, allowed) -> float | None:
    """A grazing arrival: if the file reaches contact ``i``'s surface at rest near the impact (at the grid point nearest
    it, the gap within ``δφ`` and the normal speed within ``allowed``), the normal speed that the simulator's impulse
    may change, ``√(2 |A| δφ) + allowed`` (a plastic strike's approach speed); else None.

    ``δφ = Σ_j |∂φ/∂q_j| tol_qj`` is the gap error that the coordinates' local tolerances allow, ``A`` the free normal
    acceleration there (``W_n M⁻¹ f + Ẇ_n v``, the contact forces left out).  Why: a motion that touches a surface at
    rest, ``φ(t) ≈ A (t − t*)²/2`` (A > 0, an arrival), moved towards it by ``δφ`` strikes it at ``√(2 A δφ)``; one
    that comes to rest on it and is then pressed onto it (A < 0, the load taken over by the contact), held ``δφ`` above
    it, falls onto it at ``√(2 |A| δφ)``: the square-root sensitivity of a grazing contact (Nordmark, J. Sound Vib.
    145 (1991)).  A file whose arrival is tangential to within its error is struck by a simulator started on it at that
    speed, whichever way its error falls; a file that arrives with a speed fails the first condition (the Solo12 trot
    landing at 1.9e-3 m/s did)."""
    q, v, u, p, T = at
    k = int(np.argmin(np.abs(traj.time - event["time"])))
    qf, vf, uf = _file_state(traj, system, k)
    F = system.evaluate(float(traj.time[k]), qf, vf, uf, p)
    dphi = _gap_error(i, (event["time"], q, v, u, p), system, tol)
    if F["gap"][i] > dphi + GRAZING_GAP or abs(float(F["Wn"][i] @ vf)) > allowed:
        return None
    A = float(T["Wn"][i] @ np.linalg.solve(T["M"], T["f"]) + T["drift_n"][i])
    return float(np.sqrt(2.0 * abs(A) * dphi)) + allowed


def _file_state(traj, system, row) -> tuple:
    """The file's coordinates, speeds and controls (0 for one it lacks) at ``row``, in ``system``'s order."""
    q, v = (np.array([traj[n][row] for n in names]) for names in (system.coordinate_names, system.speed_names))
    return q, v, np.array([traj[n][row] if n in traj.names else 0.0 for n in system.control_names])


def _gap_error(i, at, system, step) -> float:
    """``Σ_j |∂φ_i/∂q_j| step_j`` at ``at = (t, q, v, u, p)``, by one-sided differences of the gap (``step`` the
    coordinates' tolerances by name)."""
    t, q, v, u, p = at
    dq = np.array([step.get(n, 0.0) for n in system.coordinate_names])
    phi = system.evaluate(t, q, v, u, p)["gap"][i]
    return float(sum(abs(system.evaluate(t, q + np.eye(q.size)[j] * dq[j], v, u, p)["gap"][i] - phi) for j in range(q.size) if dq[j]))


def differentiation_constant(nodes, at) -> float:
    """``Σ_i |ℓ_i'(at)|``, ``ℓ_i`` the Lagrange basis of ``nodes``: the largest derivative at ``at`` of a polynomial
    through ``nodes`` whose values are within 1 there (the Lebesgue constant of differentiation; ``2/h`` for the
    two ends of an interval of length ``h``, ``8/h`` for its ends and midpoint, ``21.06/h`` for Radau's three points
    and the interval's start)."""
    nodes = np.asarray(nodes, dtype=float)
    total = 0.0
    for a in range(nodes.size):
        others = np.delete(nodes, a)
        basis = np.poly(others) / np.prod(nodes[a] - others)
        total += abs(float(np.polyval(np.polyder(basis), at)))
    return total


def _stance(event, i, at, system, traj, budget, tol, allowed) -> float | None:
    """An impulse inside a stance: if the file's contact ``i`` is closed at the mesh point nearest the impact (the gap
    within ``δφ`` and the relaxation's) and loaded at every grid point of the interval that ends there, the normal
    speed the simulator's impulse may stop, ``Λ' δφ + allowed``; else None (at a touch-down that interval is unloaded:
    :func:`_grazing` judges it).

    Why: the scheme holds a closed contact's gap at its grid points, not its normal speed, and its speeds at a
    collocation point are the derivative of its coordinates' polynomial (``q̇ = N(q) v`` there).  Coordinates known
    to ``δφ = Σ_j |∂φ/∂q_j| tol_qj`` along the contact's normal at the interval's nodes (the coordinates' tolerances,
    as :func:`_grazing` takes them) leave the normal speed there known to ``Λ' δφ``, ``Λ'`` the
    :func:`differentiation_constant` of the interval's nodes at the mesh point: the velocity-level drift of a
    constraint held at position level, as an index-3 DAE's collocation leaves it.  A simulator started on that state
    finds the contact closed and approaching and stops it with an impulse that is that drift, not an impact the file
    lacks.  (The Solo12 trot's hind foot, loaded with 13.8 N, reaches the mesh point 0.192 s at −2.5e-5 m/s, and the
    other foot of its pair at −2.1e-4 m/s, within ``Λ' δφ`` ≈ 4e-3 m/s; the coordinates' local errors alone, 5.8e-5 m/s
    there, miss the drift that the gap's curvature along the polynomial causes, up to 1e-3 m/s in its stances.)"""
    p = at[3]
    grid = Interpolant(traj).grid
    mesh = traj.time[grid.mesh_points]
    m = int(np.argmin(np.abs(mesh - event["time"])))
    nodes = grid.nodes_of_intervals[max(m - 1, 0)]  # the interval the mesh point ends (the first starts at t_0)
    force = traj[f"{event['contact']}.normal_force"]
    if not (force[nodes] > budget["floor"] * max(1.0, float(np.abs(force).max()))).all():
        return None
    row = int(grid.mesh_points[m])
    here = (float(mesh[m]), *_file_state(traj, system, row), p)
    dphi = _gap_error(i, here, system, tol)
    if system.evaluate(*here)["gap"][i] > dphi + GRAZING_GAP:
        return None
    return differentiation_constant(traj.time[nodes], float(mesh[m])) * dphi + allowed


def _resimulation_check(traj, sim, budget) -> Check:
    """The event-driven simulation against the file at every mesh point, state by state, against ``SAFETY · E``."""
    from ..discretization.interpolant import Interpolant

    mesh = Interpolant(traj).grid.mesh_points
    names = list(sim["errors"])
    err = np.array([sim["errors"][n][mesh] for n in names])
    tolerance = budget["tolerance"] + sim.get("allowance", np.zeros((len(names), traj.time.size)))[:, mesh]
    ratio = err / tolerance
    r, k = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    worst = float(ratio[r, k])
    sim["ratio"] = ratio.max(axis=0)
    if worst <= 1.0:
        return Check("resimulation", True, worst, 1.0, f"the event-driven simulation stays within {SAFETY:g} × the scheme's "
                                                      f"error estimate at {mesh.size} mesh points (largest ratio {worst:.2g})"
                                                      + _unbinding(traj, names, mesh, SAFETY * budget["estimate"]))
    at = float(traj.time[mesh[k]])
    return Check("resimulation", False, worst, 1.0,
                 f"`{names[r]}` differs from the event-driven simulation by {err[r, k]:.3e} at t = {traj.time[mesh[k]]:.6g}, "
                 f"beyond {tolerance[r, k]:.2e} ({SAFETY:g} × the scheme's error estimate"
                 + (", and the speeds that impacts within it change)" if sim.get("slight") else ")"), ((at, at),))


def _unbinding(traj, names, mesh, estimate) -> str:
    """Where the estimate exceeds what a state spans over the horizon the comparison cannot fail there: say from when.
    (Correct files reach that: an unstable walker's open-loop drift, grazing impacts' saltation, a friction force that
    switches inside an interval; the per-interval checks still bind there.)"""
    span = np.array([np.ptp(traj[n]) for n in names])[:, None]
    loose = estimate > span
    if not loose.any():
        return ""
    k = int(np.flatnonzero(loose.any(axis=0))[0])
    return (f"; from t = {traj.time[mesh[k]]:.6g} the estimate exceeds the span of {int(loose[:, k:].any(axis=1).sum())} of "
            f"{len(names)} states, where this comparison does not bind")


def _newton_check(problem, traj, setup, signed, budget, tol) -> Check:
    """Each impulse against the simulator's impact law from the state its interval reaches alone (none: with its force error)."""
    from .events import ContactSystem, impact_impulses
    from ..transcription.contacts import CLOSED_GAP

    model = problem.model
    system = ContactSystem(model)
    names = [v.name for v in model.states]
    P = {v.name: traj.parameters[v.name] for v in model.parameters}
    p = np.array([P[n] for n in system.parameter_names])
    worst, text, where = 0.0, f"{sum(it['interval'] is not None for it in budget['impacts'])} impulse(s) obey Newton's law", []
    for it in budget["impacts"]:
        if it["interval"] is None:
            return Check("newton", False, math.inf, 1.0, f"`{it['contact']}` has an impulse at t = {it['time']:.6g}, off the mesh points",
                         ((it["time"], it["time"]),))
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
        if ratio > 1:
            where.append((float(it["time"]), float(it["time"])))
        if ratio > worst:
            worst = ratio
            if ratio > 1:
                text = (f"`{it['contact']}` at t = {it['time']:.6g}: the file's impulse {it['impulse']:.6g}, Newton's law from the "
                        f"state the interval before reaches gives {newton[i]:.6g} (limit {limit:.1e})")
    return Check("newton", worst <= 1.0, worst, 1.0, text, tuple(where))


def _impact_time_check(traj, sim, budget) -> Check:
    """Each impact of the file beyond Newton's limit of zero found again by the simulator within its time tolerance, and none more."""
    matched = [(it, e) for it, e in sim["matched"] if e is not None or it["impulse"] > it.get("newton_limit", 0.0)]
    worst, text, where = 0.0, f"{len(matched)} impact(s) found again by the simulator ({len(sim['matched']) - len(matched)} within Newton's limit of zero)", []
    for it, e in matched:
        if e is None:
            return Check("impact times", False, math.inf, 1.0, f"the simulator finds no impact of `{it['contact']}` near t = {it['time']:.6g}",
                         ((float(it["time"]), float(it["time"])),))
        limit = it.get("time_tolerance", 0.0)
        ratio = abs(e["time"] - it["time"]) / limit if limit > 0 else math.inf
        h = float(np.min(np.abs(np.diff(traj.time[max(it["row"] - 1, 0):it["row"] + 2]))))
        it["time_error"] = abs(e["time"] - it["time"])
        if ratio > 1:
            where.append(tuple(sorted((float(it["time"]), float(e["time"])))))
        if ratio > worst:
            worst = ratio
            if ratio > 1:
                text = (f"`{it['contact']}`: the file's impact at t = {it['time']:.8g}, the simulator's at {e['time']:.8g} "
                        f"(difference {abs(e['time'] - it['time']):.2e} = {abs(e['time'] - it['time']) / h:.2g} grid steps; limit {limit:.1e})")
    for e in sim["extra"][:1]:  # the first simulated impact the file lacks
        return Check("impact times", False, math.inf, 1.0, f"the simulator finds an impact of `{e['contact']}` at t = {e['time']:.6g} "
                                                         "that the file does not have", ((float(e["time"]), float(e["time"])),))
    if sim.get("slight"):
        text += f"; {len(sim['slight'])} simulated impact(s) the file lacks within the scheme's error (a speed change within its tolerance, a grazing arrival, or inside a stance)"
    if sim.get("drift"):
        text += (f"; {len(sim['drift'])} impact(s) the whole-horizon simulation finds but not one started from the file's state "
                 "an interval before (its drift)")
    if sim["landing"] is not None and worst <= 1:
        text += f"; a landing at t_f = {traj.time[-1]:.6g}"
    return Check("impact times", worst <= 1.0, worst, 1.0, text, tuple(where))


__all__ = ["check_contact_file", "interval_contact", "error_budget", "resimulate", "simulate_file", "robust_local_errors",
           "SAFETY", "CAP"]
