"""Goddard rocket, maximum altitude (COPS 3.0 problem 10, normalized; docs/problems.md entry B1).

A vertically flying rocket with drag falling off exponentially with altitude and
inverse-square gravity burns its fuel to climb as high as possible; the final
time is free (COPS: free step length).

Objective
    maximize h(t_f), written as minimize −h(t_f)
States
    ``rocket.h`` altitude, ``rocket.v`` speed, ``rocket.m`` mass (normalized)
Controls
    ``rocket.thrust`` T ∈ [0, T_max]
Constraints
    ḣ = v, v̇ = (T − D(h, v))/m − g(h), ṁ = −T/c,
    D = D_c v² exp(−h_c (h − h₀)/h₀), g = g₀ (h₀/h)²;
    h(0) = 1, v(0) = 0, m(0) = 1, m(t_f) = m_f = 0.6;
    h ≥ 1, v ≥ 0, 0.6 ≤ m ≤ 1; t_f free in (0.05, 1).
Constants (normalized): h₀ = m₀ = g₀ = 1, v₀ = 0, T_c = 3.5, h_c = 500,
v_c = 620, m_c = 0.6; c = ½√(g₀h₀) = 0.5, D_c = ½ v_c m₀/g₀ = 310,
T_max = T_c m₀ g₀ = 3.5, m_f = m_c m₀ = 0.6.

The thrust is bang–singular–bang (full thrust, singular arc, coast), so the
control rings on a collocation mesh while the objective converges.

Source: E. D. Dolan, J. J. Moré, T. S. Munson, "Benchmarking Optimization
Software with COPS 3.0", ANL/MCS-TM-273 (2004), problem 10, via the JuMP port
MadNLP/COPSBenchmark.jl ``rocket.jl``.  COPS reports h(t_f) = 1.01283 for its
trapezoidal discretization with 400 points; the continuous optimum is
≈ 1.01284 (±5e-6) [COMPUTED, LGR N=100..400, docs/problems.md B1], t_f ≈ 0.1989.
"""
import math

import casadi as ca
import numpy as np

import colloc as cl

#: Final altitude h(t_f) (the objective the solver reports is −h(t_f)); tolerance is relative.
REFERENCE = dict(
    value=1.01284,
    quantity="final rocket.h",
    source="docs/problems.md B1: continuous optimum ~1.01284 [COMPUTED]; COPS 3.0 reports 1.01283 "
           "(trapezoid, nh=400) [SEEN]",
    tolerance=1e-4,
)

SOLVE = dict(scheme="hermite-simpson", intervals=20, refine=dict(tolerance=1e-6, max_iterations=10))


def build(h_c=500.0, v_c=620.0, m_c=0.6, t_c=3.5):
    """COPS Goddard rocket; keyword arguments are COPS's normalized constants."""
    h0 = m0 = g0 = 1.0
    c_exhaust = 0.5 * math.sqrt(g0 * h0)
    m_final = m_c * m0
    d_c = 0.5 * v_c * m0 / g0
    t_max = t_c * m0 * g0

    r = cl.Component("rocket")
    h = r.state("h", bounds=(h0, math.inf))
    v = r.state("v", bounds=(0.0, math.inf))
    m = r.state("m", bounds=(m_final, m0))
    thrust = r.control("thrust", bounds=(0.0, t_max))
    drag = d_c * v**2 * ca.exp(-h_c * (h - h0) / h0)
    gravity = g0 * (h0 / h) ** 2
    r.derivative(h, v)
    r.derivative(v, (thrust - drag) / m - gravity)
    r.derivative(m, -thrust / c_exhaust)

    prob = cl.Problem([r], t0=0.0, tf=(0.05, 1.0), name="goddard")
    prob.initial({h: h0, v: 0.0, m: m0})
    prob.final({m: m_final})
    prob.minimize(final=-h)
    prob.guess(_guess(h, v, m, thrust, t_max, m0, m_final))
    prob.guess({prob.tf: 0.2})
    return prob


def _guess(h, v, m, thrust, t_max, m0, m_final):
    """Full thrust until the fuel is gone, then coast; (normalized) times for t_f ≈ 0.2.

    (COPS's own guess is h = 1, v = τ(1 − τ), m = (m_f − m₀)τ + m₀, T = T_max/2.)
    At full thrust the fuel lasts (m₀ − m_f) c / T_max ≈ 0.057; the optimum
    stretches the burn to ≈ 0.08 with its singular arc and reaches the top at ≈ 0.199.
    """
    burn, top = 0.07, 0.2
    t = np.linspace(0.0, top, 21)
    return {
        h: (t, 1.0 + 0.0128 * np.sin(0.5 * np.pi * t / top)),
        v: (t, 0.12 * np.minimum(t / burn, (top - t) / (top - burn))),
        m: (t, np.maximum(m0 - (m0 - m_final) * t / burn, m_final)),
        thrust: (t, np.where(t < burn, t_max, 0.0)),
    }
