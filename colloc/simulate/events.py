"""Event-driven simulation of multibody models with unilateral contacts (Siconos' scheme).

Between events the *bilateral smooth dynamics* of the active set ``I₂`` is
integrated (scipy's ``solve_ivp``, DOP853, with root-finding):

    M(q) a = f(t, q, v, u) + Σ_{i∈I₂} H_iᵀ F_i,    W_{n,i} a + Ẇ_{n,i} v = 0  (i ∈ I₂),

with ``f = τ − c``; a sticking frictional contact adds ``W_{t,i} a + Ẇ_{t,i} v = 0``
and its tangential force, a sliding one the force ``−μ σ_i F_{n,i}`` along
``W_t`` (``σ_i`` the sliding direction).  The roots sought are the gaps of the
open contacts, the normal forces of the active ones (take-off), the cone
margins ``μF_n − |F_t|`` of the sticking ones (start of slip) and the sliding
speeds ``σ_i ṡ_i`` of the sliding ones (stop).  At every event (Acary &
Brogliato 2008, §8; Siconos' ``EventDriven``, see the background note):

1. ``I₁`` = closed contacts (gap ≤ ``gap_tolerance`` or active).  If one of them
   approaches (``ẏ < 0``), the **velocity-level LCP** with Newton's law for all
   of ``I₁`` at once: ``ẏ⁺ = ẏ⁻ + W_n M⁻¹ Wᵀ P``, ``0 ≤ ẏ⁺ + e ẏ⁻ ⊥ P_n ≥ 0``
   (with friction: the Coulomb cone's two facets, below).  A contact that
   arrives slower than ``rest_speed`` takes ``e = 0``: the accumulation of
   impacts (Zeno) ends with the contact at rest instead of stalling.
2. ``I₂`` candidates: closed contacts with ``|ẏ| ≤ rest_speed``.  The
   **acceleration-level LCP** ``0 ≤ ÿ ⊥ F_n ≥ 0`` decides which stay (and
   whether a frictional one sticks or slips); the others take off.

Friction (planar Coulomb, facets ``±W_t``): unknowns ``P_n, β⁺, β⁻, λ`` with
``P_t = β⁺ − β⁻``::

    0 ≤ ẏ_n⁺ + e ẏ_n⁻           ⊥ P_n ≥ 0
    0 ≤  ṡ⁺ + λ                 ⊥ β⁺ ≥ 0
    0 ≤ −ṡ⁺ + λ                 ⊥ β⁻ ≥ 0
    0 ≤ μ P_n − β⁺ − β⁻         ⊥ λ ≥ 0

(Stewart & Trinkle, IJNME 39 (1996); Anitescu & Potra, Nonlinear Dyn. 14
(1997)); the same form at acceleration level with forces.  It is not
symmetric: Lemke's method solves it; the frictionless LCP is symmetric
positive semidefinite and is solved as a QP (:mod:`colloc.simulate.lcp`).

Legend: ``q, v, a`` coordinates, speeds, accelerations; ``y`` gaps, ``ẏ``
normal speeds, ``s`` tangential positions; ``W_n, W_t`` contact Jacobians;
``F`` forces, ``P`` impulses; ``e`` restitution, ``mu`` friction.
"""
from __future__ import annotations

import math

import casadi as ca
import numpy as np

from ..model.contact import contacts_of
from ..errors import did_you_mean, ModelError, OptionError, SimulationError
from .lcp import solve_lcp
from ..model.component import TIME, Model
from ..model.multibody import Multibody
from ..model.named_values import named_vector as _named
from .resimulation import format_resimulation, resimulate_phases, solve_ivp_function
from ..results.trajectory import Trajectory

EVENT_KINDS = ("impact", "closed", "take-off", "stick", "slip")


class ContactSystem:
    """The numeric terms of a model whose states are multibody coordinates and speeds, with its contacts.

    Parameters
    ----------
    model : Multibody, list of components or Model
        Every state must belong to a :class:`Multibody`; bilateral kinematic
        constraints are not supported.

    Attributes
    ----------
    contacts : list of Contact
    coordinate_names, speed_names, control_names, parameter_names : list of str
    """

    def __init__(self, model):
        model = model if isinstance(model, Model) else Model(model if isinstance(model, (list, tuple)) else [model])
        bodies = [c for c in model.components if isinstance(c, Multibody)]
        owned = {model.lookup(s).name for b in bodies for s in b.coordinates + b.speeds}
        for v in model.states:
            if v.name not in owned:
                raise ModelError(f"State `{v.name}` does not belong to a Multibody; the event-driven simulator integrates multibody coordinates and speeds only.")
        if model.constraints:
            raise ModelError(f"Constraint `{model.constraints[0].name}` is bilateral; the event-driven simulator supports unconstrained bodies with unilateral contacts only.")
        self.model, self.bodies = model, bodies
        self.contacts = [c for b in bodies for c in contacts_of(b)]
        if not self.contacts:
            raise ModelError("The model declares no contact; declare one with `body.contact(name, gap, ...)`.")
        q = ca.vertcat(*[b.q for b in bodies])
        v = ca.vertcat(*[b.v for b in bodies])
        N = ca.diagcat(*[b.kinematic_matrix for b in bodies])
        eqs = [b.equations() for b in bodies]
        M = ca.diagcat(*[e.mass_matrix for e in eqs])
        f = ca.vertcat(*[e.generalized_force - e.bias for e in eqs])
        gap = ca.vertcat(*[c.gap for c in self.contacts])
        tangent = ca.vertcat(*[c.tangent if c.tangent is not None else ca.SX(0) for c in self.contacts])
        Wn = ca.mtimes(ca.jacobian(gap, q), N)
        Wt = ca.mtimes(ca.jacobian(tangent, q), N)
        qdot = ca.mtimes(N, v)
        drift_n = ca.jtimes(ca.mtimes(Wn, v), q, qdot)
        drift_t = ca.jtimes(ca.mtimes(Wt, v), q, qdot)
        u, p = model.vector("control"), model.vector("parameter")
        outs = [M, f, qdot, gap, Wn, Wt, drift_n, drift_t, tangent]
        self.terms = ca.Function("contact_terms", [TIME, q, v, u, p], outs)
        # One flat input and output: each CasADi call from Python costs per argument, and this runs in the RHS.
        self._flat = ca.Function("contact_terms_flat", [ca.vertcat(TIME, q, v, u, p)], [ca.vertcat(*[ca.vec(o) for o in outs])])
        self._shapes = [o.shape for o in outs]
        self.nq, self.nv, self.nc = int(q.numel()), int(v.numel()), len(self.contacts)
        self.coordinate_names = [model.lookup(s).name for b in bodies for s in b.coordinates]
        self.speed_names = [model.lookup(s).name for b in bodies for s in b.speeds]
        self.control_names = [x.name for x in model.controls]
        self.parameter_names = [x.name for x in model.parameters]
        self.restitution = np.array([c.restitution for c in self.contacts])
        self.friction = np.array([c.friction for c in self.contacts])

    def evaluate(self, t, q, v, u, p):
        """``dict(M, f, qdot, gap, Wn, Wt, drift_n, drift_t, tangent)`` as numpy arrays at one point."""
        flat = self._flat(np.concatenate([[t], q, v, u, p])).full().ravel()
        d, start = {}, 0
        for key, (r, c) in zip(("M", "f", "qdot", "gap", "Wn", "Wt", "drift_n", "drift_t", "tangent"), self._shapes):
            block = flat[start:start + r * c]
            d[key] = block.reshape((r, c), order="F") if key in ("M", "Wn", "Wt") else block
            start += r * c
        return d


class Mode:
    """The smooth mode: active contacts (``I₂``), and for each its tangential state.

    ``sigma[i]``: 0 sticking (or frictionless), ±1 sliding in the direction of ``±W_t``.
    """

    def __init__(self, nc):
        self.active = np.zeros(nc, dtype=bool)
        self.stick = np.zeros(nc, dtype=bool)
        self.sigma = np.zeros(nc)

    def describe(self, i):
        if not self.active[i]:
            return "open"
        return "stick" if self.stick[i] else ("slip" if self.sigma[i] else "closed")


def smooth_accelerations(terms, mode, friction):
    """Accelerations and contact forces of the bilateral smooth dynamics of ``mode``.

    Returns ``(a (nv,), Fn (nc,), Ft (nc,))``; forces of inactive contacts are 0.
    """
    M, f, Wn, Wt = terms["M"], terms["f"], terms["Wn"], terms["Wt"]
    nc = Wn.shape[0]
    if not mode.active.any():
        return np.linalg.solve(M, f), np.zeros(nc), np.zeros(nc)
    A = np.flatnonzero(mode.active)
    S = np.flatnonzero(mode.active & mode.stick)
    H = np.vstack([Wn[A] - (friction[A] * mode.sigma[A])[:, None] * Wt[A], Wt[S]])
    C = np.vstack([Wn[A], Wt[S]])
    d = np.concatenate([terms["drift_n"][A], terms["drift_t"][S]])
    nv, m = M.shape[0], C.shape[0]
    K = np.zeros((nv + m, nv + m))
    K[:nv, :nv], K[:nv, nv:], K[nv:, :nv] = M, -H.T, C
    sol = np.linalg.solve(K, np.concatenate([f, -d]))
    Fn, Ft = np.zeros(nc), np.zeros(nc)
    Fn[A] = sol[nv:nv + A.size]
    Ft[S] = sol[nv + A.size:]
    Ft[A] -= friction[A] * mode.sigma[A] * Fn[A]
    return sol[:nv], Fn, Ft


def contact_lcp(Minv, Wn, Wt, bn, bt, mu, sigma, stick):
    """Build and solve the contact LCP of the contacts given (rows of ``Wn``, ``Wt``).

    ``bn``, ``bt``: normal and tangential terms without contact forces (at
    velocity level ``(1 + e) ẏ⁻`` and ``ṡ⁻``; at acceleration level ``ÿ`` and
    ``s̈`` of the free motion).  ``sigma[i] ≠ 0`` makes contact i slide (force
    ``−μ σ F_n`` along ``W_t``, no tangential unknowns); ``stick[i]`` gives it
    the cone facets; otherwise it is frictionless.

    Returns ``(Pn, Pt, slip_rate)``: normal and tangential force (or impulse)
    and ``λ`` (the sliding rate; > 0 means the contact slides).
    """
    k = Wn.shape[0]
    F = np.flatnonzero(stick & (mu > 0))
    cols_n = Wn - (mu * sigma)[:, None] * Wt  # generalized direction of each normal unknown
    G = np.vstack([cols_n, Wt[F], -Wt[F]])  # force directions of the unknowns (Pn, β⁺, β⁻)
    Dn = Wn @ Minv @ G.T
    Dt = Wt[F] @ Minv @ G.T
    nf = F.size
    A = np.zeros((k + 3 * nf, k + 3 * nf))
    b = np.zeros(k + 3 * nf)
    A[:k, :k + 2 * nf], b[:k] = Dn, bn
    if nf:
        e = np.eye(nf)
        A[k:k + nf, :k + 2 * nf], A[k:k + nf, k + 2 * nf:] = Dt, e
        A[k + nf:k + 2 * nf, :k + 2 * nf], A[k + nf:k + 2 * nf, k + 2 * nf:] = -Dt, e
        A[k + 2 * nf:, F] = np.diag(mu[F])
        A[k + 2 * nf:, k:k + nf], A[k + 2 * nf:, k + nf:k + 2 * nf] = -e, -e
        b[k:k + nf], b[k + nf:k + 2 * nf] = bt[F], -bt[F]
    z = solve_lcp(A, b)
    Pn = z[:k]
    Pt = -mu * sigma * Pn
    slip = np.zeros(k)
    if nf:
        Pt[F] = z[k:k + nf] - z[k + nf:k + 2 * nf]
        slip[F] = z[k + 2 * nf:]
    return Pn, Pt, slip


class _Options:
    def __init__(self, rtol, atol, gap_tolerance, rest_speed, max_events, max_step):
        for name, val in (("rtol", rtol), ("atol", atol), ("gap_tolerance", gap_tolerance), ("rest_speed", rest_speed)):
            if not (isinstance(val, (int, float)) and math.isfinite(val) and val > 0):
                raise OptionError(f"`{name}` must be a positive finite number; got {val!r}.")
        if not (isinstance(max_events, int) and max_events > 0):
            raise OptionError(f"`max_events` must be a positive integer; got {max_events!r}.")
        if not (max_step > 0):
            raise OptionError(f"`max_step` must be positive; got {max_step!r}.")
        self.rtol, self.atol, self.gap_tolerance, self.rest_speed = rtol, atol, gap_tolerance, rest_speed
        self.max_events, self.max_step = max_events, max_step


def simulate_events(model, t_final, q0, v0, controls=None, parameters=None, t0=0.0, times=None,
                    rtol=1e-12, atol=1e-12, gap_tolerance=1e-9, rest_speed=1e-7, max_events=10000,
                    max_step=np.inf) -> Trajectory:
    """Simulate a multibody model with unilateral contacts, event by event.

    The algorithm is Siconos' event-driven scheme for Lagrangian systems with
    Newton impacts (module docstring): smooth dynamics of the active set with
    root-finding, the velocity-level LCP at impacts (all closed contacts at
    once), the acceleration-level LCP for take-off, stick and slip.

    Parameters
    ----------
    model : Multibody, list of components, Model or ContactSystem
        Bodies with contacts declared by :meth:`Multibody.contact`.
    t_final : float
    q0, v0 : array_like, shapes (nq,), (nv,), or dict {coordinate or speed: value}
        Initial state; gaps must be ≥ −``gap_tolerance``.
    controls : None, callable or dict, optional
        ``u(t) -> array (nu,)``, or ``{control: number or callable u(t)}``; default 0.
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
        Largest integrator step.  While a contact sticks the state may not change at all, so the
        step-size control cannot see the controls push it out of the friction cone: with controls
        that vary, give at most their sampling interval, or a slip can be stepped over.

    Returns
    -------
    Trajectory
        Columns: coordinates and speeds (``state``), controls, and per contact
        ``<contact>.normal_force`` and, with friction, ``<contact>.friction_force``
        (``multiplier``).  ``metadata["events"]`` lists ``{time, contact, kind,
        speed, impulse}`` with kind one of ``impact, closed, take-off, stick, slip``
        (``speed`` the normal speed before an impact).

    Raises
    ------
    SimulationError
        More than ``max_events`` events, or the integrator failed.
    """
    solve_ivp = solve_ivp_function()
    system = model if isinstance(model, ContactSystem) else ContactSystem(model)
    opts = _Options(rtol, atol, gap_tolerance, rest_speed, max_events, max_step)
    if not (math.isfinite(t0) and math.isfinite(t_final) and t_final > t0):
        raise OptionError(f"`t_final` must be a finite time after t0 = {t0}; got {t_final!r}.")
    q = _named(q0, system.coordinate_names, "q0")
    v = _named(v0, system.speed_names, "v0")
    p = _named(dict(parameters or {}), system.parameter_names, "parameters")
    u_of = _control_function(controls, system.control_names)
    out_times = np.linspace(t0, t_final, 201) if times is None else np.sort(np.asarray(times, dtype=float).ravel())
    gaps = system.evaluate(t0, q, v, u_of(t0), p)["gap"]
    if (gaps < -gap_tolerance).any():
        i = int(np.argmin(gaps))
        raise OptionError(f"The initial state penetrates contact `{system.contacts[i].name}` (gap {gaps[i]:.3e}); start with every gap ≥ 0.")
    rec = _Recorder(system)
    mode, t, hint, count = Mode(system.nc), float(t0), {}, 0
    while True:
        terms = system.evaluate(t, q, v, u_of(t), p)
        rec.row(t, q, v, u_of(t), terms, mode)
        q, v, mode = _resolve(system, t, q, v, u_of(t), p, mode, hint, opts, rec)
        rec.row(t, q, v, u_of(t), system.evaluate(t, q, v, u_of(t), p), mode)
        if t >= t_final:
            break
        rhs, events, kinds = _smooth(system, mode, u_of, p, t, q, v, opts)
        sel = out_times[(out_times > t) & (out_times <= t_final)]
        sol = solve_ivp(rhs, (t, t_final), np.concatenate([q, v]), method="DOP853", rtol=rtol, atol=atol,
                        events=events, t_eval=sel if sel.size else None, max_step=max_step)
        if sol.status == -1:
            raise SimulationError(f"The integrator failed after t = {t:.9g}: {sol.message}")
        keep = slice(None) if sel.size else slice(-1 if sol.status == 0 else sol.t.size, None)
        ys = np.asarray(sol.y, dtype=float).reshape(system.nq + system.nv, -1).T
        for tk, yk in zip(np.asarray(sol.t)[keep], ys[keep]):
            rec.row(tk, yk[:system.nq], yk[system.nq:], u_of(tk), system.evaluate(tk, yk[:system.nq], yk[system.nq:], u_of(tk), p), mode)
        if sol.status == 0:
            break
        j = min((k for k, te in enumerate(sol.t_events) if te.size), key=lambda k: sol.t_events[k][0])
        t, y = float(sol.t_events[j][0]), sol.y_events[j][0]
        q, v = y[:system.nq], y[system.nq:]
        hint = {kinds[j][0]: kinds[j][1]}
        count += 1
        if count > max_events:
            raise SimulationError(f"More than {max_events} events by t = {t:.9g} (last: {kinds[j][1]} of `{system.contacts[kinds[j][0]].name}`); raise `rest_speed` to end an accumulation of impacts sooner, or `max_events`.")
    return rec.trajectory(p, dict(problem="simulate_events", t0=t0, t_final=t_final, rest_speed=rest_speed, gap_tolerance=gap_tolerance))


def _resolve(system, t, q, v, u, p, old, hint, opts, rec):
    """Impacts (velocity LCP), then the active set, stick and slip (acceleration LCP); returns ``(q, v, mode)``."""
    T = system.evaluate(t, q, v, u, p)
    Minv = np.linalg.inv(T["M"])
    Wn, Wt, e, mu = T["Wn"], T["Wt"], system.restitution, system.friction
    closed = (T["gap"] <= opts.gap_tolerance) | old.active
    for i, what in hint.items():
        if what == "take-off":
            closed[i] = False
    yd = Wn @ v
    C = np.flatnonzero(closed)
    if C.size and (yd[C] < 0).any():
        e_eff = np.where(yd[C] <= -opts.rest_speed, e[C], 0.0)
        Pn, Pt, _ = contact_lcp(Minv, Wn[C], Wt[C], (1 + e_eff) * yd[C], Wt[C] @ v, mu[C], np.zeros(C.size), np.ones(C.size, bool))
        v = v + Minv @ (Wn[C].T @ Pn + Wt[C].T @ Pt)
        for k, i in enumerate(C):
            if yd[i] <= -opts.rest_speed or Pn[k] > 1e-12 * max(1.0, Pn.max()):
                rec.event(t, i, "impact", yd[i], Pn[k])
        T = system.evaluate(t, q, v, u, p)  # the drifts Ẇv of the acceleration LCP are the post-impact speeds'
    yd = Wn @ v
    cand = np.flatnonzero(closed & (np.abs(yd) <= opts.rest_speed))
    mode = Mode(system.nc)
    if cand.size:
        mode = _acceleration_level(system, T, Minv, v, cand, old, hint, opts)
    for i in range(system.nc):
        before, after = old.describe(i), mode.describe(i)
        if old.active[i] and not mode.active[i]:
            rec.event(t, i, "take-off", yd[i], 0.0)
        elif mode.active[i] and not old.active[i]:
            rec.event(t, i, "closed", yd[i], 0.0)
        elif old.active[i] and mu[i] > 0 and before != after and after in ("stick", "slip"):
            rec.event(t, i, after, 0.0, 0.0)
    return q, _project(v, Minv, Wn, Wt, mode), mode


def _acceleration_level(system, T, Minv, v, cand, old, hint, opts):
    """The acceleration-level LCP on the candidates of ``I₂``: which stay, which stick, which slip."""
    Wn, Wt, mu = T["Wn"], T["Wt"], system.friction
    s = Wt @ v
    a0 = Minv @ T["f"]
    sliding = (mu[cand] > 0) & (np.abs(s[cand]) > opts.rest_speed)
    sigma = np.where(sliding, np.sign(s[cand]), 0.0)
    stick = (mu[cand] > 0) & ~sliding
    bn = Wn[cand] @ a0 + T["drift_n"][cand]
    bt = Wt[cand] @ a0 + T["drift_t"][cand]
    Fn, Ft, slip = contact_lcp(Minv, Wn[cand], Wt[cand], bn, bt, mu[cand], sigma, stick)
    a = a0 + Minv @ (Wn[cand].T @ Fn + Wt[cand].T @ Ft)
    ydd = Wn[cand] @ a + T["drift_n"][cand]
    scale = 1e-9 * max(1.0, np.abs(T["f"]).max(initial=0.0))
    mode = Mode(system.nc)
    for k, i in enumerate(cand):
        if Fn[k] > scale or ydd[k] <= scale:  # pushing, or undetermined (F = 0, ÿ = 0): stays closed
            mode.active[i] = True
            if stick[k]:
                forced = hint.get(i) == "slip"
                if slip[k] > scale or forced:
                    mode.sigma[i] = -np.sign(Ft[k]) if Ft[k] != 0 else 1.0
                else:
                    mode.stick[i] = True
            else:
                mode.sigma[i] = sigma[k]
    return mode


def _project(v, Minv, Wn, Wt, mode):
    """Remove the round-off normal (and sticking tangential) speed of the active contacts (an M-orthogonal projection)."""
    C = np.vstack([Wn[mode.active], Wt[mode.active & mode.stick]])
    if not C.shape[0]:
        return v
    return v - Minv @ C.T @ np.linalg.solve(C @ Minv @ C.T, C @ v)


def _smooth(system, mode, u_of, p, t0, q0, v0, opts):
    """Right-hand side and root functions of the smooth dynamics of ``mode``, starting at ``(t0, q0, v0)``.

    An open contact that starts closed (it just took off or bounced) has a gap
    of round-off size and sign at ``t0``; its root function is the difference
    quotient ``(y − y₀)/(t − t₀)`` (or ``/(t − t₀)²`` if it leaves with zero
    speed), positive from the start, so a return within the integrator's
    first step is not missed by a sign test.
    """
    cache = {}
    mu = system.friction
    T0 = system.evaluate(t0, q0, v0, u_of(t0), p)
    a0, F0, _ = smooth_accelerations(T0, mode, mu)
    # A contact kept with zero force (F = 0, ÿ = 0: Siconos' undetermined case) takes off only once its
    # force falls below −tolerance; the others at F = 0 exactly.
    offset = np.where(F0 <= 1e-9 * max(1.0, np.abs(T0["f"]).max(initial=0.0)), 1.0, 0.0)
    y0, yd0 = T0["gap"], T0["Wn"] @ v0
    ydd0 = T0["Wn"] @ a0 + T0["drift_n"]

    def solve(t, y):
        key = (t, y.tobytes())
        if key not in cache:
            cache.clear()
            T = system.evaluate(t, y[:system.nq], y[system.nq:], u_of(t), p)
            a, Fn, Ft = smooth_accelerations(T, mode, mu)
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
            continue
        if not mode.active[i]:
            add(lambda t, y, i=i: solve(t, y)[0]["gap"][i], i, "impact")
            continue
        add(lambda t, y, i=i: solve(t, y)[2][i] + offset[i] * solve(t, y)[4], i, "take-off")
        if mode.stick[i] and mu[i] > 0:
            add(lambda t, y, i=i: mu[i] * solve(t, y)[2][i] - abs(solve(t, y)[3][i]), i, "slip")
        elif mode.sigma[i]:
            add(lambda t, y, i=i: mode.sigma[i] * (solve(t, y)[0]["Wt"][i] @ y[system.nq:]), i, "stop")
    return rhs, events, kinds


class _Recorder:
    def __init__(self, system):
        self.system, self.rows, self.events = system, [], []

    def row(self, t, q, v, u, terms, mode):
        _, Fn, Ft = smooth_accelerations(terms, mode, self.system.friction)
        self.rows.append(np.concatenate([[t], q, v, u, Fn, Ft]))

    def event(self, t, i, kind, speed, impulse):
        self.events.append(dict(time=float(t), contact=self.system.contacts[i].name, kind=kind,
                                speed=float(speed), impulse=float(impulse)))

    def trajectory(self, p, meta):
        s = self.system
        data = np.array(self.rows)
        names = s.coordinate_names + s.speed_names + s.control_names
        kinds = ["state"] * (s.nq + s.nv) + ["control"] * len(s.control_names)
        names += [f"{c.name}.normal_force" for c in s.contacts] + [f"{c.name}.friction_force" for c in s.contacts]
        kinds += ["multiplier"] * (2 * s.nc)
        cols = {n: data[:, 1 + k] for k, n in enumerate(names)}
        keep = [n for k, n in enumerate(names) if not (n.endswith(".friction_force") and s.friction[k - len(names) + s.nc] == 0)]
        meta = dict(meta, events=self.events)
        return Trajectory(data[:, 0], {n: cols[n] for n in keep}, {n: kinds[names.index(n)] for n in keep},
                          dict(zip(s.parameter_names, map(float, p))), meta)


def _control_function(controls, names):
    nu = len(names)
    if controls is None:
        return lambda t: np.zeros(nu)
    if callable(controls):
        def u_of(t):
            u = np.asarray(controls(t), dtype=float).ravel()
            if u.size != nu:
                raise OptionError(f"`controls(t)` must return {nu} values ({', '.join(names)}); got {u.size}.")
            return u
        return u_of
    if isinstance(controls, dict):
        parts = {}
        for k, val in controls.items():
            name = k if isinstance(k, str) else k.name()
            if name not in names:
                raise OptionError(f"`{name}` in `controls` is not a control of the model.{did_you_mean(name, names)}")
            parts[name] = val if callable(val) else (lambda t, c=float(val): c)
        return lambda t: np.array([float(parts[n](t)) if n in parts else 0.0 for n in names])
    raise OptionError(f"`controls` must be None, a function u(t) or a dict {{control: value or function}}; got {type(controls).__name__}.")


__all__ = ["simulate_events", "resimulate_phases", "format_resimulation", "ContactSystem", "Mode", "SimulationError", "contact_lcp", "smooth_accelerations", "EVENT_KINDS"]
