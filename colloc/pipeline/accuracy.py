"""How far to trust a solve: its largest local error and an estimate of its objective's error.

Every single-phase collocation solve reports (``SolveResult.accuracy``, the
trajectory's ``metadata["accuracy"]`` and a line of ``summary()``):

* Betts' relative local error ``ε_k`` of every interval (:mod:`colloc.pipeline.local_error`,
  the measure mesh refinement splits by): its largest value and where;
* an estimate of the objective's discretisation error, ``J* − J_h`` (the value
  on an infinitely fine mesh minus the value found), by weighting each defect
  row's local truncation error with that row's multiplier (a dual-weighted
  residual; R. Becker, R. Rannacher, *Acta Numerica* 10, 2001, §6): the
  interpolant ``x̃`` leaves the residual ``r = ẋ̃ − f``, the true flow from the
  interval's start drifts from it by ``e(s) = −h ∫₀ˢ r``, so the exact solution
  satisfies each defect row ``d = Σ_j a_j X_j + h Σ_j b_j F_j`` only up to
  ``τ = Σ_j a_j e(s_j)``; the optimum moves by ``−ν·τ`` when the rows move by
  ``τ`` (``ν`` the row's multiplier, CasADi's sign), and the cost integrals add
  their own quadrature error ``Σ_k (∫ L dt − h Σ_j w_j L_j)``.

Measured against published optima (tests/test_accuracy.py): the estimate is
within a factor of 10 of the true error on the alp rider, the hyper-sensitive
problem, Bryson–Denham, Kirk's problem and linear tangent steering at 20, 40
and 80 Hermite–Simpson intervals (typically within a factor of 3); it costs a
few per cent of a solve (one mapped evaluation of the dynamics at 5 points per
gap between nodes).  It leaves out the error of path constraints and bounds
between grid points (:mod:`colloc.simulate.limits` measures those) and models whose
implicit residuals cannot be made explicit (their rows are not weighted).

A result whose estimated relative objective error ``|J* − J_h| / max(|J_h|, 1e-8)``
exceeds :data:`TOLERANCE` says so in a warning, with the fix measured to
remove it: adaptive refinement (``refine=dict(tolerance=1e-6)``: the alp rider
on 200 Hermite–Simpson intervals is 2.8 % high, refined it lands within 1.2e-5).
"""
from __future__ import annotations

import dataclasses
import math
import time as _time

import numpy as np

from ..simulate import active_bounds

from ..simulate import limits
from ..errors import OptionError
from ..discretization.interpolant import Interpolant
from .local_error import estimate_errors, local_errors, residuals

#: Relative objective error above which a result says its mesh does not resolve the solution.  The
#: published optima colloc's problems are checked against carry 5–6 significant digits, so an error
#: the size of 1e-4 is the first one a reader comparing with them would notice.
TOLERANCE = 1e-4
#: The refinement tolerance proposed by the warning (measured on the alp rider and the hyper-sensitive
#: problem: from 50 or 200 Hermite–Simpson intervals it ends below :data:`TOLERANCE`).
PROPOSED_REFINEMENT = 1e-6


def objective_error(problem, trajectory, rows, lam_g, rs=None) -> float:
    """Estimated ``J* − J_h`` of a single-phase collocation solution (module docstring).

    Parameters
    ----------
    problem : Problem
    trajectory : Trajectory
        The solution (on the NLP's grid).
    rows : colloc.nlp.Rows
        The NLP's constraint rows (defect blocks are read by kind).
    lam_g : ndarray, shape (rows.size,)
        The constraint multipliers the solver returned.
    rs : Residuals, optional
        :func:`colloc.pipeline.local_error.residuals` of ``trajectory`` when the caller has them already.

    Returns
    -------
    float
        NaN when a value needed is not finite.
    """
    rs = residuals(problem, trajectory) if rs is None else rs
    scheme, itp = rs.itp.scheme, rs.itp
    coefficients = scheme.defect_coefficients()
    dJ = float(rs.cost_quadrature_error().sum()) if rs.L.size else 0.0
    if coefficients is None or not rs.r.shape[0]:
        return dJ
    edges = np.unique(np.concatenate([[0.0, 1.0], scheme.nodes]))
    r = np.where(rs.implicit[:, None, None], 0.0, rs.r)  # an implicit residual is no derivative mismatch
    nx, n, q = r.shape
    per_gap = (r * rs.w).reshape(nx, n, edges.size - 1, q // (edges.size - 1)).sum(axis=3)
    drift = np.concatenate([np.zeros((nx, n, 1)), np.cumsum(per_gap, axis=2)], axis=2)
    at_nodes = [int(np.argmin(np.abs(edges - s))) for s in scheme.nodes]
    e = -drift[:, :, at_nodes] * itp.h[None, :, None]           # (states, n, nodes)
    tau = np.einsum("kj,inj->kin", coefficients[0], e)            # (defect kinds, states, n)
    kinds = scheme.defect_names()
    index = {name: i for i, name in enumerate(v.name for v in problem.model.states)}
    for block, nu in rows.values(lam_g, "defect"):
        k = kinds.index(block.kind.partition(".")[2] or "defect")
        rows_of = [index[name] for name in block.names]
        dJ -= float((nu * tau[k][rows_of][:, block.points]).sum())
    return dJ


def assess(problem, trajectory, rows=None, lam_g=None, tolerance=TOLERANCE, costs=None) -> dict | None:
    """The accuracy record of a solution: largest local error and where, objective error estimate, verdict.

    Returns
    -------
    dict or None
        ``max_error`` (largest ε_k), ``interval`` (its index), ``time`` ([t_k, t_k+1]),
        ``objective_error`` (estimated J* − J_h; NaN without multipliers or without a cost),
        ``relative_objective_error`` (over ``max(|J_h|, 1e-8)``), ``tolerance``, ``resolved`` (bool; None
        when there is no objective error to judge by), ``state_errors`` (``{state: max_k η_ik}``, each state's
        largest absolute local error ``∫|ẋ̃ − f| dt`` over an interval, :func:`colloc.pipeline.local_error.local_errors`;
        ``colloc verify`` judges the file's dynamics against it) and ``seconds`` (cost of the estimate); None when the
        solution is not finite (nothing to estimate).  ``costs``: whether the objective has terms (default: whether
        ``problem`` has; a phase of a multi-phase problem may have none of its own while the problem has).
    """
    return _assess(problem, trajectory, rows, lam_g, tolerance, costs)[0]


def _assess(problem, trajectory, rows=None, lam_g=None, tolerance=TOLERANCE, costs=None):
    """:func:`assess`'s record, and when it is None for a non-finite local error, the sentence that says where."""
    start = _time.perf_counter()
    with np.errstate(all="ignore"):
        rs = residuals(problem, trajectory)
        errors = estimate_errors(problem, trajectory, rs=rs)
        eta, _, labels = local_errors(problem, trajectory, rs=rs)
        if costs is None:
            costs = any(c.integral is not None or c.final is not None for c in problem.costs)
        # without a cost the multipliers weigh nothing the user asked for: no objective error to estimate
        dJ = objective_error(problem, trajectory, rows, lam_g, rs) if costs and rows is not None and lam_g is not None else math.nan
    if not errors.size or not np.all(np.isfinite(errors)):
        return None, _nonfinite_note(trajectory, eta, labels)
    k = int(np.argmax(errors))
    objective = float(trajectory.metadata.get("objective", math.nan))
    relative = abs(dJ) / max(abs(objective), 1e-8) if math.isfinite(dJ) else math.nan
    mesh = Interpolant(trajectory).mesh_times
    resolved = bool(relative <= tolerance) if math.isfinite(relative) else None  # no objective, no verdict
    # each state's largest absolute local error max_k ∫|ẋ̃ − f| dt: what the file claims of its dynamics,
    # against which `colloc verify` judges each interval integrated alone (colloc.simulate.error_bounds)
    state_errors = {label.split(":", 1)[1]: float(np.max(row)) for label, row in zip(labels, eta)
                    if label.startswith("dynamics:") and row.size and np.all(np.isfinite(row))}
    return dict(max_error=float(errors[k]), interval=k, time=[float(mesh[k]), float(mesh[k + 1])],
                objective_error=dJ, relative_objective_error=relative, tolerance=float(tolerance), resolved=resolved,
                state_errors=state_errors, seconds=_time.perf_counter() - start), None


def _nonfinite_note(trajectory, eta, labels):
    """Why a finite solution has no accuracy record: the first state whose local error is NaN or inf, where."""
    values = [trajectory[n] for n in trajectory.names if trajectory.kinds.get(n) in ("state", "control")]
    if not all(np.all(np.isfinite(v)) for v in values):
        return None  # a non-finite solution: nothing to estimate, nothing to explain
    bad = ~np.isfinite(eta)
    names = [f"`{label.split(':', 1)[-1]}`" for label, row in zip(labels, bad) if row.any()]
    if not names:
        return None
    mesh, k = Interpolant(trajectory).mesh_times, int(np.flatnonzero(bad.any(axis=0))[0])
    return (f"no accuracy estimate: the local error of {', '.join(names)} is not finite in {int(bad.any(axis=0).sum())} "
            f"interval(s), first at t = {mesh[k]:.4g} … {mesh[k + 1]:.4g}, where the interpolated states leave the "
            f"dynamics' domain between grid points (a tendon force below its curve's asymptote, say); more intervals "
            f"there, or bounds that keep the state inside it, restore the estimate.")


#: How the accuracy warning begins (refinement recognises it by this).
HEAD = "the mesh does not resolve the solution"


def warning(acc, refined=False) -> str | None:
    """One sentence when ``acc`` says the mesh does not resolve the solution, with the fix; else None.

    ``refined``: the result came from adaptive refinement, so the fix is a tighter tolerance, not refinement.
    """
    if acc is None or acc["resolved"] is not False:
        return None
    a, b = acc["time"]
    where = f" in phase `{acc['phase']}`" if acc.get("phase") else ""
    relative = acc["relative_objective_error"]
    what = (f"objective error ≈ {relative:.1e} relative (> {acc['tolerance']:.0e})" if math.isfinite(relative)
            else f"largest relative local error {acc['max_error']:.1e}")
    if refined:
        fix = "a smaller refine tolerance, or more max_iterations / max_intervals"
    elif acc.get("proposed_intervals"):
        fix = f"intervals={acc['proposed_intervals']} (the error falls as h²)"
    else:
        fix = f"refine=dict(tolerance={PROPOSED_REFINEMENT:g}), or more intervals where the local error is largest"
    return f"{HEAD}: {what}, largest local error {acc['max_error']:.1e}{where} at t = {a:.4g} … {b:.4g}; fix: {fix}."


def check_tolerance(accuracy):
    """The relative objective error a solve accepts (``accuracy=`` of :func:`colloc.solve`): a positive number,
    None for :data:`TOLERANCE`, or False for no estimate at all."""
    if accuracy is None:
        return TOLERANCE
    if accuracy is False:
        return False
    if isinstance(accuracy, bool) or not isinstance(accuracy, (int, float)) or not 0 < accuracy < math.inf:
        raise OptionError(f"`accuracy` must be a positive relative objective error such as 1e-4, or False; got {accuracy!r}.")
    return float(accuracy)


def with_accuracy(tr, nlp, sol, res, tolerance):
    """``res`` with its accuracy record and, if the mesh does not resolve the solution, the warning that says so
    (and the warnings of :mod:`colloc.simulate.active_bounds` for a final time or parameter on its bound).

    Single-phase collocation and midpoint-vi (multi-phase:
    :func:`colloc.pipeline.phase_accuracy.with_phase_accuracy`; other transcriptions return ``res`` unchanged);
    the record goes in ``res.accuracy`` and ``res.trajectory.metadata["accuracy"]``.
    """
    from ..transcription.collocation import Collocation

    from ..transcription.midpoint_vi import MidpointVITranscription

    if type(tr) is MidpointVITranscription:
        return _with_step_doubling(tr, res, tolerance)
    if type(tr) is not Collocation:
        return res
    if res.success:
        res = dataclasses.replace(res, warnings=list(res.warnings) + active_bounds.warnings(tr.problem, res.trajectory))
    if tolerance is False:
        return res
    acc, note = _assess(tr.problem, res.trajectory, nlp.rows, multipliers(sol), tolerance)
    if acc is None:
        return dataclasses.replace(res, warnings=list(res.warnings) + [note]) if note and res.success else res
    start = _time.perf_counter()
    acc["between"] = limits.summary(tr.problem, res.trajectory)
    acc["seconds"] += _time.perf_counter() - start
    res.trajectory.metadata["accuracy"] = acc
    notes = [warning(acc), limits_warning(acc["between"], tr.options.path_points)] if res.success else []
    return dataclasses.replace(res, accuracy=acc, warnings=list(res.warnings) + [n for n in notes if n])


def multipliers(sol):
    """The solver's constraint multipliers as a flat array, or None."""
    lam_g = sol.get("lam_g") if isinstance(sol, dict) else None
    return None if lam_g is None else np.asarray(lam_g, dtype=float).ravel()


def _with_step_doubling(tr, res, tolerance):
    """:func:`with_accuracy` of a midpoint-vi solve: the step-doubling local error ``ε_k`` of every step
    (:func:`colloc.pipeline.refine_vi.local_errors`, what refinement splits by), kept in ``interval_errors`` too.

    The discrete Euler–Lagrange rows have no truncation error the dual-weighted estimate could weigh, so the
    relative objective error is estimated by the local errors added up, ``Σ_k ε_k`` (each step's relative
    drift of the coordinates, accumulated over the horizon): measured 1.4–1.6 times the true relative error
    of the double pendulum swing-up at 20, 40 and 80 steps (docs/accuracy.md)."""
    from . import refine_vi

    if tolerance is False:
        return res
    start = _time.perf_counter()
    with np.errstate(all="ignore"):
        errors = refine_vi.local_errors(tr.problem, res.trajectory, vi=tr.vi)
    if not errors.size or not np.all(np.isfinite(errors)):
        return res
    k, t = int(np.argmax(errors)), res.trajectory.time
    relative = float(errors.sum())
    acc = dict(max_error=float(errors[k]), interval=k, time=[float(t[k]), float(t[k + 1])], method="step doubling",
               objective_error=math.nan, relative_objective_error=relative, tolerance=float(tolerance),
               resolved=bool(relative <= tolerance), seconds=_time.perf_counter() - start)
    if not acc["resolved"]:  # second order: the steps that bring Σ ε_k to half the tolerance (measured to resolve)
        acc["proposed_intervals"] = math.ceil(errors.size * math.sqrt(2.0 * relative / tolerance))
    res.trajectory.metadata["accuracy"] = acc
    notes = [warning(acc)] if res.success else []
    return dataclasses.replace(res, accuracy=acc, interval_errors=errors, warnings=list(res.warnings) + [n for n in notes if n])


def limits_warning(between, path_points=0) -> str | None:
    """One sentence when a bound or path constraint is exceeded between grid points (:mod:`colloc.simulate.limits`)."""
    if not between or not between["violated"]:
        return None
    more = f" (now {path_points})" if path_points else ""
    return (f"`{between['name']}` reaches {between['value']:.6g} at t = {between['time']:.6g} between grid points, beyond its "
            f"bound {between['bound']:.6g} that holds at the grid points ({len(between['violated'])} limit(s) exceeded by more than "
            f"{limits.TOLERANCE:.0e} relative); fix: path_points={max(2 * path_points, 3)}{more} imposes the limits inside each interval "
            f"(with a small acceleration penalty where the controls zig-zag: docs/robots.md).")
