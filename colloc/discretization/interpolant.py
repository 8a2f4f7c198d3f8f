"""A solved Trajectory as the scheme's piecewise interpolant, evaluated on all intervals at once (numpy only).

:meth:`Trajectory.sample` answers "what is the value at these times"; mesh
refinement and forward simulation instead ask "what are the values (and the
state derivatives) at these *local* times ``s ∈ [0, 1]`` of every interval".
:class:`Interpolant` answers that with a few matrix products per variable.

The state interpolant of every scheme is linear in the node states ``X`` and
in ``h`` times the node derivatives ``F`` (Hermite cubic for Hermite–Simpson,
the quadratic of Kelly 2017 eq. 3.10 for the trapezoid, the Lagrange
polynomial for Radau), so it is ``x(s) = X A(s) + h F B(s)``; ``A`` and ``B``
are read off :meth:`Scheme.interpolate_state` with unit node values, and their
``s``-derivatives come from an exact polynomial fit.  Controls and multipliers
use the polynomial through their values at the collocation points.

Legend: ``n`` intervals, ``m`` grid points added per interval (scheme stride),
``s`` local time, ``h`` interval lengths in physical time.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np

from ..errors import FileFormatError, OptionError
from .grid import Grid
from .schemes import OTHER_SCHEMES, Scheme, get_scheme, lagrange_basis

def held(trajectory) -> bool:
    """Whether ``trajectory`` holds its controls over each interval (``metadata["control_hold"]``, written by the
    transcription that made it, or declared by the scheme it names): it is no collocation polynomial; states and
    multipliers are piecewise linear between the nodes, controls constant over each interval (zero-order)."""
    declared = OTHER_SCHEMES.get(trajectory.metadata.get("scheme"), {}).get("control_hold")
    return trajectory.metadata.get("control_hold", declared) == "zero-order"


def collocation_nodes(scheme: Scheme) -> np.ndarray:
    """Indices of the nodes where the scheme imposes the dynamics.

    Every node for the trapezoid and Hermite–Simpson; the ``d`` Radau roots
    for ``radau-d``, not the interval start: the control of the very first grid
    point enters no defect, so Radau controls are the degree ``d − 1``
    polynomial through the roots (Garg et al. 2010).  The transcription pulls
    such controls onto that polynomial (``_dangling_controls``), so the values
    written at those points are the polynomial's too.
    """
    return scheme.collocation_indices


def state_basis(scheme: Scheme, s):
    """``A, B, dA, dB``, each shape ``(num_nodes, len(s))``: ``x(s) = X A + h F B``, ``dx/ds = X dA + h F dB``."""
    s = np.atleast_1d(np.asarray(s, dtype=float))
    # the same few local times come back on every solve (error estimate, dense checks): fit once per scheme
    return tuple(a.copy() for a in _state_basis(scheme.name, tuple(s.tolist())))


@functools.lru_cache(maxsize=64)
def _state_basis(name, s):
    scheme, s = get_scheme(name), np.asarray(s, dtype=float)
    k = scheme.num_nodes
    eye, zero = np.eye(k), np.zeros((k, k))
    # every interpolant is a polynomial of degree <= num_nodes: a fit through num_nodes + 2 points is exact
    fit_s = 0.5 - 0.5 * np.cos(np.pi * np.arange(k + 2) / (k + 1))
    out = []
    for X, F in ((eye, zero), (zero, eye)):
        vals = scheme.interpolate_state(fit_s, X, F, 1.0)
        coeffs = [np.polyfit(fit_s, row, k + 1) for row in vals]
        out.append((np.array([np.polyval(c, s) for c in coeffs]), np.array([np.polyval(np.polyder(c), s) for c in coeffs])))
    (A, dA), (B, dB) = out
    return A, B, dA, dB


class Interpolant:
    """The scheme interpolant of ``trajectory`` interval by interval.

    Parameters
    ----------
    trajectory : Trajectory
        A solution written by ``colloc.solve`` (metadata ``scheme`` names the
        scheme; every state has its ``NAME.dot`` column).

    Attributes
    ----------
    scheme : Scheme
    mesh_times : ndarray, shape (n + 1,)
        Physical times of the mesh points.
    h : ndarray, shape (n,)
        Interval lengths.
    """

    def __init__(self, trajectory):
        name = trajectory.metadata.get("scheme")
        if not name:
            raise FileFormatError("The trajectory names no `scheme` in its metadata, so its interpolant is unknown.")
        self.scheme = get_scheme(name)
        self.trajectory = trajectory
        self.grid = Grid.of_points(trajectory.time, self.scheme)
        self.num_intervals = self.grid.num_intervals
        self.mesh_times = trajectory.time[self.grid.mesh_points]
        self.h = np.diff(self.mesh_times)
        self.index = self.grid.nodes_of_intervals

    def nodes(self, name) -> np.ndarray:
        """Node values of column ``name``, shape ``(n, num_nodes)``."""
        return self.trajectory[name][self.index]

    def times(self, s) -> np.ndarray:
        """Physical times at local times ``s`` of every interval, shape ``(n, len(s))``."""
        return self.mesh_times[:-1, None] + self.h[:, None] * np.atleast_1d(s)[None, :]

    def states(self, names, s):
        """States and their time derivatives at local times ``s``.

        Returns
        -------
        x, xdot : ndarray, shape (len(names), n, len(s))
        """
        A, B, dA, dB = state_basis(self.scheme, s)
        x, xdot = [], []
        for name in names:
            dot = f"{name}.dot"
            if dot not in self.trajectory:
                raise FileFormatError(f"The trajectory has no derivative column `{dot}`; it is needed for the state interpolant.")
            X, F = self.nodes(name), self.nodes(dot)
            x.append(X @ A + self.h[:, None] * (F @ B))
            xdot.append((X @ dA) / self.h[:, None] + F @ dB)
        shape = (0, self.num_intervals, np.size(s))
        return (np.array(x) if x else np.zeros(shape)), (np.array(xdot) if xdot else np.zeros(shape))

    def others(self, names, s) -> np.ndarray:
        """Controls or multipliers at local times ``s``, shape ``(len(names), n, len(s))``.

        The polynomial through the values at the scheme's collocation points
        (:func:`collocation_nodes`).
        """
        cols = collocation_nodes(self.scheme)
        L = lagrange_basis(self.scheme.nodes[cols], s)
        vals = [self.nodes(name)[:, cols] @ L for name in names]
        return np.array(vals) if vals else np.zeros((0, self.num_intervals, np.size(s)))


def sample(trajectory, times) -> dict:
    """Every column of ``trajectory`` at physical ``times`` (clipped to its span), as each is held.

    * collocation schemes: states by the scheme's state interpolant (needs ``NAME.dot``), every other
      column by the polynomial through its values at the collocation points of the interval;
    * ``midpoint-vi``: states and multipliers linear between the nodes, controls zero-order held,
      ``u(t) = u_k`` on ``[t_k, t_{k+1})`` (the value the discrete Lagrangian used);
    * a trajectory naming no scheme colloc knows (a file from elsewhere), or whose point count does
      not fit its scheme: linear between the rows, with a warning.

    Returns
    -------
    dict of str -> ndarray, shape (len(times),)
    """
    time = trajectory.time
    times = np.clip(np.asarray(times, dtype=float).ravel(), time[0], time[-1])
    name = trajectory.metadata.get("scheme")
    columns = {n: trajectory[n] for n in trajectory.names}
    if held(trajectory):
        return _sample_held(trajectory, columns, times)
    scheme = _known_scheme(name)
    if scheme is None or not Grid.fits(time.size, scheme):
        why = (f"names no scheme colloc knows (`{name}`)" if scheme is None
               else f"has {time.size} points, which a `{name}` grid cannot have")
        warnings.warn(f"The trajectory {why}; it is interpolated linearly between its rows.", stacklevel=3)
        return {k: np.interp(times, time, v) for k, v in columns.items()}
    grid = Grid.of_points(time, scheme)
    mesh_t = time[grid.mesh_points]
    i = np.clip(np.searchsorted(mesh_t, times, side="right") - 1, 0, mesh_t.size - 2)
    h = mesh_t[i + 1] - mesh_t[i]
    s = np.where(h > 0, (times - mesh_t[i]) / np.where(h > 0, h, 1.0), 0.0)
    nodes = grid.nodes_of_intervals[i]                              # (len(times), num_nodes)
    states = [n for n in trajectory.of_kind("state") if f"{n}.dot" in columns]
    cols = collocation_nodes(scheme)  # controls: the polynomial through the collocation nodes
    basis = np.stack([_lagrange_at(scheme.nodes[cols], j, s) for j in range(cols.size)])
    out = {}
    for key, col in columns.items():
        if key not in states:
            out[key] = (col[nodes[:, cols]].T * basis).sum(axis=0)
    for key in states:
        x, f = columns[key], columns[f"{key}.dot"]
        out[key] = np.array([scheme.interpolate_state(s[k], x[nodes[k]][None, :], f[nodes[k]][None, :], h[k])[0, 0]
                             for k in range(times.size)])
    return {k: out[k] for k in columns}


def _known_scheme(name):
    """The collocation scheme called ``name``, or ``None`` if colloc has no such scheme."""
    if not isinstance(name, str) or not name:
        return None
    try:
        return get_scheme(name)
    except OptionError:
        return None


def _sample_held(trajectory, columns, times) -> dict:
    """Linear between nodes, controls held from the start of their interval (zero-order hold)."""
    time = trajectory.time
    i = np.clip(np.searchsorted(time, times, side="right") - 1, 0, time.size - 2)
    # the last row repeats the last interval's control, so t = t_n needs no special case
    return {key: col[i] if trajectory.kinds.get(key) == "control" else np.interp(times, time, col) for key, col in columns.items()}


def _lagrange_at(nodes, j, s):
    """ℓ_j(s) of the Lagrange basis on ``nodes``."""
    out = np.ones_like(s, dtype=float)
    for m, nm in enumerate(nodes):
        if m != j:
            out = out * (s - nm) / (nodes[j] - nm)
    return out
