"""Bounds and path constraints between grid points, on the scheme's own interpolant (the dense output).

A collocation NLP imposes bounds and path constraints at its grid points
only.  Between them the solution is the scheme's interpolant
(:class:`colloc.discretization.interpolant.Interpolant`: the state polynomial of the scheme,
controls and multipliers through their collocation-point values), and there
it may leave its limits: a UR10's joint speed that sits on its 3.2 rad/s limit
at every grid point reaches 9.78 rad/s between them when the torques zig-zag.
:func:`violations` evaluates every finite bound of a state, control or
multiplier and every path constraint at :data:`POINTS` points strictly inside
each interval (the interpolants are polynomials of degree ≤ 4 for the schemes
colloc has, so 20 points find an overshoot's peak to a few per cent of it) and
reports the worst excess of each.  ``colloc verify`` and the solve summary
show them; ``path_points=k`` (a solve option) imposes the same limits at ``k``
points inside every interval.

A value ``g`` with bounds ``[lo, hi]`` exceeds them by
``max(lo − g, g − hi)``; the check passes when the excess is at most
``tolerance · max(1, |bound|)`` (:data:`TOLERANCE`: 1 %, since the interpolant
between grid points is itself only as accurate as the mesh).
"""
from __future__ import annotations

import math

import casadi as ca
import numpy as np

from ..discretization.interpolant import Interpolant

#: Points strictly inside each interval at which the interpolant is checked.
POINTS = 20
#: Excess, relative to max(1, |bound|), that fails the between-grid-points checks.
TOLERANCE = 1e-2


def dense_columns(problem, trajectory, points=POINTS):
    """Every state, derivative, control and multiplier at ``points`` equally spaced local times inside each interval.

    Returns
    -------
    times : ndarray, shape (n * points,)
    columns : dict of str -> ndarray, shape (n * points,)
    """
    itp = Interpolant(trajectory)
    s = np.arange(1, points + 1) / (points + 1)
    model = problem.model
    states = [v.name for v in model.states]
    X, XD = itp.states(states, s)
    columns = {}
    for i, name in enumerate(states):
        columns[name], columns[f"{name}.dot"] = X[i].ravel(), XD[i].ravel()
    for kind in ("control", "multiplier"):
        names = [v.name for v in model.of_kind(kind)]
        for name, values in zip(names, (itp.controls if kind == "control" else itp.others)(names, s)):
            columns[name] = values.ravel()
    return itp.times(s).ravel(), columns


def violations(problem, trajectory, points=POINTS) -> list:
    """The worst excess over its limits of each bounded variable and path constraint row between grid points.

    Returns
    -------
    list of dict
        One per variable or path row with a finite limit, worst first: ``name`` (``ur10.v3`` or
        ``path:terrain``), ``value`` and ``bound`` at the worst point, ``time``, ``excess`` (≤ 0: inside)
        and ``relative`` (the excess over ``max(1, |bound|)``).
    """
    times, columns = dense_columns(problem, trajectory, points)
    out = []
    for name, (lo, hi) in problem.bounds.items():
        if name in columns:
            out += _worst(name, columns[name], lo, hi, times)
    for pc in problem.paths:
        syms = ca.symvar(pc.expr)
        try:
            args = [times if s.name() == "t" else columns[s.name()] if s.name() in columns
                    else np.full(times.size, float(trajectory.parameters[s.name()])) for s in syms]
        except KeyError:
            continue  # a symbol the dense output does not have (none for colloc's own problems)
        g = np.asarray(ca.Function("path", syms, [pc.expr]).map(times.size).call([a[None, :] for a in args])[0], dtype=float)
        g = np.broadcast_to(np.atleast_2d(g), (pc.expr.numel(), times.size))  # a constant row maps to one column
        for r in range(g.shape[0]):
            label = f"path:{pc.name}" + (f"[{r}]" if g.shape[0] > 1 else "")
            out += _worst(label, g[r], float(pc.lower[r]), float(pc.upper[r]), times)
    return sorted(out, key=lambda v: -v["relative"])


def _worst(name, values, lo, hi, times):
    if not (math.isfinite(lo) or math.isfinite(hi)) or not values.size:
        return []
    below = lo - values if math.isfinite(lo) else np.full(values.shape, -np.inf)
    above = values - hi if math.isfinite(hi) else np.full(values.shape, -np.inf)
    excess = np.where(np.isnan(values), np.inf, np.maximum(below, above))
    k = int(np.argmax(excess))
    bound = lo if below[k] >= above[k] else hi
    return [dict(name=name, value=float(values[k]), bound=float(bound), time=float(times[k]), excess=float(excess[k]),
                 relative=float(excess[k]) / max(1.0, abs(bound)))]


def summary(problem, trajectory, points=POINTS) -> dict | None:
    """The worst violation between grid points as a record for ``SolveResult.accuracy["between"]``, or None
    when nothing is bounded."""
    found = violations(problem, trajectory, points)
    if not found:
        return None
    worst = found[0]
    return dict(worst, points=points, violated=[v["name"] for v in found if v["relative"] > TOLERANCE])


def checks(problem, trajectory, tolerance=TOLERANCE, points=POINTS) -> list:
    """``colloc verify``'s checks between grid points: one :class:`colloc.simulate.checks.Check` for the variable bounds
    and one per path constraint (none for a trajectory whose scheme colloc does not know or that is not finite)."""
    from .checks import Check

    try:
        found = violations(problem, trajectory, points)
    except Exception:  # noqa: BLE001 - a file from elsewhere (no scheme, no derivative columns): nothing to interpolate
        return []
    out = []
    groups = {"between:bounds": [v for v in found if not v["name"].startswith("path:")]}
    for pc in problem.paths:
        groups[f"between:{pc.name}"] = [v for v in found if v["name"].split("[")[0] == f"path:{pc.name}"]
    for check, items in groups.items():
        if not items:
            continue
        worst = max(items, key=lambda v: v["relative"])
        passed = worst["relative"] <= tolerance
        text = (f"within {tolerance:.0e} × max(1, |bound|) at {points} points inside each interval" if passed else
                f"`{worst['name']}` reaches {worst['value']:.6g} at t = {worst['time']:.6g} between grid points, "
                f"beyond its bound {worst['bound']:.6g} (path_points=k imposes the limits inside the intervals)")
        where = () if passed else tuple((float(v["time"]), float(v["time"])) for v in items if v["relative"] > tolerance)
        out.append(Check(check, passed, max(worst["relative"], 0.0), tolerance, text, where))
    return out
