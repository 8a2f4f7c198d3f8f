"""Forces and impulses of a set of contacts: the LCP with Coulomb cones, a mode's force balance, the projection.

Each contact ``i`` has a normal row ``W_{n,i}`` (nv,) and ``n_i`` tangent rows
``T_i`` (n_i, nv), n_i = 0, 1 or 2.  In a contact problem it is

* ``free``: frictionless (a normal unknown only);
* ``stick``: Coulomb's cone with unknowns ``β_i ≥ 0`` along the cone's
  directions ``d_{ij}`` (rows of ``D_i``, in tangent coordinates) and the
  sliding rate ``λ_i`` (Stewart & Trinkle, IJNME 39 (1996) 2673; Anitescu &
  Potra, Nonlinear Dyn. 14 (1997) 231)::

      0 ≤ W_n ẍ + b_n               ⊥ P_n ≥ 0
      0 ≤ D_i (T_i ẍ + b_t) + λ_i 1 ⊥ β_i ≥ 0
      0 ≤ μ_i P_{n,i} − 1ᵀβ_i        ⊥ λ_i ≥ 0

  with ``ẍ`` the change of speed (impact) or acceleration made by the
  unknowns: ``ẍ = M⁻¹ Σ (W_nᵀ P_n + T_iᵀ D_iᵀ β_i)``.  A planar cone has
  ``D = [1; −1]``; a polyhedral one the ``k`` vertices of the regular polygon;
  a *circular* cone is solved as the polygon whose vertex follows the
  tangential force, re-solved until it stops turning, so the answer lies on
  the circle itself (the polygon's vertices do);
* ``slide``: the friction force ``μ F_n f̂`` along a known unit direction ``f̂``
  (tangent coordinates) rides on the normal unknown.

It is not symmetric: Lemke's method solves it (:mod:`colloc.simulate.lcp`); it ends
on a ray when no force satisfies the laws (Painlevé's paradox), which the
caller reports.

Redundant rows (a box on two corners, a table on four legs) make the forces
non-unique but not the motion: :func:`mode_forces` solves the force balance
of a mode by least squares, as the forces nearest to a reference (the LCP's
answer at the start of the mode), and :func:`project_speeds` projects the
speeds on the constraints with the same minimum-norm solve.

Legend: ``M`` mass matrix, ``W_n`` normal rows, ``T`` tangent rows, ``P``
impulses or forces, ``β`` facet unknowns, ``λ`` sliding rate, ``μ`` friction.
"""
from __future__ import annotations

import math

import numpy as np

from .lcp import LCPError, solve_lcp

RCOND = 1e-11  # singular values below this fraction of the largest are redundant rows


def facet_directions(num_tangents, facets, angle=0.0):
    """Cone directions in tangent coordinates: ``[[1], [−1]]`` in the plane, else ``k`` unit vectors from ``angle``."""
    if num_tangents == 1:
        return np.array([[1.0], [-1.0]])
    th = angle + 2 * np.pi * np.arange(facets) / facets
    return np.column_stack([np.cos(th), np.sin(th)])


def cone_margin(mu, fn, ft, cone, facets):
    """How far the tangential force ``ft`` lies inside the cone of ``μ fn`` (> 0 inside, 0 on it)."""
    if ft.size == 1 or cone == "circular":
        return mu * fn - float(np.linalg.norm(ft))
    th = (2 * np.arange(facets) + 1) * np.pi / facets  # outward normals of the polygon's sides
    return mu * fn * math.cos(math.pi / facets) - float(np.max(np.cos(th) * ft[0] + np.sin(th) * ft[1]))


def slide_direction(speed, cone, facets):
    """Unit friction direction ``f̂`` (tangent coordinates) of a contact sliding at ``speed``: maximal dissipation."""
    if speed.size == 1:
        return -np.sign(speed)
    if cone == "circular":
        return -speed / np.linalg.norm(speed)
    D = facet_directions(2, facets)
    return D[int(np.argmin(D @ speed))]


class ContactRows:
    """The rows of some contacts at one point: ``Wn`` (k, nv), ``T`` list of (n_i, nv), ``mu``, cones."""

    def __init__(self, Wn, T, mu, cone, facets):
        self.Wn, self.T, self.mu, self.cone, self.facets = Wn, T, np.asarray(mu, float), cone, facets

    def __len__(self):
        return self.Wn.shape[0]


def solve_contacts(Minv, rows, bn, bt, kinds, slide):
    """Solve the contact LCP (module docstring).

    Parameters
    ----------
    Minv : ndarray (nv, nv)
        ``M⁻¹`` (or the inverse restricted to bilateral constraints).
    rows : ContactRows
    bn : ndarray (k,)
        Normal terms without contact forces (``(1 + e) ẏ⁻`` or the free ``ÿ``).
    bt : list of ndarray (n_i,)
        Tangential terms likewise.
    kinds : list of str
        ``free``, ``stick`` or ``slide`` per contact.
    slide : list of ndarray or None
        ``f̂`` per sliding contact.

    Returns
    -------
    (ndarray (k,), list of ndarray (n_i,), ndarray (k,))
        ``P_n``, ``P_t`` per contact, ``λ`` (> 0: the contact slides).

    Raises
    ------
    LCPError
        The LCP has no solution Lemke's method reaches.
    """
    angles = {i: math.atan2(-bt[i][1], -bt[i][0]) for i in range(len(rows))
              if kinds[i] == "stick" and rows.T[i].shape[0] == 2 and rows.cone[i] == "circular"}
    for _ in range(60):
        Pn, Pt, slip = _solve_once(Minv, rows, bn, bt, kinds, slide, angles)
        turned = 0.0
        for i in angles:
            if np.linalg.norm(Pt[i]) > 1e-14 * max(1.0, abs(Pn[i])):
                new = math.atan2(Pt[i][1], Pt[i][0])
                turned = max(turned, abs(math.remainder(new - angles[i], 2 * math.pi)))
                angles[i] = new
        if turned <= 1e-13:
            break
    return Pn, Pt, slip


def _solve_once(Minv, rows, bn, bt, kinds, slide, angles):
    k = len(rows)
    G = [rows.Wn[i] + (rows.mu[i] * slide[i] @ rows.T[i] if kinds[i] == "slide" else 0.0) for i in range(k)]
    blocks = []  # (contact, facet directions, first β column, λ column)
    stick = [i for i in range(k) if kinds[i] == "stick" and rows.mu[i] > 0 and rows.T[i].shape[0]]
    for i in stick:
        D = facet_directions(rows.T[i].shape[0], rows.facets[i], angles.get(i, 0.0))
        blocks.append((i, D, len(G)))
        G.extend(D @ rows.T[i])
    nz = len(G)
    n = nz + len(blocks)
    G = np.array(G).reshape(nz, -1)
    MG = Minv @ G.T
    A, b = np.zeros((n, n)), np.zeros(n)
    A[:k, :nz], b[:k] = rows.Wn @ MG, bn
    for m, (i, D, c) in enumerate(blocks):
        sl, lam = slice(c, c + D.shape[0]), nz + m
        A[sl, :nz], A[sl, lam], b[sl] = D @ rows.T[i] @ MG, 1.0, D @ bt[i]
        A[lam, i], A[lam, sl] = rows.mu[i], -1.0
    z = _solve_regularised(A, b)
    Pn = z[:k]
    Pt = [np.zeros(rows.T[i].shape[0]) for i in range(k)]
    slip = np.zeros(k)
    for i in range(k):
        if kinds[i] == "slide":
            Pt[i] = rows.mu[i] * Pn[i] * slide[i]
    for m, (i, D, c) in enumerate(blocks):
        Pt[i] = D.T @ z[c:c + D.shape[0]]
        slip[i] = z[nz + m]
    return Pn, Pt, slip


def _solve_regularised(A, b):
    """Lemke's answer; where redundant rows make the LCP so degenerate that Lemke ends on a ray, the answer of
    ``A + εI`` for growing ε (Tikhonov: it tends to a solution of the original LCP as ε → 0; a problem without
    solution, such as Painlevé's, keeps its ray)."""
    try:
        return solve_lcp(A, b)
    except LCPError:
        scale = max(1.0, np.abs(A).max(initial=0.0))
        for eps in (1e-13, 1e-11, 1e-9, 1e-7):
            try:
                return solve_lcp(A + eps * scale * np.eye(b.size), b)
            except LCPError:
                continue
        raise


def mode_forces(M, f, H, C, d, ref):
    """Accelerations and multipliers of a mode: ``M a = f + Hᵀλ``, ``C a + d = 0``.

    ``H`` (m, nv) are the directions of the multipliers, ``C`` (m, nv) the
    constrained rows (``H = C`` but for sliding friction), ``d`` their drifts.
    Where the rows are redundant, ``λ`` is the solution nearest to ``ref`` (the
    motion does not depend on the choice).  Returns ``(a (nv,), λ (m,))``.
    """
    X = np.linalg.solve(M, np.column_stack([f, H.T]))
    a0, MH = X[:, 0], X[:, 1:]
    if not C.shape[0]:
        return a0, np.zeros(0)
    A = C @ MH
    r = -d - C @ a0 - A @ ref
    lam = ref + np.linalg.lstsq(A, r, rcond=RCOND)[0]
    return a0 + MH @ lam, lam


def project_speeds(v, Minv, C, c):
    """The speeds nearest ``v`` in the metric of ``M`` with ``C v + c = 0`` (minimum-norm where ``C`` is redundant)."""
    if not C.shape[0]:
        return v
    MC = Minv @ C.T
    return v - MC @ np.linalg.lstsq(C @ MC, C @ v + c, rcond=RCOND)[0]


def stopping_impulse(Minv, rows, v):
    """The impulse of an impact without collision (Génot & Brogliato, Eur. J. Mech. A 18 (1999) 653): the closed
    contacts of ``rows`` stop, normal and tangential (perfectly plastic, sticking), by the impulse nearest zero in
    the metric of ``M⁻¹`` that stops them; a contact that would need a pulling normal impulse is left to separate.

    Returns ``(P_n (k,), [P_t (n_i,)], Δv (nv,))``, or None where a contact's impulse leaves its friction cone:
    sticking cannot be reached by one impulse, and Painlevé's paradox stands."""
    k = len(rows)
    keep = list(range(k))
    while keep:
        C = np.vstack([rows.Wn[keep]] + [rows.T[i] for i in keep if rows.mu[i] > 0])
        MC = Minv @ C.T
        P = -np.linalg.lstsq(C @ MC, C @ v, rcond=RCOND)[0]
        tol = 1e-9 * max(1e-300, np.abs(P).max(initial=0.0))
        worst = int(np.argmin(P[:len(keep)]))
        if P[worst] >= -tol:
            break
        keep.pop(worst)  # a contact pulled back to the ground separates instead
    else:
        return None
    Pn, Pt = np.zeros(k), [np.zeros(rows.T[i].shape[0]) for i in range(k)]
    Pn[keep], row = P[:len(keep)], len(keep)
    for i in keep:
        if rows.mu[i] > 0:
            Pt[i], row = P[row:row + rows.T[i].shape[0]], row + rows.T[i].shape[0]
        if Pt[i].size and cone_margin(rows.mu[i], Pn[i], Pt[i], rows.cone[i], rows.facets[i]) < -tol:
            return None
    return Pn, Pt, MC @ P


def constrained_inverse(M, B):
    """``M⁻¹ − M⁻¹Bᵀ(BM⁻¹Bᵀ)⁺BM⁻¹``: the response to an impulse of a body held by the bilateral rows ``B``."""
    Minv = np.linalg.inv(M)
    if not B.shape[0]:
        return Minv
    MB = Minv @ B.T
    return Minv - MB @ np.linalg.pinv(B @ MB, rcond=RCOND) @ MB.T


__all__ = ["ContactRows", "solve_contacts", "mode_forces", "project_speeds", "stopping_impulse", "constrained_inverse",
           "facet_directions", "cone_margin", "slide_direction"]
