"""Adaptive mesh refinement: solve, estimate each interval's error, split, warm-start, repeat.

Error estimate (J. T. Betts, *Practical Methods for Optimal Control and
Estimation Using Nonlinear Programming*, 2nd ed., SIAM 2010, §4.7, the
"relative local error"): on interval ``k`` the interpolated solution
``x̃(t)`` (the scheme's own interpolant) and ``ũ(t)`` leave a dynamics residual
``ẋ̃ − f(t, x̃, ũ, λ̃, p)`` that vanishes at the collocation points and not in
between.  Its integral

    η_ik = ∫_{t_k}^{t_{k+1}} |ẋ̃_i(t) − f_i(t, x̃, ũ, λ̃, p)| dt,

taken by Gauss–Legendre quadrature between consecutive nodes (where the
integrand is smooth), scaled per state by ``1 + w_i`` with
``w_i = max over the grid of |x_i|, |ẋ_i|``, gives

    ε_k = max_i η_ik / (1 + w_i).

Each integral cost term adds one row: the interval's share of the objective
error, ``|h Σ_j w_j L_j − ∫ L(t, x̃, ũ, λ̃, p) dt|`` (the scheme's quadrature on
the grid against Gauss–Legendre along the interpolated solution), scaled by
``1 + max(max |L|, ∫ |L| dt)``.

Models written with implicit residuals are turned into explicit form when the
residuals are affine in the derivatives (``mode="explicit"``, which also covers
multibody components; multipliers come from the solution); otherwise the
residual ``R(t, x̃, ẋ̃, ũ, λ̃, p)`` itself is integrated for the implicit rows.
Controls and multipliers are the polynomials through their collocation-point
values (:class:`colloc.discretization.interpolant.Interpolant`).  An interval where a control
chatters from grid point to grid point (:mod:`colloc.results.oscillation`, a singular
arc) has no residual to show it; its error is the control's largest step
there, so it is refined too.

Refinement (h-refinement; one scheme, so one degree, for the whole mesh):
an interval with ``ε_k > tolerance`` is split into
``ceil((ε_k / tolerance)^(1/r))`` equal pieces (at least 2, at most
``max_pieces``), where ``r`` is the power of ``h`` at which ``ε`` shrinks:
the residual of an interpolant that matches ``f`` at ``c`` collocation points
is ``O(h^c)``, so ``ε = O(h^(c+1))`` — ``r = 3`` trapezoidal, ``4``
Hermite–Simpson, ``d + 1`` Radau with ``d`` roots.  Intervals are never merged.

Legend: ``s`` local time in an interval, ``h`` interval lengths (physical time),
``n`` intervals.
"""
from __future__ import annotations

import dataclasses
import math
import time as _time

import numpy as np

from . import refine_vi
from .driver import run, transcription
from ..errors import ModelError, OptionError
from ..discretization.interpolant import Interpolant
from ..discretization.mesh import make_mesh
from ..results.oscillation import oscillating_intervals
from ..model.problem import Problem
from ..discretization.schemes import Scheme, get_scheme
from ..results.trajectory import Trajectory
from ..transcription import make_options, point_function

#: Gauss–Legendre points per sub-interval between consecutive scheme nodes.
QUADRATURE_POINTS = 5


def error_order(scheme: Scheme) -> int:
    """Power ``r`` of ``h`` at which the local error estimate shrinks (see the module docstring)."""
    return len(scheme.collocation_indices) + 1


def _quadrature(scheme: Scheme, points=QUADRATURE_POINTS):
    """Local times and weights on [0, 1]: Gauss–Legendre on each gap between nodes."""
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


def local_errors(problem, trajectory, points=QUADRATURE_POINTS):
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

    Returns
    -------
    eta : ndarray, shape (num_rows, num_intervals)
    scale : ndarray, shape (num_rows,)
        ``1 + max over the grid of |x_i|, |ẋ_i|`` for a state (Betts' weights);
        ``1 + max(max |L|, ∫ |L| dt)`` for a cost integrand ``L``.
    labels : list of str
        ``dynamics:NAME`` or ``cost:TERM``.
    """
    model = problem.model
    point, meta = _point_function(problem)
    itp = Interpolant(trajectory)
    s, w = _quadrature(itp.scheme, points)
    n, q = itp.num_intervals, s.size
    states = [v.name for v in model.states]
    implicit = [name[: -len(".dot")] for name in meta["z_names"]]
    P = np.array([trajectory.parameters[v.name] for v in model.parameters]).reshape(-1, 1)

    X, XD = itp.states(states, s)
    Z = XD[[states.index(name) for name in implicit]] if implicit else np.zeros((0, n, q))
    U = itp.others([v.name for v in model.controls], s)
    LAM = itp.others([v.name for v in model.multipliers], s)
    flat = lambda a: a.reshape(a.shape[0], n * q)  # noqa: E731 - (rows, n, q) -> (rows, n*q), interval-major
    xdot, res, _, _, L = _evaluate(point, itp.times(s).reshape(1, n * q), flat(X), flat(Z), flat(U), flat(LAM), P)
    err = np.abs(XD - xdot.reshape(len(states), n, q))
    for i, name in enumerate(implicit):
        err[states.index(name)] = np.abs(res[i].reshape(n, q))
    eta = [(err * w).sum(axis=2) * itp.h]
    scale = [1.0 + np.array([np.maximum(np.abs(trajectory[v]), np.abs(trajectory[v + ".dot"])).max() for v in states])]
    labels = [f"dynamics:{v}" for v in states]

    costs = [c.name for c in problem.costs if c.integral is not None]
    if costs:
        column = lambda names: np.array([trajectory[v] for v in names]).reshape(len(names), trajectory.time.size)  # noqa: E731
        L_grid = _evaluate(point, trajectory.time[None, :], column(states), column(meta["z_names"]),
                           column([v.name for v in model.controls]), column([v.name for v in model.multipliers]), P)[4]
        L_grid = L_grid[:, itp.index]                                  # (costs, n, num_nodes)
        scheme_quad = (L_grid @ itp.scheme.weights) * itp.h            # (costs, n)
        L = L.reshape(len(costs), n, q)
        true_quad = (L * w).sum(axis=2) * itp.h
        eta.append(np.abs(scheme_quad - true_quad))
        scale.append(1.0 + np.maximum(np.abs(L_grid).max(axis=(1, 2)), (np.abs(L) * w).sum(axis=2) @ itp.h))
        labels += [f"cost:{c}" for c in costs]
    return np.concatenate(eta), np.concatenate(scale), labels


def _evaluate(point, t, x, z, u, lam, p):
    """``point`` mapped over the columns of its inputs, outputs as numpy arrays."""
    N = t.shape[1]
    out = point.map(N)(t, x, z, u, lam, np.tile(p, (1, N)))
    return [np.asarray(o).reshape(-1, N) for o in out]


def estimate_errors(problem, trajectory, points=QUADRATURE_POINTS) -> np.ndarray:
    """Betts' relative local error of every mesh interval.

    Returns
    -------
    ndarray, shape (num_intervals,)
        ``ε_k = max_i η_ik / scale_i`` over the rows of :func:`local_errors`
        (module docstring); zeros for a model without states or integral costs.
    """
    eta, scale, _ = local_errors(problem, trajectory, points)
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


def refine_mesh(mesh, errors, tolerance, order, max_pieces=8) -> np.ndarray:
    """Split every interval whose error exceeds ``tolerance``.

    Parameters
    ----------
    mesh : array_like, shape (n + 1,)
        Normalised mesh points.
    errors : array_like, shape (n,)
    tolerance : float
    order : int
        Power ``r`` with ``error ∝ h^r`` (:func:`error_order`).
    max_pieces : int
        Most pieces one interval is split into per iteration.

    Returns
    -------
    ndarray
        The new normalised mesh (the old points are kept).
    """
    mesh = np.asarray(mesh, dtype=float)
    errors = np.asarray(errors, dtype=float)
    points = [mesh[:1]]
    for a, b, e in zip(mesh[:-1], mesh[1:], errors):
        pieces = 1
        if not np.isfinite(e):
            pieces = max_pieces
        elif e > tolerance:
            pieces = int(np.clip(math.ceil((e / tolerance) ** (1.0 / order)), 2, max_pieces))
        points.append(np.linspace(a, b, pieces + 1)[1:])
    return np.concatenate(points)


def _check(tolerance, max_iterations, max_intervals, max_pieces):
    if not (isinstance(tolerance, (int, float)) and 0 < tolerance < math.inf):
        raise OptionError(f"Refinement `tolerance` must be a positive number; got {tolerance!r}.")
    for name, value, low in (("max_iterations", max_iterations, 1), ("max_intervals", max_intervals, 1), ("max_pieces", max_pieces, 2)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise OptionError(f"Refinement `{name}` must be a whole number ≥ {low}; got {value!r}.")


def solve_adaptive(problem, scheme="hermite-simpson", intervals=10, tolerance=1e-6, max_iterations=10,
                   max_intervals=2000, mesh=None, guess=None, max_pieces=8, **solve_kwargs):
    """Solve ``problem`` on a sequence of meshes refined where the local error is largest.

    Each mesh iteration solves with the pipeline of :func:`colloc.solve`
    (warm-started from the previous trajectory), estimates every interval's
    relative local error (:func:`estimate_errors`) and splits the intervals
    above ``tolerance`` (:func:`refine_mesh`); it stops when every interval is
    under ``tolerance``.  A multi-phase problem is refined phase by phase: each
    phase's intervals are judged by that phase's own error estimate (its
    dynamics and its scheme), and only the phases above ``tolerance`` change.
    With ``scheme="midpoint-vi"`` the local error of each step comes from step
    doubling (:mod:`colloc.pipeline.refine_vi`) and the steps above ``tolerance`` are split.

    Parameters
    ----------
    problem : Problem or MultiPhaseProblem
    scheme : str
        Any scheme of :data:`colloc.SCHEMES` (or ``radau-d``); for a multi-phase
        problem, the default of phases that set none.
    intervals : int
        Uniform intervals of the first mesh (ignored if ``mesh`` is given, and
        by phases that set their own).
    tolerance : float
        Largest accepted relative local error ``ε_k`` of an interval (Betts' measure, dimensionless).
    max_iterations : int
        Most solves (mesh iterations), the first one included.
    max_intervals : int
        Refinement stops rather than solve a mesh with more intervals than this (all phases together).
    mesh : sequence of float, optional
        First mesh (normalised points, 0 … 1).
    guess : Trajectory, SolveResult or path, optional
        Warm start of the first solve.
    max_pieces : int
        Most pieces one interval is split into per iteration.
    **solve_kwargs
        Passed to every solve (``ipopt``, ``verbose``, transcription options
        such as ``mode`` or ``constraint_method``).

    Returns
    -------
    SolveResult
        The result on the last mesh, with ``refinement``: one dict per mesh
        iteration with keys ``iteration``, ``intervals``, ``grid_points``,
        ``max_error``, ``objective``, ``iterations`` (IPOPT), ``seconds``
        (build + solve + error estimate), ``status`` and ``success`` (and
        ``phase_errors``, the largest error of each phase, for a multi-phase
        problem); and ``interval_errors`` (ndarray, shape (num_intervals,), the
        phases one after the other) of the last mesh.  The record is also in
        ``trajectory.metadata["refinement"]``.  If the tolerance was not
        reached, ``warnings`` says why.  A failed solve does not stop
        refinement (its last iterate is refined and warm-starts the next mesh)
        unless its error estimate is not finite.
    """
    if "refine" in solve_kwargs:
        raise OptionError("solve_adaptive() refines already; do not pass `refine` to it.")
    _check(tolerance, max_iterations, max_intervals, max_pieces)
    meshes = _Meshes(problem, scheme, intervals, mesh, solve_kwargs)
    records, result, reason, notes = [], None, None, []
    for iteration in range(max_iterations):
        start = _time.perf_counter()
        result = run(problem, scheme=scheme, mesh=meshes.current, guess=guess, **solve_kwargs)
        errors = meshes.errors(result)
        max_error = max((float(e.max()) for e in errors if e.size), default=0.0)
        records.append(dict(
            iteration=iteration, intervals=meshes.num_intervals, grid_points=int(result.trajectory.time.size),
            max_error=max_error, objective=float(result.objective), iterations=int(result.iterations),
            seconds=_time.perf_counter() - start, status=result.status.value, success=bool(result.success),
            **meshes.record(errors)))
        if max_error <= tolerance:
            reason = None
            break
        if not np.isfinite(max_error):
            reason = f"the solve ended `{result.status.value}` with non-finite values, so there is no error estimate to refine by"
            break
        if not meshes.variational:  # the variational integrator has no interior controls
            notes += _tie_midpoint_controls(problem, result, solve_kwargs)
        new = meshes.refined(errors, tolerance, max_pieces)
        if sum(m.size - 1 for m in new) > max_intervals:
            reason = f"the next mesh would have {sum(m.size - 1 for m in new)} intervals, more than max_intervals={max_intervals}"
            break
        reason = f"max_iterations={max_iterations} mesh iterations were used"
        meshes.advance(new)
        guess = result.trajectory
    result.trajectory.metadata["refinement"] = records
    warnings = list(result.warnings) + notes
    if reason is not None:
        warnings.append(f"mesh refinement stopped with max relative local error {records[-1]['max_error']:.3e} > "
                        f"tolerance {tolerance:.3e}: {reason}")
    return dataclasses.replace(result, refinement=records, interval_errors=np.concatenate(errors), warnings=warnings)


def _tie_midpoint_controls(problem, result, solve_kwargs) -> list:
    """Constrain interior controls on the following meshes if a control chatters and the user left them free.

    A chattering control (a singular arc) does not go away as the mesh is
    refined with free midpoint controls: the discretisation keeps exploiting it
    (catalyst mixing still chatters on 1,900 Hermite–Simpson intervals).  Tying
    each interior control to the line between the interval's end controls
    (``control_interpolation="linear"``) removes it.  Updates ``solve_kwargs``;
    returns the note for the result's warnings (none if nothing changed).
    """
    if "control_interpolation" in solve_kwargs or not isinstance(problem, Problem):
        return []
    itp = Interpolant(result.trajectory)
    if itp.grid.stride < 2 or not oscillating_intervals(result.trajectory, itp.grid):
        return []
    solve_kwargs["control_interpolation"] = "linear"
    return [f"a control chattered on the {itp.num_intervals}-interval mesh, so the following meshes tie interior "
            "controls to the line between the interval's end controls (control_interpolation='linear'); pass "
            "control_interpolation='free' to keep them free"]


class _Meshes:
    """The current mesh of every phase (one for a single-phase problem), its error estimate and its refinement."""

    def __init__(self, problem, scheme, intervals, mesh, solve_kwargs):
        self.problem, self.options = problem, _options(solve_kwargs)
        self.phased = not isinstance(problem, Problem)
        self.variational = not self.phased and scheme == refine_vi.SCHEME
        if self.phased:
            settings = transcription(problem, scheme, intervals, mesh, **self.options).phase_settings()
            self.orders, self.meshes = [error_order(s) for s, _, _ in settings], [m for _, m, _ in settings]
        elif self.variational:
            self.orders, self.meshes = [refine_vi.ORDER], [make_mesh(intervals, mesh)]
        else:
            self.orders, self.meshes = [error_order(get_scheme(scheme))], [make_mesh(intervals, mesh)]

    @property
    def current(self):
        return list(self.meshes) if self.phased else self.meshes[0]

    @property
    def num_intervals(self) -> int:
        return int(sum(m.size - 1 for m in self.meshes))

    def errors(self, result) -> list:
        """Relative local errors of every phase's intervals (each phase on its own clock)."""
        if self.variational:
            return [refine_vi.local_errors(self.problem, result.trajectory, self.options.get("forcing"))]
        if not self.phased:
            return [estimate_errors(self.problem, result.trajectory)]
        out = []
        for ph, traj in zip(self.problem.phases, result.trajectory.phases):
            local = Trajectory(traj.time - traj.time[0] + ph.problem.t0_value, {k: traj[k] for k in traj.names}, traj.kinds,
                               traj.parameters, traj.metadata)
            out.append(estimate_errors(ph.problem, local))
        return out

    def record(self, errors) -> dict:
        if not self.phased:
            return {}
        return dict(phase_errors={ph.name: float(e.max()) if e.size else 0.0 for ph, e in zip(self.problem.phases, errors)})

    def refined(self, errors, tolerance, max_pieces) -> list:
        return [refine_mesh(m, e, tolerance, r, max_pieces) for m, e, r in zip(self.meshes, errors, self.orders)]

    def advance(self, new):
        self.meshes = list(new)


def _options(solve_kwargs) -> dict:
    """The transcription options among the keyword arguments of a solve."""
    run_names = {"ipopt", "fatrop", "backend", "verbose", "expand", "progress", "checkpoint"}
    return {k: v for k, v in solve_kwargs.items() if k not in run_names}


def summary(records) -> str:
    """One line per mesh iteration of a ``result.refinement`` record."""
    lines = [f"{'iter':>4} {'intervals':>9} {'points':>7} {'max error':>10} {'objective':>16} {'ipopt it':>8} {'seconds':>8}"]
    for r in records:
        lines.append(f"{r['iteration']:>4} {r['intervals']:>9} {r['grid_points']:>7} {r['max_error']:>10.3e} "
                     f"{r['objective']:>16.10g} {r['iterations']:>8} {r['seconds']:>8.3f}")
    return "\n".join(lines)
