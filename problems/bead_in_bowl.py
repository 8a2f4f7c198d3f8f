"""A bead sliding in a circular bowl, passive: its normal force follows the motion, found contact-implicitly.

A point mass ``m`` in the vertical plane, inside a circular bowl of radius
``R`` whose lowest point is the origin (centre ``(0, R)``), is released at rest
on the wall at angle ``θ₀`` from the bottom.  No control acts: the problem is
to find the motion (a feasibility problem).  Contact-implicit
(``contact="implicit"``, forces at the collocation points,
``contact_forces="collocation"``): the bowl's normal force, which varies along
the swing (``N = m g (3 cos θ − 2 cos θ₀)`` without friction), is a variable at
every grid point, and the bead stays on the wall because the complementarity
rows find it closed.  With one force per mesh interval the gap ``φ = 0`` at
every grid point would be more equations than unknowns.

States
    ``bead.x``, ``bead.y`` [m] and their speeds.
Contact
    ``bead.bowl``: gap ``φ = (R² − x² − (y − R)²)/(2R)`` (zero on the wall,
    its gradient the unit inward normal there), friction ``μ`` along the arc
    ``s = R atan2(x, R − y)``, plastic.

Analytic solution [DERIVED] (frictionless): the bead is a pendulum of length
``R``; it reaches ``−θ₀`` at rest after half a period,
``T/2 = 2 √(R/g) K(sin²(θ₀/2))`` (``K(m)`` the complete elliptic integral of
the first kind, parameter ``m``).  With friction the event-driven simulation
(:func:`colloc.simulate_events`) is the reference.

Source: the large-amplitude pendulum (e.g. Landau & Lifshitz, Mechanics, §11,
problem 1); the event-driven scheme of :mod:`colloc.simulate.events`.
"""
import math

import casadi as ca
import numpy as np
from scipy.special import ellipk

import colloc as cl

# Radau IIA: on a contact that stays closed (an index-3 system) its positions converge at order 2s − 1 = 5 and
# speeds at s = 3 (Hairer, Lubich & Roche 1989); Hermite–Simpson (Lobatto IIIA) with a force at every point leaves a
# mode of the forces free (mesh-point forces against midpoint ones) and ended infeasible at 40 intervals.  From
# ε = 1 by factors 0.3: from 0.1, or by factors 0.1, the 20-interval homotopy ended infeasible at ε = 0.1.
SOLVE = dict(scheme="radau-3", intervals=10, contact="implicit", contact_forces="collocation", impacts=False,
             free_steps=False, relaxation=1.0, relaxation_factor=0.3)
GRAVITY = 9.81


def half_period(angle=0.5, radius=1.0, gravity=GRAVITY):
    """``T/2 = 2 √(R/g) K(sin²(θ₀/2))``: from rest at ``θ₀`` to rest at ``−θ₀``."""
    return 2.0 * math.sqrt(radius / gravity) * float(ellipk(math.sin(angle / 2) ** 2))


def position(theta, radius=1.0):
    """``(x, y)`` of the bead on the wall at angle ``θ`` from the bottom."""
    return radius * np.sin(theta), radius * (1.0 - np.cos(theta))


REFERENCE = dict(value=-position(0.5)[0], quantity="final bead.x", tolerance=1e-5,
                 source="the pendulum's half period: at rest at −θ₀ (module docstring); Radau IIA error 3e-6 at 10 intervals")


def bead(radius=1.0, friction=0.0, mass=1.0, gravity=GRAVITY):
    """The bead and its bowl contact (a Multibody)."""
    body = cl.Multibody("bead", coordinates=["x", "y"])
    x, y = body.coordinates
    body.kinetic_energy = 0.5 * mass * ca.sumsqr(body.v)
    body.potential_energy = mass * gravity * y
    gap = (radius**2 - x**2 - (y - radius) ** 2) / (2 * radius)
    tangent = radius * ca.atan2(x, radius - y) if friction > 0 else None
    body.contact("bowl", gap, friction=friction, tangent=tangent)
    body.point("centre", body.q)
    return body


def build(angle=0.5, radius=1.0, friction=0.0, duration=None, mass=1.0, gravity=GRAVITY):
    """Release at rest at ``angle`` [rad]; the horizon is half the frictionless period unless ``duration`` is given."""
    body = bead(radius, friction, mass, gravity)
    x, y = body.coordinates
    vx, vy = body.speeds
    T = half_period(angle, radius, gravity) if duration is None else duration
    prob = cl.Problem([body], t0=0.0, tf=T, name="bead_in_bowl")
    x0, y0 = position(angle, radius)
    prob.initial({x: x0, y: y0, vx: 0.0, vy: 0.0})
    prob.bound(x, -radius, radius)
    prob.bound(y, 0.0, radius)
    # a small-angle swing θ₀ cos(πt/T), not the answer: the amplitude and the period differ at θ₀ = 0.5
    t = np.linspace(0.0, T, 41)
    th = angle * np.cos(np.pi * t / T)
    xs, ys = position(th, radius)
    speed = -angle * np.pi / T * np.sin(np.pi * t / T)
    prob.guess({x: (t, xs), y: (t, ys), vx: (t, radius * np.cos(th) * speed), vy: (t, radius * np.sin(th) * speed)})
    return prob
