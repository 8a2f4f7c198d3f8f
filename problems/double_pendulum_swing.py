"""Double pendulum swing-up with torques at both joints, minimum effort (Lagrangian model).

Two point masses ``m1``, ``m2`` on massless rods of lengths ``l1``, ``l2``:
q1 is the angle of the upper rod from the downward vertical, q2 the angle of
the lower rod relative to the upper one; y is up, gravity g along −y.  Torques
τ1 (shoulder, on the upper rod against the ground) and τ2 (elbow, between the
rods) drive it from hanging at rest to upright at rest in ``duration`` seconds.

Objective
    minimize J = ∫₀ᵀ (τ1² + τ2²) dt
States
    ``dp.q1``, ``dp.q2`` [rad]; ``dp.w1``, ``dp.w2`` [rad/s]
Controls
    ``dp.tau1``, ``dp.tau2`` [N m], bounds ±``max_torque``
Constraints
    q(0) = (0, 0), q̇(0) = 0; q(T) = (π, 0), q̇(T) = 0.  Dynamics from
    L = T − V with the elbow at l1 (sin q1, −cos q1) and the tip at the elbow
    plus l2 (sin(q1+q2), −cos(q1+q2)); generalised forces (τ1, τ2).

This is the problem on which ``scheme="midpoint-vi"`` (discrete mechanics,
``colloc.pipeline.variational``) is checked against Hermite–Simpson: its optimum
approaches the reference at second order as the mesh refines
(``tests/test_variational.py``).

Source: the model is the textbook double pendulum (e.g. R. Tedrake,
*Underactuated Robotics*, ch. 3, "The Acrobot", here fully actuated), the
swing-up task as in Kelly 2017 §6 for the cart-pole; the reference value is
this problem's converged Hermite–Simpson optimum at 400 intervals [COMPUTED
here, IPOPT tol 1e-12; 200 intervals agree to 6e-9 relative].
"""
import math

import casadi as ca

import colloc as cl

#: ∫(τ1² + τ2²) dt of the continuous optimum [COMPUTED]; tolerance is relative.
REFERENCE = dict(
    value=162.15184481,
    source="converged Hermite–Simpson optimum, 400 intervals [COMPUTED here] (200 intervals: 162.15184391)",
    tolerance=1e-5,
)

SOLVE = dict(scheme="hermite-simpson", intervals=40)

GRAVITY = 9.81


def build(duration=2.0, m1=1.0, m2=1.0, l1=1.0, l2=1.0, gravity=GRAVITY, max_torque=100.0):
    """Swing-up from (0, 0) to (π, 0), at rest at both ends."""
    body = cl.Multibody("dp", coordinates=["q1", "q2"], speeds=["w1", "w2"])
    q1, q2 = body.coordinates
    w1, w2 = body.speeds
    tau1 = body.control("tau1", bounds=(-max_torque, max_torque))
    tau2 = body.control("tau2", bounds=(-max_torque, max_torque))
    elbow = l1 * ca.vertcat(ca.sin(q1), -ca.cos(q1))
    tip = elbow + l2 * ca.vertcat(ca.sin(q1 + q2), -ca.cos(q1 + q2))
    body.kinetic_energy = 0.5 * m1 * ca.sumsqr(ca.jtimes(elbow, body.q, body.v)) + 0.5 * m2 * ca.sumsqr(ca.jtimes(tip, body.q, body.v))
    body.potential_energy = gravity * (m1 * elbow[1] + m2 * tip[1])
    body.generalized_force = ca.vertcat(tau1, tau2)
    body.point("elbow", elbow)
    body.point("tip", tip)

    prob = cl.Problem([body], t0=0.0, tf=duration, name="double_pendulum_swing")
    prob.initial({q1: 0.0, q2: 0.0, w1: 0.0, w2: 0.0})
    prob.final({q1: math.pi, q2: 0.0, w1: 0.0, w2: 0.0})
    prob.minimize(integral=tau1**2 + tau2**2)
    prob.guess({q1: (0.0, math.pi), q2: 0.0, w1: math.pi / duration, w2: 0.0, tau1: 0.0, tau2: 0.0})
    return prob
