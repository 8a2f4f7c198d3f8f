"""Sampled data as smooth functions of time inside CasADi expressions.

Two interpolating cubic splines are offered, both twice continuously differentiable, so the exact
Jacobians and Hessians colloc gives IPOPT exist everywhere on the data's time span:

* ``"bspline"`` (the default): CasADi's ``interpolant(..., "bspline")``, one call node in the expression
  graph, evaluated by de Boor's algorithm after a binary search, so its cost grows with log(rows);
  its Jacobian and Hessian are B-splines of lower degree built once by CasADi.
* ``"natural"``: a natural cubic spline (second derivative zero at both ends) written as SX pieces
  ``Σᵢ [tᵢ ≤ t < tᵢ₊₁] Pᵢ(t − tᵢ)``: plain arithmetic that CasADi can differentiate and code-generate
  like any other expression, but every piece is evaluated at every call, so its cost grows with rows.

``scripts/table_splines.py`` measures both (derivative continuity at the knots and evaluation cost);
docs/goals.md reports the numbers and the reason for the default.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from ..errors import ProblemError

METHODS = ("bspline", "natural")


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


def natural_cubic_coefficients(time, values):
    """Per-interval coefficients ``(c0, c1, c2, c3)`` of the natural cubic spline, each shape (rows − 1,):
    on [tᵢ, tᵢ₊₁], s = c0 + c1 τ + c2 τ² + c3 τ³ with τ = t − tᵢ."""
    from scipy.interpolate import CubicSpline

    time, values = _check(time, values)
    c = CubicSpline(time, values, bc_type="natural").c  # highest power first
    return c[3], c[2], c[1], c[0]


def natural_cubic_sx(time, values, t):
    """The natural cubic spline through ``(time, values)`` at the SX ``t``, as a sum of gated pieces.

    Beyond the data the first and last pieces are extended (the gates are open-ended), so the
    expression stays C² at every interior knot and smooth outside.
    """
    time, values = _check(time, values)
    c0, c1, c2, c3 = natural_cubic_coefficients(time, values)
    out = 0
    last = time.size - 2
    for i in range(last + 1):
        tau = t - time[i]
        piece = c0[i] + tau * (c1[i] + tau * (c2[i] + tau * c3[i]))
        if i == 0:
            gate = t < time[1]
        elif i == last:
            gate = t >= time[i]
        else:
            gate = ca.logic_and(t >= time[i], t < time[i + 1])
        out += ca.if_else(gate, piece, 0)
    return out


def spline_function(time, values, method="bspline", name="spline") -> ca.Function:
    """A CasADi ``Function`` ``t ↦ s(t)`` interpolating ``(time, values)`` with a C² cubic spline.

    Parameters
    ----------
    time, values : array_like, shape (num_rows,)
    method : {"bspline", "natural"}
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
    return ca.Function(name, [t], [natural_cubic_sx(time, values, t)], ["t"], ["value"])


__all__ = ["spline_function", "natural_cubic_sx", "natural_cubic_coefficients", "METHODS"]
