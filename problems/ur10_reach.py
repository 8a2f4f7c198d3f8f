"""Universal Robots UR10: a rest-to-rest reach with least effort under its URDF limits.

The UR10 of ``example-robot-data`` (``ur_description/urdf/ur10_robot.urdf``,
six revolute joints, gravity (0, 0, −9.81)) moves at rest from configuration
A to configuration B in ``duration`` s; the wrist turns 3 rad, so its joints
run at their 3.2 rad/s speed limit for most of the motion.

Objective
    minimize ∫₀ᵀ |τ|² dt (``effort``) + w ∫₀ᵀ |v̇|² dt (``acceleration``), w = ``acceleration_weight`` (default 1e-3: it raises ∫|τ|² by
    0.2 % and removes the torques' zig-zag; see below)
States
    ``ur10.<joint>`` [rad] and ``ur10.<joint>_speed`` [rad/s] for the six joints
Controls
    ``ur10.tau_<joint>`` [N m], bounded by the URDF effort limits (330, 330,
    150, 54, 54, 54 N m)
Constraints
    M(q) v̇ + c(q, v) = τ (from the URDF); the URDF's joint position limits and
    speed limits (2.16, 2.16, 3.15, 3.2, 3.2, 3.2 rad/s) as bounds;
    q(0) = A, q(T) = B, v(0) = v(T) = 0.

The last wrist link weighs 0.2 kg: its torque costs almost nothing, so ∫|τ|²
is nearly flat in its accelerations (a flat valley) and, on a speed plateau
at the limit, the torques zig-zag from grid point to grid point.  The speed
holds its limit at every grid point and overshoots it between them, on the
scheme's own interpolant.  Measured on 30 Hermite–Simpson intervals (largest wrist
speed on the interpolant, limit 3.2 rad/s):

=========================  ==========  ==============
w, path_points             ∫|τ|²       largest speed
=========================  ==========  ==============
0, 0                       2501.76     5.42 (reported)
0, 3                       2501.94     3.85
0, 6                       2501.97     3.29
1e-4, 0                    2502.62     3.54
1e-3, 3 (:data:`SOLVE`)    2507.21     3.205
1e-2, 0                    2521.44     3.203
=========================  ==========  ==============

Imposing the limits inside the intervals (``path_points``,
:mod:`colloc.transcription.path_points`) alone moves the overshoot between the
new points while the torques zig-zag; a small acceleration penalty removes the
zig-zag, and both together hold the limit everywhere to 0.2 %.  Without them
the result reports the overshoot (``SolveResult.accuracy["between"]``, a
warning, and a failed ``between:bounds`` check of ``colloc verify``).

Source: robot model from example-robot-data 6.0.0 (UR10 URDF, limits from
Universal Robots' description package).  No published optimum exists; the
reference is the URDF's speed limit itself.
"""
import casadi as ca

import colloc as cl
from colloc.model.urdf import example_robot

#: What is checked: the largest joint speed on the scheme's interpolant (20 points inside every interval)
#: with path_points=3, against the URDF's wrist speed limit 3.2 rad/s, to 1 %.
REFERENCE = dict(
    value=3.2,
    quantity="measure: largest wrist speed on the interpolant",
    source="UR10 URDF of example-robot-data 6.0.0: wrist velocity limit 3.2 rad/s (must hold everywhere, not only at grid points)",
    tolerance=1e-2,
)

SOLVE = dict(scheme="hermite-simpson", intervals=30, path_points=3)

START = (0.0, -1.57, 1.57, -1.57, -1.57, 0.0)
GOAL = (1.0, -1.2, 1.2, -1.0, -1.0, 3.0)
#: The joints whose speeds the check reads (limit 3.2 rad/s each).
WRIST = ("wrist_1_joint", "wrist_2_joint", "wrist_3_joint")


def build(duration=1.0, start=START, goal=GOAL, acceleration_weight=1e-3):
    """Rest-to-rest reach ``start`` → ``goal`` (rad) in ``duration`` s, least ∫|τ|² (+ ``acceleration_weight`` ∫|v̇|²)."""
    body = cl.Multibody.from_urdf(example_robot("ur_description/urdf/ur10_robot.urdf"), name="ur10")
    q, v = body.coordinates, body.speeds
    tau = body.generalized_force
    prob = cl.Problem([body], t0=0.0, tf=duration, name="ur10_reach")
    prob.initial({**dict(zip(q, start)), **{s: 0.0 for s in v}})
    prob.final({**dict(zip(q, goal)), **{s: 0.0 for s in v}})
    prob.minimize(integral=ca.sumsqr(tau), name="effort")
    if acceleration_weight:
        prob.minimize(integral=acceleration_weight * ca.sumsqr(body.a), name="acceleration")
    prob.guess({**{s: (a, b) for s, a, b in zip(q, start, goal)}})
    return prob


def measure(result, points=20):
    """The largest |speed| of the wrist joints on the scheme's interpolant, grid points and ``points`` inside each interval."""
    import numpy as np

    from colloc.simulate.limits import dense_columns

    _, dense = dense_columns(build(), result.trajectory, points)  # the problem only names the columns
    names = [f"ur10.{j}_speed" for j in WRIST]
    return float(max(np.abs(np.concatenate([dense[n], result.trajectory[n]])).max() for n in names))
