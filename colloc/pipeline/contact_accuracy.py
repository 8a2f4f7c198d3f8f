"""How far to trust a contact-implicit solve: Betts' local error of its smooth intervals.

A contact-implicit transcription (:mod:`colloc.transcription.contacts`) holds
each contact's normal and friction forces constant on a mesh interval and
adds them to the multibody residual as ``W_nᵀλ + W_tᵀ(β⁺ − β⁻)``.  On an
interval where every contact keeps one mode (open, stick, slide one way) the
solution it approximates is smooth, and Betts' relative local error
(:mod:`colloc.pipeline.local_error`) measures it once the forces' accelerations
``M⁻¹(W_nᵀλ + W_tᵀβ)`` are added to the model's own dynamics.  Two kinds of
interval are left out, because there the interpolant does not approximate a
smooth solution and the residual would measure the switch, not the mesh:

* an interval whose interior nodes do not share one mode (a contact opens,
  closes, starts or stops sliding inside it), or whose mode differs from the
  next interval's (the switch is at its end, where with free steps the push
  and the accelerations it closes on are its own and may jump, while the
  trajectory's row there holds the next interval's);
* an interval that ends at an impact (its defects close on the pre-impact
  speeds ``v⁻``, the trajectory holds ``v⁺`` there).

No objective error is estimated: the complementarity rows make the multipliers
of the switching intervals weigh a switch's position, not a truncation error,
and that is where a contact problem's error lies.  Measured on
problems/pushed_block.py (``J*`` in closed form) at 10, 20 and 40 intervals:
the smooth intervals' largest error is 4e-10 … 3e-9 (the sliding block's push
is linear in time, which Hermite–Simpson integrates exactly) while the
objective is 1e-7 off for ``T = 2`` (the complementarity relaxation) and
2.8e-5, 1.8e-6, 3.7e-6 off for ``T = 4`` (where the stick–slide switch falls).
So the record says which intervals it covers (``smooth_intervals``,
``excluded``), carries :data:`NOTE`, and ``resolved`` is None (no verdict).
It costs under 1 % of the solve.
"""
from __future__ import annotations

import dataclasses
import math
import time as _time

import numpy as np

from ..transcription.contacts import CLOSED_GAP
from .local_error import estimate_errors, residuals

#: A contact counts as closed below this gap (relative to the largest gap), as sliding above this speed
#: (relative to the largest sliding speed): the contact schedule's thresholds.
GAP_TOLERANCE, SLIDE_TOLERANCE = CLOSED_GAP, 1e-4


#: What the record does not say, in one sentence (measured on problems/pushed_block.py, T = 4, 10 intervals:
#: smooth intervals 4e-10, the objective 2.8e-5 above J*, all of it from where the stick–slide switch falls).
NOTE = ("the local error of the smooth intervals only: it does not bound the objective's error, which on a "
        "contact problem comes mostly from where the switches and impacts fall")


def grid_modes(rows, trajectory) -> np.ndarray:
    """Every contact's mode at every grid point as a code: 0 open, 1 closed/stick, 2 slide forward, 3 slide back.

    Returns
    -------
    ndarray of int, shape (num_contacts, num_points)
    """
    X = np.array([trajectory[s] for s in trajectory.of_kind("state")])
    P = np.array([trajectory.parameters[n] for n in trajectory.parameters]) if trajectory.parameters else np.zeros(0)
    ng, nc, nf = X.shape[1], len(rows.contacts), len(rows.frictional)
    _, gap, _, sd = (np.asarray(o) for o in rows.point.map(ng)(X, P, np.zeros((nc, ng)), np.zeros((nf, ng)), np.zeros((nf, ng))))
    gap, sd = gap.reshape(nc, ng), sd.reshape(nf, ng)
    modes = np.zeros((nc, ng), dtype=int)
    for i in range(nc):
        closed = gap[i] <= GAP_TOLERANCE * max(1.0, float(np.abs(gap[i]).max()))
        modes[i] = np.where(closed, 1, 0)
        if i in rows.frictional:
            s = sd[rows.frictional.index(i)]
            moving = np.abs(s) > SLIDE_TOLERANCE * max(1.0, float(np.abs(s).max()))
            modes[i] = np.where(closed & moving, np.where(s > 0, 2, 3), modes[i])
    return modes


def smooth_intervals(rows, trajectory, itp) -> np.ndarray:
    """Which intervals keep every contact in one mode at their interior nodes and do not end at an impact.

    Returns
    -------
    ndarray of bool, shape (num_intervals,)
    """
    modes = grid_modes(rows, trajectory)[:, itp.index]                     # (contacts, n, nodes)
    inner = modes[:, :, 1:-1] if modes.shape[2] > 2 else modes
    same = np.all(inner == inner[:, :, :1], axis=(0, 2))
    # a switch at the interval's end: the push and the accelerations it closes on there are its own (free steps),
    # but the trajectory's row at that mesh point holds the next interval's, so its interpolant is not its own
    same[:-1] &= np.all(inner[:, :-1, :1] == inner[:, 1:, :1], axis=(0, 2))
    impulses = [trajectory[n] for n in trajectory.names if n.endswith(".impulse")]
    ends = itp.index[:, -1]
    hit = np.zeros(itp.num_intervals, dtype=bool)
    for P in impulses:
        hit |= np.abs(P[ends]) > 1e-9 * max(1.0, float(np.abs(P).max()))
    return same & ~hit


def contact_residuals(problem, trajectory, rows):
    """:func:`colloc.pipeline.local_error.residuals` with every interval's contact forces in the dynamics."""
    rs = residuals(problem, trajectory)
    itp, s = rs.itp, rs.s
    nc, nf = len(rows.contacts), len(rows.frictional)
    states = [v.name for v in problem.model.states]
    X = itp.states(states, s)[0]
    n, q = X.shape[1], X.shape[2]
    # the forces as the residual rows see them at the grid points (a mesh point holds the force of the interval it
    # starts), through the interval's nodes: holding the interval's own force instead measured the relaxation's
    # noise between neighbouring intervals (1e-8 … 2e-7 on the pushed block, growing with the intervals)
    lam = itp.others([f"{c.name}.normal_force" for c in rows.contacts], s).reshape(nc, n * q)
    beta = itp.others([f"{rows.contacts[i].name}.friction_force" for i in rows.frictional], s).reshape(nf, n * q)
    P = np.array([trajectory.parameters[v.name] for v in problem.model.parameters]).reshape(-1, 1)
    flat = X.reshape(len(states), n * q)
    before = np.asarray(rows.pre_impact.map(n * q)(flat, np.tile(P, (1, n * q)), lam, beta, np.zeros((nf, n * q))))
    r = rs.r.copy()  # v − (v − M⁻¹ gen) = M⁻¹ gen: the forces' share of the accelerations
    r[rows.speed_rows] -= (flat[rows.speed_rows] - before).reshape(len(rows.speed_rows), n, q)
    return dataclasses.replace(rs, r=r)


def with_contact_accuracy(tr, nlp, res):
    """``res`` of a contact-implicit solve with its accuracy record (module docstring); unchanged when the
    trajectory is not finite, and for ``scheme="midpoint-vi"`` (no collocation interpolant to check)."""
    from ..transcription.contacts import ContactCollocation

    if not isinstance(tr, ContactCollocation):
        return res
    if any(c.num_tangents > 1 for c in nlp.contact.contacts):  # 3-D friction: its forces are not in the residuals yet
        return res
    start = _time.perf_counter()
    traj = res.trajectory
    with np.errstate(all="ignore"):
        rs = contact_residuals(tr.problem, traj, nlp.contact)
        errors = estimate_errors(tr.problem, traj, rs=rs)
        smooth = smooth_intervals(nlp.contact, traj, rs.itp)
    if not errors.size or not np.all(np.isfinite(errors[smooth])):
        return res
    covered = np.where(smooth, errors, -np.inf)
    k = int(np.argmax(covered)) if smooth.any() else 0
    mesh = rs.itp.mesh_times
    acc = dict(max_error=float(covered[k]) if smooth.any() else math.nan, interval=k, time=[float(mesh[k]), float(mesh[k + 1])],
               method="smooth intervals", smooth_intervals=int(smooth.sum()), excluded=[int(i) for i in np.flatnonzero(~smooth)],
               objective_error=math.nan, relative_objective_error=math.nan, tolerance=math.nan, resolved=None,
               note=NOTE, seconds=_time.perf_counter() - start)
    traj.metadata["accuracy"] = acc
    return dataclasses.replace(res, accuracy=acc)
