"""An implicit-only model with a closed-form solution: y ẏ = 1 (feasibility problem).

Objective
    none (feasibility problem: no ``minimize``; the NLP is square)
States
    ``curve.y``, whose only dynamics row is the implicit residual y ẏ − 1 = 0
Controls
    none
Constraints
    y(0) = 1 on t ∈ [0, 1] (fixed); y ≥ 0.1 y(0) keeps iterates away from the
    singular point y = 0, where ẏ is undetermined (inactive at the solution).

Exact solution [DERIVED]: d(y²)/dt = 2 y ẏ = 2, so y² = 1 + 2t and
y(t) = √(1 + 2t) (the positive branch, selected by y(0) = 1); y(1) = √3.
The residual cannot be rewritten as ẏ = f without dividing by y, so it
exercises the derivative variables colloc adds for implicit rows.

Source: constructed for colloc (no published reference needed: the solution is
elementary).
"""
import math

import numpy as np

import colloc as cl

#: y(1) = √3; there is no objective.  Tolerance is relative.
REFERENCE = dict(
    value=math.sqrt(3.0),
    quantity="final curve.y",
    source="[DERIVED] y y' = 1, y(0) = 1  =>  y = sqrt(1 + 2t), y(1) = sqrt(3)",
    tolerance=1e-6,
)

SOLVE = dict(scheme="hermite-simpson", intervals=20)


def build(y0=1.0, duration=1.0):
    """y ẏ = 1 from y(0) = ``y0`` over ``duration`` (y0 > 0 keeps y away from the singular y = 0)."""
    c = cl.Component("curve")
    y = c.state("y", bounds=(0.1 * y0, math.inf))
    c.residual(y, y * c.dot(y) - 1.0)

    prob = cl.Problem([c], t0=0.0, tf=duration, name="implicit_sqrt")
    prob.initial({y: y0})
    prob.guess({y: y0})
    return prob


def exact_solution(t, y0=1.0):
    """y(t) = √(y0² + 2t)."""
    return np.sqrt(y0**2 + 2.0 * np.asarray(t, dtype=float))
