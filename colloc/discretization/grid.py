"""The grid of a mesh and a scheme: every index set and weight of the transcription (numpy only).

A *mesh* ``0 = τ_0 < … < τ_n = 1`` has ``n`` intervals; a scheme with
``num_nodes`` nodes on ``[0, 1]`` (both ends included) adds ``m = num_nodes − 1``
grid points per interval, the last shared with the next interval's start.
Grid point ``i m + j`` is node ``j`` of interval ``i``; the mesh points are the
nodes ``j = 0`` (and the final point).  This module is the only place that
knows that arithmetic: transcription, constraint methods, sampling,
refinement and verification ask a :class:`Grid` for named index sets instead
(dymos' ``GridData`` subsets).

Legend: ``n`` intervals, ``m`` stride (grid points added per interval),
``tau`` normalised time of every grid point.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..errors import FileFormatError
from .schemes import Scheme


@dataclass(frozen=True, eq=False)
class Grid:
    """Grid points of ``scheme`` on ``mesh`` (normalised), with their index sets and weights.

    Parameters
    ----------
    mesh : ndarray, shape (n + 1,)
        Normalised mesh points, strictly increasing from 0 to 1.
    scheme : Scheme
        Its ``nodes`` place the grid points inside each interval.
    """

    mesh: np.ndarray
    scheme: Scheme

    def __post_init__(self):
        mesh = np.array(self.mesh, dtype=float).ravel()
        mesh.setflags(write=False)
        object.__setattr__(self, "mesh", mesh)

    @classmethod
    def of_points(cls, times, scheme: Scheme) -> "Grid":
        """The grid whose points are ``times`` (physical, ``1 + m n`` of them), e.g. a Trajectory's.

        Raises :class:`~colloc.errors.FileFormatError` if the count does not fit the scheme.
        """
        times = np.asarray(times, dtype=float).ravel()
        m = scheme.stride
        if times.size < 2 or (times.size - 1) % m:
            raise FileFormatError(f"A `{scheme.name}` trajectory has 1 + {m}·n points; this one has {times.size}.")
        mesh_t = times[::m]
        span = mesh_t[-1] - mesh_t[0]
        return cls((mesh_t - mesh_t[0]) / (span if span > 0 else 1.0), scheme)

    @staticmethod
    def fits(num_points, scheme: Scheme) -> bool:
        """Whether ``num_points`` grid points can come from ``scheme`` (``1 + m n``, n ≥ 1)."""
        return num_points >= 2 and (num_points - 1) % scheme.stride == 0

    # -- sizes ---------------------------------------------------------------------------------
    @property
    def num_intervals(self) -> int:
        return int(self.mesh.size - 1)

    @property
    def stride(self) -> int:
        return self.scheme.stride

    @property
    def num_points(self) -> int:
        return self.num_intervals * self.stride + 1

    # -- times and weights ---------------------------------------------------------------------
    @cached_property
    def tau(self) -> np.ndarray:
        """Normalised time of every grid point, shape ``(num_points,)``."""
        dt = np.diff(self.mesh)
        inner = self.mesh[:-1, None] + dt[:, None] * self.scheme.nodes[None, :-1]
        return np.concatenate([inner.ravel(), self.mesh[-1:]])

    @cached_property
    def fractions(self) -> np.ndarray:
        """Interval lengths in normalised time, ``τ_{i+1} − τ_i``, shape ``(n,)``."""
        return np.diff(self.mesh)

    @cached_property
    def weights(self) -> np.ndarray:
        """Quadrature weights on the grid: ``∫₀¹ f dτ ≈ Σ_k W_k f(τ_k)``, shape ``(num_points,)``."""
        W = np.zeros(self.num_points)
        np.add.at(W, self.nodes_of_intervals, self.fractions[:, None] * self.scheme.weights[None, :])
        return W

    # -- index sets ----------------------------------------------------------------------------
    @cached_property
    def nodes_of_intervals(self) -> np.ndarray:
        """Grid index of node ``j`` of interval ``i`` at ``[i, j]``, shape ``(n, num_nodes)``."""
        return np.arange(self.num_intervals)[:, None] * self.stride + np.arange(self.scheme.num_nodes)[None, :]

    def node(self, j) -> np.ndarray:
        """Grid index of node ``j`` in every interval, shape ``(n,)`` (``j = num_nodes − 1`` is the interval end)."""
        return self.nodes_of_intervals[:, j]

    @cached_property
    def mesh_points(self) -> np.ndarray:
        """Grid indices of the mesh points, shape ``(n + 1,)``."""
        return np.arange(0, self.num_points, self.stride)

    @property
    def interval_starts(self) -> np.ndarray:
        """Grid index of each interval's first point, shape ``(n,)``."""
        return self.mesh_points[:-1]

    @property
    def interval_ends(self) -> np.ndarray:
        """Grid index of each interval's last point (the next mesh point), shape ``(n,)``."""
        return self.mesh_points[1:]

    @cached_property
    def interior_points(self) -> np.ndarray:
        """Grid indices that are not mesh points, ascending."""
        return np.setdiff1d(np.arange(self.num_points), self.mesh_points)

    @cached_property
    def collocation_points(self) -> np.ndarray:
        """Grid indices where the scheme imposes the dynamics (its ``collocation_indices``), ascending."""
        return np.unique(self.nodes_of_intervals[:, self.scheme.collocation_indices])

    def interval_of(self, points) -> tuple[np.ndarray, np.ndarray]:
        """For grid indices ``points``: the index of the mesh point a point is, or of the interval it lies
        inside, and whether it is a mesh point (both shape ``(len(points),)``)."""
        k, r = np.divmod(np.asarray(points, dtype=np.int64), self.stride)
        return k, r == 0

    def locate(self, tau) -> tuple[np.ndarray, np.ndarray]:
        """Interval index and local time ``s ∈ [0, 1]`` of normalised times ``tau`` (clipped to the mesh)."""
        return locate(self.mesh, tau)


def locate(breakpoints, t) -> tuple[np.ndarray, np.ndarray]:
    """Interval ``i`` with ``breakpoints[i] ≤ t < breakpoints[i + 1]`` and the local time ``s ∈ [0, 1]`` in it.

    colloc's one interval search: mesh intervals of a grid or a trajectory (physical or normalised times),
    phases of a multi-phase trajectory.  A time at a breakpoint belongs to the interval it starts (the last
    breakpoint to the last interval); times outside are clipped to the first or last interval, with ``s``
    outside ``[0, 1]``.  An interval of zero length gives ``s = 0``.

    Parameters
    ----------
    breakpoints : ndarray, shape (n + 1,)
        Non-decreasing.
    t : float or ndarray

    Returns
    -------
    i : ndarray of int, shape (len(t),)
    s : ndarray, shape (len(t),)
    """
    breakpoints = np.asarray(breakpoints, dtype=float).ravel()
    t = np.asarray(t, dtype=float).ravel()
    i = np.clip(np.searchsorted(breakpoints, t, side="right") - 1, 0, max(breakpoints.size - 2, 0))
    if breakpoints.size < 2:
        return i, np.zeros(t.size)
    h = breakpoints[i + 1] - breakpoints[i]
    s = np.where(h > 0, (t - breakpoints[i]) / np.where(h > 0, h, 1.0), 0.0)
    return i, s
