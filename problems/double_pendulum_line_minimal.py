"""Double pendulum with its end effector on x = 0, in the one coordinate q0 (twin of ``double_pendulum_line.py``).

On the constraint branch q1 = π − 2 q0 the elbow is at (cos q0, sin q0) and
the end effector at (0, 2 sin q0); link 1 turns at q̇0 + q̇1 = −q̇0.  With the
masses and inertias of ``double_pendulum_line.py``

    T = ½ q̇0² (1 + 1 + 4 cos² q0 + 1),   V = 3 g sin q0,

and the joint torques do virtual work τ0 δq0 + τ1 δq1 = (τ0 − 2 τ1) δq0.

Objective
    minimize J = ∫₀¹ (τ0² + τ1²) dt
States
    ``dp.q0`` [rad], ``dp.u0`` [rad/s]
Controls
    ``dp.tau0``, ``dp.tau1`` [N m], bounds ±100
Constraints
    q0: 0.5 → π/2 with path bounds [0.5, π/2]; |u0| ≤ 50; speeds free at the ends.

Source: OpenSim Moco ``testMocoConstraints.cpp`` (``testDoublePendulumPointOnLine``;
the coupler q1 = −2 q0 + π is Moco's ``testDoublePendulumCoordinateCoupler``);
the reduction is derived above and the reference is this problem's converged
optimum 177.4049512932 [COMPUTED here] (radau-3 N=400; radau-5 N=100 and HS
N=400 agree to 2e-11 relative).
"""
import math

import casadi as ca

import colloc as cl

REFERENCE = dict(
    value=177.4049512932,
    source="converged optimum of this problem [COMPUTED]: radau-3 N=400 177.4049512932, radau-5 N=100 177.4049512938, HS N=400 177.4049512909",
    tolerance=1e-6,
)

SOLVE = dict(scheme="hermite-simpson", intervals=40)

GRAVITY = 9.80665


def build(duration=1.0, theta_initial=0.5, theta_final=0.5 * math.pi, gravity=GRAVITY):
    """Minimal double pendulum on the line; same parameters as ``double_pendulum_line.build``."""
    body = cl.Multibody("dp", coordinates=["q0"], speeds=["u0"],
                        coordinate_bounds={"q0": (0.25, 0.5 * math.pi + 0.5)}, speed_bounds={"u0": (-50, 50)})
    (q0,), (u0,) = body.coordinates, body.speeds
    tau0 = body.control("tau0", bounds=(-100, 100))
    tau1 = body.control("tau1", bounds=(-100, 100))
    body.kinetic_energy = 0.5 * u0**2 * (3 + 4 * ca.cos(q0) ** 2)
    body.potential_energy = 3 * gravity * ca.sin(q0)
    body.generalized_force = tau0 - 2 * tau1

    prob = cl.Problem([body], t0=0.0, tf=duration, name="double_pendulum_line_minimal")
    prob.initial({q0: theta_initial, u0: 0.0})
    prob.final({q0: theta_final, u0: 0.0})
    prob.minimize(integral=tau0**2 + tau1**2)
    prob.guess({q0: (theta_initial, theta_final)})
    return prob
