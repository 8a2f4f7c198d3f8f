"""Cart-pole swing-up, minimum force squared (Kelly 2017, docs/problems.md entry C1).

A cart of mass ``m_cart`` on a horizontal track carries a pole modelled as a
point mass ``m_pole`` at distance ``length`` from the pivot.  Starting at rest
with the pole hanging down, the cart must travel ``distance`` and bring the pole
upright, at rest, at ``t = duration``.

Objective
    minimize ∫₀ᵀ F² dt
States
    ``cartpole.x`` cart position q₁ [m], ``cartpole.theta`` pole angle q₂ from
    the downward vertical [rad], ``cartpole.v`` = q̇₁ [m/s],
    ``cartpole.omega`` = q̇₂ [rad/s]
Controls
    ``cartpole.force`` F, horizontal force on the cart [N]
Constraints
    |q₁| ≤ d_max = 2, |F| ≤ u_max = 20; q(0) = q̇(0) = 0;
    q₁(T) = d = 1, q₂(T) = π, q̇(T) = 0; T = 2 fixed.

Dynamics (explicit form, Kelly 2017 eq. 6.1–6.9 as quoted in docs/problems.md)::

    q̈₁ = (ℓ m₂ sin q₂ q̇₂² + F + m₂ g cos q₂ sin q₂) / (m₁ + m₂ (1 − cos² q₂))
    q̈₂ = −(ℓ m₂ cos q₂ sin q₂ q̇₂² + F cos q₂ + (m₁ + m₂) g sin q₂) / (ℓ m₁ + ℓ m₂ (1 − cos² q₂))

Source: M. Kelly, "An Introduction to Trajectory Optimization: How to Do Your
Own Direct Collocation", SIAM Review 59(4), 2017, §6; parameters as in dymos
``examples/cart_pole``.  The paper's optimal cost was not found; the reference is
the converged continuous optimum 58.807667 [COMPUTED] in docs/problems.md C1 (the
dymos value 58.8839 adds F(T) = 0 and is discretization-dependent).

The problem is not convex: a second local optimum, J = 57.944780 (the pole first
swings back, see ``cartpole_cartesian.py``), is cheaper than the reference.  The
script's guess leads to the reference; ``colloc solve problems/cartpole.py
--starts 8`` finds both (tests/test_multistart.py).
"""
import casadi as ca

import colloc as cl

#: Objective value (∫F² dt) of the continuous optimum; tolerance is relative.
REFERENCE = dict(
    value=58.807667,
    source="docs/problems.md C1 [COMPUTED] continuous optimum (N=50,d=4: 58.8076677; N=100,d=4: 58.8076675)",
    tolerance=1e-3,
)

SOLVE = dict(scheme="hermite-simpson", intervals=40)


def build(duration=2.0, distance=1.0, m_cart=1.0, m_pole=0.3, length=0.5,
          gravity=9.81, max_force=20.0, max_travel=2.0):
    """Cart-pole swing-up; keyword arguments in SI units (defaults are Kelly's Table 3)."""
    c = cl.Component("cartpole")
    x = c.state("x", bounds=(-max_travel, max_travel))
    theta = c.state("theta")
    v = c.state("v")
    omega = c.state("omega")
    force = c.control("force", bounds=(-max_force, max_force))

    m1, m2, ell, g = m_cart, m_pole, length, gravity
    s, co = ca.sin(theta), ca.cos(theta)
    c.derivative(x, v)
    c.derivative(theta, omega)
    c.derivative(v, (ell * m2 * s * omega**2 + force + m2 * g * co * s) / (m1 + m2 * (1 - co**2)))
    c.derivative(omega, -(ell * m2 * co * s * omega**2 + force * co + (m1 + m2) * g * s)
                 / (ell * m1 + ell * m2 * (1 - co**2)))

    prob = cl.Problem([c], t0=0.0, tf=duration, name="cartpole")
    prob.initial({x: 0.0, theta: 0.0, v: 0.0, omega: 0.0})
    prob.final({x: distance, theta: ca.pi, v: 0.0, omega: 0.0})
    prob.minimize(integral=force**2)
    # Kelly's guess: states linear between the boundary values, zero force.
    prob.guess({x: (0.0, distance), theta: (0.0, ca.pi), v: 0.0, omega: 0.0, force: 0.0})
    return prob
