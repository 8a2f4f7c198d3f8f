"""Single-phase direct collocation as a :class:`~colloc.transcription.base.Transcription`.

The NLP itself is built by :func:`colloc.transcription.transcribe`; this class
holds the checked settings (scheme, mesh, options) and reads a decision vector
back as a Trajectory on the grid, with the state derivatives evaluated by the
same point function the defects used.
"""
from __future__ import annotations

import numpy as np

from ..results import oscillation
from ..model.derived import add_outputs
from ..model.multibody import MULTIPLIER_BOUNDS, Multibody
from ..model.muscle import DeGrooteFregly2016Muscle
from ..discretization.mesh import make_mesh
from ..numeric import call
from ..discretization.schemes import get_scheme
from ..results.trajectory import Trajectory
from . import make_options, transcribe
from .base import Transcription


class Collocation(Transcription):
    """``problem`` by ``scheme`` (trapezoidal, Hermite–Simpson, Radau, Legendre–Gauss) on one mesh.

    Parameters
    ----------
    problem : Problem
        Already validated.
    scheme : str or Scheme
    intervals, mesh
        As :func:`colloc.make_mesh`.
    **options
        Transcription options (:class:`colloc.transcription.Options`).
    """

    stagewise = True

    def __init__(self, problem, scheme="hermite-simpson", intervals=None, mesh=None, **options):
        self.problem = problem
        self.scheme = get_scheme(scheme)
        self.mesh = make_mesh(intervals, mesh)
        self.options = make_options(**options)

    def build(self, guess=None):
        return transcribe(self.problem, self.mesh, self.scheme, self.options, guess)

    def trajectory(self, nlp, w, meta=None) -> Trajectory:
        return reconstruct(self.problem, nlp, nlp.layout.unpack(w), meta)

    def result_metadata(self) -> dict:
        return dict(constraint_method=self.options.constraint_method if self.problem.model.constraints else None)

    def slacks(self, nlp, w) -> dict:
        return nlp.method.slacks(nlp.layout.unpack(w))

    def cost_parts(self, nlp, w) -> list:
        """Sentences naming each cost term's non-finite integrand values (grid point, time) and final part at ``w``."""
        from .nonfinite import locate_cost
        from . import endpoint_function, endpoint_vectors

        problem, values = self.problem, nlp.layout.unpack(w)
        t0 = problem.t0_value
        tf = float(values["tf"][0, 0]) if "tf" in values else problem.tf_bounds[0]
        times = t0 + nlp.grid.tau * (tf - t0)
        X, Z, U, LAM, P = values["x"], values["z"], values["u"], values["lam"], values["p"]
        L = np.asarray(nlp.point.map(times.size)(times[None, :], X, Z, U, LAM, P)[4], dtype=float).reshape(-1, times.size)
        e0, ef = endpoint_vectors(problem, values, "t0"), endpoint_vectors(problem, values, "tf")
        out, k = [], 0
        for c in problem.costs:
            integrand = None
            if c.integral is not None:
                integrand, k = L[k], k + 1
            final = None if c.final is None else float(endpoint_function(problem, c.final)(t0, tf, e0, ef, P))
            out += locate_cost(c.name, integrand, final, times)
        return out

    def result(self, nlp, w, trajectory, **fields):
        # a control zig-zagging between grid points (a singular arc) passes every other check
        fields["warnings"] = list(fields.get("warnings", [])) + oscillation.warnings(
            trajectory, nlp.grid, control_interpolation=self.options.control_interpolation,
            sources=control_sources(self.problem.model))
        fields["warnings"] += reached_derivative_bounds(nlp, w, self.options.derivative_bounds, trajectory.time)
        fields["warnings"] += reached_default_multiplier_bounds(nlp, w, trajectory.time)
        fields["between_mesh_points"] = between_mesh_points(self.problem, trajectory, nlp.grid)
        return super().result(nlp, w, trajectory, **fields)


def control_sources(model) -> dict:
    """``{control name: "multibody" | "muscle"}`` for the controls of robots and muscles in ``model``."""
    out = {}
    for comp in getattr(model, "components", []):
        kind = "multibody" if isinstance(comp, Multibody) else "muscle" if isinstance(comp, DeGrooteFregly2016Muscle) else None
        if kind:
            out.update({v.name: kind for v in comp.variables if v.kind == "control"})
    return out


def reached_derivative_bounds(nlp, w, bound, time) -> list:
    """One warning per derivative variable that sits at ``±derivative_bounds`` somewhere: the residual fixes
    these variables, so a bound they reach changes the dynamics, and the optimum is that of another problem."""
    if not np.isfinite(bound) or "z" not in nlp.layout.blocks:
        return []
    Z = np.asarray(nlp.layout.unpack(w)["z"], dtype=float)
    out = []
    for name, row in zip(nlp.layout.blocks["z"].row_names, Z):
        if where := _grid_points(np.flatnonzero(np.abs(row) >= bound * (1 - 1e-6)), time):
            out.append(f"the derivative variable `{name}` is at its bound ±{bound:g} (derivative_bounds) {where}, so the "
                       "dynamics there are not the model's: raise derivative_bounds or leave it out (unbounded)")
    return out


def _grid_points(at, time) -> str:
    """``at N grid points (t = … … …)`` for grid indices ``at``; empty when there are none (or they are not ``time``'s)."""
    if not at.size or at[-1] >= time.size:
        return ""
    return f"at {at.size} grid point{'s' if at.size != 1 else ''} (t = {time[at[0]]:.6g} … {time[at[-1]]:.6g})"


def reached_default_multiplier_bounds(nlp, w, time) -> list:
    """One warning per multiplier that sits at the default ±1000 of ``holonomic``/``nonholonomic``/``acceleration``:
    there the constraint force is cut, so the motion is not the model's (a heavy pendulum's rod tension of 1500
    made the problem 'infeasible')."""
    if "lam" not in nlp.layout.blocks:
        return []
    block = nlp.layout.blocks["lam"]
    lam = np.asarray(nlp.layout.unpack(w)["lam"], dtype=float)
    lo, hi = MULTIPLIER_BOUNDS
    out = []
    for name, row, low, high in zip(block.row_names, lam, block.lower, block.upper):
        at = np.flatnonzero(((low == lo) & (row <= lo * (1 - 1e-6))) | ((high == hi) & (row >= hi * (1 - 1e-6))))
        if where := _grid_points(at, time):
            out.append(f"the multiplier `{name}` is at its default bound ±{hi:g} {where}, so the constraint force is cut there: "
                       "give the constraint wider multiplier_bounds, e.g. (-math.inf, math.inf)")
    return out


def between_mesh_points(problem, trajectory, grid) -> dict:
    """Largest |φ|, |φ̇|, |ψ| at the grid points between mesh points, by row label (``nonholonomic:skate.blade``).

    The position- and velocity-level kinematic constraints are rows at mesh points only (and the
    acceleration level holds at the collocation points), so between mesh points — at Hermite–Simpson
    midpoints, at Radau's interior roots — they hold only to the scheme's accuracy.  The summary
    reports this beside the rows' own violation, so that a mesh-point value of 1e-14 is not read as the
    whole truth.
    """
    model = problem.model
    if not model.constraints:
        return {}
    idx = grid.interior_points
    if not idx.size:
        return {}
    # φ, φ̇, ψ depend on t, x, p only: the model's mesh-level function, one mapped call
    levels, labels, _ = model.mesh_levels()
    if not labels:
        return {}
    X = np.array([trajectory[v.name][idx] for v in model.states]).reshape(len(model.states), idx.size)
    P = np.array([[trajectory.parameters[v.name]] for v in model.parameters]).reshape(-1, 1) * np.ones((1, idx.size))
    err = np.abs(call(levels.map(idx.size), trajectory.time[None, idx], X, P)[0]).reshape(len(labels), idx.size)
    out = {}
    for label, row in zip(labels, err):
        out[label] = max(out.get(label, 0.0), float(np.max(row)))
    return out


def _derivatives(nlp, args):
    """The state derivatives ẋ at every grid point: the NLP's own mapped call of the point function when it
    computes them (it keeps only the inputs the dynamics read), else the point function mapped anew."""
    grid_call = getattr(nlp, "grid_call", None)
    if grid_call is not None and grid_call.mapped is not None and grid_call.count == args[0].shape[1] and 0 in grid_call.kept[1] \
            and not grid_call.hoisted:  # its numeric inputs' share was evaluated at the NLP's own times
        inputs, outputs = grid_call.kept
        return call(grid_call.mapped, *[args[i] for i in inputs])[outputs.index(0)]
    return call(nlp.point.map(args[0].shape[1]), *args)[0]


def reconstruct(problem, nlp, values, meta=None, grid=None) -> Trajectory:
    """The Trajectory of a (possibly unconverged) decision vector, unpacked by block (``values``).

    ``grid``: the grid the values lie on, if not the NLP's (free steps move its mesh points).
    """
    grid = nlp.grid if grid is None else grid
    t0 = problem.t0_value
    tf = float(values["tf"][0, 0]) if "tf" in values else problem.tf_bounds[0]
    times = t0 + grid.tau * (tf - t0)
    X, Z, U, LAM, P = values["x"], values["z"], values["u"], values["lam"], values["p"]
    XD = _derivatives(nlp, (times[None, :], X, Z, U, LAM, np.reshape(P, (-1, 1)))).reshape(X.shape)
    model = problem.model
    cols, kinds = {}, {}
    for i, v in enumerate(model.states):
        cols[v.name], kinds[v.name] = X[i], "state"
    for i, v in enumerate(model.controls):
        cols[v.name], kinds[v.name] = U[i], "control"
    for i, v in enumerate(model.multipliers):
        cols[v.name], kinds[v.name] = LAM[i], "multiplier"
    for i, v in enumerate(model.states):
        cols[v.name + ".dot"], kinds[v.name + ".dot"] = XD[i], "derivative"
    params = {v.name: float(P[i, 0]) for i, v in enumerate(model.parameters)}
    metadata = dict(problem=problem.name, scheme=grid.scheme.name, intervals=grid.num_intervals, mesh=[float(x) for x in grid.mesh])
    mu = values.get("mu")
    if mu is not None and np.size(mu):  # bordalba2023: each interval ends on x' = x − F_x(x)ᵀ μ, not on the stored x
        metadata["projection_multipliers"] = dict(labels=list(nlp.layout["mu"].row_names),
                                                  values=np.asarray(mu, dtype=float).reshape(len(nlp.layout["mu"].row_names), -1).tolist())
    if any(b.kind == "control-interpolation" for b in nlp.rows.blocks):  # the dense output's controls are lines then
        metadata["control_interpolation"] = "linear"
    metadata.update(meta or {})
    return add_outputs(Trajectory(times, cols, kinds, params, metadata), model)
