"""Transcription: Problem + mesh + scheme → NLP.

All per-point work (dynamics, residuals, path constraints, acceleration-level
kinematic constraints, integrands) is one CasADi ``Function`` of a single grid
point, ``map``-ped over the grid; defects are written once per scheme on whole
matrices of node values, so the NLP graph is O(1) in size per point.

Legend: ``tau`` normalised time, ``X`` states (one column per grid point),
``Z`` implicit derivative variables, ``U`` controls, ``LAM`` multipliers,
``P`` parameters, ``XD`` state derivatives, ``H`` interval lengths.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import casadi as ca
import numpy as np

from .derivatives import map_points, recording
from ..errors import OptionError, did_you_mean
from ..discretization.grid import Grid
from .nlp import NLP, Layout, Rows
from ..discretization.schemes import Scheme, lagrange_basis
from . import constraints as kc
from . import path_points
from .consistent import project_guess
from .extension import At
from .guess import guess_final_time, initial_guess

MODES = ("default", "implicit", "explicit")
CONTROL_INTERPOLATION = ("free", "linear")


@dataclass(frozen=True)
class Options:
    """Transcription options (immutable; unknown keys and bad values are refused by :func:`make_options`).

    ``derivative_bounds`` bounds the derivative variables of implicit rows (``ż``, multibody
    accelerations ``a``) to ``±derivative_bounds``.  By default they are unbounded: the residual
    ``R(x, ż, u) = 0`` at every collocation point fixes them (a residual that does not depend on any
    derivative is refused when the model is made), so a bound could only cut the optimum off; give
    one to keep IPOPT's iterates away from a residual's singularity, and the summary says when it is
    reached.
    """

    mode: str = "default"
    constraint_method: str = "bordalba2023"
    control_interpolation: str = "free"
    derivative_bounds: float = math.inf
    multiplier_bounds: float = math.inf
    projection_slack_bounds: float = 1e-3
    projection_weight: float = 1e-6
    velocity_correction_bounds: float = 0.1
    parallelization: str = "serial"
    threads: int = 1
    compile: object = "auto"  # the point-by-point derivatives compiled to C (colloc.transcription.compilation)
    path_points: int = 0  # bounds and path constraints also at this many points inside each interval (path_points.py)


def make_options(**kw) -> Options:
    fields = Options.__dataclass_fields__
    for k in kw:
        if k not in fields:
            raise OptionError(f"Unknown transcription option `{k}`.{did_you_mean(k, fields)}")
    k = kw.get("path_points", 0)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= 50:
        raise OptionError(f"`path_points` must be a whole number from 0 to 50 (points inside each interval); got {k!r}.")
    o = Options(**kw)
    for name, allowed in (("mode", MODES), ("constraint_method", kc.METHODS), ("control_interpolation", CONTROL_INTERPOLATION), ("parallelization", ("serial", "thread", "openmp"))):
        value = getattr(o, name)
        if value not in allowed:
            raise OptionError(f"Unknown {name} `{value}`.{did_you_mean(value, allowed)} Choose one of: {', '.join(allowed)}.")
    if not any(o.compile is s for s in (True, False)) and o.compile != "auto":
        raise OptionError(f"`compile` must be True, False or 'auto'; got {o.compile!r}.")
    for name in POSITIVE_OPTIONS:
        _positive(name, getattr(o, name), allow_zero=name == "projection_weight")
    if isinstance(o.threads, bool) or not isinstance(o.threads, (int, np.integer)) or o.threads < 1:
        raise OptionError(f"The transcription option `threads` must be a whole number ≥ 1; got {o.threads!r}.")
    return o


#: Options that are sizes of bounds or weights: positive numbers (``inf`` for none where that makes sense).
POSITIVE_OPTIONS = ("derivative_bounds", "multiplier_bounds", "projection_slack_bounds", "projection_weight",
                    "velocity_correction_bounds")


def _positive(name, value, allow_zero=False):
    """Refuse a bound or weight option that is not a number > 0 (≥ 0 for a weight): a negative bound
    would give IPOPT lower > upper, a failure that names no option."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = None
    if isinstance(value, bool) or v is None or math.isnan(v) or v < 0 or (v == 0 and not allow_zero):
        need = "≥ 0" if allow_zero else "> 0 (math.inf for none)"
        raise OptionError(f"The transcription option `{name}` must be a number {need}; got {value!r}.")


def point_function(problem, opts) -> tuple[ca.Function, dict]:
    """One grid point: ``(t, x, z, u, lam, p) -> (xdot, res, path, acc, L)``."""
    model = problem.model
    imp = model.implicit_states(opts.mode)
    args, xdot, res = model.dynamics_expressions(opts.mode)  # the model's own symbols: z are the implicit states' dot(s)
    acc, acc_labels = model.constraint_expressions("acceleration")
    if acc.numel() and model.states and ca.depends_on(acc, model.dots):
        acc = ca.substitute([acc], [model.dots], [xdot])[0]
    paths = [pc.expr for pc in problem.paths]
    path = ca.vertcat(*paths) if paths else ca.SX(0, 1)
    integrands = [c.integral for c in problem.costs if c.integral is not None]
    L = ca.vertcat(*integrands) if integrands else ca.SX(0, 1)
    if integrands and model.states and ca.depends_on(L, model.dots):  # state rates in a cost: the derivative variables or the explicit right-hand sides
        L = ca.substitute([L], [model.dots], [xdot])[0]
    outs = [xdot, res, path, acc, L]
    f = ca.Function("point", args, outs, ["t", "x", "z", "u", "lam", "p"], ["xdot", "res", "path", "acc", "L"])
    path_names, path_lo, path_hi = [], [], []
    for pc in problem.paths:
        n = pc.expr.numel()
        path_names += [pc.name if n == 1 else f"{pc.name}[{i}]" for i in range(n)]
        path_lo.append(pc.lower)
        path_hi.append(pc.upper)
    meta = dict(
        z_names=[s.name + ".dot" for s in imp], res_names=[s.name for s in imp], acc_labels=acc_labels,
        path_names=path_names,
        path_lower=np.concatenate(path_lo) if path_lo else np.zeros(0),
        path_upper=np.concatenate(path_hi) if path_hi else np.zeros(0),
        symbols=(list(args), outs),  # what ``f`` was made of
    )
    return f, meta


def transcribe(problem, mesh, scheme: Scheme, opts: Options, guess=None, contact=None, warm=None) -> NLP:
    """Build the NLP of ``problem`` on ``mesh`` (normalised, increasing, 0 … 1) with ``scheme``.

    ``contact``, if given, is called as ``contact(grid, residual_names)`` and returns the contact handling
    (:class:`colloc.transcription.contacts.ContactRows`).  It and the constraint method are extensions
    (:mod:`colloc.transcription.extension`), called through the protocol's hooks only: extra variables, the
    contact forces in the residual, interval ends, rows and cost terms.  ``warm`` (a
    :class:`~colloc.transcription.extension.Warm`) holds a warm start's columns that ``guess`` leaves out, for the
    extensions' guesses.
    """
    grid = Grid(mesh, scheme)
    tau = grid.tau
    method = kc.make(problem, scheme, opts, grid)
    point, meta = point_function(problem, opts)

    layout = _variables(problem, opts, meta, grid.num_points, grid.num_intervals)
    exts = [method] + ([contact(grid, meta["res_names"])] if contact is not None else [])
    for ext in exts:
        ext.add_variables(layout)
    initial_guess(problem, layout, tau, guess)
    if guess is None:  # a warm start is already consistent
        t0g = problem.t0_value
        project_guess(problem, layout, t0g + tau * (guess_final_time(problem) - t0g), point, opts)
    for ext in exts:
        ext.guess(layout, warm)

    w = ca.MX.sym("w", layout.size)
    V = layout.symbols(w)

    with recording() as mapped:  # every mapped call of the build, for the point-by-point derivatives
        nlp = _build(problem, opts, grid, exts, point, meta, layout, w, V)
    nlp.mapped = tuple(mapped)
    return nlp


def _first(values):
    """The first of ``values`` that is not None (None if all are)."""
    return next((v for v in values if v is not None), None)


def _build(problem, opts, grid, exts, point, meta, layout, w, V) -> NLP:
    model, scheme, n, ngrid, mesh = problem.model, grid.scheme, grid.num_intervals, grid.num_points, grid.mesh
    t0 = problem.t0_value
    tf = V["tf"] if "tf" in layout else problem.tf_bounds[0]
    fractions = _first(ext.step_fractions(V) for ext in exts)
    T, H, W = _times(grid, t0, tf, fractions)
    X, Z, U, LAM, P = V["x"], V["z"], V["u"], V["lam"], V["p"]
    (XD, RES, PATH, ACC, LQ), grid_call = map_points(point, ngrid, (T, X, Z, U, LAM, P), opts, symbols=meta["symbols"])
    at = At(T, X, H, XD)
    for ext in exts:
        F = ext.generalized_forces(V, at)
        RES = RES if F is None else RES - F
    rows = Rows()
    nx = len(model.states)
    state_names = [s.name for s in model.states]
    plain = fractions is None and nx and all(ext.plain_nodes for ext in exts)
    coefficients = scheme.defect_coefficients() if plain else None
    if coefficients is not None:  # the next mesh point's own values close each interval: nothing else reads the ends
        ends = kc.Ends(None, None)
        defects = _defects_by_matrices(grid, coefficients, X, XD, tf - t0)
    else:
        ends = kc.Ends(X[:, grid.interval_ends], XD[:, grid.interval_ends])
        for ext in exts:
            ends = ext.interval_ends(ends, V, at, point)
        node_cols = [list(grid.node(j)) for j in range(scheme.num_nodes - 1)]
        X_nodes = [X[:, c] for c in node_cols] + [ends.X]
        F_nodes = [XD[:, c] for c in node_cols] + [ends.XD]
        for ext in exts:
            F_nodes = ext.adjust_derivatives(F_nodes, V, at)
        Hx = ca.repmat(H, nx, 1) if nx else H
        defects = scheme.defects(X_nodes, F_nodes, Hx)
    at = at._replace(ends=ends)
    for dname, d in zip(scheme.defect_names(), defects):
        rows.add("defect" if dname == "defect" else f"defect.{dname}", state_names, d, np.arange(n))
    res_cols, acc_cols = RES, ACC
    for ext in exts:
        res_cols, acc_cols = ext.pointwise_rows(res_cols, acc_cols, ends)
    rows.add("residual", meta["res_names"], res_cols, np.arange(ngrid))
    if meta["acc_labels"]:
        pts = _first(ext.acceleration_points() for ext in exts)
        pts = np.arange(ngrid) if pts is None else pts
        rows.add(None, meta["acc_labels"], acc_cols[:, pts] if len(pts) < ngrid else acc_cols, pts)
    if meta["path_names"]:
        rows.add("path", meta["path_names"], PATH, np.arange(ngrid), meta["path_lower"], meta["path_upper"])
    if opts.path_points:
        path_points.add_rows(rows, problem, grid, point, meta, opts.path_points, T, H, V, XD)
    if opts.control_interpolation == "linear" and U.numel() and grid.stride > 1:
        _control_interpolation(rows, grid, U, [c.name for c in model.controls])
    for ext in exts:
        ext.add_rows(rows, V, at)

    ends_L = _first(ext.end_integrands(V, at, LQ) for ext in exts)
    terms = _costs(problem, rows, V, tf, t0, T, LQ, W, layout, ends_L)
    for ext in exts:
        terms.update(ext.cost_terms(V, at))
    if opts.control_interpolation == "free" and U.numel():
        terms.update(_dangling_controls(grid, U))
    f = sum(terms.values()) if terms else ca.MX(0)
    method, hooks = exts[0], (exts[1] if len(exts) > 1 else None)
    return NLP(w, f, rows, layout, terms, mesh=mesh, grid=grid, point=point, method=method, contact=hooks, grid_call=grid_call)


def free_step_maps(grid) -> tuple[np.ndarray, np.ndarray]:
    """Linear maps from the interval fractions ``σ`` (shape ``(n,)``, ``Σσ = 1``) to the grid.

    Returns ``A, B``, both of shape ``(num_points, n)``: ``τ = A σ`` is the normalised time of every
    grid point (node ``j`` of interval ``i`` at ``σ_0 + … + σ_{i−1} + s_j σ_i``) and ``W = B σ`` the
    quadrature weights (``B[k, i]`` the scheme's weight of the node of interval ``i`` at point ``k``).
    """
    n, nodes, scheme = grid.num_intervals, grid.nodes_of_intervals, grid.scheme
    A = np.zeros((grid.num_points, n))
    B = np.zeros((grid.num_points, n))
    for i in range(n):
        A[nodes[i, 0]:, :i] = 1.0
        A[nodes[i, :-1], i] = scheme.nodes[:-1]
        B[nodes[i], i] += scheme.weights
    A[-1, :] = 1.0
    return A, B


def _times(grid, t0, tf, fractions=None):
    """The grid's times (a row), the interval lengths (a row) and the quadrature weights on ``[0, 1]``:
    numbers on a fixed horizon, expressions in a free final time or in free steps' ``fractions``."""
    if fractions is None and isinstance(tf, (int, float)):
        return ca.DM((t0 + (tf - t0) * grid.tau)[None, :]), ca.DM((tf - t0) * np.diff(grid.mesh)[None, :]), grid.weights
    if fractions is None:
        return t0 + (tf - t0) * ca.DM(grid.tau).T, (tf - t0) * ca.DM(np.diff(grid.mesh)).T, grid.weights
    # interval lengths are variables (free steps): times, lengths and weights follow them linearly
    tau, weights = free_step_maps(grid)
    # sparse maps: MX keeps a dense matrix's structural zeros, so ca.DM(weights) would make every weight depend
    # on every fraction, and the objective ∫L = Σ W_k L_k couple every fraction with every grid point in the
    # Hessian (pushed block, 50 intervals: 6,499 nonzeros in its upper triangle instead of 1,599)
    T = t0 + (tf - t0) * ca.mtimes(ca.sparsify(ca.DM(tau)), fractions).T
    return T, (tf - t0) * ca.reshape(fractions, 1, grid.num_intervals), ca.mtimes(ca.sparsify(ca.DM(weights)), fractions)


def _defects_by_matrices(grid, coefficients, X, XD, span):
    """The scheme's defects on every interval as ``X A + span · XD B`` (one block of columns per defect kind):
    the same rows as :meth:`Scheme.defects` on the node slices, in two or three MX operations instead of a
    slice per node and an operation per term.  ``A`` and ``B`` are constant and sparse; ``B`` holds the
    mesh's normalised interval lengths, ``span`` the horizon ``tf − t0`` (a number, or the free final
    time's MX; a number is folded into ``B`` and the product taken once, ``[X, XD] [A; span B]``)."""
    a, b = coefficients
    kinds, n, nodes = a.shape[0], grid.num_intervals, grid.nodes_of_intervals  # nodes[i, j]: grid index
    numeric = isinstance(span, (int, float))
    rows = np.tile(nodes, (kinds, 1)).ravel()  # (kind, interval, node) -> grid row
    cols = np.repeat(np.arange(kinds * n), nodes.shape[1])
    av = np.repeat(a, n, axis=0).ravel()
    bv = (np.repeat(b, n, axis=0) * np.tile(np.diff(grid.mesh) * (span if numeric else 1.0), kinds)[:, None]).ravel()

    def matrix(values, rows, cols, height):
        keep = np.flatnonzero(values)
        return ca.DM.triplet(rows[keep].tolist(), cols[keep].tolist(), ca.DM(values[keep]), height, kinds * n)

    m = grid.num_points
    if numeric:
        stacked = matrix(np.concatenate([av, bv]), np.concatenate([rows, rows + m]), np.concatenate([cols, cols]), 2 * m)
        D = ca.mtimes(ca.horzcat(X, XD), stacked)
    else:
        D = ca.mtimes(X, matrix(av, rows, cols, m)) + span * ca.mtimes(XD, matrix(bv, rows, cols, m))
    size = D.size1() * n
    Dv = ca.vec(D)  # column by column: each kind's block of columns is a contiguous piece
    return [Dv[k * size:(k + 1) * size] for k in range(kinds)]


def _variables(problem, opts, meta, ngrid, n) -> Layout:
    model = problem.model
    L = Layout()
    if problem.free_final_time:
        lo, hi = problem.tf_bounds
        L.add("tf", ["tf"], 1, lo, hi, per="problem")
    L.add("p", [v.name for v in model.parameters], 1, *_bounds(problem, model.parameters, 1), per="problem")
    L.add("x", [v.name for v in model.states], ngrid, *_bounds(problem, model.states, ngrid, endpoints=True), per="point")
    zb = opts.derivative_bounds
    L.add("z", meta["z_names"], ngrid, -zb, zb, per="point")
    L.add("u", [v.name for v in model.controls], ngrid, *_bounds(problem, model.controls, ngrid, endpoints=True), per="point")
    lo, hi = _bounds(problem, model.multipliers, ngrid, endpoints=True)
    mb = opts.multiplier_bounds
    L.add("lam", [v.name for v in model.multipliers], ngrid, np.maximum(lo, -mb), np.minimum(hi, mb), per="point")
    return L


def _bounds(problem, variables, ncols, endpoints=False):
    lo = np.array([[problem.bounds[v.name][0]] for v in variables]).reshape(-1, 1) * np.ones((1, ncols))
    hi = np.array([[problem.bounds[v.name][1]] for v in variables]).reshape(-1, 1) * np.ones((1, ncols))
    if endpoints:
        for i, v in enumerate(variables):
            for col, b in ((0, problem.initial_bounds), (-1, problem.final_bounds)):
                if v.name in b:
                    lo[i, col] = max(lo[i, col], b[v.name][0])
                    hi[i, col] = min(hi[i, col], b[v.name][1])
    return lo, hi


def _control_interpolation(rows, grid, U, names):
    """Tie interior controls to the line between the interval's end values."""
    first, last = list(grid.interval_starts), list(grid.interval_ends)
    for j in range(1, grid.stride):
        s = grid.scheme.nodes[j]
        Uj = U[:, list(grid.node(j))]
        rows.add("control-interpolation", names, Uj - ((1 - s) * U[:, first] + s * U[:, last]), grid.node(j))


#: Weight of the pull of controls that no defect uses towards the control polynomial (see below).
DANGLING_CONTROL_WEIGHT = 1e-6


def _dangling_controls(grid, U):
    """Pull controls at nodes no defect uses towards the interval's control polynomial.

    Radau's interval start and the Legendre–Gauss mesh points are not collocation points: their
    controls enter only bounds, path rows and residual rows that free variables of the same point
    satisfy, so IPOPT leaves them wherever the guess put them.  A small penalty on their distance
    from the polynomial through the interval's collocation controls (the interpolant's control,
    extrapolated; averaged where two intervals meet) fixes them to that value.  It vanishes at the
    optimum whenever that value is within the control's bounds and path constraints, so the optimum
    is unchanged; otherwise the control stops at the bound nearest to it.
    """
    scheme = grid.scheme
    cols = scheme.collocation_indices
    loose = [j for j in range(scheme.num_nodes) if j not in set(cols)]
    if not loose:
        return {}
    # one extrapolation per loose node and interval: Σ_k ℓ_k(s_j) U[:, node k], all intervals at once
    pieces = [sum(float(c) * U[:, list(grid.node(k))] for c, k in zip(lagrange_basis(scheme.nodes[cols], scheme.nodes[j])[:, 0], cols))
              for j in loose]
    owners = np.concatenate([grid.node(j) for j in loose])  # the grid index each extrapolation belongs to
    keep = ~np.isin(owners, grid.collocation_points)  # a Radau mesh point ends the previous roots
    index, column = np.unique(owners[keep], return_inverse=True)
    average = np.zeros((owners.size, index.size))
    average[np.flatnonzero(keep), column] = 1.0
    average /= average.sum(axis=0)  # where two intervals meet, their mean
    # sparse: a dense averaging matrix would couple every such control with every other in the Hessian
    # (and stage-wise solvers would not see that the pattern couples only the controls of one interval)
    want = ca.mtimes(ca.horzcat(*pieces), ca.sparsify(ca.DM(average)))
    return {"control-polynomial": DANGLING_CONTROL_WEIGHT * ca.sumsqr(U[:, list(index)] - want)}


def endpoint_vectors(problem, V, which):
    """Endpoint values of every pointwise variable in ``model.variables`` order."""
    col = 0 if which == "t0" else -1
    block = {"state": "x", "control": "u", "multiplier": "lam"}
    model = problem.model
    index = {kind: {v.name: i for i, v in enumerate(model.of_kind(kind))} for kind in block}
    vals = [V[block[v.kind]][index[v.kind][v.name], col] for v in model.variables if v.kind != "parameter"]
    return ca.vertcat(*vals) if vals else ca.MX(0, 1)


def endpoint_function(problem, expr) -> ca.Function:
    model = problem.model
    pw = [v for v in model.variables if v.kind != "parameter"]
    e0 = ca.vertcat(*[problem.endpoint_symbols("t0")[v.name] for v in pw]) if pw else ca.SX(0, 1)
    ef = ca.vertcat(*[problem.endpoint_symbols("tf")[v.name] for v in pw]) if pw else ca.SX(0, 1)
    return ca.Function("endpoint", [problem.t0, problem.tf, e0, ef, model.vector("parameter")], [expr])


def _costs(problem, rows, V, tf, t0, T, LQ, W, layout, ends_L=None):
    if problem.boundaries or any(c.final is not None for c in problem.costs):  # else nothing reads the endpoints
        e0, ef = endpoint_vectors(problem, V, "t0"), endpoint_vectors(problem, V, "tf")
    P = V["p"]
    for bc in problem.boundaries:
        val = endpoint_function(problem, bc.expr)(t0, tf, e0, ef, P)
        n = bc.expr.numel()
        rows.add("boundary", [bc.name] if n == 1 else [f"{bc.name}[{i}]" for i in range(n)], val, [0], bc.lower, bc.upper)
    terms = {}
    k = 0
    numeric = isinstance(tf - t0, (int, float)) and not isinstance(W, ca.MX)
    for c in problem.costs:
        parts = []
        if c.integral is not None:
            L = LQ if LQ.size1() == 1 else LQ[k, :]
            if numeric:  # the horizon folded into the weights; zero weights add no Hessian entries
                parts.append(ca.mtimes(L, ca.sparsify(ca.DM((tf - t0) * np.asarray(W)))))
            else:
                parts.append((tf - t0) * ca.mtimes(L, W if isinstance(W, ca.MX) else ca.sparsify(ca.DM(W))))
            if ends_L is not None:  # intervals that end on their own controls (contact-implicit free steps)
                parts.append(ends_L[k])
            k += 1
        if c.final is not None:
            parts.append(endpoint_function(problem, c.final)(t0, tf, e0, ef, P))
        terms[c.name] = sum(parts[1:], parts[0]) if parts else ca.MX(0)
    return terms
