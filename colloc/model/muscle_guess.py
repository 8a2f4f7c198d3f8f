"""Initial guesses for muscles on a prescribed motion, by static optimization.

The motion fixes every muscle's path length l_MT(t) and lengthening speed l̇_MT(t), and with them, for a
rigid tendon (l_T = l_s), the fiber length, velocity and pennation.  The tendon force is then affine in
the activation, F_T = F_max (a f_L f_V + f_PE) cos α, so sharing the generalized forces τ(t) the motion
needs among the muscles by minimum Σ a² is, at each time, a small convex quadratic program

    minimize  Σ_m a_m² + w ‖s‖²   subject to   Σ_m r_m F_T,m(a_m) + s = τ(t),   a_min ≤ a_m ≤ 1,

with a reserve s (weight ``w`` per (N·m)²) that keeps it feasible when the muscles are too weak.  The
programs of all times are solved together (IPOPT, one sparse convex QP).  The excitations then follow
from the activation history by inverting the activation dynamics (ȧ is increasing in e), and the
normalized tendon forces are the rigid-tendon forces; for a compliant tendon colloc takes dF̃_T/dt
from them.  This is the static-optimization guess OpenSim Moco and De Groote et al. (2016) start
the muscle-redundancy problem from: consistent with the dynamics, close to the optimum.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from ..errors import ModelError
from .component import TIME
from .muscle import activation_rate


def _rigid_fiber(muscle):
    """Normalized fiber length and velocity and cos α of a rigid tendon (l_T = l_s), functions of t."""
    P = muscle.params
    fiber, cos_alpha = muscle.fiber_geometry(P["tendon_slack_length"])
    norm_speed = cos_alpha * muscle.lengthening_speed / (P["max_contraction_velocity"] * P["optimal_fiber_length"])
    return fiber / P["optimal_fiber_length"], norm_speed, cos_alpha


def _rigid_tendon_terms(muscle):
    """F̃_T = a·active + passive of a rigid tendon: (active, passive), functions of t."""
    length, speed, cos_alpha = _rigid_fiber(muscle)
    return (muscle.active_force_length(length) * muscle.force_velocity(speed) * cos_alpha,
            muscle.passive_force_length(length) * cos_alpha)


def _check(muscles, times):
    if not muscles:
        raise ModelError("static_optimization needs at least one muscle.")
    for m in muscles:
        if getattr(m, "prescribed_motion", None) is None:
            raise ModelError(f"static_optimization needs muscles on a prescribed motion; muscle `{m.name}` has no `prescribed_motion`.")
    nv = muscles[0].moment_arms.numel()
    if any(m.moment_arms.numel() != nv for m in muscles):
        raise ModelError("static_optimization needs muscles acting on the same coordinates.")
    times = np.asarray(times, dtype=float).ravel()
    if times.size < 2 or np.any(np.diff(times) <= 0):
        raise ModelError("static_optimization needs at least two increasing times.")
    return times, nv


def _required(generalized_force, times, nv):
    """The generalized forces as an SX function of time: an SX column of t, or a table (len(times), nv)."""
    if isinstance(generalized_force, ca.SX):
        others = [s.name() for s in ca.symvar(generalized_force) if not ca.is_equal(s, TIME)]
        if generalized_force.shape != (nv, 1) or others:
            raise ModelError(f"`generalized_force` of static_optimization must be an ({nv}, 1) expression of time alone; "
                             f"got shape {generalized_force.shape}" + (f" using `{others[0]}`." if others else "."))
        return generalized_force, None
    table = np.asarray(generalized_force, dtype=float)
    if table.size != times.size * nv:
        raise ModelError(f"`generalized_force` of static_optimization needs {times.size}×{nv} values (one row per time); got shape {table.shape}.")
    return ca.SX.zeros(nv, 1), np.reshape(table, (times.size, nv)).T


def _share(coefficients, required, lower, reserve_weight):
    """Minimum Σa² + w‖s‖² with C_k a_k + s_k = d_k at every time k; ``coefficients`` (K, nv, M)."""
    K, nv, M = coefficients.shape
    a, s = ca.SX.sym("a", M, K), ca.SX.sym("s", nv, K)
    # every time's rows C_k a_k + s_k − d_k at once: one block-diagonal product (the same operations as K products)
    k, i, m = np.meshgrid(np.arange(K), np.arange(nv), np.arange(M), indexing="ij")
    C = ca.DM.triplet((k * nv + i).ravel().tolist(), (k * M + m).ravel().tolist(), ca.DM(np.asarray(coefficients, dtype=float).ravel()),
                      K * nv, K * M)
    rows = ca.mtimes(C, ca.vec(a)) + ca.vec(s) - ca.DM(np.asarray(required, dtype=float).ravel())
    nlp = {"x": ca.vertcat(ca.vec(a), ca.vec(s)), "f": ca.sumsqr(a) + reserve_weight * ca.sumsqr(s), "g": rows}
    solver = ca.nlpsol("static_optimization", "ipopt", nlp, {"print_time": False, "ipopt": {"print_level": 0, "sb": "yes", "tol": 1e-10}})
    lo = np.concatenate([np.repeat(np.reshape(lower, (1, M)), K, axis=0).ravel(), np.full(nv * K, -np.inf)])
    hi = np.concatenate([np.ones(M * K), np.full(nv * K, np.inf)])
    sol = solver(x0=np.concatenate([np.repeat(np.reshape(lower, (1, M)), K, axis=0).ravel(), np.zeros(nv * K)]),
                 lbx=lo, ubx=hi, lbg=0.0, ubg=0.0)
    return np.reshape(np.asarray(sol["x"][: M * K]).ravel(), (K, M)).T      # (M, K)


def excitation_from_activation(muscle, times, activation, steps=60):
    """The excitation e(t) ∈ [0, 1] whose activation dynamics give the rate of ``activation`` (bisection)."""
    return _excitations([muscle], times, np.asarray(activation, dtype=float)[None, :], steps)[0]


def _excitations(muscles, times, activations, steps=60):
    """:func:`excitation_from_activation` of every muscle at once (``activations``: one row per muscle)."""
    params = [m.params for m in muscles]
    column = lambda key: np.array([P[key] for P in params])[:, None]  # noqa: E731
    rate = np.gradient(activations, times, axis=1)
    lo, hi = np.zeros_like(activations), np.ones_like(activations)
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        fast = activation_rate(mid, activations, column("activation_time_constant"), column("deactivation_time_constant"),
                               column("activation_dynamics_smoothing")) > rate
        hi, lo = np.where(fast, mid, hi), np.where(fast, lo, mid)
    return 0.5 * (lo + hi)


def static_optimization(muscles, times, generalized_force, reserve_weight=1e3) -> dict:
    """A guess ``{symbol: (times, values)}`` for ``problem.guess``: activations, excitations, tendon forces.

    Parameters
    ----------
    muscles : list of DeGrooteFregly2016Muscle
        Muscles on the same ``prescribed_motion``.
    times : array_like
        Increasing times at which to share the forces (the guess is interpolated between them).
    generalized_force : casadi.SX (nv, 1) of time, or array_like (len(times), nv)
        The generalized forces the muscles must produce (e.g. the skeleton's inverse dynamics).
    reserve_weight : float
        Cost per (N·m)² of the reserve that keeps each program feasible.
    """
    times, nv = _check(muscles, times)
    terms = [_rigid_tendon_terms(m) for m in muscles]
    arms = [m.moment_arms * m.params["max_isometric_force"] for m in muscles]
    need, table = _required(generalized_force, times, nv)
    f = ca.Function("static_terms", [TIME], [ca.vertcat(*[t[0] for t in terms]), ca.vertcat(*[t[1] for t in terms]),
                                             ca.horzcat(*arms), need]).map(times.size)
    active, passive, arm, required = (np.asarray(x) for x in f(times[None, :]))   # (M, K), (M, K), (nv, M·K), (nv, K)
    M, K = active.shape
    arm = np.reshape(arm, (nv, K, M)).transpose(1, 0, 2)               # (K, nv, M)
    required = required if table is None else table
    lower = np.array([m.params["minimum_activation"] for m in muscles])
    coefficients = arm * active.T[:, None, :]
    residual = required.T - np.einsum("knm,km->kn", arm, passive.T)
    a = np.clip(_share(coefficients, residual, lower, reserve_weight), lower[:, None], 1.0)
    guess = {}
    for m, row, act, pas, excitation in zip(muscles, a, active, passive, _excitations(muscles, times, a)):
        guess[m.activation] = (times, row)
        guess[m.excitation] = (times, excitation)
        if m.normalized_tendon_force is not None:
            guess[m.normalized_tendon_force] = (times, row * act + pas)
    return guess


__all__ = ["static_optimization", "excitation_from_activation"]
