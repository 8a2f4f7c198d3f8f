"""3-D animation of the link frames of URDF models (matplotlib ``mplot3d``, written as a GIF).

Each robot is drawn as its kinematic tree — a segment from every link frame's
origin to each child link frame's origin — with a small red/green/blue triad
(x, y, z axes) at the frame of every body that moves.  Poses come from the
models' frame expressions (:meth:`colloc.urdf.RobotBody.frame`), evaluated as
one CasADi Function on the trajectory sampled with the scheme's interpolant.
:func:`colloc.plot.animate` hands URDF models to :func:`write_robot_gif`.
"""
from __future__ import annotations

import io

import casadi as ca
import numpy as np

from .errors import OptionError, did_you_mean
from .model import TIME
from .trajectory import atomic_write

#: Length of the axis triads as a fraction of the drawing's extent.
TRIAD_SCALE = 0.06


def robot_bodies(model_or_points) -> list:
    """The URDF models (:class:`~colloc.urdf.RobotBody`) among a Problem's, Model's or list's components."""
    from .urdf import RobotBody

    model = getattr(model_or_points, "model", model_or_points)
    comps = getattr(model, "components", model_or_points if isinstance(model_or_points, (list, tuple)) else [model_or_points])
    return [c for c in comps if isinstance(c, RobotBody)]


def symbol_values(trajectory, symbols, times, columns=None) -> list:
    """Values at ``times`` of each CasADi symbol: time itself, a column of ``trajectory`` or a parameter.

    ``columns`` is ``trajectory.sample(times)`` when the caller has it already.
    A symbol that is none of these raises ``KeyError`` with its name.
    """
    columns = trajectory.sample(times) if columns is None else columns
    out = []
    for s in symbols:
        key = s.name()
        if ca.is_equal(s, TIME):
            out.append(times)
        elif key in columns:
            out.append(columns[key])
        elif key in trajectory.parameters:
            out.append(np.full(times.size, float(trajectory.parameters[key])))
        else:
            raise KeyError(key)
    return out


def frame_poses(trajectory, body, times):
    """Origins and rotations of every link of ``body`` at ``times``.

    Returns
    -------
    origins : ndarray, shape (num_times, num_links, 3)
    rotations : ndarray, shape (num_times, num_links, 3, 3)
    """
    exprs = [ca.horzcat(*body.frame(link)) for link in body.links]  # [p R], (3, 4) each
    joined = ca.horzcat(*exprs)
    symbols = ca.symvar(joined)
    columns = trajectory.sample(times)
    try:
        inputs = symbol_values(trajectory, symbols, times, columns)
    except KeyError as e:
        key = e.args[0]
        raise OptionError(f"Robot `{body.name}` needs `{key}`, which is not a column of the trajectory.{did_you_mean(key, list(columns))}") from None
    f = ca.Function("frames", [ca.vertcat(*symbols)], [ca.vec(joined)])
    values = np.asarray(f.map(times.size)(np.vstack(inputs))).reshape(len(body.links), 4, 3, times.size)
    values = values.transpose(3, 0, 2, 1)  # (time, link, row, column of [p R])
    return values[..., 0], values[..., 1:]


def write_robot_gif(trajectory, bodies, times, fps, path, dpi):
    """Render the link frames of ``bodies`` at ``times`` and write one GIF to ``path``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from PIL import Image

    poses = [(b, *frame_poses(trajectory, b, times)) for b in bodies]
    every = np.concatenate([o.reshape(-1, 3) for _, o, _ in poses])
    if not np.all(np.isfinite(every)):
        raise OptionError("A link frame's position is NaN or inf along the trajectory.")
    lo, hi = every.min(axis=0), every.max(axis=0)
    centre, half = 0.5 * (lo + hi), 0.55 * max(float((hi - lo).max()), 1e-3)
    fig = Figure(figsize=(5.0, 5.0), dpi=dpi)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_subplot(projection="3d")
    for k, set_lim in enumerate((ax.set_xlim, ax.set_ylim, ax.set_zlim)):
        set_lim(centre[k] - half, centre[k] + half)
    ax.set_box_aspect((1, 1, 1))
    ax.set_xlabel("x"), ax.set_ylabel("y"), ax.set_zlabel("z")
    artists = []
    for k, (body, origins, rotations) in enumerate(poses):
        index = {link: i for i, link in enumerate(body.links)}
        edges = [(index[a], index[b]) for a, b in body.skeleton]
        moving = [i for i, link in enumerate(body.links) if link in body.moving_links]
        line, = ax.plot([], [], [], "o-", color=f"C{k % 10}", lw=2.5, ms=3, label=body.name)
        triads = [ax.plot([], [], [], color=c, lw=1.2)[0] for c in ("r", "g", "b")]
        artists.append((line, triads, edges, moving, origins, rotations))
    clock = ax.text2D(0.5, 0.97, "", transform=ax.transAxes, ha="center")
    length = TRIAD_SCALE * 2 * half
    frames = []
    for t_index, t in enumerate(times):
        for line, triads, edges, moving, origins, rotations in artists:
            seg = _segments(origins[t_index], edges)
            line.set_data_3d(seg[:, 0], seg[:, 1], seg[:, 2])
            for axis, triad in enumerate(triads):
                tips = origins[t_index, moving] + length * rotations[t_index, moving, :, axis]
                seg = _segments(np.vstack([origins[t_index, moving], tips]), [(i, i + len(moving)) for i in range(len(moving))])
                triad.set_data_3d(seg[:, 0], seg[:, 1], seg[:, 2])
        clock.set_text(f"t = {t:.3f}")
        canvas.draw()
        frames.append(Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1).convert("RGB"))
    buf = io.BytesIO()
    frames[0].save(buf, format="GIF", save_all=True, append_images=frames[1:], duration=int(round(1000 / fps)), loop=0)
    atomic_write(path, buf.getvalue())
    return path


def _segments(points, edges):
    """Polyline through ``edges`` of ``points`` separated by NaN rows (one artist draws a whole tree)."""
    if not edges:
        return np.zeros((0, 3))
    out = np.full((3 * len(edges), 3), np.nan)
    for k, (a, b) in enumerate(edges):
        out[3 * k], out[3 * k + 1] = points[a], points[b]
    return out


__all__ = ["robot_bodies", "frame_poses", "write_robot_gif"]
