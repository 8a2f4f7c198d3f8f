"""Control oscillation: a control that alternates from grid point to grid point.

Where the Hamiltonian does not depend on a control (a singular arc) a
collocation NLP may let the control zig-zag between grid points — between
mesh points and Hermite–Simpson midpoints, typically between its bounds — and
the discretisation profits from it: the reported objective lies beyond the
continuous optimum although IPOPT reports success, and the dynamics residual
of the interpolated solution does not show it.  The sign of the increments
``Δu_i = u_{i+1} − u_i`` (grid points in time order) tells the two apart:

* a smooth control has increments of one sign over many points, each O(h);
* a jump (a bang–bang switch) is one large increment, or two of opposite sign;
* an oscillation (chattering) is a run of at least :data:`MIN_RUN` moves
  (adjacent large increments of one sign) whose directions alternate, each
  within :data:`MAX_GAP` grid points of the previous one (small increments in
  between are skipped: the control may rest on a bound between two pulses).

"Large" is ``|Δu_i| > RELATIVE_SIZE · (max u − min u) + ABSOLUTE_FLOOR (1 + max |u|)``,
so solver noise on a constant control is not an oscillation.

Legend: ``u`` one control's values on the grid, ``n`` mesh intervals.
"""
from __future__ import annotations

import numpy as np

#: Fewest consecutive moves of alternating direction that count as an oscillation.
MIN_RUN = 4
#: Most grid points between two reversals of one run (a few intervals: a chattering control, not a few switches).
MAX_GAP = 8
#: Size of an increment, relative to the control's range, above which it counts.
RELATIVE_SIZE = 0.05
#: Increments smaller than this (relative to 1 + max |u|) are solver noise.
ABSOLUTE_FLOOR = 1e-6

FIX = ("constrain the midpoint controls (control_interpolation='linear'), use scheme='radau-3', "
       "or refine the mesh (refine={'tolerance': ...})")


def oscillating_points(u) -> np.ndarray:
    """Grid points that take part in a point-to-point oscillation of one control.

    Parameters
    ----------
    u : array_like, shape (num_points,)
        Control values at the grid points, in time order.

    Returns
    -------
    ndarray of bool, shape (num_points,)
        True from the first to the last point of every run of at least
        :data:`MIN_RUN` moves of alternating direction.
    """
    u = np.asarray(u, dtype=float)
    out = np.zeros(u.size, dtype=bool)
    if u.size < MIN_RUN + 1 or not np.all(np.isfinite(u)):
        return out
    du = np.diff(u)
    big = np.flatnonzero(np.abs(du) > RELATIVE_SIZE * (u.max() - u.min()) + ABSOLUTE_FLOOR * (1.0 + np.abs(u).max()))
    runs = []  # runs: [first increment, last increment, number of moves]
    for k in big:
        if runs and k - runs[-1][1] == 1 and du[k] * du[runs[-1][1]] > 0:
            runs[-1][1] = k  # the same move continues over the next grid point
        elif runs and k - runs[-1][1] <= MAX_GAP and du[k] * du[runs[-1][1]] < 0:
            runs[-1][1:] = [k, runs[-1][2] + 1]  # the control turns back: one more move
        else:
            runs.append([k, k, 1])
    for first, last, moves in runs:
        if moves >= MIN_RUN:
            out[first:last + 2] = True
    return out


def oscillating_intervals(trajectory, grid) -> dict:
    """Mesh intervals in which each control oscillates.

    Parameters
    ----------
    trajectory : Trajectory
        A solution on ``grid`` (one column per grid point).
    grid : Grid
        Its collocation grid (``nodes_of_intervals``, shape (n, num_nodes)).

    Returns
    -------
    dict of str -> ndarray of bool, shape (n,)
        For every control that oscillates somewhere, the intervals holding an
        oscillating node.  Controls that do not oscillate are left out.
    """
    out = {}
    for name in trajectory.of_kind("control"):
        points = oscillating_points(trajectory[name])
        if points.any():
            out[name] = points[grid.nodes_of_intervals].any(axis=1)
    return out


def warnings(trajectory, grid) -> list:
    """One sentence per oscillating control: where it oscillates, what it means, the fix."""
    out = []
    for name, flags in oscillating_intervals(trajectory, grid).items():
        k = np.flatnonzero(flags)
        times = trajectory.time[grid.mesh_points]
        out.append(f"control `{name}` oscillates from grid point to grid point in {k.size} of {flags.size} intervals "
                   f"(t = {times[k[0]]:.4g} … {times[k[-1] + 1]:.4g}), as on a singular arc; the objective may lie beyond "
                   f"the continuous optimum: {FIX}.")
    return out
