"""colloc's one dense output: a solved Trajectory between its grid points, as its scheme holds it (numpy only).

Everything that asks for a solution between grid points reads it here: ``Trajectory.sample`` and
``traj(t)`` (plots, guesses from a warm start), mesh refinement and the accuracy record, path rows
inside intervals, the bound checks between grid points, forward simulation and the event-driven
re-simulation (their control inputs), the contact reports.  What each column is between the nodes of
interval ``k`` (local time ``s ∈ [0, 1]``):

* states of a collocation scheme: the scheme's state interpolant, linear in the node states ``X`` and in
  ``h`` times the node derivatives ``F`` (Hermite cubic for Hermite–Simpson, the quadratic of Kelly 2017
  eq. 3.10 for the trapezoid, the Lagrange polynomial for Radau and Legendre–Gauss), so
  ``x(s) = X A(s) + h F B(s)``; ``A`` and ``B`` are :meth:`Scheme.interpolate_state` of unit node values,
  their ``s``-derivatives an exact polynomial fit;
* controls: the polynomial through their values at the scheme's collocation points (quadratic for
  Hermite–Simpson), the line between the interval's end values where the solve tied the interior controls
  to it (``control_interpolation="linear"``, recorded in the metadata), held from the interval's start for
  ``midpoint-vi`` (the value the discrete Lagrangian used);
* every other column (multipliers, outputs, contact forces): the polynomial through its values at the
  collocation points; ``midpoint-vi`` states and multipliers: linear between the nodes.

Values are numeric (numpy arrays of node values) or symbolic (CasADi node values and local time, e.g.
controls written into an integrator): :func:`polynomial` is the same arithmetic for both, on the one
Lagrange basis (:func:`colloc.discretization.schemes.lagrange_polynomials`).  Times are placed in their
interval by the one interval search (:func:`colloc.discretization.grid.locate`); a multi-phase trajectory
is sampled phase by phase (:meth:`colloc.results.phased_trajectory.PhasedTrajectory.sample`).

Legend: ``n`` intervals, ``m`` grid points added per interval (scheme stride),
``s`` local time, ``h`` interval lengths in physical time.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..errors import FileFormatError, OptionError
from .grid import Grid, locate
from .schemes import OTHER_SCHEMES, Scheme, get_scheme, lagrange_basis, lagrange_polynomials


def held(trajectory) -> bool:
    """Whether ``trajectory`` holds its controls over each interval (``metadata["control_hold"]``, written by the
    transcription that made it, or declared by the scheme it names): it is no collocation polynomial; states and
    multipliers are piecewise linear between the nodes, controls constant over each interval (zero-order)."""
    declared = OTHER_SCHEMES.get(trajectory.metadata.get("scheme"), {}).get("control_hold")
    return trajectory.metadata.get("control_hold", declared) == "zero-order"


class HeldNodes(Scheme):
    """The nodes of a trajectory that holds its controls (:func:`held`, e.g. ``midpoint-vi``) as the dense
    output reads them (not a collocation scheme).

    One interval per step, its two ends as nodes: states and multipliers linear between them, controls
    held at the step's start value.
    """

    def __init__(self, name):
        super().__init__(name, 2, np.array([0.0, 1.0]), np.array([0.5, 0.5]))

    def interpolate_state(self, s, X, F, h):
        return X @ lagrange_basis(self.nodes, s)


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


def control_nodes(scheme: Scheme, control_interpolation="free") -> np.ndarray:
    """Indices of the nodes the control of one interval is the polynomial through.

    The collocation nodes (:func:`collocation_nodes`); the interval's two ends with
    ``control_interpolation="linear"`` on a scheme with interior nodes; the start alone (held) for
    ``midpoint-vi``.
    """
    if isinstance(scheme, HeldNodes):
        return np.array([0])
    if control_interpolation == "linear" and scheme.stride > 1:
        return np.array([0, scheme.num_nodes - 1])
    return np.asarray(scheme.collocation_indices)


def polynomial(values, nodes, s):
    """``Σ_j values[..., j] ℓ_j(s)``: the polynomial through ``values`` at local ``nodes``, numeric or symbolic.

    Parameters
    ----------
    values : ndarray, shape (..., len(nodes)), or a CasADi matrix, shape (rows, len(nodes))
    nodes : ndarray
        Local times of the values in ``[0, 1]``.
    s : float, ndarray or CasADi expression
        Local times.  Numeric ``values`` and ``s`` give shape ``(..., len(s))``; a CasADi ``s`` or
        ``values`` give a CasADi column of ``rows`` expressions.
    """
    if isinstance(values, np.ndarray) and isinstance(s, (int, float, np.number, np.ndarray, list, tuple)):
        return values @ lagrange_basis(nodes, s)
    basis = lagrange_polynomials(nodes, s)
    out = values[:, 0] * basis[0]
    for j in range(1, len(basis)):
        out = out + values[:, j] * basis[j]
    return out


#: Scheme name -> (dA, dB) polynomial coefficients of the state basis' s-derivatives, one row per node.
_DERIVATIVES: dict = {}


def state_basis(scheme: Scheme, s):
    """``A, B, dA, dB``, each shape ``(num_nodes, len(s))``: ``x(s) = X A + h F B``, ``dx/ds = X dA + h F dB``."""
    s = np.atleast_1d(np.asarray(s, dtype=float))
    k = scheme.num_nodes
    eye, zero = np.eye(k), np.zeros((k, k))
    A = np.broadcast_to(scheme.interpolate_state(s, eye, zero, 1.0), (k, s.size))
    B = np.broadcast_to(scheme.interpolate_state(s, zero, eye, 1.0), (k, s.size))
    if scheme.name not in _DERIVATIVES:
        # every interpolant is a polynomial of degree <= num_nodes: a fit through num_nodes + 2 points is exact
        fit_s = 0.5 - 0.5 * np.cos(np.pi * np.arange(k + 2) / (k + 1))
        _DERIVATIVES[scheme.name] = [[np.polyder(np.polyfit(fit_s, row, k + 1)) for row in scheme.interpolate_state(fit_s, X, F, 1.0)]
                                     for X, F in ((eye, zero), (zero, eye))]
    dA, dB = ([np.polyval(c, s) for c in coefficients] for coefficients in _DERIVATIVES[scheme.name])
    return np.array(A), np.array(B), np.array(dA).reshape(k, s.size), np.array(dB).reshape(k, s.size)


class Interpolant:
    """The dense output of ``trajectory``: every column between its grid points, as its scheme holds it.

    Parameters
    ----------
    trajectory : Trajectory
        A solution written by ``colloc.solve`` (metadata ``scheme`` names the scheme; every state of a
        collocation scheme has its ``NAME.dot`` column; ``control_interpolation`` if not ``"free"``).

    Attributes
    ----------
    scheme : Scheme
        The collocation scheme, or :class:`HeldNodes` for ``midpoint-vi``.
    mesh_times : ndarray, shape (n + 1,)
        Physical times of the mesh points.
    h : ndarray, shape (n,)
        Interval lengths.
    index : ndarray, shape (n, num_nodes)
        Grid index of node ``j`` of interval ``i``.
    control_nodes, value_nodes : ndarray
        The nodes controls, and every other column but the states, are the polynomial through.
    """

    def __init__(self, trajectory):
        name = trajectory.metadata.get("scheme")
        if not name:
            raise FileFormatError("The trajectory names no `scheme` in its metadata, so its interpolant is unknown.")
        self.held = held(trajectory)
        self.scheme = HeldNodes(name) if self.held else get_scheme(name)
        self.trajectory = trajectory
        self.grid = Grid.of_points(trajectory.time, self.scheme)
        self.num_intervals = self.grid.num_intervals
        self.mesh_times = trajectory.time[self.grid.mesh_points]
        self.h = np.diff(self.mesh_times)
        self.index = self.grid.nodes_of_intervals
        self.control_nodes = control_nodes(self.scheme, trajectory.metadata.get("control_interpolation", "free"))
        self.value_nodes = np.asarray(collocation_nodes(self.scheme))

    def nodes(self, name) -> np.ndarray:
        """Node values of column ``name``, shape ``(n, num_nodes)``."""
        return self.trajectory[name][self.index]

    def times(self, s) -> np.ndarray:
        """Physical times at local times ``s`` of every interval, shape ``(n, len(s))``."""
        return self.mesh_times[:-1, None] + self.h[:, None] * np.atleast_1d(s)[None, :]

    def locate(self, times) -> tuple[np.ndarray, np.ndarray]:
        """Interval and local time of physical ``times`` (a mesh time belongs to the interval it starts)."""
        return locate(self.mesh_times, times)

    def _derivative_nodes(self, name):
        dot = f"{name}.dot"
        if dot in self.trajectory:
            return self.nodes(dot)
        if self.held:  # linear states: no derivative enters
            return np.zeros((self.num_intervals, self.scheme.num_nodes))
        raise FileFormatError(f"The trajectory has no derivative column `{dot}`; it is needed for the state interpolant.")

    def states(self, names, s):
        """States and their time derivatives at local times ``s``.

        Returns
        -------
        x, xdot : ndarray, shape (len(names), n, len(s))
        """
        A, B, dA, dB = state_basis(self.scheme, s)
        x, xdot = [], []
        for name in names:
            X, F = self.nodes(name), self._derivative_nodes(name)
            x.append(X @ A + self.h[:, None] * (F @ B))
            xdot.append((X @ dA) / self.h[:, None] + F @ dB)
        shape = (0, self.num_intervals, np.size(s))
        return (np.array(x) if x else np.zeros(shape)), (np.array(xdot) if xdot else np.zeros(shape))

    def controls(self, names, s) -> np.ndarray:
        """Controls at local times ``s``, shape ``(len(names), n, len(s))`` (the polynomial through
        :attr:`control_nodes`)."""
        return self._through(names, s, self.control_nodes)

    def others(self, names, s) -> np.ndarray:
        """Multipliers and every other column at local times ``s``, shape ``(len(names), n, len(s))``.

        The polynomial through the values at the scheme's collocation points (:func:`collocation_nodes`).
        """
        return self._through(names, s, self.value_nodes)

    def _through(self, names, s, cols):
        vals = [polynomial(self.nodes(name)[:, cols], self.scheme.nodes[cols], s) for name in names]
        return np.array(vals) if vals else np.zeros((0, self.num_intervals, np.size(s)))

    def control_expression(self, U, s):
        """Controls of one interval as an expression of local time ``s`` (numeric or CasADi, see
        :func:`polynomial`) from their values ``U`` at :attr:`control_nodes`, shape ``(nu, len(control_nodes))``."""
        return polynomial(U, self.scheme.nodes[self.control_nodes], s)

    def value_expression(self, V, s):
        """As :meth:`control_expression` for multipliers and other columns, ``V`` at :attr:`value_nodes`."""
        return polynomial(V, self.scheme.nodes[self.value_nodes], s)

    def control(self, name, control_end=None):
        """``u(t)`` of control ``name`` at a physical time ``t`` (a float), in the interval ``t`` is in (the later
        one at a mesh point); ``u.breakpoints`` are the inner mesh times, where it may jump.

        ``control_end`` (shape ``(n,)``) is the value each interval ends on where it differs from the next
        interval's start (free steps), when the control polynomial passes through the interval's end.
        """
        cols = self.control_nodes
        values = self.nodes(name)[:, cols].copy()
        if control_end is not None and cols[-1] == self.scheme.num_nodes - 1:
            values[:, -1] = control_end
        nodes = self.scheme.nodes[cols]

        def u(t):
            (k,), s = self.locate(t)
            return float(polynomial(values[k], nodes, s)[0])

        u.breakpoints = list(self.mesh_times[1:-1])
        return u

    def at(self, times) -> dict:
        """Every column of the trajectory at physical ``times`` (not clipped), ``{name: ndarray (len(times),)}``."""
        traj = self.trajectory
        i, s = self.locate(times)
        rows = self.index[i]                                                       # (len(times), num_nodes)
        states = set() if self.held else {n for n in traj.of_kind("state") if f"{n}.dot" in traj}
        A, B, _, _ = state_basis(self.scheme, s)
        out = {}
        for key in traj.names:
            col = traj[key]
            if key in states:
                out[key] = (col[rows] * A.T).sum(axis=1) + self.h[i] * (traj[f"{key}.dot"][rows] * B.T).sum(axis=1)
                continue
            cols = self.control_nodes if traj.kinds.get(key) == "control" else self.value_nodes
            out[key] = (col[rows[:, cols]] * lagrange_basis(self.scheme.nodes[cols], s).T).sum(axis=1)
        return out


def dense_output(trajectory):
    """The :class:`Interpolant` of ``trajectory``, or ``None`` for a trajectory naming no scheme colloc knows
    (a file from elsewhere) or whose point count does not fit its scheme."""
    name = trajectory.metadata.get("scheme")
    scheme = HeldNodes(name) if held(trajectory) else _known_scheme(name)
    if scheme is None or not Grid.fits(trajectory.time.size, scheme):
        return None
    return Interpolant(trajectory)


def sample(trajectory, times) -> dict:
    """Every column of ``trajectory`` at physical ``times`` (clipped to its span), as its scheme holds it
    (the module docstring, :meth:`Interpolant.at`).

    A trajectory naming no scheme colloc knows (a file from elsewhere), or whose point count does not fit
    its scheme, is interpolated linearly between its rows, with a warning.

    Returns
    -------
    dict of str -> ndarray, shape (len(times),)
    """
    time = trajectory.time
    times = np.clip(np.asarray(times, dtype=float).ravel(), time[0], time[-1])
    itp = dense_output(trajectory)
    if itp is None:
        name = trajectory.metadata.get("scheme")
        why = (f"names no scheme colloc knows (`{name}`)" if _known_scheme(name) is None and not held(trajectory)
               else f"has {time.size} points, which a `{name}` grid cannot have")
        warnings.warn(f"The trajectory {why}; it is interpolated linearly between its rows.", stacklevel=3)
        return {k: np.interp(times, time, trajectory[k]) for k in trajectory.names}
    return itp.at(times)


def last_rows_at(time, columns, times) -> dict:
    """Columns of a simulated time history at ``times``, linear between its rows; where a time repeats
    (the simulator's rows before and after an event), the last row at it.

    Parameters
    ----------
    time : ndarray, shape (num_rows,)
        Non-decreasing.
    columns : dict of str -> ndarray, shape (num_rows,)
    times : ndarray
    """
    _, last = np.unique(np.asarray(time)[::-1], return_index=True)
    t = np.asarray(time)[::-1][last]
    return {name: np.interp(times, t, np.asarray(col)[::-1][last]) for name, col in columns.items()}


def _known_scheme(name):
    """The collocation scheme called ``name``, or ``None`` if colloc has no such scheme."""
    if not isinstance(name, str) or not name:
        return None
    try:
        return get_scheme(name)
    except OptionError:
        return None
