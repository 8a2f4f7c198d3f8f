"""Pendulum whose pivot moves with a known constant acceleration (twin of ``constant_acceleration.py``).

The cart's motion x(t) = a₀t²/2 is known, so only the pendulum angle remains:
with the bob at (x(t) + ℓ sin θ, −ℓ cos θ) the Lagrangian gives

    m ℓ² θ̈ + m ℓ a₀ cos θ + m g ℓ sin θ = u.

colloc derives it from the time-dependent kinetic energy (∂²L/∂θ̇∂t enters
the bias force).

Objective
    minimize J = ∫₀ᵀ u² dt
States
    ``cart.theta`` [rad], ``cart.omega`` [rad/s]
Controls
    ``cart.torque`` u [N m]
Constraints
    θ(0) = 0, θ̇(0) = 0, θ(T) = θ_f, θ̇(T) = 0.

Source: the reduction of ``constant_acceleration.py`` (Simbody's
ConstantAcceleration constraint); the reference is this problem's converged
optimum 4.7134388075 [COMPUTED here] (radau-3 N=400 and radau-5 N=100 agree
to 4e-12 relative, HS N=400 to 2e-10).
"""
import math

import casadi as ca

import colloc as cl

REFERENCE = dict(
    value=4.7134388075,
    source="converged optimum of this problem [COMPUTED]: radau-3 N=400 4.7134388075, radau-5 N=100 4.7134388075, HS N=400 4.7134388085",
    tolerance=1e-6,
)

SOLVE = dict(scheme="hermite-simpson", intervals=60)


def build(duration=2.0, accel=2.0, theta_final=0.5 * math.pi, m_cart=1.0, m_bob=0.5, length=1.0, gravity=9.81):
    """Pendulum on a pivot with prescribed motion; same parameters as ``constant_acceleration.build``."""
    body = cl.Multibody("cart", coordinates=["theta"], speeds=["omega"],
                        coordinate_bounds={"theta": (-math.pi, 1.5 * math.pi)}, speed_bounds={"omega": (-20, 20)})
    (theta,), (omega,) = body.coordinates, body.speeds
    torque = body.control("torque", bounds=(-100, 100))
    t = body.time
    pivot_speed = accel * t
    bob_velocity = ca.vertcat(pivot_speed + length * ca.cos(theta) * omega, length * ca.sin(theta) * omega)
    body.kinetic_energy = 0.5 * m_bob * ca.sumsqr(bob_velocity)  # the cart's own energy does not involve θ
    body.potential_energy = -m_bob * gravity * length * ca.cos(theta)
    body.generalized_force = torque

    prob = cl.Problem([body], t0=0.0, tf=duration, name="constant_acceleration_minimal")
    prob.initial({theta: 0.0, omega: 0.0})
    prob.final({theta: theta_final, omega: 0.0})
    prob.minimize(integral=torque**2)
    prob.guess({theta: (0.0, theta_final)})
    return prob
