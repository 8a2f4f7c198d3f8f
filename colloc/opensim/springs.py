"""OpenSim's coordinate springs: ``CoordinateLimitForce`` and ``SpringGeneralizedForce``.

``CoordinateLimitForce`` (``CoordinateLimitForce::calcLimitForce``): with w = π/180 for a rotational
coordinate (its limits are in degrees, stiffnesses and damping per degree) and 1 otherwise,

    K_up(q) = step(q; q_up, q_up + w Δ) K_up,   K_low(q) = step(q; q_low, q_low − w Δ) K_low
    τ = −K_up(q) (q − q_up) + K_low(q) (q_low − q) − (d/w) (K_up(q)/K_up + K_low(q)/K_low) q̇

with q_up = w·upper_limit, K_up = upper_stiffness/w (likewise below), Δ the ``transition`` and step
Simbody's ``Function::Step``, the quintic 0 → 1 with zero slope and curvature at both ends
(f = t³(10 − 15t + 6t²)); it is C² in q.

``SpringGeneralizedForce``: τ = −k (q − q_rest) − c q̇.
"""
from __future__ import annotations

import math

import casadi as ca

from ..errors import ModelError
from .xmlvalues import flag, leaf, number, text

LIMIT_DEFAULTS = dict(upper_stiffness=1.0, upper_limit=0.0, lower_stiffness=1.0, lower_limit=0.0,
                      damping=0.001, transition=0.1)
SPRING_DEFAULTS = dict(stiffness=0.0, rest_length=0.0, viscosity=0.0)


def step(x, x0, x1):
    """Simbody ``Function::Step`` from 0 at x0 to 1 at x1 (x0 > x1 allowed): quintic, C² at both ends."""
    t = ca.fmin(ca.fmax((x - x0) / (x1 - x0), 0.0), 1.0)
    return t ** 3 * (10.0 + t * (6.0 * t - 15.0))


def _coordinate(element, ctx, what):
    raw = text(element, "coordinate")
    if not raw:
        raise ModelError(f"{what} `{element.get('name')}` names no coordinate.")
    ctx.speed_index(leaf(raw))  # raises for an unknown coordinate
    return leaf(raw)


def coordinate_limit_force(element, ctx):
    """``(name, τ (nv, 1), limit force)`` of a ``CoordinateLimitForce``."""
    name = _coordinate(element, ctx, "CoordinateLimitForce")
    P = {key: number(element, key, d) for key, d in LIMIT_DEFAULTS.items()}
    if P["upper_stiffness"] <= 0 or P["lower_stiffness"] <= 0 or P["transition"] <= 0:
        raise ModelError(f"CoordinateLimitForce `{element.get('name')}` needs positive stiffnesses and transition; "
                         f"got {P['upper_stiffness']}, {P['lower_stiffness']}, {P['transition']}.")
    flag(element, "compute_dissipation_energy", False)  # an energy report only
    w = math.pi / 180.0 if ctx.motion_type(name) == "rotational" else 1.0
    q, qdot, _, _ = ctx.coordinate(name)
    q_up, q_low = w * P["upper_limit"], w * P["lower_limit"]
    k_up, k_low, damping = P["upper_stiffness"] / w, P["lower_stiffness"] / w, P["damping"] / w
    up = k_up * step(q, q_up, q_up + w * P["transition"])
    low = k_low * (1.0 - step(q, q_low - w * P["transition"], q_low))
    force = -up * (q - q_up) + low * (q_low - q) - damping * (up / k_up + low / k_low) * qdot
    return element.get("name"), ctx.mobility_force(name, force), force


def spring_generalized_force(element, ctx):
    """``(name, τ (nv, 1), force)`` of a ``SpringGeneralizedForce``."""
    name = _coordinate(element, ctx, "SpringGeneralizedForce")
    P = {key: number(element, key, d) for key, d in SPRING_DEFAULTS.items()}
    q, qdot, _, _ = ctx.coordinate(name)
    force = -P["stiffness"] * (q - P["rest_length"]) - P["viscosity"] * qdot
    return element.get("name"), ctx.mobility_force(name, force), force


def _builder(make):
    def build(skeleton, element, path):
        from .context import from_skeleton

        name, tau, force = make(element, from_skeleton(skeleton, path))
        skeleton.add_generalized_force(name, tau)
        skeleton.__dict__.setdefault("spring_forces", {})[name] = force
        return []

    build.__doc__ = f"Registry builder of :func:`{make.__name__}` (the scalar force kept in ``skeleton.spring_forces``)."
    return build


def _register():
    from .registry import register_force

    register_force("CoordinateLimitForce", _builder(coordinate_limit_force))
    register_force("SpringGeneralizedForce", _builder(spring_generalized_force))


_register()

__all__ = ["coordinate_limit_force", "spring_generalized_force", "step"]
