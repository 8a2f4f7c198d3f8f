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
from ..errors import OptionError
from .options import REFINEMENT, SolveOptions
from ..discretization.interpolant import Interpolant
from .local_error import estimate_errors, local_errors, oscillation_errors  # noqa: F401 - re-exported
from ..discretization.mesh import make_mesh
from ..results import oscillation
from ..results.oscillation import oscillating_intervals
from ..model.problem import Problem
from ..discretization.schemes import Scheme, get_scheme
from ..transcription.collocation import control_sources
from ..transcription.registry import by_scheme, of_trajectory


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


def split_where(trajectory, checks, pieces=2) -> np.ndarray:
    """``trajectory``'s normalised mesh with every interval where a failed check failed split into ``pieces``
    equal parts; the other intervals and every mesh point kept.

    The verdicts of :func:`colloc.verify` (``result["checks"]``) name where they fail
    (:attr:`colloc.simulate.checks.Check.where`): a dynamics check its failing intervals, a contact file's
    impact and re-simulation checks their instants, a bound broken between grid points its time.  Refining
    there only keeps a contact-implicit solve's mesh (and its warm start) elsewhere, with no schedule.
    An interval is split when a failing span overlaps it, or an instant lies in it or on its ends.

    Parameters
    ----------
    trajectory : Trajectory
        The file the checks judged (its ``metadata["mesh"]``).
    checks : list of Check, or the dict :func:`colloc.verify` returns
    pieces : int
        At least 2.

    Returns
    -------
    ndarray
        Normalised mesh points over [0, 1] (``colloc.solve(..., mesh=...)``); the file's own when nothing failed
        at a named time.
    """
    if isinstance(checks, dict):
        checks = checks["checks"]
    if not (isinstance(pieces, (int, np.integer)) and pieces >= 2):
        raise OptionError(f"split_where: pieces must be an integer ≥ 2; got {pieces!r}.")
    if "mesh" not in trajectory.metadata:
        raise OptionError("split_where: the trajectory records no mesh (metadata['mesh']); pass the file a solve wrote.")
    mesh = np.asarray(trajectory.metadata["mesh"], float)
    t0, duration = float(trajectory.time[0]), float(trajectory.time[-1] - trajectory.time[0])
    hit = np.zeros(mesh.size - 1, bool)
    edge = 1e-12
    for check in checks:
        for start, end in () if check.passed else check.where:
            s, e = (start - t0) / duration, (end - t0) / duration
            if e > s:
                hit |= (mesh[:-1] < e - edge) & (mesh[1:] > s + edge)
            else:
                hit |= (mesh[:-1] <= s + edge) & (mesh[1:] >= s - edge)
    return refine_mesh(mesh, np.where(hit, pieces, 0), 1.0, 1, max_pieces=int(pieces))


def solve_adaptive(problem, options: SolveOptions | None = None, **keywords):
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
    options : SolveOptions, optional
        The solve's options (:mod:`colloc.pipeline.options`); keywords of :func:`colloc.solve` update them, and
        the refinement options below may be given as keywords too (or as ``refine=`` of :func:`colloc.solve`).
        ``intervals`` or ``mesh`` give the first mesh (default :func:`colloc.make_mesh`'s; phases that set
        their own keep theirs), ``guess`` warm-starts the first solve, and the rest reaches every solve.
    **keywords
        Options of :func:`colloc.solve`, and the refinement settings:

        - ``tolerance`` (float): largest accepted relative local error ``ε_k`` of an interval (Betts' measure, dimensionless);
        - ``max_iterations`` (int): most solves (mesh iterations), the first one included;
        - ``max_intervals`` (int): refinement stops rather than solve a mesh with more intervals than this (all phases together);
        - ``max_pieces`` (int): most pieces one interval is split into per iteration;
        - ``objective_tolerance`` (float): largest accepted relative change of the objective between the last two meshes (default 1e-4).

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
    if "refine" in keywords:
        raise OptionError("solve_adaptive() refines already; do not pass `refine` to it.")
    settings = {k: keywords.pop(k) for k in REFINEMENT if k in keywords}
    o = SolveOptions.of(options, **keywords)
    o = o.replace(refine={**(o.refine or {}), **settings})
    o.refuse(("starts",), "Mesh refinement solves from one guess; `{name}` cannot be combined with `refine`.")
    settings = o.refinement()
    tolerance, max_intervals, objective_tolerance = settings["tolerance"], settings["max_intervals"], settings["objective_tolerance"]
    meshes = _Meshes(problem, o)
    records, result, reason, notes, guess = [], None, None, [], o.guess
    for iteration in range(settings["max_iterations"]):
        start = _time.perf_counter()
        result = run(problem, o.replace(refine=None, intervals=None, mesh=meshes.current, guess=guess))
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
            tied = _tie_midpoint_controls(problem, result, o)
            if tied:
                notes.append(tied)
                o = o.replace(control_interpolation="linear")
        # every interval is under the tolerance but the objective still moves: split the worst ones further
        new = meshes.refined(errors, tolerance if max_error > tolerance else max_error / 10.0, settings["max_pieces"])
        if sum(m.size - 1 for m in new) > max_intervals:
            reason = f"the next mesh would have {sum(m.size - 1 for m in new)} intervals, more than max_intervals={max_intervals}"
            break
        reason = f"max_iterations={settings['max_iterations']} mesh iterations were used"
        meshes.advance(new)
        guess = result.trajectory
    result.trajectory.metadata["refinement"] = records
    warnings = _refined_warnings(problem, result, o) + notes
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


def _refined_warnings(problem, result, o) -> list:
    """The last mesh's warnings, with the fixes they propose fitted to a refined solve (refinement is in use)."""
    made_by = of_trajectory(result.trajectory)
    if not isinstance(problem, Problem) or made_by is None or made_by.variational:
        out = [w for w in result.warnings if not w.startswith(accuracy.HEAD)]  # refinement is in use: not the fix
        note = accuracy.warning(result.accuracy, refined=True) if result.success else None
        return out + ([note] if note else [])
    itp = Interpolant(result.trajectory)
    out = [w for w in result.warnings if "oscillates from grid point to grid point" not in w and not w.startswith(accuracy.HEAD)]
    out += oscillation.warnings(result.trajectory, itp.grid, control_interpolation=o.transcription.get("control_interpolation", "free"),
                                refining=True, sources=control_sources(problem.model))
    note = accuracy.warning(result.accuracy, refined=True) if result.success else None
    return out + ([note] if note else [])


def _tie_midpoint_controls(problem, result, o) -> str:
    """The note that interior controls are constrained on the following meshes, because a control chatters and the
    user left them free (``""``: they are not).

    A chattering control (a singular arc) does not go away as the mesh is
    refined with free midpoint controls: the discretisation keeps exploiting it
    (catalyst mixing still chatters on 1,900 Hermite–Simpson intervals).  Tying
    each interior control to the line between the interval's end controls
    (``control_interpolation="linear"``) removes it.
    """
    if "control_interpolation" in o.transcription or not isinstance(problem, Problem):
        return ""
    itp = Interpolant(result.trajectory)
    if itp.grid.stride < 2 or not oscillating_intervals(result.trajectory, itp.grid):
        return ""
    return (f"a control chattered on the {itp.num_intervals}-interval mesh, so the following meshes tie interior "
            "controls to the line between the interval's end controls (control_interpolation='linear'); pass "
            "control_interpolation='free' to keep them free")


class _Meshes:
    """The current mesh of every phase (one for a single-phase problem), its error estimate and its refinement."""

    def __init__(self, problem, o):
        self.problem, self.options = problem, o.transcription
        scheme, intervals, mesh = o.scheme, o.intervals, o.mesh
        self.phased = not isinstance(problem, Problem)
        self.variational = not self.phased and by_scheme(scheme).variational
        if self.phased:
            settings = transcription(problem, o).phase_settings()
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


def summary(records) -> str:
    """One line per mesh iteration of a ``result.refinement`` record."""
    lines = [f"{'iter':>4} {'intervals':>9} {'points':>7} {'max error':>10} {'objective':>16} {'change':>8} {'ipopt it':>8} {'seconds':>8}"]
    for r in records:
        change = r.get("objective_change")
        lines.append(f"{r['iteration']:>4} {r['intervals']:>9} {r['grid_points']:>7} {r['max_error']:>10.3e} "
                     f"{r['objective']:>16.10g} {'—' if change is None else format(change, '.1e'):>8} {r['iterations']:>8} {r['seconds']:>8.3f}")
    return "\n".join(lines)
