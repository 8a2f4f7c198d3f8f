"""Animation of the link frames of URDF and OpenSim models (matplotlib, written as a GIF).

Each robot is drawn as its kinematic tree — a segment from every link frame's
origin to each child link frame's origin — with a small red/green/blue triad
(x, y, z axes) at the frame of every body that moves.  Poses come from the
models' frame expressions (:meth:`colloc.model.urdf.RobotBody.frame`; a model that
sets ``display_rotation``, such as an OpenSim model with y up, is turned so
that its vertical is drawn upwards), evaluated as
one CasADi Function on the trajectory sampled with the scheme's interpolant.
:func:`colloc.plot.animate` hands URDF models to :func:`write_robot_gif`, planar points to
:func:`write_planar_gif`.  An OpenSim model's muscles are drawn as lines through their path points
(:func:`muscle_positions`), and a model whose frames and muscles all move in its x–y plane
(Moco's 2D_gait) is drawn in 2-D in that plane, any other in 3-D.
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
#: Relative spread (of the drawing's extent) below which a coordinate counts as constant.
PLANAR_RTOL = 1e-9


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


def evaluate_along(trajectory, expr, times, refuse):
    """Values of the SX column ``expr`` along ``trajectory`` at ``times``, shape ``(expr.numel(), len(times))``.

    Its symbols are time, columns (sampled by the trajectory's dense output) or parameters;
    ``refuse(key, columns)`` is the error raised for a symbol that is none of them.
    """
    symbols = ca.symvar(expr)
    columns = trajectory.sample(times)
    try:
        inputs = symbol_values(trajectory, symbols, times, columns)
    except KeyError as e:
        raise refuse(e.args[0], list(columns)) from None
    f = ca.Function("along", [ca.vertcat(*symbols)] if symbols else [ca.SX(0, 1)], [expr])
    arg = np.vstack(inputs) if inputs else np.zeros((0, times.size))
    return np.asarray(f.map(times.size)(arg)).reshape(expr.numel(), times.size)


def frame_poses(trajectory, body, times):
    """Origins and rotations of every link of ``body`` at ``times``.

    Returns
    -------
    origins : ndarray, shape (num_times, num_links, 3)
    rotations : ndarray, shape (num_times, num_links, 3, 3)
    """
    exprs = [ca.horzcat(*body.frame(link)) for link in body.links]  # [p R], (3, 4) each
    values = evaluate_along(trajectory, ca.vec(ca.horzcat(*exprs)), times, lambda key, columns: OptionError(
        f"Robot `{body.name}` needs `{key}`, which is not a column of the trajectory.{did_you_mean(key, columns)}"))
    values = values.reshape(len(body.links), 4, 3, times.size)
    values = values.transpose(3, 0, 2, 1)  # (time, link, row, column of [p R])
    return values[..., 0], values[..., 1:]


class RobotScene:
    """The figure of an animation of link frames (and muscle lines) and how to move it to one frame.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
    canvas : FigureCanvasAgg
    ax : Axes
        2-D (the model's x–y) when every frame and muscle moves in that plane, else 3-D.
    muscle_lines : dict
        ``{muscle: Line2D or Line3D}``, one line per muscle path.
    """

    def __init__(self, trajectory, bodies, times, dpi=80, muscles=None):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        raw = [(b, *frame_poses(trajectory, b, times)) for b in bodies]
        lines = muscle_positions(trajectory, muscles or {}, times)
        fixed = muscle_positions(trajectory, muscles or {}, times, collapse=False)  # points where they sit on their bodies
        self.planar = is_planar([o for _, o, _ in raw], [R for _, _, R in raw], fixed.values())
        if self.planar:  # the model's own x and y: no turning needed
            self.poses = raw
            self.lines = lines
        else:
            self.poses = [(b, *_upright(b, o, R)) for b, o, R in raw]
            V = _display_rotation(bodies)
            self.lines = {k: v @ V.T for k, v in lines.items()} if V is not None else lines
        dims = 2 if self.planar else 3
        every = np.concatenate([o.reshape(-1, 3) for _, o, _ in self.poses] + [p.reshape(-1, 3) for p in self.lines.values()])
        if not np.all(np.isfinite(every)):
            raise OptionError("A link frame's or muscle point's position is NaN or inf along the trajectory.")
        lo, hi = every.min(axis=0)[:dims], every.max(axis=0)[:dims]
        centre, half = 0.5 * (lo + hi), 0.55 * max(float((hi - lo).max()), 1e-3)
        self.figure = Figure(figsize=(5.0, 5.0), dpi=dpi)
        self.canvas = FigureCanvasAgg(self.figure)
        ax = self.ax = self.figure.add_subplot(**({} if self.planar else {"projection": "3d"}))
        for k, axis in enumerate("xyz"[:dims]):
            getattr(ax, f"set_{axis}lim")(centre[k] - half, centre[k] + half)
        if self.planar:
            ax.set_aspect("equal")
            ax.set_xlabel("x"), ax.set_ylabel("y")
        else:
            ax.set_box_aspect((1, 1, 1))
            ax.set_xlabel("x"), ax.set_ylabel("y"), ax.set_zlabel("z")
        self.times, self.dims, self.length = times, dims, TRIAD_SCALE * 2 * half
        self._build_artists()

    def _line(self, *style, **kw):
        return self.ax.plot(*([[]] * self.dims), *style, **kw)[0]

    def _build_artists(self):
        self.artists = []
        for k, (body, origins, rotations) in enumerate(self.poses):
            index = {link: i for i, link in enumerate(body.links)}
            edges = [(index[a], index[b]) for a, b in body.skeleton]
            moving = [i for i, link in enumerate(body.links) if link in body.moving_links]
            line = self._line("o-", color=f"C{k % 10}", lw=2.5, ms=3, label=body.name)
            triads = [self._line(color=c, lw=1.2) for c in ("r", "g", "b")[:self.dims]]
            self.artists.append((line, triads, edges, moving, origins, rotations))
        self.muscle_lines = {name: self._line("-", color="firebrick", lw=1.0, alpha=0.8, label=name) for name in self.lines}
        self.clock = (self.ax.text if self.planar else self.ax.text2D)(0.5, 0.97, "", transform=self.ax.transAxes, ha="center")

    def _set(self, line, points):
        if self.planar:
            line.set_data(points[:, 0], points[:, 1])
        else:
            line.set_data_3d(points[:, 0], points[:, 1], points[:, 2])

    def show(self, i):
        """Move every artist to the frame at ``times[i]``."""
        for line, triads, edges, moving, origins, rotations in self.artists:
            self._set(line, _segments(origins[i], edges))
            for axis, triad in enumerate(triads):
                tips = origins[i, moving] + self.length * rotations[i, moving, :, axis]
                self._set(triad, _segments(np.vstack([origins[i, moving], tips]), [(j, j + len(moving)) for j in range(len(moving))]))
        for name, line in self.muscle_lines.items():
            self._set(line, self.lines[name][i])
        self.clock.set_text(f"t = {self.times[i]:.3f}")


def write_robot_gif(trajectory, bodies, times, fps, path, dpi, muscles=None):
    """Render the link frames of ``bodies`` (and the ``muscles``' paths, ``{name: path points}``) at
    ``times`` and write one GIF to ``path``: in 2-D when the motion is planar, else in 3-D."""
    from PIL import Image

    scene = RobotScene(trajectory, bodies, times, dpi, muscles)
    frames = []
    for i in range(len(times)):
        scene.show(i)
        scene.canvas.draw()
        frames.append(Image.frombuffer("RGBA", scene.canvas.get_width_height(), scene.canvas.buffer_rgba(), "raw", "RGBA", 0, 1).convert("RGB"))
    buf = io.BytesIO()
    frames[0].save(buf, format="GIF", save_all=True, append_images=frames[1:], duration=int(round(1000 / fps)), loop=0)
    atomic_write(path, buf.getvalue())
    return path


def _display_rotation(bodies):
    return next((b.display_rotation for b in bodies if getattr(b, "display_rotation", None) is not None), None)


# -- muscle paths ----------------------------------------------------------------------------------
# A muscle whose component carries ``path_points`` (an ``.osim`` muscle on a GeometryPath:
# colloc.opensim.muscles.OpenSimMuscle.path_points) is drawn as the polyline through its points; an
# inactive ConditionalPathPoint is drawn where the previous active point is (a segment of zero length),
# so that every frame of one muscle has the same number of points and the line is the path OpenSim measures.
def muscle_paths(model_or_points) -> dict:
    """``{muscle name: path points}`` of the components that declare ``path_points`` (empty if none)."""
    model = getattr(model_or_points, "model", model_or_points)
    comps = getattr(model, "components", model_or_points if isinstance(model_or_points, (list, tuple)) else [model_or_points])
    return {c.name: c.path_points for c in comps if getattr(c, "path_points", ())}


def muscle_positions(trajectory, paths, times, collapse=True) -> dict:
    """Ground positions of every muscle's path points at ``times``.

    Returns
    -------
    dict
        ``{muscle: ndarray, shape (num_times, num_points, 3)}``; with ``collapse``, inactive points moved
        onto the previous active one (onto the next for a path's first point), else where they are fixed.
    """
    if not paths:
        return {}
    rows = []
    for points in paths.values():
        for active, position in points:
            flag = ca.SX(1.0 if active is True else 0.0) if isinstance(active, bool) else ca.if_else(active, 1.0, 0.0)
            rows.append(ca.vertcat(flag, ca.vec(position)))
    joined = ca.vertcat(*rows)
    symbols = ca.symvar(joined)
    try:
        inputs = symbol_values(trajectory, symbols, times)
    except KeyError as err:
        raise OptionError(f"A muscle path needs `{err.args[0]}`, which is not a column of the trajectory."
                          f"{did_you_mean(err.args[0], list(trajectory.names))}") from None
    f = ca.Function("muscle_points", [ca.vertcat(*symbols)], [joined])
    values = np.asarray(f.map(times.size)(np.vstack(inputs))).reshape(len(rows), 4, times.size).transpose(2, 0, 1)
    out, start = {}, 0
    for name, points in paths.items():
        block = values[:, start:start + len(points)]
        start += len(points)
        out[name] = _collapse_inactive(block[..., 0] > 0.5, block[..., 1:]) if collapse else block[..., 1:]
    return out


def _collapse_inactive(active, positions):
    """Inactive points onto the previous active one (the next one before the first active point)."""
    out = positions.copy()
    for t in range(positions.shape[0]):
        on = np.flatnonzero(active[t])
        if on.size == 0:
            continue
        for j in range(positions.shape[1]):
            if not active[t, j]:
                before = on[on < j]
                out[t, j] = positions[t, before[-1] if before.size else on[0]]
    return out


def is_planar(origins, rotations, lines=()) -> bool:
    """Whether every frame and line point moves in the x–y plane of the model.

    Parameters
    ----------
    origins : list of ndarray, shape (num_times, num_frames, 3)
    rotations : list of ndarray, shape (num_times, num_frames, 3, 3)
    lines : iterable of ndarray, shape (num_times, num_points, 3)
        Every z stays at its first value, and every frame turns about z only (``(R(t) R(0)ᵀ)_zz = 1``),
        to ``PLANAR_RTOL`` of the drawing's extent.
    """
    points = [o for o in origins] + list(lines)
    every = np.concatenate([p.reshape(-1, 3) for p in points])
    scale = max(float(np.ptp(every, axis=0).max()), 1e-3)
    if any(np.abs(p[..., 2] - p[:1, :, 2]).max(initial=0.0) > PLANAR_RTOL * scale for p in points):
        return False
    for R in rotations:
        turn = np.einsum("tlij,lkj->tlik", R, R[0])  # R(t) R(0)ᵀ for every frame
        if np.abs(turn[..., 2, 2] - 1.0).max(initial=0.0) > PLANAR_RTOL:
            return False
    return True



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
    out = np.full((3 * len(edges), points.shape[1]), np.nan)
    for k, (a, b) in enumerate(edges):
        out[3 * k], out[3 * k + 1] = points[a], points[b]
    return out


__all__ = ["robot_bodies", "frame_poses", "RobotScene", "write_robot_gif", "write_planar_gif", "muscle_paths", "muscle_positions",
           "is_planar"]
