"""Control oscillation (chattering): a control that alternates from grid point to grid point.

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

A zig-zag riding on a trend (a muscle excitation that falls while alternating
between mesh points and midpoints) has increments of one sign, so the same
points are also flagged by their second differences: a point is *rough* when
``|u_{i−1} − 2u_i + u_{i+1}| > ROUGH_SIZE · (max u − min u)`` (and the floor); a
smooth control has second differences O(h² u''), a switch makes two or three
rough points, and at least :data:`ROUGH_MIN_POINTS` rough points each within
:data:`ROUGH_MAX_GAP` of the previous one are an oscillation.  A cost such as
∫e² on a muscle excitation with a sharp activation switch (smoothing ≈ 10)
rewards exactly this (fast up, slow down), as a singular arc does.

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
#: Second difference, relative to the control's range, above which a point is rough.
ROUGH_SIZE = 0.2
#: Fewest rough points, and most grid points between two of them, that make an oscillation.
ROUGH_MIN_POINTS, ROUGH_MAX_GAP = 5, 3

#: Fixes measured to remove the oscillation, each with the settings it applies to and where it was measured
#: (catalyst mixing and Goddard's rocket, both singular arcs, at 50 intervals): tying interior controls to the
#: interval's line removes it for Hermite–Simpson; adaptive refinement (which ties them itself) removes it for
#: Hermite–Simpson and Radau.  ``scheme='radau-3'`` is not proposed: it removes it on catalyst mixing but not on
#: Goddard's rocket.
LINEAR_FIX = "constrain the interior controls (control_interpolation='linear')"
REFINE_FIX = "refine the mesh (refine={'tolerance': 1e-6})"
#: A robot's torques zig-zag in the flat valley a light link makes (the UR10's 0.2 kg wrist link): an acceleration
#: penalty of 1e-3 removes it (3 oscillating torques → 0, ∫|τ|² +0.07 %); tied interior controls leave one.
ACCELERATION_FIX = "add a small acceleration penalty, 1e-3 ∫|v̇|² dt (docs/robots.md)"
#: What rewards a zig-zag of a muscle's excitation: an activation switch far sharper than published
#: (problems/elbow_reach.py chatters with activation_dynamics_smoothing 10, not with the published 0.1).
MUSCLE_FIX = "use the published activation_dynamics_smoothing 0.1 (a sharper switch rewards the zig-zag)"


def fixes(stride=2, control_interpolation="free", refining=False, source=None) -> list:
    """The measured fixes (module constants) that apply to these settings and are not in use already.

    Parameters
    ----------
    stride : int
        Grid points per mesh interval (1: trapezoid, no interior controls to tie).
    control_interpolation : str
        The solve's ``control_interpolation``.
    refining : bool
        Whether the result comes from adaptive refinement.
    source : str, optional
        ``"multibody"`` for a robot's generalized force, ``"muscle"`` for a muscle's excitation (their own
        measured fixes), None for any other control.
    """
    if source == "multibody":
        return [ACCELERATION_FIX]
    out = [MUSCLE_FIX] if source == "muscle" else []
    if stride > 1 and control_interpolation != "linear":
        out.append(LINEAR_FIX)
    if not refining:
        out.append(REFINE_FIX)
    return out


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
        :data:`MIN_RUN` moves of alternating direction, and of every run of
        rough points (large second differences, see the module docstring).
    """
    u = np.asarray(u, dtype=float).ravel()
    out = np.zeros(u.size, dtype=bool)
    if u.size < MIN_RUN + 1 or not np.all(np.isfinite(u)):
        return out
    return _alternating_moves(u) | _rough_runs(u)


def _alternating_moves(u):
    out = np.zeros(u.size, dtype=bool)
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


def _rough_runs(u):
    out = np.zeros(u.size, dtype=bool)
    floor = ROUGH_SIZE * (u.max() - u.min()) + ABSOLUTE_FLOOR * (1.0 + np.abs(u).max())
    rough = np.flatnonzero(np.abs(u[:-2] - 2.0 * u[1:-1] + u[2:]) > floor) + 1
    first = 0
    for k in range(1, rough.size + 1):
        if k == rough.size or rough[k] - rough[k - 1] > ROUGH_MAX_GAP:
            if k - first >= ROUGH_MIN_POINTS:
                out[rough[first]:rough[k - 1] + 1] = True
            first = k
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


def warnings(trajectory, grid=None, names=None, control_interpolation="free", refining=False, sources=None) -> list:
    """One sentence per oscillating control: where it oscillates, what it means, the fixes not in use yet.

    Parameters
    ----------
    trajectory : Trajectory
    grid : Grid, optional
        The solution's grid: the sentence counts mesh intervals; without it, grid points.
    names : list of str, optional
        Columns to check (default: every control).
    control_interpolation : str
        The solve's setting (a fix already in use is not proposed).
    refining : bool
        Whether the solve is a mesh of adaptive refinement.
    sources : dict, optional
        :func:`colloc.transcription.collocation.control_sources` of the model (robot torques and muscle excitations have their own fixes).
    """
    names = trajectory.of_kind("control") if names is None else list(names)
    out = []
    for name in names:
        proposed = fixes(grid.stride if grid is not None else 2, control_interpolation, refining, (sources or {}).get(name))
        fix = " or ".join(proposed) if proposed else "no setting colloc measured removes it further"
        points = oscillating_points(trajectory[name])
        if not points.any():
            continue
        if grid is not None:
            flags = points[grid.nodes_of_intervals].any(axis=1)
            k = np.flatnonzero(flags)
            times = trajectory.time[grid.mesh_points]
            where = f"in {k.size} of {flags.size} intervals (t = {times[k[0]]:.4g} … {times[k[-1] + 1]:.4g})"
        else:
            k = np.flatnonzero(points)
            where = f"at {k.size} of {points.size} points (t = {trajectory.time[k[0]]:.4g} … {trajectory.time[k[-1]]:.4g})"
        out.append(f"control `{name}` oscillates from grid point to grid point {where}, as on a singular arc, so the "
                   f"objective may lie beyond the continuous optimum; fix: {fix}.")
    return out
