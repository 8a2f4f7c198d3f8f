"""A block sliding to rest on a floor with Coulomb friction, passive: where it stops is found, not scheduled.

A block of mass ``m`` slides along a floor (friction coefficient ``μ``,
gravity ``g``) from ``x = 0`` with speed ``v₀``; no force pushes it.  The
problem is to find the motion over a horizon longer than the slide (a
feasibility problem), contact-implicitly with free steps: the interval
lengths are variables, so the instant the block stops falls on a mesh point,
where its friction force jumps from ``μmg`` to zero.

States
    ``block.x``, ``block.y`` [m] and their speeds.
Contact
    ``block.floor``: gap ``y``, tangent ``x``, friction ``μ``.

Analytic solution [DERIVED]: the friction ``−μmg`` decelerates the block at
``μg`` until it stops, at ``t_s = v₀/(μg)`` and ``x_s = v₀²/(2μg)``; then it
sticks (static friction holds it at zero force).  With ``v₀ = 2``,
``μ = 0.3``, ``g = 9.81``: ``t_s = 0.679579``, ``x_s = 0.679579``.

Source: derived above (Coulomb friction, constant deceleration).
"""
import casadi as ca

import colloc as cl

SOLVE = dict(scheme="hermite-simpson", intervals=8, contact="implicit", impacts=False, free_steps=True)
GRAVITY = 9.81


def stop(speed=2.0, friction=0.3, gravity=GRAVITY):
    """``(t_s, x_s)``: when and where the block stops."""
    return speed / (friction * gravity), speed**2 / (2 * friction * gravity)


REFERENCE = dict(value=stop()[1], quantity="final block.x", tolerance=1e-6,
                 source="x_s = v₀²/(2μg) derived in the module docstring")


def block(friction=0.3, mass=1.0, gravity=GRAVITY):
    """The block on its floor (a Multibody)."""
    body = cl.Multibody("block", coordinates=["x", "y"])
    x, y = body.coordinates
    body.kinetic_energy = 0.5 * mass * ca.sumsqr(body.v)
    body.potential_energy = mass * gravity * y
    body.contact("floor", y, friction=friction, tangent=x)
    body.point("centre", body.q)
    return body


def build(speed=2.0, friction=0.3, duration=1.2, mass=1.0, gravity=GRAVITY):
    """Launched at ``speed`` from ``x = 0`` on the floor; the horizon ``duration`` outlasts the slide."""
    body = block(friction, mass, gravity)
    x, y = body.coordinates
    vx, vy = body.speeds
    prob = cl.Problem([body], t0=0.0, tf=duration, name="block_to_rest")
    prob.bound(y, 0.0, 1.0)
    prob.initial({x: 0.0, y: 0.0, vx: speed, vy: 0.0})
    prob.guess({x: (0.0, 0.5 * speed * duration), vx: (speed, 0.0)})
    return prob
