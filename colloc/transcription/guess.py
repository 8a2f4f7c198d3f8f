"""Initial guesses on the grid.

Priority, per variable: a warm-start trajectory passed to ``solve(guess=...)``,
then the problem's own ``guess``, then a default: the line between fixed
initial and final values, the one fixed endpoint value, the middle of finite
bounds, the finite bound, or zero.  Guesses are clipped into the bounds;
derivative variables start at the slope of their state's guess.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..discretization.grid import locate
from ..errors import FileFormatError, did_you_mean


def guess_final_time(problem, guess=None) -> float:
    lo, hi = problem.tf_bounds
    if not problem.free_final_time:
        return lo
    if guess is not None:
        return float(np.clip(guess.time[-1], lo, hi))
    if "tf" in problem.guesses:
        return float(np.clip(problem.guesses["tf"][1], lo, hi))
    return 0.5 * (lo + hi)


def _default(problem, name, times):
    lo, hi = problem.bounds[name]
    ini, fin = problem.initial_bounds.get(name), problem.final_bounds.get(name)
    fixed_ini = ini is not None and ini[0] == ini[1]
    fixed_fin = fin is not None and fin[0] == fin[1]
    if fixed_ini and fixed_fin:
        s = (times - times[0]) / (times[-1] - times[0])
        return ini[0] + s * (fin[0] - ini[0])
    for b in (ini if fixed_ini else None, fin if fixed_fin else None, ini, fin, (lo, hi)):
        if b is None:
            continue
        a, c = b
        if math.isfinite(a) and math.isfinite(c):
            return np.full(times.size, 0.5 * (a + c))
        if math.isfinite(a) or math.isfinite(c):
            return np.full(times.size, a if math.isfinite(a) else c)
    return np.zeros(times.size)


def _from_spec(spec, times):
    kind, data = spec
    if kind == "constant":
        return np.full(times.size, data)
    if kind == "linear":
        s = (times - times[0]) / (times[-1] - times[0])
        return data[0] + s * (data[1] - data[0])
    tt, vv = data
    return np.interp(times, tt, vv)


def initial_guess(problem, layout, tau, guess):
    """Fill ``layout[block].guess`` for every block of the problem's variables."""
    t0 = problem.t0_value
    tf = guess_final_time(problem, guess)
    times = t0 + tau * (tf - t0)
    if "tf" in layout:
        layout["tf"].guess[:] = tf
    if guess is not None:
        _check_columns(problem, guess)
        _check_span(problem, guess, t0, tf)
    sampled = _at_nodes(guess, times, guess.sample(times)) if guess is not None else {}
    for block in ("x", "u", "lam"):
        b = layout[block]
        for i, name in enumerate(b.row_names):
            if name in sampled:
                vals = sampled[name]
            elif name in problem.guesses:
                vals = _from_spec(problem.guesses[name], times)
            else:
                vals = _default(problem, name, times)
            b.guess[i] = np.clip(vals, b.lower[i], b.upper[i])
    p = layout["p"]
    for i, name in enumerate(p.row_names):
        if guess is not None and name in guess.parameters:
            val = guess.parameters[name]
        elif name in problem.guesses:
            val = _from_spec(problem.guesses[name], times[:1])[0]
        else:
            val = _default(problem, name, times[:1])[0]
        p.guess[i] = np.clip(val, p.lower[i], p.upper[i])
    z = layout["z"]
    x = layout["x"]
    for i, name in enumerate(z.row_names):
        if name in sampled:
            vals = sampled[name]
        else:
            state = name[: -len(".dot")]
            xi = x.guess[x.row_names.index(state)]
            vals = np.gradient(xi, times) if times.size > 1 else np.zeros(1)
        z.guess[i] = np.clip(vals, z.lower[i], z.upper[i])


def _at_nodes(guess, times, sampled):
    """``sampled`` with the guess's own row values where a time is one of its rows: a solution read back onto its
    own grid is then the very point its solve ended on.  Between rows the dense output holds each column as its
    scheme does, and that is not the row value at a mesh point for a column collocated on one side only (Radau's
    derivatives and forces belong to the interval that ends there; the next interval's polynomial, extrapolated to
    its start, differs: by 1.5e3 in the Solo12 jump's accelerations, a warm start at infeasibility 149)."""
    t = guess.time
    if t.size < 2:
        return sampled
    i, s = locate(t, times)
    j = np.where(s > 0.5, i + 1, i)  # the nearer of the rows around each time
    hit = np.abs(t[j] - times) <= 1e-12 * max(1.0, float(np.abs(t).max()))
    if hit.any():
        for name, values in sampled.items():
            values[hit] = guess[name][j[hit]]
    return sampled


def _check_span(problem, guess, t0, tf):
    """Say so when the guess does not cover ``[t0, tf]``: outside its span its end values are held."""
    start, end = float(guess.time[0]), float(guess.time[-1])
    slack = 1e-9 * max(1.0, abs(t0), abs(tf))
    source = f"`{guess.source}`" if getattr(guess, "source", None) else guess.metadata.get("problem", "a trajectory")
    if start > t0 + slack or end < tf - slack:
        warnings.warn(f"The guess ({source}) covers t ∈ [{start:.6g}, {end:.6g}] but the horizon is [{t0:.6g}, {tf:.6g}]; "
                      "outside its span its first and last values are held constant.", stacklevel=4)
    lo, hi = problem.tf_bounds
    if problem.free_final_time and not lo <= end <= hi:
        warnings.warn(f"The guess ({source}) ends at t = {end:.6g}, outside the final-time bounds [{lo:.6g}, {hi:.6g}]; "
                      f"its final time is clamped to {tf:.6g}.", stacklevel=4)


def _check_columns(problem, guess):
    """A warm start must describe this problem: every column must name one of its variables."""
    known = {v.name for v in problem.model.variables}
    known |= {s.name + ".dot" for s in problem.model.states}
    outputs = set(problem.model.outputs)  # a result's output columns (fibre lengths, forces …) are recomputed, not read
    for name in guess.names:
        if name not in known and name not in outputs:
            source = getattr(guess, "source", None) or guess.metadata.get("problem", "the guess")
            if name == "phase":
                raise FileFormatError(f"The guess `{source}` is a multi-phase result; single-phase problem `{problem.name}` "
                                      "cannot start from it (take one phase: PhasedTrajectory.split(traj).phase(name)).")
            raise FileFormatError(f"Guess column `{name}` (from `{source}`) is not a variable of problem `{problem.name}`.{did_you_mean(name, known)}")
    for name in guess.parameters:
        if name not in known:
            raise FileFormatError(f"Guess parameter `{name}` is not a parameter of problem `{problem.name}`.{did_you_mean(name, known)}")
    check_times(guess)
    for name in guess.names:
        if name in outputs:
            continue
        bad = np.flatnonzero(~np.isfinite(guess[name]))
        if bad.size:
            k = int(bad[0])
            value = "NaN" if np.isnan(guess[name][k]) else f"{guess[name][k]:g}"
            raise FileFormatError(f"Guess column `{name}` {_source(guess)}is {value} at t = {guess.time[k]:.6g} "
                                  f"(row {k + 1}); a guess must be finite.")
    missing = [v.name for v in problem.model.variables if v.kind in ("state", "control") and v.name not in guess.names]
    if missing:
        warnings.warn(f"The guess has no column for {', '.join(f'`{m}`' for m in missing)}; "
                      "the problem's own guess is used for them.", stacklevel=4)


def _source(guess) -> str:
    return f"of `{guess.source}` " if getattr(guess, "source", None) else ""


def check_times(trajectory, what="guess"):
    """Refuse a trajectory whose times are not finite or decrease (a repeated time, as at a phase junction, is
    fine): interpolating it would draw or start from something that was never computed."""
    t, source = trajectory.time, _source(trajectory)
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        raise FileFormatError(f"The {what} {source}has time {t[bad[0]]} in row {bad[0] + 1}; a {what} must have finite, ordered times.")
    back = np.flatnonzero(np.diff(t) < 0)
    if back.size:
        k = int(back[0])
        raise FileFormatError(f"The times of the {what} {source}decrease from row {k + 1} to {k + 2} "
                              f"({t[k]:.6g} → {t[k + 1]:.6g}); a {what} must be ordered in time.")
