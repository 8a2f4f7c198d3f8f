"""Bouncing ball: a multi-phase simulation with guards and Newton restitution impacts.

A point mass ``m`` moves in the vertical plane under gravity; it is released at
rest-in-height (apex) ``h₀`` with horizontal speed ``vx₀`` and bounces
``bounces`` times on the ground ``y = 0`` with coefficient of restitution ``e``.

Phases
    ``fall0, rise1, fall1, rise2, fall2, …``: a fall ends at the guard
    ``y = 0`` (decreasing; ``y ≥ 0`` inside), a rise at the apex guard
    ``ẏ = 0`` (decreasing; ``ẏ ≥ 0`` inside).  Every duration is free.
States
    ``ball.x``, ``ball.y`` [m], ``ball.x_speed``, ``ball.y_speed`` [m/s]
    (a :class:`colloc.Multibody` with ``T = ½ m |v|²``, ``V = m g y``).
Controls
    none — a feasibility problem: the phases must reproduce the motion.
Links
    fall → rise: Newton's restitution law on the contact ``c(q) = y``:
    ``m (v⁺ − v⁻) = Jᵀ P``, ``J v⁺ = −e J v⁻``, ``P ≥ 0`` with ``J = [0, 1]``
    (so ``ẏ⁺ = −e ẏ⁻``, ``ẋ`` unchanged); rise → fall: continuity.

Analytic solution [DERIVED]: apex heights ``h_k = e^{2k} h₀``; the first
fall lasts ``t₀ = √(2h₀/g)``, the k-th rise and fall each ``e^k t₀``, so the
k-th flight between bounces ``2 e^k t₀``.  Gravity makes the dynamics
quadratic in time, which Hermite–Simpson integrates exactly: the collocation
solution equals the analytic one up to the solver tolerance.

Source: Newton's restitution law as in the Siconos event-driven scheme
(``background/siconos-event-driven-scheme.rst``); the closed forms follow from
``ẏ⁺ = −e ẏ⁻`` and ballistic flight.
"""
import math

import casadi as ca

import colloc as cl
from colloc.model.impact import Impact
from colloc.pipeline.multiphase_problem import MultiPhaseProblem, Phase

SOLVE = dict(scheme="hermite-simpson", intervals=4)


def exact_apex_heights(bounces=3, restitution=0.8, height=1.0):
    """``h_k = e^{2k} h₀`` for k = 0 … bounces."""
    return [height * restitution ** (2 * k) for k in range(bounces + 1)]


def exact_durations(bounces=3, restitution=0.8, height=1.0, gravity=9.81):
    """Durations of ``fall0, rise1, fall1, …``: ``t₀``, then ``e^k t₀`` twice per bounce."""
    t0 = math.sqrt(2 * height / gravity)
    out = [t0]
    for k in range(1, bounces + 1):
        out += [restitution**k * t0, restitution**k * t0]
    return out


def ball_model(mass=1.0, gravity=9.81):
    body = cl.Multibody("ball", coordinates=["x", "y"])
    body.kinetic_energy = 0.5 * mass * ca.sumsqr(body.v)
    body.potential_energy = mass * gravity * body.coordinates[1]
    body.point("centre", body.q)
    return body


def build(bounces=3, restitution=0.8, height=1.0, speed=0.5, mass=1.0, gravity=9.81):
    """Release at apex ``height`` with horizontal ``speed``; ``bounces`` impacts with restitution ``e``."""
    body = ball_model(mass, gravity)
    model = cl.Model([body])
    x, y = body.coordinates
    vx, vy = body.speeds
    impact = Impact(body, contact=y, restitution=restitution, name="ground")
    phases = []
    for k in range(bounces + 1):
        h = height * 0.5 ** k  # a rough guess of the apex heights (the true ratio is e²)
        t = math.sqrt(2 * h / gravity)
        if k > 0:
            rise = cl.Problem(model, t0=0.0, tf=(1e-3, 10.0), name=f"rise{k}")
            rise.guess({"tf": t, y: (0.0, h), vy: (math.sqrt(2 * gravity * h), 0.0), vx: speed})
            ph = Phase(rise)
            ph.end_when(vy, "decreasing", inside=True, name="apex")
            phases.append(ph)
        fall = cl.Problem(model, t0=0.0, tf=(1e-3, 10.0), name=f"fall{k}")
        fall.guess({"tf": t, y: (h, 0.0), vy: (0.0, -math.sqrt(2 * gravity * h)), vx: speed})
        if k == 0:
            fall.initial({x: 0.0, y: height, vx: speed, vy: 0.0})
        ph = Phase(fall)
        ph.end_when(y, "decreasing", inside=True, name="ground")
        phases.append(ph)
    mp = MultiPhaseProblem(phases, name="bouncing_ball")
    for a, b in zip(phases[:-1], phases[1:]):
        if a.name.startswith("fall"):
            mp.connect(a, b, impact=impact)
        else:
            mp.connect(a, b)
    return mp
