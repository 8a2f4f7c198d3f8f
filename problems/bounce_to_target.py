"""A ball that must bounce once to reach a target: contact-implicit against two phases with an Impact.

A ball (point mass ``m``, gravity ``g``) starts at ``(0, h)`` and must reach
the target ``(L, h)`` *rising* (``ẏ(tf) ≥ 0``); the ground ``y = 0``
restitutes with ``e``.  In free flight it passes ``y = h`` only once more,
falling, so it must bounce (or lift itself).

:func:`build` (the contact-implicit problem, ``contact="implicit"``): a
vertical lift ``u`` (|u| ≤ 30 N), the fixed horizon ``T = 0.8`` s, least
``½m|v(0)|² + ∫u² dt``; the guess dips to the ground and back, its speed turning there.
:func:`build_two_phase` is the same problem with the bounce scheduled (a fall,
an :class:`colloc.model.impact.Impact`, a rise; the durations sum to ``T``): its
optimum is **3.98359237** (Hermite–Simpson, 40 and 80 intervals per phase agree
to 1e-15), the reference.

States
    ``ball.x``, ``ball.y`` [m] and their speeds.
Control
    ``ball.lift`` [N] (:func:`build`, :func:`build_two_phase`).
Contact
    ``ball.ground``: gap ``y``, restitution ``e``, frictionless.

The throw without lift [DERIVED], :func:`build_throw` and
``build_two_phase(lift=False)``: free ``tf ≤ 1`` s, least ``½m|v(0)|²``.  With
launch speed ``(L/tf, v₀)`` (``v₀ < 0``) the fall takes ``t₁ = (v₀ + w)/g``
with impact speed ``w = √(v₀² + 2gh)``; the ball leaves at ``e w`` and reaches
``h`` rising after ``t₂ = (e w − √((e w)² − 2gh))/g``, which needs
``e w ≥ √(2gh)``.  ``tf = t₁ + t₂`` falls as ``|v₀|`` grows, so
``J(v₀) = ½ m (v₀² + (L/tf)²)`` grows too, and the optimum is the slowest
admissible throw ``v₀* = −√(2gh(1/e² − 1))``, the target at the apex of the
bounce.  Defaults (m = h = 1, L = 2, e = 0.9, g = 9.81): ``v₀* = −2.145279``,
``tf* = 0.734534``, ``J* = 6.007974`` (:func:`reference`); an upward throw or
a second bounce needs more than 1 s.  The two-phase solve reaches it to 1e-8.

Contact-implicit solves.  With free steps (``free_steps=True``: interval
lengths are variables, each interval ends on its own acceleration and lift)
:func:`build` finds the bounce from its own guess and reaches the two-phase
optimum to the solver's tolerance (3.98359236 at 10 intervals, error 6e-9):
the impact moves onto a mesh point at its time and the lift jumps there.  The
guess dips to the ground and turns its speed there; the transcription seeds
Newton's impulse at that mesh point.  On the mesh given (no free steps) the
seeded bounce stays at t = 0.4 (4.1226 at 10 intervals, 4.0771 at 20); with
no impulse seeded the homotopy ends at the no-bounce optimum that climbs back
with the lift (62.616).  :func:`build_throw` (no lift, free final time) does
not converge contact-implicitly.  :func:`warm_start` places a mesh point at
the two-phase bounce time for fixed-mesh solves (first-order gap 6.2e-2,
3.0e-2 at 10, 20 intervals: the lift cannot jump at a shared mesh point).

Source: derived above from ballistic flight and Newton's restitution law
(as in ``problems/bouncing_ball.py``).
"""
import math

import casadi as ca

import colloc as cl
from colloc.model.impact import Impact
from colloc.pipeline.multiphase_problem import MultiPhaseProblem, Phase

SOLVE = dict(scheme="hermite-simpson", intervals=10, contact="implicit", free_steps=True)
REFERENCE = dict(value=3.98359237, tolerance=1e-5,
                 source="build_two_phase(): the bounce scheduled as two phases and an Impact (Hermite–Simpson, 40 and 80 intervals agree to 1e-15)")


def ball(mass=1.0, gravity=9.81, restitution=0.9, lift=False):
    body = cl.Multibody("ball", coordinates=["x", "y"])
    body.kinetic_energy = 0.5 * mass * ca.sumsqr(body.v)
    body.potential_energy = mass * gravity * body.coordinates[1]
    if lift:
        u = body.control("lift", bounds=(-30.0, 30.0))
        body.generalized_force = ca.vertcat(0, u)
    body.contact("ground", body.coordinates[1], restitution=restitution)
    body.point("centre", body.q)
    return body


def reference(distance=2.0, height=1.0, restitution=0.9, mass=1.0, gravity=9.81):
    """``(J*, v₀*, tf*)`` of the one-bounce optimum (module docstring, closed form)."""
    g, e, h = gravity, restitution, height
    v0 = -math.sqrt(2 * g * h * (1 / e**2 - 1))  # the slowest throw whose bounce still climbs back to h
    w = math.sqrt(v0**2 + 2 * g * h)
    tf = (v0 + w) / g + e * w / g
    return 0.5 * mass * (v0**2 + (distance / tf) ** 2), v0, tf


def build(distance=2.0, height=1.0, restitution=0.9, duration=0.8, mass=1.0, gravity=9.81):
    """The ball with a vertical lift ``u`` on the fixed horizon ``duration``: least ``½m|v(0)|² + ∫u² dt``."""
    body = ball(mass, gravity, restitution, lift=True)
    x, y = body.coordinates
    vx, vy = body.speeds
    u = body.variable("ball.lift").symbol
    prob = cl.Problem([body], t0=0.0, tf=duration, name="bounce_to_target")
    prob.initial({x: 0.0, y: height})
    prob.final({x: distance, y: height, vy: (0.0, math.inf)})
    prob.minimize(integral=u**2, final=prob.at_t0(0.5 * mass * (vx**2 + vy**2)))
    # the guess dips to the ground and back up, its vertical speed turning at the bottom (no impulse given)
    prob.guess({y: ([0.0, 0.5 * duration, duration], [height, 0.0, height]), vx: distance / duration,
                vy: ([0.0, 0.4999 * duration, 0.5 * duration, duration], [-2 * height / duration, -2 * height / duration, 2 * height / duration, 2 * height / duration])})
    return prob


def build_two_phase(distance=2.0, height=1.0, restitution=0.9, duration=0.8, mass=1.0, gravity=9.81, lift=True):
    """:func:`build` with the bounce scheduled: a fall, an Impact (Newton, ``e``), a rise; durations sum to ``duration``.

    ``lift=False``: the throw of :func:`reference` (no lift, free durations, ``duration`` ignored).
    """
    body = ball(mass, gravity, restitution, lift=lift)
    model = cl.Model([body])
    x, y = body.coordinates
    vx, vy = body.speeds
    effort = body.variable("ball.lift").symbol ** 2 if lift else None
    span = (0.05, duration if lift else 1.0)
    fall = cl.Problem(model, t0=0.0, tf=span, name="fall")
    rise = cl.Problem(model, t0=0.0, tf=span, name="rise")
    fall.initial({x: 0.0, y: height})
    fall.minimize(integral=effort, final=fall.at_t0(0.5 * mass * (vx**2 + vy**2)))
    fall.guess({"tf": 0.3, y: (height, 0.0), vy: (-2.0, -5.0), vx: distance / duration})
    rise.final({x: distance, y: height, vy: (0.0, math.inf)})
    if lift:
        rise.minimize(integral=effort)
    rise.guess({"tf": duration - 0.3, y: (0.0, height), vy: (4.5, 0.0), vx: distance / duration})
    a, b = Phase(fall), Phase(rise)
    a.end_when(y, "decreasing", inside=True, name="ground")
    mp = MultiPhaseProblem([a, b], name="bounce_to_target_two_phase")
    mp.connect(a, b, impact=Impact(body, contact=y, restitution=restitution, name="ground"))
    if lift:
        mp.link(a.duration + b.duration, duration, duration, name="horizon")
    return mp


def build_throw(distance=2.0, height=1.0, restitution=0.9, max_time=1.0, mass=1.0, gravity=9.81):
    """No lift, free ``tf ≤ max_time``: the throw of :func:`reference` (its contact-implicit solve does not converge)."""
    body = ball(mass, gravity, restitution)
    x, y = body.coordinates
    vx, vy = body.speeds
    prob = cl.Problem([body], t0=0.0, tf=(0.2, max_time), name="bounce_to_target_throw")
    prob.initial({x: 0.0, y: height})
    prob.final({x: distance, y: height, vy: (0.0, math.inf)})
    prob.minimize(final=prob.at_t0(0.5 * mass * (vx**2 + vy**2)))
    prob.guess({"tf": 0.8, y: ([0.0, 0.4, 0.8], [height, 0.0, height]), vx: distance / 0.8})
    return prob


def warm_start(two_phase, intervals, duration=0.8, mass=1.0):
    """``(guess, mesh)`` for :func:`build` from a two-phase result: its states and lift, its impulse as a column
    ``ball.ground.impulse``, and a mesh of ``intervals`` with a mesh point at its bounce time."""
    import numpy as np

    traj = two_phase.trajectory
    tb = traj.metadata["phases"][1]["start"]
    k = int(round(tb / duration * intervals))
    mesh = np.concatenate([np.linspace(0, tb / duration, k + 1), np.linspace(tb / duration, 1, intervals - k + 1)[1:]])
    tt = np.unique(np.concatenate([np.linspace(0, duration, 801), [tb]]))
    sampled = traj.sample(tt)
    cols = {n: sampled[n] for n in ("ball.x", "ball.y", "ball.x_speed", "ball.y_speed", "ball.lift")}
    impulse = np.zeros(tt.size)
    jump = traj.phase(1)["ball.y_speed"][0] - traj.phase(0)["ball.y_speed"][-1]
    impulse[np.argmin(abs(tt - tb))] = mass * jump
    cols["ball.ground.impulse"] = impulse
    kinds = {n: "control" if n == "ball.lift" else "multiplier" if n.endswith("impulse") else "state" for n in cols}
    return cl.Trajectory(tt, cols, kinds, metadata=dict(scheme="hermite-simpson")), mesh
