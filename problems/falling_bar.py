"""A rigid bar dropped tilted onto the ground: impacts at either end, simultaneous ones, rest on both.

A uniform bar (mass ``m``, length ``L``, inertia ``mL²/12``) in the vertical
plane is released at rest with its centre at height ``h`` and tilted ``θ₀``.
Both ends can hit the frictionless ground; with ``e > 0`` it rocks and
bounces until the impacts accumulate, with ``e = 0`` it lands on the lower end,
rotates about it (sliding freely) and comes to rest on both.

States
    ``bar.x``, ``bar.y`` [m], ``bar.theta`` [rad] and their speeds.  No controls.
Contacts
    ``bar.left``: gap ``y − (L/2) sin θ``; ``bar.right``: gap ``y + (L/2) sin θ``;
    restitution ``e``.
Checks [DERIVED]
    the energy never increases across an impact (Newton's law with e ≤ 1 on
    a frictionless contact dissipates ``(1 − e²)/2`` of the normal kinetic
    energy); the bar ends at rest, flat, each end carrying ``mg/2``; no
    horizontal force ever acts, so ``x`` never moves.

``build()`` returns the model, initial state and span as a Problem (for ``colloc info``,
plots and contact-implicit solves); collocation does not impose contacts yet, so a plain
``colloc solve`` of it is infeasible (the path bound gap ≥ 0 cannot hold without contact
forces).  ``simulate()`` is the event-driven answer.

Source: Siconos' event-driven scheme (Acary & Brogliato, Springer 2008, §8)
applied to the rocking/falling rigid bar, a standard test of simultaneous
impacts (e.g. Pfeiffer & Glocker 1996, §7).
"""
import casadi as ca

import colloc as cl

GRAVITY = 9.81


def model(restitution=0.5, mass=1.0, length=1.0, gravity=GRAVITY):
    body = cl.Multibody("bar", coordinates=["x", "y", "theta"])
    x, y, th = body.coordinates
    body.kinetic_energy = 0.5 * mass * (body.v[0] ** 2 + body.v[1] ** 2) + 0.5 * mass * length**2 / 12 * body.v[2] ** 2
    body.potential_energy = mass * gravity * y
    left = ca.vertcat(x - length / 2 * ca.cos(th), y - length / 2 * ca.sin(th))
    right = ca.vertcat(x + length / 2 * ca.cos(th), y + length / 2 * ca.sin(th))
    body.contact("left", left[1], restitution=restitution)
    body.contact("right", right[1], restitution=restitution)
    body.point("left", left)
    body.point("right", right)
    return body


def build(restitution=0.5, height=1.0, tilt=0.4, duration=2.5, mass=1.0, length=1.0, gravity=GRAVITY):
    body = model(restitution, mass, length, gravity)
    x, y, th = body.coordinates
    prob = cl.Problem([body], t0=0.0, tf=duration, name="falling_bar")
    prob.initial({x: 0.0, y: height, th: tilt, **{v: 0.0 for v in body.speeds}})
    for c in body.contacts:
        prob.path(c.gap, lower=0.0, name=c.name.split(".")[1])
    return prob


def simulate(restitution=0.5, height=1.0, tilt=0.4, duration=2.5, mass=1.0, length=1.0, gravity=GRAVITY, **options):
    return cl.simulate_events(model(restitution, mass, length, gravity), duration, [0.0, height, tilt], [0.0, 0.0, 0.0], **options)


def energy(traj, mass=1.0, length=1.0, gravity=GRAVITY):
    """Total energy at every row of a trajectory."""
    return (0.5 * mass * (traj["bar.x_speed"] ** 2 + traj["bar.y_speed"] ** 2)
            + 0.5 * mass * length**2 / 12 * traj["bar.theta_speed"] ** 2 + mass * gravity * traj["bar.y"])
