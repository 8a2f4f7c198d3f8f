"""Alp rider: a linear system kept above a terrain of four hills (Betts 2010, §4.11, pp. 163–165).

Objective
    minimize J = ∫₀²⁰ [10² (y₁² + y₂² + y₃² + y₄²) + 10⁻² (u₁² + u₂²)] dt
States
    ``rider.y1`` … ``rider.y4``
Controls
    ``rider.u1``, ``rider.u2``
Constraints
    ẏ₁ = −10 y₁ + u₁ + u₂, ẏ₂ = −2 y₂ + u₁ + 2 u₂, ẏ₃ = −3 y₃ + 5 y₄ + u₁ − u₂,
    ẏ₄ = 5 y₃ − 3 y₄ + u₁ + 3 u₂;
    path ``terrain``: y₁² + y₂² + y₃² + y₄² ≥ 3 p(t, 3, 12) + 3 p(t, 6, 10) + 3 p(t, 10, 6) + 8 p(t, 15, 4) + 0.01
    with p(t, a, b) = exp(−b (t − a)²);
    y(0) = (2, 1, 2, 1), y(20) = (2, 3, 1, −2); t_f = 20 fixed.

The cost pulls the state towards zero and the terrain holds it up: the state
constraint is active on four narrow boundary arcs around the hill tops, where
a uniform mesh is far too coarse.  Hermite–Simpson on 200 uniform intervals
gives J ≈ 2087.8 (2.8 % high); adaptive refinement to a relative local error
of 1e-6 reaches the reference to 1.3e-5.  The result's accuracy estimate says
which (``SolveResult.accuracy``).

Source: J. T. Betts, *Practical Methods for Optimal Control and Estimation
Using Nonlinear Programming*, 2nd ed., SIAM 2010, pp. 163–165 (J* = 2030.85609);
formulation also in DT-QP (danielrherber/dt-qp-project) ``AlpRider.m``.
"""
import casadi as ca

import colloc as cl

#: Betts (2010) p. 165: J* = 2030.85609; relative tolerance 1e-4 (the adaptive solve below lands 1.3e-5 high).
REFERENCE = dict(
    value=2030.85609,
    source="Betts, Practical Methods for Optimal Control ..., 2nd ed., SIAM 2010, pp. 163-165: J* = 2030.85609",
    tolerance=1e-4,
)

#: From 200 uniform intervals (2.8 % high, flagged as not resolved), refinement to a relative local error of
#: 1e-6 ends on ~400 intervals at 2030.883 in ~10 s.
SOLVE = dict(scheme="hermite-simpson", intervals=200, refine=dict(tolerance=1e-6))


def _hill(t, a, b):
    return ca.exp(-b * (t - a) ** 2)


def build():
    """The alp rider on t ∈ [0, 20]."""
    c = cl.Component("rider")
    y1, y2, y3, y4 = (c.state(f"y{i}") for i in range(1, 5))
    u1, u2 = c.control("u1"), c.control("u2")
    c.derivative(y1, -10 * y1 + u1 + u2)
    c.derivative(y2, -2 * y2 + u1 + 2 * u2)
    c.derivative(y3, -3 * y3 + 5 * y4 + u1 - u2)
    c.derivative(y4, 5 * y3 - 3 * y4 + u1 + 3 * u2)

    prob = cl.Problem([c], t0=0.0, tf=20.0, name="alp_rider")
    t = cl.TIME
    terrain = 3 * _hill(t, 3, 12) + 3 * _hill(t, 6, 10) + 3 * _hill(t, 10, 6) + 8 * _hill(t, 15, 4) + 0.01
    prob.path(y1**2 + y2**2 + y3**2 + y4**2 - terrain, lower=0.0, name="terrain")
    prob.initial({y1: 2.0, y2: 1.0, y3: 2.0, y4: 1.0})
    prob.final({y1: 2.0, y2: 3.0, y3: 1.0, y4: -2.0})
    prob.minimize(integral=100.0 * (y1**2 + y2**2 + y3**2 + y4**2) + 0.01 * (u1**2 + u2**2))
    prob.guess({y1: (2.0, 2.0), y2: (1.0, 3.0), y3: (2.0, 1.0), y4: (1.0, -2.0)})
    return prob
