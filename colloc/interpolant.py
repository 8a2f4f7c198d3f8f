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

import numpy as np

from .errors import FileFormatError
from .schemes import Scheme, get_scheme, lagrange_basis


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
        m = self.scheme.stride
        npts = trajectory.time.size
        if npts < 2 or (npts - 1) % m:
            raise FileFormatError(f"A `{name}` trajectory has 1 + {m}·n points; this one has {npts}.")
        self.num_intervals = (npts - 1) // m
        self.mesh_times = trajectory.time[::m]
        self.h = np.diff(self.mesh_times)
        self.index = np.arange(self.num_intervals)[:, None] * m + np.arange(m + 1)[None, :]

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
