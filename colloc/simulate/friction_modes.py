"""How a contact of the event-driven simulator rubs: the friction modes it picks at an event and the roots that end them.

At an event the acceleration-level LCP says which active contacts stick and
which slide (:func:`colloc.simulate.events.simulate_events`); this module
turns its answer into a :class:`~colloc.simulate.contact_system.Mode`:

* a sticking contact that starts to slide takes the vertex of its polygon
  its sticking force points at, or, with that force on a side between two
  vertices, slides along their bisector (:func:`onset_mode`);
* a contact sliding on a polygonal cone takes the vertex that dissipates most,
  or, where its sliding speed lies on the bisector of two vertices, slides along
  that bisector with its force on the polygon's side between them
  (:func:`slide_on_edges`; Filippov's sliding motion, below);
* where redundant rows leave the forces undetermined, the reference forces the
  smooth mode stays nearest are the minimum-norm ones, or those deepest inside
  every cone (:func:`central_forces`);
* :func:`tangential_roots` gives the smooth integration the roots that end
  the mode: start of slip, end of slip, and the turns of the friction force.

Sliding along a bisector.  Maximal dissipation puts a polygon's friction at
the vertex ``d_j`` that minimises ``d_jᵀṡ``.  Where ``ṡ`` reaches the bisector of
``d_j`` and ``d_l`` and the forces of both vertices drive it back across, the
vertex would flip at every step: a Zeno (chattering) sequence of turns that an
event-driven integration cannot pass.  The set-valued law at the tie is the
whole side ``[d_j, d_l]`` of the polygon, and the motion is Filippov's sliding
mode on the switching surface ``eᵀṡ = 0`` (``e = (d_j − d_l)/|d_j − d_l|``),
with the force ``μF_n (d_j + d_l)/2 + γe`` and the multiplier ``γ`` that keeps
it there, admissible while ``|γ| ≤ μF_n sin(π/k)`` (the force on the side).
It ends when ``γ`` reaches a vertex: the speed leaves the bisector on that
vertex's side (Filippov, *Differential Equations with Discontinuous Righthand
Sides*, Kluwer 1988, §2.4, §4.2; Glocker & Pfeiffer's set-valued force laws,
Pfeiffer & Glocker, *Multibody Dynamics with Unilateral Contacts*, Wiley 1996,
§7; Stewart, SIAM Review 42 (2000) 3, §4, on polygonal cones and their
switching).  The bisector is reached as a root of the integration, so the
speed lies on it only to the root's accuracy: the contact whose turn ended the
step is taken to be on it, and the speeds are projected back on it at every
event (:func:`edge_rows`), so round-off never starts a vertex mode on the wrong
side of the bisector (whose turn root would then fire at once, without end).

Legend: ``ṡ`` sliding speed (tangent coordinates), ``d`` polygon vertices
(friction directions), ``F_n`` normal force, ``μ`` friction, ``k`` facets,
``γ`` the edge multiplier.
"""
from __future__ import annotations

import math

import numpy as np

from .contact_forces import RCOND, cone_margin, facet_directions
from .contact_system import friction_direction, mode_rows, polygon_neighbours, smooth_accelerations

def central_forces(system, T, mode, v, scale):
    """Where the forces are not unique (redundant rows), Lemke's answer is a vertex of their set: some contact carries
    nothing and the next round-off would let it take off or slip.  The minimum-norm forces, if they obey the laws
    with room to spare, are the reference instead."""
    ref_n, ref_t = mode.ref_n.copy(), mode.ref_t.copy()
    mode.ref_n[:], mode.ref_t[:] = 0.0, 0.0
    _, Fn, Ft, _ = smooth_accelerations(system, T, mode, v)
    ok = all(Fn[i] > scale for i in np.flatnonzero(mode.active)) and all(
        cone_margin(system.friction[i], Fn[i], Ft[system.tangent_rows[i]], system.cone[i], system.facets[i]) > scale
        for i in np.flatnonzero(mode.stick))
    inner = None if ok else _interior_forces(system, T, mode, v, scale)
    mode.ref_n[:], mode.ref_t[:] = (Fn, Ft) if ok else (inner if inner is not None else (ref_n, ref_t))


def _interior_forces(system, T, mode, v, scale):
    """Where the minimum-norm forces break a cone (a table on a slope: its lightly loaded legs get as much friction as
    the others), the forces of the mode that lie deepest inside every cone and keep every normal force positive: the
    linear program ``max t`` over the null space of the force balance, margins ``≥ t`` (a circular cone as its
    inscribed 16-gon).  Returns ``(ref_n, ref_t)``, or None if no forces have room to spare."""
    from scipy.optimize import linprog

    H, C, d, A, S, E = mode_rows(system, T, mode, v)
    X = np.linalg.solve(T["M"], np.column_stack([T["f"], H.T]))
    Amat = C @ X[:, 1:]
    _, sv, Vt = np.linalg.svd(Amat)
    rank = int(np.sum(sv > RCOND * sv.max(initial=0.0)))
    if rank == Amat.shape[1]:
        return None
    N = Vt[rank:].T
    lam = np.linalg.lstsq(Amat, -d - C @ X[:, 0], rcond=RCOND)[0]
    G = [np.eye(lam.size)[k] for k in range(A.size)]  # F_n ≥ t
    column = {r: A.size + k for k, r in enumerate(S)}
    mu = system.friction
    for k, i in enumerate(A):
        rows = system.tangent_rows[i]
        if mode.stick[i] and rows.size:
            m = 16 if system.cone[i] == "circular" else system.facets[i]
            normals = [np.array([1.0]), np.array([-1.0])] if rows.size == 1 else \
                [np.array([math.cos(a), math.sin(a)]) for a in (2 * np.arange(m) + 1) * math.pi / m]
            reach = 1.0 if rows.size == 1 else math.cos(math.pi / m)
            for n in normals:  # μ F_n cos(π/m) − nᵀF_t ≥ t
                g = np.zeros(lam.size)
                g[k] = mu[i] * reach
                g[[column[r] for r in rows]] -= n
                G.append(g)
    for j, i in enumerate(E):  # |γ| ≤ sin(π/k) μ F_n
        for sign in (1.0, -1.0):
            g = np.zeros(lam.size)
            g[list(A).index(i)], g[A.size + S.size + j] = math.sin(math.pi / system.facets[i]) * mu[i], -sign
            G.append(g)
    G = np.array(G)
    top = max(1.0, float(np.abs(lam).max(initial=0.0)))
    res = linprog(np.append(np.zeros(N.shape[1]), -1.0), A_ub=np.column_stack([-G @ N, np.ones(len(G))]), b_ub=G @ lam,
                  bounds=[(None, None)] * N.shape[1] + [(None, top)], method="highs")
    if res.status != 0 or -res.fun <= scale:
        return None
    lam = lam + N @ res.x[:-1]
    ref_n, ref_t = np.zeros(system.nc), np.zeros(T["Wt"].shape[0])
    ref_n[A], ref_t[S] = lam[:A.size], lam[A.size:A.size + S.size]
    for j, i in enumerate(E):
        ref_t[system.tangent_rows[i]] = lam[A.size + S.size + j] * mode.edge[i]
    return ref_n, ref_t


def bisector_vertices(system, i, s, tolerance=0.0):
    """The two vertices ``(d_j, d_l)`` of contact ``i``'s polygon that dissipate most at the sliding speed ``s`` (2,),
    if ``s`` lies on their bisector: their dissipations differ by at most ``1e-9 |s| + tolerance``; else None."""
    D = facet_directions(2, system.facets[i])
    j, l = np.argsort(D @ s)[:2]
    return (D[j], D[l]) if abs((D[j] - D[l]) @ s) <= 1e-9 * np.linalg.norm(s) + tolerance else None


def slide_on_edges(system, T, mode, idx, v, hint=None, tolerance=0.0, onset=None):
    """Polygon contacts whose sliding speed lies on a bisector of two vertices slide along it (Filippov) if the force
    that keeps them there lies on the polygon's side, else at the vertex beyond.

    A speed is on a bisector if its two vertices' dissipations differ by at most ``1e-9 |ṡ| + tolerance`` (the
    integrator's absolute error in ``ṡ``), or if the step ended on its ``turn`` root (``hint[i] == "turn"``: the
    root put it there, to the root's accuracy, which for a slow slide is far coarser than 1e-9 |ṡ|).  A step that
    ended on the ``leave`` root of a bisector mode (its force reached a vertex) takes that vertex.  ``onset``
    ``{i: (d_j, d_l)}``: contacts that start to slide from rest with their force on the side between ``d_j`` and
    ``d_l`` (:func:`onset_mode`), whose speed, still zero, says nothing of the bisector it takes."""
    hint, onset = hint or {}, onset or {}
    ties = {}
    for i in idx:
        s = T["Wt"][system.tangent_rows[i]] @ v
        if i in onset:
            ties[i] = onset[i]
        elif s.size == 2:
            pair = bisector_vertices(system, i, s, math.inf if hint.get(i) in ("turn", "leave") else tolerance)
            if pair is not None:
                ties[i] = pair
    for i, (dj, dl) in ties.items():
        mode.slide[i], mode.edge[i] = 0.5 * (dj + dl), (dj - dl) / np.linalg.norm(dj - dl)
    if not ties:
        return
    # judged with the minimum-norm forces: nearest Lemke's (a vertex of the set of forces, where a redundant contact
    # may carry nothing) a contact with no load cannot hold any γ, leaves the edge and turns back at once
    ref = mode.ref_n.copy(), mode.ref_t.copy()
    mode.ref_n[:], mode.ref_t[:] = 0.0, 0.0
    _, Fn, Ft, _ = smooth_accelerations(system, T, mode, v)
    mode.ref_n[:], mode.ref_t[:] = ref
    for i, (dj, dl) in ties.items():
        gamma = mode.edge[i] @ Ft[system.tangent_rows[i]]
        if hint.get(i) == "leave" or abs(gamma) > math.sin(math.pi / system.facets[i]) * system.friction[i] * Fn[i] * (1 + 1e-9):
            mode.slide[i], mode.edge[i] = (dj if gamma > 0 else dl), None


def edge_rows(system, T, mode):
    """``eᵀW_t`` of every contact sliding along a bisector, shape ``(m, nv)``: the speeds an event projects on
    ``eᵀṡ = 0``, so the integrator's drift off the bisector never reaches the next event's choice of vertex."""
    rows = [mode.edge[i] @ T["Wt"][system.tangent_rows[i]] for i in range(system.nc) if mode.active[i] and mode.edge[i] is not None]
    return np.array(rows).reshape(-1, T["Wt"].shape[1])


def onset_mode(system, i, ft):
    """``(f̂, pair)`` of a contact starting to slide: ``f̂`` along its sticking force ``ft``, on a polygon the vertex
    it points at, or where it lies on the side between two vertices (as a force that reached the cone's margin
    does), their midpoint with ``pair = (d_j, d_l)``: the slip starts along their bisector (the facets' LCP has
    both ``β`` positive, so both vertices dissipate alike); else ``pair`` is None."""
    if ft.size == 1:
        return (np.sign(ft) if ft[0] != 0 else np.array([-1.0])), None
    if system.cone[i] == "circular":
        return (ft / np.linalg.norm(ft) if np.linalg.norm(ft) > 0 else np.array([1.0, 0.0])), None
    d, neighbours = polygon_neighbours(system, i, ft)
    if np.linalg.norm(ft) == 0.0:
        return d, None
    n = max(neighbours, key=lambda n: n @ ft)  # the other vertex of the side ft points at
    angle = math.atan2(d[0] * ft[1] - d[1] * ft[0], d @ ft)
    if abs(angle) <= 1e-9:
        return d, None
    return 0.5 * (d + n), (d, n)


def tangential_roots(system, mode, i, T0, v0, solve, add):
    """Start of slip (the cone's margin), end of slip (the speed along the initial sliding direction) and, on a
    polygon, the turn to a neighbouring vertex (another direction dissipates more)."""
    nq, rows, mu = system.nq, system.tangent_rows[i], system.friction
    if mode.stick[i] and mu[i] > 0:
        add(lambda t, y: cone_margin(mu[i], solve(t, y)[2][i], solve(t, y)[3][rows], system.cone[i], system.facets[i]), i, "slip")
    elif mode.slide[i] is not None:
        along = -friction_direction(system, mode, i, v0, T0["Wt"])
        along = along / np.linalg.norm(along)
        add(lambda t, y: along @ (solve(t, y)[0]["Wt"][rows] @ y[nq:]), i, "stop")
        if rows.size == 2 and mode.edge[i] is not None:  # the force reaches a vertex: the speed leaves the bisector
            e, half = mode.edge[i], math.sin(math.pi / system.facets[i])
            add(lambda t, y: mu[i] * half * solve(t, y)[2][i] - abs(e @ solve(t, y)[3][rows]), i, "leave")
        elif rows.size == 2 and not mode.follow[i]:  # another vertex dissipates more once the speed crosses a bisector
            d, neighbours = polygon_neighbours(system, i, mode.slide[i])
            for n in neighbours:
                add(lambda t, y, n=n: (n - d) @ (solve(t, y)[0]["Wt"][rows] @ y[nq:]), i, "turn")


__all__ = ["bisector_vertices", "central_forces", "slide_on_edges", "edge_rows", "onset_mode", "tangential_roots"]
