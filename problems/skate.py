"""Knife-edge (skate) on a plane, driven by a forward force and a steering torque (nonholonomic).

A planar rigid body of mass m and moment of inertia I about its contact point
(x, y) has heading θ and a blade that cannot slip sideways:
ψ = sin θ·ẋ − cos θ·ẏ = 0 (nonholonomic, linear in the speeds,
G = ∂ψ/∂v = [sin θ, −cos θ, 0]).  A force F pushes along the heading and a
torque τ steers.  It moves from rest at the origin heading along +x to rest
at ``target`` = (x, y, θ) in time T.

Objective
    minimize J = ∫₀ᵀ (F² + τ²) dt
States
    ``skate.x``, ``skate.y`` [m], ``skate.theta`` [rad]; ``skate.vx``,
    ``skate.vy`` [m/s], ``skate.omega`` [rad/s]
Controls
    ``skate.force`` [N], ``skate.torque`` [N m]
Constraints
    m ẍ = F cos θ + λ sin θ, m ÿ = F sin θ − λ cos θ, I θ̈ = τ (colloc's
    M a + c − τ − Gᵀλ = 0); ψ = 0 at every mesh point, ψ̇ = 0 at every
    collocation point (bordalba2023);
    x, y, θ, ω fixed at both ends, and the speed along the heading is zero
    (ẋ(0) = 0 with θ(0) = 0, ẏ(T) = 0 with θ(T) = π/2); the lateral speed at
    each end follows from ψ = 0, so no endpoint row repeats the constraint.

Multiplier [DERIVED].  With forward speed s (v = s (cos θ, sin θ)), the
lateral component of m v̇ is m s ω = −λ, so **λ = −m s ω** (the side force of
the blade keeps the skate on its curve).

The reduced twin ``skate_minimal.py`` (states x, y, θ, s, ω; ẋ = s cos θ,
ẏ = s sin θ, m ṡ = F, I ω̇ = τ) has the same optimum: the blade force does
no work and the reduced equations are Chaplygin's for the knife edge
(Bloch, *Nonholonomic Mechanics and Control*, 2nd ed., §1.6).

Source: the knife-edge/skate is the textbook nonholonomic system (Bloch §1.6;
Neimark & Fufaev); no published optimal cost was found, the reference is the
converged value of the reduced twin, 3.4733307362 [COMPUTED here]
(radau-3 with 200 and 400 intervals, radau-5 with 100 and Hermite–Simpson
with 400 agree to 4e-11 relative).
"""
import math

import casadi as ca
import numpy as np

import colloc as cl

#: ∫(F² + τ²) dt, reduced twin at a fine mesh [COMPUTED]; tolerance is relative.
REFERENCE = dict(
    value=3.4733307362,
    source="converged optimum of problems/skate_minimal.py [COMPUTED]: radau-3 N=200/400, radau-5 N=100 and HS N=400 agree to 4e-11 relative",
    tolerance=1e-6,
)

SOLVE = dict(scheme="hermite-simpson", intervals=60)

TWIN = "skate_minimal"


def build(duration=2.0, target=(1.0, 1.0, 0.5 * math.pi), mass=1.0, inertia=0.1):
    """Skate from rest at the origin heading +x to rest at ``target`` = (x, y, θ)."""
    body = cl.Multibody("skate", coordinates=["x", "y", "theta"], speeds=["vx", "vy", "omega"],
                        coordinate_bounds={"x": (-5, 5), "y": (-5, 5), "theta": (-2 * math.pi, 2 * math.pi)},
                        speed_bounds={"vx": (-10, 10), "vy": (-10, 10), "omega": (-20, 20)})
    x, y, theta = body.coordinates
    vx, vy, omega = body.speeds
    force = body.control("force", bounds=(-100, 100))
    torque = body.control("torque", bounds=(-100, 100))
    body.mass_matrix = ca.diag(ca.DM([mass, mass, inertia]))
    body.generalized_force = ca.vertcat(force * ca.cos(theta), force * ca.sin(theta), torque)
    body.nonholonomic("blade", ca.sin(theta) * vx - ca.cos(theta) * vy)

    xf, yf, thf = target
    prob = cl.Problem([body], t0=0.0, tf=duration, name="skate")
    prob.initial({x: 0.0, y: 0.0, theta: 0.0, omega: 0.0, **_forward_speed_zero(body, 0.0)})
    prob.final({x: xf, y: yf, theta: thf, omega: 0.0, **_forward_speed_zero(body, thf)})
    prob.minimize(integral=force**2 + torque**2)
    prob.guess(_guess(body, target))
    return prob


def _forward_speed_zero(body, heading):
    """Fix the speed component that the blade leaves free (the larger of |cos θ|, |sin θ|)."""
    vx, vy, _ = body.speeds
    return {vx: 0.0} if abs(math.cos(heading)) >= abs(math.sin(heading)) else {vy: 0.0}


def _guess(body, target):
    """Straight lines in x, y, θ; colloc derives the speeds from them and projects onto ψ = 0."""
    x, y, theta = body.coordinates
    xf, yf, thf = target
    return {x: (0.0, xf), y: (0.0, yf), theta: (0.0, thf)}


def multiplier_from_states(theta, vx, vy, omega, mass=1.0):
    """``λ = −m s ω`` with the forward speed ``s = ẋ cos θ + ẏ sin θ``."""
    theta, vx, vy, omega = (np.asarray(a, dtype=float) for a in (theta, vx, vy, omega))
    return -mass * (vx * np.cos(theta) + vy * np.sin(theta)) * omega
