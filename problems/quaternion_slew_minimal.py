"""Rest-to-rest rotation about one principal axis (single-axis twin of ``quaternion_slew.py``).

About a principal axis the gyroscopic term ω × Jω vanishes and the slew is
J_k θ̈ = τ, a double integrator scaled by J_k.

Objective
    minimize J = ∫₀ᵀ τ² dt
States
    ``body.theta`` [rad], ``body.omega`` [rad/s]
Controls
    ``body.tau`` [N m]
Constraints
    θ(0) = 0, θ̇(0) = 0, θ(T) = θ_f, θ̇(T) = 0.

Analytic optimum [DERIVED]: τ(t) = J_k θ_f (6/T² − 12 t/T³),
θ(t) = θ_f (3s² − 2s³) (s = t/T), J* = 12 J_k² θ_f² / T³ (docs/problems.md A4a
scaled by J_k: u = τ/J_k, ∫τ² = J_k² ∫u² = J_k² · 12 θ_f²/T³).  Hermite–Simpson
reproduces it exactly (the state is a cubic).

Source: docs/problems.md A4a (double integrator, minimum energy) [DERIVED].
"""
import math

import colloc as cl

REFERENCE = dict(
    value=12 * 3.0**2 * (0.5 * math.pi) ** 2 / 2.0**3,
    source="12 J_k² θ_f²/T³ with J_k = 3, θ_f = π/2, T = 2 [DERIVED] (docs/problems.md A4a scaled by J_k)",
    tolerance=1e-6,
)

SOLVE = dict(scheme="hermite-simpson", intervals=20)


def build(duration=2.0, angle=0.5 * math.pi, inertia=3.0):
    """Single-axis slew by ``angle`` with moment of inertia ``inertia``."""
    c = cl.Component("body")
    theta = c.state("theta")
    omega = c.state("omega", bounds=(-10, 10))
    tau = c.control("tau", bounds=(-100, 100))
    c.derivative(theta, omega)
    c.derivative(omega, tau / inertia)

    prob = cl.Problem([c], t0=0.0, tf=duration, name="quaternion_slew_minimal")
    prob.initial({theta: 0.0, omega: 0.0})
    prob.final({theta: angle, omega: 0.0})
    prob.minimize(integral=tau**2)
    prob.guess({theta: (0.0, angle), omega: angle / duration})
    return prob


def exact_control(t, duration=2.0, angle=0.5 * math.pi, inertia=3.0):
    """``τ(t) = J θ_f (6/T² − 12 t/T³)``."""
    return inertia * angle * (6 / duration**2 - 12 * t / duration**3)
