"""Bounds and path constraints imposed inside each interval too (the ``path_points=k`` option).

Grid points alone leave the interpolant free between them: a UR10 whose
joint speeds sit on their limit at every grid point reaches three times the
limit in between (:mod:`colloc.simulate.limits` measures it).  With ``path_points=k``
the transcription evaluates the scheme's own interpolant at ``k`` equally
spaced local times ``s_j = j/(k+1)`` inside every interval — states by the
scheme's state interpolant ``x(s) = X A(s) + h F B(s)``
(:func:`colloc.discretization.interpolant.state_basis`), controls, derivative variables and
multipliers by the polynomial through their collocation-point values — and
adds, at each of them, the bounds of every state and control with a finite
bound and every path constraint, as ordinary rows (kind ``inside``; the path
constraints through the same point function as at the grid points, kind
``path``).  The rows are linear in the node values (bounds) or one mapped
call of the point function (path constraints), so the NLP grows by
``k · n · (bounded variables + path rows)`` rows and no variables.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from ..discretization.interpolant import collocation_nodes, state_basis
from ..discretization.schemes import lagrange_basis


def local_times(k) -> np.ndarray:
    """The ``k`` local times strictly inside an interval, ``j/(k+1)``."""
    return np.arange(1, k + 1) / (k + 1)


def _combine(M, grid, nodes, weights):
    """``Σ_j M[:, node_j] weights[j]`` over the given nodes: one row per variable, one column per interval."""
    return sum(float(c) * M[:, list(grid.node(j))] for j, c in zip(nodes, weights) if c != 0.0)


def add_rows(rows, problem, grid, point, meta, k, T, H, V, XD):
    """Add the bound and path rows at ``k`` points inside every interval (module docstring).

    ``T`` and ``H`` are the grid's times and interval lengths (rows), ``V`` the variable blocks,
    ``XD`` the state derivatives at the grid points.
    """
    model, scheme, n = problem.model, grid.scheme, grid.num_intervals
    X, Z, U, LAM, P = V["x"], V["z"], V["u"], V["lam"], V["p"]
    s = local_times(k)
    A, B, _, _ = state_basis(scheme, s)
    cols = collocation_nodes(scheme)
    L = lagrange_basis(scheme.nodes[cols], s)
    all_nodes = range(scheme.num_nodes)
    t0 = T[:, list(grid.node(0))]
    nx = X.size1()
    Hx = ca.repmat(H, nx, 1) if nx else H
    bounded = {kind: [(i, v.name, *problem.bounds[v.name]) for i, v in enumerate(model.of_kind(kind))
                      if np.isfinite(problem.bounds[v.name]).any()] for kind in ("state", "control")}
    for m, sm in enumerate(s):
        Xs = _combine(X, grid, all_nodes, A[:, m]) + Hx * _combine(XD, grid, all_nodes, B[:, m]) if nx else X[:, :n]
        Us, Zs, LAMs = (_combine(M, grid, cols, L[:, m]) if M.size1() else M[:, :n] for M in (U, Z, LAM))
        label = f"@s={sm:.3g}"
        for kind, M in (("state", Xs), ("control", Us)):
            if bounded[kind]:
                idx, names, lo, hi = zip(*bounded[kind])
                rows.add("inside", [nm + label for nm in names], M[list(idx), :], np.arange(n), np.array(lo), np.array(hi))
        if meta["path_names"]:
            Ts = t0 + sm * H
            out = point.map(n)(Ts, Xs, Zs, Us, LAMs, ca.repmat(P, 1, n))
            rows.add("path", [nm + label for nm in meta["path_names"]], out[2], np.arange(n), meta["path_lower"], meta["path_upper"])
