"""Point pendulum in Cartesian coordinates with a tangential force (Betts 10.103, index-3 form; docs/problems.md D1).

A unit point mass at ``(x, y)`` (``y`` up) hangs on a massless rod of unit length
from the origin, under gravity ``g = 9.81`` along −y.  The control ``u`` pushes
it with the tangential force ``(u y, −u x)``.  Starting at rest on the
horizontal (x, y) = (1, 0), it must be at x = 0 with ẋ = 0 at t = 3.

Objective
    minimize J = ∫₀³ u² dt
States
    ``pend.x``, ``pend.y`` [m]; ``pend.vx``, ``pend.vy`` [m/s]
Controls
    ``pend.u`` [N]
Multipliers
    ``pend.rod.lambda``: with colloc's convention ``M a + c − τ − Gᵀλ = 0`` and
    ``G = ∂φ/∂q = (2x, 2y)`` the rod force is ``2λ (x, y)``, so
    ``λ = −y₄ = (g y − ẋ² − ẏ²)/2`` where ``y₄`` is Betts's algebraic state
    (half the normalised rod tension; see :func:`multiplier_from_states`).
Constraints
    m ẍ = u y + 2λx,  m ÿ = −m g − u x + 2λy  (Lagrangian, derived by colloc);
    holonomic rod φ = x² + y² − 1 = 0 (colloc derives φ̇ and φ̈);
    y(0) = 0, ẏ(0) = 0, 0 ≤ x(0) ≤ 2: with the rod (φ = 0, φ̇ = 0 are imposed
    at t = 0 too) this is the state (1, 0, 0, 0).  Fixing x(0) = 1 with y(0)
    free instead makes the row φ(t0) = y² degenerate (its gradient 2y
    vanishes at the solution) and IPOPT crawls (~1500 iterations); fixing all
    four makes the t0 rows of φ and φ̇ redundant (colloc leaves them out);
    x(3) = 0, ẋ(3) = 0; |x|, |y|, |ẋ|, |ẏ| ≤ 5 as in opty's script.

The minimal twin is ``problems/pendulum_minimal.py`` (φ̈ = −g cos φ − u).  The
guess swings toward the bottom: a second local optimum that swings up to
φ(3) = +π/2 has J = 94.1187456 (docs/problems.md D1).

Source: J. T. Betts, *Practical Methods for Optimal Control Using Nonlinear
Programming*, 3rd ed., test problems 10.103/10.104, as transcribed in opty's
``examples-gallery/beginner/plot_betts_10_103_104.py`` (book value 12.8738850
[SEEN-2nd]); reference 12.8738888777 is the converged minimal-coordinate
optimum [COMPUTED] in docs/problems.md D1 (Cartesian index-3 12.8738888776; the
book's 8 digits are 3e-7 lower, from its discretization).
"""
import math

import casadi as ca
import numpy as np

import colloc as cl

#: Objective ∫u² dt of the continuous optimum; tolerance is relative.
REFERENCE = dict(
    value=12.8738888777,
    source="docs/problems.md D1 [COMPUTED] minimal coordinates N=100,d=4 (Cartesian index-3 12.8738888776; Betts 12.8738850)",
    tolerance=1e-5,
)

SOLVE = dict(scheme="hermite-simpson", intervals=80)

#: Problem script of the minimal-coordinate formulation with the same optimum.
TWIN = "pendulum_minimal"


def build(duration=3.0, gravity=9.81):
    """Cartesian pendulum of unit mass and length; the optimum swings down to the bottom."""
    body = cl.Multibody("pend", coordinates=["x", "y"], speeds=["vx", "vy"],
                        coordinate_bounds={"x": (-5, 5), "y": (-5, 5)},
                        speed_bounds={"vx": (-5, 5), "vy": (-5, 5)})
    x, y = body.coordinates
    vx, vy = body.speeds
    u = body.control("u")
    body.kinetic_energy = 0.5 * (vx**2 + vy**2)
    body.potential_energy = gravity * y
    body.generalized_force = ca.vertcat(u * y, -u * x)
    body.holonomic("rod", x**2 + y**2 - 1)
    body.point("bob", ca.vertcat(x, y))

    prob = cl.Problem([body], t0=0.0, tf=duration, name="pendulum_cartesian")
    prob.initial({y: 0.0, vy: 0.0, x: (0.0, 2.0)})
    prob.final({x: 0.0, vx: 0.0})
    prob.minimize(integral=u**2)
    # a quarter circle down to the bottom, at constant angular rate
    times = np.linspace(0.0, duration, 31)
    phi = -0.5 * math.pi * times / duration
    rate = -0.5 * math.pi / duration
    prob.guess({x: (times, np.cos(phi)), y: (times, np.sin(phi)),
                vx: (times, -rate * np.sin(phi)), vy: (times, rate * np.cos(phi)), u: 0.0})
    return prob


def multiplier_from_states(x, y, vx, vy, gravity=9.81):
    """``λ = (g y − ẋ² − ẏ²)/2``: the rod multiplier implied by a motion on the circle.

    Betts's algebraic state is ``y₄ = (ẋ² + ẏ² − g y)/2 = −λ``.  Follows from
    φ̈ = 2(x ẍ + y ÿ + ẋ² + ẏ²) = 0 with the equations of motion above (the
    tangential force drops out because it is orthogonal to (x, y)).
    """
    x, y, vx, vy = (np.asarray(a, dtype=float) for a in (x, y, vx, vy))
    return 0.5 * (gravity * y - vx**2 - vy**2)
