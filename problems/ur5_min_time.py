"""Universal Robots UR5: minimum-time point-to-point motion under its URDF limits.

The UR5 of ``example-robot-data`` (``ur_description/urdf/ur5_robot.urdf``, six
revolute joints, gravity (0, 0, −9.81)) moves at rest from configuration A
to configuration B.  ``objective="time"`` asks for the least final time;
``objective="effort"`` asks for the least ∫|τ|² in a given ``duration``
(run it with the minimum time found first: the same motion, smoother).

Objective
    ``"time"``: minimize T (+ ``regularization`` · ∫|τ|² dt, default 0: a
    weight of 1e-6 already lengthens T by 0.7 %);
    ``"effort"``: minimize ∫₀ᵀ |τ|² dt with T = ``duration`` fixed.
States
    ``ur5.<joint>`` [rad] and ``ur5.<joint>_speed`` [rad/s] for the six joints
Controls
    ``ur5.tau_<joint>`` [N m], bounded by the URDF effort limits (150 N m for
    the three large joints, 28 N m for the wrist)
Constraints
    M(q) v̇ + c(q, v) = τ (recursive Newton–Euler / composite rigid body from
    the URDF); joint position limits and |v| ≤ 3.15 rad/s from the URDF;
    q(0) = A, q(T) = B, v(0) = v(T) = 0.

Only the shoulder-lift joint moves between A and B (0.25 rad, arm stretched
out), so its 150 N m effort limit, not its speed limit, sets the time.

What is checked (tests/test_urdf_problems.py): the minimum-time solve
converges, the final time is reported, and the shoulder-lift torque sits at
its effort limit at most grid points (bang-bang); the least-∫|τ|² motion in
1.01 T* (at T* itself no freedom is left: the bang-bang motion is the only
feasible one) has a far smaller mean |dτ/dt| and ∫|τ|².  Both are checked by
forward simulation (``colloc.verify``).  No published optimum exists
(no ``REFERENCE``).

Source: robot model from example-robot-data 6.0.0 (UR5 URDF, limits from
Universal Robots' description package); bang-bang structure of time-optimal
robot motion: Bobrow, Dubowsky & Gibson, "Time-optimal control of robotic
manipulators along specified paths", IJRR 4(3), 1985.
"""
import casadi as ca

import colloc as cl
from colloc.model.urdf import example_robot

SOLVE = dict(scheme="hermite-simpson", intervals=40)

START = (0.0, -0.1, 0.0, -1.57, 0.0, 0.0)
GOAL = (0.0, -0.35, 0.0, -1.57, 0.0, 0.0)


def build(objective="time", duration=1.0, start=START, goal=GOAL, regularization=0.0, max_duration=5.0, acceleration_weight=0.0):
    """Rest-to-rest motion ``start`` → ``goal`` (rad) in least time, or least ∫|τ|² in ``duration`` s."""
    if objective not in ("time", "effort"):
        raise cl.ProblemError(f"`objective` must be \"time\" or \"effort\"; got {objective!r}.")
    body = cl.Multibody.from_urdf(example_robot("ur_description/urdf/ur5_robot.urdf"), name="ur5")
    q, v = body.coordinates, body.speeds
    tau = body.generalized_force
    tf = (0.05, max_duration) if objective == "time" else duration
    prob = cl.Problem([body], t0=0.0, tf=tf, name="ur5_min_time")
    prob.initial({**dict(zip(q, start)), **{s: 0.0 for s in v}})
    prob.final({**dict(zip(q, goal)), **{s: 0.0 for s in v}})
    if objective == "time" and regularization:
        prob.minimize(final=prob.tf, integral=regularization * ca.sumsqr(tau))
    elif objective == "time":
        prob.minimize(final=prob.tf)
    else:
        prob.minimize(integral=ca.sumsqr(tau), name="effort")
    if acceleration_weight:  # + w ∫|v̇|² dt (docs/robots.md)
        prob.minimize(integral=acceleration_weight * ca.sumsqr(body.a), name="acceleration")
    prob.guess({**{s: (a, b) for s, a, b in zip(q, start, goal)}})
    return prob
