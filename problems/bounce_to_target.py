"""A ball thrown so that it bounces once and reaches a target: the bounce is found by contact-implicit collocation.

A ball (point mass ``m``, gravity ``g``) starts at ``(0, h)`` and must reach
the target ``(L, h)`` *rising* (``ẏ(tf) ≥ 0``) within ``tf ≤ t_max``, with the
least launch energy ``½ m |v(0)|²``; the ground ``y = 0`` restitutes with
``e``.  In free flight the ball passes ``y = h`` only once more, falling, so it
must bounce; an upward throw first, or a second bounce, both need more than
``t_max = 1`` s (with ``e = 0.9`` the flight between two bounces that still
climb back to ``h`` lasts at least ``2√(2gh)/(e g)`` = 1.0035 s), so the optimum
bounces exactly once.  The
contact-implicit solve (``contact="implicit"``) is given no schedule: the
impact is an impulse at whichever mesh point the optimizer picks.

States
    ``ball.x``, ``ball.y`` [m] and their speeds.  No controls; ``tf`` is free.
Contact
    ``ball.ground``: gap ``y``, restitution ``e``, frictionless.

Reference [DERIVED].  With launch speed ``(L/tf, v₀)`` (``v₀ < 0``): the fall
takes ``t₁ = (v₀ + w)/g`` with impact speed ``w = √(v₀² + 2gh)``; the ball
leaves at ``e w`` and reaches ``h`` rising after ``t₂ = (e w − √((e w)² − 2gh))/g``,
which needs ``e w ≥ √(2gh)``.  ``tf = t₁ + t₂`` falls as ``|v₀|`` grows, so
``J(v₀) = ½ m (v₀² + (L/tf)²)`` grows too, and the optimum is the slowest
admissible throw: ``v₀* = −√(2gh(1/e² − 1))``, the target at the apex of the
bounce (``ẏ(tf) = 0``).  Defaults (m = h = 1, L = 2, e = 0.9, g = 9.81):
``v₀* = −2.145279``, ``tf* = 0.734534``, ``J* = 6.007974`` (:func:`reference`).  The same
problem as two phases with an :class:`colloc.impact.Impact` between them
(:func:`build_two_phase`) reaches it to 1e-8 on 10 + 10 intervals
(Hermite–Simpson integrates the ballistic arcs exactly).

Status of the contact-implicit solve: **it does not converge yet.**  The exact
bouncing solution satisfies every row of the contact-implicit NLP (to 1e-15,
``tests/test_contact_implicit.py``), but IPOPT, from a guess without the bounce
or even from the exact states (impulse and pre-impact speeds guessed zero), ends
in local infeasibility with the ball resting on the ground.  There is no
``REFERENCE`` until it does.

Source: derived above from ballistic flight and Newton's restitution law
(as in ``problems/bouncing_ball.py``).
"""
import math

import casadi as ca

import colloc as cl
from colloc.impact import Impact
from colloc.phases import MultiPhaseProblem, Phase

SOLVE = dict(scheme="hermite-simpson", intervals=20, contact="implicit")


def ball(mass=1.0, gravity=9.81, restitution=0.9):
    body = cl.Multibody("ball", coordinates=["x", "y"])
    body.kinetic_energy = 0.5 * mass * ca.sumsqr(body.v)
    body.potential_energy = mass * gravity * body.coordinates[1]
    body.contact("ground", body.coordinates[1], restitution=restitution)
    body.point("centre", body.q)
    return body


def reference(distance=2.0, height=1.0, restitution=0.9, mass=1.0, gravity=9.81):
    """``(J*, v₀*, tf*)`` of the one-bounce optimum (module docstring, closed form)."""
    g, e, h = gravity, restitution, height
    v0 = -math.sqrt(2 * g * h * (1 / e**2 - 1))  # the slowest throw whose bounce still climbs back to h
    w = math.sqrt(v0**2 + 2 * g * h)
    tf = (v0 + w) / g + e * w / g
    return 0.5 * mass * (v0**2 + (distance / tf) ** 2), v0, tf


def build(distance=2.0, height=1.0, restitution=0.9, max_time=1.0, mass=1.0, gravity=9.81):
    body = ball(mass, gravity, restitution)
    x, y = body.coordinates
    vx, vy = body.speeds
    prob = cl.Problem([body], t0=0.0, tf=(0.2, max_time), name="bounce_to_target")
    prob.initial({x: 0.0, y: height})
    prob.final({x: distance, y: height, vy: (0.0, math.inf)})
    prob.minimize(final=prob.at_t0(0.5 * mass * (vx**2 + vy**2)))
    prob.guess({"tf": 0.8, y: 0.5 * height, vx: distance / 0.8})  # no bounce in the guess
    return prob


def build_two_phase(distance=2.0, height=1.0, restitution=0.9, max_time=1.0, mass=1.0, gravity=9.81):
    """The same problem with the bounce scheduled: a fall, an Impact (Newton, ``e``), a rise."""
    body = ball(mass, gravity, restitution)
    model = cl.Model([body])
    x, y = body.coordinates
    vx, vy = body.speeds
    fall = cl.Problem(model, t0=0.0, tf=(0.05, max_time), name="fall")
    rise = cl.Problem(model, t0=0.0, tf=(0.05, max_time), name="rise")
    fall.initial({x: 0.0, y: height})
    fall.minimize(final=fall.at_t0(0.5 * mass * (vx**2 + vy**2)))
    fall.guess({"tf": 0.3, y: (height, 0.0), vy: (-2.0, -5.0), vx: distance / 0.75})
    rise.final({x: distance, y: height, vy: (0.0, math.inf)})
    rise.guess({"tf": 0.45, y: (0.0, height), vy: (4.5, 0.0), vx: distance / 0.75})
    a, b = Phase(fall), Phase(rise)
    a.end_when(y, "decreasing", inside=True, name="ground")
    mp = MultiPhaseProblem([a, b], name="bounce_to_target_two_phase")
    mp.connect(a, b, impact=Impact(body, contact=y, restitution=restitution, name="ground"))
    return mp
