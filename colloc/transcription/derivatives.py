"""The constraint Jacobian and Lagrangian Hessian of a collocation NLP, one grid point at a time.

A collocation NLP evaluates one function of a grid point, ``map``-ped over the grid, and combines the
results linearly (defects, quadrature, residual and path rows).  Left to itself, CasADi differentiates
the whole MX graph by colouring its Jacobian and Hessian, so every derivative evaluation runs the mapped
point function's directional derivatives once per colour — dozens of times for a robot whose point
function is a recursive Newton–Euler pass.  Here the point function's own Jacobian and Hessian are SX
functions of one point (symbolic, sparse, built once), ``map``-ped over the grid and placed into the NLP's
derivatives by the chain rule:

    g(w) = G(w, Y),  Y = F(V(w))  (F: the point function at every grid point, V: its inputs, linear in w)

    ∂g/∂w   = G_w + G_Y · blkdiag(∂F/∂v) · V_w
    ∇²_ww ℓ = ℓ_ww + C + Cᵀ + (J V_w)ᵀ ℓ_YY (J V_w) + V_wᵀ blkdiag(∇²_vv (μ_k · F)) V_w,
              ℓ = σ f + λᵀ g,  μ = ℓ_Y,  J = blkdiag(∂F/∂v),  C = ℓ_wY J V_w

The outer function G (every use of ``Y`` replaced by a symbol) is cheap linear algebra, which CasADi
still differentiates itself; any use of the point function left in it (a second call, at projected states
say) is differentiated there too, so the split is exact whatever it catches.  The Panda reach at 100
Hermite–Simpson intervals spends 1.1 s instead of 3.2 s in Jacobians and 2.0 s instead of 5.1 s in
Hessians, with the same iterates.

On a fixed horizon G is usually affine in (w, Y): defects, quadrature and residual rows combine the
states and point outputs with constant weights.  Then (G_w, G_Y, f_Y) is one constant matrix, ℓ_wY and
ℓ_YY vanish, ℓ_ww is the objective's own curvature in w (a penalty on variables) and μ = σ f_Yᵀ + G_Yᵀ λ,
so no outer function is built, differentiated or run at all: the 25-interval cart-pole's set-up went
from 5.8 to 4.9 ms and its solve from 9.0 to 8.6 ms.  Likewise V_w, when the inputs are slices of the
layout's blocks (they nearly always are), is read off the MX graph as a 0/1 selection instead of being
differentiated: the 25-interval Cartesian pendulum's four mapped calls are prepared in 1.1 ms, not 1.6.

The objective's gradient is built the same way, ∇f = f_w + V_wᵀ (J_kᵀ f_Y,k), with one reverse sweep per
point (a vector–Jacobian product), so that every derivative IPOPT asks for runs the point functions made
here; these three (and the point function for the values of f and g that come with them) can then be
compiled to C (:mod:`colloc.transcription.compilation`, the transcription option ``compile``).
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import casadi as ca
import numpy as np

#: The list the mapped calls of the NLP being built are appended to (see :func:`recording`).
_RECORDING: ContextVar = ContextVar("colloc_mapped_calls", default=None)


@dataclass(frozen=True)
class MappedPoints:
    """One ``map``-ped call of a point function inside an NLP: the function, how many points, the MX
    expressions of its inputs (one column per point, or one column for all) and its output nodes."""

    function: ca.Function
    count: int
    inputs: tuple
    outputs: tuple
    #: The function's SX inputs and outputs, as it was made from them (saves calling it symbolically again).
    symbols: tuple = None
    #: The mapped function itself, and which inputs and outputs of the point function it kept (by index).
    mapped: ca.Function = None
    kept: tuple = ((), ())
    #: The transcription's ``compile`` setting (:mod:`colloc.transcription.compilation`): whether the point-by-point
    #: derivatives run compiled.
    compile: object = False
    #: Whether a numeric input's share of the point function was evaluated once (:func:`_hoisted`): then the
    #: mapped function takes those values in place of the numeric inputs, and ``kept`` no longer says how to call it.
    hoisted: bool = False


@contextmanager
def recording():
    """Collect every :func:`map_points` call made inside the ``with`` block (a list of
    :class:`MappedPoints`): the transcription records its point function and the constraint
    method's calls (levels at mesh points, the dynamics at projected states) alike."""
    calls = []
    token = _RECORDING.set(calls)
    try:
        yield calls
    finally:
        _RECORDING.reset(token)


def map_points(point, count, args, opts=None, outputs=None, symbols=None):
    """``point`` evaluated at ``count`` grid points (one column each), through a mapped copy that keeps
    only the inputs it uses and the outputs asked for (``outputs``: indices, default every non-empty
    one); returns the outputs (``None`` for those not asked for) and the call as :class:`MappedPoints`,
    also recorded when inside :func:`recording` (the backend differentiates it point by point).

    Every input and output of a mapped call costs pointer set-up at every point, in the function
    and in each of its derivatives, so the empty blocks of a model without multipliers, implicit
    derivatives, parameters or path constraints, and a time the dynamics never read, would make the
    NLP's evaluations slower than a hand-written map of the same equations; an output nobody reads
    would be differentiated twice over for nothing.  ``symbols``: the SX ``(inputs, outputs)`` ``point`` was
    made of, when at hand (saves calling it symbolically).
    """
    sx, out = symbols if symbols is not None else (point.sx_in(), None)
    out = point.call(sx) if out is None else out
    wanted = range(point.n_out()) if outputs is None else outputs
    keep_out = [i for i in wanted if point.nnz_out(i)]
    used = ca.vertcat(*[ca.vec(out[i]) for i in keep_out]) if keep_out else ca.SX(0, 1)
    keep_in = [i for i in range(point.n_in()) if point.nnz_in(i) and ca.depends_on(used, sx[i])]
    ins, outs, names, inputs = [sx[i] for i in keep_in], [out[i] for i in keep_out], [point.name_in(i) for i in keep_in], [args[i] for i in keep_in]
    hoisted = _hoisted(ins, outs, inputs, count)
    if hoisted is not None:
        ins, outs, inputs = hoisted
        names = [n for n, a in zip(names, [args[i] for i in keep_in]) if not _numeric(a)] + ["fixed"]
    lean = ca.Function(point.name(), ins, outs, names, [point.name_out(i) for i in keep_out])
    threaded = opts is not None and opts.parallelization != "serial"
    mapped = lean.map(count, opts.parallelization, opts.threads) if threaded else lean.map(count)
    values = mapped(*inputs)
    values = values if isinstance(values, (list, tuple)) else [values]
    kept = dict(zip(keep_out, values))
    result = [kept[i] if i in kept else ca.MX(point.size1_out(i), count) if i in wanted else None for i in range(point.n_out())]
    record = MappedPoints(lean, count, tuple(inputs), tuple(values), (tuple(ins), tuple(outs)), mapped, (tuple(keep_in), tuple(keep_out)),
                          getattr(opts, "compile", False), hoisted is not None)
    calls = _RECORDING.get()
    if calls is not None and keep_out:
        calls.append(record)
    return result, record


def _numeric(a):
    """Whether a mapped call's argument is a number (no symbol of the NLP in it)."""
    return not isinstance(a, ca.MX) or not ca.symvar(a)


def _hoisted(ins, outs, inputs, count):
    """The point function with its numeric inputs' share evaluated once, or ``None`` when it has none.

    On a fixed horizon the time at every grid point is a number, and whatever the outputs compute from the
    time alone (a prescribed motion's splines, its inverse dynamics, the muscles' path lengths on it) is the
    same at every evaluation: it is computed here once per point, numerically, and handed to the mapped
    function as one more input (``fixed``, a column per point).  MocoInverse of the 2-D walk: 83,775 of
    the point function's 85,599 instructions; the NLP's graph no longer has to be expanded to fold them.
    Returns ``(inputs, outputs, arguments)`` of the lean function: the symbolic inputs, then ``fixed``.
    """
    numeric = [_numeric(a) for a in inputs]
    if not any(numeric) or all(numeric):
        return None
    given = ca.vertcat(*[x for x, n in zip(ins, numeric) if n])
    flat = ca.vertcat(*[ca.vec(o) for o in outs])
    expr, symbols, values = ca.extract_parametric(flat, given)
    if not symbols:
        return None
    fixed, values = ca.vertcat(*symbols), ca.vertcat(*values)
    at = [a if isinstance(a, ca.DM) else ca.evalf(a) for a, n in zip(inputs, numeric) if n]
    numbers = ca.Function("fixed", [x for x, n in zip(ins, numeric) if n], [values]).map(count)(*at)
    pieces, row = [], 0
    for o in outs:
        pieces.append(ca.reshape(expr[row:row + o.numel()], o.shape))
        row += o.numel()
    symbolic = [x for x, n in zip(ins, numeric) if not n] + [fixed]
    arguments = [a for a, n in zip(inputs, numeric) if not n] + [ca.MX(ca.DM(numbers))]
    return symbolic, pieces, arguments


def structured(nlp, maps) -> dict | None:
    """``{"grad_f": …, "jac_g": …, "hess_lag": …}`` for ``nlpsol`` from the :class:`MappedPoints` ``maps``
    inside ``nlp`` (one, or a sequence), or ``None`` when there are none.  A call whose inputs are not linear
    in ``w`` stays in the outer function, differentiated by CasADi.

    Where a call's ``compile`` setting says so, these three functions run its compiled point functions
    (:mod:`colloc.transcription.compilation`); ``nlp.f`` and ``nlp.g`` themselves keep the SX ones, which CasADi can still
    differentiate for anything ``nlpsol`` derives from them (evaluating them is a few per cent of the work)."""
    maps = [maps] if isinstance(maps, MappedPoints) else [m for m in maps if m is not None]
    w = nlp.w
    layout = getattr(nlp, "layout", None)
    views_of, views = getattr(layout, "views", (None, {}))
    known = _indices(w, views if views_of is w else {})
    parts = [p for p in (_part(m, w, known) for m in maps) if p is not None]
    if not parts:
        return None
    _compile(parts)
    # the outer function G: every use of a mapped output replaced by its slice of the symbol Ys
    Ys = ca.MX.sym("Y", sum(p.size for p in parts))
    nodes, pieces, at = [], [], 0
    for part in parts:
        Ym = ca.reshape(Ys[at:at + part.size], part.nout, part.count)
        row = 0
        for node in part.mapped.outputs:
            nodes.append(node)
            pieces.append(Ym[row:row + node.size1(), :])
            row += node.size1()
        at += part.size
    g, f = ca.graph_substitute([nlp.g, nlp.f], nodes, pieces)
    # what the solver evaluates: the same graph with the compiled calls in place of the mapped ones
    outputs = [part.outputs() for part in parts]
    g_eval, f_eval = ca.graph_substitute([nlp.g, nlp.f], nodes, [o for out in outputs for o in out])
    gw, gY = ca.jacobian(g, w), ca.jacobian(g, Ys)
    Vw = ca.vertcat(*[p.Vw for p in parts]) if len(parts) > 1 else parts[0].Vw
    JV = ca.mtimes(_blocks([part.jacobian() for part in parts]), Vw)
    p = ca.MX.sym("p", 0)
    lam, sigma = ca.MX.sym("lam_g", g.numel()), ca.MX.sym("lam_f")
    fw, fY = ca.gradient(f, w), ca.gradient(f, Ys)
    constants = ca.Function("outer_derivatives", [], [gw, gY, fY], {"allow_free": True})
    if not constants.has_free() and not ca.depends_on(fw, Ys):
        # G is affine in (w, Y) and f in Y (a fixed horizon's defects, quadrature and linear rows): their
        # derivatives are constant, and only f's own curvature in w (a penalty on variables) joins the
        # Hessian, so no outer function is built or run
        gw, gY, fY = (ca.sparsify(e) for e in constants.call([]))
        jac = gw + ca.mtimes(gY, JV) if gw.nnz() else ca.mtimes(gY, JV)
        mu = sigma * fY + ca.mtimes(gY.T, lam)
        fww = ca.jacobian(fw, w) if ca.symvar(fw) else None
        H = None if fww is None else sigma * (fww if ca.symvar(fww) else ca.sparsify(ca.evalf(fww)))
    else:
        Y = ca.vertcat(*[ca.vec(ca.vertcat(*out)) for out in outputs])
        outer = ca.Function("outer_jacobian", [w, Ys], [gw, gY])
        gw, gY = outer(w, Y)
        jac = gw + ca.mtimes(gY, JV)
        fw, fY = ca.Function("outer_gradient", [w, Ys], [fw, fY])(w, Y)
        ell = sigma * f + ca.dot(lam, g)
        lw, lY = ca.gradient(ell, w), ca.gradient(ell, Ys)
        outer_h = ca.Function("outer_hessian", [w, Ys, lam, sigma],
                              [lY, ca.jacobian(lw, w), ca.jacobian(lw, Ys), ca.jacobian(lY, Ys)])
        mu, Lww, LwY, LYY = outer_h(w, Y, lam, sigma)
        C = ca.mtimes(LwY, JV)
        H = Lww + C + C.T + ca.mtimes(JV.T, ca.mtimes(LYY, JV))
    jac_g = ca.Function("jac_g", [w, p], [g_eval, jac], ["x", "p"], ["g", "jac_g_x"])
    points, grad = _point_terms(parts, Vw, mu, fY)
    H = points if H is None else H + points
    hess_lag = ca.Function("hess_lag", [w, p, sigma, lam], [ca.triu(H)], ["x", "p", "lam_f", "lam_g"], ["triu_hess_gamma_x_x"])
    grad = fw + grad if ca.symvar(fw) or ca.evalf(fw).nnz() else grad
    grad_f = ca.Function("grad_f", [w, p], [f_eval, ca.densify(grad)], ["x", "p"], ["f", "grad_f_x"])
    return {"grad_f": grad_f, "jac_g": jac_g, "hess_lag": hess_lag}


def _point_terms(parts, Vw, mu, fY):
    """The points' share of the Lagrangian Hessian, ``V_wᵀ blkdiag(∇²_vv (μ_k · F)) V_w``, and of the objective's
    gradient, ``V_wᵀ (J_kᵀ f_Y,k)``: one reverse sweep per point instead of CasADi's reverse mode through the
    whole graph."""
    HF, grads, at = [], [], 0
    for part in parts:
        HF.append(part.hessian(mu[at:at + part.size]))
        grads.append(part.gradient(fY[at:at + part.size]))
        at += part.size
    return ca.mtimes(Vw.T, ca.mtimes(_blocks(HF), Vw)), ca.mtimes(Vw.T, ca.vertcat(*grads))


def _compile(parts):
    """Replace each part's SX point functions by their compiled libraries where its setting says so
    (:func:`colloc.transcription.compilation.compiled`, every library of the NLP in one batch)."""
    from .compilation import compiled

    wanted = [part for part in parts if part.mapped.compile is not False]
    if not wanted:
        return
    # evaluations per IPOPT iteration: the point function with the Jacobian's g and the gradient's f, the
    # gradient about twice (IPOPT's calls of grad_f), the Jacobian and the Hessian once
    names = {"point": 3, "point_jacobian": 1, "point_hessian": 1, "point_gradient": 2}
    functions = [getattr(part, name) for part in wanted for name in names]
    counts = [part.count * times for part in wanted for times in names.values()]
    done = iter(compiled(functions, wanted[0].mapped.compile, counts))
    for part in wanted:
        for name in names:
            setattr(part, name, next(done))


def _blocks(matrices):
    """The block-diagonal matrix of ``matrices`` (one needs no concatenation)."""
    return matrices[0] if len(matrices) == 1 else ca.diagcat(*matrices)


class _Part:
    """One mapped call: its stacked inputs ``V`` (one column per point), ``∂vec(V)/∂w`` and the point's
    Jacobian, Lagrangian Hessian and gradient (a vector–Jacobian product) as SX functions of one point,
    placed block-diagonally over the points."""

    def __init__(self, mapped, V, Vw):
        self.mapped, self.V, self.Vw, self.count = mapped, V, Vw, mapped.count
        self.v, self.y = _stacked(mapped.function, mapped.symbols)
        self.nout = self.y.numel()
        self.size = self.nout * self.count
        m = ca.SX.sym("mu", self.nout)
        self.point = mapped.function
        # the hoisted values (the last input) are numbers: no derivative in them, whose rows V_w would zero anyway
        k = mapped.function.numel_in(mapped.function.n_in() - 1) if mapped.hoisted else 0
        v = self.v[:self.v.numel() - k]
        J, H, G = ca.jacobian(self.y, v), ca.hessian(ca.dot(m, self.y), v)[0], ca.jtimes(self.y, v, m, True)
        if k:
            J, H, G = ca.horzcat(J, ca.SX(self.nout, k)), ca.diagcat(H, ca.SX(k, k)), ca.vertcat(G, ca.SX(k, 1))
        self.point_jacobian = ca.Function("point_jacobian", [self.v], [J])
        self.point_hessian = ca.Function("point_hessian", [self.v, m], [H])
        self.point_gradient = ca.Function("point_gradient", [self.v, m], [G])

    def outputs(self):
        """The mapped call's outputs, from the compiled point function when it was compiled."""
        if self.point is self.mapped.function:
            return list(self.mapped.outputs)
        values = self.point.map(self.count)(*self.mapped.inputs)
        return list(values) if isinstance(values, (list, tuple)) else [values]

    def jacobian(self):
        f = self.point_jacobian
        return ca.sparsity_cast(f.map(self.count)(self.V), ca.kron(ca.Sparsity.diag(self.count), f.sparsity_out(0)))

    def hessian(self, mu):
        f = self.point_hessian
        values = f.map(self.count)(self.V, ca.reshape(mu, self.nout, self.count))
        return ca.sparsity_cast(values, ca.kron(ca.Sparsity.diag(self.count), f.sparsity_out(0)))

    def gradient(self, fY):
        """``vec`` of ``J_kᵀ f_Y,k`` at every point ``k`` (``fY``: the objective's derivative in this call's outputs)."""
        return ca.vec(self.point_gradient.map(self.count)(self.V, ca.reshape(fY, self.nout, self.count)))


def _part(mapped, w, known=None):
    n = mapped.count
    V = ca.vertcat(*[a if a.size2() == n else ca.repmat(a, 1, n) for a in mapped.inputs])
    Vw = _selection_matrix(mapped.inputs, n, w, known)
    if Vw is None:  # not a plain selection of w's entries: differentiate
        Vw = ca.jacobian(ca.vec(V), w)
        if ca.symvar(Vw):  # the inputs are not affine in w
            return None
        Vw = ca.evalf(Vw)
    return _Part(mapped, V, Vw)


def _indices(w, views):
    """Node address -> the indices of ``w`` it holds: ``w``'s symbols and the layout's block views
    (``{address: (MX, indices)}``, :attr:`colloc.transcription.nlp.Layout.views`)."""
    primitives = [w] if w.is_symbolic() else w.primitives()
    offsets = np.cumsum([0] + [q.numel() for q in primitives])
    known = {hash(q): np.arange(a, b) for q, a, b in zip(primitives, offsets[:-1], offsets[1:])}
    known.update({key: idx for key, (_, idx) in views.items()})
    return known


def _selection_matrix(inputs, count, w, known=None):
    """``∂vec(V)/∂w`` of the stacked inputs ``V`` when each of their entries is an entry of ``w`` or a
    constant (the layout's blocks, sliced), read off the MX graph without differentiating; else ``None``.
    ``known``: :func:`_indices` of ``w`` (nodes met on the way are added to it)."""
    known = _indices(w, {}) if known is None else known
    columns = []
    for a in inputs:
        idx = _selected(a, known)
        if idx is None:
            return None
        idx = idx.reshape(a.shape, order="F")
        columns.append(idx if idx.shape[1] == count else np.repeat(idx, count, axis=1))
    index = np.vstack(columns).ravel(order="F") if columns else np.zeros(0, int)
    rows = np.flatnonzero(index >= 0)
    sp = ca.Sparsity.triplet(index.size, w.numel(), rows.tolist(), index[rows].tolist())
    return ca.DM(sp, 1.0)


def _selected(e, known):
    """The ``w`` index of each entry of ``e`` (column by column; −1 for a constant), when ``e`` only selects,
    reshapes, transposes and concatenates entries of ``w`` and constants; else ``None``."""
    if isinstance(e, ca.DM):
        return np.full(e.numel(), -1)
    if not isinstance(e, ca.MX):
        return None
    key = hash(e)
    if key in known:
        return known[key]
    known[key] = found = _selected_node(e, known)
    return found


def _selected_node(e, known):
    if e.is_constant():
        return np.full(e.numel(), -1)
    if not e.is_dense() or e.is_symbolic():
        return None
    op = e.op()
    deps = [e.dep(i) for i in range(e.n_dep())]
    if op in (ca.OP_RESHAPE, ca.OP_GETNONZEROS, ca.OP_TRANSPOSE) and not deps[0].is_dense():
        return None
    inner = [_selected(d, known) for d in deps]
    if any(i is None for i in inner):
        return None
    if op == ca.OP_RESHAPE:
        return inner[0]
    if op == ca.OP_TRANSPOSE:
        return inner[0].reshape(deps[0].shape, order="F").T.ravel(order="F")
    if op == ca.OP_HORZCAT:
        return np.concatenate(inner)
    if op == ca.OP_VERTCAT:
        return np.vstack([i.reshape(d.shape, order="F") for i, d in zip(inner, deps)]).ravel(order="F")
    if op == ca.OP_GETNONZEROS:
        info = e.info()
        if "nz" in info:
            nz = np.asarray(info["nz"], dtype=int)
        elif "slice" in info:
            nz = np.arange(info["slice"]["start"], info["slice"]["stop"], info["slice"]["step"])
        else:
            i, o = info["inner"], info["outer"]
            nz = (np.arange(o["start"], o["stop"], o["step"])[:, None] + np.arange(i["start"], i["stop"], i["step"])[None, :]).ravel()
        return None if (nz < 0).any() else inner[0][nz]
    return None


def _stacked(point, symbols=None):
    """One stacked input vector and the stacked outputs of ``point`` (SX; inputs are columns), from the
    ``(inputs, outputs)`` it was made of when given."""
    if symbols is not None:
        sx, out = symbols
    else:
        sx = [ca.SX.sym(point.name_in(i), point.size1_in(i)) for i in range(point.n_in())]
        out = point.call(sx)
    return ca.vertcat(*sx), ca.vertcat(*[ca.vec(o) for o in out])
