"""The numeric terms of a multibody model with contacts and bilateral constraints, and its smooth modes.

A :class:`ContactSystem` evaluates at one point ``(t, q, v, u, p)`` the mass
matrix, the forces ``f = τ − c``, the gaps, the contact rows ``W_n`` (one per
contact) and ``W_t`` (one or two per frictional contact, stacked) with their
drifts ``Ẇv``, and the bilateral rows ``B`` of the kinematic constraints
(``ψ(q, v, t) = B v + ψ_t = 0``, from holonomic ones ``ψ = φ̇``) with their
drift ``ψ̇ − B a``.

A :class:`Mode` says which contacts act and how: active (``I₂``), sticking,
or sliding with the friction force along ``f̂``; :func:`smooth_accelerations`
solves its force balance (:func:`colloc.simulate.contact_forces.mode_forces`).

Legend: ``q, v, a`` coordinates, speeds, accelerations; ``W_n, W_t, B``
contact and constraint rows; ``F`` forces, ``f̂`` friction direction.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from ..model.contact import contacts_of
from .contact_forces import facet_directions, mode_forces
from ..errors import ModelError
from ..model.component import TIME, Model
from ..model.multibody import Multibody

_KEYS = ("M", "f", "qdot", "gap", "Wn", "Wt", "drift_n", "drift_t", "B", "psi", "drift_b")
_MATRICES = ("M", "Wn", "Wt", "B")


class ContactSystem:
    """The numeric terms of a model whose states are multibody coordinates and speeds, with its contacts.

    Parameters
    ----------
    model : Multibody, list of components or Model
        Every state must belong to a :class:`Multibody`.  Holonomic and
        velocity (nonholonomic) constraints act together with the contacts.

    Attributes
    ----------
    contacts : list of Contact
    tangent_rows : list of ndarray
        Rows of ``W_t`` of each contact (empty for a contact without tangent).
    coordinate_names, speed_names, control_names, parameter_names : list of str
    """

    def __init__(self, model):
        model = model if isinstance(model, Model) else Model(model if isinstance(model, (list, tuple)) else [model])
        bodies = [c for c in model.components if isinstance(c, Multibody)]
        owned = {model.lookup(s).name for b in bodies for s in b.coordinates + b.speeds}
        for v in model.states:
            if v.name not in owned:
                raise ModelError(f"State `{v.name}` does not belong to a Multibody; the event-driven simulator integrates multibody coordinates and speeds only.")
        for k in model.constraints:
            if k.kind == "acceleration":
                raise ModelError(f"Constraint `{k.name}` is an acceleration constraint; the event-driven simulator supports holonomic and velocity constraints with contacts.")
        self.model, self.bodies = model, bodies
        self.contacts = [c for b in bodies for c in contacts_of(b)]
        if not self.contacts:
            raise ModelError("The model declares no contact; declare one with `body.contact(name, gap, ...)`.")
        self._build(model, bodies)
        self.coordinate_names = [model.lookup(s).name for b in bodies for s in b.coordinates]
        self.speed_names = [model.lookup(s).name for b in bodies for s in b.speeds]
        self.control_names = [x.name for x in model.controls]
        self.parameter_names = [x.name for x in model.parameters]
        self.restitution = np.array([c.restitution for c in self.contacts])
        self.friction = np.array([c.friction if c.num_tangents else 0.0 for c in self.contacts])
        self.cone = [c.cone for c in self.contacts]
        self.facets = [c.facets for c in self.contacts]
        starts = np.cumsum([0] + [c.num_tangents for c in self.contacts])
        self.tangent_rows = [np.arange(starts[i], starts[i + 1]) for i in range(self.nc)]

    def _build(self, model, bodies):
        q = ca.vertcat(*[b.q for b in bodies])
        v = ca.vertcat(*[b.v for b in bodies])
        N = ca.diagcat(*[b.kinematic_matrix for b in bodies])
        eqs = [b.equations() for b in bodies]
        M = ca.diagcat(*[e.mass_matrix for e in eqs])
        f = ca.vertcat(*[e.generalized_force - e.bias for e in eqs])
        gap = ca.vertcat(*[c.gap for c in self.contacts])
        Wn = ca.mtimes(ca.jacobian(gap, q), N)
        Wt = ca.vertcat(*[c.tangent_jacobian for c in self.contacts if c.num_tangents])
        Wt = ca.SX(0, int(v.numel())) if Wt.is_empty() else Wt
        psi = ca.vertcat(*[k.velocity for k in model.constraints if k.velocity is not None])
        psi = ca.SX(0, 1) if psi.is_empty() else psi
        B = ca.jacobian(psi, v)
        qdot = ca.mtimes(N, v)
        drift_n = ca.jtimes(ca.mtimes(Wn, v), q, qdot)
        drift_t = ca.jtimes(ca.mtimes(Wt, v), q, qdot)
        drift_b = ca.jtimes(psi, q, qdot) + ca.jacobian(psi, TIME)
        u, p = model.vector("control"), model.vector("parameter")
        outs = [M, f, qdot, gap, Wn, Wt, drift_n, drift_t, B, psi, drift_b]
        # One flat input and output: each CasADi call from Python costs per argument, and this runs in the RHS.
        self._flat = ca.Function("contact_terms_flat", [ca.vertcat(TIME, q, v, u, p)], [ca.vertcat(*[ca.vec(o) for o in outs])])
        self._shapes = [o.shape for o in outs]
        self.nq, self.nv, self.nc, self.nb = int(q.numel()), int(v.numel()), len(self.contacts), int(psi.numel())

    def evaluate(self, t, q, v, u, p):
        """``dict(M, f, qdot, gap, Wn, Wt, drift_n, drift_t, B, psi, drift_b)`` as numpy arrays at one point."""
        flat = self._flat(np.concatenate([[t], q, v, u, p])).full().ravel()
        d, start = {}, 0
        for key, (r, c) in zip(_KEYS, self._shapes):
            block = flat[start:start + r * c]
            d[key] = block.reshape((r, c), order="F") if key in _MATRICES else block
            start += r * c
        return d


class Mode:
    """The smooth mode: active contacts (``I₂``), and for each its tangential state.

    ``stick[i]``: the contact sticks; ``slide[i]``: the friction direction
    ``f̂`` (tangent coordinates) of a sliding contact, else None; ``follow[i]``:
    ``f̂`` follows the sliding speed (a circular cone in 3-D); ``edge[i]``: a
    contact sliding along the bisector of two vertices ``d_j, d_l`` of its
    polygon has the force ``μF_n f̂ + γ e`` on the polygon's side, ``f̂ = (d_j + d_l)/2``,
    ``e = (d_j − d_l)/|d_j − d_l|``, with ``γ`` the multiplier that keeps the
    sliding speed on the bisector (``eᵀṡ = 0``; Filippov's sliding motion).
    ``ref_n``, ``ref_t``: the forces at the start of the mode, to which the
    force balance stays nearest where it leaves them undetermined.
    """

    def __init__(self, nc, ntan=0):
        self.active = np.zeros(nc, dtype=bool)
        self.stick = np.zeros(nc, dtype=bool)
        self.slide = [None] * nc
        self.follow = np.zeros(nc, dtype=bool)
        self.edge = [None] * nc
        self.ref_n, self.ref_t = np.zeros(nc), np.zeros(ntan)

    def describe(self, i):
        if not self.active[i]:
            return "open"
        return "stick" if self.stick[i] else ("slip" if self.slide[i] is not None else "closed")


def friction_direction(system, mode, i, v, Wt):
    """``f̂`` of sliding contact ``i`` now: the mode's, or opposite the sliding speed for a circular cone."""
    if mode.follow[i]:
        s = Wt[system.tangent_rows[i]] @ v
        norm = np.linalg.norm(s)
        if norm > 0.0:
            # past the stop (the speed turned against the mode's first direction: an event) the direction is
            # mirrored, so the right-hand side stays smooth across the root the integrator locates
            return (-s if s @ mode.slide[i] <= 0.0 else s) / norm
    return mode.slide[i]


def mode_rows(system, terms, mode, v):
    """The force balance of ``mode`` (:func:`colloc.simulate.contact_forces.mode_forces`): ``(H, C, d)`` and which
    multipliers they order, ``A`` active contacts (normal forces), ``S`` rows of ``W_t`` that stick, ``E`` contacts
    sliding on a polygon's side (their edge force ``γ``), then the bilateral rows."""
    Wn, Wt, mu = terms["Wn"], terms["Wt"], system.friction
    A = np.flatnonzero(mode.active)
    H = []
    for i in A:
        h = Wn[i]
        if mode.slide[i] is not None:
            h = h + mu[i] * friction_direction(system, mode, i, v, Wt) @ Wt[system.tangent_rows[i]]
        H.append(h)
    S = np.concatenate([system.tangent_rows[i] for i in A if mode.stick[i]] + [np.zeros(0, int)]).astype(int)
    E = [i for i in A if mode.edge[i] is not None]
    Ew = np.array([mode.edge[i] @ Wt[system.tangent_rows[i]] for i in E]).reshape(-1, system.nv)
    H = np.vstack([np.array(H).reshape(-1, system.nv), Wt[S], Ew, terms["B"]])
    C = np.vstack([Wn[A], Wt[S], Ew, terms["B"]])
    d = np.concatenate([terms["drift_n"][A], terms["drift_t"][S],
                        [mode.edge[i] @ terms["drift_t"][system.tangent_rows[i]] for i in E], terms["drift_b"]])
    return H, C, d, A, S, E


def smooth_accelerations(system, terms, mode, v):
    """Accelerations and forces of the smooth dynamics of ``mode``.

    Returns ``(a (nv,), Fn (nc,), Ft (ntan,), Fb (nb,))``; forces of inactive contacts are 0.
    """
    Wt, mu = terms["Wt"], system.friction
    H, C, d, A, S, E = mode_rows(system, terms, mode, v)
    ref = np.concatenate([mode.ref_n[A], mode.ref_t[S], [mode.edge[i] @ mode.ref_t[system.tangent_rows[i]] for i in E],
                          np.zeros(system.nb)])
    a, lam = mode_forces(terms["M"], terms["f"], H, C, d, ref)
    Fn, Ft = np.zeros(system.nc), np.zeros(Wt.shape[0])
    Fn[A] = lam[:A.size]
    Ft[S] = lam[A.size:A.size + S.size]
    for i in A:
        if mode.slide[i] is not None:
            Ft[system.tangent_rows[i]] = mu[i] * Fn[i] * friction_direction(system, mode, i, v, Wt)
    for k, i in enumerate(E):
        Ft[system.tangent_rows[i]] += lam[A.size + S.size + k] * mode.edge[i]
    return a, Fn, Ft, lam[A.size + S.size + len(E):]


def polygon_neighbours(system, i, fhat):
    """The two cone directions next to ``f̂`` (a vertex of contact ``i``'s polygon)."""
    D = facet_directions(2, system.facets[i])
    j = int(np.argmax(D @ fhat))
    return D[j], [D[(j - 1) % len(D)], D[(j + 1) % len(D)]]


__all__ = ["ContactSystem", "Mode", "mode_rows", "smooth_accelerations", "friction_direction", "polygon_neighbours"]
