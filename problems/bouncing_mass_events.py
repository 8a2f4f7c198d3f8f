"""A point mass bouncing on the ground, simulated event by event until it rests (Zeno accumulation).

A mass ``m`` falls from rest at height ``h₀`` under gravity ``g`` onto the ground
``y = 0`` (contact gap ``y ≥ 0``) with Newton's restitution coefficient ``e``.
``build()`` gives the model with its initial state and time span; ``simulate()``
runs ``colloc.simulate_events`` on it.

States
    ``mass.y`` [m], ``mass.y_speed`` [m/s].  No controls.
Contact
    ``mass.ground``: gap ``y``, restitution ``e``, frictionless.
Analytic solution [DERIVED]
    first impact at ``t₁ = √(2h₀/g)``, the k-th at ``t₁ + 2t₁(e + … + e^k)``,
    apex heights ``e^{2k} h₀``; the impacts accumulate at
    ``t∞ = t₁ (1 + e)/(1 − e)``, after which the mass rests with normal force ``mg``.

``build()`` returns the model, initial state and span as a Problem (for ``colloc info``,
plots and contact-implicit solves); collocation does not impose contacts yet, so a plain
``colloc solve`` of it is infeasible (the path bound gap ≥ 0 cannot hold without contact
forces).  ``simulate()`` is the event-driven answer.

Source: the geometric series of Newton's law ``ẏ⁺ = −e ẏ⁻`` with ballistic
flights (e.g. Acary & Brogliato, *Numerical Methods for Nonsmooth Dynamical
Systems*, Springer 2008, §1.1.1, the bouncing ball).
"""
import math

import colloc as cl

GRAVITY = 9.81


def model(restitution=0.8, mass=1.0, gravity=GRAVITY):
    body = cl.Multibody("mass", coordinates=["y"])
    body.kinetic_energy = 0.5 * mass * body.v[0] ** 2
    body.potential_energy = mass * gravity * body.q[0]
    body.contact("ground", body.q[0], restitution=restitution)
    body.point("centre", [0.0, body.q[0]])
    return body


def build(restitution=0.8, height=1.0, duration=5.0, mass=1.0, gravity=GRAVITY):
    """The model, released at rest from ``height``, over ``duration`` seconds (gap ≥ 0 as a path bound)."""
    body = model(restitution, mass, gravity)
    prob = cl.Problem([body], t0=0.0, tf=duration, name="bouncing_mass_events")
    prob.initial({body.q[0]: height, body.v[0]: 0.0})
    prob.path(body.q[0], lower=0.0, name="ground")
    return prob


def simulate(restitution=0.8, height=1.0, duration=5.0, mass=1.0, gravity=GRAVITY, **options):
    """``colloc.simulate_events`` from the released state; ``options`` go to it."""
    return cl.simulate_events(model(restitution, mass, gravity), duration, [height], [0.0], **options)


def accumulation_time(restitution=0.8, height=1.0, gravity=GRAVITY):
    """``t∞ = t₁ (1 + e)/(1 − e)`` with ``t₁ = √(2h₀/g)``."""
    return math.sqrt(2 * height / gravity) * (1 + restitution) / (1 - restitution)
