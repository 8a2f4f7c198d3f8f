"""Newton's cradle: three equal balls in a row, touching, the first hit at speed 1 (simultaneous impacts).

Three unit masses on a line at ``x = 0, 1, 2`` (diameter 1, so both contacts
are closed), speeds ``(1, 0, 0)``.  Both contacts take part in one impact:
the velocity-level LCP with Newton's law for the two contacts at once.

States
    ``cradle.x1 … x3`` [m] and their speeds.  No controls.
Contacts
    ``cradle.c12``: gap ``x₂ − x₁ − 1``; ``cradle.c23``: gap ``x₃ − x₂ − 1``;
    restitution ``e`` on both, frictionless.
Analytic solution [DERIVED]
    the LCP ``0 ≤ ẏ⁺ + e ẏ⁻ ⊥ P ≥ 0`` with ``ẏ⁻ = (−1, 0)`` gives, for
    ``e = 1``, ``P = (4/3, 2/3)`` and speeds ``(−1/3, 2/3, 2/3)`` (energy
    conserved); for ``e = 0``, ``(1/3, 1/3, 1/3)``.  (Not the sequential
    ``(0, 0, 1)``: Newton's law on simultaneous contacts is Moreau's model.)

``build()`` returns the model, initial state and span as a Problem (for ``colloc info``,
plots and contact-implicit solves); collocation does not impose contacts yet, so a plain
``colloc solve`` of it is infeasible (the path bound gap ≥ 0 cannot hold without contact
forces).  ``simulate()`` is the event-driven answer.

Source: Acary & Brogliato, *Numerical Methods for Nonsmooth Dynamical
Systems*, Springer 2008, §4.3 (Newton's cradle with the LCP impact law);
Glocker, *Set-Valued Force Laws*, Springer 2001.
"""
import casadi as ca

import colloc as cl

#: Speeds after the impact for e = 1 and e = 0 [DERIVED, see the docstring].
EXPECTED = {1.0: (-1 / 3, 2 / 3, 2 / 3), 0.0: (1 / 3, 1 / 3, 1 / 3)}


def model(restitution=1.0):
    body = cl.Multibody("cradle", coordinates=["x1", "x2", "x3"])
    body.kinetic_energy = 0.5 * ca.sumsqr(body.v)
    x = body.q
    body.contact("c12", x[1] - x[0] - 1.0, restitution=restitution)
    body.contact("c23", x[2] - x[1] - 1.0, restitution=restitution)
    return body


def build(restitution=1.0, duration=1.0):
    body = model(restitution)
    x, v = body.coordinates, body.speeds
    prob = cl.Problem([body], t0=0.0, tf=duration, name="newton_cradle")
    prob.initial({x[0]: 0.0, x[1]: 1.0, x[2]: 2.0, v[0]: 1.0, v[1]: 0.0, v[2]: 0.0})
    prob.path(x[1] - x[0] - 1.0, lower=0.0, name="c12")
    prob.path(x[2] - x[1] - 1.0, lower=0.0, name="c23")
    return prob


def simulate(restitution=1.0, duration=1.0, **options):
    return cl.simulate_events(model(restitution), duration, [0.0, 1.0, 2.0], [1.0, 0.0, 0.0], **options)
