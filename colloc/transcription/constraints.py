"""Kinematic-constraint enforcement methods (DESIGN §4).

* ``bordalba2023`` (default, every scheme, all three kinds): projection states
  ``x'`` at each interval end replace the interval's last state in its defects
  and residual; ``x = x' + F_x(x)ᵀ μ`` with ``F = [φ; φ̇; ψ]`` and the exact,
  unsplit Jacobian; ``φ, φ̇, ψ = 0`` on true states at mesh points;
  ``φ̈, ψ̇, α = 0`` at every grid point (on ``x'`` at mesh points after the
  first); cost ``w Σ ‖x' − x‖²``.  Bordalba, Schoels, Ros, Porta, Diehl,
  IEEE T-RO 39 (2023).
* ``posa2016`` (Hermite–Simpson, holonomic only): ``φ, φ̇, φ̈ = 0`` at mesh
  points; midpoints carry multipliers but no constraint rows; a velocity
  correction ``γ`` enters the Simpson defect as ``q̇_m = N v_m + Φ_qᵀ γ``.
  Posa, Kuindersma, Tedrake, ICRA 2016.

Each method is a :class:`ConstraintMethod`: a class that declares the schemes
and constraint kinds it supports and whose hooks the transcription calls in
the order they are listed.  Hooks return what they build and keep nothing
between calls (every symbol they need is passed in).  :data:`METHODS` is the
registry ``{name: class}``; with no kinematic constraints the plain
:class:`Unconstrained` hooks change nothing.  A new method subclasses
:class:`ConstraintMethod`, overrides the hooks it needs and is added to
:data:`METHODS`; the option check and the errors for unsupported schemes or
kinds read its declarations.
"""
from __future__ import annotations

from typing import NamedTuple

import casadi as ca
import numpy as np

from .derivatives import map_points
from ..errors import OptionError
from .consistent import check_fixed_consistency, fixed_endpoint_rows
from .extension import Extension

def _at(cols):
    """Columns ``cols`` as an MX index: a slice where they step evenly, else a list. CasADi builds the same
    node from any of them, but takes a numpy array at three times the cost of a slice (tens of µs each)."""
    cols = np.asarray(cols)
    if cols.size > 1:
        step = int(cols[1] - cols[0])
        if step > 0 and (np.diff(cols) == step).all():
            return slice(int(cols[0]), int(cols[-1]) + 1, step)
    return cols.tolist()


def _level_functions(model):
    """``F(t, x, p) = [φ; φ̇; ψ]`` and its Jacobian ``F_x`` as SX Functions, with labels (built once per model)."""
    FF, labels, (F, _, t, x, p) = model.mesh_levels()
    return FF, list(labels), (F, t, x, p)


def _add_mesh_rows(problem, rows, labels, values, mesh, F_func, F_sym):
    """Constraint rows at every mesh point, leaving out endpoint rows fixed values already settle."""
    F, t, x, p = F_sym
    drop0 = fixed_endpoint_rows(problem, F, t, x, p, "t0")
    dropn = fixed_endpoint_rows(problem, F, t, x, p, "tf")
    check_fixed_consistency(problem, F_func, labels, drop0, "t0")
    if not problem.free_final_time:
        check_fixed_consistency(problem, F_func, labels, dropn, "tf")
    keep0, keepn = np.flatnonzero(~drop0), np.flatnonzero(~dropn)
    rows.add(None, [labels[i] for i in keep0], values[keep0.tolist(), 0], mesh[:1])
    if mesh.size > 2:
        rows.add(None, labels, values[:, 1:-1], mesh[1:-1])
    rows.add(None, [labels[i] for i in keepn], values[keepn.tolist(), -1], mesh[-1:])


class Ends(NamedTuple):
    """What closes each interval's defects: the end states and their derivatives, and (for a method that
    replaces the true end state) the residual and acceleration-level values there."""

    X: object
    XD: object
    RES: object = None
    ACC: object = None


class ConstraintMethod(Extension):
    """Base of every kinematic-constraint method; with no constraints, every hook leaves things as they are.

    An :class:`colloc.transcription.extension.Extension` of collocation.

    Class attributes
    ----------------
    schemes : tuple of str or None
        Scheme names it works with (``None``: every scheme).
    kinds : tuple of str
        Constraint kinds it handles (``holonomic``, ``nonholonomic``, ``acceleration``).

    The hooks are the protocol's, in its order: ``V`` is the dict of symbolic variable blocks
    (``layout.symbols(w)``), ``at.T`` the row of grid times, ``at.X``/``at.XD`` the states and their
    derivatives on every grid point.  A hook returns what it builds (or adds rows/blocks to the
    container it is given) and stores nothing on the method.
    """

    capabilities = ("transcriptions", "schemes", "kinds")
    transcriptions = ("collocation",)
    schemes = None
    kinds = ("holonomic", "nonholonomic", "acceleration")

    def __init__(self, problem, opts, grid):
        self.problem, self.opts, self.grid = problem, opts, grid
        self.model = problem.model
        self.n = grid.num_intervals


class Unconstrained(ConstraintMethod):
    """A model without kinematic constraints."""


class Bordalba2023(ConstraintMethod):
    """Projection method (every scheme, every kind): see the module docstring."""

    plain_nodes = False  # the intervals end on the projection states x'

    def __init__(self, problem, opts, grid):
        super().__init__(problem, opts, grid)
        self.F, self.labels, self.F_sym = _level_functions(self.model)

    def add_variables(self, layout):
        x = layout["x"]
        # projection states: the path bounds of the states. Not the final values: x' at the last mesh
        # point differs from the (fixed) final state by F_xᵀμ, and fixing both leaves projection rows 0 = 0.
        cols = self.grid.interval_ends
        lo = np.array([self.problem.bounds[r][0] for r in x.row_names]).reshape(-1, 1)
        hi = np.array([self.problem.bounds[r][1] for r in x.row_names]).reshape(-1, 1)
        layout.add("xp", [f"{r}.projection" for r in x.row_names], self.n, lo, hi, col_index=cols, per="interval")
        sb = self.opts.projection_slack_bounds
        layout.add("mu", [f"{lab.split(':', 1)[1]}.mu" for lab in self.labels], self.n, -sb, sb, col_index=cols, per="interval")

    def guess(self, layout, warm):
        layout["xp"].guess[:] = layout["x"].guess[:, self.grid.interval_ends]

    def interval_ends(self, ends, V, at, point):
        cols = _at(self.grid.interval_ends)
        Xp = V["xp"]
        args = (at.T[:, cols], Xp, V["z"][:, cols], V["u"][:, cols], V["lam"][:, cols], V["p"])
        (xdot_p, res_p, _, acc_p, _), _ = map_points(point, self.n, args, self.opts, outputs=(0, 1, 3))
        return Ends(Xp, xdot_p, res_p, acc_p)

    def pointwise_rows(self, RES, ACC, ends):
        cols = self.grid.interval_ends
        keep = np.setdiff1d(np.arange(self.grid.num_points), cols)
        # gather: true-state values off the mesh (and at t0), projected values at later mesh points
        order = _at(np.argsort(np.concatenate([keep, cols])))
        keep = _at(keep)
        res = ca.horzcat(RES[:, keep], ends.RES)[:, order] if RES.numel() else RES
        acc = ca.horzcat(ACC[:, keep], ends.ACC)[:, order] if ACC.numel() else ACC
        return res, acc

    def add_rows(self, rows, V, at):
        T, X = at.T, at.X
        mesh = self.grid.mesh_points
        (Fval, _), _ = map_points(self.F, mesh.size, (T[:, _at(mesh)], X[:, _at(mesh)], V["p"]), self.opts, outputs=(0,))
        _add_mesh_rows(self.problem, rows, self.labels, Fval, mesh, self.F, self.F_sym)
        # projection x = x' + F_x(x)ᵀ μ: one SX Function of one interval end, mapped over the intervals
        _, Fx, t, x, p = self.model.mesh_levels()[2]
        xp, mu = ca.SX.sym("xp", x.numel()), ca.SX.sym("mu", len(self.labels))
        proj = ca.Function("projection", [t, x, xp, mu, p], [x - xp - ca.mtimes(Fx.T, mu)])
        ends = self.grid.interval_ends
        (d,), _ = map_points(proj, self.n, (T[:, _at(ends)], X[:, _at(ends)], V["xp"], V["mu"], V["p"]), self.opts)
        rows.add("projection", [s.name for s in self.model.states], d, ends)

    def cost_terms(self, V, at):
        d = at.X[:, _at(self.grid.interval_ends)] - V["xp"]
        return {"projection": self.opts.projection_weight * ca.sumsqr(d)}

    def slacks(self, values):
        mu = values.get("mu")
        return {"mu": float(np.abs(mu).max()) if mu is not None and mu.size else 0.0}


class Posa2016(ConstraintMethod):
    """Velocity-correction method (Hermite–Simpson, holonomic only): see the module docstring."""

    schemes = ("hermite-simpson",)
    kinds = ("holonomic",)
    plain_nodes = False  # the midpoint derivatives get the velocity correction

    def __init__(self, problem, opts, grid):
        super().__init__(problem, opts, grid)
        fp, self.pos_labels = self.model.constraint_function("position")
        fv, self.vel_labels = self.model.constraint_function("velocity")
        model = self.model
        t, x, p = model.inputs(ca.SX(0, 1))[0], model.vector("state"), model.vector("parameter")
        z = [ca.DM.zeros(model.dots.shape), ca.DM.zeros(model.vector("control").shape), ca.DM.zeros(model.vector("multiplier").shape)]
        phi = fp(t, x, *z[:1], z[1], z[2], p)
        PV = ca.vertcat(phi, fv(t, x, z[0], z[1], z[2], p))
        self.levels = ca.Function("PV", [t, x, p], [PV, ca.jacobian(phi, x)])
        self.F_sym = (PV, t, x, p)
        gamma = ca.SX.sym("gamma", phi.numel())
        self.correction = ca.Function("velocity_correction", [t, x, p, gamma], [ca.mtimes(ca.jacobian(phi, x).T, gamma)])

    def add_variables(self, layout):
        gb = self.opts.velocity_correction_bounds
        layout.add("gamma", [f"{lab.split(':', 1)[1]}.gamma" for lab in self.pos_labels], self.n, -gb, gb, col_index=self.grid.node(1), per="interval")

    def adjust_derivatives(self, F_nodes, V, at):
        # q̇ at the midpoints gets Φ_qᵀ γ (it enters the Simpson defect only)
        mids = self.grid.node(1)
        (corr,), _ = map_points(self.correction, self.n, (at.T[:, _at(mids)], at.X[:, _at(mids)], V["p"], V["gamma"]), self.opts)
        F_nodes = list(F_nodes)
        F_nodes[1] = F_nodes[1] + corr
        return F_nodes

    def acceleration_points(self):
        return self.grid.mesh_points

    def add_rows(self, rows, V, at):
        mesh = self.grid.mesh_points
        (val, _), _ = map_points(self.levels, mesh.size, (at.T[:, _at(mesh)], at.X[:, _at(mesh)], V["p"]), self.opts, outputs=(0,))
        _add_mesh_rows(self.problem, rows, self.pos_labels + self.vel_labels, val, mesh, self.levels, self.F_sym)

    def slacks(self, values):
        g = values.get("gamma")
        return {"gamma": float(np.abs(g).max()) if g is not None and g.size else 0.0}


#: Registry of kinematic-constraint methods: ``constraint_method=NAME`` picks ``METHODS[NAME]``.
METHODS = {"bordalba2023": Bordalba2023, "posa2016": Posa2016}


def check_method(problem, scheme, opts):
    """Refuse a method that does not support the scheme or one of the model's constraint kinds."""
    model = problem.model
    if not model.constraints:
        return
    name = opts.constraint_method
    cls = METHODS[name]
    if cls.schemes is not None and scheme.name not in cls.schemes:
        raise OptionError(f"constraint_method='{name}' works with the {' and '.join(cls.schemes)} scheme only, not `{scheme.name}`; use 'bordalba2023'.")
    other = [k for k in model.constraints if k.kind not in cls.kinds]
    if other:
        raise OptionError(f"constraint_method='{name}' handles {' and '.join(cls.kinds)} constraints only, but `{other[0].name}` is "
                          f"{other[0].kind}; use 'bordalba2023'.")


def make(problem, scheme, opts, grid) -> ConstraintMethod:
    """The constraint method of ``problem`` (checked against the scheme), or :class:`Unconstrained`."""
    if not problem.model.constraints:
        return Unconstrained(problem, opts, grid)
    check_method(problem, scheme, opts)
    return METHODS[opts.constraint_method](problem, opts, grid)
