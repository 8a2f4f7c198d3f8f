"""Figures of trajectories.

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

from .errors import FileFormatError, OptionError, did_you_mean
from .trajectory import Trajectory, atomic_write

#: Column kinds drawn by default (derivative and slack columns are left out).
PLOTTED_KINDS = ("state", "control", "multiplier")

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
        Variable bounds (e.g. ``problem.bounds``); finite ones are drawn as
        dashed lines on the matching subplot, except those further than half
        the data's range from the data (they would squash the curves).

    Returns
    -------
    matplotlib.figure.Figure
        Titles are the column names.  Curves use the scheme's interpolant
        (:meth:`Trajectory.sample`); dots mark the grid points.
    """
    trajs = [traj_or_list] if isinstance(traj_or_list, Trajectory) else list(traj_or_list)
    if not trajs or not all(isinstance(t, Trajectory) for t in trajs):
        raise OptionError("plot_trajectory takes a Trajectory or a non-empty list of Trajectory objects.")
    if labels is not None and len(labels) != len(trajs):
        raise OptionError(f"plot_trajectory got {len(labels)} labels for {len(trajs)} trajectories.")
    names = _columns(trajs, names)
    plt = _pyplot()
    ncols = min(_MAX_COLUMNS, max(1, math.ceil(math.sqrt(len(names)))))
    nrows = math.ceil(len(names) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols, 2.6 * nrows), squeeze=False, layout="constrained")
    flat = axes.ravel()
    for ax in flat[len(names):]:
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
            line, = ax.plot(dense_t, dense[name], color=color, lw=1.4)
            ax.plot(traj.time, traj[name], ".", color=color, ms=3)
        if line is None:  # none of the columns: keep a legend entry all the same
            line, = flat[0].plot([], [], color=color, lw=1.4)
        handles.append(line)
    for k, (ax, name) in enumerate(zip(flat, names)):
        ax.set_title(name, fontsize=10)
        if bounds and name in bounds:
            _draw_bounds(ax, bounds[name])
        if k + ncols >= len(names):  # bottom subplot of its column
            ax.set_xlabel("time")
        ax.grid(True, alpha=0.3)
    if labels is not None or len(trajs) > 1:
        texts = labels if labels is not None else [t.metadata.get("problem", f"#{i + 1}") for i, t in enumerate(trajs)]
        fig.legend(handles, [str(t) for t in texts], loc="outside upper center", ncols=min(len(trajs), 4), fontsize=8)
    return fig


def _draw_bounds(ax, pair):
    """Dashed lines at the finite bounds near the data; far ones would squash the curves."""
    lo, hi = ax.dataLim.intervaly
    span = hi - lo if hi > lo else max(abs(hi), 1.0)
    for value in pair:
        if value is not None and math.isfinite(value) and lo - 0.5 * span <= value <= hi + 0.5 * span:
            ax.axhline(value, color="0.4", ls="--", lw=0.9)


def _columns(trajs, names):
    available = []
    for t in trajs:
        available += [n for n in t.names if n not in available]
    if names is None:
        names = [n for n in available if any(t.kinds.get(n) in PLOTTED_KINDS for t in trajs if n in t)]
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


__all__ = ["plot_trajectory", "save_figure", "PLOTTED_KINDS"]
