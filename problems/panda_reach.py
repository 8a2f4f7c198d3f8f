"""Franka Emika Panda reaching around a spherical obstacle, least ∫|τ|² (URDF model).

The Panda arm of ``example-robot-data`` (``panda_description/urdf/panda.urdf``,
7 revolute joints; the two finger joints locked at 0) starts at rest in
configuration A and must be at rest in configuration B at ``t = duration``;
a sphere of radius ``radius`` centred at ``centre`` sits across the straight
joint-space path, which carries the hand through it.

Objective
    minimize ∫₀ᵀ |τ|² dt
States
    ``panda.panda_joint1`` … ``panda.panda_joint7`` [rad] and their ``_speed`` [rad/s]
Controls
    ``panda.tau_panda_joint1`` … ``panda.tau_panda_joint7`` [N m]
Constraints
    M(q) v̇ + c(q, v) = τ (recursive Newton–Euler / composite rigid body from
    the URDF, gravity (0, 0, −9.81)); the URDF's position, velocity and effort
    limits as bounds; q(0) = A, q(T) = B, v(0) = v(T) = 0;
    |p_k(q) − centre|² ≥ radius² at every collocation point for the origin
    p_k of every moving link frame (``OBSTACLE_LINKS``).

What is checked (tests/test_urdf_problems.py): the solve converges; every
link origin clears the sphere at every grid point (to the NLP tolerance) and,
on the scheme's interpolant between them, to 2 %; the least-∫|τ|² motion
without the obstacle passes through the sphere (the obstacle is active) and
costs less.  ``colloc verify``: the open-loop arm is unstable (a state error
grows e-fold about every 0.15 s), so the forward simulation drifts over the
1.5 s horizon (max state error 30 at 12 intervals, 6.6 at 24); the test
checks that this drift falls as the mesh is refined.

No published optimum exists for this set-up (no ``REFERENCE``).

Source: robot model from example-robot-data 6.0.0 (Franka Emika Panda URDF);
obstacle-avoidance by link-origin distance as in Schulman et al., "Motion
planning with sequential convex optimization and convex collision checking",
IJRR 33(9), 2014 (spheres around link frames).
"""
import casadi as ca
import numpy as np

import colloc as cl
from colloc.model.urdf import example_robot

SOLVE = dict(scheme="hermite-simpson", intervals=50)

ARM = [f"panda_joint{i}" for i in range(1, 8)]
#: Link frames kept out of the sphere (every link that moves with the arm).
OBSTACLE_LINKS = [f"panda_link{i}" for i in range(2, 9)] + ["panda_hand", "panda_hand_tcp"]
START = (0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785)
GOAL = (1.5, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785)


def robot(name="panda"):
    """The Panda arm as a fixed-base :class:`~colloc.Multibody` (fingers locked)."""
    return cl.Multibody.from_urdf(example_robot("panda_description/urdf/panda.urdf"), name=name, joints=ARM)


def build(duration=1.5, centre=(0.1, 0.1, 0.85), radius=0.1, start=START, goal=GOAL, acceleration_weight=0.0):
    """Reach from ``start`` to ``goal`` (joint angles, rad) in ``duration`` s around the sphere
    (+ ``acceleration_weight`` · ∫|v̇|² dt, docs/robots.md)."""
    return problem(robot(), duration, centre, radius, start, goal, acceleration_weight)


def problem(body, duration=1.5, centre=(0.1, 0.1, 0.85), radius=0.1, start=START, goal=GOAL, acceleration_weight=0.0):
    """The reaching problem on a given Panda body (any implementation of its dynamics)."""
    c = ca.DM(np.asarray(centre, dtype=float).reshape(3, 1))
    q, v = body.coordinates, body.speeds
    tau = body.generalized_force
    prob = cl.Problem([body], t0=0.0, tf=duration, name="panda_reach")
    prob.initial({**dict(zip(q, start)), **{s: 0.0 for s in v}})
    prob.final({**dict(zip(q, goal)), **{s: 0.0 for s in v}})
    for link in OBSTACLE_LINKS:
        p, _ = body.frame(link)
        prob.path(ca.sumsqr(p - c), lower=radius**2, name=f"clear_{link}")
    prob.minimize(integral=ca.sumsqr(tau), name="effort")
    if acceleration_weight:
        prob.minimize(integral=acceleration_weight * ca.sumsqr(body.a), name="acceleration")
    prob.guess({s: (a, b) for s, a, b in zip(q, start, goal)})
    return prob


def clearance(body, trajectory, centre=(0.1, 0.1, 0.85)):
    """Smallest distance from any ``OBSTACLE_LINKS`` origin to ``centre`` at every grid point, shape (num_points,)."""
    q = np.vstack([trajectory.value(s) for s in body.coordinates])
    f = ca.Function("origins", [body.q], [ca.horzcat(*[body.frame(l)[0] for l in OBSTACLE_LINKS])])
    out = np.asarray(f.map(q.shape[1])(q)).reshape(3, q.shape[1], len(OBSTACLE_LINKS))
    return np.linalg.norm(out - np.asarray(centre, dtype=float).reshape(3, 1, 1), axis=0).min(axis=1)
