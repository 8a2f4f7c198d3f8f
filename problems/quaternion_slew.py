"""Rest-to-rest slew of a rigid body with unit-quaternion orientation (a position-level invariant).

A free rigid body with principal moments of inertia J = diag(J₁, J₂, J₃)
turns under body-frame torques τ.  Its orientation is the unit quaternion
q = (q_w, q_x, q_y, q_z) (nq = 4) and its speeds the body angular velocity ω
(nv = 3), with the kinematics q̇ = ½ Q(q) ω, Q(q) = [−q_v; q_w I + [q_v]×]
(the quaternion product q ⊗ (0, ω)/2).  The unit norm φ = |q|² − 1 is kept
by the kinematics (Φ_q N = qᵀQ(q) ≡ 0), so colloc keeps it at position level
only, without a multiplier: a discretisation drifts off it, the continuous
motion never does.

Objective
    minimize J = ∫₀ᵀ |τ|² dt
States
    ``body.qw``, ``body.qx``, ``body.qy``, ``body.qz``; ``body.wx``,
    ``body.wy``, ``body.wz`` [rad/s]
Controls
    ``body.tau_x``, ``body.tau_y``, ``body.tau_z`` [N m]
Constraints
    J ω̇ + ω × Jω = τ (mass-matrix route); |q|² = 1 (invariant);
    at rest at t = 0 in the identity orientation and at t = T rotated by
    ``angle`` about the unit ``axis``; the vector part of q is fixed at both
    ends and q_w ≥ 0 is left to the unit-norm row (fixing all four repeats it).

Analytic optimum [DERIVED] for a slew about a principal axis k (the default:
axis z, J₃ = 3, angle π/2, T = 2).  Rotation about a principal axis keeps
ω × Jω = 0, so the motion is the single-axis problem J_k θ̈ = τ_k with
θ: 0 → θ_f rest to rest; its minimum of ∫τ² is
τ(t) = J_k θ_f (6/T² − 12 t/T³), θ(t) = θ_f (3s² − 2s³) with s = t/T, and

    J* = 12 J_k² θ_f² / T³  (= 12·9·(π/2)²/8 = 33.31... for the default).

(The single-axis motion satisfies the first-order conditions of the 3-D
problem by symmetry; the twin ``quaternion_slew_minimal.py`` solves it
numerically.)

Source: quaternion kinematics as in Shuster, "A survey of attitude
representations", J. Astronaut. Sci. 41(4), 1993 (q̇ = ½ q ⊗ ω); the
rest-to-rest minimum-∫τ² profile is the double-integrator minimum-energy
solution (docs/problems.md A4a, scaled by J_k); J* derived above.
"""
import math

import casadi as ca
import numpy as np

import colloc as cl

#: 12 J_k² θ_f² / T³ for the default principal-axis slew [DERIVED]; tolerance is relative.
REFERENCE = dict(
    value=12 * 3.0**2 * (0.5 * math.pi) ** 2 / 2.0**3,
    source="derived in the module docstring: 12 J_k² θ_f²/T³ with J_k = 3, θ_f = π/2, T = 2 (docs/problems.md A4a scaled)",
    tolerance=1e-6,
)

SOLVE = dict(scheme="hermite-simpson", intervals=60)

TWIN = "quaternion_slew_minimal"


def quaternion_matrix(q):
    """``Q(q)`` with ``q̇ = ½ Q(q) ω`` (ω in the body frame), shape (4, 3)."""
    w, x, y, z = ca.vertsplit(q)
    return ca.vertcat(ca.horzcat(-x, -y, -z), ca.horzcat(w, -z, y), ca.horzcat(z, w, -x), ca.horzcat(-y, x, w))


def build(duration=2.0, angle=0.5 * math.pi, axis=(0.0, 0.0, 1.0), inertia=(1.0, 2.0, 3.0)):
    """Rest-to-rest slew by ``angle`` about ``axis`` (body frame = world frame at t = 0)."""
    axis = np.asarray(axis, dtype=float)
    axis = axis / np.linalg.norm(axis)
    body = cl.Multibody("body", coordinates=["qw", "qx", "qy", "qz"], speeds=["wx", "wy", "wz"],
                        kinematics=lambda q: 0.5 * quaternion_matrix(q),
                        coordinate_bounds={"qw": (-1.5, 1.5), "qx": (-1.5, 1.5), "qy": (-1.5, 1.5), "qz": (-1.5, 1.5)},
                        speed_bounds={"wx": (-10, 10), "wy": (-10, 10), "wz": (-10, 10)})
    J = ca.DM(inertia)
    w = body.v
    torque = ca.vertcat(*[body.control(f"tau_{c}", bounds=(-100, 100)) for c in "xyz"])
    body.mass_matrix = ca.diag(J)
    body.bias_force = ca.cross(w, J * w)
    body.generalized_force = torque
    body.holonomic("unit", ca.sumsqr(body.q) - 1)

    qw, qx, qy, qz = body.coordinates
    wx, wy, wz = body.speeds
    final = np.r_[math.cos(angle / 2), math.sin(angle / 2) * axis]
    prob = cl.Problem([body], t0=0.0, tf=duration, name="quaternion_slew")
    prob.initial({qw: (0.0, 1.5), qx: 0.0, qy: 0.0, qz: 0.0, wx: 0.0, wy: 0.0, wz: 0.0})
    prob.final({qw: (0.0, 1.5), qx: final[1], qy: final[2], qz: final[3], wx: 0.0, wy: 0.0, wz: 0.0})
    prob.minimize(integral=ca.sumsqr(torque))
    times = np.linspace(0.0, duration, 21)
    half = 0.5 * angle * times / duration
    guess = {qw: (times, np.cos(half))}
    for sym, a in zip((qx, qy, qz), axis):
        guess[sym] = (times, a * np.sin(half))
    for sym, a in zip((wx, wy, wz), axis):
        guess[sym] = a * angle / duration
    prob.guess(guess)
    return prob


def exact_objective(duration=2.0, angle=0.5 * math.pi, principal_inertia=3.0):
    """``12 J_k² θ_f² / T³`` for a rest-to-rest slew about a principal axis."""
    return 12 * principal_inertia**2 * angle**2 / duration**3
