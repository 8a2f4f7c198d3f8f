"""Local error of a midpoint-vi solution, by step doubling (for mesh refinement with ``scheme="midpoint-vi"``).

On each interval ``[t_k, t_{k+1}]`` the discrete flow of the midpoint rule is
stepped twice with half the step, from the solution's node ``(q_k, p_k)``
with the interval's held control ``u_k``.  The midpoint rule is second order,
so its local error is ``O(h³)``; the difference between the two-half-step
configuration ``q̃_{k+1}`` and the solution's ``q_{k+1}`` is ``(1 − 2⁻²)``
of the full step's local error (Richardson; Hairer, Nørsett & Wanner,
*Solving ODEs I*, §II.4), so

    ε_k = (4/3) max_i |q̃_{k+1,i} − q_{k+1,i}| / (1 + max_k |q_{k,i}|).

The momentum ``p_k = P⁻_k − (h_k/2) Gᵀλ_k`` at a node (see
:mod:`colloc.transcription.discrete_mechanics`) is the arriving momentum of a step whose
constraint impulse weight is ``h/2``, so the half steps use weights ``h/4``
(at ``q_k``) and ``h/2`` (at the midpoint, an interior node of two halves).

Legend: ``q`` coordinates, ``p`` momenta, ``u`` controls, ``h`` step.
"""
from __future__ import annotations

import numpy as np

from ..transcription.discrete_mechanics import ConvergenceError, MidpointVI

#: Power of h at which the local error of the midpoint rule shrinks.
ORDER = 3


def local_errors(problem, trajectory, forcing=None, vi=None) -> np.ndarray:
    """Relative local error ``ε_k`` of every interval of a midpoint-vi ``trajectory`` of ``problem``.

    ``vi``: the :class:`MidpointVI` of ``problem`` when the caller has it already (its discrete flow is reused).

    Returns
    -------
    ndarray, shape (num_intervals,)
        ``inf`` where a half step does not converge.
    """
    vi = vi or MidpointVI(problem, forcing or trajectory.metadata.get("forcing") or "midpoint")
    t = trajectory.time
    Q = np.array([trajectory[n] for n in vi.coordinate_names]).reshape(len(vi.coordinate_names), t.size)
    U = np.array([trajectory[n][:-1] for n in vi.control_names]).reshape(len(vi.control_names), t.size - 1)
    LAM = np.array([trajectory[n] for n in vi.multiplier_names]).reshape(len(vi.multiplier_names), t.size)
    par = vi.parameter_vector(trajectory.parameters if vi.parameter_names else None)
    P = vi.node_states(t, Q, U, LAM, par)[0]
    scale = 1.0 + np.abs(Q).max(axis=1)
    h = np.diff(t)
    try:  # every step's two half steps at once: one mapped Newton solve each
        q2 = _half_steps(vi, t, Q, P, U, LAM, par)
    except RuntimeError:  # a rootfinder gave up somewhere: step one interval at a time to find where
        q2 = _one_by_one(vi, t, Q, P, U, LAM, {n: trajectory.parameters[n] for n in vi.parameter_names})
    with np.errstate(invalid="ignore"):
        errors = (4.0 / 3.0) * np.max(np.abs(q2 - Q[:, 1:]) / scale[:, None], axis=0, initial=0.0)
    return np.where(np.isfinite(errors) & (h > 0), errors, np.inf)


def _half_steps(vi, t, Q, P, U, LAM, par, tolerance=1e-12):
    """``q̃_{k+1}`` of every interval from two mapped half steps; NaN where Newton's method did not converge
    (the residual check of :meth:`MidpointVI.step`)."""
    n = t.size - 1
    mid = 0.5 * (t[:-1] + t[1:])
    h = np.diff(t)
    U = U if U.size else np.zeros((0, n))
    step, residual = vi.step_function(tolerance).map(n), vi.step_residual().map(n)
    pars = np.tile(np.reshape(par, (-1, 1)), (1, n))
    out = []
    q1, p1 = Q[:, :-1], P[:, :-1]
    for t1, t2, c in ((t[:-1], mid, h / 4), (mid, t[1:], h / 2)):
        args = [q1, p1, U, t1[None, :], t2[None, :], c[None, :], pars, LAM[:, :-1]]
        q2, p2, lam1 = (np.asarray(a) for a in step(*args))
        r = np.asarray(residual(np.vstack([q2, lam1]), *args[:-1]))
        bad = ~np.all(np.isfinite(r), axis=0) | (np.abs(r).max(axis=0, initial=0.0) > 10 * tolerance * np.maximum(1.0, np.abs(p1).max(axis=0, initial=0.0)))
        q2 = np.where(bad[None, :], np.nan, q2)
        out.append(q2)
        q1, p1 = q2, p2
    return out[-1].reshape(Q.shape[0], n)


def _one_by_one(vi, t, Q, P, U, LAM, params):
    """``q̃_{k+1}`` of every interval, one step at a time (NaN where a half step does not converge)."""
    out = np.full((Q.shape[0], t.size - 1), np.nan)
    for k in range(t.size - 1):
        h, mid = t[k + 1] - t[k], 0.5 * (t[k] + t[k + 1])
        u = U[:, k] if U.size else None
        try:
            qm, pm, _ = vi.step(Q[:, k], P[:, k], u, t[k], mid, params, weight=h / 4, lam_guess=LAM[:, k])
            out[:, k] = vi.step(qm, pm, u, mid, t[k + 1], params, weight=h / 2, lam_guess=LAM[:, k])[0]
        except ConvergenceError:
            pass
    return out
