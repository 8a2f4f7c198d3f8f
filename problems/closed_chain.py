"""Four-bar linkage (a closed kinematic chain) turned by a crank torque, minimum effort.

Three uniform slender rods — crank AB (length a, mass m_a), coupler BC (b,
m_b) and rocker CD (c, m_c) — close a loop with the ground link AD (A at the
origin, D = (d, 0)), y up, gravity g along −y.  The coordinates are the
absolute angles θ1, θ2, θ3 of the three rods from +x; the loop closes by the
holonomic constraint

    φ(q) = a e(θ1) + b e(θ2) − (d, 0) − c e(θ3) = 0,   e(θ) = (cos θ, sin θ)   (2 rows),

so the chain has one degree of freedom.  With a = 0.3, b = 1, c = 0.8, d = 1
(s + l = 1.3 ≤ p + q = 1.8, Grashof crank-rocker) the crank turns fully.
A torque τ between ground and crank turns the crank half a turn, rest to
rest, in ``duration`` seconds.

Objective
    minimize J = ∫₀ᵀ τ² dt
States
    ``chain.theta1`` … ``chain.theta3`` [rad]; ``chain.omega1`` … ``chain.omega3`` [rad/s]
Controls
    ``chain.tau`` [N m], bounds ±100
Multipliers
    ``chain.loop.lambda_0``, ``chain.loop.lambda_1``: the loop-closing force at C
    (colloc's sign: ``+Gᵀλ`` is the constraint force, G = Φ_q).
Constraints
    T = Σ ½ m |v_G|² + ½ (m l²/12) θ̇²,  V = g Σ m y_G (centres of mass at mid-rod);
    loop closure φ = 0 (colloc derives φ̇, φ̈); θ1: 0 → π and θ̇1 = 0 at both
    ends (the other angles and speeds follow from φ = 0, φ̇ = 0 on the branch
    with C above the ground line, selected by the bounds θ2 ∈ (−0.5, 2),
    θ3 ∈ (0.5, 3)).

Source: four-bar geometry and the Grashof condition, e.g. J. J. Uicker,
G. R. Pennock, J. E. Shigley, *Theory of Machines and Mechanisms*, 5th ed.,
§1.10 and §4.x; the closed-chain DAE and its discrete-mechanics treatment as
in Leyendecker, Ober-Blöbaum, Marsden & Ortiz, Optim. Control Appl. Meth. 31
(2010).  The reference value is this problem's converged Hermite–Simpson
optimum [COMPUTED here, 400 intervals, IPOPT tol 1e-12].
"""
import math

import casadi as ca
import numpy as np

import colloc as cl

#: ∫τ² dt of the continuous optimum [COMPUTED]; tolerance is relative.
REFERENCE = dict(
    value=36.7518645,
    source="converged Hermite–Simpson optimum, 400 intervals [COMPUTED here] (200 intervals: 36.75186399)",
    tolerance=5e-5,
)

SOLVE = dict(scheme="hermite-simpson", intervals=40)

GRAVITY = 9.81
GEOMETRY = dict(a=0.3, b=1.0, c=0.8, d=1.0)


def build(duration=1.5, turn=math.pi, masses=(1.0, 2.0, 1.5), gravity=GRAVITY, max_torque=100.0):
    """Crank from θ1 = 0 to ``turn`` at rest at both ends."""
    a, b, c, d = (GEOMETRY[k] for k in "abcd")
    body = cl.Multibody("chain", coordinates=["theta1", "theta2", "theta3"], speeds=["omega1", "omega2", "omega3"],
                        coordinate_bounds={"theta2": (-0.5, 2.0), "theta3": (0.5, 3.0)})
    th1, th2, th3 = body.coordinates
    w1, w2, w3 = body.speeds
    tau = body.control("tau", bounds=(-max_torque, max_torque))
    e = lambda th: ca.vertcat(ca.cos(th), ca.sin(th))
    B = a * e(th1)
    D = ca.vertcat(d, 0)
    centres = [0.5 * a * e(th1), B + 0.5 * b * e(th2), D + 0.5 * c * e(th3)]
    lengths, rates = (a, b, c), (w1, w2, w3)
    body.kinetic_energy = sum(0.5 * m * ca.sumsqr(ca.jtimes(G, body.q, body.v)) + 0.5 * (m * l**2 / 12) * w**2
                              for m, G, l, w in zip(masses, centres, lengths, rates))
    body.potential_energy = gravity * sum(m * G[1] for m, G in zip(masses, centres))
    body.generalized_force = ca.vertcat(tau, 0, 0)
    body.holonomic("loop", B + b * e(th2) - D - c * e(th3))
    body.point("B", B)
    body.point("C", B + b * e(th2))

    prob = cl.Problem([body], t0=0.0, tf=duration, name="closed_chain")
    prob.initial({th1: 0.0, w1: 0.0})
    prob.final({th1: turn, w1: 0.0})
    prob.minimize(integral=tau**2)
    times = np.linspace(0.0, duration, 41)
    crank = turn * (times / duration)
    angles = configuration(crank)
    prob.guess({th1: (times, crank), th2: (times, angles[0]), th3: (times, angles[1]), tau: 0.0})
    return prob


def configuration(theta1, a=GEOMETRY["a"], b=GEOMETRY["b"], c=GEOMETRY["c"], d=GEOMETRY["d"]):
    """Coupler and rocker angles ``(θ2, θ3)`` closing the loop for crank angles ``theta1`` (C above BD).

    C is the intersection of the circles of radius b about B and c about D
    on the left of the direction from B to D.
    """
    th = np.asarray(theta1, dtype=float)
    B = a * np.array([np.cos(th), np.sin(th)])
    BD = np.array([d - B[0], -B[1]])
    dist = np.hypot(*BD)
    u = BD / dist
    along = (b**2 - c**2 + dist**2) / (2 * dist)
    height = np.sqrt(b**2 - along**2)
    C = B + along * u + height * np.array([-u[1], u[0]])
    return np.arctan2(C[1] - B[1], C[0] - B[0]), np.arctan2(C[1], C[0] - d)
