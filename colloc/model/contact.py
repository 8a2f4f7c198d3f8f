"""Unilateral contacts on a :class:`~colloc.Multibody`: gap, Jacobians, restitution, friction.

A contact is declared once, by its gap ``φ(q) ≥ 0`` (positive apart, zero
touching) and optionally the tangential position ``s(q)`` of the contact
point along the surface (planar contacts), with

    W_n = ∂φ/∂q · N(q)     normal Jacobian (1, nv): normal speed  ẏ = W_n v
    W_t = ∂s/∂q · N(q)     tangential Jacobian (1, nv): sliding speed  ṡ = W_t v
    ÿ = W_n a + Ẇ_n v      (the drift ``Ẇ_n v = d/dt(W_n) v`` by ``jtimes``)

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

from ..errors import ModelError
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
    tangent : casadi.SX, scalar, or None
        ``s(q, p)``, the tangential position whose rate is the sliding speed.
    restitution : float
        Newton's coefficient ``e`` in [0, 1].
    friction : float
        Coulomb coefficient ``μ ≥ 0`` (0 is frictionless).
    normal_jacobian, tangent_jacobian : casadi.SX, shape (1, nv)
        ``W_n`` and ``W_t`` (``tangent_jacobian`` is None without a tangent).
    """

    def __init__(self, body, name, gap, restitution, friction, tangent):
        self.body, self.name = body, f"{body.name}.{name}"
        self.gap = _position_expr(body, gap, f"The gap of contact `{self.name}`")
        self.tangent = None if tangent is None else _position_expr(body, tangent, f"The tangent of contact `{self.name}`")
        self.restitution = _coefficient(restitution, f"Restitution of contact `{self.name}`", upper=1.0)
        self.friction = _coefficient(friction, f"Friction coefficient of contact `{self.name}`", upper=math.inf)
        if self.friction > 0 and self.tangent is None:
            raise ModelError(f"Contact `{self.name}` has friction {self.friction} but no `tangent`; give the tangential position s(q) whose rate is the sliding speed.")
        self.normal_jacobian = ca.mtimes(ca.jacobian(self.gap, body.q), body.kinematic_matrix)
        self.tangent_jacobian = None
        if self.tangent is not None:
            self.tangent_jacobian = ca.mtimes(ca.jacobian(self.tangent, body.q), body.kinematic_matrix)

    def __repr__(self):
        return f"Contact({self.name!r}, e={self.restitution}, mu={self.friction})"


def declare_contact(body, name, gap, restitution=0.0, friction=0.0, tangent=None) -> Contact:
    """Declare contact ``name`` on ``body`` (see :meth:`colloc.Multibody.contact`)."""
    _check_name(name, "Contact")
    contacts = contacts_of(body)
    if any(c.name == f"{body.name}.{name}" for c in contacts):
        raise ModelError(f"Contact `{body.name}.{name}` is declared twice.")
    c = Contact(body, name, gap, restitution, friction, tangent)
    contacts.append(c)
    return c


def contacts_of(body) -> list:
    """The contacts declared on ``body``, in declaration order (a live list)."""
    return body.__dict__.setdefault("contacts", [])


def _position_expr(body, expr, what):
    if isinstance(expr, (list, tuple)):
        expr = ca.vertcat(*expr)
    try:
        expr = ca.SX(expr)
    except (NotImplementedError, TypeError, RuntimeError):
        raise ModelError(f"{what} must be a CasADi SX expression in the coordinates; got {type(expr).__name__}.") from None
    if expr.numel() != 1:
        raise ModelError(f"{what} must be a scalar expression; got shape {expr.shape}.")
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


__all__ = ["Contact", "declare_contact", "contacts_of"]
