"""Adaptive mesh refinement: solve, estimate each interval's error, split, warm-start, repeat.

Error estimate: Betts' relative local error ``ε_k`` of every interval
(:mod:`colloc.pipeline.local_error`).

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



from . import accuracy, refine_vi
from .phase_accuracy import phase_errors
from .driver import run, transcription
from ..solvers import BACKENDS
from ..errors import OptionError
from ..discretization.interpolant import Interpolant
from .local_error import estimate_errors, local_errors, oscillation_errors  # noqa: F401 - re-exported
from ..discretization.mesh import make_mesh
from ..results import oscillation
from ..results.oscillation import oscillating_intervals
from ..model.problem import Problem
from ..discretization.schemes import Scheme, get_scheme
from ..transcription.collocation import control_sources


def error_order(scheme: Scheme) -> int:
    """Power ``r`` of ``h`` at which the local error estimate shrinks (see the module docstring)."""
    return len(scheme.collocation_indices) + 1


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


def _check(tolerance, max_iterations, max_intervals, max_pieces, objective_tolerance=1e-4):
    for name, value in (("tolerance", tolerance), ("objective_tolerance", objective_tolerance)):
        if isinstance(value, bool) or not (isinstance(value, (int, float)) and 0 < value < math.inf):
            raise OptionError(f"Refinement `{name}` must be a positive number; got {value!r}.")
    for name, value, low in (("max_iterations", max_iterations, 1), ("max_intervals", max_intervals, 1), ("max_pieces", max_pieces, 2)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise OptionError(f"Refinement `{name}` must be a whole number ≥ {low}; got {value!r}.")


def solve_adaptive(problem, scheme="hermite-simpson", intervals=None, tolerance=1e-6, max_iterations=10,
                   max_intervals=2000, mesh=None, guess=None, max_pieces=8, objective_tolerance=1e-4, **solve_kwargs):
    """Solve ``problem`` on a sequence of meshes refined where the local error is largest.

    Each mesh iteration solves with the pipeline of :func:`colloc.solve`
    (warm-started from the previous trajectory), estimates every interval's
    relative local error (:func:`estimate_errors`) and splits the intervals
    above ``tolerance`` (:func:`refine_mesh`); it stops when every interval is
    under ``tolerance`` *and* the objective has stopped moving: its relative
    change from the previous mesh (on the first mesh, the estimate of its
    error, :mod:`colloc.pipeline.accuracy`) is within ``objective_tolerance``.  While
    the objective still moves with every interval under ``tolerance``, the
    intervals within a factor of 10 of the largest error are split.  A multi-phase problem is refined phase by phase: each
    phase's intervals are judged by that phase's own error estimate (its
    dynamics and its scheme), and only the phases above ``tolerance`` change.
    With ``scheme="midpoint-vi"`` the local error of each step comes from step
    doubling (:mod:`colloc.refine_vi`) and the steps above ``tolerance`` are split.

    Parameters
    ----------
    problem : Problem or MultiPhaseProblem
    scheme : str
        Any scheme of :data:`colloc.SCHEMES` (or ``radau-d``); for a multi-phase
        problem, the default of phases that set none.
    intervals : int, optional
        Uniform intervals of the first mesh (default 10 unless ``mesh`` is given;
        phases that set their own keep theirs).
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
    objective_tolerance : float
        Largest accepted relative change of the objective between the last two meshes (default 1e-4).
    **solve_kwargs
        Passed to every solve (``ipopt``, ``verbose``, transcription options
        such as ``mode`` or ``constraint_method``).

    Returns
    -------
    SolveResult
        The result on the last mesh, with ``refinement``: one dict per mesh
        iteration with keys ``iteration``, ``intervals``, ``grid_points``,
        ``max_error``, ``objective``, ``objective_change`` (relative, from the
        previous mesh; None on the first), ``iterations`` (IPOPT), ``seconds``
        (build + solve + error estimate), ``status`` and ``success`` (and
        ``phase_errors``, the largest error of each phase, for a multi-phase
        problem); and ``interval_errors`` (ndarray, shape (num_intervals,), the
        phases one after the other) of the last mesh.  The record is also in
        ``trajectory.metadata["refinement"]``.  If the tolerance was not
        reached or the objective still moved, ``warnings`` says why and
        ``accuracy["resolved"]`` is False.  A failed solve does not stop
        refinement (its last iterate is refined and warm-starts the next mesh)
        unless its error estimate is not finite.
    """
    if "refine" in solve_kwargs:
        raise OptionError("solve_adaptive() refines already; do not pass `refine` to it.")
    _check(tolerance, max_iterations, max_intervals, max_pieces, objective_tolerance)
    if intervals is None and mesh is None:
        intervals = 10
    meshes = _Meshes(problem, scheme, intervals, mesh, solve_kwargs)
    records, result, reason, notes = [], None, None, []
    for iteration in range(max_iterations):
        start = _time.perf_counter()
        result = run(problem, scheme=scheme, mesh=meshes.current, guess=guess, **solve_kwargs)
        errors = meshes.errors(result)
        max_error = max((float(e.max()) for e in errors if e.size), default=0.0)
        records.append(dict(
            iteration=iteration, intervals=meshes.num_intervals, grid_points=int(result.trajectory.time.size),
            max_error=max_error, objective=float(result.objective), objective_change=_change(records, result.objective),
            iterations=int(result.iterations), seconds=_time.perf_counter() - start, status=result.status.value,
            success=bool(result.success), **meshes.record(errors)))
        settled = _settled(result, records[-1]["objective_change"], objective_tolerance)
        if max_error <= tolerance and (settled or max_error == 0.0):
            reason = None
            break
        if not np.isfinite(max_error):
            reason = f"the solve ended `{result.status.value}` with non-finite values, so there is no error estimate to refine by"
            break
        if not meshes.variational:  # the variational integrator has no interior controls
            notes += _tie_midpoint_controls(problem, result, solve_kwargs)
        # every interval is under the tolerance but the objective still moves: split the worst ones further
        new = meshes.refined(errors, tolerance if max_error > tolerance else max_error / 10.0, max_pieces)
        if sum(m.size - 1 for m in new) > max_intervals:
            reason = f"the next mesh would have {sum(m.size - 1 for m in new)} intervals, more than max_intervals={max_intervals}"
            break
        reason = f"max_iterations={max_iterations} mesh iterations were used"
        meshes.advance(new)
        guess = result.trajectory
    result.trajectory.metadata["refinement"] = records
    warnings = _refined_warnings(problem, result, solve_kwargs) + notes
    if reason is not None:
        warnings.append(_unfinished(records[-1], tolerance, objective_tolerance, reason))
        result = _unresolved(result, records[-1])
    return dataclasses.replace(result, refinement=records, interval_errors=np.concatenate(errors), warnings=warnings)


def _change(records, objective):
    """Relative change of the objective from the previous mesh, ``|J_k − J_{k−1}| / max(|J_k|, 1e-8)`` (None on the first)."""
    if not records or not np.isfinite(objective) or not np.isfinite(records[-1]["objective"]):
        return None
    return abs(objective - records[-1]["objective"]) / max(abs(objective), 1e-8)


def _settled(result, change, objective_tolerance) -> bool:
    """Whether the objective has stopped moving: its change from the previous mesh, or on the first mesh the
    estimate of its error (:mod:`colloc.pipeline.accuracy`), within ``objective_tolerance`` (no estimate: settled)."""
    if change is not None:
        return change <= objective_tolerance
    estimate = (result.accuracy or {}).get("relative_objective_error", math.nan)
    return not np.isfinite(estimate) or estimate <= objective_tolerance


def _unfinished(last, tolerance, objective_tolerance, reason) -> str:
    """The warning of a refinement that stopped before its test was met: which part of the test, and why it stopped."""
    if last["max_error"] > tolerance:
        return (f"mesh refinement stopped with max relative local error {last['max_error']:.3e} > "
                f"tolerance {tolerance:.3e}: {reason}")
    moved = (f"moved by {last['objective_change']:.1e} (relative) between the last two meshes" if last["objective_change"] is not None
             else "is estimated off by more than that on the only mesh")
    return (f"mesh refinement stopped before the objective settled: it {moved}, more than objective_tolerance="
            f"{objective_tolerance:g}, though every interval met the local error tolerance: {reason}")


def _unresolved(result, last):
    """The result with its accuracy record marked unresolved (the refinement did not finish)."""
    if not result.accuracy:
        return result
    acc = dict(result.accuracy, resolved=False, objective_change=last["objective_change"])
    result.trajectory.metadata["accuracy"] = acc
    return dataclasses.replace(result, accuracy=acc)


def _refined_warnings(problem, result, solve_kwargs) -> list:
    """The last mesh's warnings, with the fixes they propose fitted to a refined solve (refinement is in use)."""
    if not isinstance(problem, Problem) or result.trajectory.metadata.get("scheme") in (None, refine_vi.SCHEME):
        out = [w for w in result.warnings if not w.startswith(accuracy.HEAD)]  # refinement is in use: not the fix
        note = accuracy.warning(result.accuracy, refined=True) if result.success else None
        return out + ([note] if note else [])
    itp = Interpolant(result.trajectory)
    out = [w for w in result.warnings if "oscillates from grid point to grid point" not in w and not w.startswith(accuracy.HEAD)]
    out += oscillation.warnings(result.trajectory, itp.grid, control_interpolation=solve_kwargs.get("control_interpolation", "free"),
                                refining=True, sources=control_sources(problem.model))
    note = accuracy.warning(result.accuracy, refined=True) if result.success else None
    return out + ([note] if note else [])


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
        if self.variational:  # the result's accuracy record holds them already, unless it was turned off
            if result.interval_errors is not None:
                return [result.interval_errors]
            return [refine_vi.local_errors(self.problem, result.trajectory, self.options.get("forcing"))]
        if not self.phased:
            return [estimate_errors(self.problem, result.trajectory)]
        return phase_errors(self.problem, result.trajectory)  # the numbers of the result's accuracy record

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
    run_names = {*BACKENDS, "backend", "verbose", "expand", "progress", "checkpoint", "accuracy"}  # solver options by backend name
    return {k: v for k, v in solve_kwargs.items() if k not in run_names}


def summary(records) -> str:
    """One line per mesh iteration of a ``result.refinement`` record."""
    lines = [f"{'iter':>4} {'intervals':>9} {'points':>7} {'max error':>10} {'objective':>16} {'change':>8} {'ipopt it':>8} {'seconds':>8}"]
    for r in records:
        change = r.get("objective_change")
        lines.append(f"{r['iteration']:>4} {r['intervals']:>9} {r['grid_points']:>7} {r['max_error']:>10.3e} "
                     f"{r['objective']:>16.10g} {'—' if change is None else format(change, '.1e'):>8} {r['iterations']:>8} {r['seconds']:>8.3f}")
    return "\n".join(lines)
