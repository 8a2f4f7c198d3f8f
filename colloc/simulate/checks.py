"""Does a trajectory solve a problem?  The checks ``colloc verify`` makes, each with its tolerance.

A file can be read and still not be a solution: cut off before the horizon
ends, with time running backwards, a NaN in a state, or states edited after
the solve.  :func:`check_solution` answers with one :class:`Check` per
question, each passed or failed with a one-line reason:

* **time**: finite and strictly increasing;
* **horizon**: starts at ``t0`` and ends at ``tf`` (or inside the bounds of a
  free final time);
* **finite**: every state, control, multiplier and parameter is finite;
* **initial / final**: the boundary conditions of ``Problem.initial`` and
  ``Problem.final``;
* **bounds**: every variable inside its bounds at every grid point;
* **path**: each path constraint at the scheme's collocation points;
* **boundary**: each endpoint constraint of ``Problem.boundary``;
* **dynamics** (one check per state): each mesh interval integrated alone
  from the file's state at its start, with the file's control interpolant
  (CasADi CVODES or IDAS, tolerances 1e-10), must end at the file's state at
  its end.  Restarting every interval measures the local error of the
  collocation, ``O(h^{p+1})`` for a scheme of order ``p``, without the
  exponential drift a whole-horizon simulation of an unstable system shows.

A constraint value ``g`` with bounds ``[lo, hi]`` passes when
``lo − tol·max(1, |lo|) ≤ g ≤ hi + tol·max(1, |hi|)``; a state passes the
dynamics check when its largest interval-end error is at most
``dynamics_tol`` times the state's local scale at that interval (:func:`local_scale`: max(1, median |x|)
over the grid points of the interval and its neighbours, which one edited value cannot inflate).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: Default tolerance of the constraint checks (relative to max(1, |bound|)).
TOLERANCE = 1e-6
#: Default tolerance of the one-interval simulations (relative to the local scale, :func:`local_scale`).
DYNAMICS_TOLERANCE = 1e-2


@dataclass
class Check:
    """One verdict: ``name`` (e.g. ``bounds`` or ``dynamics:cart.x``), ``passed``, the measured
    ``value`` against its ``limit``, ``message`` saying what was found, and ``where``: the spans of time
    ``(start, end)`` [s] at which a failed check failed (each failing interval of a dynamics check; each
    collocation point where a path row fails, an impact's or a comparison's instant, as ``(t, t)``), for refining the mesh there
    (:func:`colloc.pipeline.refine.split_where`); empty when it passed or names no time."""

    name: str
    passed: bool
    value: float
    limit: float
    message: str
    where: tuple = ()

    def line(self) -> str:
        return f"  {'pass' if self.passed else 'FAIL'}  {self.name:34s} {self.message}"


def check_solution(problem, trajectory, tolerance=TOLERANCE, dynamics_tolerance=DYNAMICS_TOLERANCE, interval_errors=None) -> list:
    """Check that ``trajectory`` solves ``problem``; return one :class:`Check` per question (see module doc).

    ``interval_errors(problem, trajectory) -> (errors, mesh_times, message)`` integrates each
    interval alone (:func:`colloc.simulate.verify.interval_errors`, which :func:`colloc.simulate.verify.verify`
    passes); without it the dynamics are not checked.  They are checked only when the time,
    horizon and finiteness checks pass (a simulation of such a file would say nothing more).
    """
    checks = basic_checks(problem, trajectory, tolerance)
    if not all(c.passed for c in checks):
        return checks
    checks += solution_checks(problem, trajectory, tolerance)
    if interval_errors is not None:
        checks += _dynamics(problem, trajectory, dynamics_tolerance, interval_errors)
    return checks


def solution_checks(problem, trajectory, tolerance=TOLERANCE) -> list:
    """Initial and final conditions, bounds, path and endpoint constraints (the file already passed
    :func:`basic_checks`)."""
    traj = trajectory
    return (_endpoint_values(problem, traj, tolerance) + [_bounds(problem, traj, tolerance)]
            + _paths(problem, traj, tolerance) + _boundaries(problem, traj, tolerance))


def basic_checks(problem, trajectory, tolerance=TOLERANCE) -> list:
    """The checks without which nothing else can be judged: time finite and increasing, the horizon covered,
    every value the problem needs finite."""
    traj, checks = trajectory, []
    t = traj.time
    ordered = bool(np.all(np.isfinite(t)) and np.all(np.diff(t) > 0))
    if not np.all(np.isfinite(t)):
        k = int(np.flatnonzero(~np.isfinite(t))[0])
        checks.append(Check("time", False, math.nan, 0.0, f"time is not finite in row {k + 1}"))
    elif not ordered:
        k = int(np.flatnonzero(np.diff(t) <= 0)[0])
        checks.append(Check("time", False, float(t[k + 1] - t[k]), 0.0,
                            f"time does not increase from row {k + 1} to {k + 2} ({t[k]:.6g} → {t[k + 1]:.6g})"))
    else:
        checks.append(Check("time", True, 0.0, 0.0, f"{t.size} times, increasing"))
    checks.append(_horizon(problem, t, tolerance))
    checks.append(_finite(problem, traj))
    return checks


def check_columns(problem, trajectory):
    """Raise :class:`~colloc.errors.FileFormatError` naming the file and the first variable of ``problem``
    that ``trajectory`` has no column (or parameter value) for: such a file belongs to another problem."""
    from ..errors import FileFormatError, did_you_mean

    where = f"`{trajectory.source}`" if getattr(trajectory, "source", None) else "The trajectory"
    model = problem.model
    for v in model.states + model.controls + model.multipliers:
        if v.name not in trajectory:
            raise FileFormatError(f"{where} has no column `{v.name}`, which problem `{problem.name}` needs; "
                                  f"is it a solution of another problem?{did_you_mean(v.name, trajectory.names)}")
    for v in model.parameters:
        if v.name not in trajectory.parameters:
            raise FileFormatError(f"{where} has no value of parameter `{v.name}`, which problem `{problem.name}` needs."
                                  f"{did_you_mean(v.name, trajectory.parameters)}")


def _allowance(bound, tol):
    return tol * max(1.0, abs(bound)) if math.isfinite(bound) else math.inf


def _excesses(values, lo, hi, tol):
    """The amount by which each of ``values`` leaves ``[lo, hi]`` beyond the allowance (≤ 0: inside)."""
    values = np.asarray(values, dtype=float)
    below = (lo - _allowance(lo, tol)) - values if math.isfinite(lo) else np.full(values.shape, -math.inf)
    above = values - (hi + _allowance(hi, tol)) if math.isfinite(hi) else np.full(values.shape, -math.inf)
    return np.maximum(below, above)


def _excess(values, lo, hi, tol):
    """Largest amount by which ``values`` leave ``[lo, hi]`` beyond the allowance (≤ 0: inside), and where."""
    worst = _excesses(values, lo, hi, tol)
    k = int(np.argmax(worst)) if worst.size else 0
    return (float(worst[k]) if worst.size else -math.inf), k


def _horizon(problem, t, tol):
    t0, (lo, hi) = problem.t0_value, problem.tf_bounds
    start, end = float(t[0]), float(t[-1])
    if not (math.isfinite(start) and math.isfinite(end)):
        return Check("horizon", False, math.nan, tol, "the file's first or last time is not finite")
    if abs(start - t0) > _allowance(t0, tol):
        return Check("horizon", False, abs(start - t0), tol, f"the file starts at t = {start:.8g}; the problem starts at t0 = {t0:.8g}")
    if end < lo - _allowance(lo, tol) or end > hi + _allowance(hi, tol):
        want = f"tf = {lo:.8g}" if lo == hi else f"tf in [{lo:.8g}, {hi:.8g}]"
        cut = " (the file is cut off before the horizon ends)" if end < lo else ""
        return Check("horizon", False, end, hi, f"the file ends at t = {end:.8g}; the problem ends at {want}{cut}")
    return Check("horizon", True, 0.0, tol, f"covers [{start:.8g}, {end:.8g}]")


def _finite(problem, traj):
    model = problem.model
    for v in model.states + model.controls + model.multipliers:
        col = traj[v.name]
        bad = np.flatnonzero(~np.isfinite(col))
        if bad.size:
            k = int(bad[0])
            more = f", and {bad.size - 1} more value{'s' if bad.size > 2 else ''}" if bad.size > 1 else ""
            return Check("finite", False, float(col[k]), 0.0, f"`{v.name}` is {col[k]} at t = {traj.time[k]:.8g} (row {k + 1}){more}")
    for v in model.parameters:
        if not math.isfinite(traj.parameters[v.name]):
            return Check("finite", False, traj.parameters[v.name], 0.0, f"parameter `{v.name}` is {traj.parameters[v.name]}")
    return Check("finite", True, 0.0, 0.0, "every state, control, multiplier and parameter is finite")


def _endpoint_values(problem, traj, tol):
    out = []
    for which, bounds, row in (("initial", problem.initial_bounds, 0), ("final", problem.final_bounds, -1)):
        worst, text = -math.inf, f"{len(bounds)} condition{'s' if len(bounds) != 1 else ''} met"
        for name, (lo, hi) in bounds.items():
            excess, _ = _excess([traj[name][row]], lo, hi, tol)
            if excess > worst:
                worst = excess
                if excess > 0:
                    want = f"{lo:.8g}" if lo == hi else f"[{lo:.8g}, {hi:.8g}]"
                    text = f"`{name}` is {traj[name][row]:.8g} at t = {traj.time[row]:.8g}; the problem asks {want}"
        out.append(Check(which, worst <= 0, max(worst, 0.0), tol, text))
    return out


def _bounds(problem, traj, tol):
    worst, text = -math.inf, "every variable within its bounds at every grid point"
    for name, (lo, hi) in problem.bounds.items():
        values = [traj.parameters[name]] if name in traj.parameters else traj[name] if name in traj else None
        if values is None:
            continue
        excess, k = _excess(values, lo, hi, tol)
        if excess > worst:
            worst = excess
            if excess > 0:
                where = "" if name in traj.parameters else f" at t = {traj.time[k]:.8g}"
                text = f"`{name}` is {np.atleast_1d(values)[k]:.8g}{where}, outside its bounds [{lo:.8g}, {hi:.8g}]"
                spans = () if name in traj.parameters else ((float(traj.time[k]),) * 2,)
    return Check("bounds", worst <= 0, max(worst, 0.0), tol, text, spans if worst > 0 else ())


def symbol_values(symbols, traj, rows) -> list | None:
    """Values of CasADi symbols at the file's ``rows``: time, a column or a parameter
    (:func:`colloc.viz.animation.symbol_values` on the grid rows themselves); None if the file lacks one."""
    from ..viz.animation import symbol_values as values_at

    rows = np.asarray(rows)
    try:
        return values_at(traj, symbols, traj.time[rows], {n: traj[n][rows] for n in traj.names})
    except KeyError:
        return None


def _paths(problem, traj, tol):
    import casadi as ca

    rows = _collocation_rows(traj)
    out = []
    for pc in problem.paths:
        syms = ca.symvar(pc.expr)
        args = symbol_values(syms, traj, rows)
        if args is None:
            out.append(Check(f"path:{pc.name}", False, math.nan, tol, "the file lacks a column this constraint uses"))
            continue
        fn = ca.Function("path", syms, [pc.expr])
        g = np.atleast_2d(np.asarray(fn.map(rows.size).call([np.atleast_2d(a) for a in args])[0], dtype=float))
        worst, where, times = -math.inf, "", set()
        for r in range(g.shape[0]):
            lo, hi = float(pc.lower[r]), float(pc.upper[r])
            excess, k = _excess(g[r], lo, hi, tol)
            if excess > 0:  # every collocation point where this row fails
                times |= set(traj.time[rows][_excesses(g[r], lo, hi, tol) > 0].tolist())
            if excess > worst:
                worst, where = excess, f"{g[r, k]:.6g} at t = {traj.time[rows][k]:.8g}, outside [{lo:.6g}, {hi:.6g}]"
        out.append(Check(f"path:{pc.name}", worst <= 0, max(worst, 0.0), tol,
                         where if worst > 0 else f"met at {rows.size} collocation points", tuple((t, t) for t in sorted(times))))
    return out


def _boundaries(problem, traj, tol):
    import casadi as ca

    out = []
    for bc in problem.boundaries:
        syms = ca.symvar(bc.expr)

        def value(name):
            if name in ("t0", "tf"):
                return float(traj.time[0 if name == "t0" else -1])
            base, _, at = name.rpartition("@")
            if at in ("t0", "tf") and base in traj:
                return float(traj[base][0 if at == "t0" else -1])
            return traj.parameters.get(name)

        args = [value(sym.name()) for sym in syms]
        if any(a is None for a in args):
            out.append(Check(f"boundary:{bc.name}", False, math.nan, tol, "the file lacks a value this constraint uses"))
            continue
        g = np.ravel(np.asarray(ca.Function("boundary", syms, [bc.expr]).call(args)[0], dtype=float))
        worst, text = -math.inf, "met"
        for r in range(g.size):
            excess, _ = _excess(g[r:r + 1], float(bc.lower[r]), float(bc.upper[r]), tol)
            if excess > worst:
                worst = excess
                if excess > 0:
                    text = f"value {g[r]:.6g}, outside [{float(bc.lower[r]):.6g}, {float(bc.upper[r]):.6g}]"
        out.append(Check(f"boundary:{bc.name}", worst <= 0, max(worst, 0.0), tol, text))
    return out


def _collocation_rows(traj):
    """Rows of the scheme's collocation points (every row when the scheme is unknown)."""
    from ..discretization.grid import Grid
    from ..discretization.schemes import get_scheme

    n = traj.time.size
    try:
        scheme = get_scheme(traj.metadata.get("scheme", ""))
    except Exception:  # noqa: BLE001  a file from elsewhere: check every row
        return np.arange(n)
    if not Grid.fits(n, scheme):
        return np.arange(n)
    return Grid.of_points(traj.time, scheme).collocation_points


def local_scale(values, nodes_of_intervals) -> np.ndarray:
    """``max(1, median |values|)`` over the grid points of each interval and its neighbours, shape ``(n,)``.

    ``nodes_of_intervals`` is :attr:`colloc.discretization.grid.Grid.nodes_of_intervals`, shape ``(n, num_nodes)``.
    A median of at least ``num_nodes + 1`` values: a single edited value cannot move it past its
    unedited neighbours.
    """
    idx = np.asarray(nodes_of_intervals)
    n = idx.shape[0]
    k = np.arange(n)
    window = np.concatenate([idx[np.clip(k - 1, 0, n - 1)], idx, idx[np.clip(k + 1, 0, n - 1)]], axis=1)
    return np.maximum(1.0, np.median(np.abs(np.asarray(values, dtype=float)[window]), axis=1))


def point_scale(values, nodes_of_intervals) -> np.ndarray:
    """At every grid point, the largest :func:`local_scale` of the intervals it belongs to: ``max(1, median |values|)``
    over that interval and its neighbours.

    Why: the contact rows that grow with the forces (a cone's excess, maximal dissipation's residual ``μλ|ṡ| + fᵀṡ``,
    a gap's product with a force) are judged against the force where they are evaluated.  A median over the whole
    horizon is about 0 for a foot in the air more than half of it, and would hold its stance to a tolerance ten times
    tighter (at 10 N) than a foot that stands longer; a local median, as the dynamics' scale, still cannot be inflated
    by one edited value."""
    idx = np.asarray(nodes_of_intervals)
    out = np.ones(np.asarray(values).size)
    np.maximum.at(out, idx, local_scale(values, idx)[:, None])
    return out


def _dynamics(problem, traj, tol, interval_errors):
    """One Check per state: each interval-end error against ``tol ·`` the state's local scale there
    (:func:`local_scale`: one edited value cannot inflate it), or, with ``tol`` a dict ``{state: limit}``,
    against that absolute limit (:func:`colloc.simulate.error_bounds.interval_limits`)."""
    from ..discretization.interpolant import Interpolant

    errors, mesh_times, message = interval_errors(problem, traj)
    nodes = Interpolant(traj).index
    out = []
    for name, err in errors.items():
        # a dict: each state's absolute limit from the file's own error estimate (colloc.simulate.error_bounds)
        limits = np.full(err.shape, tol[name]) if isinstance(tol, dict) else tol * local_scale(traj[name], nodes)
        spans = lambda bad: tuple((float(mesh_times[k]), float(mesh_times[k + 1])) for k in np.flatnonzero(bad))
        if err.size and not np.all(np.isfinite(err)):
            out.append(Check(f"dynamics:{name}", False, math.nan, float(np.max(limits)), message, spans(~np.isfinite(err))))
            continue
        ratio = err / limits
        k = int(np.argmax(ratio)) if err.size else 0
        worst, limit = (float(err[k]), float(limits[k])) if err.size else (0.0, tol)
        if worst <= limit:
            text = f"largest interval-end error {worst:.2e} ≤ {limit:.1e}"
        else:
            text = (f"interval-end error {worst:.2e} > {limit:.1e} in interval {k} "
                    f"(t = {mesh_times[k]:.6g} to {mesh_times[k + 1]:.6g}): the states do not follow the dynamics there")
        out.append(Check(f"dynamics:{name}", worst <= limit, worst, limit, text, spans(ratio > 1) if worst > limit else ()))
    return out


def departure(traj, partial, names, mesh) -> str:
    """Where a simulation that stopped early (``partial``, the Trajectory up to the stop, or None) stood against the
    file: its largest difference, over the states ``names``, at the last mesh point (rows ``mesh``) it reached, as a
    clause for the message of a failed check (empty if it reached none after the start)."""
    from ..discretization.interpolant import last_rows_at

    times = traj.time[mesh]
    reached = times[(times > traj.time[0]) & (times <= (partial.time[-1] if partial is not None else -math.inf))]
    if not reached.size:
        return ""
    k = int(np.flatnonzero(traj.time == reached[-1])[0])
    at = last_rows_at(partial.time, {n: partial[n] for n in names}, traj.time[k:k + 1])
    worst = max(names, key=lambda n: abs(at[n][0] - traj[n][k]))
    return (f"; by t = {traj.time[k]:.6g}, the last mesh point it reached, it had left the file by "
            f"{abs(at[worst][0] - traj[worst][k]):.3e} in `{worst}`")


def report(checks, tolerance=TOLERANCE, dynamics_tolerance=DYNAMICS_TOLERANCE) -> str:
    """The checks as lines under a heading that states the tolerances (``dynamics_tolerance=None``: the dynamics
    checks, if any, are against the file's own error estimate)."""
    failed = [c for c in checks if not c.passed]
    if dynamics_tolerance is not None:
        dynamics = f"; dynamics: each interval simulated alone, tolerance {dynamics_tolerance:.1e} × max(1, local median |x|)"
    elif any(c.name.startswith("dynamics:") for c in checks):
        dynamics = "; dynamics: each interval simulated alone, against the local error the file's solve estimated"
    else:
        dynamics = ""
    head = (f"checks (constraints: tolerance {tolerance:.1e} × max(1, |bound|){dynamics}): "
            f"{len(checks) - len(failed)} passed, {len(failed)} failed")
    return "\n".join([head] + [c.line() for c in checks])


__all__ = ["Check", "check_solution", "departure", "local_scale", "point_scale", "check_columns", "basic_checks", "solution_checks", "symbol_values", "report", "TOLERANCE", "DYNAMICS_TOLERANCE"]
