"""Kelly's five-link biped from a URDF walks one periodic step without a contact schedule (contact-implicit).

The robot is ``problems/data/five_link_biped.urdf``: the masses, lengths, centres of mass and inertias of
``problems/five_link_biped.py`` (Kelly 2017, RABBIT's parameters) on a planar floating base written as a
chain, world → prismatic ``base_x`` → prismatic ``base_z`` → revolute ``base_pitch`` → torso (its frame at
the hip), then ``left_hip`` → ``left_knee`` and ``right_hip`` → ``right_knee``; every revolute axis is −y,
so angles turn counter-clockwise in the x–z plane as Kelly's do: ``base_pitch`` is the torso's angle, a hip
angle the femur's minus the torso's, a knee angle the tibia's minus the femur's.  Each foot, the end of its
tibia 0.4 m below the knee, is a unilateral contact with the ground ``z ≥ 0`` with Coulomb friction
``μ = 0.8`` and plastic impacts: the transcription decides by itself which foot pushes when, slides or
strikes (``contact="implicit"``).

The feet are planar contacts (gap = the foot's height, tangent = its x), declared from the URDF's tibia
frames.  ``Multibody.contact_point`` would declare a 3-D contact whose second tangent (y) has an all-zero
Jacobian in this planar model: its friction would be a free variable acting on nothing.

Objective
    minimize ∫₀ᵀ Σ τ² dt over the hip and knee torques (Kelly's ∫Σu²: his u₂ … u₅ are these torques up to
    sign).
States
    ``biped.base_x``, ``biped.base_z`` [m] (the hip), ``biped.base_pitch``, ``biped.left_hip``,
    ``biped.left_knee``, ``biped.right_hip``, ``biped.right_knee`` [rad] and their ``_speed`` columns.
Controls
    ``biped.tau_left_hip`` … ``biped.tau_right_knee`` [N m], |τ| ≤ 100; no torque at the base (the stance
    ankle is unactuated).
Contacts
    ``biped.left_foot``, ``biped.right_foot``: columns ``normal_force``, ``friction_force``, ``impulse``,
    ``friction_impulse``.
Constraints
    T = 0.7 s; Kelly's bounds on the five absolute link angles (|θ| ≤ π/2) and their rates (|θ̇| ≤ 10);
    knees do not hyperextend (the URDF's limit, knee ≤ 0); the step: x(T) = x(0) + D with D = 0.5 m, x(0) = 0,
    and every other state at T the left/right mirror of its value at 0 (the symmetry pairs of the gait2d
    problems' periodicity goal, ``colloc.goals.periodicity``); at t0 each foot's normal speed within
    ``REST_RATE`` times its height (a foot on the ground rests there: no impulse acts at t0, and a foot leaving
    or closing at 1e-4 m/s was an impact at once for the event-driven simulator).
Guess
    Kelly's: straight lines between his boundary pose (left foot at the origin) and its mirror half a stride
    on, zero torques, zero contact forces, no schedule.

:func:`build_two_phase` is the multi-phase version of the same step: ``problems/five_link_biped.py`` (single
support on a pinned stance foot, a heel strike with Newton's law and the leg swap).  It has no ground: its
stance foot may pull on the ground and needs unbounded friction, and its support is single throughout.

Measured (docs/urdf.md, 12 intervals, free steps): 480.6729, the gait Kelly's (single support, the strike at
0.365 s with 27.6 N s inside the cone, the standing foot sticking up to it), against 469.6287 for Kelly's two
phases at 12 intervals (2.4 % above).  ``colloc verify`` passes on both files.  (Before the friction rows of an
interval ending on an impulse read its pre-impact speeds the standing foot slid 0.15 m/s into the strike and
the cost was 14 % below Kelly's.)

Source: M. Kelly, "An Introduction to Trajectory Optimization: How to Do Your Own Direct Collocation",
SIAM Review 59(4), 2017, §7 (the step, bounds and guess); contact-implicit collocation after Posa, Cantu &
Tedrake, IJRR 33(1), 2014.  No published optimum for this step [NOT FOUND]: the multi-phase version is the
reference.
"""
import importlib.util
import math
import os

import casadi as ca
import numpy as np

import colloc as cl
from colloc.goals.effort import periodicity

#: From ε = 1 (the hopper's start) down to 3e-7, where ``colloc verify``'s maximal-dissipation check (1e-6) holds;
#: the step from 1e-6 to 1e-7 ended in restoration failure.
SOLVE = dict(scheme="hermite-simpson", intervals=12, contact="implicit", relaxation=1.0, complementarity_tolerance=3e-7)

HERE = os.path.dirname(os.path.abspath(__file__))
URDF = os.path.join(HERE, "data", "five_link_biped.urdf")
JOINTS = ("left_hip", "left_knee", "right_hip", "right_knee")
#: Length of a tibia: the foot is this far below the knee, on the tibia frame's −z axis [m].
SHIN = 0.4
FRICTION = 0.8
MAX_TORQUE, MAX_RATE = 100.0, 10.0
#: At t0 no impulse acts (impulses live at interior mesh points), so a foot touching the ground there rests on it:
#: ``|φ̇| ≤ K φ`` at t0 with ``K`` [1/s] large enough to leave a foot in the air free.
REST_RATE = 100.0


def _kelly():
    spec = importlib.util.spec_from_file_location("five_link_biped", os.path.join(HERE, "five_link_biped.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def robot(friction=FRICTION, name="biped"):
    """The URDF biped with its hip and knee torques (|τ| ≤ 100 N m) and both feet as planar ground contacts."""
    body = cl.Multibody.from_urdf(URDF, name=name, actuated=list(JOINTS))
    for side in ("left", "right"):
        p, R = body.frame(f"{side}_tibia")
        foot = p + ca.mtimes(R, ca.DM([0.0, 0.0, -SHIN]))
        body.contact(f"{side}_foot", foot[2], restitution=0.0, friction=friction, tangent=foot[0])
        body.point(f"{side}_foot", ca.vertcat(foot[0], foot[2]))
    body.point("hip", ca.vertcat(body.q[0], body.q[1]))
    return body


def absolute_angles(q):
    """Kelly's absolute angles (left tibia, left femur, torso, right femur, right tibia) of the URDF coordinates."""
    _, _, pitch, lh, lk, rh, rk = (q[i] for i in range(7))
    return [pitch + lh + lk, pitch + lh, pitch, pitch + rh, pitch + rh + rk]


def from_kelly(angles, stance_foot=(0.0, 0.0)):
    """URDF coordinates of Kelly's absolute angles ``q₁ … q₅`` with the stance (left) foot at ``stance_foot``."""
    q1, q2, q3, q4, q5 = angles
    hip_x = stance_foot[0] - SHIN * math.sin(q1) - 0.4 * math.sin(q2)
    hip_z = stance_foot[1] + SHIN * math.cos(q1) + 0.4 * math.cos(q2)
    return np.array([hip_x, hip_z, q3, q2 - q3, q1 - q2, q4 - q3, q5 - q4])


def mirror_pairs(body):
    """``(initial, final)`` symmetry pairs of the step: left ↔ right joints, the base with itself but ``base_x``."""
    names = [s.name() for s in body.coordinates[1:] + body.speeds]
    swap = {"left": "right", "right": "left"}
    pairs = []
    for n in names:
        side = next((s for s in swap if f".{s}_" in n), None)
        pairs.append((n, n.replace(f".{side}_", f".{swap[side]}_") if side else n))
    return pairs


def build(step_length=0.5, duration=0.7, friction=FRICTION):
    """One step of ``step_length`` [m] in ``duration`` [s], the end state the mirror of the start, no schedule."""
    body = robot(friction)
    q, v = body.coordinates, body.speeds
    tau = [u.symbol for u in body.variables if u.kind == "control"]
    prob = cl.Problem([body], t0=0.0, tf=duration, name="urdf_biped")
    prob.minimize(integral=sum(u**2 for u in tau), name="torque_squared")
    angles = ca.vertcat(*absolute_angles(body.q))
    rates = ca.jtimes(angles, body.q, body.v)
    prob.path(angles, -math.pi / 2, math.pi / 2, name="link_angle")
    prob.path(rates, -MAX_RATE, MAX_RATE, name="link_rate")
    prob.initial({q[0]: 0.0})
    prob.boundary(prob.at_tf(q[0]) - prob.at_t0(q[0]), step_length, step_length, name="step_length")
    periodicity(prob, mirror_pairs(body), name="symmetry")
    for c in body.contacts:
        gap, speed = prob.at_t0(c.gap), prob.at_t0(ca.mtimes(c.normal_jacobian, body.v))
        prob.boundary(ca.vertcat(speed - REST_RATE * gap, speed + REST_RATE * gap), [-ca.inf, 0.0], [0.0, ca.inf],
                      name=f"{c.name.split('.')[-1]}_rests_at_t0")
    kelly = _kelly()
    start = from_kelly(kelly.START_POSE)
    end = from_kelly(kelly.START_POSE[::-1])
    end[0] = start[0] + step_length
    start[0], end[0] = 0.0, step_length  # x(0) = 0: the horizontal translation is fixed by the hip
    guess = {s: (a, b) for s, a, b in zip(q, start, end)}
    guess.update({s: (b - a) / duration for s, a, b in zip(v, start, end)})
    guess.update({u: 0.0 for u in tau})
    prob.guess(guess)
    return prob


def build_two_phase(step_length=0.5, duration=0.7):
    """The multi-phase version of the same step: ``problems/five_link_biped.py`` (single support, heel strike)."""
    return _kelly().build(step_length, duration)
