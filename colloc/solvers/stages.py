"""Stage-wise ordering of a collocation NLP for an OCP-structured solver (FATROP).

FATROP (Vanroye, Sathya, De Schutter, Decré, IROS 2023) solves

    min  Σ_k f_k(x_k, u_k)
    s.t. x_{k+1} = φ_k(x_k, u_k),   k = 0 … K−1        (gap-closing rows)
         g_k(x_k, u_k) ∈ [lo, hi],   k = 0 … K           (stage rows)

with a Riccati recursion over the stages, so every row and every term of the
objective must involve the variables of one stage only, and the stages may be
coupled only by the gap-closing rows ``x_{k+1} − φ_k = 0``.  A collocation NLP
is not in that form: the defects of interval ``k`` involve both of its mesh
points.  This module derives the stage form from the NLP itself (its
Jacobian and Hessian sparsity and the ``per`` field of its layout blocks), so
it does not depend on how the transcription built the rows:

* stage ``k`` (one per mesh point, ``K = n``) owns the variables of mesh point
  ``k`` and of interval ``k`` (interior points, projection states, slacks);
* its *state* ``s_k`` is the part of mesh point ``k`` that the rows or cost
  terms of interval ``k − 1`` use; the rest of the mesh point are controls;
* interval ``k``'s controls end with a copy ``y_k`` of ``s_{k+1}``, and the
  gap-closing row is ``s_{k+1} − y_k = 0`` (identity on both sides);
* a row is assigned to the earliest stage among its variables and reads mesh
  point ``k + 1`` through the copy ``y_k``.  Evaluating every row with the
  right copies takes two evaluations of the NLP's constraint function, one
  for the rows of even stages (odd mesh points read from copies) and one for
  odd stages; each cost term is evaluated once, reading mesh points from their
  states or (when that couples stages, e.g. the projection term
  ``‖x_{k+1} − x'_k‖²``) from their copies.

Variables of the whole problem (free final time, parameters) would couple
every stage; FATROP's CasADi interface has no global variables, so such NLPs
are refused (see :func:`refusal`).
"""
from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from ..errors import OptionError


@dataclass(frozen=True)
class Stages:
    """The stage form of one NLP: where every variable and row goes (index arrays, numpy).

    Attributes
    ----------
    nx, nu, ng : list of int, length K + 1
        State, control and stage-row counts per stage (FATROP's manual structure).
    source : ndarray, shape (size,)
        Variable of the NLP each entry of the stage-wise vector holds (copies repeat it).
    home : ndarray, shape (num_variables,)
        Position of each NLP variable in the stage-wise vector.
    copy : ndarray, shape (num_variables,)
        Position of its copy ``y`` in the previous stage, or −1.
    rows : ndarray, shape (num_rows',)
        For each stage-wise row, the NLP row it is, or −1 for a gap-closing row.
    row_stage : ndarray, shape (num_rows,)
        Stage of each NLP row.
    gap_state, gap_copy : ndarray
        Positions of both sides of each gap-closing row ``s − y = 0``, in row order.
    term_reads_copies : dict of str -> bool
        Whether each cost term reads mesh points from their copies.
    """

    nx: list
    nu: list
    ng: list
    source: np.ndarray
    home: np.ndarray
    copy: np.ndarray
    rows: np.ndarray
    row_stage: np.ndarray
    gap_state: np.ndarray
    gap_copy: np.ndarray
    term_reads_copies: dict

    @property
    def size(self) -> int:
        return int(self.source.size)

    @property
    def num_intervals(self) -> int:
        return len(self.nx) - 1


def refusal(nlp) -> str | None:
    """Why ``nlp`` has no stage form FATROP can take (one sentence), or ``None``."""
    if nlp.grid is None:
        return "it is not a single-phase collocation NLP (multi-phase problems and midpoint-vi have no stage layout here)"
    for b in nlp.layout.blocks.values():
        if b.size == 0:
            continue
        if b.per == "problem":
            what = "a free final time" if b.name == "tf" else f"variables of the whole problem (`{b.name}`: {', '.join(b.row_names)})"
            return (f"it has {what}, which would couple every stage and FATROP's CasADi interface has no global variables; "
                    f"fix it or solve with backend='ipopt'")
        if b.per not in ("point", "interval"):
            return f"its variable block `{b.name}` does not say which stage it belongs to"
    return None


def _positions(nlp):
    """Stage position of every variable: ``2j`` for mesh point ``j``, ``2i + 1`` for interval ``i``'s own variables."""
    grid = nlp.grid
    pos = {}
    for b in nlp.layout.blocks.values():
        if b.size == 0:
            continue
        cols = np.asarray(b.col_index)
        if b.per == "point":
            interval, at_mesh = grid.interval_of(cols)
            col_pos = np.where(at_mesh, 2 * interval, 2 * interval + 1)
        else:  # one column per interval
            col_pos = 2 * np.arange(b.num_cols) + 1
        pos[b.name] = np.broadcast_to(col_pos, b.shape)
    return nlp.layout.pack(pos).astype(np.int64)


def _sparsity_arrays(sp):
    """Row and column index of every nonzero of a CasADi Sparsity, as numpy arrays."""
    colind = np.asarray(sp.colind(), dtype=np.int64)
    return np.asarray(sp.row(), dtype=np.int64), np.repeat(np.arange(sp.size2()), np.diff(colind))


def stage_structure(nlp) -> Stages:
    """Derive the stage form of ``nlp`` (see the module docstring); raises :class:`OptionError` if it has none."""
    why = refusal(nlp)
    if why:
        raise OptionError(f"FATROP cannot take this problem: {why}.")
    n = nlp.grid.num_intervals
    nw, ng = nlp.layout.size, nlp.rows.size
    pos = _positions(nlp)
    is_mesh = pos % 2 == 0
    carried = np.zeros(nw, dtype=bool)  # mesh-point variables that the previous stage reads (the states)

    # rows: the earliest stage among their variables; they may reach the next mesh point only
    r, c = _sparsity_arrays(ca.jacobian_sparsity(nlp.g, nlp.w)) if ng else (np.zeros(0, int), np.zeros(0, int))
    lo = np.full(ng, 2 * n, dtype=np.int64)
    hi = np.full(ng, -1, dtype=np.int64)
    np.minimum.at(lo, r, pos[c])
    np.maximum.at(hi, r, pos[c])
    row_stage = lo // 2
    bad = np.flatnonzero(hi > 2 * row_stage + 2)
    if bad.size:
        raise OptionError(f"FATROP cannot take this problem: constraint `{nlp.rows.label(int(bad[0]))}` couples mesh points "
                          f"that are not neighbours; solve it with backend='ipopt'.")
    reach = pos[c] == 2 * row_stage[r] + 2
    carried[c[reach]] = True

    # cost terms: read mesh points from their states if that keeps each term stage-wise, else from the copies
    reads_copies = {}
    for name, term in nlp.terms.items():
        hr, hc = _sparsity_arrays(ca.jacobian_sparsity(ca.gradient(term, nlp.w), nlp.w))
        if np.all(pos[hr] // 2 == pos[hc] // 2):
            reads_copies[name] = False
            continue
        copy_stage = np.where(is_mesh & (pos > 0), pos // 2 - 1, pos // 2)
        if not np.all(copy_stage[hr] == copy_stage[hc]):
            raise OptionError(f"FATROP cannot take this problem: the cost term `{name}` couples variables of stages that are "
                              f"not neighbours; solve it with backend='ipopt'.")
        reads_copies[name] = True
        gr, _ = _sparsity_arrays(ca.jacobian_sparsity(term, nlp.w).T)
        carried[gr[is_mesh[gr] & (pos[gr] > 0)]] = True
    return _assemble(nlp, pos, carried, row_stage, reads_copies)


def _assemble(nlp, pos, carried, row_stage, reads_copies) -> Stages:
    """Lay the variables out stage by stage (state, free mesh-point variables, interval variables, copy of the
    next state) and the rows likewise (gap-closing rows of the next state, then the stage's own rows)."""
    n = nlp.grid.num_intervals
    nw = pos.size
    order = np.argsort(pos, kind="stable")  # layout order inside each stage position
    starts = np.concatenate([[0], np.cumsum(np.bincount(pos, minlength=2 * n + 3))])  # first of each position in `order`
    group = lambda p: order[starts[p]:starts[p + 1]]  # noqa: E731
    source, nx, nu, states = [], [], [], []
    home = np.empty(nw, dtype=np.int64)
    copy = np.full(nw, -1, dtype=np.int64)
    for k in range(n + 1):
        mesh_vars = group(2 * k)
        keep = np.ones(mesh_vars.size, bool) if k == 0 else carried[mesh_vars]
        state, free, own = mesh_vars[keep], mesh_vars[~keep], group(2 * k + 1)
        nxt = group(2 * k + 2)[carried[group(2 * k + 2)]] if k < n else order[:0]
        start = len(source)
        for part in (state, free, own):
            home[part] = len(source) + np.arange(part.size)
            source.extend(part.tolist())
        copy[nxt] = len(source) + np.arange(nxt.size)
        source.extend(nxt.tolist())
        nx.append(int(state.size))
        nu.append(len(source) - start - int(state.size))
        states.append(state)
    by_stage = np.argsort(row_stage, kind="stable")
    stage_rows = np.split(by_stage, np.cumsum(np.bincount(row_stage, minlength=n + 1))[:n])
    rows = []
    for k in range(n + 1):
        if k < n:
            rows.append(np.full(states[k + 1].size, -1, dtype=np.int64))
        rows.append(stage_rows[k])
    nxt_states = np.concatenate(states[1:]) if n else np.zeros(0, dtype=np.int64)
    return Stages(nx, nu, [int(r.size) for r in stage_rows], np.asarray(source, dtype=np.int64), home, copy,
                  np.concatenate(rows), row_stage, home[nxt_states], copy[nxt_states], reads_copies)


def stagewise(nlp, st: Stages):
    """The stage-wise NLP: ``(W, f, g, x0, lbx, ubx, lbg, ubg)`` with ``W`` an MX symbol of size ``st.size``.

    ``g`` interleaves the gap-closing rows and the stage rows as FATROP wants
    them; rows are evaluated with the copies their stage reads (see the module
    docstring).
    """
    lay = nlp.layout
    W = ca.MX.sym("w", st.size)
    from_home = st.home
    src_is_copy = st.copy >= 0
    pos = _positions(nlp)
    mesh = pos % 2 == 0
    j = pos // 2  # the mesh point of a mesh-point variable

    def gather(use_copy):
        return W[np.where(use_copy & src_is_copy, st.copy, from_home).tolist()]

    # even stages read odd mesh points from their copies, odd stages even ones (mesh point 0 has no copy)
    G = ca.Function("g", [nlp.w], [nlp.g])
    g_even = G(gather(mesh & (j % 2 == 1)))
    g_odd = G(gather(mesh & (j % 2 == 0) & (j > 0)))
    ng = nlp.rows.size
    gap = W[st.gap_state.tolist()] - W[st.gap_copy.tolist()]
    # one gather from [gap; g_even; g_odd] puts every row where FATROP wants it
    pick = np.empty(st.rows.size, dtype=np.int64)
    is_gap = st.rows < 0
    pick[is_gap] = np.arange(int(is_gap.sum()))
    orig = st.rows[~is_gap]
    pick[~is_gap] = gap.numel() + orig + ng * (st.row_stage[orig] % 2)
    g = ca.vertcat(gap, g_even, g_odd)[pick.tolist()]

    w_state, w_copy = gather(np.zeros(pos.size, dtype=bool)), gather(mesh & (j > 0))
    f = 0
    for name, term in nlp.terms.items():
        f = f + ca.Function("term", [nlp.w], [term])(w_copy if st.term_reads_copies[name] else w_state)
    if not nlp.terms:
        f = ca.Function("f", [nlp.w], [nlp.f])(w_state)

    guess, lower, upper = lay.vector("guess"), lay.vector("lower"), lay.vector("upper")
    is_home = st.home[st.source] == np.arange(st.size)
    x0 = guess[st.source]
    lbx = np.where(is_home, lower[st.source], -np.inf)
    ubx = np.where(is_home, upper[st.source], np.inf)
    rlo, rhi = nlp.rows.lower, nlp.rows.upper
    lbg = np.where(is_gap, 0.0, rlo[np.maximum(st.rows, 0)] if ng else 0.0)
    ubg = np.where(is_gap, 0.0, rhi[np.maximum(st.rows, 0)] if ng else 0.0)
    return W, f, g, x0, lbx, ubx, lbg, ubg
