"""Sampled data as smooth functions of time inside CasADi expressions.

Two interpolating cubic splines are offered, both twice continuously differentiable, so the exact
Jacobians and Hessians colloc gives IPOPT exist everywhere on the data's time span:

* ``"bspline"`` (the default): CasADi's ``interpolant(..., "bspline")``, one call node in the expression
  graph, evaluated by de Boor's algorithm after a binary search, so its cost grows with log(rows);
  its Jacobian and Hessian are B-splines of lower degree built once by CasADi.
* ``"natural"``: a natural cubic spline (second derivative zero at both ends) written as SX pieces
  ``Σᵢ [tᵢ ≤ t < tᵢ₊₁] Pᵢ(t − tᵢ)``: plain arithmetic that CasADi can differentiate and code-generate
  like any other expression, but every piece is evaluated at every call, so its cost grows with rows.
* ``"quintic"``: the natural quintic interpolating spline (third and fourth derivatives zero at both
  ends, C⁴) as SX pieces like ``"natural"``: the spline Moco fits to every reference (``GCVSplineSet``
  of degree 5 with zero error variance), for objectives that must agree with Moco's between rows too.

``scripts/table_splines.py`` measures both (derivative continuity at the knots and evaluation cost);
docs/goals.md reports the numbers and the reason for the default.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from ..errors import ProblemError

METHODS = ("bspline", "natural", "quintic")


def _check(time, values):
    time, values = np.asarray(time, dtype=float), np.asarray(values, dtype=float)
    if time.ndim != 1 or values.shape != time.shape or time.size < 4:
        raise ProblemError(f"A spline needs times and values as two 1-D arrays of the same length ≥ 4; got shapes "
                           f"{time.shape} and {values.shape}.")
    if not (np.isfinite(time).all() and np.isfinite(values).all()):
        raise ProblemError("A spline's times and values must be finite.")
    if np.any(np.diff(time) <= 0):
        raise ProblemError("A spline's times must be strictly increasing.")
    return time, values


def natural_coefficients(time, values, degree=3):
    """Per-interval power coefficients of the natural interpolating spline of odd ``degree`` (3 or 5).

    Shape (degree + 1, rows − 1), highest power first: on [tᵢ, tᵢ₊₁], s = Σₖ c[k, i] τ^(degree − k) with
    τ = t − tᵢ.  Natural: the derivatives of orders (degree + 1)/2 to degree − 1 vanish at both ends (the
    second for a cubic; the third and fourth for a quintic, the interpolating limit of Woltring's GCVSPL
    that OpenSim's ``GCVSpline`` computes).
    """
    from scipy.interpolate import PPoly, make_interp_spline

    time, values = _check(time, values)
    if time.size <= degree:
        raise ProblemError(f"A natural spline of degree {degree} needs more than {degree} rows; got {time.size}.")
    ends = [(k, 0.0) for k in range((degree + 1) // 2, degree)]
    return PPoly.from_spline(make_interp_spline(time, values, k=degree, bc_type=(ends, ends))).c[:, degree:-degree]


def natural_sx(time, values, t, degree=3):
    """The natural spline of ``degree`` through ``(time, values)`` at the SX ``t``, as a sum of gated pieces.

    Beyond the data the first and last pieces are extended (the gates are open-ended), so the
    expression keeps its continuity at every interior knot and is smooth outside.
    """
    time, values = _check(time, values)
    coeffs = natural_coefficients(time, values, degree)
    out = 0
    last = time.size - 2
    for i in range(last + 1):
        tau = t - time[i]
        piece = 0
        for c in coeffs[:, i]:  # Horner, highest power first
            piece = piece * tau + c
        if i == 0:
            gate = t < time[1]
        elif i == last:
            gate = t >= time[i]
        else:
            gate = ca.logic_and(t >= time[i], t < time[i + 1])
        out += ca.if_else(gate, piece, 0)
    return out


def spline_function(time, values, method="bspline", name="spline") -> ca.Function:
    """A CasADi ``Function`` ``t ↦ s(t)`` interpolating ``(time, values)`` with a C² spline.

    Parameters
    ----------
    time, values : array_like, shape (num_rows,)
    method : {"bspline", "natural", "quintic"}
        See the module notes.
    name : str
        The function's name (letters, digits and ``_``).
    """
    if method not in METHODS:
        raise ProblemError(f"Unknown spline method {method!r}; use one of {', '.join(METHODS)}.")
    time, values = _check(time, values)
    t = ca.SX.sym("t")
    if method == "bspline":
        inner = ca.interpolant(f"{name}_bspline", "bspline", [time], values)
        return ca.Function(name, [t], [inner(t)], ["t"], ["value"])
    degree = 5 if method == "quintic" else 3
    return ca.Function(name, [t], [natural_sx(time, values, t, degree)], ["t"], ["value"])


__all__ = ["spline_function", "natural_sx", "natural_coefficients", "METHODS"]
