"""Betts' relative local error of every mesh interval of a solved trajectory.

On interval ``k`` the interpolated solution ``x̃(t)`` (the scheme's own
interpolant) and ``ũ(t)`` leave a dynamics residual ``r = ẋ̃ − f(t, x̃, ũ, λ̃, p)``
that vanishes at the collocation points and not in between.  Its integral

    η_ik = ∫_{t_k}^{t_{k+1}} |ẋ̃_i(t) − f_i(t, x̃, ũ, λ̃, p)| dt,

taken by Gauss–Legendre quadrature between consecutive nodes (where the
integrand is smooth), scaled per state by ``1 + w_i`` with
``w_i = max over the grid of |x_i|, |ẋ_i|``, gives

    ε_k = max_i η_ik / (1 + w_i)

(J. T. Betts, *Practical Methods for Optimal Control and Estimation Using
Nonlinear Programming*, 2nd ed., SIAM 2010, §4.7).  Each integral cost term
adds one row: the interval's share of the objective error,
``|h Σ_j w_j L_j − ∫ L(t, x̃, ũ, λ̃, p) dt|`` (the scheme's quadrature on the
grid against Gauss–Legendre along the interpolated solution), scaled by
``1 + max(max |L|, ∫ |L| dt)``.

Models written with implicit residuals are turned into explicit form when the
residuals are affine in the derivatives (``mode="explicit"``, which also covers
multibody components; multipliers come from the solution); otherwise the
residual ``R(t, x̃, ẋ̃, ũ, λ̃, p)`` itself is integrated for the implicit rows.
Controls and multipliers are the polynomials through their collocation-point
values (:class:`colloc.discretization.interpolant.Interpolant`).  An interval where a control
chatters from grid point to grid point (:mod:`colloc.results.oscillation`, a singular
arc) has no residual to show it; its error is the control's largest step
there.  Mesh refinement (:mod:`colloc.pipeline.refine`) splits the intervals by this
measure and every solve reports its largest value (:mod:`colloc.pipeline.accuracy`).

Legend: ``s`` local time in an interval, ``h`` interval lengths (physical time),
``n`` intervals, ``q`` quadrature points per interval, ``r`` residual.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from ..discretization.interpolant import Interpolant
from ..results.oscillation import oscillating_intervals
from ..transcription import make_options, point_function


#: Gauss–Legendre points per sub-interval between consecutive scheme nodes.
QUADRATURE_POINTS = 5


def quadrature(scheme, points=QUADRATURE_POINTS):
    """Local times and weights on [0, 1]: Gauss–Legendre on each gap between nodes (``points`` per gap, gaps in order)."""
    g, w = np.polynomial.legendre.leggauss(points)
    edges = np.unique(np.concatenate([[0.0, 1.0], scheme.nodes]))
    s, weights = [], []
    for a, b in zip(edges[:-1], edges[1:]):
        s.append(a + (b - a) * (g + 1) / 2)
        weights.append((b - a) * w / 2)
    return np.concatenate(s), np.concatenate(weights)


def _point_function(problem):
    """The one-point dynamics in explicit form if the model allows it, else the default (implicit) form."""
    try:
        return point_function(problem, make_options(mode="explicit"))
    except ModelError:
        return point_function(problem, make_options())


@dataclass
class Residuals:
    """The interpolated solution checked against the dynamics at Gauss–Legendre points of every interval.

    Attributes
    ----------
    itp : Interpolant
    s, w : ndarray, shape (q,)
        Local times and weights of :func:`quadrature`.
    r : ndarray, shape (num_states, n, q)
        Signed residual ``ẋ̃ − f`` (for a state whose implicit residual cannot be made explicit: ``R``).
    implicit : ndarray of bool, shape (num_states,)
        Rows of ``r`` that are implicit residuals, not derivative mismatches.
    L : ndarray, shape (num_integral_costs, n, q)
        Each integral cost's integrand along the interpolated solution.
    L_nodes : ndarray, shape (num_integral_costs, n, num_nodes)
        The same integrands at the grid's nodes (what the scheme's quadrature used).
    """

    itp: Interpolant
    s: np.ndarray
    w: np.ndarray
    r: np.ndarray
    implicit: np.ndarray
    L: np.ndarray
    L_nodes: np.ndarray

    def cost_quadrature_error(self) -> np.ndarray:
        """``∫ L dt − h Σ_j w_j L_j`` per cost term and interval, shape (num_integral_costs, n)."""
        true = (self.L * self.w).sum(axis=2) * self.itp.h
        scheme = (self.L_nodes @ self.itp.scheme.weights) * self.itp.h
        return true - scheme


def residuals(problem, trajectory, points=QUADRATURE_POINTS) -> Residuals:
    """The dynamics residual and the cost integrands of ``trajectory``'s interpolant (see :class:`Residuals`)."""
    model = problem.model
    point, meta = _point_function(problem)
    itp = Interpolant(trajectory)
    s, w = quadrature(itp.scheme, points)
    n, q = itp.num_intervals, s.size
    states = [v.name for v in model.states]
    implicit = [name[: -len(".dot")] for name in meta["z_names"]]
    P = np.array([trajectory.parameters[v.name] for v in model.parameters]).reshape(-1, 1)

    X, XD = itp.states(states, s)
    Z = XD[[states.index(name) for name in implicit]] if implicit else np.zeros((0, n, q))
    U = itp.controls([v.name for v in model.controls], s)
    LAM = itp.others([v.name for v in model.multipliers], s)
    flat = lambda a: a.reshape(a.shape[0], n * q)  # noqa: E731 - (rows, n, q) -> (rows, n*q), interval-major
    xdot, res, _, _, L = _evaluate(point, itp.times(s).reshape(1, n * q), flat(X), flat(Z), flat(U), flat(LAM), P)
    r = XD - xdot.reshape(len(states), n, q)
    mask = np.zeros(len(states), dtype=bool)
    for i, name in enumerate(implicit):
        r[states.index(name)] = res[i].reshape(n, q)
        mask[states.index(name)] = True
    costs = sum(1 for c in problem.costs if c.integral is not None)
    L_nodes = np.zeros((costs, n, itp.scheme.num_nodes))
    if costs:
        column = lambda names: np.array([trajectory[v] for v in names]).reshape(len(names), trajectory.time.size)  # noqa: E731
        L_grid = _evaluate(point, trajectory.time[None, :], column(states), column(meta["z_names"]),
                           column([v.name for v in model.controls]), column([v.name for v in model.multipliers]), P)[4]
        L_nodes = L_grid[:, itp.index]
    return Residuals(itp, s, w, r, mask, L.reshape(costs, n, q), L_nodes)


def local_errors(problem, trajectory, points=QUADRATURE_POINTS, rs=None):
    """Per-row absolute local errors of every interval, their scales and labels.

    Rows are the states (dynamics residual of the interpolated solution,
    ``η_ik = ∫ |ẋ̃_i − f_i| dt``; for a state whose implicit residual cannot be
    made explicit, ``∫ |R_i| dt``) and then each integral cost term (the
    difference between the scheme's quadrature of the integrand on the grid and
    the integral of the integrand along the interpolated solution: that
    interval's error in the objective).

    Parameters
    ----------
    problem : Problem
        The problem ``trajectory`` solves (same variable names).
    trajectory : Trajectory
        A solution written by ``colloc.solve``.
    points : int
        Gauss–Legendre points on each gap between consecutive scheme nodes.
    rs : Residuals, optional
        :func:`residuals` of ``trajectory`` when the caller has them already.

    Returns
    -------
    eta : ndarray, shape (num_rows, num_intervals)
    scale : ndarray, shape (num_rows,)
        ``1 + max over the grid of |x_i|, |ẋ_i|`` for a state (Betts' weights);
        ``1 + max(max |L|, ∫ |L| dt)`` for a cost integrand ``L``.
    labels : list of str
        ``dynamics:NAME`` or ``cost:TERM``.
    """
    rs = residuals(problem, trajectory, points) if rs is None else rs
    h = rs.itp.h
    states = [v.name for v in problem.model.states]
    eta = [(np.abs(rs.r) * rs.w).sum(axis=2) * h]
    scale = [1.0 + np.array([np.maximum(np.abs(trajectory[v]), np.abs(trajectory[v + ".dot"])).max() for v in states])]
    labels = [f"dynamics:{v}" for v in states]
    costs = [c.name for c in problem.costs if c.integral is not None]
    if costs:
        eta.append(np.abs(rs.cost_quadrature_error()))
        scale.append(1.0 + np.maximum(np.abs(rs.L_nodes).max(axis=(1, 2)), (np.abs(rs.L) * rs.w).sum(axis=2) @ h))
        labels += [f"cost:{c}" for c in costs]
    return np.concatenate(eta), np.concatenate(scale), labels


def _evaluate(point, t, x, z, u, lam, p):
    """``point`` mapped over the columns of its inputs, outputs as numpy arrays."""
    N = t.shape[1]
    out = point.map(N)(t, x, z, u, lam, np.tile(p, (1, N)))
    return [np.asarray(o).reshape(-1, N) for o in out]


def estimate_errors(problem, trajectory, points=QUADRATURE_POINTS, rs=None) -> np.ndarray:
    """Betts' relative local error of every mesh interval.

    Returns
    -------
    ndarray, shape (num_intervals,)
        ``ε_k = max_i η_ik / scale_i`` over the rows of :func:`local_errors`
        (module docstring); zeros for a model without states or integral costs.
    """
    eta, scale, _ = local_errors(problem, trajectory, points, rs)
    errors = (eta / scale[:, None]).max(axis=0) if eta.shape[0] else np.zeros(eta.shape[1])
    return np.maximum(errors, oscillation_errors(trajectory))


def oscillation_errors(trajectory) -> np.ndarray:
    """The error of intervals where a control oscillates from grid point to grid point.

    A chattering control (:mod:`colloc.results.oscillation`) leaves no dynamics residual,
    so Betts' estimate passes it; the interval's largest control step relative to
    the control's size, ``max |Δu| / (1 + max |u|)``, stands in for its error so
    that refinement splits it.

    Returns
    -------
    ndarray, shape (num_intervals,)
        Zero where no control oscillates.
    """
    itp = Interpolant(trajectory)
    out = np.zeros(itp.num_intervals)
    for name, flags in oscillating_intervals(trajectory, itp.grid).items():
        u = itp.nodes(name)                                   # (n, num_nodes)
        step = np.abs(np.diff(u, axis=1)).max(axis=1) / (1.0 + np.abs(trajectory[name]).max())
        out = np.where(flags, np.maximum(out, step), out)
    return out


