"""OpenSim's ``MultivariatePolynomialFunction`` (OpenSim 4.4+) as a CasADi expression.

f(x) = Σᵢ cᵢ Πⱼ xⱼ^{eᵢⱼ} over every exponent tuple with Σⱼ eᵢⱼ ≤ order, in the order of OpenSim's
``MultivariatePolynomial::generateCombinations``: nested loops with the first variable outermost,
each exponent running from 0 up to what the order leaves (dimension 2, order 2: 1, y, y², x, xy, x²).
"""
from __future__ import annotations

import math

import casadi as ca

from ..errors import ModelError
from .xmlvalues import number, vector

TAG = "MultivariatePolynomialFunction"


def is_multivariate(element) -> bool:
    return element.tag == TAG


def exponents(dimension, order):
    """Exponent tuples in OpenSim's coefficient order."""
    out = []

    def walk(current, total):
        if len(current) == dimension:
            out.append(tuple(current))
            return
        for e in range(order - total + 1):
            walk(current + [e], total + e)

    walk([], 0)
    return out


def multivariate_polynomial(element, owner=""):
    """``f(list of SX) -> SX`` for a ``MultivariatePolynomialFunction`` element."""
    dimension = int(number(element, "dimension", 0))
    order = int(number(element, "order", 0))
    coefficients = vector(element, "coefficients", None, [])
    expected = math.comb(dimension + order, order)
    if dimension < 1 or order < 0 or len(coefficients) != expected:
        raise ModelError(f"The MultivariatePolynomialFunction of `{owner}` has dimension {dimension}, order {order} "
                         f"and {len(coefficients)} coefficients; it needs dimension ≥ 1 and C(d + n, n) = {expected} coefficients.")
    terms = [(c, e) for c, e in zip(coefficients, exponents(dimension, order)) if c != 0.0]

    def f(args):
        if len(args) != dimension:
            raise ModelError(f"The MultivariatePolynomialFunction of `{owner}` takes {dimension} arguments; got {len(args)}.")
        powers = [[ca.SX(1.0)] + [None] * order for _ in range(dimension)]
        for j, x in enumerate(args):
            for k in range(1, order + 1):
                powers[j][k] = powers[j][k - 1] * x
        total = ca.SX(0.0)
        for c, e in terms:
            term = ca.SX(c)
            for j, k in enumerate(e):
                if k:
                    term = term * powers[j][k]
            total = total + term
        return total

    return f
