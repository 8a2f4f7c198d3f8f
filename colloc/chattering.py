"""Detection of chattering controls: values that alternate up and down between neighbouring grid points.

A cost such as ∫e² on a muscle excitation with a sharp activation/deactivation switch
(``activation_dynamics_smoothing`` ≈ 10) rewards fast-up, slow-down cycles, and so does any
singular or near-singular arc: the discrete optimum then zig-zags from point to point, undercuts
the continuous optimum, and differs between schemes and meshes.  Such a solution is not wrong as
an NLP solution but it is not a converged approximation of a smooth control, so it is reported.

A point k is *rough* when its second difference |u_{k−1} − 2u_k + u_{k+1}| exceeds
``relative_amplitude`` times the column's range (and ``absolute_amplitude``): a smooth control has
second differences of order h² u'', a switch of a bang–bang control makes one or two rough points,
and a chattering control makes rough points one after the other (every point when it alternates,
every second one or more for a longer zig-zag period).  Rough points no more than ``max_gap`` apart
form a run; a run of at least ``min_points`` rough points is chattering.
"""
from __future__ import annotations

import numpy as np


def chattering_runs(values, relative_amplitude=0.2, absolute_amplitude=1e-6, min_points=5, max_gap=3) -> list:
    """Index ranges ``(first, last)`` of the grid points in each chattering run of ``values``.

    Parameters
    ----------
    values : array_like, shape (num_points,)
    relative_amplitude, absolute_amplitude : float
        Smallest second difference that counts, relative to ``max − min`` of ``values`` and absolute.
    min_points : int
        Rough points a run needs.
    max_gap : int
        Largest index distance between successive rough points of one run.

    Returns
    -------
    list of (int, int)
    """
    u = np.asarray(values, dtype=float).ravel()
    if u.size < 3:
        return []
    floor = max(absolute_amplitude, relative_amplitude * float(np.ptp(u)))
    rough = np.flatnonzero(np.abs(u[:-2] - 2.0 * u[1:-1] + u[2:]) > floor) + 1
    runs, first = [], 0
    for k in range(1, rough.size + 1):
        if k == rough.size or rough[k] - rough[k - 1] > max_gap:
            if k - first >= min_points:
                runs.append((int(rough[first]) - 1, int(rough[k - 1]) + 1))
            first = k
    return runs


def detect_chattering(trajectory, names=None, **options) -> list:
    """One sentence per control column that chatters, naming it and the time span.

    Parameters
    ----------
    trajectory : Trajectory
    names : list of str, optional
        Columns to check (default: every control).
    **options
        Passed to :func:`chattering_runs`.

    Returns
    -------
    list of str
        Empty when no column chatters.
    """
    names = trajectory.of_kind("control") if names is None else list(names)
    notes = []
    for name in names:
        runs = chattering_runs(trajectory[name], **options)
        if not runs:
            continue
        points = sum(b - a + 1 for a, b in runs)  # grid points the runs span
        first, last = trajectory.time[runs[0][0]], trajectory.time[runs[-1][1]]
        notes.append(f"`{name}` alternates between neighbouring grid points at {points} points in t ∈ [{first:.4g}, {last:.4g}]: "
                     "the discrete optimum chatters, so it depends on the scheme and mesh (for a muscle excitation, "
                     "use the published activation_dynamics_smoothing 0.1 or penalize the excitation's rate).")
    return notes


__all__ = ["chattering_runs", "detect_chattering"]
