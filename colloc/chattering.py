"""Detection of chattering controls: values that alternate up and down between neighbouring grid points.

A cost such as ∫e² on a muscle excitation with a sharp activation/deactivation switch
(``activation_dynamics_smoothing`` ≈ 10) rewards fast-up, slow-down cycles, and so does any
singular or near-singular arc: the discrete optimum then zig-zags from point to point, undercuts
the continuous optimum, and differs between schemes and meshes.  Such a solution is not wrong as
an NLP solution but it is not a converged approximation of a smooth control, so it is reported.

A step d_k = u_{k+1} − u_k *flips* when d_k d_{k+1} < 0 and both |d_k|, |d_{k+1}| exceed
``relative_amplitude`` times the column's range (and ``absolute_amplitude``).  A run of at least
``min_flips`` consecutive flips is chattering.
"""
from __future__ import annotations

import numpy as np


def chattering_runs(values, relative_amplitude=0.05, absolute_amplitude=1e-6, min_flips=4) -> list:
    """Index ranges ``(first, last)`` of the grid points in each chattering run of ``values``.

    Parameters
    ----------
    values : array_like, shape (num_points,)
    relative_amplitude, absolute_amplitude : float
        Smallest step that counts, relative to ``max − min`` of ``values`` and absolute.
    min_flips : int
        Consecutive sign changes of the step needed for a run.

    Returns
    -------
    list of (int, int)
    """
    u = np.asarray(values, dtype=float).ravel()
    if u.size < min_flips + 2:
        return []
    d = np.diff(u)
    floor = max(absolute_amplitude, relative_amplitude * float(np.ptp(u)))
    big = np.abs(d) > floor
    flips = (d[:-1] * d[1:] < 0) & big[:-1] & big[1:]  # flips[k]: the steps into and out of point k+1
    runs, k = [], 0
    while k < flips.size:
        if not flips[k]:
            k += 1
            continue
        start = k
        while k < flips.size and flips[k]:
            k += 1
        if k - start >= min_flips:
            runs.append((start, k + 1))  # points start .. k+1
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
        points = sum(b - a + 1 for a, b in runs)
        first, last = trajectory.time[runs[0][0]], trajectory.time[runs[-1][1]]
        notes.append(f"`{name}` alternates between neighbouring grid points at {points} points in t ∈ [{first:.4g}, {last:.4g}]: "
                     "the discrete optimum chatters, so it depends on the scheme and mesh (for a muscle excitation, "
                     "use the published activation_dynamics_smoothing 0.1 or penalize the excitation's rate).")
    return notes


__all__ = ["chattering_runs", "detect_chattering"]
