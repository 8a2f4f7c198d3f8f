"""Pendulum on a cart whose acceleration is held constant (acceleration-only constraint, Simbody's ConstantAcceleration).

A cart of mass M on a horizontal track carries a pendulum (point mass m on a
massless rod of length ℓ, angle θ from the downward vertical) driven by a
torque u at the pivot.  An acceleration-only constraint α = ẍ − a₀ = 0 holds
the cart's acceleration at a₀ (Simbody's ``Constraint::ConstantAcceleration``);
its multiplier is the horizontal force that does it.  Starting at rest with
the pendulum hanging, the pendulum must be at θ_f, at rest relative to the
cart, at t = T.

Objective
    minimize J = ∫₀ᵀ u² dt
States
    ``cart.x`` [m], ``cart.theta`` [rad]; ``cart.v`` [m/s], ``cart.omega`` [rad/s]
Controls
    ``cart.torque`` u [N m]
Multipliers
    ``cart.servo.lambda`` [N]: G = ∂α/∂a = [1, 0], so λ is the horizontal
    force on the cart, λ = (M + m) a₀ + m ℓ (θ̈ cos θ − θ̇² sin θ) [DERIVED from
    the x row of the Lagrangian equations] (see :func:`multiplier_from_states`).
Constraints
    Lagrangian dynamics of cart and pendulum; α = ẍ − a₀ = 0 at every
    collocation point (its only level); x(0) = 0, ẋ(0) = 0, θ(0) = 0, θ̇(0) = 0;
    θ(T) = θ_f, θ̇(T) = 0 (x(T) = a₀T²/2 and ẋ(T) = a₀T follow and are not imposed).

The twin ``constant_acceleration_minimal.py`` is the pendulum alone with the
pivot moving on the known x(t) = a₀t²/2.

Source: Simbody ``Constraint::ConstantAcceleration`` (an acceleration-only
constraint, Simbody User's Guide "Constraints"; Moco supports such
constraints with Bordalba2023, docs/moco.md §3.4); the problem instance is
chosen here and its reference is the converged optimum of the twin,
4.7134388075 [COMPUTED here].  The constraint is linear in the accelerations
and x(t) is a quadratic, which every scheme integrates exactly: both
formulations give the same discrete optimum on every mesh.
"""
import math

import casadi as ca
import numpy as np

import colloc as cl

REFERENCE = dict(
    value=4.7134388075,
    source="converged optimum of problems/constant_acceleration_minimal.py [COMPUTED]: radau-3 N=400 4.7134388075, radau-5 N=100 4.7134388075, HS N=400 4.7134388085",
    tolerance=1e-6,
)

SOLVE = dict(scheme="hermite-simpson", intervals=60)

TWIN = "constant_acceleration_minimal"


def build(duration=2.0, accel=2.0, theta_final=0.5 * math.pi, m_cart=1.0, m_bob=0.5, length=1.0, gravity=9.81):
    """Cart at constant acceleration ``accel``; the pendulum swings to ``theta_final``."""
    body = cl.Multibody("cart", coordinates=["x", "theta"], speeds=["v", "omega"],
                        coordinate_bounds={"x": (-10, 10), "theta": (-math.pi, 1.5 * math.pi)},
                        speed_bounds={"v": (-20, 20), "omega": (-20, 20)})
    x, theta = body.coordinates
    v, omega = body.speeds
    torque = body.control("torque", bounds=(-100, 100))
    bob = ca.vertcat(x + length * ca.sin(theta), -length * ca.cos(theta))
    body.kinetic_energy = 0.5 * m_cart * v**2 + 0.5 * m_bob * ca.sumsqr(ca.jtimes(bob, body.q, body.v))
    body.potential_energy = m_bob * gravity * bob[1]
    body.generalized_force = ca.vertcat(0, torque)
    body.acceleration("servo", body.a[0] - accel)
    body.point("bob", bob)

    prob = cl.Problem([body], t0=0.0, tf=duration, name="constant_acceleration")
    prob.initial({x: 0.0, v: 0.0, theta: 0.0, omega: 0.0})
    prob.final({theta: theta_final, omega: 0.0})
    prob.minimize(integral=torque**2)
    times = np.linspace(0.0, duration, 21)
    prob.guess({x: (times, 0.5 * accel * times**2), v: (times, accel * times), theta: (0.0, theta_final)})
    return prob


def multiplier_from_states(theta, omega, omega_dot, accel=2.0, m_cart=1.0, m_bob=0.5, length=1.0):
    """``λ = (M + m) a₀ + m ℓ (θ̈ cos θ − θ̇² sin θ)``: the force holding the cart's acceleration."""
    theta, omega, omega_dot = (np.asarray(a, dtype=float) for a in (theta, omega, omega_dot))
    return (m_cart + m_bob) * accel + m_bob * length * (omega_dot * np.cos(theta) - omega**2 * np.sin(theta))
