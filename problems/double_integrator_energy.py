"""Double integrator, minimum energy, rest to rest in fixed time (docs/problems.md entry A4a).

Objective
    minimize J = ∫₀¹ u² dt
States
    ``mass.x`` position, ``mass.v`` velocity
Controls
    ``mass.u`` acceleration
Constraints
    ẋ = v, v̇ = u; x(0) = 0, v(0) = 0, x(1) = distance, v(1) = 0; t_f = duration.

Analytic optimum [DERIVED]: u* = (d/T²)(6 − 12 t/T), x* = d (3s² − 2s³) with
s = t/T, J* = 12 d²/T³ (= 12 for d = T = 1).  The optimal x is cubic and u linear,
so Hermite–Simpson reproduces it exactly on any mesh.

Source: the one-dimensional toy problem of M. Kelly, SIAM Review 59(4), 2017
(the instance's data are chosen, see docs/problems.md A4a).
"""
import colloc as cl

#: Objective value J* = 12 d²/T³ = 12 [DERIVED]; tolerance is relative.
REFERENCE = dict(
    value=12.0,
    source="docs/problems.md A4a [DERIVED] u* = 6 - 12t, J* = 12 (Kelly 2017 toy problem)",
    tolerance=1e-6,
)

SOLVE = dict(scheme="hermite-simpson", intervals=10)


def build(distance=1.0, duration=1.0):
    """Rest-to-rest transfer over ``distance`` in ``duration`` with minimum ∫u² dt."""
    c = cl.Component("mass")
    x = c.state("x")
    v = c.state("v")
    u = c.control("u")
    c.derivative(x, v)
    c.derivative(v, u)

    prob = cl.Problem([c], t0=0.0, tf=duration, name="double_integrator_energy")
    prob.initial({x: 0.0, v: 0.0})
    prob.final({x: distance, v: 0.0})
    prob.minimize(integral=u**2)
    prob.guess({x: (0.0, distance), v: distance / duration, u: 0.0})
    return prob


def exact_objective(distance=1.0, duration=1.0):
    """J* = 12 d² / T³."""
    return 12.0 * distance**2 / duration**3
