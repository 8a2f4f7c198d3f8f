"""Knife-edge (skate) in reduced form: forward speed and turn rate as states (twin of ``skate.py``).

The no-slip constraint of ``skate.py`` is solved for the velocity,
v = s (cos θ, sin θ), leaving the forward speed s and turn rate ω as the
speeds (Chaplygin's reduction; Bloch, *Nonholonomic Mechanics and Control*,
§1.6).

Objective
    minimize J = ∫₀ᵀ (F² + τ²) dt
States
    ``skate.x``, ``skate.y`` [m], ``skate.theta`` [rad], ``skate.s`` [m/s],
    ``skate.omega`` [rad/s]
Controls
    ``skate.force`` [N], ``skate.torque`` [N m]
Constraints
    ẋ = s cos θ, ẏ = s sin θ, θ̇ = ω, m ṡ = F, I ω̇ = τ;
    rest at (0, 0, 0) at t = 0 and at ``target`` at t = T.

Source: the knife edge as in Bloch §1.6; the reference is this problem's
converged optimum 3.4733307362 [COMPUTED here] (radau-3 N=200/400, radau-5
N=100 and HS N=400 agree to 4e-11 relative).
"""
import math

import casadi as ca

import colloc as cl

REFERENCE = dict(
    value=3.4733307362,
    source="converged optimum of this problem [COMPUTED]: radau-3 N=200/400, radau-5 N=100 and HS N=400 agree to 4e-11 relative",
    tolerance=1e-6,
)

SOLVE = dict(scheme="hermite-simpson", intervals=40)


def build(duration=2.0, target=(1.0, 1.0, 0.5 * math.pi), mass=1.0, inertia=0.1):
    """Reduced skate; same parameters as ``skate.build``."""
    c = cl.Component("skate")
    x = c.state("x", bounds=(-5, 5))
    y = c.state("y", bounds=(-5, 5))
    theta = c.state("theta", bounds=(-2 * math.pi, 2 * math.pi))
    s = c.state("s", bounds=(-10, 10))
    omega = c.state("omega", bounds=(-20, 20))
    force = c.control("force", bounds=(-100, 100))
    torque = c.control("torque", bounds=(-100, 100))
    c.derivative(x, s * ca.cos(theta))
    c.derivative(y, s * ca.sin(theta))
    c.derivative(theta, omega)
    c.derivative(s, force / mass)
    c.derivative(omega, torque / inertia)

    xf, yf, thf = target
    prob = cl.Problem([c], t0=0.0, tf=duration, name="skate_minimal")
    prob.initial({x: 0.0, y: 0.0, theta: 0.0, s: 0.0, omega: 0.0})
    prob.final({x: xf, y: yf, theta: thf, s: 0.0, omega: 0.0})
    prob.minimize(integral=force**2 + torque**2)
    prob.guess({x: (0.0, xf), y: (0.0, yf), theta: (0.0, thf), s: 0.0, omega: 0.0})
    return prob
