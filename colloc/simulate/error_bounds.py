"""What a file's own accuracy estimate allows each interval integrated alone to drift by.

``colloc verify`` integrates every mesh interval alone from the file's state at its start, with the file's
control interpolant, and compares the end with the file's state there (:mod:`colloc.simulate.checks`).
On a correct file that error is the collocation's local error, which the solve already estimated: the
interpolated solution ``x̃`` leaves the residual ``r = ẋ̃ − f(t, x̃, ũ)`` and its integral over an interval,
``η_ik = ∫|r_i| dt``, is stored per state in the file's metadata (``accuracy["state_errors"]``, the largest
``η_ik`` of each state, :func:`colloc.pipeline.accuracy.assess`).  The true flow from the interval's start
drifts from ``x̃`` by ``e`` with ``ė = J e − r``, ``e(0) = 0`` (``J = ∂f/∂x``), so to first order in the
interval length ``h``

    |e_i(h)| ≤ η̂_i + h Σ_j |J_ij| η̂_j,

``η̂`` the stored claims and ``|J_ij|`` the largest magnitude over the file's grid points.  The second term
is what a state inherits from the others over one interval (a coordinate from its speed, ``q̇ = v``: the
coordinates' own residuals vanish with Hermite–Simpson's cubic and their error is the speeds' error
integrated).  That bound, plus the integrator's tolerance, is each state's limit: it needs no tolerance
picked by hand, it follows the mesh (a coarse, unresolved mesh claims, and is allowed, more), and an edited
file cannot raise it, because the claims were written by the solve (an edited state's interval ends where
the dynamics take it, not where the file says).

Measured on Moco's 2-D walking tracking problem (problems/gait2d_tracking.py, 50 Hermite–Simpson intervals,
smooth contacts, 18 muscles; CVODES BDF at tolerances 1e-10, 2.5 s of CPU for the whole ``verify``): every
interval-end error is at most 0.24 of its limit (the coordinates' limits are 1e-5–1e-2, the activations'
1e-5–8.5e-4; the speeds' are loose near the contacts, whose stiffness enters ``|J|``), while an activation
raised by 0.01 over a fifth of the half cycle fails its check by a factor of 22 (tests/test_verify_gait.py).
The fixed relative tolerance this replaces (1e-2 of the local scale) failed the same correct file at heel
strike, where the mesh under-resolves the contact.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from ..discretization.interpolant import Interpolant
from ..errors import ModelError
from ..transcription import make_options, point_function
from .checks import TOLERANCE


def claimed_errors(trajectory) -> dict | None:
    """``{state: η̂}`` from the file's ``metadata["accuracy"]["state_errors"]``, or None if it has none."""
    acc = trajectory.metadata.get("accuracy") if isinstance(trajectory.metadata, dict) else None
    claims = acc.get("state_errors") if isinstance(acc, dict) else None
    if not isinstance(claims, dict) or not claims:
        return None
    return {str(k): float(v) for k, v in claims.items()}


def interval_limits(problem, trajectory, tolerance=TOLERANCE, rtol=1e-10, atol=1e-10) -> dict | None:
    """Each state's limit on its interval-end error (module notes), or None when the file claims nothing
    or the model has no explicit form (its Jacobian ``∂f/∂x`` is not available).

    To the propagated claim ``η̂_i + h Σ_j |J_ij| η̂_j`` are added what the claim leaves out, each times
    the state's scale ``max(1, median |x_i|)`` (a median: one edited value cannot inflate it):
    ``tolerance``, to which the stored values satisfy the scheme's defects (the ``defects`` check's
    tolerance; an interval integrated from them ends as far from the stored end), and the integrator's
    ``rtol`` plus ``atol``.

    Returns
    -------
    dict of str -> float
    """
    claims = claimed_errors(trajectory)
    model = problem.model
    names = [v.name for v in model.states]
    if claims is None or any(n not in claims for n in names):
        return None
    try:
        point, meta = point_function(problem, make_options(mode="explicit"))
    except ModelError:  # no explicit form: no Jacobian to propagate the claims with
        return None
    if meta["z_names"]:
        return None
    eta = np.array([claims[n] for n in names])
    jac = np.abs(_jacobians(problem, point, trajectory)).max(axis=2)          # (nx, nx)
    h = float(np.max(Interpolant(trajectory).h))
    scale = np.array([max(1.0, float(np.median(np.abs(trajectory[n])))) for n in names])
    limits = eta + h * jac @ eta + (tolerance + rtol) * scale + atol
    return dict(zip(names, limits.tolist()))


def _jacobians(problem, point, traj):
    """``∂f/∂x`` at every grid point of the file, shape ``(nx, nx, num_points)``."""
    model = problem.model
    nx = len(model.states)
    t, x, zdot = ca.SX.sym("t"), ca.SX.sym("x", nx), ca.SX.sym("zdot", 0)
    u, lam = ca.SX.sym("u", len(model.controls)), ca.SX.sym("lam", len(model.multipliers))
    p = ca.SX.sym("p", len(model.parameters))
    xdot = point(t, x, zdot, u, lam, p)[0]
    f = ca.Function("state_jacobian", [t, x, u, lam, p], [ca.vec(ca.jacobian(xdot, x))])
    N = traj.time.size
    column = lambda names: np.array([traj[n] for n in names], dtype=float).reshape(len(names), N)  # noqa: E731
    params = np.array([traj.parameters[v.name] for v in model.parameters], dtype=float).reshape(-1, 1)
    out = f.map(N)(traj.time.reshape(1, -1), column([v.name for v in model.states]),
                   column([v.name for v in model.controls]), column([v.name for v in model.multipliers]),
                   np.repeat(params, N, axis=1))
    return np.asarray(out).reshape(nx, nx, N, order="F")


__all__ = ["claimed_errors", "interval_limits"]
