"""Figures and animations of trajectories.

* :func:`plot_trajectory` — one subplot per state, control and multiplier, several files overlaid;
* :func:`plot_violations` — largest constraint violation per label, as recorded by the solve;
* :func:`plot_refinement` — convergence of adaptive mesh refinement (``result.refinement``);
* :func:`animate` — a GIF of the points a planar multibody model declares (``body.point``).

matplotlib is imported inside the functions only, so ``import colloc`` stays
light; without a display (no ``DISPLAY``/``WAYLAND_DISPLAY`` on Linux, no
``MPLBACKEND``) the Agg backend is chosen before pyplot is first imported.
"""
from __future__ import annotations

import io
import math
import os
import sys

import numpy as np

from ..errors import FileFormatError, OptionError, did_you_mean
from ..results.trajectory import Trajectory, atomic_write

#: Column kinds drawn by default (derivative and slack columns are left out).
PLOTTED_KINDS = ("state", "control", "multiplier")
#: A muscle's columns, drawn side by side on one row (``NAME.<suffix>``; outputs from
#: ``colloc.model.muscle.add_muscle_outputs``).
MUSCLE_GROUP = ("excitation", "activation", "normalized_tendon_force", "fiber_length", "tension")

_MAX_COLUMNS = 4
_SAMPLES_PER_POINT = 8
_MAX_SAMPLES = 2000


def _pyplot():
    import matplotlib

    headless = sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if headless and "MPLBACKEND" not in os.environ and "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_trajectory(traj_or_list, names=None, labels=None, bounds=None):
    """One subplot per variable, time on x, several trajectories overlaid.

    Parameters
    ----------
    traj_or_list : Trajectory or list of Trajectory
    names : list of str, optional
        Columns to draw, in order.  Default: every state, control and
        multiplier column of the trajectories (union, in order of appearance).
    labels : list of str, optional
        Legend label per trajectory; a legend is drawn when given or when
        there are several trajectories.
    bounds : dict of str -> (float, float), optional
        Variable bounds (e.g. ``problem.bounds``; default: those the first
        trajectory records, ``metadata["bounds"]``, as ``colloc solve`` writes
        them); every finite one is a dashed
        line on the matching subplot.  The axis shows the data and the bounds
        within half the data's range of it; a bound further away (it would
        squash the curves) lies beyond the clipped axis and is named in the
        subplot's corner (``↑ 1000``, ``↓ -1000``).

    Returns
    -------
    matplotlib.figure.Figure
        Titles are the column names.  States use the scheme's interpolant
        (:meth:`Trajectory.sample`); controls are drawn as the transcription
        holds them (:func:`control_curve`): straight lines between their grid
        values (a collocation scheme's control polynomial can overshoot a bound
        between grid points where no constraint is imposed), held over each
        interval for midpoint-vi.  Dots mark the grid points.  Optimized static
        parameters are in the title (one trajectory) or the legend (several),
        with the ``--set`` values a file records.
    """
    trajs = [traj_or_list] if isinstance(traj_or_list, Trajectory) else list(traj_or_list)
    if not trajs or not all(isinstance(t, Trajectory) for t in trajs):
        raise OptionError("plot_trajectory takes a Trajectory or a non-empty list of Trajectory objects.")
    if labels is not None and len(labels) != len(trajs):
        raise OptionError(f"plot_trajectory got {len(labels)} labels for {len(trajs)} trajectories.")
    names = _columns(trajs, names)
    if bounds is None:
        bounds = recorded_bounds(trajs[0])
    plt = _pyplot()
    slots, ncols = _muscle_rows(names)
    names = [slot for slot in slots if slot is not None]
    positions = [i for i, slot in enumerate(slots) if slot is not None]
    nrows = math.ceil(len(slots) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols, 2.6 * nrows), squeeze=False, layout="constrained")
    flat = [ax for ax, slot in zip(axes.ravel(), slots) if slot is not None]
    for ax, slot in zip(axes.ravel(), slots + [None] * (axes.size - len(slots))):
        if slot is None:
            fig.delaxes(ax)
    colors = plt.rcParams["axes.prop_cycle"].by_key().get("color", ["C0"])
    handles = []
    for i, traj in enumerate(trajs):
        dense_t = _dense_times(traj)
        dense = traj.sample(dense_t)
        color = colors[i % len(colors)]
        line = None
        for ax, name in zip(flat, names):
            if name not in traj:
                continue
            line, = ax.plot(*control_curve(traj, name, dense_t, dense), color=color, lw=1.4)
            ax.plot(traj.time, traj[name], ".", color=color, ms=3)
        if line is None:  # none of the columns: keep a legend entry all the same
            line, = flat[0].plot([], [], color=color, lw=1.4)
        handles.append(line)
    for k, (ax, name) in enumerate(zip(flat, names)):
        ax.set_title(name, fontsize=10)
        if bounds and name in bounds:
            _draw_bounds(ax, bounds[name])
        below = positions[k] + ncols
        if below >= len(slots) or slots[below] is None:  # bottom subplot of its column
            ax.set_xlabel("time")
        ax.grid(True, alpha=0.3)
    if labels is not None or len(trajs) > 1:
        texts = labels if labels is not None else [t.metadata.get("problem", f"#{i + 1}") for i, t in enumerate(trajs)]
        texts = [_with_parameters(str(text), t) for text, t in zip(texts, trajs)]
        fig.legend(handles, texts, loc="outside upper center", ncols=min(len(trajs), 4 if max(map(len, texts)) < 30 else 2), fontsize=8)
    elif _parameter_text(trajs[0]):
        fig.suptitle(_with_parameters(str(trajs[0].metadata.get("problem", "")), trajs[0]).strip(), fontsize=9)
    return fig


def recorded_bounds(traj) -> dict:
    """The bounds a file records (``metadata["bounds"]``: ``{name: [lower, upper]}``, ``None`` for none)."""
    table = traj.metadata.get("bounds")
    if not isinstance(table, dict):
        return {}
    out = {}
    for name, pair in table.items():
        if isinstance(pair, (list, tuple)) and len(pair) == 2:
            out[str(name)] = (-math.inf if pair[0] is None else float(pair[0]), math.inf if pair[1] is None else float(pair[1]))
    return out


def bounds_to_record(bounds) -> dict:
    """``{name: [lower, upper]}`` of the finite bounds (``None`` for an infinite side), for a file's metadata."""
    return {str(k): [float(lo) if math.isfinite(lo) else None, float(hi) if math.isfinite(hi) else None]
            for k, (lo, hi) in (bounds or {}).items() if math.isfinite(lo) or math.isfinite(hi)}


def control_curve(traj, name, dense_t, dense):
    """``(times, values)`` drawn for column ``name``: what the transcription means by it.

    A control of a collocation scheme is its grid values joined by straight
    lines: the transcription constrains it at the grid points only, and the
    polynomial through them (``traj(t)``) can pass a bound in between (a
    bang–bang torque at +40 peaked near 50 between Hermite–Simpson points).
    Every other column, and a held (midpoint-vi) control, is the dense sample.
    """
    from ..discretization.interpolant import held

    if traj.kinds.get(name) == "control" and not held(traj):
        return traj.time, traj[name]
    return dense_t, dense[name]


def _parameter_text(traj) -> str:
    """``--set`` values the file records and the optimized parameters, as ``k=v, …; p = v``."""
    given = traj.metadata.get("params") if isinstance(traj.metadata.get("params"), dict) else {}
    fixed = ", ".join(f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}" for k, v in given.items())
    optimized = ", ".join(f"{k} = {v:.6g}" for k, v in traj.parameters.items())
    return "; ".join(t for t in (fixed, optimized) if t)


def _with_parameters(label, traj) -> str:
    extra = _parameter_text(traj)
    return f"{label} ({extra})" if extra and extra not in label else label


def _draw_bounds(ax, pair):
    """Every finite bound dashed; the axis clipped to the data and the near bounds, far ones named in a corner."""
    lo, hi = ax.dataLim.intervaly
    span = hi - lo if hi > lo else max(abs(hi), 1.0)
    shown, far = [lo, hi], []
    for value in pair:
        if value is not None and math.isfinite(value):
            ax.axhline(value, color="0.4", ls="--", lw=0.9)
            (shown if lo - 0.5 * span <= value <= hi + 0.5 * span else far).append(value)
    pad = 0.05 * (max(shown) - min(shown) or span)
    ax.set_ylim(min(shown) - pad, max(shown) + pad)
    for value in far:
        up = value > hi
        ax.text(0.99, 0.97 if up else 0.03, f"{'↑' if up else '↓'} {value:g}", transform=ax.transAxes, ha="right",
                va="top" if up else "bottom", fontsize=7, color="0.4")


def _muscle_of(name):
    """``(muscle, position in MUSCLE_GROUP)`` for a muscle column name, else None."""
    for i, suffix in enumerate(MUSCLE_GROUP):
        if name.endswith("." + suffix) and name.count(".") == 1:
            return name[: -len(suffix) - 1], i
    return None


def _muscle_rows(names):
    """Subplot slots (names, None for an empty slot) and the number of columns.

    A muscle (a prefix with an ``.excitation`` column) gets one row of its own, in MUSCLE_GROUP
    order; the other columns fill rows before the muscles, as without muscles.
    """
    muscles = [n[: -len(".excitation")] for n in names if n.endswith(".excitation") and n.count(".") == 1]
    grouped = {n for n in names if _muscle_of(n) and _muscle_of(n)[0] in muscles}
    if not muscles:
        return list(names), min(_MAX_COLUMNS, max(1, math.ceil(math.sqrt(len(names)))))
    ncols = len(MUSCLE_GROUP)
    rest = [n for n in names if n not in grouped]
    slots = rest + [None] * (-len(rest) % ncols)
    for m in muscles:
        slots += [f"{m}.{suffix}" if f"{m}.{suffix}" in grouped else None for suffix in MUSCLE_GROUP]
    return slots, ncols


def _columns(trajs, names):
    available = []
    for t in trajs:
        available += [n for n in t.names if n not in available]
    if names is None:
        names = [n for n in available if any(t.kinds.get(n) in PLOTTED_KINDS for t in trajs if n in t)
                 or (_muscle_of(n) and any(t.kinds.get(n) == "output" for t in trajs if n in t))]
        if not names:
            raise OptionError("The trajectory has no state, control or multiplier columns to plot.")
        return names
    names = list(names)
    for n in names:
        if n not in available:
            raise OptionError(f"No column `{n}` in the trajectories to plot.{did_you_mean(n, available)}")
    if not names:
        raise OptionError("`names` is empty; give at least one column to plot.")
    return names


def _dense_times(traj):
    n = min(_MAX_SAMPLES, max(200, _SAMPLES_PER_POINT * traj.time.size))
    return np.linspace(traj.time[0], traj.time[-1], n)


# -- violations -------------------------------------------------------------------------------
#: Violations are drawn on a log axis; smaller values (exact zeros included) sit at this floor.
VIOLATION_FLOOR = 1e-17


def plot_violations(results, labels=None, by="label"):
    """Horizontal bars of the largest constraint violation per constraint label.

    The values are those the solve measured at its final iterate
    (``SolveResult.violations``: the largest bound violation over all grid
    points of each ``kind:name`` row block); ``colloc solve`` and
    ``colloc sweep`` also record them in ``trajectory.metadata["violations"]``.
    How a violation is distributed over time is not stored, so it is not drawn.

    Parameters
    ----------
    results : SolveResult, Trajectory, or list of them
        A Trajectory must carry ``metadata["violations"]`` (``{label: value}``).
    labels : list of str, optional
        Legend label per result; a legend is drawn when given or when there are several.
    by : {"label", "kind"}
        One bar per constraint label (``defect.simpson:pend.x``) or per kind (``defect.simpson``).

    Returns
    -------
    matplotlib.figure.Figure
        One axes, log-scaled x axis; values below :data:`VIOLATION_FLOOR` are drawn at it.
    """
    items = _as_list(results)
    if not items:
        raise OptionError("plot_violations takes a SolveResult or Trajectory, or a non-empty list of them.")
    if by not in ("label", "kind"):
        raise OptionError(f"`by` must be 'label' or 'kind'; got {by!r}.")
    if labels is not None and len(labels) != len(items):
        raise OptionError(f"plot_violations got {len(labels)} labels for {len(items)} results.")
    tables = [_violations_of(item, i) for i, item in enumerate(items)]
    if by == "kind":
        tables = [_by_kind(t) for t in tables]
    rows = []
    for t in tables:
        rows += [k for k in t if k not in rows]
    if not rows:
        raise OptionError("The results have no constraint rows, so there are no violations to plot.")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 1.2 + 0.28 * len(rows) * max(1, len(items)) ** 0.5), layout="constrained")
    height = 0.8 / len(tables)
    y = np.arange(len(rows))
    bars = []
    for i, t in enumerate(tables):
        # bars run from the floor to the value (none for a zero); a label absent from this result has no bar
        widths = [max(t[r] - VIOLATION_FLOOR, 0.0) if r in t else np.nan for r in rows]
        bars.append(ax.barh(y - 0.4 + height * (i + 0.5), widths, height=height, left=VIOLATION_FLOOR, color=f"C{i % 10}"))
    ax.set_xscale("log")
    ax.set_xlim(left=VIOLATION_FLOOR)
    ax.set_yticks(y, rows, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("largest violation")
    ax.set_title("constraint violations" if by == "label" else "constraint violations by kind", fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    if labels is not None or len(items) > 1:
        texts = labels if labels is not None else [_name_of(item, i) for i, item in enumerate(items)]
        ax.legend(bars, [str(t) for t in texts], fontsize=8)
    return fig


def _violations_of(item, index):
    if isinstance(item, Trajectory):
        table = item.metadata.get("violations")
        if not isinstance(table, dict):
            raise OptionError(f"Trajectory {_name_of(item, index)} records no constraint violations (metadata `violations`); "
                              "files written by `colloc solve` and `colloc sweep` record them, or pass the SolveResult.")
        return {str(k): float(v) for k, v in table.items()}
    table = getattr(item, "violations", None)
    if not isinstance(table, dict):
        raise OptionError(f"plot_violations takes SolveResult or Trajectory objects; got {type(item).__name__}.")
    return dict(table)


def _by_kind(table):
    out = {}
    for label, v in table.items():
        kind = label.split(":", 1)[0]
        out[kind] = max(out.get(kind, 0.0), v)
    return out


def _name_of(item, index):
    traj = item if isinstance(item, Trajectory) else getattr(item, "trajectory", None)
    name = traj.metadata.get("problem") if isinstance(traj, Trajectory) else None
    return f"`{name}`" if name else f"#{index + 1}"


def _as_list(obj):
    return list(obj) if isinstance(obj, (list, tuple)) else [obj]


# -- mesh refinement --------------------------------------------------------------------------
#: Keys every mesh-refinement record must have (see ``colloc.pipeline.refine.solve_adaptive``).
REFINEMENT_KEYS = ("intervals", "grid_points", "max_error", "iterations", "seconds")


def plot_refinement(records, labels=None, tolerance=None):
    """Convergence of adaptive mesh refinement, one mesh iteration per marker.

    Parameters
    ----------
    records : list of dict, SolveResult, Trajectory, or a list of those
        One refinement history: the dicts of ``result.refinement`` (keys
        ``intervals``, ``grid_points``, ``max_error``, ``iterations``,
        ``seconds``; optional ``iteration``), a result that has them, or a
        Trajectory with ``metadata["refinement"]``.  A list of histories is
        overlaid.
    labels : list of str, optional
        Legend label per history.
    tolerance : float, optional
        Drawn as a dashed line on the error plot.

    Returns
    -------
    matplotlib.figure.Figure
        Five axes: max relative local error against grid points (log–log), the
        objective J per mesh (with its relative change from the previous mesh
        written beside each marker when the records carry ``objective``), and
        intervals, IPOPT iterations and seconds against the mesh iteration.
    """
    histories = _histories(records)
    if labels is not None and len(labels) != len(histories):
        raise OptionError(f"plot_refinement got {len(labels)} labels for {len(histories)} refinement histories.")
    plt = _pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(11.0, 5.6), layout="constrained")
    ax_err, ax_obj, ax_int, ax_ipopt, ax_sec, spare = axes.ravel()
    fig.delaxes(spare)
    for k, history in enumerate(histories):
        color = f"C{k % 10}"
        step = [r.get("iteration", i) for i, r in enumerate(history)]
        grid = [r["grid_points"] for r in history]
        error = [max(float(r["max_error"]), np.finfo(float).tiny) for r in history]
        ax_err.loglog(grid, error, "o-", color=color, label=None if labels is None else str(labels[k]))
        ax_int.plot(step, [r["intervals"] for r in history], "o-", color=color)
        ax_ipopt.plot(step, [r["iterations"] for r in history], "o-", color=color)
        ax_sec.plot(step, [r["seconds"] for r in history], "o-", color=color)
        if all("objective" in r for r in history):  # the stopping test reads J's change between the last two meshes
            ax_obj.plot(step, [r["objective"] for r in history], "o-", color=color)
            for x, r in zip(step, history):
                if r.get("objective_change") is not None:
                    ax_obj.annotate(f"{r['objective_change']:.1e}", (x, r["objective"]), fontsize=7,
                                    textcoords="offset points", xytext=(3, 4))
    if tolerance is not None:
        ax_err.axhline(tolerance, color="0.4", ls="--", lw=0.9)
    ax_err.set(title="max relative local error", xlabel="grid points")
    ax_obj.set(title="objective J (relative change)", xlabel="mesh iteration")
    ax_obj.xaxis.get_major_locator().set_params(integer=True)
    for ax, title in ((ax_int, "intervals"), (ax_ipopt, "IPOPT iterations"), (ax_sec, "seconds")):
        ax.set(title=title, xlabel="mesh iteration")
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.set_ylim(bottom=0)
    for ax in fig.axes:
        ax.title.set_fontsize(10)
        ax.grid(True, alpha=0.3)
    if labels is not None:
        ax_err.legend(fontsize=8)
    return fig


def _histories(records):
    """One or several refinement histories as lists of checked dicts."""
    def history(obj, what):
        if isinstance(obj, Trajectory):
            obj = obj.metadata.get("refinement")
            if obj is None:
                raise OptionError(f"The trajectory {what} records no mesh refinement (metadata `refinement`); solve with colloc.pipeline.refine.solve_adaptive.")
        elif not isinstance(obj, (list, tuple)):
            rec = getattr(obj, "refinement", None)
            if rec is None:
                raise OptionError(f"plot_refinement takes refinement records (list of dict), a result with `refinement` or a Trajectory; got {type(obj).__name__}.")
            obj = rec
        rows = list(obj)
        if not rows:
            raise OptionError(f"The refinement history {what} is empty.")
        for i, r in enumerate(rows):
            if not isinstance(r, dict):
                raise OptionError(f"Refinement record {i} {what} is {type(r).__name__}, not a dict.")
            missing = [k for k in REFINEMENT_KEYS if k not in r]
            if missing:
                raise OptionError(f"Refinement record {i} {what} has no `{missing[0]}`; each record needs {', '.join(REFINEMENT_KEYS)}.")
        return rows

    if isinstance(records, (list, tuple)) and records and all(isinstance(r, dict) for r in records):
        return [history(records, "")]
    items = _as_list(records)
    if not items:
        raise OptionError("plot_refinement takes a non-empty refinement history.")
    return [history(obj, f"#{i + 1}" if len(items) > 1 else "") for i, obj in enumerate(items)]


# -- animation --------------------------------------------------------------------------------
def model_points(model_or_points) -> dict:
    """The points to animate, grouped by body: ``{body: {point: expression}}``.

    Parameters
    ----------
    model_or_points : Problem, Model, Multibody, list of Multibody, or dict
        Every :class:`~colloc.Multibody` with points (``body.point(name, expr)``)
        contributes a group; a dict ``{name: expression}`` is one group
        ``"points"``.  Expressions may use the trajectory's states and
        controls, its parameters and time.

    Raises
    ------
    OptionError
        If there is not a single point: colloc cannot guess what to draw
        from coordinates alone (they may be angles); declare the joints and
        tips with ``body.point``.
    """
    from ..model.multibody import Multibody

    obj = model_or_points
    if isinstance(obj, dict):
        groups = {"points": {str(k): _point_expr(v, k) for k, v in obj.items()}} if obj else {}
    else:
        model = getattr(obj, "model", obj)  # Problem -> Model
        comps = getattr(model, "components", None)
        if comps is None:
            comps = _as_list(obj)
        if not all(hasattr(c, "name") for c in comps):
            raise OptionError(f"animate takes a Problem, Model, Multibody or a dict of point expressions; got {type(obj).__name__}.")
        groups = {c.name: {f"{c.name}.{k}": v for k, v in c.points.items()} for c in comps if isinstance(c, Multibody) and c.points}
    if not groups:
        raise OptionError("There are no points to animate; declare them on a Multibody with "
                          "`body.point('tip', expr)` (joints and tips in drawing order), or pass {name: expression}.")
    return groups


def _point_expr(value, name):
    import casadi as ca

    if isinstance(value, ca.MX):
        raise OptionError(f"Point `{name}` is a CasADi MX expression; give an SX expression (the symbols of the model) or numbers.")
    expr = value if isinstance(value, ca.SX) else ca.SX(ca.DM(np.asarray(value, dtype=float)))
    expr = ca.vec(expr)
    if expr.numel() not in (2, 3):
        raise OptionError(f"Point `{name}` must be a 2-D or 3-D position; got {expr.numel()} values.")
    return expr


def _point_positions(traj, groups, times):
    """Positions of every point at ``times``: ``{body: ndarray, shape (num_times, num_points, 2)}``."""
    import casadi as ca

    from .animation import evaluate_along

    exprs = [ca.vec(e)[:2] for g in groups.values() for e in g.values()]
    names = [n for g in groups.values() for n in g]

    def refuse(key, columns):
        user = next(n for n, e in zip(names, exprs) if any(s.name() == key for s in ca.symvar(e)))
        return OptionError(f"Point `{user}` uses `{key}`, which is neither a column nor a parameter of the trajectory."
                           f"{did_you_mean(key, columns + list(traj.parameters))}")

    values = evaluate_along(traj, ca.vertcat(*exprs), times, refuse).reshape(len(exprs), 2, times.size)
    if not np.all(np.isfinite(values)):
        raise OptionError("A point's position is NaN or inf along the trajectory; check the point expressions.")
    out, start = {}, 0
    for body, g in groups.items():
        out[body] = values[start:start + len(g)].transpose(2, 0, 1)
        start += len(g)
    return out


def animate(trajectory, model_or_points, path, fps=30, speed=1.0, dpi=80):
    """Write a GIF of a planar multibody motion (URDF/OpenSim models: :class:`~colloc.viz.animation.RobotScene`).

    Each body is drawn as a polyline through its points in declaration order
    (so declare a chain's pivot, joints and tip in that order), with the full
    path of every point in light grey.  3-D points are drawn by their x and
    y.  Positions come from the point expressions evaluated (as one CasADi
    Function) on the trajectory sampled with the scheme's interpolant.

    Parameters
    ----------
    trajectory : Trajectory
    model_or_points : Problem, Model, Multibody or dict
        See :func:`model_points`.
    path : str or path-like
        ``.gif`` file, written atomically.
    fps : float
        Frames per second of the GIF.
    speed : float
        Playback speed: 2 plays the motion twice as fast as real time.  The
        GIF has ``round(duration / speed * fps) + 1`` frames (at least 2).
    dpi : float
        Resolution (the figure is 5 × 5 inches).

    Returns
    -------
    str
        The path written.
    """
    if not isinstance(trajectory, Trajectory):
        raise OptionError(f"animate takes a Trajectory; got {type(trajectory).__name__}.")
    path = os.fspath(path)
    if os.path.splitext(path)[1].lower() != ".gif":
        raise FileFormatError(f"Cannot write the animation `{path}`: give a .gif file.")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileFormatError(f"Cannot write `{path}`: folder `{folder}` does not exist.")
    for name, value in (("fps", fps), ("speed", speed), ("dpi", dpi)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise OptionError(f"`{name}` must be a positive number; got {value!r}.")
    if trajectory.duration <= 0:
        raise OptionError("The trajectory spans no time; there is nothing to animate.")
    frames = max(2, int(round(trajectory.duration / speed * fps)) + 1)
    times = np.linspace(trajectory.time[0], trajectory.time[-1], frames)
    from .animation import muscle_paths, robot_bodies, write_planar_gif, write_robot_gif  # URDF and OpenSim models: their link frames

    if robot_bodies(model_or_points):
        return write_robot_gif(trajectory, robot_bodies(model_or_points), times, fps, path, dpi, muscle_paths(model_or_points))
    groups = model_points(model_or_points)
    positions = _point_positions(trajectory, groups, times)
    write_planar_gif(positions, times, fps, path, dpi, ground=_has_contacts(model_or_points))
    return path


def _has_contacts(model_or_points) -> bool:
    """Whether the model declares contacts (its animation then draws the ground line y = 0)."""
    from ..model.contact import contacts_of

    model = getattr(model_or_points, "model", model_or_points)
    comps = getattr(model, "components", [model])
    return any(contacts_of(c) for c in comps if hasattr(c, "coordinates"))


def save_figure(fig, path, dpi=120, close=False) -> str:
    """Write ``fig`` to ``path`` atomically; the format follows the suffix (.png, .pdf, .svg …).

    With ``close=True`` the figure is released from pyplot afterwards.
    Returns the path.
    """
    path = os.fspath(path)
    fmt = os.path.splitext(path)[1].lower().lstrip(".")
    supported = fig.canvas.get_supported_filetypes()
    if fmt not in supported:
        raise FileFormatError(f"Cannot save a figure as `{path}`: unknown suffix `.{fmt}`; use one of {', '.join('.' + s for s in sorted(supported))}.")
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi)
    atomic_write(path, buf.getvalue())
    if close:
        _pyplot().close(fig)
    return path


__all__ = ["plot_trajectory", "plot_violations", "plot_refinement", "animate", "model_points", "save_figure", "PLOTTED_KINDS",
           "recorded_bounds", "bounds_to_record"]
