"""A block pushed along a floor with Coulomb friction, rest to rest, least effort — sticking found, not scheduled.

A block of mass ``m`` on a floor (friction coefficient ``μ``, gravity ``g``) is
pushed by a horizontal force ``u`` from rest at ``x = 0`` to rest at ``x = d``
in time ``T``, minimizing ``∫ u² dt``.  It is solved contact-implicitly
(``contact="implicit"``): the floor's normal force, the friction force and
whether the block sticks or slides are variables and complementarity rows, so
the optimizer decides when the block moves.

States
    ``block.x``, ``block.y`` [m] and their speeds.
Control
    ``block.push`` [N], horizontal.
Contact
    ``block.floor``: gap ``y``, tangent ``x``, friction ``μ``.

Analytic optimum [DERIVED].  While the block slides forward (``ẋ > 0``) the
friction is ``μmg`` against the motion, so ``u = m ẍ + μmg``; moving it for a
time ``T'`` (rest to rest, ``∫ẍ dt = 0``) costs
``∫ u² = m² ∫ ẍ² + (μmg)² T'``, and the least ``∫ẍ²`` over a rest-to-rest move
of ``d`` in ``T'`` is ``12 d²/T'³`` (``ẍ`` linear in time), so

    J(T') = 12 m² d² / T'³ + (μ m g)² T'.

``J`` decreases until ``T* = √(6 d/(μ g))`` (``dJ/dT' = 0``) and increases
after it.  A sticking block costs nothing (``u = 0``, static friction holds it),
so for ``T ≤ T*`` the optimum slides the whole time, ``J* = J(T)``, and for
``T > T*`` it slides for ``T*`` and sticks for ``T − T*``, ``J* = J(T*)``.
With ``m = d = 1``, ``μ = 0.1``, ``g = 9.81``: ``T* = 2.473097``;
``T = 2``: ``J* = 1.5 + 0.962361·2 = 3.42472`` (slides throughout);
``T = 4``: ``J* = 12/T*³ + 0.962361 T* = 0.793337 + 2.380012 = 3.173349`` (sticks for
1.52690; a value of 3.17331 sometimes quoted is 4e-5 low).
At the end of the sliding phase ``u = m ẍ + μmg = 0``, so the stick phase
follows without a jump of the push if it comes last (it may equally come first
or be split; the optimum value is the same).

Source: derived above (the rest-to-rest minimum-effort move, Bryson & Ho 1975
§2.5, plus a constant Coulomb friction while sliding).
"""
import math

import casadi as ca

import colloc as cl

# free steps: the stick phase of a long horizon starts and ends on a mesh point (T = 4: J* to 1e-6, where
# the mesh given stops at a local optimum 5 % above it)
SOLVE = dict(scheme="hermite-simpson", intervals=10, contact="implicit", impacts=False, free_steps=True)
GRAVITY = 9.81


def critical_time(distance=1.0, friction=0.1, gravity=GRAVITY):
    """``T* = √(6d/(μg))``: the sliding time of the optimum when the horizon is longer."""
    return math.sqrt(6 * distance / (friction * gravity))


def optimum(duration=2.0, distance=1.0, friction=0.1, mass=1.0, gravity=GRAVITY):
    """``J*`` of the module docstring."""
    slide = min(duration, critical_time(distance, friction, gravity))
    return 12 * mass**2 * distance**2 / slide**3 + (friction * mass * gravity) ** 2 * slide


REFERENCE = dict(value=optimum(2.0), source="derived in the module docstring (T = 2: slides throughout)", tolerance=1e-4)


def build(duration=2.0, distance=1.0, friction=0.1, mass=1.0, gravity=GRAVITY):
    body = cl.Multibody("block", coordinates=["x", "y"])
    x, y = body.coordinates
    body.kinetic_energy = 0.5 * mass * ca.sumsqr(body.v)
    body.potential_energy = mass * gravity * y
    push = body.control("push", bounds=(-20.0, 20.0))
    body.generalized_force = ca.vertcat(push, 0)
    body.contact("floor", y, friction=friction, tangent=x)
    body.point("centre", body.q)
    prob = cl.Problem([body], t0=0.0, tf=duration, name="pushed_block")
    prob.bound(y, 0.0, 1.0)
    prob.initial({x: 0.0, y: 0.0, **{v: 0.0 for v in body.speeds}})
    prob.final({x: distance, y: 0.0, **{v: 0.0 for v in body.speeds}})
    prob.guess({x: (0.0, distance)})
    prob.minimize(integral=push**2)
    return prob
