"""Where the contact forces of contact-implicit collocation act, and the rows that tie each force to its interval.

Two placements (``contact_forces=``, :class:`colloc.transcription.contacts.ContactCollocation`):

* ``"interval"`` (default): one normal force (and friction force) per mesh
  interval, constant on it, as the impulses of a time-stepping scheme are
  (Stewart & Trinkle, IJNME 39 (1996)).
* ``"collocation"``: a force at every grid point, where the residual
  ``M a + c − τ − W_nᵀλ − W_tᵀf = 0`` is imposed, so a force may vary inside an
  interval as the gap ``φ = 0`` kept at every grid point demands: a bead
  sliding in a bowl or a passive walker's stance, whose normal force follows
  the motion, has one equation ``φ_j = 0`` per point and one force per point
  (Patel, Shield, Kazi, Johnson & Biegler, RA-L 4 (2019) 4284, forces at the
  collocation points of each finite element).  With free steps each interval
  also ends on its own forces at an interior mesh point (blocks ``cnm``,
  ``cbpm``, ``cbmm``, ``cgm``, ``cf3m``), as it ends on its own accelerations
  and controls: a landing's interval ends free of force, the stance after it
  starts loaded.

In both, a force is tied to **every grid point of its interval**: the products
``φ_l λ_k ≤ ε`` for every grid point ``l`` of the interval that owns force
``k`` (a mesh point's force belongs to the interval it starts), and for
friction ``γ_k ≥ |ṡ_l|``, ``β⁺_k ṡ_l ≤ ε``, ``−β⁻_k ṡ_l ≤ ε`` with the cone
``(μλ_k − β⁺_k − β⁻_k) γ_k ≤ ε``: a force acts only while its interval is
closed throughout (a force at a single point where the gap touches zero would
launch a hop or stand in for an impact), and an interval sticks at every point
or slides one way with every force of it on the cone.  With one force per
interval these are the rows of :mod:`colloc.transcription.contacts`; with one
per point they are the same rows for each force of the interval.

Legend: ``lam`` normal force, ``bp``/``bm`` friction facets, ``gamma`` sliding
speed, ``sd`` tangential speed, ``l`` a grid point of the force's interval.
"""
from __future__ import annotations

from math import comb
from typing import NamedTuple

import casadi as ca
import numpy as np

from . import friction3d

#: Placements of the contact forces (module docstring).
FORCES = ("interval", "collocation")
COMPLEMENTARITY = "complementarity"
#: Suffix of the blocks holding, with free steps and forces at the collocation points, the forces each interval
#: ends on at an interior mesh point.
BEFORE = "m"


class ForceGroup(NamedTuple):
    """Forces that share a place in their intervals: columns ``cols`` of the blocks named with ``suffix``,
    each owned by interval ``intervals[c]`` and labelled with grid point ``points[c]``; ``tag`` ends their row
    names (empty for one force per interval, so the rows keep their names)."""

    suffix: str
    cols: list
    intervals: np.ndarray
    points: np.ndarray
    tag: str


def force_groups(grid, placement, free_steps) -> list:
    """The :class:`ForceGroup` s of a placement (module docstring).

    Forces at the collocation points: the force at node ``j`` of interval ``i`` belongs to ``i`` for every node
    ``j`` the scheme collocates, so a Hermite–Simpson mesh point's force belongs to both intervals that meet
    there (both close their defects on it) and a Radau mesh point's to the interval it ends.  With free steps
    an interval ends on its own forces (block suffix ``BEFORE``) at an interior mesh point.
    """
    n, ng, last = grid.num_intervals, grid.num_points, grid.scheme.num_nodes - 1
    if placement == "interval":
        return [ForceGroup("", list(range(n)), np.arange(n), grid.interval_starts, "")]
    groups = []
    for j in (int(j) for j in grid.scheme.collocation_indices):
        if j == last and free_steps and n > 1:
            groups.append(ForceGroup(BEFORE, list(range(n - 1)), np.arange(n - 1), grid.mesh_points[1:-1], "#before"))
            groups.append(ForceGroup("", [ng - 1], np.array([n - 1]), np.array([ng - 1]), f"#{j}"))
        else:
            groups.append(ForceGroup("", [int(k) for k in grid.node(j)], np.arange(n), grid.node(j), f"#{j}"))
    return groups


def idle_points(grid, groups) -> np.ndarray:
    """Grid points whose force no interval's defects use (Radau's first point, Legendre–Gauss mesh points, and with
    free steps the interior mesh points that only end an interval): their forces are held at zero."""
    used = {k for gr in groups if not gr.suffix for k in gr.cols}
    return np.array([k for k in range(grid.num_points) if k not in used], dtype=int)


def force_columns(grid, placement):
    """Columns of the force blocks: ``(num_cols, grid index of each)``."""
    if placement == "interval":
        return grid.num_intervals, grid.interval_starts
    return grid.num_points, np.arange(grid.num_points)


def complementarity_rows(rows, names, gap, lam, grid, group, eps):
    """``φ_l λ_k ≤ ε`` for every grid point ``l`` of each force's interval; ``lam`` the group's forces (nc, m)."""
    nodes = grid.nodes_of_intervals[group.intervals]
    for j in range(grid.scheme.num_nodes):
        cols = [int(k) for k in nodes[:, j]]
        rows.add(COMPLEMENTARITY, names(f"gap@{j}*normal_force{group.tag}"), gap[:, cols] * lam, cols, -np.inf, eps)


def planar_rows(rows, names, mu, lam, bp, bm, gamma, sd, grid, group, eps, sd_end=None):
    """Maximal dissipation of the group's planar friction forces over their intervals (module docstring).

    ``sd_end`` (nf, num_intervals): the sliding speeds each interval ends on, which at an interior mesh point are
    its pre-impact speeds, not the grid point's (post-impact) ones.  An interval's forces oppose its own motion, so
    its last point's rows use them: with the grid point's speeds a stance foot's pre-impact speed was left free,
    and the rimless wheel's stance spoke slipped at the end of the interval before each landing (a force spike of
    70 N where 7 N holds it), which set a wrong pre-impact state and a wrong impulse.
    """
    nodes = grid.nodes_of_intervals[group.intervals]
    last = grid.scheme.num_nodes - 1
    cone = ca.repmat(ca.DM(mu), 1, len(group.cols)) * lam - bp - bm
    rows.add("friction", names(f"cone{group.tag}"), cone, group.points, 0.0, np.inf)
    rows.add(COMPLEMENTARITY, names(f"cone*sliding_speed{group.tag}"), cone * gamma, group.points, -np.inf, eps)
    for j in range(grid.scheme.num_nodes):
        cols = [int(k) for k in nodes[:, j]]
        sj = sd[:, cols] if sd_end is None or j != last else sd_end[:, [int(i) for i in group.intervals]]
        rows.add("friction", names(f"slip_plus@{j}{group.tag}"), gamma + sj, cols, 0.0, np.inf)
        rows.add("friction", names(f"slip_minus@{j}{group.tag}"), gamma - sj, cols, 0.0, np.inf)
        rows.add(COMPLEMENTARITY, names(f"speed@{j}*friction_plus{group.tag}"), sj * bp, cols, -np.inf, eps)
        rows.add(COMPLEMENTARITY, names(f"speed@{j}*friction_minus{group.tag}"), -sj * bm, cols, -np.inf, eps)


def spatial_rows(rows, contacts, lam, force, gamma3, sd3, grid, group, eps):
    """3-D cones (:func:`colloc.transcription.friction3d.cone_rows`) of the group's forces against the sliding
    at every grid point of their intervals, with the sliding speed ``gamma3`` of each grid point."""
    nodes = grid.nodes_of_intervals[group.intervals]
    cols = [[int(k) for k in nodes[:, j]] for j in range(grid.scheme.num_nodes)]
    tag = group.tag.replace("#", "force_") + "_" if group.tag else ""
    friction3d.cone_rows(rows, contacts, eps, lam, force, [gamma3[:, c] for c in cols], [sd3[:, c] for c in cols], cols,
                         group.points, tag)


def named_forces(rows, values, suffix) -> dict:
    """Normal and friction force columns ``{name: values}`` of the force blocks named with ``suffix`` (``rows`` a
    :class:`colloc.transcription.contacts.ContactRows`, ``values`` the unpacked decision vector)."""
    cols = {f"{c.name}.normal_force": values["cn" + suffix][i] for i, c in enumerate(rows.contacts)}
    for j, i in enumerate(rows.planar):
        cols[f"{rows.contacts[i].name}.friction_force"] = values["cbp" + suffix][j] - values["cbm" + suffix][j]
    if rows.spatial:
        cols.update(friction3d.split_columns(rows.spatial_contacts, values["cf3" + suffix], "friction_force"))
    return cols


def interval_forces(placement, grid, W, W_end=None):
    """The contact forces of a result as its transcription held them on each interval, by their ``placement``
    (``contact_forces``, recorded in the result's metadata; a file that does not say has one force per interval).

    One force per interval: the value at the interval's start, constant.  Forces at the collocation points: the
    polynomial through the forces at the scheme's collocation points
    (:func:`colloc.discretization.interpolant.collocation_nodes`; Radau's first point, which no defect uses, is not
    among them), ending on the force of ``W_end`` where an interval ends on its own (free steps), as the
    defects use them.

    Parameters
    ----------
    grid : Grid
        The grid of ``traj``.
    W : ndarray, shape (num_w, num_points)
        The force columns of the result.
    W_end : ndarray, shape (num_w, num_points), optional
        The forces each interval ends on at the interval ends (the ``NAME.interval_end`` columns).

    Returns
    -------
    inputs : ndarray, shape (num_w, n) or (num_collocation * num_w, n)
        Per interval the constant force, or the values at the collocation points stacked point by point (``ca.vec``
        of ``(num_w, num_collocation)``) for the polynomial of :func:`colloc.simulate.verify.interval_errors`.
    first, last : ndarray, shape (num_w, n)
        The forces at each interval's start and end.
    """
    from ..discretization.interpolant import collocation_nodes, polynomial

    starts, n, scheme = grid.interval_starts, grid.num_intervals, grid.scheme
    if placement != "collocation":
        return W[:, starts], W[:, starts], W[:, starts]
    cols = collocation_nodes(scheme)
    V = W[:, grid.nodes_of_intervals][:, :, cols]  # (num_w, n, num_collocation)
    if W_end is not None and cols[-1] == scheme.num_nodes - 1:
        V[:, :, -1] = W_end[:, grid.interval_ends]
    at_ends = polynomial(V, scheme.nodes[cols], [0.0, 1.0])  # (num_w, n, 2)
    return V.transpose(2, 0, 1).reshape(-1, n), at_ends[..., 0], at_ends[..., 1]


def bernstein_matrix(degree, s) -> np.ndarray:
    """``B`` (len(s), degree + 1): ``B[j, k] = C(d, k) s_j^k (1 − s_j)^(d−k)``, the Bernstein basis at local times ``s``."""
    s = np.asarray(s, dtype=float)[:, None]
    k = np.arange(degree + 1)[None, :]
    return np.array([comb(degree, i) for i in range(degree + 1)])[None, :] * s ** k * (1 - s) ** (degree - k)


def control_hull(rows, grid, U, U_end, names, bounds):
    """Each interval's control polynomial within the control's bounds everywhere, not only at its nodes.

    ``U`` the controls on the grid, ``U_end`` (free steps) the controls each interval ends on at an interior
    mesh point (or None), ``bounds`` ``[(lower, upper)]`` per control.  The Bernstein coefficients of the
    polynomial through the interval's collocation-point controls are bounded (rows ``control-hull``), and the
    polynomial lies in their convex hull (Farouki, CAGD 29 (2012) 379).  Without them a stretched interval hid
    a push from +5 to −5 in a quadratic that overshoots its bound between the nodes: the pushed block's least
    time came out 0.34 % below the true minimum at 20 intervals (one interval 4× the mesh's).  A constant or
    linear control within bounds has its coefficients within them, so a bang-bang switch on a mesh point
    stays feasible and the rows cut off nothing the scheme can represent exactly.
    """
    scheme = grid.scheme
    cols = [int(j) for j in scheme.collocation_indices]
    s, d = scheme.nodes[cols], len(cols) - 1
    bounded = [i for i, b in enumerate(bounds) if np.isfinite(b).any()]
    if d < 2 or not bounded:  # a line between values within bounds stays within them
        return
    C = np.linalg.inv(bernstein_matrix(d, s))  # coefficients from the node values
    last = scheme.num_nodes - 1
    Ub = U[bounded, :]
    ends = Ub[:, [int(k) for k in grid.interval_ends]]
    if U_end is not None and grid.num_intervals > 1:
        ends = ca.horzcat(U_end[bounded, :], Ub[:, -1])
    values = [ends if j == last else Ub[:, [int(k) for k in grid.node(j)]] for j in cols]
    keep = [k for k in range(d + 1) if not (k == 0 and s[0] == 0.0) and not (k == d and s[-1] == 1.0)]
    lo, hi = (np.array([bounds[i][side] for i in bounded]) for side in (0, 1))
    for k in keep:
        coef = sum(float(C[k, j]) * v for j, v in enumerate(values) if C[k, j] != 0.0)
        rows.add("control-hull", [f"{names[i]}.bernstein_{k}" for i in bounded], coef, grid.interval_starts, lo, hi)
