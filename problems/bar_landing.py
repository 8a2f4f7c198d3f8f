"""A tilted bar dropped onto the ground lands at rest, flat, with least effort: contact-implicit, checked by re-simulation.

The bar of ``problems/falling_bar.py`` (mass ``m``, length ``L``, frictionless
ground, plastic impacts ``e = 0``) is released at rest with its centre at
height ``h`` and tilted ``θ₀``.  Generalised forces ``u = (f_x, f_y, τ)`` act on
it; it must be at rest, flat on the ground, at ``T``, with least ``∫|u|² dt``.
Left alone it does exactly that: it lands on its lower end (a plastic impact),
rotates about it while the end slides, and the second impact, also plastic,
stops it flat (``problems/falling_bar.py``, ``simulate(restitution=0)``).  So the
continuous optimum is ``J* = 0`` with ``u ≡ 0``; on a mesh the impacts must fall
on mesh points, which costs a little effort that vanishes as the mesh refines.
``colloc verify`` re-simulates the result with the event-driven simulator.

States
    ``bar.x``, ``bar.y`` [m], ``bar.theta`` [rad] and their speeds.
Controls
    ``bar.fx``, ``bar.fy`` [N], ``bar.torque`` [N m], each within ±20.
Contacts
    ``bar.left``, ``bar.right``: the gaps of the two ends, ``e = 0``.

Source: the falling bar of Siconos' event-driven examples (Acary & Brogliato
2008, §8; ``problems/falling_bar.py``); the zero-effort optimum follows from it.
"""
import casadi as ca

import colloc as cl

SOLVE = dict(scheme="hermite-simpson", intervals=30, contact="implicit")


def _body(mass, length, gravity):
    body = cl.Multibody("bar", coordinates=["x", "y", "theta"])
    x, y, th = body.coordinates
    body.kinetic_energy = 0.5 * mass * (body.v[0] ** 2 + body.v[1] ** 2) + 0.5 * mass * length**2 / 12 * body.v[2] ** 2
    body.potential_energy = mass * gravity * y
    u = [body.control(n, bounds=(-20.0, 20.0)) for n in ("fx", "fy", "torque")]
    body.generalized_force = ca.vertcat(*u)
    left = ca.vertcat(x - length / 2 * ca.cos(th), y - length / 2 * ca.sin(th))
    right = ca.vertcat(x + length / 2 * ca.cos(th), y + length / 2 * ca.sin(th))
    body.contact("left", left[1])
    body.contact("right", right[1])
    body.point("left", left)
    body.point("right", right)
    return body, u


def build(height=0.6, tilt=0.3, duration=1.2, mass=1.0, length=1.0, gravity=9.81):
    body, u = _body(mass, length, gravity)
    x, y, th = body.coordinates
    prob = cl.Problem([body], t0=0.0, tf=duration, name="bar_landing")
    prob.initial({x: 0.0, y: height, th: tilt, **{v: 0.0 for v in body.speeds}})
    prob.final({y: 0.0, th: 0.0, **{v: 0.0 for v in body.speeds}})
    prob.minimize(integral=sum(c**2 for c in u))
    return prob
