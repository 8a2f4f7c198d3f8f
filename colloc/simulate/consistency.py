"""Does every stored value of a file agree with its scheme, its dynamics and its objective?

The simulation checks of ``colloc verify`` (:func:`colloc.simulate.checks.check_solution`)
integrate each mesh interval from its start; they read the states at the mesh
points and the controls, so a state edited between mesh points (a
Hermite–Simpson midpoint), a derivative column edited, or an objective edited
in the metadata would pass them.  The checks here read every stored value:

* **grid**: every row's time is where the scheme puts its node between the mesh points;
* **defects**: the scheme's own defects ``Σ_j a_kj x_j + h Σ_j b_kj ẋ_j``
  (:meth:`colloc.discretization.schemes.Scheme.defect_coefficients`) of every interval, from
  the file's states and ``NAME.dot`` columns: zero for what the solver wrote;
* **derivatives**: each ``NAME.dot`` column at the collocation points against
  the model's right-hand side, and each implicit residual row against zero, at
  the file's own states, controls and multipliers;
* **objective**: the objective the metadata records against the problem's cost
  terms recomputed from the file (the scheme's quadrature on the grid).

Tolerances are relative to scales a tamperer cannot inflate cheaply: the
*local scale* of a column at an interval is ``max(1, median |value|)`` over the
grid points of that interval and its two neighbours (:func:`local_scale`), so
one edited value — ``x = 1e6`` at one point — moves no scale; the objective's
scale is ``max(1, |recomputed objective|)``, not the file's value.

All arithmetic is vectorised over the grid (numpy gathers, one mapped CasADi
call), so a file of millions of rows is checked in linear time.
"""
from __future__ import annotations

import math

import casadi as ca
import numpy as np

from .checks import Check, local_scale
from ..discretization.grid import Grid
from ..discretization.schemes import get_scheme
from ..results.trajectory import Trajectory


def point_scale(values, grid: Grid) -> np.ndarray:
    """:func:`local_scale` at every grid point (a shared mesh point takes the larger of its intervals'), shape ``(num_points,)``."""
    per_interval = local_scale(values, grid.nodes_of_intervals)
    out = np.zeros(grid.num_points)
    np.maximum.at(out, grid.nodes_of_intervals, per_interval[:, None])
    return out


def with_consistency_checks(problem, traj, checks, tolerance, dynamics_tolerance) -> list:
    """``checks`` (of :func:`colloc.simulate.checks.check_solution`) with :func:`consistency_checks` before the
    dynamics checks; unchanged when the file failed the basic checks (nothing more can be judged)."""
    if not any(c.name == "bounds" for c in checks):
        return checks
    k = next((i for i, c in enumerate(checks) if c.name.startswith("dynamics:")), len(checks))
    return checks[:k] + consistency_checks(problem, traj, tolerance, dynamics_tolerance) + checks[k:]


def consistency_checks(problem, traj, tolerance, dynamics_tolerance, contact=None) -> list:
    """The ``grid``, ``defects``, ``derivatives`` and ``objective`` checks (module doc) of a single-phase file.

    ``contact`` (:func:`colloc.simulate.contact_checks.consistency_contact`) adapts them to a contact-implicit
    file: ``ends`` ``{state: (x_end, f_end)}`` the values each interval ends on (pre-impact states, its own end
    derivatives), ``force(rows)`` the contact forces' generalised force in the residual rows at those rows,
    ``control_ends`` the controls each interval ends on (its objective's quadrature takes them at the interval's
    last node) and ``slack``, the most the pull of free steps towards the given mesh (not in the file) adds.

    ``tolerance`` is the constraint tolerance of ``colloc verify`` (``--tolerance``).  The defects and
    derivatives of a model whose kinematic-constraint method does not close the defects on the stored
    nodes (the projection of ``bordalba2023`` ends each interval on a projected state, ``posa2016``
    corrects the midpoint velocities) are held to ``dynamics_tolerance`` instead: the stored values
    differ from the ones the solver's defects used by the size of that projection or correction.
    A file whose metadata names no scheme colloc knows, or whose point count does not fit it, gets
    none of these checks (its interpolant is unknown; :class:`colloc.discretization.interpolant.Interpolant` says so).
    """
    try:
        scheme = get_scheme(traj.metadata.get("scheme", ""))
        grid = Grid.of_points(traj.time, scheme)
    except Exception:  # noqa: BLE001  the simulation checks refuse such a file by name
        return []
    states = [v.name for v in problem.model.states]
    if any(f"{n}.dot" not in traj for n in states):
        return []
    contact = contact or {}
    projected = None if contact else projected_ends(problem, traj, grid)
    tol = tolerance if projected is not None or _plain_nodes(problem, traj) else dynamics_tolerance
    ends = contact.get("ends") if projected is None else projected["ends"]
    checks = [_grid_times(traj, grid, tolerance), _defects(traj, grid, states, tol, ends),
              _derivatives(problem, traj, grid, tol, contact.get("force"), projected)]
    if "objective" in traj.metadata and not contact:  # (a phase of a multi-phase file: its objective is checked over all phases)
        checks.append(_objective(problem, traj, grid, tolerance))
    elif "objective" in traj.metadata and "control_ends" in contact:
        recompute = lambda: objective_value(problem, traj, grid, contact["control_ends"])  # noqa: E731
        checks.append(_compare_objective(traj.metadata.get("objective"), recompute, tolerance, contact.get("slack", 0.0)))
    return checks


def _grid_times(traj, grid, tol) -> Check:
    """Every row's time is where the scheme puts its node (``t_i + h_i s_j``): the defects and the quadrature
    read the node positions from the mesh points, so a time edited between them would go unseen."""
    t = traj.time
    expected = t[0] + grid.tau * (t[-1] - t[0])
    gap = np.abs(t - expected)
    limit = tol * np.maximum(1.0, np.abs(expected))
    k = int(np.argmax(gap / limit))
    if gap[k] <= limit[k]:
        return Check("grid", True, float(gap[k]), float(limit[k]), f"every time at its `{grid.scheme.name}` node")
    return Check("grid", False, float(gap[k]), float(limit[k]),
                 f"row {k + 1} is at t = {t[k]:.10g}; its `{grid.scheme.name}` node is at t = {expected[k]:.10g}")


def _plain_nodes(problem, traj) -> bool:
    """Whether the solver's defects closed on the file's own node values (no constraint method adjusts them)."""
    from ..transcription import make_options
    from ..transcription.constraints import METHODS

    if not problem.model.constraints:
        return True
    name = traj.metadata.get("constraint_method") or make_options().constraint_method
    return getattr(METHODS.get(name), "plain_nodes", True)


def _defects(traj, grid, states, tol, ends=None) -> Check:
    """Every defect of every interval, from the file's states and derivatives (each interval's last node
    taking ``ends[name]``, ``(x_end, f_end)`` of shape ``(n,)`` each, where given)."""
    coefficients = grid.scheme.defect_coefficients()
    if coefficients is None or not states:
        return Check("defects", True, 0.0, tol, "no linear defects to check")
    a, b = coefficients
    idx = grid.nodes_of_intervals
    h = np.diff(traj.time[grid.mesh_points])
    worst, text = -math.inf, ""
    for name in states:
        X, F = traj[name][idx], traj[f"{name}.dot"][idx]          # (n, num_nodes)
        if ends and name in ends:
            X[:, -1], F[:, -1] = ends[name]
        defect = np.abs(X @ a.T + h[:, None] * (F @ b.T))          # (n, defect kinds)
        limit = tol * local_scale(traj[name], idx)
        ratio = (defect / limit[:, None]).max(axis=1)
        k = int(np.argmax(ratio))
        if ratio[k] > worst:
            worst = float(ratio[k])
            t0, t1 = traj.time[idx[k, 0]], traj.time[idx[k, -1]]
            text = (f"`{name}`: defect {defect[k].max():.2e} > {limit[k]:.1e} in interval {k} (t = {t0:.6g} to {t1:.6g}): "
                    f"the stored states and derivatives do not satisfy the `{grid.scheme.name}` scheme there")
    ok = worst <= 1.0
    if ok:
        text = f"every defect of every interval within {tol:.1e} × the local scale (largest ratio {worst:.2g})"
    return Check("defects", ok, worst, 1.0, text)


def _point_values(problem, traj, rows, states=None):
    """The model's point function at ``rows`` of the file: ``(xdot, res, L)`` as arrays ``(·, len(rows))``, and its meta.

    ``states``, shape ``(num_states, len(rows))``, replaces the file's states there (the projection states)."""
    from ..transcription import make_options, point_function

    model = problem.model
    f, meta = point_function(problem, make_options())
    rows = np.asarray(rows)

    def stack(names):
        return np.array([traj[n][rows] for n in names]).reshape(len(names), rows.size)

    params = np.array([traj.parameters[v.name] for v in model.parameters]).reshape(-1, 1)
    x = stack([v.name for v in model.states]) if states is None else np.asarray(states, dtype=float)
    args = [traj.time[rows].reshape(1, -1), x, stack(meta["z_names"]),
            stack([v.name for v in model.controls]), stack([v.name for v in model.multipliers]), params]
    out = f.map(rows.size).call([ca.DM(a) for a in args])
    xdot, res, _, _, L = (np.asarray(o, dtype=float).reshape(-1, rows.size) for o in out)
    return xdot, res, L, meta


def _derivatives(problem, traj, grid, tol, force=None, projected=None) -> Check:
    """Each ``NAME.dot`` at the collocation points against the model's right-hand side (or its residual against 0;
    minus ``force(rows)``, the contact forces' generalised force in the residual rows, where given).

    With ``projected`` (:func:`projected_ends`) the residual rows at the interval ends are those at the
    projection states, where the solver imposed them."""
    from .checks import _collocation_rows

    model = problem.model
    rows = _collocation_rows(traj)
    xdot, res, _, meta = _point_values(problem, traj, rows)
    if force is not None:
        res = res - force(rows)
    if projected is not None and res.size:
        at = np.flatnonzero(np.isin(rows, projected["rows"]))
        column = np.zeros(traj.time.size, dtype=int)  # grid row -> its column of the projected residuals
        column[projected["rows"]] = np.arange(np.size(projected["rows"]))
        res[:, at] = projected["residual"][:, column[rows[at]]]
    worst, text = -math.inf, ""
    implicit = dict(zip(meta["res_names"], res))
    for i, v in enumerate(model.states):
        stored = traj[f"{v.name}.dot"]
        scale = point_scale(stored, grid)[rows]
        gap = np.abs(implicit[v.name]) if v.name in implicit else np.abs(stored[rows] - xdot[i])
        ratio = gap / (tol * scale)
        k = int(np.argmax(ratio)) if ratio.size else 0
        if ratio.size and ratio[k] > worst:
            worst = float(ratio[k])
            what = f"the residual of `{v.name}` is {gap[k]:.2e}" if v.name in implicit else \
                f"`{v.name}.dot` is {stored[rows][k]:.8g}; the dynamics give {xdot[i, k]:.8g}"
            text = f"{what} at t = {traj.time[rows][k]:.8g} (limit {tol * scale[k]:.1e}): the derivative columns do not follow the model"
    ok = not (worst > 1.0) and (math.isfinite(worst) or worst == -math.inf)
    if ok:
        text = f"every derivative column follows the model at {rows.size} collocation points (largest ratio {max(worst, 0.0):.2g})"
    return Check("derivatives", ok, worst, 1.0, text)


def projected_ends(problem, traj, grid):
    """The states each interval of a ``bordalba2023`` file ends on, from the projection multipliers it records.

    The projection method closes interval k's defects, and imposes the residual rows, on the projection state
    ``x'_{k+1} = x_{k+1} − F_x(x_{k+1})ᵀ μ_k`` (``F = [φ; φ̇; ψ]``, :mod:`colloc.transcription.constraints`),
    not on the stored ``x_{k+1}``, which satisfies the mesh-point constraints instead; both differ by up to
    the slack bound of μ.  With ``μ`` from the file's ``projection_multipliers`` the defects and the residual
    rows are checked where the solver imposed them, to the constraint tolerance.

    Returns None for a file without them (or whose labels are not the model's), else a dict: ``rows`` (the
    interval ends' rows, increasing), ``ends`` ``{state: (x', ẋ')}`` each of shape ``(n,)``, ``residual``
    ``(num_residual_rows, n)`` at ``x'``.
    """
    record = traj.metadata.get("projection_multipliers")
    model = problem.model
    if not isinstance(record, dict) or not model.constraints or traj.metadata.get("constraint_method") != "bordalba2023":
        return None
    levels, labels, _ = model.mesh_levels()
    mu = np.asarray(record.get("values", []), dtype=float)
    if record.get("labels") != [f"{lab.split(':', 1)[1]}.mu" for lab in labels] or mu.shape != (len(labels), grid.num_intervals):
        return None
    rows = np.asarray(grid.interval_ends)
    names = [v.name for v in model.states]
    X = np.array([traj[n][rows] for n in names]).reshape(len(names), rows.size)
    params = np.array([traj.parameters[v.name] for v in model.parameters]).reshape(-1, 1)
    Fx = levels.map(rows.size)(traj.time[rows].reshape(1, -1), X, params)[1]   # (num_levels, n · num_states), point by point
    Fx = np.asarray(Fx, dtype=float).reshape(len(labels), rows.size, len(names))
    Xp = X - np.einsum("lks,lk->sk", Fx, mu)
    xdot, res, _, _ = _point_values(problem, traj, rows, Xp)
    return dict(rows=rows, ends={n: (Xp[i], xdot[i]) for i, n in enumerate(names)}, residual=res)


def objective_value(problem, traj, grid, control_ends=None) -> float:
    """The problem's cost terms recomputed from ``traj``: the scheme's quadrature of each integrand on the grid
    (``(t_f − t_0) Σ_k W_k L(t_k)``) plus each final term.

    ``control_ends`` ``{control: (n,)}``: the value each interval ends on where the controls may jump at the mesh
    points (free steps): each interval's last node then takes its own end value, as the transcription's quadrature
    does, and the next interval's first node the file's."""
    from ..transcription import endpoint_function

    model = problem.model
    rows = np.arange(traj.time.size)
    total = 0.0
    if any(c.integral is not None for c in problem.costs):
        _, _, L, _ = _point_values(problem, traj, rows)
        L = L.sum(axis=0)
        if control_ends:
            ends = grid.interval_ends
            cols = {n: traj[n] for n in traj.names}
            for name, values in control_ends.items():
                cols[name] = traj[name].copy()
                cols[name][ends] = values
            end_traj = Trajectory(traj.time, cols, traj.kinds, traj.parameters, traj.metadata)
            nodes = grid.nodes_of_intervals
            per_node = L[nodes]
            per_node[:, -1] = _point_values(problem, end_traj, ends)[2].sum(axis=0)
            total += float((traj.time[-1] - traj.time[0]) * (grid.fractions[:, None] * grid.scheme.weights[None, :] * per_node).sum())
        else:
            total += float((traj.time[-1] - traj.time[0]) * (L @ grid.weights))
    finals = [c.final for c in problem.costs if c.final is not None]
    if finals:
        pw = [v for v in model.variables if v.kind != "parameter"]
        e0, ef = ([traj[v.name][r] for v in pw] for r in (0, -1))
        params = [traj.parameters[v.name] for v in model.parameters]
        for expr in finals:
            total += float(endpoint_function(problem, expr)(traj.time[0], traj.time[-1], e0, ef, params))
    return total


def _objective(problem, traj, grid, tol) -> Check:
    return _compare_objective(traj.metadata.get("objective"), lambda: objective_value(problem, traj, grid), tol)


def phases_objective_check(mp, phases, recorded, tol) -> Check:
    """The objective a multi-phase file records against its phases' recomputed cost terms plus the
    multi-phase Mayer terms (:meth:`colloc.pipeline.multiphase_problem.MultiPhaseProblem.minimize`) at the file's endpoint values.

    ``phases`` are the file's phases on their own clocks.  A Mayer term in an impact's
    impulse or post-impact speed (not stored in the file) is not recomputed: the check says so and passes.
    """
    from ..errors import ProblemError
    from ..transcription.multiphase import _Endpoints

    def value():
        total = 0.0
        for ph, traj in zip(mp.phases, phases):
            grid = Grid.of_points(traj.time, get_scheme(traj.metadata.get("scheme", "")))
            total += objective_value(ph.problem, traj, grid)
        if mp.costs:
            ends = _Endpoints(mp, [])
            f = ends.function("costs", [ca.vertcat(*[c[1] for c in mp.costs])], "the multi-phase costs")
            total += float(np.sum(np.asarray(f(_endpoint_vector(mp, phases), np.zeros(0)), dtype=float)))
        return total

    try:
        return _compare_objective(recorded, value, tol)
    except ProblemError:
        return Check("objective", True, 0.0, tol, "not recomputed: a multi-phase cost uses an impact's impulse or speed")


def _endpoint_vector(mp, phases) -> np.ndarray:
    """The slots of :class:`colloc.transcription.multiphase._Endpoints` from the file's phases: per phase ``t0``,
    ``tf``, the pointwise variables at its first and last row, and each parameter once."""
    out, seen = [], set()
    for ph, traj in zip(mp.phases, phases):
        model = ph.problem.model
        pw = [v for v in model.variables if v.kind != "parameter"]
        out += [traj.time[0], traj.time[-1]] + [traj[v.name][0] for v in pw] + [traj[v.name][-1] for v in pw]
        for v in model.parameters:
            if v.name not in seen:
                seen.add(v.name)
                out.append(traj.parameters[v.name])
    return np.array(out, dtype=float)


def step_pull_bound(traj, n) -> float:
    """The largest pull of ``n`` free steps towards the given mesh, ``STEP_PULL Σ (σ_i/σ̄_i − 1)²``, each ratio
    within the bound the solve used (the file's ``free_steps`` if a number, else the default)."""
    from ..transcription.contacts import STEP_PULL, STEP_RATIO

    ratio = traj.metadata.get("free_steps")
    ratio = float(ratio) if isinstance(ratio, (int, float)) and not isinstance(ratio, bool) and ratio > 1 else STEP_RATIO
    return STEP_PULL * n * (ratio - 1.0) ** 2


def _compare_objective(recorded, compute, tol, slack=0.0) -> Check:
    """``slack``: what the recorded objective may hold beyond the problem's cost terms (a contact file's pull of
    its free steps, which the file does not hold)."""
    if not isinstance(recorded, (int, float)) or isinstance(recorded, bool):
        return Check("objective", True, 0.0, tol, "the file records no objective")
    value = compute()
    limit = tol * max(1.0, abs(value)) + slack
    gap = abs(float(recorded) - value)
    if gap <= limit:
        return Check("objective", True, gap, limit, f"{float(recorded):.10g} as recorded, recomputed {value:.10g}")
    return Check("objective", False, gap, limit, f"the file records {float(recorded):.10g}; its own values give {value:.10g} "
                                                 f"(difference {gap:.2e} > {limit:.1e})")


__all__ = ["consistency_checks", "with_consistency_checks", "projected_ends", "phases_objective_check", "local_scale", "point_scale", "objective_value",
           "step_pull_bound"]
