"""A block launched down a slope with Coulomb friction μ > tan α: it brakes, stops and sticks.

A point mass ``m`` on a plane inclined at ``α`` starts at the origin with speed
``v₀`` down the slope.  Friction ``μ m g cos α`` exceeds the pull ``m g sin α``.

States
    ``block.x``, ``block.y`` [m] and their speeds.  No controls.
Contact
    ``block.floor``: gap ``n·(x, y)`` with ``n = (sin α, cos α)``, tangent
    ``s = (cos α, −sin α)·(x, y)`` (down-slope), friction ``μ``.
Analytic solution [DERIVED]
    deceleration ``g(μ cos α − sin α)``: it stops at ``t* = v₀/(g(μ cos α − sin α))``
    after ``s* = v₀²/(2g(μ cos α − sin α))``, then sticks, friction holding
    ``m g sin α`` (inside the cone since μ > tan α).

``build()`` returns the model, initial state and span as a Problem (for ``colloc info``,
plots and contact-implicit solves); collocation does not impose contacts yet, so a plain
``colloc solve`` of it is infeasible (the path bound gap ≥ 0 cannot hold without contact
forces).  ``simulate()`` is the event-driven answer.

Source: Coulomb's law on an inclined plane (e.g. Pfeiffer & Glocker,
*Multibody Dynamics with Unilateral Contacts*, Wiley 1996, §6; any
mechanics text's block on a rough incline).
"""
import math

import casadi as ca

import colloc as cl

GRAVITY = 9.81


def model(slope=0.3, friction=0.5, mass=2.0, gravity=GRAVITY):
    body = cl.Multibody("block", coordinates=["x", "y"])
    body.kinetic_energy = 0.5 * mass * ca.sumsqr(body.v)
    body.potential_energy = mass * gravity * body.q[1]
    normal = ca.vertcat(math.sin(slope), math.cos(slope))
    down = ca.vertcat(math.cos(slope), -math.sin(slope))
    body.contact("floor", ca.dot(normal, body.q), friction=friction, tangent=ca.dot(down, body.q))
    body.point("block", body.q)
    return body


def initial_speeds(speed=2.0, slope=0.3):
    return [speed * math.cos(slope), -speed * math.sin(slope)]


def build(slope=0.3, friction=0.5, speed=2.0, duration=2.0, mass=2.0, gravity=GRAVITY):
    body = model(slope, friction, mass, gravity)
    x, y = body.coordinates
    vx, vy = initial_speeds(speed, slope)
    prob = cl.Problem([body], t0=0.0, tf=duration, name="block_on_slope")
    prob.initial({x: 0.0, y: 0.0, body.speeds[0]: vx, body.speeds[1]: vy})
    prob.path(math.sin(slope) * x + math.cos(slope) * y, lower=0.0, name="floor")
    return prob


def simulate(slope=0.3, friction=0.5, speed=2.0, duration=2.0, mass=2.0, gravity=GRAVITY, **options):
    return cl.simulate_events(model(slope, friction, mass, gravity), duration, [0.0, 0.0], initial_speeds(speed, slope), **options)


def stop(slope=0.3, friction=0.5, speed=2.0, gravity=GRAVITY):
    """``(t*, s*)``: time and distance to the stop."""
    decel = gravity * (friction * math.cos(slope) - math.sin(slope))
    return speed / decel, speed**2 / (2 * decel)
