"""Guesses that respect kinematic constraints, and endpoint rows made redundant by fixed values.

A user guesses states (or nothing); colloc then, at every grid point,

1. projects the coordinates onto ``φ(q, t) = 0`` (Gauss–Newton, minimum-norm
   steps in the coordinates only),
2. takes the speeds from the time derivative of the projected coordinates
   (where ``q̇ = v`` and the user guessed no speed) and projects them onto
   ``φ̇ = 0, ψ = 0`` (linear in v),
3. takes the accelerations from the time derivative of the speeds and projects
   them onto ``φ̈ = 0, ψ̇ = 0, α = 0`` (linear in a),
4. finds the multipliers by least squares on the inverse dynamics
   ``M a + c − τ − Gᵀλ``,

so nobody guesses λ.  Legend: ``x`` states, ``z`` derivative variables,
``lam`` multipliers, ``J*`` Jacobians.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from ..errors import ProblemError
from ..model.multibody import Multibody
from ..numeric import Evaluator


def _lstsq_steps(J, r, movable=None):
    """Minimum-norm ``d_k`` with ``J_k d_k = −r_k`` at every grid point k at once (least squares if inconsistent).

    ``J`` (K, m, n), ``r`` (K, m); ``movable`` (K, n) marks the entries each point may move (the
    others get 0, as if their columns were left out).  Returns (K, n).
    """
    if J.shape[1] == 0 or J.shape[2] == 0:
        return np.zeros((J.shape[0], J.shape[2]))
    if movable is not None:
        J = J * movable[:, None, :]
    # where every J_k has well-conditioned full rank, the normal equations give the pseudo-inverse's
    # step (a batched Cholesky and solve cost a fraction of a batched SVD): d = −Jᵀ (J Jᵀ)⁻¹ r with
    # full row rank, d = −(Jᵀ J)⁻¹ Jᵀ r with full column rank
    JT = J.transpose(0, 2, 1)
    wide = J.shape[1] <= J.shape[2]
    A = J @ JT if wide else JT @ J
    try:
        diag = np.diagonal(np.linalg.cholesky(A), axis1=1, axis2=2)
    except np.linalg.LinAlgError:
        diag = None
    if diag is not None and (diag.min(axis=1) > _WELL_CONDITIONED * diag.max(axis=1)).all():
        if wide:
            return -(JT @ np.linalg.solve(A, r[:, :, None]))[:, :, 0]
        return -np.linalg.solve(A, JT @ r[:, :, None])[:, :, 0]
    return -np.einsum("kij,kj->ki", np.linalg.pinv(J, rcond=1e-12), r)


#: Smallest ratio of the Cholesky factor's diagonal entries (≈ √ of J Jᵀ's condition) for the normal equations.
_WELL_CONDITIONED = 1e-4


def _multibody_parts(model):
    out = []
    for c in model.components:
        if isinstance(c, Multibody):
            q = [s.name() for s in c.coordinates]
            v = [s.name() for s in c.speeds]
            out.append((q, v, c._is_identity_kinematics()))
    return out


def project_guess(problem, layout, times, point, opts):
    """Make the guesses in ``layout`` consistent with every kinematic constraint (in place)."""
    model = problem.model
    if not model.constraints:
        return
    names = layout["x"].row_names
    idx = {n: i for i, n in enumerate(names)}
    parts = _multibody_parts(model)
    q_rows = [idx[n] for q, _, _ in parts for n in q]
    v_rows = [idx[n] for _, v, _ in parts for n in v]
    z_names = layout["z"].row_names
    zv_rows = [z_names.index(names[i] + ".dot") for i in v_rows if names[i] + ".dot" in z_names]

    # one input (every block of a grid point stacked, p repeated) and one output (every part stacked): a
    # numpy ↔ CasADi conversion costs tens of microseconds, and an evaluation would otherwise make fourteen.
    # φ, φ̇, ψ and their Jacobian are the model's own (built once); the point function adds a and λ.
    F, Fx, t, x, p = model.mesh_levels()[2]
    z = ca.SX.sym("z", point.size1_in(2))
    u, lam = model.vector("control"), model.vector("multiplier")
    W = ca.vertcat(t, x, z, u, lam, p)
    _, res, _, acc, _ = point(t, x, z, u, lam, p)
    npos = len(model.constraint_expressions("position")[1])
    outs = [F, Fx, acc, ca.jacobian(acc, z), res, ca.jacobian(res, lam)]
    shapes = [e.shape for e in outs]
    offsets = np.cumsum([0] + [r * c for r, c in shapes])

    X, Z, U, L, P = (layout[b].guess for b in ("x", "z", "u", "lam", "p"))
    xlo, xhi = layout["x"].lower, layout["x"].upper
    userguessed = set(problem.guesses)

    free = (xlo < xhi).T  # (K, nx): entries fixed at a grid point (e.g. initial values) are not moved
    K = times.size
    Fmap = Evaluator(ca.Function("consistency", [W], [ca.densify(ca.veccat(*outs))]).map(K))
    nl = L.shape[0]

    def evaluate():
        """Every part of F at every grid point: values (rows, K), Jacobians stacked as (K, rows, cols)."""
        out = Fmap(np.vstack([times[None, :], X, Z, U, L, np.repeat(P.reshape(-1, 1), K, axis=1)]))[0]
        blocks = [out[a:b] for a, b in zip(offsets[:-1], offsets[1:])]
        # a Jacobian's column-major entries at each point, as (K, rows, cols)
        F, Fx, *rest = [B if i % 2 == 0 else B.T.reshape(K, c, r).transpose(0, 2, 1) for i, (B, (r, c)) in enumerate(zip(blocks, shapes))]
        return [F[:npos], Fx[:, :npos], F[npos:], Fx[:, npos:], *rest]

    def project(value, jac, rows, movable, target, iterations, tol=1e-12):
        for _ in range(iterations):
            out = evaluate()
            r, J = out[value], out[jac]
            if r.size == 0 or np.abs(r).max() < tol or not rows:
                return
            target[rows] += _lstsq_steps(J[:, :, rows], r.T, movable).T
            if target is X:
                np.clip(X, xlo, xhi, out=X)

    project(0, 1, q_rows, free[:, q_rows], X, 8)  # positions
    for q, v, identity in parts:
        if identity:
            for qn, vn in zip(q, v):
                if vn not in userguessed and times.size > 1:
                    X[idx[vn]] = np.clip(np.gradient(X[idx[qn]], times), xlo[idx[vn]], xhi[idx[vn]])
    project(2, 3, v_rows, free[:, v_rows], X, 2)  # speeds (linear in v)
    if zv_rows and times.size > 1:
        for i, zi in zip(v_rows, zv_rows):
            Z[zi] = np.gradient(X[i], times)
    if zv_rows:
        project(4, 5, zv_rows, None, Z, 1)  # accelerations (linear in a)
    if nl:
        project(6, 7, list(range(nl)), None, L, 1)  # multipliers: least squares on the inverse dynamics
    for b in ("x", "z", "lam"):
        blk = layout[b]
        np.clip(blk.guess, blk.lower, blk.upper, out=blk.guess)


def fixed_endpoint_rows(problem, F_expr, t, x, p, which):
    """Rows of ``F(t, x, p)`` fully determined by fixed initial (or final) values.

    Such rows are redundant with the fixed values (IPOPT would see a rank-deficient
    Jacobian), so they are left out; if the fixed values violate one, the problem
    is inconsistent and a ProblemError names the constraint.
    """
    bounds = problem.initial_bounds if which == "t0" else problem.final_bounds
    names = [s.name for s in problem.model.states]
    fixed = np.array([n in bounds and bounds[n][0] == bounds[n][1] for n in names])
    if not fixed.any():
        return np.zeros(F_expr.numel(), bool)
    # which rows use which states, the parameters, the time: one sparsity pattern each (not a CasADi call per row)
    rows, cols = (np.asarray(v, dtype=int) for v in ca.jacobian_sparsity(F_expr, x).get_triplet())
    uses_p = _rows_using(F_expr, p)
    timed = _rows_using(F_expr, t) if which == "tf" and problem.free_final_time else np.zeros(F_expr.numel(), bool)
    drop = np.zeros(F_expr.numel(), bool)
    for r in range(F_expr.numel()):
        c = cols[rows == r]
        drop[r] = bool(c.size) and fixed[c].all() and not uses_p[r] and not timed[r]
    return drop


def _rows_using(F_expr, s):
    """Which rows of ``F_expr`` depend on the symbols ``s`` (as ``ca.depends_on`` row by row)."""
    out = np.zeros(F_expr.numel(), bool)
    if s.numel():
        out[np.asarray(ca.jacobian_sparsity(F_expr, s).get_triplet()[0], dtype=int)] = True
    return out


def check_fixed_consistency(problem, F_func, labels, drop, which, tol=1e-8):
    """Raise if the fixed endpoint values violate a dropped constraint row."""
    if not drop.any():
        return
    bounds = problem.initial_bounds if which == "t0" else problem.final_bounds
    xv = np.array([bounds.get(s.name, (0.0, 0.0))[0] for s in problem.model.states])
    t = problem.t0_value if which == "t0" else problem.tf_bounds[0]
    val = np.asarray(F_func(t, xv, np.zeros(len(problem.model.parameters)))[0]).ravel()
    for r in np.flatnonzero(drop):
        if abs(val[r]) > tol:
            when = "initial" if which == "t0" else "final"
            raise ProblemError(f"The fixed {when} values violate constraint `{labels[r]}` (error {val[r]:.3g}); make them consistent or leave some free.")
