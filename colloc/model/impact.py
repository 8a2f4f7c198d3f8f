"""Impacts on a :class:`~colloc.Multibody`: Newton's restitution law as a jump map.

At an impact the coordinates are continuous and the speeds jump from ``v⁻``
to ``v⁺`` under a contact impulse ``P``::

    M(q) (v⁺ − v⁻) = J(q)ᵀ P            (momentum balance, nv rows)
    J(q) v⁺ = −E J(q) v⁻                (Newton's restitution law, k rows)
    P_n ≥ 0                             (a contact pushes, never pulls)
    |P_t| ≤ μ P_n                       (optional friction cone, tangential rows)

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
    """

    def __init__(self, body, contact, restitution=0.0, normal=None, friction=None, name="impact"):
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
        cone = []
        if self.friction is not None:
            n = impulse[self.normal[0]]
            for i in self.tangential:
                cone += [impulse[i] - self.friction * n, -impulse[i] - self.friction * n]
        return momentum, restitution, ca.vertcat(*cone) if cone else ca.SX(0, 1)

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
            ``v⁺`` and ``P`` (the impulse is *not* clipped to ``P_n ≥ 0``).
        """
        syms = [s for s in ca.symvar(ca.vertcat(ca.vec(self.mass_matrix), ca.vec(self.jacobian))) if s.name() not in {x.name() for x in ca.vertsplit(self.body.q)}]
        given = dict(parameters or {})
        missing = [s.name() for s in syms if s.name() not in given]
        if missing:
            raise ModelError(f"`velocity_after` of impact `{self.name}` needs a value for parameter `{missing[0]}`.")
        f = ca.Function("impact_terms", [self.body.q, ca.vertcat(*syms) if syms else ca.SX(0, 1)], [self.mass_matrix, self.jacobian])
        M, J = (np.array(x) for x in f(np.asarray(q, float), [given[s.name()] for s in syms]))
        return solve_impact(M, J, np.asarray(v, float).ravel(), self.restitution)


def solve_impact(M, J, v_minus, e):
    """``(v⁺, P)`` from ``[M −Jᵀ; J 0] [v⁺; P] = [M v⁻; −E J v⁻]`` (numpy; least squares if singular)."""
    nv, k = M.shape[0], J.shape[0]
    K = np.block([[M, -J.T], [J, np.zeros((k, k))]])
    rhs = np.concatenate([M @ v_minus, -np.asarray(e) * (J @ v_minus)])
    sol = np.linalg.lstsq(K, rhs, rcond=1e-12)[0]
    return sol[:nv], sol[nv:]


__all__ = ["Impact", "solve_impact"]
