"""Bryson–Denham problem: double integrator with a position limit (docs/problems.md entry A3).

Objective
    minimize J = ½ ∫₀¹ u² dt
States
    ``mass.x`` position, ``mass.v`` velocity
Controls
    ``mass.u`` acceleration
Constraints
    ẋ = v, v̇ = u; x(0) = 0, v(0) = 1, x(1) = 0, v(1) = −1, t_f = 1 fixed;
    state constraint x(t) ≤ ℓ (default ℓ = 1/9), a second-order state
    constraint with a boundary arc.

Analytic optimum (Bryson & Ho 1975, pp. 120–123; DT-QP ``BrysonDenham_F.m``)::

    J*(ℓ) = 4 / (9ℓ)          for 0 < ℓ ≤ 1/6
          = 2 + 6 (1 − 4ℓ)²   for 1/6 ≤ ℓ ≤ 1/4
          = 2                 for ℓ ≥ 1/4

so ℓ = 1/9 gives J* = 4 exactly and the Breakwell variant ℓ = 0.1 gives 40/9.
For ℓ ≤ 1/6 the constraint is active on [3ℓ, 1 − 3ℓ], where u = 0 and x = ℓ;
before it u = −(2/(3ℓ))(1 − t/(3ℓ)).  See :func:`exact_objective`.  IPOPT's
default ``bound_relax_factor`` (1e-8) loosens x ≤ ℓ by 1e-8, which lowers the
reported optimum by 4e-8/(9ℓ²) ≈ 3.6e-7 (J ≈ 3.99999964).

Source: A. E. Bryson, Y.-C. Ho, *Applied Optimal Control* (1975), as implemented
in DT-QP (danielrherber/dt-qp-project) ``examples/linear-quadratic/bryson-denham``.
"""
import math

import colloc as cl

#: Objective value J* = 4/(9ℓ) = 4 at ℓ = 1/9 [SEEN]; tolerance is relative.
REFERENCE = dict(
    value=4.0,
    source="docs/problems.md A3 [SEEN] DT-QP BrysonDenham_F.m: J* = 4/(9*ell) = 4 for ell = 1/9 (Bryson & Ho 1975)",
    tolerance=1e-4,
)

# 30 intervals put mesh points on the junctions t = 3ℓ = 1/3 and 1 − 3ℓ = 2/3.
SOLVE = dict(scheme="hermite-simpson", intervals=30)


def build(ell=1.0 / 9.0):
    """Bryson–Denham problem with position limit ``x ≤ ell``."""
    c = cl.Component("mass")
    x = c.state("x", bounds=(-math.inf, ell))
    v = c.state("v")
    u = c.control("u")
    c.derivative(x, v)
    c.derivative(v, u)

    prob = cl.Problem([c], t0=0.0, tf=1.0, name="bryson_denham")
    prob.initial({x: 0.0, v: 1.0})
    prob.final({x: 0.0, v: -1.0})
    prob.minimize(integral=0.5 * u**2)
    prob.guess({x: 0.0, v: (1.0, -1.0), u: -2.0})
    return prob


def exact_objective(ell=1.0 / 9.0):
    """Analytic optimal cost J*(ℓ) (Bryson & Ho 1975; DT-QP ``BrysonDenham_F.m``)."""
    if ell <= 0:
        raise ValueError(f"ell must be positive; got {ell}.")
    if ell <= 1.0 / 6.0:
        return 4.0 / (9.0 * ell)
    if ell <= 0.25:
        return 2.0 + 6.0 * (1.0 - 4.0 * ell) ** 2
    return 2.0
