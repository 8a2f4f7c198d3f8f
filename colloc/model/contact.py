"""Unilateral contacts on a :class:`~colloc.Multibody`: gap, Jacobians, restitution, friction.

A contact is declared once, by its gap ``φ(q) ≥ 0`` (positive apart, zero
touching) and optionally the tangential position ``s(q)`` of the contact
point along the surface: one row for a planar contact, two for a contact in
3-D (two orthogonal tangent directions), with

    W_n = ∂φ/∂q · N(q)     normal Jacobian (1, nv): normal speed  ẏ = W_n v
    W_t = ∂s/∂q · N(q)     tangential Jacobian (1 or 2, nv): sliding speed  ṡ = W_t v
    ÿ = W_n a + Ẇ_n v      (the drift ``Ẇ_n v = d/dt(W_n) v`` by ``jtimes``)

A point contact (:func:`declare_point_contact`) builds both from a point
``p(q)`` of the body and a surface ``ψ(x) ≥ 0`` of the world: the gap is
``ψ(p)/|∇ψ(p)|`` (a distance to first order), the normal ``n = ∇ψ/|∇ψ|``,
and the tangent rows ``t_iᵀ ∂p/∂q N`` along a frame ``(t_1, t_2, n)`` built
from the normal; on a plane the frame is constant and ``s_i = t_iᵀ p``.

In 3-D the Coulomb cone ``|F_t| ≤ μ F_n`` is either *circular* (the
second-order cone itself) or *polyhedral*: the regular polygon with
``facets`` vertices ``μ F_n d_j``, ``d_j = cos(2πj/k) t_1 + sin(2πj/k) t_2``,
inscribed in the circle (Stewart & Trinkle, IJNME 39 (1996) 2673).
both by automatic differentiation.  The contact is *unilateral*: it has no
multiplier of its own in the model; a simulator (``colloc.simulate.events``) decides
when it acts.  Its laws are Newton's impact law ``0 ≤ ẏ⁺ + e ẏ⁻ ⊥ P_n ≥ 0``
and Coulomb friction ``|F_t| ≤ μ F_n`` with ``F_t ṡ ≤ 0`` (Pfeiffer & Glocker,
*Multibody Dynamics with Unilateral Contacts*, Wiley 1996; Acary & Brogliato,
*Numerical Methods for Nonsmooth Dynamical Systems*, Springer 2008, ch. 1–3).

Legend: ``q`` coordinates, ``v`` speeds, ``a`` accelerations, ``N`` kinematic
matrix, ``e`` restitution, ``mu`` friction coefficient.
"""
from __future__ import annotations

import math

import casadi as ca

from ..errors import ModelError, did_you_mean
from .component import TIME, _check_name


class Contact:
    """One unilateral contact of a multibody (built by :meth:`Multibody.contact`).

    Attributes
    ----------
    name : str
        ``body.contact``.
    body : Multibody
    gap : casadi.SX, scalar
        ``φ(q, p)``.
    tangent : casadi.SX, scalar or (2, 1), or None
        ``s(q, p)``, the tangential position(s) whose rate is the sliding speed
        (None without a tangent, or for a point contact on a curved surface,
        whose tangent rows are velocity directions only).
    restitution : float
        Newton's coefficient ``e`` in [0, 1].
    friction : float
        Coulomb coefficient ``μ ≥ 0`` (0 is frictionless).
    num_tangents : int
        0 (no tangent), 1 (planar) or 2 (3-D).
    cone : str
        ``"polyhedral"`` or ``"circular"`` (3-D only; a planar cone is the segment ``|F_t| ≤ μF_n``).
    facets : int
        Vertices of the polyhedral cone (3-D).
    normal_jacobian, tangent_jacobian : casadi.SX, shapes (1, nv), (num_tangents, nv)
        ``W_n`` and ``W_t`` (``tangent_jacobian`` is None without a tangent).
    """

    def __init__(self, body, name, gap, restitution, friction, tangent, cone="polyhedral", facets=4, tangent_rows=None):
        self.body, self.name = body, f"{body.name}.{name}"
        self.gap = _position_expr(body, gap, f"The gap of contact `{self.name}`")
        pair = isinstance(tangent, (list, tuple)) and len(tangent) == 2  # 3-D: two tangential positions
        self.tangent = None if tangent is None else _position_expr(body, tangent, f"The tangent of contact `{self.name}`", rows=2 if pair else 1)
        self.restitution = _coefficient(restitution, f"Restitution of contact `{self.name}`", upper=1.0)
        self.friction = _coefficient(friction, f"Friction coefficient of contact `{self.name}`", upper=math.inf)
        if self.friction > 0 and self.tangent is None and tangent_rows is None:
            raise ModelError(f"Contact `{self.name}` has friction {self.friction} but no `tangent`; give the tangential position s(q) whose rate is the sliding speed.")
        if cone not in CONES:
            raise ModelError(f"Cone `{cone}` of contact `{self.name}` is not one of {', '.join(CONES)}.{did_you_mean(str(cone), CONES)}")
        if not (isinstance(facets, int) and facets >= 3):
            raise ModelError(f"`facets` of contact `{self.name}` must be an integer ≥ 3; got {facets!r}.")
        self.cone, self.facets = cone, facets
        self.normal_jacobian = ca.mtimes(ca.jacobian(self.gap, body.q), body.kinematic_matrix)
        self.tangent_jacobian = tangent_rows
        if self.tangent is not None:
            self.tangent_jacobian = ca.mtimes(ca.jacobian(self.tangent, body.q), body.kinematic_matrix)
        self.num_tangents = 0 if self.tangent_jacobian is None else int(self.tangent_jacobian.shape[0])

    def __repr__(self):
        return f"Contact({self.name!r}, e={self.restitution}, mu={self.friction})"


CONES = ("polyhedral", "circular")


def declare_contact(body, name, gap, restitution=0.0, friction=0.0, tangent=None, cone="polyhedral", facets=4,
                    tangent_rows=None) -> Contact:
    """Declare contact ``name`` on ``body`` (see :meth:`colloc.Multibody.contact`)."""
    _check_name(name, "Contact")
    contacts = contacts_of(body)
    if any(c.name == f"{body.name}.{name}" for c in contacts):
        raise ModelError(f"Contact `{body.name}.{name}` is declared twice.")
    c = Contact(body, name, gap, restitution, friction, tangent, cone, facets, tangent_rows)
    contacts.append(c)
    return c


def declare_point_contact(body, name, point, surface=None, restitution=0.0, friction=0.0, cone="polyhedral",
                          facets=4) -> Contact:
    """Declare the contact of a body point ``p(q)`` (3 rows) with a surface ``ψ(x) ≥ 0`` of the world.

    ``surface`` is a function of a 3-vector (CasADi SX) returning ψ; default the
    ground ``x_3 ≥ 0``.  The gap is ``ψ(p)/|∇ψ(p)|``, the contact frame
    ``(t_1, t_2, n)`` with ``n = ∇ψ/|∇ψ|`` and ``t_1`` the unit projection of
    ``e_1`` (or ``e_2`` where ``|n_1| > 0.8``) on the tangent plane, ``t_2 = n × t_1``.
    """
    what = f"The point of contact `{body.name}.{name}`"
    p = _position_expr(body, point, what, rows=3)
    x = ca.SX.sym("x", 3)
    psi = x[2] if surface is None else surface(x)
    psi = ca.SX(psi)
    if psi.numel() != 1 or not ca.depends_on(psi, x):
        raise ModelError(f"The surface of contact `{body.name}.{name}` must map a point to one value that depends on it.")
    grad = ca.gradient(psi, x)
    n = grad / ca.norm_2(grad)
    e = ca.if_else(ca.fabs(n[0]) > 0.8, ca.DM([0, 1, 0]), ca.DM([1, 0, 0]))
    t1 = e - ca.dot(e, n) * n
    t1 = t1 / ca.norm_2(t1)
    frame = ca.Function("frame", [x], [psi / ca.norm_2(grad), t1, ca.cross(n, t1)])
    gap, t1, t2 = frame(p)
    if not ca.depends_on(ca.vertcat(t1, t2), body.q):  # a plane: the tangential positions exist
        return declare_contact(body, name, gap, restitution, friction, [ca.dot(t1, p), ca.dot(t2, p)], cone, facets)
    Jp = ca.mtimes(ca.jacobian(p, body.q), body.kinematic_matrix)
    rows = ca.vertcat(ca.mtimes(t1.T, Jp), ca.mtimes(t2.T, Jp))
    return declare_contact(body, name, gap, restitution, friction, None, cone, facets, tangent_rows=rows)


def declare_frame_contact(body, frame, offset=(0.0, 0.0, 0.0), plane=None, name=None, restitution=0.0, friction=0.0,
                          cone="polyhedral", facets=4) -> Contact:
    """Contact of a point fixed in a link frame with a plane of the world (a robot's foot on the ground).

    The point is ``p(q) = p_frame(q) + R_frame(q) offset`` (``body.frame(frame)``, e.g. a URDF link's);
    ``plane = (point, normal)`` (default the ground ``z ≥ 0``: ``((0, 0, 0), (0, 0, 1))``) gives the surface
    ``ψ(x) = n̂ᵀ(x − x₀)``, so the gap is the point's height above the plane and the contact frame ``(t_1, t_2, n̂)``
    is constant (:func:`declare_point_contact`).  ``name`` defaults to the frame's name made an identifier.
    """
    if not hasattr(body, "frame"):
        raise ModelError(f"`{body.name}` has no frames; contact_point needs a body built by Multibody.from_urdf (use point_contact).")
    origin, normal = ((0.0, 0.0, 0.0), (0.0, 0.0, 1.0)) if plane is None else _plane(plane, body.name)
    off = _three(offset, f"`offset` of contact_point `{frame}`")
    p, R = body.frame(frame)
    point = p + ca.mtimes(R, ca.DM(off))
    n = ca.DM(normal) / float(ca.norm_2(ca.DM(normal)))
    label = name if name is not None else "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in str(frame))
    return declare_point_contact(body, label, point, lambda x: ca.dot(n, x - ca.DM(origin)), restitution, friction, cone, facets)


def generalized_force(body, contacts, normal=None, tangential=None):
    """``Σ W_nᵀ λ_i + W_tᵀ f_i`` over the contacts of ``contacts`` on ``body``: the generalised force (one row per
    speed of ``body``) of normal forces ``normal[i]`` (None: none) and tangential force components
    ``tangential[i]`` (a dict by contact index; a contact missing from it has none)."""
    gen = ca.SX.zeros(body.num_speeds, 1)
    for i, c in enumerate(contacts):
        if c.body is not body:
            continue
        if normal is not None:
            gen += c.normal_jacobian.T * normal[i]
        if tangential and i in tangential:
            gen += ca.mtimes(c.tangent_jacobian.T, tangential[i])
    return gen


def gaps_and_speeds(contacts, tangential=()):
    """The gaps ``φ_i``, normal speeds ``ẏ_i = W_n v`` of ``contacts`` and tangential speeds ``ṡ_i = W_t v`` of
    the contacts whose indices ``tangential`` lists (three lists of expressions)."""
    gap = [c.gap for c in contacts]
    normal = [ca.mtimes(c.normal_jacobian, c.body.v) for c in contacts]
    slide = [ca.mtimes(contacts[i].tangent_jacobian, contacts[i].body.v) for i in tangential]
    return gap, normal, slide


def _three(value, what):
    try:
        v = [float(a) for a in value]
    except (TypeError, ValueError):
        raise ModelError(f"{what} must be three numbers; got {value!r}.") from None
    if len(v) != 3 or not all(math.isfinite(a) for a in v):
        raise ModelError(f"{what} must be three finite numbers; got {value!r}.")
    return v


def _plane(plane, body_name):
    try:
        origin, normal = plane
    except (TypeError, ValueError):
        raise ModelError(f"`plane` of a contact_point of `{body_name}` must be (point, normal); got {plane!r}.") from None
    origin, normal = _three(origin, "The plane's point"), _three(normal, "The plane's normal")
    if math.hypot(*normal) == 0:
        raise ModelError(f"The plane's normal of a contact_point of `{body_name}` must not be zero.")
    return origin, normal


def contacts_of(body) -> list:
    """The contacts declared on ``body``, in declaration order (a live list)."""
    return body.__dict__.setdefault("contacts", [])


def _position_expr(body, expr, what, rows=1):
    if isinstance(expr, (list, tuple)):
        expr = ca.vertcat(*expr)
    try:
        expr = ca.SX(expr)
    except (NotImplementedError, TypeError, RuntimeError):
        raise ModelError(f"{what} must be a CasADi SX expression in the coordinates; got {type(expr).__name__}.") from None
    if expr.numel() != rows or expr.size2() != 1:
        span = "a scalar expression" if rows == 1 else f"a column of {rows} rows"
        raise ModelError(f"{what} must be {span}; got shape {expr.shape}.")
    allowed = {s.name() for s in ca.vertsplit(body.q)} | {v.name for v in body.variables if v.kind == "parameter"}
    for s in ca.symvar(expr):
        if s.name() not in allowed:
            which = "time" if s.name() == TIME.name() else f"`{s.name()}`"
            raise ModelError(f"{what} uses {which}; it may depend on the coordinates of `{body.name}` and its parameters only.")
    if not ca.depends_on(expr, body.q):
        raise ModelError(f"{what} does not depend on the coordinates of `{body.name}`; it cannot open or close.")
    return expr


def _coefficient(value, what, upper):
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"{what} must be a number; got {value!r}.") from None
    if not (0.0 <= x <= upper) or math.isnan(x):
        span = "[0, 1]" if upper == 1.0 else "≥ 0 and finite"
        raise ModelError(f"{what} must be {span}; got {value!r}.")
    if math.isinf(x):
        raise ModelError(f"{what} must be finite; got {value!r}.")
    return x


__all__ = ["Contact", "CONES", "declare_contact", "declare_point_contact", "declare_frame_contact", "contacts_of", "generalized_force", "gaps_and_speeds"]
