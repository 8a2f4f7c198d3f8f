"""3-D animation of the link frames of URDF and OpenSim models (matplotlib ``mplot3d``, written as a GIF).

Each robot is drawn as its kinematic tree — a segment from every link frame's
origin to each child link frame's origin — with a small red/green/blue triad
(x, y, z axes) at the frame of every body that moves.  Poses come from the
models' frame expressions (:meth:`colloc.model.urdf.RobotBody.frame`; a model that
sets ``display_rotation``, such as an OpenSim model with y up, is turned so
that its vertical is drawn upwards), evaluated as
one CasADi Function on the trajectory sampled with the scheme's interpolant.
:func:`colloc.plot.animate` hands URDF models to :func:`write_robot_gif`, planar points to
:func:`write_planar_gif`.
"""
from __future__ import annotations

import io

import casadi as ca
import numpy as np

from ..errors import OptionError, did_you_mean
from ..model.component import TIME
from ..results.trajectory import atomic_write

#: Length of the axis triads as a fraction of the drawing's extent.
TRIAD_SCALE = 0.06


def write_planar_gif(positions, times, fps, path, dpi, ground=False):
    """Render the frames of planar bodies (``{body: positions (num_times, num_points, 2)}``) as one GIF.

    Only the moving artists are redrawn over a cached background (blitting),
    about ten times faster than matplotlib's ``PillowWriter``, which redraws
    the whole figure for every frame; the frames go to Pillow just as
    ``PillowWriter`` sends them.  The figure is built without pyplot, so the
    user's backend and open figures are left alone.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from PIL import Image

    fig = Figure(figsize=(5.0, 5.0), dpi=dpi)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    fig.subplots_adjust(left=0.12, right=0.96, bottom=0.08, top=0.93)
    # a model with contacts: the ground line y = 0 is drawn and kept in view
    everything = np.concatenate([p.reshape(-1, 2) for p in positions.values()] + ([np.zeros((1, 2))] if ground else []))
    lo, hi = everything.min(axis=0), everything.max(axis=0)
    half = 0.55 * max(float((hi - lo).max()), 1e-9) + 0.05 * max(float(np.abs(everything).max()), 1e-3)
    centre = 0.5 * (lo + hi)
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_aspect("equal")
    ax.grid(True, alpha=0.3)
    if ground:
        ax.axhline(0.0, color="0.25", lw=2.0, zorder=0)
    moving = []
    for k, (body, pos) in enumerate(positions.items()):
        for j in range(pos.shape[1]):
            ax.plot(pos[:, j, 0], pos[:, j, 1], color="0.8", lw=0.8, zorder=1)
        line, = ax.plot([], [], "o-", color=f"C{k % 10}", lw=2.5, ms=6, zorder=2, label=body, animated=True)
        moving.append((line, pos))
    if len(positions) > 1:
        ax.legend(fontsize=8, loc="upper right")
    clock = ax.text(0.5, 1.02, "", transform=ax.transAxes, ha="center", va="bottom", fontsize=10, animated=True)
    canvas.draw()
    background = canvas.copy_from_bbox(fig.bbox)
    frames = []
    for i, t in enumerate(times):
        canvas.restore_region(background)
        for line, pos in moving:
            line.set_data(pos[i, :, 0], pos[i, :, 1])
            ax.draw_artist(line)
        clock.set_text(f"t = {t:.3f}")
        ax.draw_artist(clock)
        frames.append(Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1).convert("RGB"))
    buf = io.BytesIO()
    frames[0].save(buf, format="GIF", save_all=True, append_images=frames[1:], duration=int(round(1000 / fps)), loop=0)
    atomic_write(path, buf.getvalue())


def robot_bodies(model_or_points) -> list:
    """The URDF models (:class:`~colloc.model.urdf.RobotBody`) among a Problem's, Model's or list's components."""
    from ..model.urdf import RobotBody

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

    poses = [(b, *_upright(b, *frame_poses(trajectory, b, times))) for b in bodies]
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


def _upright(body, origins, rotations):
    """Frames turned by the body's ``display_rotation`` (a model whose vertical is not z, e.g. OpenSim's y)."""
    V = getattr(body, "display_rotation", None)
    if V is None:
        return origins, rotations
    return origins @ V.T, np.einsum("ij,tljk->tlik", V, rotations)


def _segments(points, edges):
    """Polyline through ``edges`` of ``points`` separated by NaN rows (one artist draws a whole tree)."""
    if not edges:
        return np.zeros((0, 3))
    out = np.full((3 * len(edges), 3), np.nan)
    for k, (a, b) in enumerate(edges):
        out[3 * k], out[3 * k + 1] = points[a], points[b]
    return out


__all__ = ["robot_bodies", "frame_poses", "write_robot_gif", "write_planar_gif"]
