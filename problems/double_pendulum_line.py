"""Double pendulum whose end effector is held on a vertical line (Moco's PointOnLine test).

Two links of length 1 hang from pin joints: link i is a 1 kg point mass at
its distal end with a rotational inertia of 1 kg m² about that point (Moco's
``createDoublePendulumModel``: ``Body(1, Vec3(0), Inertia(1))`` with the
joint 1 m away).  q0 is the absolute angle of link 0 from +x, q1 the angle
of link 1 relative to link 0, y is up, gravity 9.80665 m/s² along −y.
Torque actuators τ0, τ1 drive the joints.  The end effector
P2 = (cos q0 + cos(q0 + q1), sin q0 + sin(q0 + q1)) is held on the vertical
line x = 0 through the origin: φ = cos q0 + cos(q0 + q1) = 0 (holonomic).

Objective
    minimize J = ∫₀¹ (τ0² + τ1²) dt
States
    ``dp.q0``, ``dp.q1`` [rad]; ``dp.u0``, ``dp.u1`` [rad/s]
Controls
    ``dp.tau0``, ``dp.tau1`` [N m], bounds ±100
Constraints
    Lagrangian dynamics with G = Φ_q = −[sin q0 + sin(q0+q1), sin(q0+q1)];
    q0: 0.5 → π/2 (path bounds [0.5, π/2] as in Moco), speeds free at both
    ends (|u| ≤ 50); q1 is left free at the ends and follows from φ = 0 on
    the branch q1 = π − 2 q0 selected by its bounds [−0.5, π − 0.5] (Moco
    fixes q1 too, which repeats φ at the endpoints).

The minimal twin ``double_pendulum_line_minimal.py`` writes the motion in
q0 alone (q1 = π − 2 q0, the end effector at (0, 2 sin q0)).  Moco checks only
the constraint errors (1e-6), the end effector's x (1e-2) and a forward
simulation; it publishes no optimal cost.

Source: OpenSim Moco ``testMocoConstraints.cpp``, ``testDoublePendulumPointOnLine``
and ``createDoublePendulumModel`` (docs/moco.md §6); the reference is the
converged optimum of the minimal twin, 177.4049512932 [COMPUTED here].
On this branch the constraint is linear in q (q1 = π − 2 q0), which every
scheme preserves exactly: both formulations give the same discrete optimum
on every mesh.
"""
import math

import casadi as ca
import numpy as np

import colloc as cl

#: ∫(τ0² + τ1²) dt, minimal twin at a fine mesh [COMPUTED]; tolerance is relative.
REFERENCE = dict(
    value=177.4049512932,
    source="converged optimum of problems/double_pendulum_line_minimal.py [COMPUTED]: radau-3 N=400 177.4049512932, radau-5 N=100 177.4049512938, HS N=400 177.4049512909",
    tolerance=1e-6,
)

SOLVE = dict(scheme="hermite-simpson", intervals=40)

TWIN = "double_pendulum_line_minimal"

GRAVITY = 9.80665  # OpenSim's default gravity


def build(duration=1.0, theta_initial=0.5, theta_final=0.5 * math.pi, gravity=GRAVITY):
    """End effector on x = 0; q0 swings from ``theta_initial`` to ``theta_final``."""
    body = cl.Multibody("dp", coordinates=["q0", "q1"], speeds=["u0", "u1"],
                        coordinate_bounds={"q0": (0.25, 0.5 * math.pi + 0.5), "q1": (-0.5, math.pi - 0.5)},
                        speed_bounds={"u0": (-50, 50), "u1": (-50, 50)})
    q0, q1 = body.coordinates
    u0, u1 = body.speeds
    tau0 = body.control("tau0", bounds=(-100, 100))
    tau1 = body.control("tau1", bounds=(-100, 100))
    p1 = ca.vertcat(ca.cos(q0), ca.sin(q0))
    p2 = p1 + ca.vertcat(ca.cos(q0 + q1), ca.sin(q0 + q1))
    v1, v2 = ca.jtimes(p1, body.q, body.v), ca.jtimes(p2, body.q, body.v)
    body.kinetic_energy = 0.5 * (ca.sumsqr(v1) + ca.sumsqr(v2) + u0**2 + (u0 + u1)**2)
    body.potential_energy = gravity * (p1[1] + p2[1])
    body.generalized_force = ca.vertcat(tau0, tau1)
    body.holonomic("line", p2[0])
    body.point("elbow", p1)
    body.point("tip", p2)

    prob = cl.Problem([body], t0=0.0, tf=duration, name="double_pendulum_line")
    prob.initial({q0: theta_initial, u0: 0.0})
    prob.final({q0: theta_final, u0: 0.0})
    prob.minimize(integral=tau0**2 + tau1**2)
    prob.guess({q0: (theta_initial, theta_final), q1: (math.pi - 2 * theta_initial, math.pi - 2 * theta_final)})
    return prob


def tip(q0, q1):
    """End-effector position (x, y) for coordinate arrays, shape (2, ...)."""
    q0, q1 = np.asarray(q0, dtype=float), np.asarray(q1, dtype=float)
    return np.array([np.cos(q0) + np.cos(q0 + q1), np.sin(q0) + np.sin(q0 + q1)])
