"""How far to trust a multi-phase solve: the accuracy record of every phase and the worst of them.

Each phase of a :class:`~colloc.pipeline.multiphase_problem.MultiPhaseProblem` is a
collocation transcription on its own mesh, so each gets the single-phase
record of :func:`colloc.pipeline.accuracy.assess` on its own clock: Betts'
largest relative local error and where, and the dual-weighted estimate of its
share of the objective's error (its defect rows weighted by their multipliers
plus its cost quadrature error).  The phases' shares add up to the estimate of
``J* − J_h`` for the whole problem; each share, like the sum, is relative to
the whole objective.  Linkage, impact and guard rows hold exactly at the
junctions, so they add no discretisation error of their own.

The result's record (``res.accuracy``) is that of the phase with the largest
local error, with ``phase`` naming it, the summed objective error, the verdict
on the sum, and ``phases``: every phase's own record by name.  Mesh refinement
of a multi-phase problem (:mod:`colloc.pipeline.refine`) splits each phase by
the same per-phase errors (:func:`phase_errors`).
"""
from __future__ import annotations

import dataclasses
import math
import time as _time

import numpy as np

from ..results.trajectory import Trajectory
from ..simulate import limits
from ..transcription.nlp import Rows
from .accuracy import TOLERANCE, assess, limits_warning, multipliers, warning
from .local_error import estimate_errors


def local_trajectory(phase, trajectory) -> Trajectory:
    """A phase's trajectory (global time, as in the result) moved to the phase's own clock (its Problem's ``t0``)."""
    shift = phase.problem.t0_value - trajectory.time[0]
    return Trajectory(trajectory.time + shift, {k: trajectory[k] for k in trajectory.names}, trajectory.kinds,
                      trajectory.parameters, trajectory.metadata)


def phase_errors(problem, trajectory) -> list:
    """Betts' relative local error of every interval of every phase (each phase on its own clock).

    Returns
    -------
    list of ndarray
        One array of shape (phase's intervals,) per phase, in order.
    """
    return [estimate_errors(ph.problem, local_trajectory(ph, traj)) for ph, traj in zip(problem.phases, trajectory.phases)]


def _phase_rows(rows, name):
    """The multi-phase NLP's defect rows of phase ``name`` with the phase's own row names (offsets kept)."""
    prefix = f"{name}/"
    blocks = [dataclasses.replace(b, names=[n[len(prefix):] for n in b.names]) for b in rows.blocks
              if (b.kind or "").startswith("defect") and b.names and all(n.startswith(prefix) for n in b.names)]
    return Rows(blocks=blocks)


def assess_phases(problem, trajectory, rows=None, lam_g=None, tolerance=None) -> dict | None:
    """The accuracy record of a multi-phase solution (module docstring); None when a phase is not finite.

    Parameters
    ----------
    problem : MultiPhaseProblem
    trajectory : PhasedTrajectory
    rows : Rows, optional
        The multi-phase NLP's rows (each phase's defect blocks are found by their ``<phase>/`` names).
    lam_g : ndarray, optional
        The solver's constraint multipliers.
    tolerance : float
        Accepted relative objective error (:data:`colloc.pipeline.accuracy.TOLERANCE` by default).
    """
    tolerance = TOLERANCE if tolerance is None else tolerance
    start = _time.perf_counter()
    costs = bool(problem.costs) or any(c.integral is not None or c.final is not None for ph in problem.phases for c in ph.problem.costs)
    records = {}
    for ph, traj in zip(problem.phases, trajectory.phases):
        sub = _phase_rows(rows, ph.name) if rows is not None else None
        acc = assess(ph.problem, local_trajectory(ph, traj), sub, lam_g, tolerance, costs=costs)
        if acc is None:
            return None
        shift = float(traj.time[0]) - ph.problem.t0_value
        acc["time"] = [acc["time"][0] + shift, acc["time"][1] + shift]  # in the result's (global) time
        records[ph.name] = acc
    worst = max(records, key=lambda n: records[n]["max_error"])
    dJ = sum(r["objective_error"] for r in records.values())
    objective = float(trajectory.metadata.get("objective", math.nan))
    relative = abs(dJ) / max(abs(objective), 1e-8) if math.isfinite(dJ) else math.nan
    out = dict(records[worst], phase=worst, objective_error=dJ, relative_objective_error=relative,
               resolved=bool(relative <= tolerance) if math.isfinite(relative) else None, phases=records)
    out["seconds"] = _time.perf_counter() - start
    return out


def worst_between(problem, trajectory) -> dict | None:
    """The worst bound or path-constraint violation between grid points over all phases (:mod:`colloc.simulate.limits`),
    its name prefixed with its phase, times in the result's time."""
    found = []
    for ph, traj in zip(problem.phases, trajectory.phases):
        rec = limits.summary(ph.problem, local_trajectory(ph, traj))
        if rec is not None:
            shift = float(traj.time[0]) - ph.problem.t0_value
            found.append(dict(rec, name=f"{ph.name}/{rec['name']}", time=rec["time"] + shift,
                              violated=[f"{ph.name}/{n}" for n in rec["violated"]]))
    if not found:
        return None
    worst = max(found, key=lambda r: r["relative"])
    return dict(worst, violated=[n for r in found for n in r["violated"]])


def with_phase_accuracy(tr, nlp, sol, res, tolerance):
    """``res`` of a multi-phase solve with its accuracy record (:func:`assess_phases`) and, when the mesh does not
    resolve the solution or a limit is exceeded between grid points, the warning that says so (naming the phase)."""
    if tolerance is False:
        return res
    with np.errstate(all="ignore"):
        acc = assess_phases(tr.problem, res.trajectory, nlp.rows, multipliers(sol), tolerance)
    if acc is None:
        return res
    start = _time.perf_counter()
    acc["between"] = worst_between(tr.problem, res.trajectory)
    acc["seconds"] += _time.perf_counter() - start
    res.trajectory.metadata["accuracy"] = acc
    notes = [warning(acc), limits_warning(acc["between"])] if res.success else []
    return dataclasses.replace(res, accuracy=acc, warnings=list(res.warnings) + [n for n in notes if n])
