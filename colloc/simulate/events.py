"""Event-driven simulation of multibody models with unilateral contacts (Siconos' scheme).

Between events the *bilateral smooth dynamics* of the active set ``I₂`` is
integrated (scipy's ``solve_ivp``, DOP853, with root-finding):

    M(q) a = f(t, q, v, u) + Σ_{i∈I₂} H_iᵀ F_i + Bᵀλ,   W_{n,i} a + Ẇ_{n,i} v = 0  (i ∈ I₂),   ψ̇ = 0,

with ``f = τ − c`` and ``ψ = B v + ψ_t = 0`` the bilateral (holonomic or
velocity) constraints; a sticking frictional contact adds ``W_{t,i} a + Ẇ_{t,i} v = 0``
(one or two tangent rows) and its tangential force, a sliding one the force
``μ F_{n,i} f̂_i`` along its friction direction (:mod:`colloc.simulate.contact_system`).
The forces are solved by least squares nearest the ones the last event
found, so redundant rows (a box on two sticking corners, a table on four
legs) leave the motion unique though the forces are not
(:mod:`colloc.simulate.contact_forces`); at an event those are the
minimum-norm forces, or where these break a cone the ones deepest inside
every cone (:mod:`colloc.simulate.friction_modes`).  The roots sought are the gaps of the open
contacts, the normal forces of the active ones (take-off), the cone margins
of the sticking ones (start of slip), the sliding speeds along their first
direction (stop) and, on a polygonal cone, the change of the vertex that
dissipates most (turn) or, for a contact sliding along the bisector of two
vertices, its force reaching one of them (leave; Filippov's sliding motion,
:mod:`colloc.simulate.friction_modes`).  The integration restarts at the controls'
breakpoints (:mod:`colloc.simulate.control_signals`): while a contact sticks nothing
moves, so the step-size control could not see a push.  At every event (Acary &
Brogliato 2008, §8; Siconos' ``EventDriven``, see the background note):

1. ``I₁`` = closed contacts (gap ≤ ``gap_tolerance`` or active).  If one of them
   approaches (``ẏ < 0``), the **velocity-level LCP** with Newton's law for all
   of ``I₁`` at once: ``ẏ⁺ = ẏ⁻ + W_n M⁻¹ Wᵀ P``, ``0 ≤ ẏ⁺ + e ẏ⁻ ⊥ P_n ≥ 0``
   (with friction: the Coulomb cone's facets, below; with bilateral
   constraints ``M⁻¹`` is the inverse restricted to them).  A contact that
   arrives slower than ``rest_speed`` takes ``e = 0``: the accumulation of
   impacts (Zeno) ends with the contact at rest instead of stalling.
2. ``I₂`` candidates: closed contacts with ``|ẏ| ≤ rest_speed``.  The
   **acceleration-level LCP** ``0 ≤ ÿ ⊥ F_n ≥ 0`` decides which stay (and
   whether a frictional one sticks or slips); the others take off.  Where it
   has no solution (Painlevé's paradox) the simulation stops with a
   :class:`~colloc.errors.ContactParadoxError` naming the sliding contact, or
   with ``paradox="impact"`` an impact without collision makes the closed
   contacts stick (:func:`colloc.simulate.contact_forces.stopping_impulse`).

Friction (planar Coulomb, facets ``±W_t``): unknowns ``P_n, β⁺, β⁻, λ`` with
``P_t = β⁺ − β⁻``::

    0 ≤ ẏ_n⁺ + e ẏ_n⁻           ⊥ P_n ≥ 0
    0 ≤  ṡ⁺ + λ                 ⊥ β⁺ ≥ 0
    0 ≤ −ṡ⁺ + λ                 ⊥ β⁻ ≥ 0
    0 ≤ μ P_n − β⁺ − β⁻         ⊥ λ ≥ 0

(Stewart & Trinkle, IJNME 39 (1996); Anitescu & Potra, Nonlinear Dyn. 14
(1997)); in 3-D the facets are the polygon's vertex directions, and a
circular cone is solved as a polygon whose vertex follows the force
(:func:`colloc.simulate.contact_forces.solve_contacts`); the same form at acceleration
level with forces.  It is not symmetric: Lemke's method solves it; the
frictionless LCP is symmetric positive semidefinite and is solved as a QP
(:mod:`colloc.simulate.lcp`).

Legend: ``q, v, a`` coordinates, speeds, accelerations; ``y`` gaps, ``ẏ``
normal speeds, ``s`` tangential positions; ``W_n, W_t`` contact Jacobians,
``B`` constraint rows; ``F`` forces, ``P`` impulses; ``e`` restitution, ``mu`` friction.
"""
from __future__ import annotations

import math

import numpy as np

from .contact_forces import ContactRows, constrained_inverse, mode_forces, project_speeds, slide_direction, solve_contacts, stopping_impulse
from .contact_system import ContactSystem, Mode, smooth_accelerations
from .control_signals import breakpoints, control_function
from .friction_modes import bisector_vertices, central_forces, edge_rows, onset_mode, slide_on_edges, tangential_roots
from ..errors import ContactParadoxError, OptionError, SimulationError
from .lcp import LCPError
from ..model.named_values import named_vector as _named
from .resimulation import format_resimulation, resimulate_phases, solve_ivp_function
from ..results.trajectory import Trajectory

EVENT_KINDS = ("impact", "closed", "take-off", "stick", "slip")


def contact_lcp(Minv, Wn, Wt, bn, bt, mu, sigma, stick):
    """The planar contact LCP of the contacts given (rows of ``Wn``, ``Wt``; one tangent each).

    ``bn``, ``bt``: normal and tangential terms without contact forces (at
    velocity level ``(1 + e) ẏ⁻`` and ``ṡ⁻``; at acceleration level ``ÿ`` and
    ``s̈`` of the free motion).  ``sigma[i] ≠ 0`` makes contact i slide (force
    ``−μ σ F_n`` along ``W_t``, no tangential unknowns); ``stick[i]`` gives it
    the cone facets; otherwise it is frictionless.

    Returns ``(Pn, Pt, slip_rate)``: normal and tangential force (or impulse)
    and ``λ`` (the sliding rate; > 0 means the contact slides).
    """
    k = Wn.shape[0]
    kinds = ["slide" if sigma[i] else ("stick" if stick[i] and mu[i] > 0 else "free") for i in range(k)]
    rows = ContactRows(Wn, [Wt[i:i + 1] for i in range(k)], mu, ["polyhedral"] * k, [2] * k)
    Pn, Pt, slip = solve_contacts(Minv, rows, bn, [bt[i:i + 1] for i in range(k)], kinds, [-np.array([s]) for s in sigma])
    return Pn, np.array([p[0] for p in Pt]), slip


class _Options:
    def __init__(self, rtol, atol, gap_tolerance, rest_speed, max_events, max_step, control_samples, paradox="stop"):
        if paradox not in ("stop", "impact"):
            raise OptionError(f"`paradox` must be 'stop' or 'impact'; got {paradox!r}.")
        self.paradox = paradox
        for name, val in (("rtol", rtol), ("atol", atol), ("gap_tolerance", gap_tolerance), ("rest_speed", rest_speed)):
            if not (isinstance(val, (int, float)) and math.isfinite(val) and val > 0):
                raise OptionError(f"`{name}` must be a positive finite number; got {val!r}.")
        if not (isinstance(max_events, int) and max_events > 0):
            raise OptionError(f"`max_events` must be a positive integer; got {max_events!r}.")
        if not (max_step > 0):
            raise OptionError(f"`max_step` must be positive; got {max_step!r}.")
        if not (isinstance(control_samples, int) and control_samples >= 0):
            raise OptionError(f"`control_samples` must be an integer ≥ 0; got {control_samples!r}.")
        self.rtol, self.atol, self.gap_tolerance, self.rest_speed = rtol, atol, gap_tolerance, rest_speed
        self.max_events, self.max_step, self.control_samples = max_events, max_step, control_samples


def simulate_events(model, t_final, q0, v0, controls=None, parameters=None, t0=0.0, times=None,
                    rtol=1e-12, atol=1e-12, gap_tolerance=1e-9, rest_speed=1e-7, max_events=10000,
                    max_step=np.inf, breakpoints=None, control_samples=1000, paradox="stop") -> Trajectory:
    """Simulate a multibody model with unilateral contacts, event by event.

    The algorithm is Siconos' event-driven scheme for Lagrangian systems with
    Newton impacts (module docstring): smooth dynamics of the active set with
    root-finding, the velocity-level LCP at impacts (all closed contacts at
    once), the acceleration-level LCP for take-off, stick and slip.

    Parameters
    ----------
    model : Multibody, list of components, Model or ContactSystem
        Bodies with contacts declared by :meth:`Multibody.contact`, and optionally
        holonomic or velocity constraints (they hold throughout, with the contacts).
    t_final : float
    q0, v0 : array_like, shapes (nq,), (nv,), or dict {coordinate or speed: value}
        Initial state; gaps must be ≥ −``gap_tolerance``.
    controls : None, callable, Trajectory or dict, optional
        ``u(t) -> array (nu,)``, a Trajectory with the control columns (a solution's
        as its scheme holds them, breakpoints at its mesh points; a file from elsewhere
        linear between its times, which become breakpoints), or ``{control: number or
        callable u(t)}``; default 0.  A callable's ``breakpoints`` attribute
        (times where it may jump) is used if it has one.
    parameters : dict, optional
        ``{parameter: value}`` for every model parameter.
    t0 : float
    times : array_like, optional
        Output times (default 201 equally spaced); every event adds a row
        before and a row after it (same time).
    rtol, atol : float
        Tolerances of the DOP853 integrator.
    gap_tolerance : float
        A contact with a gap below this is closed (in ``I₁``).
    rest_speed : float
        Normal (and sliding) speed below which a closed contact is at rest:
        it impacts with ``e = 0`` and joins ``I₂`` (ends Zeno accumulations;
        the accumulation time is then found to about ``2e·rest_speed/(g(1−e))``).
    max_events : int
    max_step : float
        Largest integrator step.
    breakpoints : array_like, optional
        Times where the controls may jump; the integration restarts at each.
    control_samples : int
        A control function without declared breakpoints is sampled this many
        times over the span: each jump found is a breakpoint, and while a contact
        sticks the steps where it bends are at most half the samples' spacing
        (0: no scan).  While a contact sticks the state may not change at all, so
        the step-size control cannot see a push: without this a short push is
        stepped over.
    paradox : {"stop", "impact"}
        Where no contact force obeys the laws (Painlevé's paradox): stop with
        :class:`~colloc.errors.ContactParadoxError` (default), or resolve it by an
        impact without collision (Génot & Brogliato 1999): the closed contacts
        stop, normal and tangential, by the smallest impulse that stops them,
        recorded as an ``impact`` event (normal speed ≈ 0); the paradox still stops the
        simulation where that impulse would leave a friction cone.

    Returns
    -------
    Trajectory
        Columns: coordinates and speeds (``state``), controls, and per contact
        ``<contact>.normal_force`` and, with friction, ``<contact>.friction_force``
        (3-D: ``friction_force_1``, ``friction_force_2`` along the tangents)
        (``multiplier``).  ``metadata["events"]`` lists ``{time, contact, kind,
        speed, impulse}`` with kind one of ``impact, closed, take-off, stick, slip``
        (``speed`` the normal speed before an impact).

    Raises
    ------
    SimulationError
        More than ``max_events`` events, or the integrator failed; its ``partial`` attribute holds the
        Trajectory up to the stop (None if nothing was recorded).
    ContactParadoxError
        No contact force obeys the contact laws (Painlevé's paradox; with ``paradox="impact"``, nor does an impulse
        that makes the closed contacts stick); a SimulationError, with ``partial``.
    """
    solve_ivp = solve_ivp_function()
    system = model if isinstance(model, ContactSystem) else ContactSystem(model)
    opts = _Options(rtol, atol, gap_tolerance, rest_speed, max_events, max_step, control_samples, paradox)
    if not (math.isfinite(t0) and math.isfinite(t_final) and t_final > t0):
        raise OptionError(f"`t_final` must be a finite time after t0 = {t0}; got {t_final!r}.")
    q = _named(q0, system.coordinate_names, "q0")
    v = _named(v0, system.speed_names, "v0")
    p = _named(dict(parameters or {}), system.parameter_names, "parameters")
    u_of, declared, scan = control_function(controls, system.control_names)
    cuts, scanned = _breakpoints(u_of, declared + list(np.ravel(breakpoints if breakpoints is not None else [])), scan, t0, t_final, opts)
    out_times = np.linspace(t0, t_final, 201) if times is None else np.unique(np.asarray(times, dtype=float).ravel())
    gaps = system.evaluate(t0, q, v, u_of(t0), p)["gap"]
    if (gaps < -gap_tolerance).any():
        i = int(np.argmin(gaps))
        raise OptionError(f"The initial state penetrates contact `{system.contacts[i].name}` (gap {gaps[i]:.3e}); start with every gap ≥ 0.")
    rec = _Recorder(system)
    mode, t, hint, count = Mode(system.nc, sum(map(len, system.tangent_rows))), float(t0), {}, 0
    meta = dict(problem="simulate_events", t0=t0, t_final=t_final, rest_speed=rest_speed, gap_tolerance=gap_tolerance)
    try:
        while True:
            terms = system.evaluate(t, q, v, u_of(t), p)
            rec.row(t, q, v, u_of(t), terms, mode)
            q, v, mode = _resolve(system, t, q, v, u_of(t), p, mode, hint, opts, rec)
            rec.row(t, q, v, u_of(t), system.evaluate(t, q, v, u_of(t), p), mode)
            if t >= t_final:
                break
            # a breakpoint within round-off of t is passed (an event found at a jump located to a few ulps)
            t_end = next((b for b in cuts if b > t + 16 * np.spacing(max(abs(t), abs(b)))), t_final)
            t_stop = t_end if t_end >= t_final else np.nextafter(t_end, -np.inf)  # the controls jump at t_end
            rhs, events, kinds = _smooth(system, mode, u_of, p, t, q, v, opts)
            sel = out_times[(out_times > t) & (out_times <= t_stop)]
            step = min(max_step, scanned.step_limit(t, t_end)) if mode.stick.any() else max_step
            last = t_end >= t_final
            t_eval = (sel if sel.size else None) if last else np.append(sel[sel < t_stop], t_stop)  # a segment's end state is needed
            sol = solve_ivp(rhs, (t, t_stop), np.concatenate([q, v]), method="DOP853", rtol=rtol, atol=atol, events=events,
                            t_eval=t_eval, max_step=step)
            if sol.status == -1:
                raise SimulationError(f"The integrator failed after t = {t:.9g}: {sol.message.rstrip('.')}{_largest_force(system, mode, t, q, v, u_of(t), p)}")
            keep = slice(None) if sel.size or not last else slice(-1 if sol.status == 0 else sol.t.size, None)
            ys = np.asarray(sol.y, dtype=float).reshape(system.nq + system.nv, -1).T
            for tk, yk in zip(np.asarray(sol.t)[keep], ys[keep]):
                if last or tk in sel:
                    rec.row(tk, yk[:system.nq], yk[system.nq:], u_of(tk), system.evaluate(tk, yk[:system.nq], yk[system.nq:], u_of(tk), p), mode)
            if sol.status == 0:
                if t_end >= t_final:
                    break
                t, q, v, hint = t_end, ys[-1][:system.nq], ys[-1][system.nq:], {}
                continue
            j = min((k for k, te in enumerate(sol.t_events) if te.size), key=lambda k: sol.t_events[k][0])
            t, y = float(sol.t_events[j][0]), sol.y_events[j][0]
            q, v = y[:system.nq], y[system.nq:]
            hint = {kinds[j][0]: kinds[j][1]}
            count += 1
            if count > max_events:
                rec.row(t, q, v, u_of(t), system.evaluate(t, q, v, u_of(t), p), mode)  # where it stops
                raise SimulationError(f"More than {max_events} events by t = {t:.9g} (last: {kinds[j][1]} of `{system.contacts[kinds[j][0]].name}`); raise `rest_speed` to end an accumulation of impacts sooner, or `max_events`.")
    except SimulationError as e:  # the motion up to the stop, for a caller that compares it with something
        e.partial = rec.trajectory(p, meta) if rec.rows else None
        raise
    return rec.trajectory(p, meta)


def _largest_force(system, mode, t, q, v, u, p) -> str:
    """A clause naming the contact with the largest normal force at ``t`` (empty if none acts): a sliding contact
    nearing Painlevé's paradox has a normal force that grows without bound, which stops any integrator."""
    _, Fn, _, _ = _accelerations(system, system.evaluate(t, q, v, u, p), mode, v, t)
    i = int(np.argmax(Fn))
    if Fn[i] <= 0.0:
        return ""
    return (f" (at t = {t:.9g} the largest normal force, {Fn[i]:.3g}, is `{system.contacts[i].name}`'s, which "
            f"{'slides' if mode.slide[i] is not None else 'sticks' if mode.stick[i] else 'is closed'}: a sliding contact "
            "nearing Painlevé's paradox has a normal force that grows without bound)")


def _breakpoints(u_of, declared, scan, t0, t_final, opts):
    try:
        declared = [float(b) for b in declared]
    except (TypeError, ValueError):
        raise OptionError(f"`breakpoints` must be times (numbers); got {declared!r}.") from None
    return breakpoints(u_of, declared, scan, t0, t_final, opts.control_samples)


def _resolve(system, t, q, v, u, p, old, hint, opts, rec):
    """Impacts (velocity LCP), then the active set, stick and slip (acceleration LCP); returns ``(q, v, mode)``."""
    T = system.evaluate(t, q, v, u, p)
    try:
        Minv = constrained_inverse(T["M"], T["B"])
    except np.linalg.LinAlgError:
        raise singular_mass_matrix(system, T["M"], t) from None
    Wn, Wt, e, mu = T["Wn"], T["Wt"], system.restitution, system.friction
    closed = (T["gap"] <= opts.gap_tolerance) | old.active
    for i, what in hint.items():
        if what == "take-off":
            closed[i] = False
    yd = Wn @ v
    C = np.flatnonzero(closed)
    if C.size and (yd[C] < 0).any():
        e_eff = np.where(yd[C] <= -opts.rest_speed, e[C], 0.0)
        rows = _rows(system, T, C)
        bt = [Wt[system.tangent_rows[i]] @ v for i in C]
        kinds = ["stick" if mu[i] > 0 else "free" for i in C]
        try:
            Pn, Pt, _ = solve_contacts(Minv, rows, (1 + e_eff) * yd[C], bt, kinds, [None] * C.size)
        except LCPError as err:
            raise SimulationError(f"The impact at t = {t:.9g} on {_names(system, C)} has no solution the LCP solver reaches: {err}") from None
        v = v + Minv @ (Wn[C].T @ Pn + sum(Wt[system.tangent_rows[i]].T @ Pt[k] for k, i in enumerate(C)))
        for k, i in enumerate(C):
            if yd[i] <= -opts.rest_speed or Pn[k] > 1e-12 * max(1.0, Pn.max()):
                rec.event(t, i, "impact", yd[i], Pn[k])
        T = system.evaluate(t, q, v, u, p)  # the drifts Ẇv of the acceleration LCP are the post-impact speeds'
    yd = T["Wn"] @ v
    cand = np.flatnonzero(closed & (np.abs(yd) <= opts.rest_speed))
    mode = Mode(system.nc, T["Wt"].shape[0])
    if cand.size:
        try:
            mode = _acceleration_level(system, T, Minv, v, cand, hint, opts, t)
        except ContactParadoxError:
            stop = stopping_impulse(Minv, _rows(system, T, cand), v) if opts.paradox == "impact" else None
            if stop is None:
                raise
            v = v + stop[2]  # an impact without collision: the closed contacts stick, and the laws have forces again
            for k, i in enumerate(cand):
                if stop[0][k] > 1e-12 * max(1.0, stop[0].max()):
                    rec.event(t, i, "impact", yd[i], stop[0][k])
            T = system.evaluate(t, q, v, u, p)
            mode = _acceleration_level(system, T, Minv, v, cand, hint, opts, t)
    _record_changes(system, rec, t, old, mode, yd)
    return q, _project(system, T, v, Minv, mode), mode


def impact_impulses(system, t, q, v, u, p, gap_tolerance=1e-9, rest_speed=1e-7) -> tuple:
    """The impact the simulator resolves at a state with the pre-impact speeds ``v``: the normal impulse of each
    contact (Newton's law, all closed contacts at once, as at an event of :func:`simulate_events`) and the
    speeds after it.  A contact is closed when its gap is at most ``gap_tolerance``."""
    rec = _Recorder(system)
    opts = _Options(1e-12, 1e-12, gap_tolerance, rest_speed, 1, np.inf, 0)
    _, after, _ = _resolve(system, t, np.asarray(q, float), np.asarray(v, float), u, p, Mode(system.nc, sum(map(len, system.tangent_rows))),
                           {}, opts, rec)
    impulses = np.zeros(system.nc)
    for e in rec.events:
        if e["kind"] == "impact":
            impulses[[c.name for c in system.contacts].index(e["contact"])] = e["impulse"]
    return impulses, after


def _record_changes(system, rec, t, old, mode, yd):
    for i in range(system.nc):
        before, after = old.describe(i), mode.describe(i)
        if old.active[i] and not mode.active[i]:
            rec.event(t, i, "take-off", yd[i], 0.0)
        elif mode.active[i] and not old.active[i]:
            rec.event(t, i, "closed", yd[i], 0.0)
        elif old.active[i] and system.friction[i] > 0 and before != after and after in ("stick", "slip"):
            rec.event(t, i, after, 0.0, 0.0)


def _rows(system, T, idx):
    return ContactRows(T["Wn"][idx], [T["Wt"][system.tangent_rows[i]] for i in idx], system.friction[idx],
                       [system.cone[i] for i in idx], [system.facets[i] for i in idx])


def _names(system, idx):
    return ", ".join(f"`{system.contacts[i].name}`" for i in idx)


def _acceleration_level(system, T, Minv, v, cand, hint, opts, t):
    """The acceleration-level LCP on the candidates of ``I₂``: which stay, which stick, which slip."""
    Wn, Wt, mu = T["Wn"], T["Wt"], system.friction
    a0, _ = mode_forces(T["M"], T["f"], T["B"], T["B"], T["drift_b"], np.zeros(system.nb))
    kinds, slide = [], []
    for i in cand:
        s = Wt[system.tangent_rows[i]] @ v
        sliding = mu[i] > 0 and np.linalg.norm(s) > opts.rest_speed
        kinds.append("slide" if sliding else ("stick" if mu[i] > 0 else "free"))
        slide.append(slide_direction(s, system.cone[i], system.facets[i]) if sliding else None)
    bn = Wn[cand] @ a0 + T["drift_n"][cand]
    bt = [Wt[system.tangent_rows[i]] @ a0 + T["drift_t"][system.tangent_rows[i]] for i in cand]
    rows = _rows(system, T, cand)
    try:
        Fn, Ft, slip = solve_contacts(Minv, rows, bn, bt, kinds, slide)
    except LCPError:
        Fn, Ft, slip, slide = _other_side(system, T, Minv, v, cand, rows, bn, bt, kinds, slide, opts, t)
    a = a0 + Minv @ (Wn[cand].T @ Fn + sum(Wt[system.tangent_rows[i]].T @ Ft[k] for k, i in enumerate(cand)))
    ydd = Wn[cand] @ a + T["drift_n"][cand]
    scale = 1e-9 * max(1.0, np.abs(T["f"]).max(initial=0.0))
    mode, onset = Mode(system.nc, Wt.shape[0]), {}
    for k, i in enumerate(cand):
        if not (Fn[k] > scale or ydd[k] <= scale):  # neither pushing nor undetermined (F = 0, ÿ = 0): takes off
            continue
        mode.active[i], mode.ref_n[i] = True, Fn[k]
        mode.ref_t[system.tangent_rows[i]] = Ft[k]
        if kinds[k] == "stick" and (slip[k] > scale or hint.get(i) == "slip"):
            mode.slide[i], pair = onset_mode(system, i, Ft[k])
            if pair is not None:
                onset[i] = pair
        elif kinds[k] == "stick":
            mode.stick[i] = True
        else:
            mode.slide[i] = slide[k]
        mode.follow[i] = mode.slide[i] is not None and system.cone[i] == "circular" and Ft[k].size == 2
    # a contact that starts to slide from rest has no speed to say which bisector it is on: only its force says (onset)
    moving = [i for k, i in enumerate(cand) if mode.slide[i] is not None and not mode.follow[i] and (kinds[k] == "slide" or i in onset)]
    slide_on_edges(system, T, mode, moving, v, hint, 100 * opts.atol, onset)
    central_forces(system, T, mode, v, scale)
    return mode


def _other_side(system, T, Minv, v, cand, rows, bn, bt, kinds, slide, opts, t):
    """The contact LCP again where a polygon contact slides on a bisector of two vertices: either vertex, or the
    side between them, dissipates most (``slide_on_edges`` then chooses), and a light leg's foot can have forces
    that obey the laws with one and none with the other.  Raises Painlevé's paradox where none has any."""
    ties = []
    for k, i in enumerate(cand):
        s = T["Wt"][system.tangent_rows[i]] @ v
        if kinds[k] != "slide" or s.size != 2 or system.cone[i] == "circular":
            continue
        pair = bisector_vertices(system, i, s, 100 * opts.atol)
        if pair is not None:
            ties.append((k, pair[1], 0.5 * (pair[0] + pair[1])))
    for choice in (1, 2):
        trial = list(slide)
        for tie in ties:
            trial[tie[0]] = tie[choice]
        try:
            return (*solve_contacts(Minv, rows, bn, bt, kinds, trial), trial)
        except LCPError:
            continue
    raise _paradox(system, cand, kinds, t) from None


def _accelerations(system, T, mode, v, t):
    """:func:`smooth_accelerations` at time ``t``, a singular mass matrix reported in one sentence."""
    try:
        return smooth_accelerations(system, T, mode, v)
    except np.linalg.LinAlgError:
        raise singular_mass_matrix(system, T["M"], t) from None


def singular_mass_matrix(system, M, t):
    """The error of a mass matrix that cannot be inverted: it names the speeds along its null direction, where the
    model's coordinates are singular (Euler angles at ±90° pitch, a massless link)."""
    _, sv, Vt = np.linalg.svd(M)
    null = np.abs(Vt[-1])
    names = [system.speed_names[k] for k in np.flatnonzero(null >= 0.1 * null.max())]
    return SimulationError(f"The mass matrix is singular at t = {t:.9g} along {', '.join(f'`{n}`' for n in names)} (smallest singular value "
                           f"{sv[-1]:.1e} of {sv[0]:.1e}): the model's coordinates are singular there (e.g. Euler angles at ±90° pitch), "
                           "so no motion can be integrated through it.")


def _paradox(system, cand, kinds, t):
    sliding = [i for k, i in enumerate(cand) if kinds[k] == "slide"] or list(cand)
    c = system.contacts[sliding[0]]
    return ContactParadoxError(
        f"Contact `{c.name}` slides with friction μ = {c.friction:g} at t = {t:.9g} where no contact force obeys "
        "Signorini's and Coulomb's laws (Painlevé's paradox: the friction of the sliding contact would pull it into "
        "the surface faster than any normal force can push); an impulse is needed (an impact without collision), "
        "which `paradox=\"impact\"` applies where one that makes the contacts stick lies in their friction cones.")


def _project(system, T, v, Minv, mode):
    """Remove the round-off normal (and sticking tangential) speed of the active contacts, the speed off the bisector
    of those sliding along one, and the constraints' speed (an M-orthogonal projection, minimum-norm where the rows
    are redundant)."""
    A = np.flatnonzero(mode.active)
    S = np.concatenate([system.tangent_rows[i] for i in A if mode.stick[i]] + [np.zeros(0, int)]).astype(int)
    E = edge_rows(system, T, mode)
    C = np.vstack([T["Wn"][A], T["Wt"][S], E, T["B"]])
    c = np.concatenate([np.zeros(A.size + S.size + E.shape[0]), T["psi"] - T["B"] @ v])
    return project_speeds(v, np.linalg.inv(T["M"]), C, c)


def _smooth(system, mode, u_of, p, t0, q0, v0, opts):
    """Right-hand side and root functions of the smooth dynamics of ``mode``, starting at ``(t0, q0, v0)``.

    An open contact that starts closed (it just took off or bounced) has a gap
    of round-off size and sign at ``t0``; its root function is the difference
    quotient ``(y − y₀)/(t − t₀)`` (or ``/(t − t₀)²`` if it leaves with zero
    speed), positive from the start, so a return within the integrator's
    first step is not missed by a sign test.
    """
    cache, nq = {}, system.nq
    T0 = system.evaluate(t0, q0, v0, u_of(t0), p)
    a0, F0, _, _ = smooth_accelerations(system, T0, mode, v0)
    # A contact kept with zero force (F = 0, ÿ = 0: Siconos' undetermined case) takes off only once its
    # force falls below −tolerance; the others at F = 0 exactly.
    offset = np.where(F0 <= 1e-9 * max(1.0, np.abs(T0["f"]).max(initial=0.0)), 1.0, 0.0)
    y0, yd0 = T0["gap"], T0["Wn"] @ v0
    ydd0 = T0["Wn"] @ a0 + T0["drift_n"]

    def solve(t, y):
        key = (t, y.tobytes())
        if key not in cache:
            cache.clear()
            T = system.evaluate(t, y[:nq], y[nq:], u_of(t), p)
            a, Fn, Ft, _ = _accelerations(system, T, mode, y[nq:], t)
            cache[key] = (T, a, Fn, Ft, 1e-9 * max(1.0, np.abs(T["f"]).max(initial=0.0)))
        return cache[key]

    def rhs(t, y):
        T, a, *_ = solve(t, y)
        return np.concatenate([T["qdot"], a])

    events, kinds = [], []

    def add(fun, i, kind):
        fun.terminal, fun.direction = True, -1
        events.append(fun)
        kinds.append((i, kind))

    for i in range(system.nc):
        if not mode.active[i] and y0[i] <= opts.gap_tolerance:
            power = 1 if yd0[i] > opts.rest_speed else 2
            start = yd0[i] if power == 1 else 0.5 * ydd0[i]
            add(lambda t, y, i=i, k=power, s=start: (solve(t, y)[0]["gap"][i] - y0[i]) / (t - t0) ** k if t > t0 else s, i, "impact")
        elif not mode.active[i]:
            add(lambda t, y, i=i: solve(t, y)[0]["gap"][i], i, "impact")
        else:
            add(lambda t, y, i=i: solve(t, y)[2][i] + offset[i] * solve(t, y)[4], i, "take-off")
            tangential_roots(system, mode, i, T0, v0, solve, add)
    return rhs, events, kinds


class _Recorder:
    def __init__(self, system):
        self.system, self.rows, self.events = system, [], []

    def row(self, t, q, v, u, terms, mode):
        _, Fn, Ft, _ = _accelerations(self.system, terms, mode, v, t)
        self.rows.append(np.concatenate([[t], q, v, u, Fn, Ft]))

    def event(self, t, i, kind, speed, impulse):
        self.events.append(dict(time=float(t), contact=self.system.contacts[i].name, kind=kind,
                                speed=float(speed), impulse=float(impulse)))

    def trajectory(self, p, meta):
        s = self.system
        data = np.array(self.rows)
        names = s.coordinate_names + s.speed_names + s.control_names
        kinds = ["state"] * (s.nq + s.nv) + ["control"] * len(s.control_names)
        names += [f"{c.name}.normal_force" for c in s.contacts]
        for c in s.contacts:
            names += [f"{c.name}.friction_force"] if c.num_tangents == 1 else [f"{c.name}.friction_force_{k + 1}" for k in range(c.num_tangents)]
        kinds += ["multiplier"] * (len(names) - len(kinds))
        frictionless = {n for c, mu in zip(s.contacts, s.friction) if mu == 0 for n in names if n.startswith(f"{c.name}.friction_force")}
        keep = [k for k, n in enumerate(names) if n not in frictionless]
        meta = dict(meta, events=self.events)
        return Trajectory(data[:, 0], {names[k]: data[:, 1 + k] for k in keep}, {names[k]: kinds[k] for k in keep},
                          dict(zip(s.parameter_names, map(float, p))), meta)


__all__ = ["simulate_events", "resimulate_phases", "format_resimulation", "ContactSystem", "Mode", "SimulationError",
           "ContactParadoxError", "contact_lcp", "impact_impulses", "smooth_accelerations", "EVENT_KINDS"]
