"""The midpoint variational integrator as a transcription (discrete mechanics and optimal control).

Decision variables: coordinates ``q_k`` and multipliers ``λ_k`` at the mesh
points, controls ``u_k`` constant on each interval (zero-order hold),
parameters, and ``tf`` if free.  Rows (labels ``kind:name@k=K``):

* ``del:<coordinate>@k`` — DEL equations at interior mesh points, divided
  by ``w_k`` (units of force);
* ``holonomic:<constraint>@k`` — ``φ(q_k) = 0`` at every mesh point, and
  ``holonomic:<constraint>.dot@k`` — ``φ̇ = 0`` at the two ends;
* ``initial:<speed>``, ``final:<speed>`` — the end speeds, from the
  discrete Legendre transforms, within their initial/final values and bounds;
* ``bound:<speed>@k`` — speed bounds on ``Δq/h`` of each interval;
* ``path:<name>@k`` — path constraints at interval midpoints
  ``(t_k + h/2, q̄, Δq/h, u_k, λ̄)``;
* ``boundary:<name>`` — endpoint constraints.

The integral cost is ``Σ h_k ℓ(midpoint)`` (Ober-Blöbaum, Junge & Marsden,
ESAIM:COCV 17 (2011) 322–352).  The discrete equations themselves are
:class:`colloc.transcription.discrete_mechanics.MidpointVI`.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from .discrete_mechanics import FORCING, SCHEME, MidpointVI
from ..errors import OptionError
from ..discretization.grid import Grid
from ..discretization.interpolant import held
from ..discretization.mesh import make_mesh
from ..model.component import TIME
from .nlp import NLP, Layout, Rows
from ..discretization.schemes import get_scheme
from ..results.trajectory import Trajectory
from . import _bounds, endpoint_function
from .base import Transcription
from .extension import At
from .guess import guess_final_time, initial_guess


class MidpointVITranscription(Transcription):
    """``problem`` (Lagrangian model, see :class:`MidpointVI`) by the midpoint rule on one mesh.

    Options: ``forcing`` (``"midpoint"``, default, second order; ``"trep"``); any other is refused.
    """

    def __init__(self, problem, intervals=None, mesh=None, **options):
        for k in options:
            if k != "forcing":
                raise OptionError(f"Option `{k}` does not apply to scheme `{SCHEME}`; its only option is `forcing` ({', '.join(FORCING)}).")
        for c in problem.costs:
            if c.integral is not None and problem.model.states and ca.depends_on(c.integral, problem.model.dots):
                raise OptionError(f"Cost `{c.name}` weighs state derivatives, which scheme `{SCHEME}` has no variables for; use a collocation scheme.")
        self.problem = problem
        self.vi = MidpointVI(problem, options.get("forcing", "midpoint"))
        self.mesh = make_mesh(intervals, mesh)

    def build(self, guess=None) -> NLP:
        return transcribe_midpoint_vi(self.problem, self.mesh, self.vi, guess)

    def trajectory(self, nlp, w, meta=None) -> Trajectory:
        values = nlp.layout.unpack(w)
        problem = self.problem
        t0 = problem.t0_value
        tf = float(values["tf"][0, 0]) if "tf" in values else problem.tf_bounds[0]
        info = dict(problem=problem.name, mesh=[float(x) for x in nlp.mesh])
        info.update(meta or {})
        return self.vi.trajectory(t0 + nlp.mesh * (tf - t0), values["q"], values["u"], values["lam"], values["p"][:, 0], info)


def transcribe_midpoint_vi(problem, mesh, vi, guess=None, contact=None, warm=None) -> NLP:
    """The DMOC NLP of ``problem`` on ``mesh`` (normalised, 0 … 1); see :func:`solve_midpoint_vi`.

    ``contact`` (optional) adds contact forces at the nodes and their rows
    (:class:`colloc.transcription.contact_vi.ContactVIRows`), called through the extension protocol
    (:mod:`colloc.transcription.extension`): ``add_variables``, ``guess``, ``generalized_forces`` (shape
    (nq, n + 1), weighted like ``Gᵀλ``), ``add_rows`` and ``cost_terms``, given the configurations, times,
    steps and node speeds in an :class:`~colloc.transcription.extension.At`; ``warm`` is handed to its ``guess``.
    """
    model = problem.model
    mesh = np.asarray(mesh, float)
    n, nq = mesh.size - 1, vi.num_coordinates
    exts = [contact] if contact is not None else []
    layout = _guessed_layout(problem, vi, mesh, guess, exts, warm)
    w = ca.MX.sym("w", layout.size)
    V = layout.symbols(w)
    t0 = problem.t0_value
    tf = V["tf"] if "tf" in layout else problem.tf_bounds[0]
    T = t0 + (tf - t0) * ca.DM(mesh).T
    H = (tf - t0) * ca.DM(np.diff(mesh)).T
    Q, U, LAM, P = V["q"], V["u"], V["lam"], V["p"]
    Pm, Pp, Qm, Vm, Tm = vi.interval.map(n)(Q[:, :-1], Q[:, 1:], T[:, :-1], H, U, P)
    PHI, GT = vi.node.map(n + 1)(Q, LAM, T, P)
    at = At(T, Q, H)
    for ext in exts:
        F = ext.generalized_forces(V, at)
        GT = GT if F is None else GT + F
    rows = Rows()
    if n > 1:
        W = ca.repmat(0.5 * (H[:, :-1] + H[:, 1:]), nq, 1)
        rows.add("del", vi.coordinate_names, (Pp[:, :-1] - Pm[:, 1:]) / W + GT[:, 1:-1], np.arange(1, n))
    rows.add("holonomic", vi.constraint_names, PHI, np.arange(n + 1))
    ends = {}
    for col, (mom, which) in ((0, (Pm[:, 0] - 0.5 * H[0] * GT[:, 0], "initial")), (n, (Pp[:, -1] + 0.5 * H[-1] * GT[:, -1], "final"))):
        ends[which] = vi.velocity(Q[:, col], mom, T[col], P)
        if vi.num_multipliers:
            rows.add("holonomic", vi.velocity_names, vi.constraint_rate(Q[:, col], ends[which], T[col], P), [col])
    _speed_rows(problem, vi, rows, ends, Vm, n)
    at = at._replace(speeds=ca.horzcat(Vm, ends["final"]))
    for ext in exts:
        ext.add_rows(rows, V, at)
    states = {name: Qm[i, :] for i, name in enumerate(vi.coordinate_names)}
    states.update({name: Vm[i, :] for i, name in enumerate(vi.speed_names)})
    Xm = ca.vertcat(*[states[s.name] for s in model.states])
    LAMm = 0.5 * (LAM[:, :-1] + LAM[:, 1:])
    point_args = [TIME, model.vector("state"), model.vector("control"), model.vector("multiplier"), model.vector("parameter")]
    if problem.paths:
        _path_rows(problem, rows, ca.Function("path", point_args, [ca.vertcat(*[pc.expr for pc in problem.paths])]).map(n)(
            Tm, Xm, U, _model_order(vi, model, LAMm), P))
    e = {which: _endpoint_vector(problem, vi, Q[:, col], ends[which], U[:, 0 if col == 0 else -1], LAM[:, col])
         for col, which in ((0, "initial"), (n, "final"))}
    for bc in problem.boundaries:
        val = endpoint_function(problem, bc.expr)(t0, tf, e["initial"], e["final"], P)
        k = bc.expr.numel()
        rows.add("boundary", [bc.name] if k == 1 else [f"{bc.name}[{i}]" for i in range(k)], val, [0], bc.lower, bc.upper)
    terms = {}
    for c in problem.costs:
        term = ca.MX(0)
        if c.integral is not None:
            ell = ca.Function("integrand", point_args, [c.integral]).map(n)(Tm, Xm, U, _model_order(vi, model, LAMm), P)
            term = term + ca.mtimes(ell, H.T)
        if c.final is not None:
            term = term + endpoint_function(problem, c.final)(t0, tf, e["initial"], e["final"], P)
        terms[c.name] = term
    for ext in exts:
        terms.update(ext.cost_terms(V, at))
    f = sum(terms.values()) if terms else ca.MX(0)
    return NLP(w, f, rows, layout, terms, mesh=mesh, contact=contact)


def _guessed_layout(problem, vi, mesh, guess, exts, warm) -> Layout:
    """The layout of the model's and the extensions' variables, every block guessed."""
    layout = _layout(problem, vi, mesh.size - 1)
    for ext in exts:
        ext.add_variables(layout)
    _guess(problem, vi, layout, mesh, guess)
    for ext in exts:
        ext.guess(layout, warm)
    return layout


def _path_rows(problem, rows, path):
    """The path constraints' rows, ``path`` their values at the interval midpoints."""
    names = [pc.name if pc.expr.numel() == 1 else f"{pc.name}[{i}]" for pc in problem.paths for i in range(pc.expr.numel())]
    lo = np.concatenate([pc.lower for pc in problem.paths])
    hi = np.concatenate([pc.upper for pc in problem.paths])
    rows.add("path", names, path, np.arange(path.shape[1]), lo, hi)


def _layout(problem, vi, n) -> Layout:
    model = problem.model
    lay = Layout()
    if problem.free_final_time:
        lay.add("tf", ["tf"], 1, *problem.tf_bounds)
    lay.add("p", vi.parameter_names, 1, *_bounds(problem, model.parameters, 1))
    lay.add("q", vi.coordinate_names, n + 1, *_bounds(problem, [model.lookup(x) for x in vi.coordinate_names], n + 1, endpoints=True))
    lay.add("u", vi.control_names, n, *_bounds(problem, model.controls, n, endpoints=True))
    lay.add("lam", vi.multiplier_names, n + 1, *_bounds(problem, [model.lookup(x) for x in vi.multiplier_names], n + 1, endpoints=True))
    return lay


def _guess(problem, vi, layout, mesh, warm):
    """Guesses from a midpoint-vi trajectory on the same mesh, else by colloc's rules on mesh points and midpoints."""
    n = mesh.size - 1
    if warm is not None and held(warm) and warm.time.size == n + 1 \
            and np.allclose((warm.time - warm.time[0]) / warm.duration, mesh, rtol=0, atol=1e-12) \
            and all(name in warm for name in vi.coordinate_names + vi.control_names + vi.multiplier_names):
        for block, cols in (("q", slice(None)), ("u", slice(0, n)), ("lam", slice(None))):
            b = layout[block]
            for i, name in enumerate(b.row_names):
                b.guess[i] = np.clip(warm[name][cols], b.lower[i], b.upper[i])
        if "tf" in layout:
            layout["tf"].guess[:] = np.clip(warm.time[-1], *problem.tf_bounds)
        for i, name in enumerate(layout["p"].row_names):
            layout["p"].guess[i] = warm.parameters.get(name, layout["p"].guess[i, 0])
        return
    # guesses on the mesh points (q, λ) and the interval midpoints (the held controls)
    grid = Grid(mesh, get_scheme("hermite-simpson"))
    tau, at_mesh, at_mid = grid.tau, grid.mesh_points, grid.node(1)
    model = problem.model
    tmp = Layout()
    if "tf" in layout:
        tmp.add("tf", ["tf"], 1, *problem.tf_bounds)
    tmp.add("p", layout["p"].row_names, 1, layout["p"].lower, layout["p"].upper)
    names = [s.name for s in model.states]
    lo = np.array([problem.bounds[x][0] for x in names]).reshape(-1, 1)
    hi = np.array([problem.bounds[x][1] for x in names]).reshape(-1, 1)
    tmp.add("x", names, tau.size, lo, hi)
    tmp.add("z", [], tau.size)
    for block, name in (("u", "u"), ("lam", "lam")):
        b = layout[block]
        tmp.add(name, b.row_names, tau.size, b.lower[:, :1], b.upper[:, :1])
    initial_guess(problem, tmp, tau, warm)
    x = tmp["x"]
    for i, name in enumerate(vi.coordinate_names):
        layout["q"].guess[i] = np.clip(x.guess[names.index(name), at_mesh], layout["q"].lower[i], layout["q"].upper[i])
    layout["u"].guess[:] = np.clip(tmp["u"].guess[:, at_mid], layout["u"].lower, layout["u"].upper)
    layout["lam"].guess[:] = np.clip(tmp["lam"].guess[:, at_mesh], layout["lam"].lower, layout["lam"].upper)
    layout["p"].guess[:] = tmp["p"].guess
    if "tf" in layout:
        layout["tf"].guess[:] = guess_final_time(problem, warm)


def _speed_rows(problem, vi, rows, ends, Vm, n):
    """Speeds have no variables: bound the end speeds and each interval's Δq/h."""
    for which, col, given in (("initial", 0, problem.initial_bounds), ("final", n, problem.final_bounds)):
        idx, lo, hi = [], [], []
        for i, name in enumerate(vi.speed_names):
            a, b = problem.bounds[name]
            if name in given:
                a, b = max(a, given[name][0]), min(b, given[name][1])
            if np.isfinite(a) or np.isfinite(b):
                idx.append(i), lo.append(a), hi.append(b)
        if idx:
            rows.add(which, [vi.speed_names[i] for i in idx], ends[which][idx], [col], np.array(lo), np.array(hi))
    idx = [i for i, name in enumerate(vi.speed_names) if np.isfinite(problem.bounds[name]).any()]
    if idx:
        rows.add("bound", [vi.speed_names[i] for i in idx], Vm[idx, :], np.arange(n),
                 np.array([problem.bounds[vi.speed_names[i]][0] for i in idx]), np.array([problem.bounds[vi.speed_names[i]][1] for i in idx]))


def _model_order(vi, model, LAM):
    """Rows of ``LAM`` (in ``vi.multiplier_names`` order) in ``model.multipliers`` order."""
    order = [vi.multiplier_names.index(m.name) for m in model.multipliers]
    return LAM[order, :] if order else LAM


def _endpoint_vector(problem, vi, q, v, u, lam):
    """Endpoint values of every pointwise variable, in ``model.variables`` order."""
    where = {name: q[i] for i, name in enumerate(vi.coordinate_names)}
    where.update({name: v[i] for i, name in enumerate(vi.speed_names)})
    where.update({name: u[i] for i, name in enumerate(vi.control_names)})
    where.update({name: lam[i] for i, name in enumerate(vi.multiplier_names)})
    vals = [where[x.name] for x in problem.model.variables if x.kind != "parameter"]
    return ca.vertcat(*vals) if vals else ca.MX(0, 1)
