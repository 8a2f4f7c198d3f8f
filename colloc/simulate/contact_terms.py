"""The contact terms ``colloc verify`` needs of a contact-implicit file, built from the model's contacts alone.

A file holds per contact its normal force ``NAME.normal_force`` and impulse ``NAME.impulse`` and, when it
has friction, its tangential force and impulse in tangent coordinates: one column for a planar contact
(``NAME.friction_force``, ``NAME.friction_impulse``), two for a contact in 3-D (``NAME.friction_force_1``,
``_2``; ``NAME.friction_impulse_1``, ``_2``), whatever variables the transcription solved for (facets of a
polyhedral cone or the components of a circular one).  From the contacts' gaps and Jacobians
(:class:`colloc.model.contact.Contact`) and the bodies' mass matrices these terms give

* the generalised force ``Σ W_nᵀλ + W_tᵀf`` in the model's residual rows,
* the gaps, normal speeds ``ẏ = W_n v`` and sliding speeds ``ṡ = W_t v``,
* the pre-impact speeds ``v⁻ = v⁺ − M⁻¹(W_nᵀP + W_tᵀP_t)`` of an impulse,
* the friction cone's excess: ``|f| − μλ`` (planar and circular), or for the ``k``-facet polygon inscribed in
  the circle the largest ``n_jᵀf − μλ cos(π/k)``, ``n_j`` the unit normals of its edges.

Legend: ``lam`` normal force, ``ft`` tangential forces (one row per tangent), ``P`` impulses.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from ..model.contact import gaps_and_speeds, generalized_force
from ..transcription.contacts import contact_bodies


class ContactTerms:
    """The contact terms of ``problem``'s model (module doc).

    Attributes
    ----------
    contacts : list of Contact
    frictional : list of int
        Indices (into ``contacts``) of the contacts with friction and a tangent.
    speed_rows : list of int
        State indices of the contacting bodies' speeds.
    point : casadi.Function
        ``(x, p, lam, ft) -> (force in the residual rows, gap, ẏ, ṡ)``, ``ft`` the frictional contacts'
        tangent rows stacked (1 or 2 each).
    pre_impact : casadi.Function
        ``(x⁺, p, P, P_t) -> v⁻`` at ``speed_rows``.
    """

    def __init__(self, problem):
        from ..transcription import make_options, point_function

        model = problem.model
        _, meta = point_function(problem, make_options())
        res_names = list(meta["res_names"])
        state_names = self.state_names = [s.name for s in model.states]
        bodies = [b for b, _ in contact_bodies(model)]
        self.contacts = [c for _, cs in contact_bodies(model) for c in cs]
        self.frictional = [i for i, c in enumerate(self.contacts) if c.friction > 0 and c.num_tangents]
        self.tangents = [self.contacts[i].num_tangents for i in self.frictional]
        self.speed_rows = [state_names.index(model.lookup(s).name) for b in bodies for s in b.speeds]
        self.coordinate_rows = [state_names.index(model.lookup(s).name) for b in bodies for s in b.coordinates]
        x, p = model.vector("state"), model.vector("parameter")
        nc, nt = len(self.contacts), sum(self.tangents)
        lam, ft = ca.SX.sym("lam", nc), ca.SX.sym("ft", nt)
        offsets = np.concatenate([[0], np.cumsum(self.tangents)]).astype(int)
        force = ca.SX.zeros(len(res_names), 1)
        before = []
        for b in bodies:
            gen = generalized_force(b, self.contacts, lam,
                                    {i: ft[offsets[r]:offsets[r + 1]] for r, i in enumerate(self.frictional)})
            rows = [res_names.index(model.lookup(s).name) for s in b.speeds]
            force[rows] = force[rows] + gen
            before.append(b.v - ca.solve(b.equations().mass_matrix, gen))
        gap, yd, sd = gaps_and_speeds(self.contacts, self.frictional)
        col = lambda e: ca.vertcat(*e) if e else ca.SX(0, 1)  # noqa: E731
        self.point = ca.Function("contact_terms", [x, p, lam, ft], [force, col(gap), col(yd), col(sd)])
        self.pre_impact = ca.Function("pre_impact", [x, p, lam, ft], [col(before)])

    @property
    def num_tangents(self) -> int:
        """Rows of ``ft``: the frictional contacts' tangents, stacked."""
        return sum(self.tangents)

    def friction_columns(self, kind="friction_force") -> list:
        """The file's column names of the tangential forces (``kind="friction_impulse"``: impulses), stacked as ``ft``."""
        out = []
        for i, n in zip(self.frictional, self.tangents):
            name = self.contacts[i].name
            out += [f"{name}.{kind}"] if n == 1 else [f"{name}.{kind}_{k + 1}" for k in range(n)]
        return out

    def gaps(self, X, P) -> np.ndarray:
        """``φ`` at every column of ``X``, shape ``(num_contacts, num_points)`` (numeric)."""
        nc, ng = len(self.contacts), X.shape[1]
        out = self.point.map(ng)(X, P, np.zeros((nc, ng)), np.zeros((self.num_tangents, ng)))[1]
        return np.asarray(out).reshape(nc, ng)

    def dissipation(self, X, P, lam, ft):
        """Maximal dissipation's residual ``r = max_{g ∈ cone}(−gᵀṡ) + fᵀṡ ≥ 0`` of each frictional contact at every
        column (zero where the friction opposes the sliding with the whole cone, or the contact sticks), and the
        force error ``δf`` it leaves, at most ``2μλ``.  Planar and circular cones: ``max = μλ|ṡ|``, and the
        file's ``f`` is within ``δf = r/|ṡ| + √(2μλ r/|ṡ|)`` of Coulomb's ``−μλ ṡ/|ṡ|`` (its shortfall along
        ``ṡ`` and its angle).  The ``k``-facet polygon: ``max = μλ max_j(−d_jᵀṡ)`` over its vertices, and
        ``δf = r / ((1 − cos 2π/k)|ṡ|)`` (where ``ṡ`` is normal to an edge the law leaves the force anywhere on
        it; the dynamics, not the cone, then decide it, and this bound does not cover it).

        Returns
        -------
        r, df : ndarray, shape ``(num_frictional, num_points)``
        """
        ng = X.shape[1]
        sd = np.asarray(self.point.map(ng)(X, P, lam, ft)[3]).reshape(self.num_tangents, ng)
        lam, ft = np.asarray(lam, float).reshape(-1, ng), np.asarray(ft, float).reshape(-1, ng)
        offsets = np.concatenate([[0], np.cumsum(self.tangents)]).astype(int)
        r, df = np.zeros((len(self.frictional), ng)), np.zeros((len(self.frictional), ng))
        for j, i in enumerate(self.frictional):
            s, f = sd[offsets[j]:offsets[j + 1]], ft[offsets[j]:offsets[j + 1]]
            c = self.contacts[i]
            mu_lam, speed = c.friction * np.abs(lam[i]), np.linalg.norm(s, axis=0)
            ratio = lambda: np.maximum(r[j], 0.0) / np.maximum(speed, 1e-300)  # noqa: E731
            if s.shape[0] == 2 and c.cone == "polyhedral":  # the polygon's support: the vertex against ṡ most
                th = 2 * np.pi * np.arange(c.facets) / c.facets
                r[j] = mu_lam * (-(np.column_stack([np.cos(th), np.sin(th)]) @ s)).max(axis=0) + np.sum(f * s, axis=0)
                # a unit of force moved off the best vertex loses at least (1 − cos 2π/k)|ṡ| of dissipation
                df[j] = np.minimum(ratio() / (1.0 - np.cos(2 * np.pi / c.facets)), 2.0 * mu_lam)
                continue
            r[j] = mu_lam * speed + np.sum(f * s, axis=0)
            df[j] = np.minimum(ratio() + np.sqrt(2.0 * mu_lam * ratio()), 2.0 * mu_lam)
        return r, df

    def relaxation_errors(self, traj, grid, P) -> np.ndarray:
        """Per interval of ``grid``, the speed error the relaxation of maximal dissipation leaves in the file ``traj``:
        ``h_k max_i Σ_j |(M⁻¹W_tᵀ)_ij| δf_j``, ``δf_j`` the largest force error over the interval's grid points that
        the file's own dissipation residual allows (:meth:`dissipation`; ``colloc verify``'s ``contact`` check bounds
        that residual, so a friction force turned away from the sliding is caught there and buys no budget),
        shape ``(num_intervals,)``."""
        out = np.zeros(grid.num_intervals)
        if not self.frictional:
            return out
        ng, nc, nt = traj.time.size, len(self.contacts), self.num_tangents
        X = np.array([traj[n] for n in self.state_names]).reshape(len(self.state_names), ng)
        lam = np.array([traj[f"{c.name}.normal_force"] for c in self.contacts]).reshape(nc, ng)
        ft = np.array([traj[n] for n in self.friction_columns()]).reshape(nt, ng)
        _, df = self.dissipation(X, P, lam, ft)
        owner = np.repeat(np.arange(len(self.frictional)), self.tangents)
        for k, (a, b) in enumerate(zip(grid.interval_starts, grid.interval_ends)):
            d = df[:, a:b + 1].max(axis=1)
            if not d.any():
                continue
            base = np.asarray(self.pre_impact(X[:, a], P, np.zeros(nc), np.zeros(nt))).ravel()
            A = np.column_stack([base - np.asarray(self.pre_impact(X[:, a], P, np.zeros(nc), np.eye(nt)[j])).ravel()
                                 for j in range(nt)])
            out[k] = (traj.time[b] - traj.time[a]) * float((np.abs(A) @ d[owner]).max(initial=0.0))
        return out

    def cone_excess(self, i, lam, ft) -> np.ndarray:
        """How far frictional contact ``i``'s tangential force ``ft`` (shape ``(tangents, m)``) leaves its cone
        of normal force ``lam`` (shape ``(m,)``): positive outside (module doc)."""
        c = self.contacts[i]
        ft, mu_lam = np.atleast_2d(np.asarray(ft, dtype=float)), c.friction * np.asarray(lam, dtype=float)
        if ft.shape[0] == 1 or c.cone == "circular":
            return np.linalg.norm(ft, axis=0) - mu_lam
        k = c.facets
        mid = 2 * np.pi * (np.arange(k) + 0.5) / k  # edge j joins the vertices at 2πj/k and 2π(j+1)/k
        normals = np.column_stack([np.cos(mid), np.sin(mid)])
        return (normals @ ft).max(axis=0) - mu_lam * np.cos(np.pi / k)


__all__ = ["ContactTerms"]
