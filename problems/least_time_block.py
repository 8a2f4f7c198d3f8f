"""A block pushed from rest to rest in least time, with Coulomb friction and a bounded push.

A block of mass ``m`` on a floor (friction ``μ``, gravity ``g``) is pushed by
a horizontal force ``|u| ≤ u_max`` from rest at ``x = 0`` to rest at
``x = d``; minimize the final time.  Contact-implicit with free steps: the
switch of the push falls on a mesh point, and the control-hull rows keep each
interval's push within its bounds between the nodes (without them a stretched
interval hid a push from +5 to −5 in its quadratic and the time came out
0.34 % below the minimum).

States
    ``block.x``, ``block.y`` [m] and their speeds.
Control
    ``block.push`` [N], ``|u| ≤ u_max``.
Contact
    ``block.floor``: gap ``y``, tangent ``x``, friction ``μ``.

Analytic optimum [DERIVED]: bang-bang, full push ``+u_max`` (acceleration
``a₁ = u_max/m − μg``) then full brake ``−u_max`` (deceleration
``a₂ = u_max/m + μg``), the block sliding forward throughout; rest to rest over
``d``: ``T* = √(2d (1/a₁ + 1/a₂))``.  With ``m = d = 1``, ``u_max = 5``,
``μ = 0.3``, ``g = 9.81``: ``T* = 1.1063832``.

Source: derived above (Pontryagin's bang-bang for a double integrator, e.g.
Bryson & Ho 1975 §3.9, with the constant friction of a forward slide).
"""
import math

import casadi as ca

import colloc as cl

SOLVE = dict(scheme="hermite-simpson", intervals=20, contact="implicit", impacts=False, free_steps=True)
GRAVITY = 9.81


def least_time(push=5.0, friction=0.3, distance=1.0, mass=1.0, gravity=GRAVITY):
    """``T* = √(2d (1/a₁ + 1/a₂))`` of the module docstring."""
    a1, a2 = push / mass - friction * gravity, push / mass + friction * gravity
    return math.sqrt(2 * distance * (1 / a1 + 1 / a2))


# measured at 20 intervals: 1.1063832 (IPOPT tol 1e-10) and 1.1064185 (tol 1e-7, +3.2e-5);
# never below T* by more than the relaxation, 3e-8
REFERENCE = dict(value=least_time(), source="derived in the module docstring (bang-bang push)", tolerance=1e-4)


def build(push=5.0, friction=0.3, distance=1.0, mass=1.0, gravity=GRAVITY):
    body = cl.Multibody("block", coordinates=["x", "y"])
    x, y = body.coordinates
    body.kinetic_energy = 0.5 * mass * ca.sumsqr(body.v)
    body.potential_energy = mass * gravity * y
    u = body.control("push", bounds=(-push, push))
    body.generalized_force = ca.vertcat(u, 0)
    body.contact("floor", y, friction=friction, tangent=x)
    body.point("centre", body.q)
    prob = cl.Problem([body], t0=0.0, tf=(0.1, 10.0), name="least_time_block")
    prob.bound(y, 0.0, 1.0)
    prob.initial({x: 0.0, y: 0.0, **{v: 0.0 for v in body.speeds}})
    prob.final({x: distance, y: 0.0, **{v: 0.0 for v in body.speeds}})
    prob.guess({x: (0.0, distance), "tf": 2.0})
    prob.minimize(final=prob.tf)
    return prob
