"""Impacts on a :class:`~colloc.Multibody`: Newton's restitution law as a jump map.

At an impact the coordinates are continuous and the speeds jump from ``v⁻``
to ``v⁺`` under a contact impulse ``P``::

    M(q) (v⁺ − v⁻) = J(q)ᵀ P            (momentum balance, nv rows)
    J(q) v⁺ = −E J(q) v⁻                (Newton's restitution law, k rows)
    P_n ≥ 0                             (a contact pushes, never pulls)
    |P_t| ≤ μ P_n                       (optional friction cone, tangential rows)

The friction cone is, per tangential row, ``|P_{t,i}| ≤ μ P_n`` by default; with
two tangential rows (3-D) ``cone="polyhedral"`` takes the regular polygon
with ``facets`` vertices inscribed in the circle (rows ``n_jᵀP_t ≤ μ cos(π/k) P_n``,
``n_j`` its sides' normals) and ``cone="circular"`` the circle itself
(``|P_t|² ≤ μ² P_n²``).  With a cone, :meth:`Impact.velocity_after` applies
Coulomb's law at the impact: the tangential rows stick (``J_t v⁺ = −e J_t v⁻``)
if the impulse that needs lies in the cone, else the contact slides and the
tangential impulse is ``μ P_n`` against the sliding speed after the impact
(maximal dissipation; on a polygon at a vertex or along a side).

with ``J = ∂c/∂q · N(q)`` the Jacobian (with respect to the speeds) of the
contact point or gap ``c(q)`` (k rows), ``E = diag(e)`` the coefficients of
restitution (``e = 0`` plastic, ``e = 1`` elastic) and ``M`` the body's mass
matrix (:meth:`Multibody.equations`).  For a single contact the solution is
the classical ``v⁺ = v⁻ − M⁻¹Jᵀ(JM⁻¹Jᵀ)⁻¹(1 + e)Jv⁻`` (Siconos' Newton impact
law; Westervelt, Grizzle, Koditschek, IEEE TAC 48 (2003) for the biped case,
where the body must be the *unpinned* robot so the leaving foot carries no
impulse).

An :class:`Impact` only describes the law; ``MultiPhaseProblem.connect(...,
impact=...)`` places it between two phases with ``v⁺`` and ``P`` as NLP
variables.  Legend: ``q`` coordinates, ``v`` speeds, ``P`` impulse, ``J``
contact Jacobian, ``M`` mass matrix, ``e`` restitution, ``mu`` friction.
"""
from __future__ import annotations

import math

import casadi as ca
import numpy as np

from ..errors import ModelError
from .multibody import Multibody


class Impact:
    """Newton's restitution law for an impulsive contact on a multibody.

    Parameters
    ----------
    body : Multibody
        The mechanical system at the impact, with its equations of motion
        set.  It need not belong to any phase's model (a biped's impact uses
        the robot with both feet free).
    contact : casadi.SX, shape (k, 1)
        Position of the contact point (or the contact gap), a function of
        ``body.q`` and parameters only.
    restitution : float or sequence of float
        ``e`` per contact row (one number applies to every row), in [0, 1].
    normal : int, sequence of int or None
        Rows of ``contact`` along the surface normal: their impulse must be
        ``≥ 0``.  Default: every row.  The other rows are tangential
        (bilateral, or limited by ``friction``).
    friction : float, optional
        Coulomb coefficient μ: ``|P_t| ≤ μ P_n`` for every tangential row
        (needs exactly one normal row).
    name : str
        Used in row labels (``impact:<from>><to>/<name>.momentum[...]``).
    cone : None, "polyhedral" or "circular"
        The friction cone's shape (module docstring); None bounds each tangential row alone.
    facets : int
        Vertices of the polyhedral cone (≥ 3).
    """

    def __init__(self, body, contact, restitution=0.0, normal=None, friction=None, name="impact", cone=None, facets=4):
        if not isinstance(body, Multibody):
            raise ModelError(f"Impact `{name}` needs a colloc.Multibody; got {type(body).__name__}.")
        self.body, self.name = body, str(name)
        c = ca.SX(ca.vertcat(*contact)) if isinstance(contact, (list, tuple)) else ca.SX(contact)
        if c.is_empty() or c.size2() != 1:
            raise ModelError(f"The contact of impact `{name}` must be a scalar or a column; got shape {c.shape}.")
        own = {s.name() for s in ca.vertsplit(body.q)}
        params = {v.name for v in body.variables if v.kind == "parameter"}
        for s in ca.symvar(c):
            if s.name() not in own | params:
                raise ModelError(f"The contact of impact `{name}` uses `{s.name()}`; it may depend on the coordinates of `{body.name}` and its parameters only.")
        self.contact = c
        k = c.numel()
        e = np.broadcast_to(np.asarray(restitution, dtype=float), (k,)).copy() if np.ndim(restitution) == 0 or np.size(restitution) == k else None
        if e is None:
            raise ModelError(f"Impact `{name}` has {k} contact rows; give one restitution coefficient or {k}.")
        if np.isnan(e).any() or (e < 0).any() or (e > 1).any():
            raise ModelError(f"Restitution coefficients of impact `{name}` must lie in [0, 1]; got {list(e)}.")
        self.restitution = e
        rows = list(range(k)) if normal is None else [int(i) for i in np.atleast_1d(normal)]
        if any(i < 0 or i >= k for i in rows) or len(set(rows)) != len(rows):
            raise ModelError(f"`normal` of impact `{name}` must list distinct rows of the contact, 0 … {k - 1}; got {normal!r}.")
        self.normal = rows
        self.tangential = [i for i in range(k) if i not in rows]
        if friction is not None:
            friction = float(friction)
            if not (friction >= 0 and math.isfinite(friction)):
                raise ModelError(f"Friction coefficient of impact `{name}` must be finite and ≥ 0; got {friction}.")
            if len(rows) != 1 or not self.tangential:
                raise ModelError(f"A friction cone needs exactly one normal row and at least one tangential row; impact `{name}` has normal rows {rows} of {k}.")
        self.friction = friction
        if cone is not None and (friction is None or cone not in ("polyhedral", "circular")):
            raise ModelError(f"`cone` of impact `{name}` must be None, 'polyhedral' or 'circular' and needs `friction`; got {cone!r}.")
        if not (isinstance(facets, int) and facets >= 3):
            raise ModelError(f"`facets` of impact `{name}` must be an integer ≥ 3; got {facets!r}.")
        self.cone, self.facets = cone, facets
        eq = body.equations()
        self.mass_matrix = eq.mass_matrix
        self.jacobian = ca.mtimes(ca.jacobian(c, body.q), body.kinematic_matrix)
        for s in ca.symvar(self.mass_matrix):
            if s.name() not in own | params:
                raise ModelError(f"The mass matrix of `{body.name}` uses `{s.name()}`; an impact needs M(q) in coordinates and parameters only.")

    @property
    def num_rows(self) -> int:
        """Number of contact rows k (impulse components)."""
        return int(self.contact.numel())

    @property
    def impulse_names(self) -> list:
        return [f"{self.name}.impulse" if self.num_rows == 1 else f"{self.name}.impulse_{i}" for i in range(self.num_rows)]

    def impulse_bounds(self):
        """Lower and upper bounds of ``P``, shape (k,): ``P_n ≥ 0``, tangential rows free."""
        lo = np.full(self.num_rows, -np.inf)
        lo[self.normal] = 0.0
        return lo, np.full(self.num_rows, np.inf)

    def _at(self, expr, q):
        return ca.substitute(expr, self.body.q, q)

    def equations(self, q, v_minus, v_plus, impulse):
        """Rows of the law at symbolic values (SX): ``(momentum (nv,), restitution (k,), friction)``.

        ``friction`` holds the rows ``±P_t − μ P_n ≤ 0`` (empty without friction).
        Parameters of the body stay as their own symbols.
        """
        M, J = self._at(self.mass_matrix, q), self._at(self.jacobian, q)
        E = ca.diag(ca.DM(self.restitution))
        momentum = ca.mtimes(M, v_plus - v_minus) - ca.mtimes(J.T, impulse)
        restitution = ca.mtimes(J, v_plus) + ca.mtimes(E, ca.mtimes(J, v_minus))
        return momentum, restitution, self._cone_rows(impulse)

    def _cone_rows(self, impulse):
        if self.friction is None:
            return ca.SX(0, 1)
        n, mu, t = impulse[self.normal[0]], self.friction, [impulse[i] for i in self.tangential]
        if self.cone is None or len(t) == 1:
            return ca.vertcat(*[r for ti in t for r in (ti - mu * n, -ti - mu * n)])
        if self.cone == "circular":
            return ca.sumsqr(ca.vertcat(*t)) - mu**2 * n**2
        th = (2 * np.arange(self.facets) + 1) * np.pi / self.facets
        return ca.vertcat(*[math.cos(a) * t[0] + math.sin(a) * t[1] - mu * math.cos(np.pi / self.facets) * n for a in th])

    def velocity_after(self, q, v, parameters=None):
        """Post-impact speeds and impulse at numbers (least squares if J is rank-deficient).

        Parameters
        ----------
        q, v : array_like, shapes (nq,), (nv,)
        parameters : dict, optional
            ``{name: value}`` for parameters the mass matrix or contact uses.

        Returns
        -------
        (ndarray (nv,), ndarray (k,))
            ``v⁺`` and ``P`` (the impulse is *not* clipped to ``P_n ≥ 0``).  With a
            ``cone``, Coulomb's law decides between sticking and sliding.
        """
        syms = [s for s in ca.symvar(ca.vertcat(ca.vec(self.mass_matrix), ca.vec(self.jacobian))) if s.name() not in {x.name() for x in ca.vertsplit(self.body.q)}]
        given = dict(parameters or {})
        missing = [s.name() for s in syms if s.name() not in given]
        if missing:
            raise ModelError(f"`velocity_after` of impact `{self.name}` needs a value for parameter `{missing[0]}`.")
        f = ca.Function("impact_terms", [self.body.q, ca.vertcat(*syms) if syms else ca.SX(0, 1)], [self.mass_matrix, self.jacobian])
        M, J = (np.array(x) for x in f(np.asarray(q, float), [given[s.name()] for s in syms]))
        v = np.asarray(v, float).ravel()
        vplus, P = solve_impact(M, J, v, self.restitution)
        if self.cone is None or P[self.normal[0]] <= 0:
            return vplus, P
        return coulomb_impact(M, J, v, self, vplus, P)


def solve_impact(M, J, v_minus, e):
    """``(v⁺, P)`` from ``[M −Jᵀ; J 0] [v⁺; P] = [M v⁻; −E J v⁻]`` (numpy; least squares if singular)."""
    nv, k = M.shape[0], J.shape[0]
    K = np.block([[M, -J.T], [J, np.zeros((k, k))]])
    rhs = np.concatenate([M @ v_minus, -np.asarray(e) * (J @ v_minus)])
    sol = np.linalg.lstsq(K, rhs, rcond=1e-12)[0]
    return sol[:nv], sol[nv:]


def coulomb_impact(M, J, v_minus, impact, v_stick, P_stick):
    """``(v⁺, P)`` of an impact with Coulomb friction: the sticking answer if its impulse lies in the cone, else sliding.

    Sliding: ``M(v⁺ − v⁻) = (J_n + μ fᵀJ_t)ᵀ P_n + (eᵀJ_t)ᵀ γ``, ``J_n v⁺ = −e_n J_n v⁻`` with the
    unit force direction ``f`` opposite the sliding speed ``J_t v⁺`` (found by iteration on the circle or
    the line; on a polygon each vertex, and each side's midpoint with ``γ`` keeping ``eᵀJ_t v⁺ = 0``, is tried
    for maximal dissipation).
    """
    n, t, mu = impact.normal[0], impact.tangential, impact.friction
    Pn, Pt = P_stick[n], P_stick[t]
    if impact.cone == "circular" or len(t) == 1:
        if np.linalg.norm(Pt) <= mu * Pn * (1 + 1e-12):
            return v_stick, P_stick
        f = Pt / np.linalg.norm(Pt)
        for _ in range(200):
            vplus, P = _sliding(M, J, v_minus, impact, f, None)
            st = J[t] @ vplus
            new = -st / np.linalg.norm(st) if np.linalg.norm(st) > 0 else f
            if np.abs(new - f).max() <= 1e-15:
                break
            f = new
        return vplus, P
    k = impact.facets
    normals = (2 * np.arange(k) + 1) * np.pi / k
    if (np.cos(normals) * Pt[0] + np.sin(normals) * Pt[1]).max() <= mu * math.cos(np.pi / k) * Pn * (1 + 1e-12):
        return v_stick, P_stick
    D = np.column_stack([np.cos(2 * np.pi * np.arange(k) / k), np.sin(2 * np.pi * np.arange(k) / k)])
    for j in range(k):
        for side in (None, (D[j] - D[(j + 1) % k]) / np.linalg.norm(D[j] - D[(j + 1) % k])):
            f = D[j] if side is None else 0.5 * (D[j] + D[(j + 1) % k])
            vplus, P = _sliding(M, J, v_minus, impact, f, side)
            st = J[t] @ vplus
            gamma = 0.0 if side is None else (P[t] - mu * P[n] * f) @ side
            tol = 1e-12 * max(1.0, np.linalg.norm(st))
            if P[n] >= 0 and f @ st <= (D @ st).min() + tol and abs(gamma) <= mu * P[n] * math.sin(np.pi / k) * (1 + 1e-12) + tol:
                return vplus, P
    raise ModelError(f"Impact `{impact.name}`: no sticking or sliding impulse satisfies Coulomb's law on its polygonal cone.")


def _sliding(M, J, v_minus, impact, f, side):
    """Solve the sliding impact with force direction ``f`` (and a side's multiplier ``γ`` along ``side``)."""
    n, t, mu = impact.normal[0], impact.tangential, impact.friction
    nv = M.shape[0]
    cols = [J[n] + mu * f @ J[t]] + ([side @ J[t]] if side is not None else [])
    rows = [J[n]] + ([side @ J[t]] if side is not None else [])
    m = len(cols)
    K = np.block([[M, -np.array(cols).T], [np.array(rows), np.zeros((m, m))]])
    rhs = np.concatenate([M @ v_minus, [-impact.restitution[n] * (J[n] @ v_minus)], [0.0] * (m - 1)])
    sol = np.linalg.solve(K, rhs)
    P = np.zeros(J.shape[0])
    P[n] = sol[nv]
    P[t] = mu * sol[nv] * f + (sol[nv + 1] * side if side is not None else 0.0)
    return sol[:nv], P


__all__ = ["Impact", "solve_impact", "coulomb_impact"]
