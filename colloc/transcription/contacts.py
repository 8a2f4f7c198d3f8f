"""Contact-implicit collocation: contact forces and impulses as variables, complementarity as rows.

For every contact declared with :meth:`colloc.Multibody.contact` (gap ``φ(q)``,
normal Jacobian ``W_n``, tangential Jacobian ``W_t``, friction ``μ``,
restitution ``e``) the transcription adds:

* a normal force ``λ_i ≥ 0`` per mesh interval, constant on it, entering the
  multibody residual as a generalised force ``W_nᵀ λ``
  (``M a + c − τ − W_nᵀλ − W_tᵀ(β⁺ − β⁻) = 0``);
* ``φ ≥ 0`` at every grid point (row ``gap``) and ``φ_j λ_i ≤ ε`` for every
  grid point j of interval i (rows ``complementarity``): a force acts only
  while the contact is closed wherever it shapes the motion (with ``φ_k λ_k``
  at single points a force could launch a hop or stand in for an impact);
* planar Coulomb friction by maximal dissipation (Stewart & Trinkle, IJNME 39
  (1996); Posa, Cantu & Tedrake, IJRR 33 (2014)): ``β⁺, β⁻, γ ≥ 0`` with
  ``γ ± ṡ ≥ 0``, ``μλ − β⁺ − β⁻ ≥ 0`` (rows ``friction``) and the products
  ``(μλ − β⁺ − β⁻)γ ≤ ε`` per interval, and at every grid point j of it
  ``γ ≥ |ṡ_j|``, ``β⁺ ṡ_j ≤ ε``, ``−β⁻ ṡ_j ≤ ε`` (``ṡ = W_t v``): the
  interval sticks at every point or slides one way with the cone saturated;
  a reversal falls on a mesh point;

and at every **interior mesh point** an impact: the interval that ends there
closes its defects on pre-impact speeds ``v⁻`` (variables), the mesh point's
state holds ``v⁺``, and

* ``M(q)(v⁺ − v⁻) − W_nᵀ P − W_tᵀ(P⁺ − P⁻) = 0`` (rows ``impact``; the
  variables are ``P/h̄``, force units, ``h̄`` the mean interval),
  ``P ≥ 0``, ``φ P ≤ ε``, ``|(ẏ⁺ + e ẏ⁻) P| ≤ ε`` (Newton's law), and the
  same maximal-dissipation rows for the tangential impulse with ``ṡ⁺``.

So no interval integrates through an impact (Posa et al. 2014, §III).  ``ε``
is the Scholtes relaxation (Scholtes, SIAM J. Optim. 11 (2001)): every
``complementarity`` row has bounds ``[−∞, ε]`` or ``[−ε, ε]``, which
:mod:`colloc.pipeline.contact_implicit` drives to its tolerance over warm-started solves
by changing only the row bounds.

With **free steps** (``free_steps=True``; Posa et al. 2014's variable steps)
the interval fractions ``σ_i`` are variables (block ``steps``, ``Σσ = 1``, each
within ``[σ̄_i/r, r σ̄_i]`` of the mesh given), so switches and impacts move
onto mesh points; times, interval lengths and quadrature weights are linear in
``σ`` (:func:`colloc.transcription.free_step_maps`).  Each interval then also
closes on its own accelerations and controls at its end (blocks ``zm``, ``um``
at the interior mesh points, with residual rows under that interval's forces,
and the quadrature corrected to use them), so a push or a lift can jump where
the mode changes; ``own_ends=True`` gives them their own accelerations (not
controls) on a fixed mesh too (docs/contacts.md, "Free steps").  A guess without impulses gets one where it bounces
(:func:`seed_impacts`).

Legend: ``lam`` normal force, ``beta`` friction-force facets, ``gamma``
sliding speed, ``P`` impulses, ``y`` gap, ``s`` tangential position.
"""
from __future__ import annotations

from typing import NamedTuple

import casadi as ca
import numpy as np

from ..model.contact import contacts_of, gaps_and_speeds, generalized_force
from .derivatives import map_points
from ..errors import OptionError
from ..model.multibody import Multibody
from ..results.trajectory import Trajectory
from . import transcribe
from .base import as_trajectory, with_columns
from .guess import guess_final_time
from .collocation import Collocation, reconstruct
from . import friction3d
from .arrival import Arrival, arrival_rows
from .free_steps import STEP_PULL, STEP_RATIO, STEPS, solved_grid, step_ratio  # noqa: F401 (STEP_PULL, STEP_RATIO: verify's)
from .contact_guess import fill_contact_guess, seed_impacts
from . import force_points
from .force_points import BEFORE, FORCES
from .contact_hooks import ContactHooks
from .extension import Warm

#: The one contact handling colloc offers besides none.
CONTACT_MODES = ("implicit",)
COMPLEMENTARITY = "complementarity"
#: Gap (times max(1, max |φ|)) below which a contact counts as closed when a result is read back: its
#: schedule and, on midpoint-vi, where its impacts are.
CLOSED_GAP = 1e-5
#: Suffix of the columns holding, at each interior mesh point, the control (or force at the collocation points) the
#: interval before it ends on (free steps: it may differ from the mesh point's own, which starts the next interval).
END = ".interval_end"
#: Name ending of the rows of Newton's restitution law, ``(ẏ⁺ + e ẏ⁻) P``.
RESTITUTION = "restitution*impulse"


def contact_bodies(model):
    """``[(body, contacts)]`` of the model's multibody components that declare contacts."""
    return [(c, contacts_of(c)) for c in model.components if isinstance(c, Multibody) and contacts_of(c)]


def check_contact_problem(problem, scheme_name, options):
    """Refuse, with one sentence, what contact-implicit collocation cannot transcribe."""
    mode = options.get("contact")
    if mode not in CONTACT_MODES:
        raise OptionError(f"Unknown contact handling `{mode}`; the only one is contact='implicit'.")
    if not contact_bodies(problem.model):
        raise OptionError(f"contact='implicit' needs contacts, but the model of `{problem.name}` declares none; declare them with `body.contact(name, gap, ...)`.")
    forcing = [c for c in problem.model.constraints if c.multipliers]  # an invariant (a unit quaternion) has no force
    if forcing:
        raise OptionError(f"contact='implicit' does not combine with kinematic constraints yet; `{forcing[0].name}` is one.")
    if options.get("mode", "default") == "explicit":
        raise OptionError("contact='implicit' needs the accelerations as variables; use mode='default' or 'implicit', not 'explicit'.")
    if options.get("contact_forces", "interval") not in FORCES:
        raise OptionError(f"Unknown contact_forces `{options['contact_forces']}`; choose 'interval' (one force per mesh interval) "
                          "or 'collocation' (a force at every collocation point).")
    ContactRows.check([c for _, cs in contact_bodies(problem.model) for c in cs], options.get("contact_forces", "interval"))


class ContactEnds(NamedTuple):
    """What closes each interval's defects with contacts (the fields of
    :class:`colloc.transcription.constraints.Ends`), and the residual and integrands of each interval's own end
    values (pre-impact speeds, and with free steps its own accelerations and controls)."""

    X: object
    XD: object
    RES: object = None
    ACC: object = None
    residual: object = None
    integrands: object = None


class ContactRows(ContactHooks):
    """The contact variables and rows of one collocation transcription (hooks called by :func:`transcribe`).

    Stores the numeric setup made in ``__init__`` and nothing from its hooks: the interval ends that
    :meth:`interval_ends` builds are handed back to :meth:`add_rows` and :meth:`end_integrands` (``at.ends``).
    """

    # plain_nodes False: impacts and free steps replace the interval ends, the forces change the residual
    transcriptions, placements, restitution, curved_friction, plain_nodes = ("collocation",), FORCES, True, True, False

    def __init__(self, problem, grid, res_names, relaxation, impacts=True, free_steps=None, forces="interval", own_ends=False,
                 arrival=None):
        model = problem.model
        self.grid, self.eps, self.impacts = grid, float(relaxation), bool(impacts)
        self.arrival = arrival
        # free_steps: None, or the ratio r bounding each interval to [h̄_i / r, r h̄_i]; forces: where the forces
        # act (colloc.transcription.force_points)
        self.free_steps, self.forces, self.problem = free_steps, forces, problem
        # intervals ending at an interior mesh point close on their own accelerations (and forces) with free steps,
        # and with own_ends where an impulse may fall (on the mesh point's, a plastic landing is off by g h/6)
        self.own_ends = bool(free_steps) or (bool(own_ends) and self.impacts and grid.num_intervals > 1)
        self.control_names = [c.name for c in model.controls]
        self.res_names = list(res_names)
        state_names = [s.name for s in model.states]
        self.nx = len(state_names)
        self.contacts = [c for _, cs in contact_bodies(model) for c in cs]
        self.frictional = [i for i, c in enumerate(self.contacts) if c.friction > 0]
        # planar friction (one tangent) keeps its β⁺/β⁻ rows; contacts with two tangents get the 3-D cones
        self.planar = [i for i in self.frictional if self.contacts[i].num_tangents == 1]
        self.spatial = [i for i in self.frictional if self.contacts[i].num_tangents == 2]
        bodies = [b for b, _ in contact_bodies(model)]
        self.speed_rows = [state_names.index(model.lookup(s).name) for b in bodies for s in b.speeds]
        self.speed_names = [state_names[i] for i in self.speed_rows]
        x, p = model.vector("state"), model.vector("parameter")
        nc, nf = len(self.contacts), len(self.planar)
        lam, bp, bm = ca.SX.sym("lam", nc), ca.SX.sym("bp", nf), ca.SX.sym("bm", nf)
        F3 = ca.SX.sym("F3", 2 * len(self.spatial))
        force, force3 = ca.SX.zeros(len(res_names), 1), ca.SX.zeros(len(res_names), 1)
        momentum, momentum3, before = [], [], []
        vminus = ca.SX.sym("vminus", len(self.speed_rows))
        xminus = ca.SX(x)
        xminus[self.speed_rows] = vminus
        for b in bodies:
            rows = [res_names.index(model.lookup(s).name) for s in b.speeds]
            gen = generalized_force(b, self.contacts, lam, {i: bp[j] - bm[j] for j, i in enumerate(self.planar)})
            gen3 = generalized_force(b, self.contacts, None, {i: F3[2 * r:2 * r + 2] for r, i in enumerate(self.spatial)})
            force[rows] = force[rows] + gen
            force3[rows] = force3[rows] + gen3
            momentum3.append(-gen3)
            M = b.equations().mass_matrix
            momentum.append(ca.mtimes(M, b.v - ca.substitute(b.v, x, xminus)) - gen)
            before.append(b.v - ca.solve(M, gen))  # v⁻ = v⁺ − M⁻¹(W_nᵀP + W_tᵀP_t), for warm starts
        gap, yd, sd = gaps_and_speeds(self.contacts, self.planar)
        sd3 = gaps_and_speeds(self.contacts, self.spatial)[2]
        col = lambda e: ca.vertcat(*e) if e else ca.SX(0, 1)  # noqa: E731
        self._point = ca.Function("contact_point", [x, p, lam, bp, bm], [force, col(gap), col(yd), col(sd)])
        # 3-D friction (F3: each contact's force in its tangent coordinates) -> residual force, momentum, ṡ
        self.spatial_point = ca.Function("contact_friction3d", [x, p, F3], [force3, col(momentum3), col(sd3)])
        self.point = self._point if not self.spatial else self._public_point(x, p, lam, force, gap, yd, sd3)
        # impact: (x⁺, v⁻, P, P⁺, P⁻) -> momentum rows and ẏ⁻, the pre-impact normal speeds
        yd_minus = ca.substitute(col(yd), x, xminus)
        self.impact = ca.Function("contact_impact", [x, vminus, p, lam, bp, bm], [col(momentum), yd_minus])
        self.pre_impact = ca.Function("pre_impact", [x, p, lam, bp, bm], [col(before)])
        self.mu = np.array([self.contacts[i].friction for i in self.planar]).reshape(-1, 1)
        self.e = np.array([c.restitution for c in self.contacts]).reshape(-1, 1)
        self.spatial_contacts = [self.contacts[i] for i in self.spatial]
        self.force_map = ca.DM(friction3d.force_map(self.spatial_contacts))

    @property
    def groups(self):
        """The forces grouped by their place in their intervals (:func:`colloc.transcription.force_points.force_groups`)."""
        return force_points.force_groups(self.grid, self.forces, self.own_ends)

    @property
    def control_bounds(self):
        return [tuple(self.problem.bounds[c]) for c in self.control_names]

    def _public_point(self, x, p, lam, force, gap, yd, sd3):
        """``point`` as readers of a result call it: friction inputs and one sliding speed per frictional contact
        (the speed's norm for a contact with two tangents); the 3-D friction forces are not among its inputs."""
        nf = len(self.frictional)
        bp, bm = ca.SX.sym("bp", nf), ca.SX.sym("bm", nf)
        planar = [self.frictional.index(i) for i in self.planar]
        f = self._point(x, p, lam, bp[planar], bm[planar])[0]
        speeds = []
        for i in self.frictional:
            c = self.contacts[i]
            s = ca.mtimes(c.tangent_jacobian, c.body.v)
            speeds.append(s if c.num_tangents == 1 else ca.norm_2(s))
        col = lambda e: ca.vertcat(*e) if e else ca.SX(0, 1)  # noqa: E731
        return ca.Function("contact_point", [x, p, lam, bp, bm], [f, col(gap), col(yd), col(speeds)])

    # -- names ---------------------------------------------------------------------------------
    def _names(self, suffix, frictional=False):
        which = [self.contacts[i] for i in self.planar] if frictional else self.contacts
        return [f"{c.name}.{suffix}" for c in which]

    @property
    def impact_points(self):
        """Grid indices of the interior mesh points, where impulses act (none with ``impacts=False``)."""
        return self.grid.mesh_points[1:-1] if self.impacts else self.grid.mesh_points[:0]

    # -- hooks ---------------------------------------------------------------------------------
    def _force_blocks(self, layout, suffix, ncols, col_index):
        """The force blocks ``cn, cbp, cbm, cg`` (and ``cf3``), named with ``suffix``, ``ncols`` columns each."""
        for name, names in (("cn", self._names("normal_force")), ("cbp", self._names("friction_plus", True)),
                            ("cbm", self._names("friction_minus", True)), ("cg", self._names("sliding_speed", True))):
            layout.add(name + suffix, names, ncols, 0.0, np.inf, col_index=col_index)
        if self.spatial:
            cs = self.spatial_contacts
            lower = np.concatenate([np.full(len(friction3d.force_names(c)), friction3d.force_lower(c)) for c in cs])[:, None]
            layout.add("cf3" + suffix, [n for c in cs for n in friction3d.force_names(c)], ncols, lower, np.inf, col_index=col_index)

    def add_variables(self, layout):
        n, ni, starts = self.grid.num_intervals, self.impact_points.size, self.grid.interval_starts
        self._force_blocks(layout, "", *force_points.force_columns(self.grid, self.forces))
        if self.forces == "collocation":
            idle = force_points.idle_points(self.grid, self.groups)
            for b in ("cn", "cbp", "cbm", "cg", "cf3"):
                if b in layout:
                    layout[b].lower[:, idle] = layout[b].upper[:, idle] = 0.0
        if self.spatial:
            cs = self.spatial_contacts
            lower = np.concatenate([np.full(len(friction3d.force_names(c)), friction3d.force_lower(c)) for c in cs])[:, None]
            layout.add("cg3", [f"{c.name}.slip_speed" for c in cs], self.grid.num_points, 0.0, np.inf)
            layout.add("pf3", [n for c in cs for n in friction3d.force_names(c, "friction_impulse")], ni, lower, np.inf,
                       col_index=self.impact_points)
            layout.add("pg3", [f"{c.name}.impact_slip_speed" for c in cs], ni, 0.0, np.inf, col_index=self.impact_points)
        layout.add("vm", [f"{n}.pre_impact" for n in self.speed_names], ni, col_index=self.impact_points)
        layout.add("pn", self._names("impulse"), ni, 0.0, np.inf, col_index=self.impact_points)
        layout.add("pbp", self._names("friction_impulse_plus", True), ni, 0.0, np.inf, col_index=self.impact_points)
        layout.add("pbm", self._names("friction_impulse_minus", True), ni, 0.0, np.inf, col_index=self.impact_points)
        layout.add("pg", self._names("impact_sliding_speed", True), ni, 0.0, np.inf, col_index=self.impact_points)
        if any(gr.suffix == BEFORE for gr in self.groups):  # each interval's own forces at its end
            self._force_blocks(layout, BEFORE, n - 1, self.grid.mesh_points[1:-1])
        inner = self.grid.mesh_points[1:-1]
        for name, block in (("zm", "z"), ("um", "u"))[:2 if self.free_steps else 1 if self.own_ends else 0]:
            b = layout[block]
            layout.add(name, [f"{r}.before" for r in b.row_names], n - 1, b.lower[:, inner], b.upper[:, inner], col_index=inner)
        if self.free_steps:
            r, nominal = self.free_steps, self.grid.fractions
            layout.add(STEPS, ["interval.fraction"], n, nominal / r, np.minimum(nominal * r, 1.0), nominal, col_index=starts,
                       per="interval")

    def cost_terms(self, V, at):
        """With free steps, a small pull of every interval towards its length on the given mesh (else left free at rest)."""
        if not self.free_steps:
            return {}
        nominal = ca.DM(self.grid.fractions).T
        return {"steps": STEP_PULL * ca.sumsqr(V[STEPS] / nominal - 1.0)}

    def step_fractions(self, V):
        """The interval fractions ``σ`` (column, ``Σσ = 1``) when the steps are free, else None (a fixed mesh)."""
        return ca.reshape(V[STEPS], -1, 1) if self.free_steps else None

    @property
    def interpolation(self) -> np.ndarray:
        """``E``, shape (num_points, num_intervals): forces on the grid ``F_grid = F_intervals Eᵀ``.

        Forces are constant on each interval (a mesh point takes the force of the interval it starts;
        the last one the last interval's), as the impulses of a time-stepping scheme are (Stewart &
        Trinkle 1996).  Free forces at every grid point would let the normal force alternate between
        mesh and interior points while the gap stays closed (the defects leave that mode undetermined),
        and a friction force at a point where the block is momentarily at rest could push it forward
        over the whole next interval; an interval's friction opposes that interval's mean sliding speed.
        """
        g = self.grid
        if self.forces == "collocation":  # a force at every grid point
            return np.eye(g.num_points)
        owner = np.minimum(np.arange(g.num_points) // g.stride, g.num_intervals - 1)
        E = np.zeros((g.num_points, g.num_intervals))
        E[np.arange(g.num_points), owner] = 1.0
        return E

    def guess(self, layout, warm):
        """End values from the model's guesses, a warm start's forces and impulses, bounces seeded (contact_guess)."""
        layout["vm"].guess[:] = layout["x"].guess[self.speed_rows][:, self.impact_points]
        for name, block in (("zm", "z"), ("um", "u")):
            if name in layout:
                layout[name].guess[:] = layout[block].guess[:, self.grid.mesh_points[1:-1]]
        if warm is not None:  # each interval's force at its midpoint, or a force at every grid point
            at = self.grid.tau if self.forces == "collocation" else 0.5 * (self.grid.mesh[:-1] + self.grid.mesh[1:])
            fill_contact_guess(self, layout, warm.columns, warm.time, warm.time[0] + (warm.time[-1] - warm.time[0]) * at)
        seed_impacts(self, layout, warm.time[-1] - warm.time[0] if warm is not None else guess_final_time(self.problem) - self.problem.t0_value)

    def _end_values(self, V, T, X):
        """Each interval's own end values ``(t, x⁻, z⁻, u⁻)``: pre-impact speeds, and with free steps its own
        accelerations and controls (the next interval's may differ: a force, a push or a lift jumps there)."""
        cols = list(self.grid.interval_ends)
        inner = list(range(self.grid.num_intervals - 1))
        Xe, Ze, Ue = X[:, cols], V["z"][:, cols], V["u"][:, cols]
        if self.impact_points.size:
            Xe[self.speed_rows, inner] = V["vm"]
        if self.own_ends and inner:
            Ze[:, inner] = V["zm"]
        if self.free_steps and inner:
            Ue[:, inner] = V["um"]
        return T[:, cols], Xe, Ze, Ue

    def interval_ends(self, ends, V, at, point):
        """The pre-impact state, and with free steps the interval's own accelerations and controls, close every
        interval that ends at an interior mesh point: :class:`ContactEnds`, whose residual and integrands there
        :meth:`add_rows` and :meth:`end_integrands` get back (nothing is kept); a method's ``ends.RES`` gets the forces."""
        ends = ends if ends.RES is None else ends._replace(RES=self._end_residual(ends.RES, V, ends.X))
        if not self.impact_points.size and not self.own_ends:  # nothing but the method's residual
            return ends
        Te, Xe, Ze, Ue = self._end_values(V, at.T, V["x"])
        # one mapped call for the defects, the end residual rows and the end integrands (recorded, so its
        # derivatives are taken point by point like the grid's)
        wanted = (0, 1, 4) if self.own_ends else (0,)
        (XDe, res, _, _, L), _ = map_points(
            point, self.grid.num_intervals, (Te, Xe, Ze, Ue, V["lam"][:, list(self.grid.interval_ends)], V["p"]), outputs=wanted)
        return ContactEnds(Xe, XDe, ends.RES, ends.ACC, res, L)

    def _end_rows(self, rows, V, T, X, ends):
        """Residual rows of each interval's own end values (its forces, its acceleration, its control)."""
        n = self.grid.num_intervals
        if not self.own_ends or n < 2:
            return
        _, Xe, _, _ = self._end_values(V, T, X)
        inner = list(range(n - 1))
        # the forces each interval ends on: its own (one per interval), or those of block suffix BEFORE (per point)
        own = (lambda b: V[b + BEFORE]) if self.forces == "collocation" else (lambda b: V[b][:, inner])  # noqa: E731
        F = self._point.map(n - 1)(Xe[:, inner], V["p"], own("cn"), own("cbp"), own("cbm"))[0]
        if self.spatial:
            F = F + self.spatial_point.map(n - 1)(Xe[:, inner], V["p"], ca.mtimes(self.force_map, own("cf3")))[0]
        names = [f"{r}.before" for r in self.res_names]
        rows.add("residual", names, ends.residual[:, inner] - F, self.grid.mesh_points[1:-1])

    def end_integrands(self, V, at, LQ):
        """With free steps: the quadrature's correction for the interval ends' own controls, per integral cost
        (column): ``Σ_i w_end H_i (L(x⁻, z⁻, u⁻) − L(x, z, u))`` at the interior mesh points."""
        n = self.grid.num_intervals
        if not self.own_ends or n < 2 or not LQ.numel():
            return None
        inner = list(range(n - 1))
        w = float(self.grid.scheme.weights[-1]) * at.H[:, inner]
        return ca.mtimes(at.ends.integrands[:, inner] - LQ[:, list(self.grid.mesh_points[1:-1])], w.T)

    def _on_grid(self, M):
        if self.forces == "collocation":  # a force at every grid point
            return M
        # a column selection, not a product with the dense 0/1 matrix: MX keeps a product's structural zeros,
        # which made every residual row depend on every interval's forces (Jacobian nonzeros growing as N²)
        return M[:, [int(i) for i in np.argmax(self.interpolation, axis=1)]]

    def generalized_forces(self, V, at):
        """The contact forces' generalised force at every grid point, ``F = Σ (W_nᵀλ + W_tᵀ(β⁺ − β⁻))`` (in ``R − F``)."""
        ng, X = self.grid.num_points, at.X
        F = self._point.map(ng)(X, V["p"], *(self._on_grid(V[b]) for b in ("cn", "cbp", "cbm")))[0]
        if self.spatial:
            F = F + self.spatial_point.map(ng)(X, V["p"], self._on_grid(ca.mtimes(self.force_map, V["cf3"])))[0]
        return F

    def _end_residual(self, RES, V, Xe):
        """A constraint method's residual at the interval ends (states ``Xe``), with the forces of the mesh points it replaces."""
        cols = [int(i) for i in np.argmax(self.interpolation, axis=1)[self.grid.interval_ends]]
        F = self._point.map(len(cols))(Xe, V["p"], *(V[b][:, cols] for b in ("cn", "cbp", "cbm")))[0]
        F3 = self.spatial_point.map(len(cols))(Xe, V["p"], ca.mtimes(self.force_map, V["cf3"])[:, cols])[0] if self.spatial else 0
        return RES - F - F3

    def add_rows(self, rows, V, at):
        eps, g, T, X = self.eps, self.grid, at.T, at.X
        nc, nf, ng = len(self.contacts), len(self.planar), g.num_points
        _, gap, yd, _ = self._point.map(ng)(X, V["p"], ca.DM.zeros(nc, ng), ca.DM.zeros(nf, ng), ca.DM.zeros(nf, ng))
        self._end_rows(rows, V, T, X, at.ends)
        if self.free_steps:
            rows.add("mesh", ["interval.fractions_sum"], ca.sum2(V[STEPS]) - 1.0, [0])
            force_points.control_hull(rows, g, V["u"], V["um"] if g.num_intervals > 1 else None, self.control_names,
                                      self.control_bounds)
        rows.add("gap", self._names("gap"), gap, np.arange(ng), 0.0, np.inf)
        if self.arrival is not None:
            arrival_rows(rows, self, V, gap, yd)
        # a force acts only while the contact is closed at every grid point of its interval
        for gr in self.groups:
            force_points.complementarity_rows(rows, self._names, gap, V["cn" + gr.suffix][:, gr.cols], g, gr, eps)
        if self.planar:
            self._interval_friction(rows, X, V)
        if self.spatial:
            self._spatial_friction(rows, X, V)
        ip = self.impact_points
        if not ip.size:
            return
        Xi = X[:, list(ip)]
        # impulse variables are in force units, Π = P / h̄ (h̄ the mean interval): their products with gaps
        # and speeds then relax like the forces' do; with P itself, ε would let small impulses hold a body up
        hbar = (T[0, -1] - T[0, 0]) / self.grid.num_intervals
        mom, yd_minus = self.impact.map(ip.size)(Xi, V["vm"], V["p"], *(hbar * V[b] for b in ("pn", "pbp", "pbm")))
        if self.spatial:
            mom = mom + self.spatial_point.map(ip.size)(Xi, V["p"], hbar * ca.mtimes(self.force_map, V["pf3"]))[1]
        _, gap_i, yd_plus, sd_plus = self._point.map(ip.size)(Xi, V["p"], V["pn"], V["pbp"], V["pbm"])
        P = V["pn"]
        rows.add("impact", [f"{n}.momentum" for n in self.speed_names], mom, ip)
        rows.add(COMPLEMENTARITY, self._names("gap*impulse"), gap_i * P, ip, -np.inf, eps)
        newton = yd_plus + ca.repmat(ca.DM(self.e), 1, ip.size) * yd_minus
        rows.add(COMPLEMENTARITY, self._names(RESTITUTION), newton * P, ip, -eps, eps)
        self._friction(rows, P, sd_plus, V["pbp"], V["pbm"], V["pg"], ip, "impulse_")
        if self.spatial:
            sd3 = self.spatial_point.map(ip.size)(Xi, V["p"], ca.DM.zeros(self.force_map.shape[0], ip.size))[2]
            friction3d.cone_rows(rows, self.spatial_contacts, eps, P[self.spatial, :], V["pf3"], [V["pg3"]], [sd3], [ip], ip, "impulse_")

    def _interval_friction(self, rows, X, V):
        """Maximal dissipation over each interval: its friction forces oppose the sliding at every grid point of it.

        ``γ_k ≥ |ṡ_l|`` for the grid points l of the interval of force k, ``μλ_k − β⁺_k − β⁻_k ≥ 0 ⊥ γ_k`` (an
        unsaturated cone sticks the whole interval), ``β⁺_k ṡ_l ≤ ε`` and ``−β⁻_k ṡ_l ≤ ε`` (the force
        never pushes along the motion).  A force at a single point with the block momentarily at rest
        could otherwise push it forward for the whole interval, and a zero mean speed could hide a wiggle.
        """
        g, nf = self.grid, len(self.planar)
        nc, ng = len(self.contacts), g.num_points
        sd = self._point.map(ng)(X, V["p"], ca.DM.zeros(nc, ng), ca.DM.zeros(nf, ng), ca.DM.zeros(nf, ng))[3]
        n = g.num_intervals
        sd_end = None
        # each interval's last rows on its own pre-impact speeds (with the mesh point's post-impact ones a biped's
        # standing foot slid into its heel strike, 14 % below the optimum); on the mesh given with one force per interval
        # the hopper's schedule-free gait then ended infeasible (ε = 0.1), so there the mesh point's speeds stay
        if self.impact_points.size and (self.forces == "collocation" or self.free_steps):
            Xe = self._end_values(V, ca.DM.zeros(1, ng), X)[1]
            sd_end = self._point.map(n)(Xe, V["p"], ca.DM.zeros(nc, n), ca.DM.zeros(nf, n), ca.DM.zeros(nf, n))[3]
        names = lambda suffix: self._names(suffix, True)  # noqa: E731
        for gr in self.groups:
            lam, bp, bm, gamma = (V[b + gr.suffix][:, gr.cols] for b in ("cn", "cbp", "cbm", "cg"))
            force_points.planar_rows(rows, names, self.mu, lam[self.planar, :], bp, bm, gamma, sd, g, gr, self.eps, sd_end)

    def _spatial_friction(self, rows, X, V):
        """3-D cones (:mod:`colloc.transcription.friction3d`): each force against the sliding at every grid point of
        its interval, with a sliding speed per grid point."""
        ng = self.grid.num_points
        sd = self.spatial_point.map(ng)(X, V["p"], ca.DM.zeros(self.force_map.shape[0], ng))[2]
        for gr in self.groups:
            lam, f3 = V["cn" + gr.suffix][:, gr.cols], V["cf3" + gr.suffix][:, gr.cols]
            force_points.spatial_rows(rows, self.spatial_contacts, lam[self.spatial, :], f3, V["cg3"], sd, self.grid, gr, self.eps)

    def _friction(self, rows, normal, sd, bp, bm, gamma, points, tag):
        if self.planar:
            friction_rows(rows, lambda name: self._names(tag + name, True), self.mu, normal[self.planar, :], sd, bp, bm,
                          gamma, points, self.eps)

    # -- reading back --------------------------------------------------------------------------
    def columns(self, values, times):
        """Trajectory columns on the grid: normal and friction forces, impulses (0 off the impact points)."""
        hbar = (times[-1] - times[0]) / self.grid.num_intervals
        ng, E = self.grid.num_points, self.interpolation
        cols = {k: E @ v for k, v in force_points.named_forces(self, values, "").items()}
        if "cn" + BEFORE in values:  # the forces each interval ends on at an interior mesh point (as for controls)
            ends = list(self.grid.interval_ends)[:-1]
            for k, v in force_points.named_forces(self, values, BEFORE).items():
                cols[k + END] = cols[k].copy()
                cols[k + END][ends] = v
        for i, name in enumerate(self._names("impulse")):
            col = np.zeros(ng)
            col[self.impact_points] = hbar * values["pn"][i]
            cols[name] = col
        for j, i in enumerate(self.planar):
            col = np.zeros(ng)
            col[self.impact_points] = hbar * (values["pbp"][j] - values["pbm"][j])
            cols[f"{self.contacts[i].name}.friction_impulse"] = col
        if self.spatial:
            for k, v in friction3d.split_columns(self.spatial_contacts, values["pf3"], "friction_impulse").items():
                cols[k] = np.zeros(ng)
                cols[k][self.impact_points] = hbar * v
        if self.free_steps and "um" in values:  # the controls each interval ends on (a push may jump at a mesh point)
            ends = list(self.grid.interval_ends)[:-1]
            for i, name in enumerate(self.control_names):
                col = np.array(values["u"][i], dtype=float)
                col[ends] = values["um"][i]
                cols[name + END] = col
        return cols

    def gaps(self, X, P):
        """``φ`` at every grid point, shape ``(num_contacts, num_points)`` (numeric)."""
        nc, nf, ng = len(self.contacts), len(self.frictional), X.shape[1]
        out = self.point.map(ng)(X, P, np.zeros((nc, ng)), np.zeros((nf, ng)), np.zeros((nf, ng)))[1]
        return np.asarray(out).reshape(nc, ng)


def friction_rows(rows, names, mu, normal, sd, bp, bm, gamma, points, eps):
    """Maximal dissipation on the polyhedral cone ``{β⁺, β⁻}`` (one tangent): Stewart–Trinkle's rows.

    ``names(suffix)`` gives the row names of the frictional contacts; ``mu`` their friction coefficients
    (column), ``normal`` their normal forces or impulses, ``sd`` their sliding speeds, one column per point.
    """
    cone = ca.repmat(ca.DM(mu), 1, len(points)) * normal - bp - bm
    plus, minus = gamma + sd, gamma - sd
    for name, expr in (("slip_plus", plus), ("slip_minus", minus), ("cone", cone)):
        rows.add("friction", names(name), expr, points, 0.0, np.inf)
    for name, expr in (("slip_plus*friction_plus", plus * bp), ("slip_minus*friction_minus", minus * bm), ("cone*sliding_speed", cone * gamma)):
        rows.add(COMPLEMENTARITY, names(name), expr, points, -np.inf, eps)


#: The default of ``free_steps``: free wherever the mesh has two intervals or more.  Measured (docs/contacts.md,
#: "Contact-implicit solves"): from 20 random starts the block with T = 4 reaches J* 19 times with free steps
#: and never on the mesh given (stick phase cut at mesh points, 5 % dearer), the ball finds its bounce 18
#: times against 0, the block with T = 2 19 against 17; the hopper's gait costs 824 against 896.
AUTO = "auto"


class ContactCollocation(Collocation):
    """Single-phase collocation with contact-implicit rows (``contact="implicit"``); see the module docstring.

    ``relaxation`` is the initial Scholtes ``ε`` of the complementarity rows; ``impacts=False`` leaves out
    the impulses (for motions whose contacts never close with a speed, e.g. a block that stays on its floor:
    fewer degenerate complementarity pairs); ``own_ends=True`` closes each interval ending at an interior mesh
    point on its own accelerations on a fixed mesh too (always so with free steps; module docstring).
    """

    def __init__(self, problem, scheme="hermite-simpson", intervals=None, mesh=None, contact="implicit", relaxation=1e-6,
                 impacts=True, free_steps=AUTO, contact_forces="interval", own_ends=False, arrival=None, **options):
        check_contact_problem(problem, scheme if isinstance(scheme, str) else scheme.name,
                              dict(options, contact=contact, contact_forces=contact_forces))
        steps = step_ratio(True if free_steps is AUTO else free_steps)
        super().__init__(problem, scheme, intervals, mesh, **options)
        if free_steps is AUTO and self.mesh.size < 3:  # one interval: its length is the horizon
            steps = None
        if not (isinstance(relaxation, (int, float)) and relaxation >= 0):
            raise OptionError(f"`relaxation` of the complementarity rows must be a number ≥ 0; got {relaxation!r}.")
        if not isinstance(impacts, bool):
            raise OptionError(f"`impacts` must be True or False; got {impacts!r}.")
        if not isinstance(own_ends, bool):
            raise OptionError(f"`own_ends` must be True or False; got {own_ends!r}.")
        if steps and self.mesh.size < 3:
            raise OptionError("`free_steps` needs at least 2 intervals: one interval's length is the horizon.")
        self.relaxation, self.impacts, self.free_steps = float(relaxation), impacts, steps
        self.contact_forces, self.own_ends = contact_forces, own_ends
        self.arrival = Arrival.of(arrival, impacts)

    def build(self, guess=None):
        """The NLP; a warm start's contact columns (forces, impulses) are sampled onto the contact blocks, its
        other columns guess the model's variables."""
        traj = as_trajectory(guess)
        model_part = warm = None
        if traj is not None:
            known = {v.name for v in self.problem.model.variables} | {s.name + ".dot" for s in self.problem.model.states}
            keep = [n for n in traj.names if n in known]
            model_part = Trajectory(traj.time, {n: traj[n] for n in keep}, {n: traj.kinds[n] for n in keep}, traj.parameters,
                                    traj.metadata)
            warm = Warm(traj.time, {n: traj[n] for n in traj.names if n not in set(keep)})
        return transcribe(self.problem, self.mesh, self.scheme, self.options, model_part, contact=self.hooks, warm=warm)

    def hooks(self, grid, res_names):
        return ContactRows(self.problem, grid, res_names, self.relaxation, self.impacts, self.free_steps, self.contact_forces,
                           self.own_ends, self.arrival)

    def trajectory(self, nlp, w, meta=None):
        values = nlp.layout.unpack(w)
        traj = reconstruct(self.problem, nlp, values, meta, solved_grid(nlp, values))
        traj = with_columns(traj, nlp.contact.columns(values, traj.time), "multiplier")
        traj.metadata["contact"] = "implicit"
        return traj

    def result_metadata(self):
        return dict(super().result_metadata(), contact="implicit", free_steps=bool(self.free_steps), contact_forces=self.contact_forces,
                    own_ends=bool(self.free_steps) or (self.own_ends and bool(self.impacts)),  # verify reads these three
                    **({} if self.arrival is None else dict(arrival=self.arrival._asdict())))
