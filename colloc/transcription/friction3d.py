"""Coulomb friction of contacts with two tangents (3-D) in contact-implicit transcriptions.

A contact declared with two tangent rows ``W_t`` (2, nv) (``tangent=[s1, s2]``
or :meth:`colloc.Multibody.point_contact`) has its friction force ``F_t`` in
tangent coordinates; its generalised force is ``W_tᵀ F_t``.  Two cones:

* ``"polyhedral"`` with ``k`` facets: ``F_t = Σ_j β_j d_j``,
  ``d_j = (cos 2πj/k, sin 2πj/k)`` (the simulator's directions,
  :func:`colloc.simulate.contact_forces.facet_directions`), ``β_j ≥ 0``,
  and maximal dissipation by Stewart & Trinkle (IJNME 39 (1996) 2673) and
  Posa, Cantu & Tedrake (IJRR 33 (2014) 69), at every point ``k`` where the
  force acts, with a sliding-speed variable ``γ_k ≥ 0``::

      μλ − Σ_j β_j ≥ 0,   γ_k + d_jᵀ ṡ_k ≥ 0,
      (μλ − Σ_j β_j) γ_k ≤ ε,   (γ_k + d_jᵀ ṡ_k) β_j ≤ ε;

  a facet pushes only if it opposes the sliding most (``γ_k = max_j −d_jᵀṡ_k``),
  and the cone is saturated wherever the contact slides.
* ``"circular"`` (the second-order cone, smooth): ``F_t = f`` free, with
  ``μλ − ‖f‖ ≥ 0``, ``γ_k − ‖ṡ_k‖ ≥ 0`` and ``μλ γ_k + fᵀṡ_k ≤ ε``.
  Since ``fᵀṡ ≥ −|f||ṡ| ≥ −μλγ`` the last product is never negative, and
  zero only if the friction dissipates all the cone allows:
  ``f = −μλ ṡ/|ṡ|`` while sliding (``γ_k = |ṡ_k|``), anywhere in the disc
  while sticking (``ṡ = 0``, ``γ = 0``).  It is the scalar part of the cone
  complementarity ``(μλ, f) ∘ (γ, ṡ) = 0`` of Howell, Le Cleac'h et al.
  (Dojo, arXiv:2203.00806), whose vector part ``μλṡ + γf = 0`` it
  implies at ``ε = 0``; so does it ``(μλ − ‖f‖)γ = 0``, the polyhedral cone's
  product, which is not added: with it (and the cuts below) the midpoint-vi oblique throw of
  ``tests/test_contact_oblique_throw.py`` ended locally infeasible at ``ε = 1e-5``
  (10, 20 and 40 steps), without it solves.  ``‖·‖`` is :func:`smooth_norm`,
  ``|v|²/√(|v|² + δ²)`` (δ = 1e-4 in force and in speed units): the squared rows
  ``(μλ)² − |f|² ≥ 0``, ``γ² − |ṡ|² ≥ 0`` have no gradient at all at the apex
  (a contact in flight, ``λ = f = 0``), and from there IPOPT failed a throw
  landing at t_f (restoration); ``√(|v|²+δ²) − δ``
  (convex) lets ``|f|`` exceed ``μλ`` by ``δ`` everywhere, which turns the
  sliding force by ``√(2δ/μλ)``.  This one errs by ``δ²/(2|v|)`` away from
  0 (1e-8 N for a force of 0.5 N): the oblique push of
  ``tests/test_contact3d.py`` keeps its force against the motion to 1e-4 rad.
  At the apex its gradient in ``f`` vanishes too, so a Newton step does not see
  that a force needs ``λ``, and for ``μλ ≪ δ`` it admits ``|f| ≈ √(μλδ) ≫ μλ``;
  four linear cuts ``μλ + d_jᵀf ≥ 0`` (``|f₁|, |f₂| ≤ μλ``: the square about
  the disc, valid for the exact cone; the outer polyhedral approximation of
  Ben-Tal & Nemirovski, Math. Oper. Res. 26 (2001) 193) bound the force by
  ``λ`` to first order there.  Measured on the midpoint-vi throw from its
  default guess: without them IPOPT's first relaxation (ε = 0.1) stalled at its
  iteration limit at 10, 20 and 40 steps; with them the homotopy solves in
  200, 345 and 911 iterations and the speed at T is within 2e-8 of the closed
  form (the released box of ``tests/test_contact3d.py``, collocation: 3701
  iterations before, 3250 with).  The same cuts on the speed,
  ``γ + d_jᵀṡ ≥ 0`` (``speed_cuts``), give the slip row a gradient where the
  contact stops: midpoint-vi uses them (a thrown ball sliding to rest stalled
  at IPOPT's iteration limit without them; the throw above took 191, 247, 313
  iterations with them); collocation does not (its released box, whose
  sticking interval makes them all active at once, ended infeasible).  (A first form,
  ``|μλ ṡ_k + γ_k f| ≤ ε`` with ``((μλ)² − |f|²)γ_k ≤ ε``, stuck at a local
  optimum that does not move for one interval, 3.936 against 3.424722, on
  the oblique push of ``tests/test_contact3d.py``: from ``γ = f = 0`` its
  bilinear rows hold a slide back.)

With one force per mesh interval (collocation) the rows at every grid point of
the interval use that interval's force, as the planar rows of
:mod:`colloc.transcription.contacts` do: the interval sticks, or slides along
one direction (a mode change falls on a mesh point).

Legend: ``lam`` normal force (or impulse), ``beta`` facet forces, ``f`` the
circular cone's force, ``gamma`` sliding speed, ``sd`` tangential speed (2 rows).
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from .nlp import Rows

COMPLEMENTARITY = "complementarity"


def facet_directions(facets) -> np.ndarray:
    """``D`` (facets, 2): the unit directions ``d_j`` of a polyhedral cone in tangent coordinates."""
    th = 2 * np.pi * np.arange(facets) / facets
    return np.column_stack([np.cos(th), np.sin(th)])


def force_names(contact, prefix="friction"):
    """Names of a 3-D contact's friction variables: its facets, or the circular cone's two components."""
    if contact.cone == "circular":
        return [f"{contact.name}.{prefix}_force_1", f"{contact.name}.{prefix}_force_2"]
    return [f"{contact.name}.{prefix}_facet_{j + 1}" for j in range(contact.facets)]


def force_lower(contact) -> float:
    """Lower bound of the friction variables: facets are ≥ 0, the circular cone's components are free."""
    return -np.inf if contact.cone == "circular" else 0.0


def force_map(contacts) -> np.ndarray:
    """``B`` (2 num_contacts, num_variables): the friction forces in tangent coordinates from the variables."""
    sizes = [2 if c.cone == "circular" else c.facets for c in contacts]
    B = np.zeros((2 * len(contacts), sum(sizes)))
    col = 0
    for r, (c, m) in enumerate(zip(contacts, sizes)):
        B[2 * r:2 * r + 2, col:col + m] = np.eye(2) if c.cone == "circular" else facet_directions(c.facets).T
        col += m
    return B


def variable_slices(contacts):
    """Row slice of each contact's variables in the stacked block."""
    out, col = [], 0
    for c in contacts:
        m = 2 if c.cone == "circular" else c.facets
        out.append(slice(col, col + m))
        col += m
    return out


def cone_rows(rows: Rows, contacts, eps, lam, force, gamma, sd, points, cone_points, tag="", speed_cuts=0):
    """Rows of the 3-D cones and maximal dissipation (module docstring) for ``contacts``.

    Parameters
    ----------
    lam : MX (num_contacts, m)
        Normal force (or impulse) of each contact, one column per force.
    force : MX (num_variables, m)
        The friction variables (facets or components), stacked contact by contact.
    gamma, sd, points : lists over the nodes where the forces act
        ``γ`` (num_contacts, m), ``ṡ`` (2 num_contacts, m) and the grid indices (m,) of each node.
    cone_points : array (m,)
        Grid indices labelling the rows of the cone itself.
    speed_cuts : int
        Circular cone: the number of linear cuts ``γ + d_jᵀṡ ≥ 0`` of its slip rows (module docstring), 0 for none.
    """
    for r, (c, sl) in enumerate(zip(contacts, variable_slices(contacts))):
        b = force[sl, :]
        lam_c = c.friction * lam[r, :]
        name = lambda suffix: [f"{c.name}.{tag}{suffix}"]  # noqa: E731
        if c.cone == "circular":
            cone = lam_c - smooth_norm(b, FORCE_SMOOTHING)
        else:
            cone = lam_c - ca.sum1(b)
        rows.add("friction", name("cone"), cone, cone_points, 0.0, np.inf)
        if c.cone == "circular":
            cut = ca.repmat(lam_c, FORCE_CUTS, 1) + ca.mtimes(ca.DM(facet_directions(FORCE_CUTS)), b)
            rows.add("friction", [f"{c.name}.{tag}cone_cut_{i}" for i in range(1, FORCE_CUTS + 1)], cut, cone_points, 0.0, np.inf)
        for j, (g, s, pts) in enumerate(zip(gamma, sd, points)):
            gj, sj = g[r, :], s[2 * r:2 * r + 2, :]
            at = f"@{j}" if len(points) > 1 else ""
            if c.cone == "circular":
                rows.add("friction", name(f"slip{at}"), gj - smooth_norm(sj, SPEED_SMOOTHING), pts, 0.0, np.inf)
                if speed_cuts:
                    cut = ca.repmat(gj, speed_cuts, 1) + ca.mtimes(ca.DM(facet_directions(speed_cuts)), sj)
                    rows.add("friction", [f"{c.name}.{tag}slip_cut_{i}{at}" for i in range(1, speed_cuts + 1)], cut, pts, 0.0, np.inf)
                rows.add(COMPLEMENTARITY, name(f"sliding_speed{at}*cone+speed{at}*friction"), lam_c * gj + ca.sum1(sj * b), pts, -np.inf, eps)
                continue
            rows.add(COMPLEMENTARITY, name(f"cone*sliding_speed{at}"), cone * gj, pts, -np.inf, eps)
            slip = ca.repmat(gj, c.facets, 1) + ca.mtimes(ca.DM(facet_directions(c.facets)), sj)
            facets = range(1, c.facets + 1)
            rows.add("friction", [f"{c.name}.{tag}slip_{i}{at}" for i in facets], slip, pts, 0.0, np.inf)
            rows.add(COMPLEMENTARITY, [f"{c.name}.{tag}slip_{i}{at}*facet_{i}" for i in facets], slip * b, pts, -np.inf, eps)


#: Smoothing δ of the circular cone's norms (module docstring): of the friction force (force units) and of the
#: tangential speed (speed units).
FORCE_SMOOTHING, SPEED_SMOOTHING = 1e-4, 1e-4
#: Directions ``d_j`` (:func:`facet_directions`) of the circular cone's linear cuts ``μλ + d_jᵀf ≥ 0`` (module docstring).
FORCE_CUTS = 4


def smooth_norm(v, delta):
    """``|v|²/√(|v|² + δ²)`` of each column of ``v``: ``|v|`` less ``δ²/(2|v|)`` away from 0, ``|v|²/δ`` near it.

    Unlike ``|v|`` it is smooth at 0 and, unlike ``|v|²``, its rows keep a gradient there in the other variable
    (``μλ − ‖f‖`` in ``λ``), so the apex of the cone is not a degenerate point of the NLP."""
    n2 = ca.sum1(v ** 2)
    return n2 / ca.sqrt(n2 + delta ** 2)


def split_columns(contacts, values, prefix):
    """Trajectory columns ``CONTACT.{prefix}_1``, ``_2`` (tangent coordinates) from the stacked variables (numeric)."""
    F = force_map(contacts) @ np.asarray(values, float)
    return {f"{c.name}.{prefix}_{i + 1}": F[2 * r + i] for r, c in enumerate(contacts) for i in range(2)}
