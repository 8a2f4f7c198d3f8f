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
    time, values = _check(time, values)
    if time.size <= degree:
        raise ProblemError(f"A natural spline of degree {degree} needs more than {degree} rows; got {time.size}.")
    # one banded linear system in each piece's coefficients of s = τ/hᵢ ∈ [0, 1], rows in piece order;
    # numpy alone (importing scipy.interpolate costs more CPU than a MocoInverse's problem build) and no
    # LAPACK call (a threaded OpenBLAS spins its threads on a busy machine: 0.1 CPU s per spline)
    m, d, h = time.size - 1, degree, np.diff(time)
    j = np.arange(d + 1)
    falling = np.array([[np.prod(np.arange(q - k + 1, q + 1)) if q >= k else 0.0 for q in j] for k in j])

    def row(i, s, k, scale=1.0):
        """The k-th derivative of piece i at s, times hᵢᵏ (and ``scale``): ``(first column, values)``."""
        return i * (d + 1), scale * falling[k] * float(s) ** np.maximum(j - k, 0)

    def joined(i, k):  # continuity of the k-th derivative at tᵢ₊₁, both sides scaled by hᵢ₊₁ᵏ
        return i * (d + 1), np.concatenate([row(i, 1, k, (h[i + 1] / h[i]) ** k)[1], -row(i + 1, 0, k)[1]])

    natural = range((d + 1) // 2, d)
    rows, rhs = [row(0, 0, k) for k in natural], [0.0] * len(natural)
    for i in range(m):
        rows += [row(i, 0, 0), row(i, 1, 0)]
        rhs += [values[i], values[i + 1]]
        if i + 1 < m:
            rows += [joined(i, k) for k in range(1, d)]
            rhs += [0.0] * (d - 1)
    rows += [row(m - 1, 1, k) for k in natural]
    rhs += [0.0] * len(natural)
    a = _banded_solve(rows, np.array(rhs)).reshape(m, d + 1)
    return (a / h[:, None] ** j).T[::-1]


def _banded_solve(rows, b):
    """``A⁻¹ b`` for ``A`` given as rows ``(first column, values)`` within a narrow band, by Gaussian
    elimination with partial pivoting; stored by diagonals (row r's column c at ``W[r, c − r + below]``), so
    memory and work grow with the rows, not their square."""
    n = b.size
    below = max(r - c for r, (c, _) in enumerate(rows))
    above = max(c + v.size - 1 - r for r, (c, v) in enumerate(rows))
    width = 2 * below + above + 1  # room for the fill partial pivoting brings in
    W = np.zeros((n, width))
    for r, (c, v) in enumerate(rows):
        W[r, c - r + below:c - r + below + v.size] = v
    b = b.astype(float).copy()
    for k in range(n):
        last, span = min(n, k + below + 1), min(n, k + below + above + 1) - k
        r = np.arange(k, last)
        p = k + int(np.argmax(np.abs(W[r, k - r + below])))
        if p != k:
            pk, pp = slice(below, below + span), slice(k - p + below, k - p + below + span)
            W[k, pk], W[p, pp], b[[k, p]] = W[p, pp].copy(), W[k, pk].copy(), b[[p, k]]
        r = r[1:]
        f = W[r, k - r + below] / W[k, below]
        cols = (k - r + below)[:, None] + np.arange(span)[None, :]
        W[r[:, None], cols] -= np.outer(f, W[k, below:below + span])
        b[r] -= f * b[k]
    x = np.zeros(n)
    for k in range(n - 1, -1, -1):
        span = min(n, k + below + above + 1) - k
        x[k] = (b[k] - W[k, below + 1:below + span] @ x[k + 1:k + span]) / W[k, below]
    return x


def natural_sx(time, values, t, degree=3):
    """The natural spline of ``degree`` through ``(time, values)`` at the SX ``t``, as a sum of gated pieces.

    Beyond the data the first and last pieces are extended (the gates are open-ended), so the
    expression keeps its continuity at every interior knot and is smooth outside.  Every piece is
    built at once, as vectors (the same scalar graph as piece by piece, a Python call per operation
    instead of one per operation and piece: the 2-D walk's 46 references took 0.96 CPU s piece by piece).
    """
    time, values = _check(time, values)
    coeffs = natural_coefficients(time, values, degree)
    last = time.size - 2
    tau = t - ca.DM(time[:-1])
    piece = ca.DM(coeffs[0])
    for c in coeffs[1:]:  # Horner, highest power first
        piece = piece * tau + ca.DM(c)
    gate = ca.vertcat(t < time[1], ca.logic_and(t >= ca.DM(time[1:last]), t < ca.DM(time[2:last + 1])), t >= time[last])
    return ca.sum1(ca.if_else(gate, piece, 0))


#: Splines already made, by their data, method and name (a tracking goal, its speeds and its guess ask
#: for the same reference's spline again; CasADi functions are immutable, so one can serve them all).
_MADE: dict = {}
_MADE_LIMIT = 256


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
    key = (time.tobytes(), values.tobytes(), method, name)
    if key not in _MADE:
        if len(_MADE) >= _MADE_LIMIT:
            _MADE.clear()
        _MADE[key] = _spline(time, values, method, name)
    return _MADE[key]


def _spline(time, values, method, name):
    t = ca.SX.sym("t")
    if method == "bspline":
        inner = ca.interpolant(f"{name}_bspline", "bspline", [time], values)
        return ca.Function(name, [t], [inner(t)], ["t"], ["value"])
    degree = 5 if method == "quintic" else 3
    return ca.Function(name, [t], [natural_sx(time, values, t, degree)], ["t"], ["value"])


__all__ = ["spline_function", "natural_sx", "natural_coefficients", "METHODS"]
