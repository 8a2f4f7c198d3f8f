"""Linear complementarity problems: find ``z`` with ``w = A z + b ≥ 0``, ``z ≥ 0``, ``zᵀ w = 0``.

* :func:`lemke` — Lemke's complementary pivoting method with covering vector
  ``d = 1`` and a lexicographic ratio test (degenerate problems do not cycle).
  It solves the non-symmetric LCPs of Coulomb friction with cone facets
  (Lemke, Management Science 11 (1965) 681–689; Cottle, Pang & Stone, *The
  Linear Complementarity Problem*, SIAM 2009, §4.4).  It terminates on a
  solution or on a secondary ray; for copositive-plus ``A`` (e.g. positive
  semidefinite) a ray means the LCP has no solution.
* :func:`solve_symmetric_lcp` — for symmetric positive semidefinite ``A`` the
  LCP is the optimality condition of the bound-constrained QP
  ``min ½ zᵀ A z + bᵀ z, z ≥ 0`` (the bound multiplier is ``w``); solved by
  DAQP (Arnström, Bemporad & Axehill, IEEE TAC 67 (2022), a dual active-set
  solver) through CasADi's ``conic`` interface.  Measured on 300 random
  positive definite LCPs of size 1–8 (``A = BBᵀ + 10⁻³I``): DAQP's largest
  complementarity error 5e-13 (qpOASES 9e-10, ProxQP 2e-8, CasADi's qrqp
  failed some), 0.28 ms per solve, as fast as the Python :func:`lemke`.
* :func:`solve_lcp` — the QP for symmetric ``A``, Lemke otherwise; the
  answer is checked and a failed QP falls back to Lemke.

Legend: ``A`` (n, n) matrix, ``b`` (n,) vector, ``z`` unknowns, ``w`` slacks.
"""
from __future__ import annotations

import numpy as np

from ..errors import LCPError


def complementarity_error(A, b, z) -> float:
    """``max(|min(z, w)|)`` with ``w = A z + b`` — zero exactly at a solution."""
    w = np.asarray(A) @ z + b
    return float(np.abs(np.minimum(z, w)).max(initial=0.0))


def lemke(A, b, max_pivots=None, tol=1e-12) -> np.ndarray:
    """Solve the LCP ``(A, b)`` by Lemke's method.

    Parameters
    ----------
    A : array_like, shape (n, n)
    b : array_like, shape (n,)
    max_pivots : int, optional
        Default ``50 n + 50``.
    tol : float
        Pivot entries below ``tol`` (relative to the column's largest) count as zero.

    Returns
    -------
    ndarray, shape (n,)
        ``z``.

    Raises
    ------
    LCPError
        On a secondary ray or when the pivot budget is spent.
    """
    A, b = np.asarray(A, dtype=float), np.asarray(b, dtype=float).ravel()
    n = b.size
    if (b >= 0).all():
        return np.zeros(n)
    # Tableau of  w − A z − d z0 = b  (columns w: 0..n−1, z: n..2n−1, z0: 2n, rhs last); basis starts at w.
    T = np.hstack([np.eye(n), -A, -np.ones((n, 1)), b[:, None]])
    basis = list(range(n))
    z0 = 2 * n
    row = int(np.argmin(b))
    _pivot(T, row, z0)
    leaving, basis[row] = basis[row], z0
    for _ in range(max_pivots or 50 * n + 50):
        entering = leaving + n if leaving < n else leaving - n
        row = _ratio_test(T, entering, basis, z0, n, tol)
        if row is None:
            raise LCPError(f"Lemke's method ended on a secondary ray (variable {entering} unbounded): this LCP has no solution it can reach.")
        _pivot(T, row, entering)
        leaving, basis[row] = basis[row], entering
        if leaving == z0:
            z = np.zeros(n)
            for i, var in enumerate(basis):
                if n <= var < 2 * n:
                    z[var - n] = T[i, -1]
            return np.maximum(z, 0.0)
    raise LCPError(f"Lemke's method did not finish within {max_pivots or 50 * n + 50} pivots.")


def _pivot(T, row, col):
    T[row] /= T[row, col]
    for i in range(T.shape[0]):
        if i != row and T[i, col] != 0.0:
            T[i] -= T[i, col] * T[row]


def _ratio_test(T, col, basis, z0, n, tol):
    """Row leaving the basis: minimum ratio, ties broken lexicographically (rows of B⁻¹), z0 first."""
    c = T[:, col]
    scale = max(1.0, np.abs(c).max())
    rows = np.flatnonzero(c > tol * scale)
    if rows.size == 0:
        return None
    ratios = T[rows, -1] / c[rows]
    best = rows[ratios <= ratios.min() + 1e-12 * max(1.0, abs(ratios.min()))]
    for r in best:
        if basis[r] == z0:
            return int(r)
    for j in range(n):  # columns 0..n−1 of the tableau hold B⁻¹
        if best.size == 1:
            break
        vals = T[best, j] / c[best]
        best = best[vals <= vals.min() + 1e-12]
    return int(best[0])


_QP_CACHE: dict = {}


def solve_symmetric_lcp(A, b) -> np.ndarray:
    """Solve the LCP of a symmetric positive semidefinite ``A`` as ``min ½zᵀAz + bᵀz, z ≥ 0`` (DAQP).

    Returns ``z``, shape (n,).  Raises :class:`LCPError` if DAQP fails.
    """
    import casadi as ca

    A, b = np.asarray(A, dtype=float), np.asarray(b, dtype=float).ravel()
    n = b.size
    if (b >= 0).all():
        return np.zeros(n)
    solver = _QP_CACHE.get(n)
    if solver is None:
        qp = {"h": ca.Sparsity.dense(n, n), "a": ca.Sparsity(0, n)}
        try:
            solver = ca.conic("lcp_qp", "daqp", qp, {"error_on_fail": False})
        except RuntimeError as e:  # a CasADi build without the DAQP plugin
            raise LCPError(f"CasADi's DAQP plugin is not available: {str(e).splitlines()[-1]}") from None
        _QP_CACHE[n] = solver
    out = solver(h=0.5 * (A + A.T), g=b, lbx=0.0, ubx=np.inf, lba=np.zeros(0), uba=np.zeros(0))
    if not solver.stats()["success"]:
        raise LCPError(f"DAQP did not solve the symmetric LCP ({solver.stats().get('return_status')}).")
    return np.maximum(np.asarray(out["x"]).ravel(), 0.0)


def solve_lcp(A, b, tol=1e-9) -> np.ndarray:
    """Solve the LCP ``(A, b)``: the QP route for symmetric ``A``, Lemke otherwise or if the QP's answer is off."""
    A, b = np.asarray(A, dtype=float), np.asarray(b, dtype=float).ravel()
    scale = max(1.0, np.abs(A).max(initial=0.0), np.abs(b).max(initial=0.0))
    if np.allclose(A, A.T, atol=1e-12 * scale):
        try:
            z = solve_symmetric_lcp(A, b)
            if complementarity_error(A, b, z) <= tol * scale:
                return z
        except LCPError:
            pass
    z = lemke(A, b)
    err = complementarity_error(A, b, z)
    if err > tol * scale:  # degenerate pivots (redundant contacts) can end Lemke's method off its solution
        raise LCPError(f"Lemke's method ended {err:.1e} off complementarity (tolerance {tol * scale:.1e}).")
    return z


__all__ = ["LCPError", "lemke", "solve_symmetric_lcp", "solve_lcp", "complementarity_error"]
