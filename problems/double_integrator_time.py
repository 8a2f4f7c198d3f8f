"""Double integrator, minimum time, rest to rest (docs/problems.md entry A4b).

Objective
    minimize t_f
States
    ``mass.x`` position, ``mass.v`` velocity
Controls
    ``mass.u`` acceleration, |u| ≤ 1
Constraints
    ẋ = v, v̇ = u; x(0) = 0, v(0) = 0, x(t_f) = d, v(t_f) = 0;
    t_f free in (0.1, 10).

Analytic optimum [DERIVED]: bang-bang, u = +1 on [0, √d), −1 after, so
t_f* = 2√d (= 2 for d = 1).  The switch is at half the horizon, τ = ½ in
normalised time, which is a mesh point of any uniform mesh with an even number
of intervals; then collocation is exact.  With an odd number the objective
converges only O(h).  IPOPT's default ``bound_relax_factor`` (1e-8) lets |u|
exceed 1 by 1e-8, so the solver reports t_f ≈ 2(1 − 5e-9) = 1.99999999.

Source: the classical bang-bang example (e.g. Bryson & Ho 1975); docs/problems.md A4b.
"""
import math

import colloc as cl

#: Objective value t_f* = 2√d = 2 [DERIVED]; tolerance is relative.
REFERENCE = dict(
    value=2.0,
    source="docs/problems.md A4b [DERIVED] bang-bang, t_f* = 2*sqrt(d) = 2 for d = 1",
    tolerance=1e-6,
)

SOLVE = dict(scheme="hermite-simpson", intervals=20)


def build(distance=1.0, max_accel=1.0):
    """Fastest rest-to-rest transfer over ``distance`` with |u| ≤ ``max_accel``."""
    c = cl.Component("mass")
    x = c.state("x")
    v = c.state("v")
    u = c.control("u", bounds=(-max_accel, max_accel))
    c.derivative(x, v)
    c.derivative(v, u)

    prob = cl.Problem([c], t0=0.0, tf=(0.1, 10.0), name="double_integrator_time")
    prob.initial({x: 0.0, v: 0.0})
    prob.final({x: distance, v: 0.0})
    prob.minimize(final=prob.tf)
    # Half the peak speed √(d·u_max); t_f starts at the middle of its range (IPOPT converges
    # from any t_f guess in it).
    prob.guess({x: (0.0, distance), v: 0.5 * math.sqrt(distance * max_accel), u: 0.0})
    return prob


def exact_objective(distance=1.0, max_accel=1.0):
    """t_f* = 2 √(d / u_max)."""
    return 2.0 * math.sqrt(distance / max_accel)
