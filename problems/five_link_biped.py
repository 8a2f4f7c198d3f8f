"""Kelly's five-link planar biped: one periodic walking step with heel-strike impact (docs/problems.md C2).

Links 1 stance tibia, 2 stance femur, 3 torso, 4 swing femur, 5 swing tibia;
absolute angles q₁ … q₅ (counter-clockwise, 0 = vertical: torso up, legs
straight down), the stance foot pinned at the origin during the step.

Objective
    minimize ∫₀ᵀ Σ uᵢ² dt
States
    ``biped.q1`` … ``biped.q5`` [rad], speeds ``biped.dq1`` … ``biped.dq5`` [rad/s]
    (a :class:`colloc.Multibody`; equations of motion by AD of the Lagrangian)
Controls
    joint torques ``biped.u2`` stance knee, ``u3`` stance hip, ``u4`` swing hip,
    ``u5`` swing knee [N m], |uᵢ| ≤ 100; the stance ankle is unactuated (u₁ = 0).
    uᵢ acts on link i from its parent (1 ← ground, 2 ← 1, 3 ← 2, 4 ← 3, 5 ← 4),
    so the generalised forces are τ = (u₁ − u₂, u₂ − u₃, u₃ − u₄, u₄ − u₅, u₅).
Constraints
    T = 0.7 s fixed; |q| ≤ π/2, |q̇| ≤ 10; knees do not hyperextend:
    q₁ ≤ q₂, q₅ ≤ q₄; swing foot lands at P₅(T) = (D, 0) with D = 0.5 m —
    the event: guard y₅ = 0 crossed decreasing, y₅ ≥ 0 inside the step; its
    vertical speed ≥ 0 at t = 0 (lift-off).
Impact, relabelling, periodicity
    heel strike is Newton's law with e = 0 (no bounce, no slip) on the robot
    with *both* feet free (coordinates x, y of the stance foot and q):
    M(q)(v⁺ − v⁻) = J(q)ᵀ P, J v⁺ = 0, P_y ≥ 0, with J the Jacobian of
    P₅; then the legs swap, q⁺ᵢ = q⁻₆₋ᵢ, q̇⁺ᵢ = q̇⁺₆₋ᵢ, and the gait is
    periodic: x(0) = Δ(x(T)).  This equals Kelly's five angular-momentum
    conservations (checked in tests/test_phases.py).
Guess
    straight lines between the boundary poses q(0) = (−0.3, 0.7, 0, −0.5, −0.6)
    and its mirror q(T) = reversed q(0), constant speeds, zero torque (Kelly's
    ``MAIN.m``).

Source: M. Kelly, "An Introduction to Trajectory Optimization: How to Do Your
Own Direct Collocation", SIAM Review 59(4), 2017, §7, and its companion code
OptimTraj ``demo/fiveLinkBiped`` (parameters of RABBIT, Westervelt, Grizzle,
Koditschek 2003).  No published optimal cost was found [NOT FOUND]; the value
is checked for self-consistency only (scheme agreement, constraint rows).
"""
import math

import casadi as ca
import numpy as np

import colloc as cl
from colloc.model.impact import Impact
from colloc.pipeline.multiphase_problem import MultiPhaseProblem, Phase

SOLVE = dict(scheme="hermite-simpson", intervals=25)

MASS = (3.2, 6.8, 20.0, 6.8, 3.2)
INERTIA = (0.93, 1.08, 2.22, 1.08, 0.93)
LENGTH = (0.4, 0.4, 0.625, 0.4, 0.4)
COM = (0.128, 0.163, 0.2, 0.163, 0.128)
GRAVITY = 9.81
#: Kelly's boundary pose at t = 0; the pose at T is its mirror image.
START_POSE = (-0.3, 0.7, 0.0, -0.5, -0.6)


def kinematics(q, foot=(0.0, 0.0)):
    """Joint points P₀ … P₅ and centres of mass G₁ … G₅ (2-vectors) of the pose ``q``.

    ``foot`` is the stance foot P₀.  Works on numbers and CasADi symbols.
    """
    up = [ca.vertcat(-ca.sin(q[i]), ca.cos(q[i])) for i in range(3)]
    down = [ca.vertcat(ca.sin(q[i]), -ca.cos(q[i])) for i in (3, 4)]
    e = up + down
    l, c = LENGTH, COM
    P0 = ca.vertcat(*foot)
    P1 = P0 + l[0] * e[0]
    P2 = P1 + l[1] * e[1]
    P3 = P2 + l[2] * e[2]
    P4 = P2 + l[3] * e[3]
    P5 = P4 + l[4] * e[4]
    G = [P1 - c[0] * e[0], P2 - c[1] * e[1], P3 - c[2] * e[2], P2 + c[3] * e[3], P4 + c[4] * e[4]]
    return [P0, P1, P2, P3, P4, P5], G


def _energies(body, q, foot):
    _, G = kinematics(q, foot)
    T = 0
    for k in range(5):
        Gdot = ca.jtimes(G[k], body.q, body.v)
        T += 0.5 * MASS[k] * ca.sumsqr(Gdot) + 0.5 * INERTIA[k] * body.v[body.num_speeds - 5 + k] ** 2
    V = sum(MASS[k] * GRAVITY * G[k][1] for k in range(5))
    return T, V


def stance_model(max_torque=100.0, max_speed=10.0):
    """The robot with its stance foot pinned at the origin: q₁ … q₅, torques u₂ … u₅."""
    names = [f"q{i}" for i in range(1, 6)]
    body = cl.Multibody("biped", coordinates=names, speeds=[f"dq{i}" for i in range(1, 6)],
                        coordinate_bounds={n: (-math.pi / 2, math.pi / 2) for n in names},
                        speed_bounds={f"dq{i}": (-max_speed, max_speed) for i in range(1, 6)})
    u = [0] + [body.control(f"u{i}", bounds=(-max_torque, max_torque)) for i in range(2, 6)]
    body.kinetic_energy, body.potential_energy = _energies(body, body.q, (0.0, 0.0))
    body.generalized_force = ca.vertcat(u[0] - u[1], u[1] - u[2], u[2] - u[3], u[3] - u[4], u[4])
    P, _ = kinematics(body.q)
    for name, k in (("stance_foot", 0), ("stance_knee", 1), ("hip", 2), ("head", 3), ("hip_", 2), ("swing_knee", 4), ("swing_foot", 5)):
        body.point(name, P[k])  # one polyline for animations: stance leg, torso, back to the hip, swing leg
    return body, u[1:]


def free_model():
    """The robot with both feet free (stance foot at (x, y)): the body of the heel-strike impact."""
    body = cl.Multibody("free", coordinates=["x", "y"] + [f"q{i}" for i in range(1, 6)],
                        speeds=["dx", "dy"] + [f"dq{i}" for i in range(1, 6)])
    q = body.q
    body.kinetic_energy, body.potential_energy = _energies(body, q[2:], (q[0], q[1]))
    return body


def heel_strike(stance):
    """The impact of the swing foot (plastic, no slip) and the ``pre``/``post`` maps of the leg swap."""
    free = free_model()
    points, _ = kinematics(free.q[2:], (free.q[0], free.q[1]))
    impact = Impact(free, contact=points[5], restitution=0.0, normal=1, name="heel_strike")
    fq, fv = free.coordinates, free.speeds
    sq, sv = stance.coordinates, stance.speeds
    pre = {fq[0]: 0.0, fq[1]: 0.0, fv[0]: 0.0, fv[1]: 0.0}
    pre.update({fq[2 + i]: sq[i] for i in range(5)})
    pre.update({fv[2 + i]: sv[i] for i in range(5)})
    post = {sq[i]: fq[2 + 4 - i] for i in range(5)}
    post.update({sv[i]: fv[2 + 4 - i] for i in range(5)})
    return impact, pre, post


def build(step_length=0.5, duration=0.7, max_torque=100.0):
    """One periodic step of length ``step_length`` [m] in ``duration`` [s]."""
    body, u = stance_model(max_torque)
    q, v = body.coordinates, body.speeds
    points, _ = kinematics(body.q)
    foot = points[5]
    foot_speed = ca.jtimes(foot, body.q, body.v)
    prob = cl.Problem([body], t0=0.0, tf=duration, name="five_link_biped")
    prob.minimize(integral=sum(ui**2 for ui in u), name="torque_squared")
    prob.path(q[0] - q[1], upper=0.0, name="stance_knee")
    prob.path(q[4] - q[3], upper=0.0, name="swing_knee")
    prob.boundary(prob.at_tf(foot[0]), step_length, step_length, name="step_length")
    prob.boundary(prob.at_t0(foot_speed[1]), 0.0, math.inf, name="lift_off")
    start = np.array(START_POSE)
    end = start[::-1]
    guess = {qi: (a, b) for qi, a, b in zip(q, start, end)}
    guess.update({vi: (b - a) / duration for vi, a, b in zip(v, start, end)})
    guess.update({ui: 0.0 for ui in u})
    prob.guess(guess)
    step = Phase(prob, name="step")
    step.end_when(foot[1], "decreasing", inside=True, name="heel_strike")
    mp = MultiPhaseProblem([step], name="five_link_biped")
    impact, pre, post = heel_strike(body)
    mp.periodic(impact=impact, pre=pre, post=post)
    return mp


def draw_steps(traj, path=None, steps=2, poses=6, step_length=0.5, spacing=0.45):
    """A strip of stick-figure poses over ``steps`` steps (the legs swap at each heel strike).

    ``traj`` is the step's Trajectory; ``poses`` frames per step, drawn left to
    right, each moved ``spacing`` [m] beyond its true position so they do not
    overlap; the stance leg is the darker one.  Returns the matplotlib Figure
    (saved to ``path`` if given).
    """
    import matplotlib.pyplot as plt

    qs = [f"biped.q{i}" for i in range(1, 6)]
    times = np.linspace(traj.time[0], traj.time[-1], poses + 1)[:-1]
    sampled = traj.sample(times)
    frames = steps * poses
    fig, ax = plt.subplots(figsize=(1.0 + 0.62 * frames, 2.4))
    colors = ("tab:blue", "tab:orange")
    left, right = 0.0, 0.0
    for s in range(steps):
        for j in range(times.size):
            q = np.array([sampled[n][j] for n in qs])
            shift = s * step_length + (s * poses + j) * spacing
            P, _ = kinematics(q, (shift, 0.0))
            P = np.array([np.array(p, dtype=float).ravel() for p in P])
            stance, swing = colors[s % 2], colors[(s + 1) % 2]
            ax.plot(P[[0, 1, 2], 0], P[[0, 1, 2], 1], color=stance, lw=2.4)
            ax.plot(P[[2, 3], 0], P[[2, 3], 1], color="0.25", lw=3)
            ax.plot(P[[2, 4, 5], 0], P[[2, 4, 5], 1], color=swing, lw=1.6, alpha=0.8)
            left, right = min(left, P[:, 0].min()), max(right, P[:, 0].max())
    ax.plot([left - 0.2, right + 0.2], [0.0, 0.0], color="0.5", lw=1)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"five-link biped: {steps} periodic steps, {poses} poses each (legs swap at heel strike)", fontsize=9)
    fig.tight_layout()
    if path is not None:
        from colloc.viz.plot import save_figure

        save_figure(fig, path)
    return fig
