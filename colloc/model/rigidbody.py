"""Recursive rigid-body dynamics of a kinematic tree as CasADi SX expressions.

A :class:`Tree` is a list of bodies in topological order (every parent before
its children).  Each body hangs from its parent (or from the world) by one
joint: ``revolute`` (1 dof about a unit axis), ``prismatic`` (1 dof along a
unit axis), ``spherical`` (a unit quaternion ``(w, x, y, z)``, nq = 4, with
the angular velocity in body coordinates as speeds, nv = 3), ``free`` (a floating base: position ``p`` and unit quaternion
``(w, x, y, z)``, nq = 7, with speeds ``(v, ω)``, the linear velocity of the
body origin and the angular velocity, both in body coordinates, nv = 6) or
``function`` (any number of dofs whose speeds are the coordinates' rates, the
joint's motion a given function ``q_j ↦ (R(q_j), p(q_j))``, as Simbody's
``FunctionBased`` mobilizer of OpenSim's ``CustomJoint``; its motion subspace
``S(q_j)`` and the velocity-product term ``c_J = (dS/dt) q̇_j`` (Featherstone
§4.4, the apparent derivative in body coordinates) come by AD).

The algorithms are those of Featherstone, *Rigid Body Dynamics Algorithms*,
Springer 2008: recursive Newton–Euler (RNEA, §5.3, Table 5.1) for the inverse
dynamics ``τ = M(q) a + c(q, v)`` and the composite-rigid-body algorithm (CRBA,
§6.2, Table 6.2) for the joint-space mass matrix ``M(q)``.  Spatial vectors are
kept as pairs of 3-vectors (angular, linear) in body coordinates and spatial
transforms as a rotation and a translation, so SX never multiplies by the
structural zeros of 6 × 6 Plücker matrices; the expression graph grows
linearly with the number of bodies for RNEA.

Conventions (those of Pinocchio, so results compare entry by entry):
gravity enters as a base acceleration ``−g`` (§5.3); the free joint's speeds
are ``(v, ω)`` of the body in its own frame, its generalised force
``(f, n)`` in the same frame; the pose of body i in its parent is
``(R_pi, p_pi)`` with ``x_parent = R_pi x_i + p_pi``.

Legend: ``q`` coordinates, ``v`` speeds, ``a`` accelerations, ``w``/``dw``
angular velocity/acceleration, ``vv``/``dv`` linear velocity/spatial
acceleration of the body origin, ``n``/``f`` moment about the body origin and
force, ``m`` mass, ``h = m c`` first mass moment, ``Io`` rotational inertia
about the body origin.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import casadi as ca
import numpy as np

from ..errors import ModelError

JOINT_DOFS = {"revolute": (1, 1), "prismatic": (1, 1), "spherical": (4, 3), "free": (7, 6)}  # "function": Body.dofs


@dataclass
class Body:
    """One body of a tree and the joint that carries it.

    Attributes
    ----------
    name : str
        The joint's name (the body is everything rigidly attached to its child link).
    kind : str
        ``"revolute"``, ``"prismatic"``, ``"spherical"``, ``"free"`` or ``"function"``.
    parent : int
        Index of the parent body, -1 for the world.
    rotation, translation : ndarray, shapes (3, 3), (3,)
        Pose of the joint frame in the parent body frame (at zero joint coordinate).
    axis : ndarray, shape (3,)
        Unit joint axis in the joint frame (unused for ``free``).
    mass : float
    com : ndarray, shape (3,)
        Centre of mass in the body frame.
    inertia : ndarray, shape (3, 3)
        Rotational inertia about the centre of mass, body axes.
    motion : callable, optional
        For ``function``: ``q_j (SX, shape (dofs, 1)) -> (R (3, 3), p (3, 1))``, the
        pose of the body frame in the joint frame (applied after ``rotation``, ``translation``).
    dofs : int
        For ``function``: the joint's number of coordinates (= speeds, ``q̇_j = v_j``).
    terms : callable, optional
        For ``function``: ``(q_j, u) -> (R, p, S, c_J)`` in closed form (see :meth:`joint_kinematics`),
        instead of taking ``S`` and ``c_J`` from :attr:`motion` by AD.
    """

    name: str
    kind: str
    parent: int
    rotation: np.ndarray
    translation: np.ndarray
    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    mass: float = 0.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))
    motion: object = None
    dofs: int = 0
    terms: object = None
    _kinematics: object = field(default=None, repr=False)

    def joint_kinematics(self):
        """For ``function``: ``(q_j, u) -> (R, p, S, c_J)``: the joint's pose, its motion subspace
        ``S(q_j)`` (6 × dofs, rows ω then v, body axes) and ``c_J = Σ_k ∂(S u)/∂q_k u_k``.

        One CasADi function per body built once from :attr:`motion`, so that the
        tree may pass any expression for ``q_j`` (calling an SX function with SX
        arguments inlines it; one call gives every term, so none is built twice).
        ``[ω]× = Rᵀ ∂R/∂q u`` and ``v = Rᵀ ∂p/∂q u`` are the joint's velocity in
        the body frame; the body moves with ``q̇_j = u``.
        """
        if self._kinematics is None:
            qs, us = ca.SX.sym("q", self.dofs), ca.SX.sym("u", self.dofs)
            if self.terms is not None:
                R, p, S, cJ = (ca.SX(x) for x in self.terms(qs, us))
            else:
                R, p = self.motion(qs)
                R, p = ca.SX(R), ca.SX(p)
                W = ca.mtimes(R.T, ca.reshape(ca.jtimes(ca.vec(R), qs, us), 3, 3))
                Su = ca.vertcat(W[2, 1], W[0, 2], W[1, 0], ca.mtimes(R.T, ca.jtimes(p, qs, us)))
                cJ = ca.jtimes(Su, qs, us)
                S = ca.jacobian(Su, us)
            self._kinematics = ca.Function(f"{self.name}_joint", [qs, us], [R, p, S, cJ], ["q", "u"], ["R", "p", "S", "cJ"])
        return self._kinematics


class Tree:
    """A kinematic tree of :class:`Body` in topological order, with its coordinate blocks."""

    def __init__(self, bodies):
        self.bodies = list(bodies)
        self.q_slices, self.v_slices = [], []
        nq = nv = 0
        for i, b in enumerate(self.bodies):
            if not -1 <= b.parent < i:
                raise ModelError(f"Body `{b.name}` comes before its parent; bodies must be in topological order.")
            dq, dv = (b.dofs, b.dofs) if b.kind == "function" else JOINT_DOFS[b.kind]
            self.q_slices.append(slice(nq, nq + dq))
            self.v_slices.append(slice(nv, nv + dv))
            nq, nv = nq + dq, nv + dv
        self.nq, self.nv = nq, nv

    # -- kinematics ------------------------------------------------------------------------------
    def joint_poses(self, q, terms=None):
        """Pose ``(R_pi, p_pi)`` of every body in its parent's frame, as SX (``terms``: see :meth:`_function_terms`)."""
        return [terms[i][0] if terms and i in terms else _joint_pose(b, q[s])
                for i, (b, s) in enumerate(zip(self.bodies, self.q_slices))]

    def _function_terms(self, q, v=None):
        """``{i: ((R_pi, p_pi), S_i, c_J)}`` of the ``function`` joints, each from one call of its kinematics."""
        out = {}
        for i, (b, sq, sv) in enumerate(zip(self.bodies, self.q_slices, self.v_slices)):
            if b.kind == "function":
                R, p, S, cJ = b.joint_kinematics()(q[sq], v[sv] if v is not None else ca.DM.zeros(b.dofs, 1))
                R0, p0 = ca.DM(b.rotation), ca.DM(b.translation.reshape(3, 1))
                out[i] = ((ca.mtimes(R0, R), p0 + ca.mtimes(R0, p)), S, cJ)
        return out

    def world_poses(self, q, poses=None):
        """Pose ``(R_i, p_i)`` of every body in the world frame: ``x_world = R_i x_i + p_i``."""
        poses = poses if poses is not None else self.joint_poses(q)
        out = []
        for b, (R, p) in zip(self.bodies, poses):
            if b.parent < 0:
                out.append((R, p))
            else:
                Rp, pp = out[b.parent]
                out.append((ca.mtimes(Rp, R), pp + ca.mtimes(Rp, p)))
        return out

    # -- dynamics --------------------------------------------------------------------------------
    def inverse_dynamics(self, q, v, a, gravity):
        """RNEA: ``τ = M(q) a + c(q, v)`` with gravity ``g`` (world frame), shape (nv, 1).

        Featherstone (2008) Table 5.1: forward pass
        ``V_i = X_i V_λ + S_i v_i``, ``A_i = X_i A_λ + S_i a_i + V_i ×ₘ S_i v_i``
        with ``A_0 = (0, −g)``; body force ``F_i = I_i A_i + V_i ×* I_i V_i``;
        backward pass ``τ_i = S_iᵀ F_i``, ``F_λ += X_iᵀ F_i``.
        """
        terms = self._function_terms(q, v)
        poses = self.joint_poses(q, terms)
        g = ca.DM(np.asarray(gravity, dtype=float).reshape(3, 1))
        zero = ca.DM.zeros(3, 1)
        motion = []
        for i, (b, (R, p), sv) in enumerate(zip(self.bodies, poses, self.v_slices)):
            E = R.T
            if b.parent < 0:
                w_p, v_p, dw_p, dv_p = zero, zero, zero, -g
            else:
                w_p, v_p, dw_p, dv_p = motion[b.parent]
            w = ca.mtimes(E, w_p)
            vv = ca.mtimes(E, v_p + ca.cross(w_p, p))
            dw = ca.mtimes(E, dw_p)
            dv = ca.mtimes(E, dv_p + ca.cross(dw_p, p))
            if b.kind == "function":  # S(q) v, S(q) a and c_J = Ṡ v, all in body axes
                _, S, cJ = terms[i]
                Sv, Sa = ca.mtimes(S, v[sv]), ca.mtimes(S, a[sv])
                wj, vj = Sv[0:3], Sv[3:6]
                w, vv = w + wj, vv + vj
                dw = dw + Sa[0:3] + cJ[0:3] + ca.cross(w, wj)
                dv = dv + Sa[3:6] + cJ[3:6] + ca.cross(w, vj) + ca.cross(vv, wj)
                motion.append((w, vv, dw, dv))
                continue
            wj, vj = _subspace(b, v[sv])
            awj, avj = _subspace(b, a[sv])
            if b.kind == "free":  # V_i ×ₘ S v = V_i ×ₘ V_i = 0
                w, vv, dw, dv = w + wj, vv + vj, dw + awj, dv + avj
            else:
                w, vv = w + wj, vv + vj
                dw = dw + awj + ca.cross(w, wj)
                dv = dv + avj + ca.cross(w, vj) + ca.cross(vv, wj)
            motion.append((w, vv, dw, dv))
        forces = []
        for b, (w, vv, dw, dv) in zip(self.bodies, motion):
            m, h, Io = _spatial_inertia(b)
            n_a, f_a = _inertia_times(m, h, Io, dw, dv)
            n_h, f_h = _inertia_times(m, h, Io, w, vv)
            forces.append([n_a + ca.cross(w, n_h) + ca.cross(vv, f_h), f_a + ca.cross(w, f_h)])
        tau = [None] * len(self.bodies)
        for i in reversed(range(len(self.bodies))):
            b, (n, f) = self.bodies[i], forces[i]
            tau[i] = _subspace_transpose(b, n, f, terms[i][1] if i in terms else None)
            if b.parent >= 0:
                R, p = poses[i]
                fp = ca.mtimes(R, f)
                forces[b.parent][0] += ca.mtimes(R, n) + ca.cross(p, fp)
                forces[b.parent][1] += fp
        return ca.vertcat(*tau)

    def mass_matrix(self, q):
        """CRBA: the joint-space mass matrix ``M(q)``, shape (nv, nv), symmetric.

        Featherstone (2008) Table 6.2: composite inertias
        ``I^c_λ += X_iᵀ I^c_i X_i`` from the leaves in, then
        ``M_ii = S_iᵀ I^c_i S_i`` and ``M_ji = S_jᵀ X…ᵀ I^c_i S_i`` along the
        path from i to the root.
        """
        terms = self._function_terms(q)
        poses = self.joint_poses(q, terms)
        comp = [list(_spatial_inertia(b)) for b in self.bodies]
        for i in reversed(range(len(self.bodies))):
            par = self.bodies[i].parent
            if par >= 0:
                m, h, Io = _inertia_to_parent(*comp[i], *poses[i])
                comp[par][0] += m
                comp[par][1] += h
                comp[par][2] += Io
        M = ca.SX.zeros(self.nv, self.nv)
        Ss = [terms[i][1] if i in terms else None for i in range(len(self.bodies))]
        for i, b in enumerate(self.bodies):
            cols = _subspace_columns(b, Ss[i])
            F = [_inertia_times(*comp[i], w, vv) for w, vv in cols]
            si = self.v_slices[i]
            M[si, si] = _project(b, F, Ss[i])
            j = i
            while self.bodies[j].parent >= 0:
                R, p = poses[j]
                F = [(ca.mtimes(R, n) + ca.cross(p, ca.mtimes(R, f)), ca.mtimes(R, f)) for n, f in F]
                j = self.bodies[j].parent
                block = _project(self.bodies[j], F, Ss[j])
                sj = self.v_slices[j]
                M[sj, si] = block
                M[si, sj] = block.T
        return M


def quaternion_rate_matrix(quat):
    """``Q(q)`` with ``q̇ = ½ Q(q) ω`` for ``q = (w, x, y, z)`` and ω in body axes, shape (4, 3).

    The quaternion product ``q ⊗ (0, ω)`` written as a matrix (Shuster 1993);
    ``qᵀ Q(q) = 0``, so the kinematics keep ``|q| = 1``.
    """
    w, x, y, z = ca.vertsplit(quat)
    return ca.vertcat(ca.horzcat(-x, -y, -z), ca.horzcat(w, -z, y), ca.horzcat(z, w, -x), ca.horzcat(-y, x, w))


def quaternion_rotation(quat):
    """Rotation matrix of the unit quaternion ``(w, x, y, z)``, shape (3, 3) (body to world)."""
    w, x, y, z = ca.vertsplit(quat)
    return ca.vertcat(
        ca.horzcat(1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)),
        ca.horzcat(2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)),
        ca.horzcat(2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)))


def axis_rotation(axis, angle):
    """Rodrigues' rotation by ``angle`` about the constant unit ``axis``: ``I + sin θ [a]× + (1 − cos θ)[a]×²``."""
    K = ca.DM(skew(axis))
    return ca.DM.eye(3) + ca.sin(angle) * K + (1 - ca.cos(angle)) * ca.DM(skew(axis) @ skew(axis))


def skew(u):
    """``[u]×`` of a numeric 3-vector, shape (3, 3)."""
    x, y, z = np.asarray(u, dtype=float).ravel()
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def _joint_pose(b, qi):
    R0, p0 = ca.DM(b.rotation), ca.DM(b.translation.reshape(3, 1))
    if b.kind == "revolute":
        return ca.mtimes(R0, axis_rotation(b.axis, qi[0])), ca.SX(p0)
    if b.kind == "prismatic":
        return ca.SX(R0), p0 + ca.mtimes(R0, ca.DM(b.axis.reshape(3, 1))) * qi[0]
    if b.kind == "function":
        Rj, pj = b.motion(qi)
        return ca.mtimes(R0, Rj), p0 + ca.mtimes(R0, pj)
    if b.kind == "spherical":
        return ca.mtimes(R0, quaternion_rotation(qi)), ca.SX(p0)
    # free: the parent is the world; a joint frame offset other than the identity is applied as for the others
    R, p = quaternion_rotation(qi[3:7]), qi[0:3]
    if np.array_equal(b.rotation, np.eye(3)) and not np.any(b.translation):
        return R, p
    return ca.mtimes(R0, R), p0 + ca.mtimes(R0, p)


def _subspace(b, s):
    """``S_i s`` as (angular, linear) 3-vectors."""
    zero = ca.DM.zeros(3, 1)
    axis = ca.DM(b.axis.reshape(3, 1))
    if b.kind == "revolute":
        return axis * s[0], zero
    if b.kind == "prismatic":
        return zero, axis * s[0]
    if b.kind == "spherical":
        return s[0:3], zero
    return s[3:6], s[0:3]


def _subspace_columns(b, S=None):
    """Columns of ``S_i`` as (angular, linear) pairs of 3-vectors (numeric, or the SX ``S`` of a ``function`` joint)."""
    e = np.eye(3)
    if b.kind == "function":
        return [(S[0:3, k], S[3:6, k]) for k in range(b.dofs)]
    if b.kind == "revolute":
        return [(ca.DM(b.axis), ca.DM.zeros(3, 1))]
    if b.kind == "prismatic":
        return [(ca.DM.zeros(3, 1), ca.DM(b.axis))]
    if b.kind == "spherical":
        return [(ca.DM(e[k]), ca.DM.zeros(3, 1)) for k in range(3)]
    return [(ca.DM.zeros(3, 1), ca.DM(e[k])) for k in range(3)] + [(ca.DM(e[k]), ca.DM.zeros(3, 1)) for k in range(3)]


def _subspace_transpose(b, n, f, S=None):
    """``S_iᵀ F`` for a spatial force (n, f); ``S`` is the SX subspace of a ``function`` joint."""
    if b.kind == "function":
        return ca.mtimes(S.T, ca.vertcat(n, f))
    axis = ca.DM(b.axis.reshape(3, 1))
    if b.kind == "revolute":
        return ca.dot(axis, n)
    if b.kind == "prismatic":
        return ca.dot(axis, f)
    if b.kind == "spherical":
        return n
    return ca.vertcat(f, n)


def _project(b, F, S=None):
    """``S_bᵀ [F_1 … F_k]``, shape (dof_b, k), for spatial forces F given as (n, f) pairs."""
    return ca.horzcat(*[_subspace_transpose(b, n, f, S) for n, f in F])


def _spatial_inertia(b):
    """``(m, h = m c, Io)`` of a body about its own origin (parallel-axis theorem)."""
    c = np.asarray(b.com, dtype=float)
    Io = np.asarray(b.inertia, dtype=float) + b.mass * (c @ c * np.eye(3) - np.outer(c, c))
    return ca.SX(b.mass), ca.SX(ca.DM(b.mass * c)), ca.SX(ca.DM(Io))


def _inertia_times(m, h, Io, w, vv):
    """Spatial inertia times a motion vector: ``n = Io w + h × vv``, ``f = m vv − h × w``."""
    return ca.mtimes(Io, w) + ca.cross(h, vv), m * vv - ca.cross(h, w)


def _inertia_to_parent(m, h, Io, R, p):
    """A body's ``(m, h, Io)`` expressed about its parent's origin in parent axes: ``X_iᵀ I X_i``."""
    hR = ca.mtimes(R, h)
    IoR = ca.mtimes(ca.mtimes(R, Io), R.T)
    # move the reference point from the body origin to the parent origin (p = body origin in parent):
    # I_p = −Σ m [p + y]×² = R Io Rᵀ − [p]×[Rh]× − [Rh]×[p]× − m [p]×²
    P, H = _skew_sx(p), _skew_sx(hR)
    Io_p = IoR - ca.mtimes(P, H) - ca.mtimes(H, P) - m * ca.mtimes(P, P)
    return m, hR + m * p, Io_p


def _skew_sx(u):
    return ca.vertcat(ca.horzcat(0, -u[2], u[1]), ca.horzcat(u[2], 0, -u[0]), ca.horzcat(-u[1], u[0], 0))


def solve_affine(J, b):
    """``J⁻¹ b`` as SX: by elimination without pivoting when ``J`` is a mass matrix (:func:`_mass_matrix_like`),
    else by CasADi's QR (``ca.solve``).

    A mass matrix is sparse as its kinematic tree is (coordinates ordered parents first): eliminating
    from the last row up fills nothing in (Featherstone's LTDL), and its expressions stay small where
    the QR's square roots and reflections couple every entry; positive definite, it needs no pivoting.
    The 2-D walking model's explicit dynamics (10 coordinates) then has 8,051 instructions instead of
    9,918, its Jacobian 88,977 instead of 126,177 and its Lagrangian Hessian 124,180 instead of 248,936;
    the values agree to rounding.
    """
    n = J.size1()
    if not _mass_matrix_like(J):
        return ca.solve(J, b)
    A = [[J[i, j] for j in range(n)] for i in range(n)]
    nz = [[not A[i][j].is_zero() for j in range(n)] for i in range(n)]
    b = [b[i, :] for i in range(n)]
    for k in range(n - 1, -1, -1):  # row k eliminates column k from the rows above it
        for i in (i for i in range(k) if nz[i][k]):
            f = A[i][k] / A[k][k]
            for j in (j for j in range(k) if nz[k][j]):
                A[i][j], nz[i][j] = A[i][j] - f * A[k][j], True
            b[i] = b[i] - f * b[k]
    x = []
    for i in range(n):  # what is left below the diagonal is lower triangular
        x.append((b[i] - sum((A[i][j] * x[j] for j in range(i) if nz[i][j]), ca.SX(0))) / A[i][i])
    return ca.vertcat(*x)


def _mass_matrix_like(J, probes=3) -> bool:
    """Whether the square SX ``J`` is symmetric positive definite, as a mass matrix is: structurally
    symmetric, and symmetric (to rounding) and positive definite (a Cholesky factorization exists) at
    ``probes`` random values of its symbols.  A mass matrix's entries ``Mᵢⱼ`` and ``Mⱼᵢ`` are different
    expressions of the same value, so symmetry is checked by value."""
    n = J.size1()
    if n < 2 or J.size2() != n or not J.sparsity().is_symmetric() or any(J[i, i].is_zero() for i in range(n)):
        return False
    symbols = ca.symvar(J)
    f = ca.Function("J", [ca.vertcat(*symbols) if symbols else ca.SX(0, 1)], [ca.densify(J)])
    rng = np.random.default_rng(0)
    for _ in range(probes):
        M = np.array(f(rng.uniform(-1.0, 1.0, f.size1_in(0))))
        if not np.all(np.isfinite(M)) or np.max(np.abs(M - M.T)) > 1e-9 * max(1.0, np.max(np.abs(M))):
            return False
        try:
            np.linalg.cholesky(M)
        except np.linalg.LinAlgError:
            return False
    return True


__all__ = ["Body", "Tree", "JOINT_DOFS", "quaternion_rate_matrix", "quaternion_rotation", "axis_rotation", "skew", "solve_affine"]
