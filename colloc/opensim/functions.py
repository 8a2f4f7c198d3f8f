"""OpenSim's functions of coordinates as CasADi SX expressions.

Each ``<Function>`` element of an ``.osim`` file becomes a Python callable
``f(x) -> SX`` of a scalar SX (or a list of them for functions of several
arguments), built by :func:`read_function`.  The formulas are OpenSim's own
(opensim-core ``OpenSim/Common``), evaluated exactly as OpenSim evaluates them,
including outside the knots:

* ``Constant``: ``value``;
* ``LinearFunction``: ``coefficients = (slope, intercept)``;
* ``PolynomialFunction``: ``coefficients`` in decreasing powers (Horner);
* ``SimmSpline`` (and ``NaturalCubicSpline``, which OpenSim 4 reads as a
  ``SimmSpline``: ``Object::renameType`` in ``RegisterTypes_osimCommon.cpp``):
  the cubic spline of ``SimmSpline::calcCoefficients`` — end conditions from
  third divided differences, not a natural spline — and, outside ``[x₀, x_{n−1}]``,
  the straight line with the end slope ``b``, as ``SimmSpline::calcValue``;
* ``PiecewiseLinearFunction``: linear between knots, end slopes outside;
* ``MultiplierFunction``: ``scale × function``.

A piecewise function is one cubic ``y_k + dx (b_k + dx (c_k + dx d_k))`` with
``dx = x − x_k`` whose coefficients are chosen by steps ``[x ≥ x_k]`` shared by
all five (no branch per segment), so its SX graph and its derivatives stay small.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from ..errors import ModelError
from .document import floats, node_text, where

#: SimmMacros.h: the smallest knot spacing SimmSpline divides by.
TINY_NUMBER = 1e-7


def simm_spline_coefficients(x, y):
    """``(b, c, d)`` of OpenSim's ``SimmSpline::calcCoefficients``, arrays of shape (n,).

    On ``[x_k, x_{k+1}]`` the spline is ``y_k + dx (b_k + dx (c_k + dx d_k))``;
    outside the knots OpenSim extends it by the end slopes ``b_0`` and ``b_{n−1}``.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = x.size
    b, c, d = np.zeros(n), np.zeros(n), np.zeros(n)
    if n < 2:
        return b, c, d
    if n == 2:
        b[:] = (y[1] - y[0]) / max(TINY_NUMBER, x[1] - x[0])
        return b, c, d
    nm1, nm2 = n - 1, n - 2
    d[0] = max(TINY_NUMBER, x[1] - x[0])
    c[1] = (y[1] - y[0]) / d[0]
    for i in range(1, nm1):
        d[i] = max(TINY_NUMBER, x[i + 1] - x[i])
        b[i] = 2.0 * (d[i - 1] + d[i])
        c[i + 1] = (y[i + 1] - y[i]) / d[i]
        c[i] = c[i + 1] - c[i]
    b[0], b[nm1] = -d[0], -d[nm2]
    c[0] = c[nm1] = 0.0
    if n > 3:
        d31 = max(TINY_NUMBER, x[3] - x[1])
        d20 = max(TINY_NUMBER, x[2] - x[0])
        d1 = max(TINY_NUMBER, x[nm1] - x[n - 3])
        d2 = max(TINY_NUMBER, x[nm2] - x[n - 4])
        d30 = max(TINY_NUMBER, x[3] - x[0])
        d3 = max(TINY_NUMBER, x[nm1] - x[n - 4])
        c[0] = c[2] / d31 - c[1] / d20
        c[nm1] = c[nm2] / d1 - c[n - 3] / d2
        c[0] = c[0] * d[0] * d[0] / d30
        c[nm1] = -c[nm1] * d[nm2] * d[nm2] / d3
    for i in range(1, n):  # forward elimination
        t = d[i - 1] / b[i - 1]
        b[i] -= t * d[i - 1]
        c[i] -= t * c[i - 1]
    c[nm1] /= b[nm1]  # back substitution
    for i in range(nm2, -1, -1):
        c[i] = (c[i] - d[i] * c[i + 1]) / b[i]
    b[nm1] = (y[nm1] - y[nm2]) / d[nm2] + d[nm2] * (c[nm2] + 2.0 * c[nm1])
    for i in range(nm1):
        b[i] = (y[i + 1] - y[i]) / d[i] - d[i] * (c[i + 1] + 2.0 * c[i])
        d[i] = (c[i + 1] - c[i]) / d[i]
        c[i] *= 3.0
    c[nm1] *= 3.0
    d[nm1] = d[nm2]
    return b, c, d


def piecewise_cubic(x, y, b, c, d):
    """``f(s)``: the cubic pieces on the knots ``x`` and straight lines with slopes ``b_0``, ``b_{n−1}`` outside.

    The piece's coefficients are picked by the steps ``[s ≥ x_k]``, computed once and shared by the
    five coefficients (``v(s) = v_0 + Σ_k [s ≥ x_k] (v_{k+1} − v_k)``): about 11 SX instructions per
    knot, where a ``pw_const`` lookup per coefficient takes about 20.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    zero = [0.0]
    # n + 1 pieces: left line, the n − 1 cubics, right line; piece k holds on [x_{k−1}, x_k)
    pieces = np.array([np.concatenate([[x[0]], x[:-1], [x[-1]]]), np.concatenate([[y[0]], y[:-1], [y[-1]]]),
                       np.concatenate([[b[0]], b[:-1], [b[-1]]]), np.concatenate([zero, c[:-1], zero]),
                       np.concatenate([zero, d[:-1], zero])])
    steps = np.diff(pieces, axis=1)

    def f(s):
        on = [s >= xk for xk in x]
        xk, yk, bk, ck, dk = (_pick(row[0], on, jumps) for row, jumps in zip(pieces, steps))
        dx = s - xk
        return yk + dx * (bk + dx * (ck + dx * dk))

    return f


def _pick(first, on, jumps):
    out = ca.SX(first)
    for flag, jump in zip(on, jumps):
        if jump != 0.0:
            out = out + flag * jump
    return out


def simm_spline(x, y):
    """OpenSim's ``SimmSpline`` through the points ``(x, y)`` as ``f(s) -> SX``."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size == 1:
        return lambda s: ca.SX(y[0])
    return piecewise_cubic(x, y, *simm_spline_coefficients(x, y))


def piecewise_linear(x, y):
    """OpenSim's ``PiecewiseLinearFunction`` (``PiecewiseLinearFunction::calcValue``)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = x.size
    if n == 1:
        return lambda s: ca.SX(y[0])
    b = np.empty(n)
    b[:-1] = (y[1:] - y[:-1]) / np.maximum(TINY_NUMBER, x[1:] - x[:-1])
    b[-1] = b[-2]
    return piecewise_cubic(x, y, b, np.zeros(n), np.zeros(n))


def polynomial(coefficients):
    """``Σ c_k s^(n−1−k)`` (decreasing powers, SimTK ``Function::Polynomial``) by Horner's rule."""
    coefficients = [float(c) for c in coefficients]

    def f(s):
        out = ca.SX(coefficients[0]) if coefficients else ca.SX(0)
        for c in coefficients[1:]:
            out = out * s + c
        return out

    return f


def _knots(el, path):
    x, y = floats(el, "x", path), floats(el, "y", path)
    if x.size != y.size or x.size == 0:
        raise ModelError(f"{el.tag} `{el.get('name', '')}`{where(el, path)} has {x.size} x and {y.size} y values; give as many of each, at least one.")
    if np.any(np.diff(x) < 0):
        raise ModelError(f"{el.tag} `{el.get('name', '')}`{where(el, path)} has x values that decrease; OpenSim's splines need increasing knots.")
    return x, y


def _read_linear(el, path):
    coef = floats(el, "coefficients", path)
    if coef.size != 2:
        raise ModelError(f"LinearFunction{where(el, path)} has {coef.size} coefficients; it takes (slope, intercept).")
    return lambda s: coef[0] * s + coef[1]


def _read_constant(el, path):
    value = float(floats(el, "value", path)[0])
    return lambda *s: ca.SX(value)


def _read_multiplier(el, path):
    inner = function_child(el, "function", path)
    if inner is None:
        raise ModelError(f"MultiplierFunction{where(el, path)} has no function to scale.")
    scale_text = node_text(el, "scale")
    scale = float(scale_text) if scale_text is not None else 1.0
    g = read_function(inner, path)
    return lambda s: scale * g(s)


#: Function element tag -> reader ``(element, path) -> callable``.
FUNCTIONS = {
    "Constant": _read_constant,
    "LinearFunction": _read_linear,
    "PolynomialFunction": lambda el, path: polynomial(floats(el, "coefficients", path)),
    "SimmSpline": lambda el, path: simm_spline(*_knots(el, path)),
    "NaturalCubicSpline": lambda el, path: simm_spline(*_knots(el, path)),
    "PiecewiseLinearFunction": lambda el, path: piecewise_linear(*_knots(el, path)),
    "MultiplierFunction": _read_multiplier,
}


def read_function(el, path=None):
    """The callable ``f(s) -> SX`` of a function element (``<SimmSpline>``, ``<LinearFunction>``, ...).

    Raises
    ------
    ModelError
        For a function type colloc does not read, naming it and its line.
    """
    reader = FUNCTIONS.get(el.tag)
    if reader is None:
        raise ModelError(f"Function `{el.tag}` `{el.get('name', '')}`{where(el, path)} is not supported; "
                         f"colloc reads {', '.join(FUNCTIONS)}.")
    return reader(el, path)


def function_child(el, tag, path=None):
    """The function element of the property ``tag`` of ``el``, or ``None``.

    OpenSim writes an object-valued property either wrapped, ``<function><SimmSpline>…``,
    or as the object itself named after the property, ``<SimmSpline name="function">``;
    ``None`` also when the wrapper is empty.
    """
    holder = el.find(tag)
    if holder is not None:
        kids = list(holder)
        return kids[0] if kids else None
    return next((k for k in el if k.get("name") == tag and len(k)), None)


__all__ = ["read_function", "function_child", "simm_spline", "simm_spline_coefficients", "piecewise_linear",
           "polynomial", "FUNCTIONS"]
