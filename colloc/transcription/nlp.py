"""The NLP container: variable ``Layout`` and labelled constraint ``Rows``.

This is the only module with flat-index arithmetic.  Variables are stored by
block (``x``, ``z``, ``u``, ``lam``, ``p``, ``tf``, method extras), each block a
matrix with one named row per model variable and one column per grid point
(or per interval), flattened column by column.  Every constraint row has a
label ``kind:name@k=K`` built on demand from its block.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import casadi as ca
import numpy as np


#: What each variable block of a single-phase collocation NLP holds (``colloc info`` prints it).
BLOCK_LEGEND = {
    "tf": "the free final time",
    "p": "static parameters, optimized",
    "x": "states x at every grid point",
    "z": "derivative variables ẋ at every grid point, for states whose residual is implicit (a multibody's "
         "accelerations a = v̇, an implicit component's ż); the residual R(t, x, ẋ, u, p) = 0 uses them",
    "u": "controls u at every grid point",
    "lam": "Lagrange multipliers λ of kinematic constraints at every grid point",
    "xp": "projection states x' at each interval end (constraint_method bordalba2023): the interval's defects end "
          "on x', and the projection rows x = x' + F_x(x)ᵀ μ put the true state x on the constraint manifold",
    "mu": "projection slacks μ, one per constraint row (φ, φ̇, ψ) at each interval end, bounded ±1e-3 (bordalba2023)",
    "gamma": "velocity corrections γ̄ at each midpoint, q̇_m = N v_m + Φ_qᵀ γ̄ (constraint_method posa2016), bounded ±0.1",
    "cn": "contact normal forces λ ≥ 0 (contact=\"implicit\"), one per contact and mesh interval, or per grid point with contact_forces=\"collocation\" (midpoint-vi: per node)",
    "cbp": "friction force facets β⁺ ≥ 0 along each frictional contact's tangent (maximal dissipation)",
    "cbm": "friction force facets β⁻ ≥ 0 against each frictional contact's tangent",
    "cg": "sliding speeds γ ≥ |ṡ| of each frictional contact (zero while it sticks)",
    "cnm": "free steps with contact_forces=\"collocation\": the normal forces each interval ends on at an interior mesh point",
    "cbpm": "free steps with contact_forces=\"collocation\": the friction facets β⁺ each interval ends on",
    "cbmm": "free steps with contact_forces=\"collocation\": the friction facets β⁻ each interval ends on",
    "cgm": "free steps with contact_forces=\"collocation\": the sliding speeds γ of the forces each interval ends on",
    "cf3m": "free steps with contact_forces=\"collocation\": the 3-D friction variables each interval ends on",
    "vm": "pre-impact speeds v⁻ at each interior mesh point: the interval before it ends on them",
    "pn": "normal impulses P ≥ 0 at each interior mesh point, in force units P/h̄",
    "pbp": "friction impulse facets along the tangent at each interior mesh point",
    "pbm": "friction impulse facets against the tangent at each interior mesh point",
    "pg": "sliding speeds after each impact (maximal dissipation of the tangential impulse)",
    "zm": "free steps or own_ends: the accelerations each interval ends on at an interior mesh point (they may jump there)",
    "um": "free steps: the controls each interval ends on at an interior mesh point (written as NAME.interval_end)",
    "steps": "free steps: each mesh interval's fraction of the horizon, within [1/r, r] of the mesh given",
    "cq": "midpoint-vi contacts: the configuration one step past the last node, where its force acts",
}

#: Cost terms the transcription adds to the problem's own (``colloc info`` and the solve summary name them).
def bound_note(block) -> str:
    """What bounds the derivative variables (block ``z``, for ``colloc info``): none unless ``derivative_bounds``
    asks for them; ``""`` for other blocks."""
    if block.name != "z":
        return ""
    bound = float(block.upper.max()) if block.upper.size else np.inf
    return "; unbounded" if np.isinf(bound) else f"; bounded to ±{bound:g} (derivative_bounds), the summary says when one is reached"


TERM_LEGEND = {
    "projection": "1e-6 Σ ‖x' − x‖² over the interval ends (bordalba2023): picks the projection nearest the true "
                  "state; tiny at an optimum (3e-18 on the Cartesian pendulum) and part of the objective printed",
    "control-polynomial": "a small penalty pulling controls that no defect uses (Radau's interval start, "
                          "Legendre–Gauss mesh points) onto the control polynomial; zero unless a bound stops them",
    "steps": "1e-5 Σ (σ_i/σ̄_i − 1)² (free steps): a weak pull of each interval towards its length on the mesh given, "
             "which nothing else decides in flight or at rest; part of the objective printed",
}


@dataclass
class Block:
    name: str
    row_names: list
    num_cols: int
    offset: int
    lower: np.ndarray  # shape (rows, cols)
    upper: np.ndarray
    guess: np.ndarray
    col_index: np.ndarray  # grid (or interval) index of each column, for labels
    per: str | None = None  # "point" (a column per grid point), "interval" (per mesh interval) or "problem" (one column)

    @property
    def shape(self):
        return (len(self.row_names), self.num_cols)

    @property
    def size(self):
        return len(self.row_names) * self.num_cols


class Layout:
    """Ordered blocks of the decision vector ``w``; packs and unpacks it."""

    def __init__(self):
        self.blocks: dict[str, Block] = {}
        self.size = 0
        self.views = (None, {})

    def add(self, name, row_names, num_cols, lower=-np.inf, upper=np.inf, guess=0.0, col_index=None, per=None) -> Block:
        """Append a block; ``per`` says what one column belongs to (``"point"``, ``"interval"``, ``"problem"``), for
        backends that order variables stage by stage (``None``: unknown)."""
        shape = (len(row_names), num_cols)
        block = Block(
            name, list(row_names), num_cols, self.size,
            np.broadcast_to(np.asarray(lower, float), shape).copy(),
            np.broadcast_to(np.asarray(upper, float), shape).copy(),
            np.broadcast_to(np.asarray(guess, float), shape).copy(),
            np.arange(num_cols) if col_index is None else np.asarray(col_index),
            per,
        )
        self.blocks[name] = block
        self.size += block.size
        return block

    def __getitem__(self, name) -> Block:
        return self.blocks[name]

    def __contains__(self, name):
        return name in self.blocks

    def symbols(self, w: ca.MX) -> dict:
        """Block name -> MX matrix view of the symbolic decision vector.

        The views and the indices of ``w`` they hold are kept (:attr:`views`), so that the derivatives can
        read what a slice of them selects without walking down to ``w``."""
        V = {b.name: ca.reshape(w[b.offset:b.offset + b.size], *b.shape) if b.size else ca.MX(*b.shape)
             for b in self.blocks.values()}
        # the MX objects are kept alive with their node addresses (the keys)
        self.views = (w, {hash(V[b.name]): (V[b.name], b.offset + np.arange(b.size)) for b in self.blocks.values() if b.size})
        return V

    def unpack(self, w) -> dict:
        """Block name -> numpy matrix of a numeric decision vector."""
        w = np.asarray(w, dtype=float).ravel()
        return {b.name: w[b.offset:b.offset + b.size].reshape(b.shape, order="F") for b in self.blocks.values()}

    def pack(self, values: dict) -> np.ndarray:
        """Inverse of :meth:`unpack`; missing blocks are taken from the guesses."""
        w = np.empty(self.size)
        for b in self.blocks.values():
            v = values.get(b.name, b.guess)
            w[b.offset:b.offset + b.size] = np.asarray(v, dtype=float).reshape(b.shape).ravel(order="F")
        return w

    def vector(self, attr) -> np.ndarray:
        """``lower``, ``upper`` or ``guess`` of every block, flattened like ``w``."""
        return self.pack({b.name: getattr(b, attr) for b in self.blocks.values()})

    def labels(self):
        """One name per entry of ``w``: ``block:row@k=K``."""
        out = []
        for b in self.blocks.values():
            for c in range(b.num_cols):
                out += [f"{b.name}:{r}@k={b.col_index[c]}" for r in b.row_names]
        return out


@dataclass
class RowBlock:
    kind: str
    names: list  # one per row of the matrix
    points: np.ndarray  # grid/interval index per column
    offset: int
    lower: np.ndarray  # flattened, column-major
    upper: np.ndarray

    @property
    def size(self):
        return len(self.names) * len(self.points)


@dataclass
class Rows:
    """Constraint rows ``lower ≤ g ≤ upper`` added block by block with labels."""

    exprs: list = field(default_factory=list)
    blocks: list = field(default_factory=list)
    size: int = 0

    def add(self, kind, names, expr, points=None, lower=0.0, upper=0.0):
        """Add ``expr`` (matrix: one row per name, one column per point) with bounds."""
        expr = ca.MX(expr) if not isinstance(expr, ca.MX) else expr
        names = list(names)
        if expr.numel() == 0 or not names:
            return
        ncol = expr.numel() // len(names)
        if expr.size1() != len(names) and expr.size2() != 1:  # a column is taken as already stacked point by point
            expr = ca.reshape(expr, len(names), ncol)
        points = np.arange(ncol) if points is None else np.asarray(points)
        n = len(names) * ncol
        lo = np.broadcast_to(np.asarray(lower, float).reshape(-1, 1) if np.ndim(lower) == 1 else np.asarray(lower, float), (len(names), ncol))
        hi = np.broadcast_to(np.asarray(upper, float).reshape(-1, 1) if np.ndim(upper) == 1 else np.asarray(upper, float), (len(names), ncol))
        self.blocks.append(RowBlock(kind, names, points, self.size, lo.ravel(order="F").copy(), hi.ravel(order="F").copy()))
        self.exprs.append(expr if expr.size2() == 1 else ca.vec(expr))
        self.size += n

    @property
    def g(self) -> ca.MX:
        return ca.vertcat(*self.exprs) if self.exprs else ca.MX(0, 1)

    @property
    def lower(self):
        return np.concatenate([b.lower for b in self.blocks]) if self.blocks else np.zeros(0)

    @property
    def upper(self):
        return np.concatenate([b.upper for b in self.blocks]) if self.blocks else np.zeros(0)

    def labels(self):
        out = []
        for b in self.blocks:
            for k in b.points:
                out += [f"{b.kind}:{n}@k={k}" if b.kind else f"{n}@k={k}" for n in b.names]
        return out

    def values(self, g, kind) -> list:
        """The values of ``g`` (a vector over every row: constraint values or their multipliers) in every
        block of ``kind``, in row order: the one way to read rows by kind.

        ``kind`` matches a block's kind and its sub-kinds (``"defect"`` matches ``"defect.simpson"``);
        ``None`` matches the blocks of no kind (kinematic-constraint rows).

        Returns
        -------
        list of (RowBlock, ndarray, shape (len(block.names), len(block.points)))
        """
        g = np.asarray(g, float).ravel()
        return [(b, self._block_values(g, b)) for b in self.blocks
                if b.kind == kind or (kind is not None and (b.kind or "").startswith(kind + "."))]

    @staticmethod
    def _block_values(g, b):
        return g[b.offset:b.offset + b.size].reshape(len(b.points), len(b.names)).T

    def violations(self, g) -> dict:
        """Largest bound violation per ``kind:name`` (over all points)."""
        g = np.asarray(g, float).ravel()
        out = {}
        for b in self.blocks:
            vals = self._block_values(g, b)
            viol = np.maximum(np.maximum(b.lower.reshape(vals.T.shape).T - vals, vals - b.upper.reshape(vals.T.shape).T), 0.0)
            viol = np.where(np.isnan(viol), np.inf, viol)
            for i, n in enumerate(b.names):
                key = f"{b.kind}:{n}" if b.kind else n
                out[key] = max(out.get(key, 0.0), float(viol[i].max()) if viol.shape[1] else 0.0)
        return out

    def worst(self, g, count=10):
        """The ``count`` worst-violated rows as ``(label, value, violation)``."""
        g = np.asarray(g, float).ravel()
        lo, hi = self.lower, self.upper
        viol = np.maximum(np.maximum(lo - g, g - hi), 0.0)
        viol = np.where(np.isnan(g), np.inf, viol)
        idx = np.argsort(-viol)[:count]
        return [(self.label(i), float(g[i]), float(viol[i])) for i in idx if viol[i] > 0]

    def label(self, i) -> str:
        """The label of row ``i`` alone (``labels()`` formats every row)."""
        b = next(b for b in reversed(self.blocks) if b.offset <= i)
        k, r = divmod(int(i) - b.offset, len(b.names))
        return f"{b.kind}:{b.names[r]}@k={b.points[k]}" if b.kind else f"{b.names[r]}@k={b.points[k]}"


@dataclass
class NLP:
    """Everything a backend needs (``w``, ``f``, ``g`` with bounds, the layout and row labels) and what
    the transcription that built it needs to read a solution back.

    Attributes
    ----------
    w, f : casadi.MX
        Decision vector and objective.
    rows : Rows
        Labelled constraint rows ``lower ≤ g ≤ upper``.
    layout : Layout
        Named blocks of ``w`` with bounds and guesses.
    terms : dict of str -> casadi.MX
        Each cost term (they sum to ``f``), evaluated for the result.
    mesh : ndarray, shape (n + 1,)
        Normalised mesh points.
    grid : Grid, optional
        Collocation NLPs: the grid points of the mesh and scheme.
    point : casadi.Function, optional
        Collocation NLPs: one grid point ``(t, x, z, u, lam, p) -> (xdot, res, path, acc, L)``.
    method : ConstraintMethod, optional
        Collocation NLPs: the kinematic-constraint method (its slacks are reported).
    contact : ContactRows, optional
        Contact-implicit NLPs: the contact variables and rows (forces and schedule are read back through it).
    mapped : tuple of MappedPoints, optional
        Collocation NLPs: the mapped calls inside ``g`` and ``f`` — the point function and the
        constraint method's — that :mod:`colloc.transcription.derivatives` differentiates point by point.
    grid_call : MappedPoints, optional
        Collocation NLPs: the point function's call on every grid point (reconstruction evaluates it again).
    """

    w: ca.MX
    f: ca.MX
    rows: Rows
    layout: Layout
    terms: dict = field(default_factory=dict)
    mesh: np.ndarray | None = None
    grid: object = None
    point: ca.Function | None = None
    method: object = None
    contact: object = None
    mapped: object = None
    grid_call: object = None

    @property
    def g(self):
        return self.rows.g
