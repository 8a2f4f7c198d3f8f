"""Guesses of the contact-implicit collocation variables: forces and impulses of a warm start, bounces seeded.

Called by the ``guess`` hooks of :class:`colloc.transcription.contacts.ContactRows` and
:class:`colloc.transcription.contact_vi.ContactVIRows` (:mod:`colloc.transcription.extension`): they read the
contact handling's own data and fill the layout's guesses only.
"""
from __future__ import annotations

import numpy as np

from .friction3d import facet_directions, variable_slices


def fill_contact_guess(rows, lay, columns, time, force_times):
    """Contact forces of a warm start, sampled at ``force_times`` (the times of the force blocks' columns);
    impulses moved to the nearest impact point (collocation).

    Used by both contact-implicit transcriptions: collocation samples each interval's force at the interval's
    midpoint (or a force at every grid point), midpoint-vi at its nodes.  An impulse ``P`` of the warm start
    becomes ``Π = P/h̄`` at the new impact point nearest in time, and the pre-impact speeds there
    ``v⁻ = v⁺ − M⁻¹(W_nᵀP)`` from the state guessed at that point.
    """
    for i, c in enumerate(rows.contacts):
        if f"{c.name}.normal_force" in columns:
            lay["cn"].guess[i] = np.maximum(np.interp(force_times, time, columns[f"{c.name}.normal_force"]), 0.0)
        if i in rows.planar and f"{c.name}.friction_force" in columns:
            j = rows.planar.index(i)
            f = np.interp(force_times, time, columns[f"{c.name}.friction_force"])
            lay["cbp"].guess[j], lay["cbm"].guess[j] = np.maximum(f, 0.0), np.maximum(-f, 0.0)
    if rows.spatial and "cf3" in lay:
        _spatial_friction(rows, lay, columns, time, force_times)
    if rows.spatial and "cg3" in lay and getattr(rows, "grid", None) is not None:  # midpoint-vi keeps its own guess
        _slip_speeds(rows, lay)
    if "pn" in lay:
        _move_impulses(rows, lay, columns, time)


def _spatial_friction(rows, lay, columns, time, force_times):
    """3-D friction forces of a warm start (``NAME.friction_force_1``, ``_2`` in tangent coordinates) as the cone's
    variables: the components of a circular cone; on a polyhedral one each facet's share ``max(0, d_jᵀF)``, scaled so
    that the facets add up to ``F`` along it (exactly ``F`` for 4 facets).  A standing robot's guess then holds its
    weight with its splayed feet from the first iteration."""
    for c, sl in zip(rows.spatial_contacts, variable_slices(rows.spatial_contacts)):
        names = (f"{c.name}.friction_force_1", f"{c.name}.friction_force_2")
        if not all(n in columns for n in names):
            continue
        F = np.array([np.interp(force_times, time, columns[n]) for n in names])  # (2, m)
        if c.cone == "circular":
            lay["cf3"].guess[sl] = F
            continue
        D = facet_directions(c.facets)
        beta = np.maximum(D @ F, 0.0)
        along = np.einsum("im,im->m", D.T @ beta, F)  # the facets' sum projected on F, times |F|
        norm2 = np.einsum("im,im->m", F, F)
        lay["cf3"].guess[sl] = beta * np.divide(norm2, along, out=np.zeros_like(norm2), where=along > 0)


def _slip_speeds(rows, lay):
    """Each 3-D contact's sliding speed ``γ`` at every grid point from the state guessed there: ``γ = max_j −d_jᵀṡ``
    on a polyhedral cone, ``|ṡ|`` on a circular one (at least 0).  A warm start's slip rows ``γ + d_jᵀṡ ≥ 0`` then hold
    at its first point; with ``γ = 0`` a Solo12 stride's swinging feet broke them by up to 0.86 m/s and IPOPT began by
    restoring feasibility, leaving the warm start's solution behind."""
    ng = rows.grid.num_points
    p = lay["p"].guess if lay["p"].guess.size else np.zeros((0, 1))
    sd = np.array(rows.spatial_point.map(ng)(lay["x"].guess, p, np.zeros((rows.force_map.shape[0], ng)))[2])
    for r, c in enumerate(rows.spatial_contacts):
        s = sd[2 * r:2 * r + 2]
        speed = np.linalg.norm(s, axis=0) if c.cone == "circular" else np.max(-facet_directions(c.facets) @ s, axis=0)
        lay["cg3"].guess[r] = np.maximum(speed, 0.0)


def _move_impulses(rows, lay, columns, time):
    """The warm start's impulses at the nearest impact points, with the pre-impact speeds they imply."""
    grid = rows.grid
    ip = rows.impact_points
    if not ip.size:
        return
    span = time[-1] - time[0]
    t_ip, hbar, hit = time[0] + span * grid.tau[ip], span / grid.num_intervals, set()
    for i, c in enumerate(rows.contacts):
        P = columns.get(f"{c.name}.impulse")
        for k in (np.flatnonzero(P > 0) if P is not None else []):
            m = int(np.argmin(np.abs(t_ip - time[k])))
            lay["pn"].guess[i, m] = P[k] / hbar
            hit.add(m)
    x, p = lay["x"].guess, lay["p"].guess[:, 0]
    nf = len(rows.planar)
    for m in hit:
        lay["vm"].guess[:, m] = np.asarray(rows.pre_impact(x[:, ip[m]], p, lay["pn"].guess[:, m] * hbar, np.zeros(nf), np.zeros(nf))).ravel()


#: An impact is seeded where the guessed normal speed turns and the gap is smallest, if below this fraction of its largest.
SEED_GAP = 0.5


def seed_impacts(rows, lay, duration):
    """Impulses where the guess bounces, for a guess that has none.

    For every contact with restitution, at the interior mesh point where its guessed normal speed turns from
    closing (at the grid point before) to opening and its gap is smallest (at most ``SEED_GAP`` of its
    largest): the impulse of Newton's law that gives the guessed opening speed ``ẏ⁺``
    (``ẏ⁻ = −ẏ⁺/e``), and the pre-impact speeds it implies.  Without it the homotopy starts with no impulse
    anywhere, where Newton's law admits none but the exact one, and the ball ends where it never bounces.
    """
    ip = rows.impact_points
    if not ip.size:
        return
    x, p = lay["x"].guess, lay["p"].guess[:, 0]
    nc, nf, ng = len(rows.contacts), len(rows.frictional), x.shape[1]
    no_friction, no_planar = np.zeros(nf), np.zeros(len(rows.planar))
    _, gaps, yd, _ = (np.asarray(a) for a in rows.point.map(ng)(x, p, np.zeros((nc, ng)), np.zeros((nf, ng)), np.zeros((nf, ng))))
    hbar = duration / rows.grid.num_intervals
    for i, c in enumerate(rows.contacts):
        if c.restitution <= 0 or (lay["pn"].guess[i] > 0).any():  # no bounce, or the warm start's own impulses
            continue
        turns = [m for m, k in enumerate(ip) if yd[i, k - 1] < 0 < yd[i, k]]
        if not turns:
            continue
        m = min(turns, key=lambda m: gaps[i, ip[m]])
        k = ip[m]
        if gaps[i, k] > SEED_GAP * float(np.max(gaps[i])):
            continue
        unit = np.zeros(nc)
        unit[i] = 1.0
        # the normal speed a unit impulse adds: W_n M⁻¹ W_nᵀ
        xs = x[:, k].copy()
        xs[rows.speed_rows] = x[rows.speed_rows, k] - np.asarray(rows.pre_impact(x[:, k], p, unit, no_planar, no_planar)).ravel()
        per_unit = float(np.asarray(rows.point(xs, p, unit, no_friction, no_friction)[2])[i, 0])
        if per_unit <= 0:
            continue
        P = (yd[i, k] + yd[i, k] / c.restitution) / per_unit
        lay["pn"].guess[i, m] = P / hbar
        lay["vm"].guess[:, m] = np.asarray(rows.pre_impact(x[:, k], p, P * unit, no_planar, no_planar)).ravel()
