"""Contact-implicit discrete Euler–Lagrange equations: ``scheme="midpoint-vi"`` with ``contact="implicit"``.

The midpoint variational integrator (:mod:`colloc.transcription.midpoint_vi`)
with the contacts the model declares (:meth:`colloc.Multibody.contact`) as
impulses at the steps, after Manchester, Doshi, Wood & Kuindersma,
"Contact-implicit trajectory optimization using variational integrators",
IJRR 38 (2019) 1463–1476.  At every node ``k`` a normal force ``λ_k ≥ 0`` per
contact (and friction facets ``β⁺_k, β⁻_k ≥ 0``) acts through the Jacobians
at the **next** configuration, ``q_{k+1}`` (at the last node, which has none,
``q_N + h_{N−1} v_N`` one step ahead along the end speed ``v_N``):

    D₂L_d(q_{k−1}, q_k) + D₁L_d(q_k, q_{k+1}) + f⁺_{k−1} + f⁻_k
        + w_k [W_n(q_{k+1})ᵀ λ_k + W_t(q_{k+1})ᵀ (β⁺_k − β⁻_k)] = 0,

``w_k`` the node's weight (``(h_{k−1} + h_k)/2``, ``h₀/2`` and ``h_{N−1}/2``
at the ends, where the impulse enters the discrete Legendre transforms that
give the end speeds), so ``λ_k`` is in force units; the complementarity is
on that next configuration:

* ``φ(q_k) ≥ 0`` at every node (rows ``gap``), ``φ(q_{k+1}) λ_k ≤ ε``
  (rows ``complementarity``): the step's impulse keeps the next configuration
  out of the ground, and acts only if it touches;
* planar Coulomb friction by maximal dissipation with the discrete
  tangential velocity ``ṡ_k = W_t(q_{k+1}) (q_{k+1} − q_k)/h_k`` (at the last
  node ``W_t v_N``): ``γ_k ± ṡ_k ≥ 0``,
  ``μλ_k − β⁺_k − β⁻_k ≥ 0`` (rows ``friction``) and the products
  ``(γ ± ṡ)β^± ≤ ε``, ``(μλ − β⁺ − β⁻)γ ≤ ε`` (Stewart & Trinkle, IJNME 39
  (1996), as in :mod:`colloc.transcription.contacts`); a contact with two
  tangents takes the cones of :mod:`colloc.transcription.friction3d` with the
  same ``ṡ_k``, the circular one with its slip rows cut (:data:`SPEED_CUTS`).

Holonomic constraints of the model keep their multipliers at the nodes
(midpoint-vi's ``w_k G(q_k)ᵀλ_k``, to which the contact impulses add).
Impacts need no variables of their own: a contact that closes between
``q_k`` and ``q_{k+1}`` is stopped by the impulses of nodes ``k`` and
``k + 1``, so every impact is plastic (restitution ``e = 0``; a contact
declared with ``e > 0`` is refused).  The ``complementarity`` rows are those
the Scholtes homotopy of :mod:`colloc.pipeline.contact_implicit` drives to its
tolerance.

Trajectory columns: ``<contact>.normal_force`` (``λ_k``; at an impact a
spike of order impulse/step), ``<contact>.friction_force`` (``β⁺ − β⁻``),
``<contact>.impulse``: at the node where the contact closes (open at
``q_{k−1}``, closed at ``q_k``) the impulse ``w_{k−1}λ_{k−1} + w_kλ_k`` of the
two steps that stop it, zero elsewhere.  Node speeds split each node's
impulse half before, half after, as the holonomic impulses are.

Legend: ``lam`` normal force, ``bp``/``bm`` friction facets ``β⁺``/``β⁻``,
``gamma`` sliding speed, ``w`` node weight, ``nxt`` the configuration each
node's contact forces use.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from .discrete_mechanics import SCHEME
from ..errors import OptionError
from ..results.trajectory import Trajectory
from . import friction3d
from .contacts import CLOSED_GAP, COMPLEMENTARITY, CONTACT_MODES, contact_bodies, friction_rows
from .midpoint_vi import MidpointVITranscription, transcribe_midpoint_vi
from .base import as_trajectory, with_columns
from .contact_guess import fill_contact_guess
from .contact_hooks import ContactHooks
from .extension import At, Warm

#: Options of a contact-implicit midpoint-vi transcription.
OPTIONS = ("contact", "relaxation", "impacts", "forcing")
#: Linear cuts ``γ + d_jᵀṡ ≥ 0`` of a circular cone's slip rows (:func:`friction3d.cone_rows`): at a stop the smoothed
#: ``‖ṡ‖`` has no gradient, and a thrown ball sliding to rest (μ = 0.5, 20 steps) stalled at IPOPT's iteration limit
#: without them; collocation leaves them out (its released box ended infeasible with them).
SPEED_CUTS = 4


def check_contact_vi(problem, options):
    """Refuse, with one sentence, what the contact-implicit midpoint-vi equations cannot transcribe."""
    for k in options:
        if k not in OPTIONS:
            raise OptionError(f"Option `{k}` does not apply to contact='implicit' with scheme `{SCHEME}`; its options are {', '.join(f'`{o}`' for o in OPTIONS)}.")
    mode = options.get("contact")
    if mode not in CONTACT_MODES:
        raise OptionError(f"Unknown contact handling `{mode}`; the only one is contact='implicit'.")
    bodies = contact_bodies(problem.model)
    if not bodies:
        raise OptionError(f"contact='implicit' needs contacts, but the model of `{problem.name}` declares none; declare them with `body.contact(name, gap, ...)`.")
    ContactVIRows.check([c for _, cs in bodies for c in cs], "node")
    relaxation = options.get("relaxation", 1e-6)
    if not (isinstance(relaxation, (int, float)) and 0 <= relaxation < np.inf):
        raise OptionError(f"`relaxation` of the complementarity rows must be a number ≥ 0; got {relaxation!r}.")
    if not isinstance(options.get("impacts", True), bool):
        raise OptionError(f"`impacts` must be True or False; got {options['impacts']!r}.")


class ContactVIRows(ContactHooks):
    """The contact variables and rows of one contact-implicit midpoint-vi NLP (hooks of :func:`transcribe_midpoint_vi`).

    Also what :func:`colloc.pipeline.contact_implicit.contact_report` reads: ``contacts``, ``frictional``,
    ``point`` and :meth:`gaps` (same signatures as :class:`~colloc.transcription.contacts.ContactRows`).
    """

    # impulses at the steps, one per node; the sliding speed needs a tangential position
    transcriptions, placements, restitution, curved_friction = (SCHEME,), ("node",), False, False

    def __init__(self, problem, vi, relaxation, mesh):
        model = problem.model
        self.vi, self.eps, self.mesh = vi, float(relaxation), np.asarray(mesh, float)
        self.n = self.mesh.size - 1
        self.contacts = [c for _, cs in contact_bodies(model) for c in cs]
        self.frictional = [i for i, c in enumerate(self.contacts) if c.friction > 0]
        # planar friction keeps its β⁺/β⁻ rows; contacts with two tangents take the 3-D cones (friction3d)
        self.planar = [i for i in self.frictional if self.contacts[i].num_tangents == 1]
        self.spatial = [i for i in self.frictional if self.contacts[i].num_tangents == 2]
        self.spatial_contacts = [self.contacts[i] for i in self.spatial]
        nc, nf = len(self.contacts), len(self.planar)
        q, par = vi.q, vi.par
        lam, bp, bm = ca.SX.sym("lam", nc), ca.SX.sym("bp", nf), ca.SX.sym("bm", nf)
        col = lambda e: ca.vertcat(*e) if e else ca.SX(0, 1)  # noqa: E731
        gap = col([c.gap for c in self.contacts])
        tangent = col([self.contacts[i].tangent for i in self.planar])
        # the VI's coordinates are the bodies' own (N = I): Jacobians with respect to all of them
        Wn, Wt = ca.jacobian(gap, q), ca.jacobian(tangent, q)
        force = ca.mtimes(Wn.T, lam) + ca.mtimes(Wt.T, bp - bm)
        dq = ca.SX.sym("dq", q.numel())
        self.node = ca.Function("contact_node", [q, par, lam, bp, bm, dq], [force, gap, ca.mtimes(Wt, dq)],
                                ["q", "par", "lam", "bp", "bm", "dq"], ["force", "gap", "sliding_speed"])
        W3 = ca.jacobian(col([self.contacts[i].tangent for i in self.spatial]), q)
        F3 = ca.SX.sym("F3", W3.shape[0])
        self.node3 = ca.Function("contact_node3d", [q, par, F3, dq], [ca.mtimes(W3.T, F3), ca.mtimes(W3, dq)])
        self.force_map = ca.DM(friction3d.force_map(self.spatial_contacts))
        # on the model's states, for the schedule of :func:`colloc.pipeline.contact_implicit.contact_schedule`:
        # one sliding speed per frictional contact (the norm of the two of a 3-D one)
        x, v = model.vector("state"), vi.v
        bpf, bmf = ca.SX.sym("bp", len(self.frictional)), ca.SX.sym("bm", len(self.frictional))
        planar = [self.frictional.index(i) for i in self.planar]
        pick = lambda b: ca.vertcat(*[b[j] for j in planar]) if planar else ca.SX(0, 1)  # noqa: E731
        force_f = ca.substitute([force], [bp, bm], [pick(bpf), pick(bmf)])[0]
        speeds = [ca.mtimes(ca.jacobian(self.contacts[i].tangent, q), v) for i in self.frictional]
        speeds = [s if s.numel() == 1 else ca.norm_2(s) for s in speeds]
        self.point = ca.Function("contact_point", [x, par, lam, bpf, bmf], [force_f, gap, ca.mtimes(Wn, v), col(speeds)])
        self.mu = np.array([self.contacts[i].friction for i in self.planar]).reshape(-1, 1)

    def _names(self, suffix, frictional=False):
        which = [self.contacts[i] for i in self.planar] if frictional else self.contacts
        return [f"{c.name}.{suffix}" for c in which]

    # -- hooks ---------------------------------------------------------------------------------
    def add_variables(self, layout):
        n = self.n
        layout.add("cn", self._names("normal_force"), n + 1, 0.0, np.inf)
        layout.add("cbp", self._names("friction_plus", True), n + 1, 0.0, np.inf)
        layout.add("cbm", self._names("friction_minus", True), n + 1, 0.0, np.inf)
        layout.add("cg", self._names("sliding_speed", True), n + 1, 0.0, np.inf)
        if self.spatial:
            cs = self.spatial_contacts
            lower = np.concatenate([np.full(len(friction3d.force_names(c)), friction3d.force_lower(c)) for c in cs])[:, None]
            layout.add("cf3", [m for c in cs for m in friction3d.force_names(c)], n + 1, lower, np.inf)
            layout.add("cg3", [f"{c.name}.slip_speed" for c in cs], n + 1, 0.0, np.inf)
        layout.add("cq", [f"{name}.next" for name in self.vi.coordinate_names], 1)

    def guess(self, layout, warm):
        """The configuration after the last node from the guessed last one; a warm start's forces at the nodes, on
        its horizon."""
        layout["cq"].guess[:] = layout["q"].guess[:, -1:]
        if warm is not None:
            fill_contact_guess(self, layout, warm.columns, warm.time, warm.time[0] + (warm.time[-1] - warm.time[0]) * self.mesh)

    @staticmethod
    def _next(Q, V):
        """The configuration each node's contact forces use: ``q_{k+1}``, and ``q_N + h_{N−1} v_N`` at the last node."""
        return ca.horzcat(Q[:, 1:], V["cq"])

    def generalized_forces(self, V, at):
        """Generalised contact forces at the nodes, shape (nq, n + 1), weighted like ``Gᵀλ`` (``at.X``: the
        configurations); symbolic in the NLP, numeric on a solution's ``values``."""
        Q = at.X
        n1 = Q.shape[1]
        F = self.node.map(n1)(self._next(Q, V), V["p"], V["cn"], V["cbp"], V["cbm"], ca.DM.zeros(Q.shape))[0]
        if self.spatial:
            F = F + self.node3.map(n1)(self._next(Q, V), V["p"], ca.mtimes(self.force_map, V["cf3"]), ca.DM.zeros(Q.shape))[0]
        return F

    def add_rows(self, rows, V, at):
        """``gap``, ``friction`` and ``complementarity`` rows at every node; ``at.speeds`` (nq, n + 1) is ``Δq/h`` and ``v_N``.

        The last node has no next configuration: its impulse looks one step ahead along the end speed,
        ``q_N + h_{N−1} v_N`` (rows ``contact:<coordinate>.next``), so that it is fixed as the others are
        (a resting contact holds its weight, ``v_N`` is not launched) whether or not the end speed is given.
        """
        Q, H, node_speeds = at.X, at.H, at.speeds
        eps, n1 = self.eps, Q.shape[1]
        nodes = np.arange(n1)
        nxt = self._next(Q, V)
        rows.add("contact", [f"{name}.next" for name in self.vi.coordinate_names], V["cq"] - Q[:, -1] - H[-1] * node_speeds[:, -1], [n1 - 1])
        node = self.node.map(n1)
        gap = node(Q, V["p"], V["cn"], V["cbp"], V["cbm"], node_speeds)[1]
        _, gap_next, sd = node(nxt, V["p"], V["cn"], V["cbp"], V["cbm"], node_speeds)
        lam = V["cn"]
        rows.add("gap", self._names("gap"), ca.horzcat(gap, gap_next[:, -1]), np.arange(n1 + 1), 0.0, np.inf)
        rows.add(COMPLEMENTARITY, self._names("next_gap*normal_force"), gap_next * lam, nodes, -np.inf, eps)
        if self.spatial:
            sd3 = self.node3.map(n1)(nxt, V["p"], ca.DM.zeros(self.force_map.shape[0], n1), node_speeds)[1]
            friction3d.cone_rows(rows, self.spatial_contacts, eps, lam[self.spatial, :], V["cf3"], [V["cg3"]], [sd3], [nodes], nodes,
                                 speed_cuts=SPEED_CUTS)
        if not self.planar:
            return
        friction_rows(rows, lambda name: self._names(name, True), self.mu, lam[self.planar, :], sd, V["cbp"], V["cbm"], V["cg"],
                      nodes, eps)

    # -- reading back --------------------------------------------------------------------------
    def columns(self, values, times):
        """Trajectory columns at the nodes: normal and friction forces, impact impulses (module docstring)."""
        H = np.diff(times)
        w = 0.5 * (np.concatenate([[0.0], H]) + np.concatenate([H, [0.0]]))
        gaps = self._gaps_q(values["q"], values["p"][:, 0])
        cols = {}
        for i, c in enumerate(self.contacts):
            lam = values["cn"][i]
            cols[f"{c.name}.normal_force"] = lam.copy()
            closed = gaps[i] <= CLOSED_GAP * max(1.0, float(np.abs(gaps[i]).max()))
            impulse = np.zeros_like(lam)
            for k in np.flatnonzero(closed[1:] & ~closed[:-1]) + 1:
                impulse[k] = w[k - 1] * lam[k - 1] + w[k] * lam[k]
            cols[f"{c.name}.impulse"] = impulse
        for j, i in enumerate(self.planar):
            cols[f"{self.contacts[i].name}.friction_force"] = values["cbp"][j] - values["cbm"][j]
        if self.spatial:
            cols.update(friction3d.split_columns(self.spatial_contacts, values["cf3"], "friction_force"))
        return cols

    def _gaps_q(self, Q, par):
        nc, nf, n1 = len(self.contacts), len(self.planar), Q.shape[1]
        out = self.node.map(n1)(Q, par, np.zeros((nc, n1)), np.zeros((nf, n1)), np.zeros((nf, n1)), np.zeros(Q.shape))[1]
        return np.asarray(out).reshape(nc, n1)

    def gaps(self, X, P):
        """``φ`` at every trajectory row from the model's states ``X`` (num_states, num_rows) (numeric)."""
        nc, nf, ng = len(self.contacts), len(self.frictional), X.shape[1]
        out = self.point.map(ng)(X, P, np.zeros((nc, ng)), np.zeros((nf, ng)), np.zeros((nf, ng)))[1]
        return np.asarray(out).reshape(nc, ng)


class ContactVITranscription(MidpointVITranscription):
    """``scheme="midpoint-vi"`` with ``contact="implicit"`` (module docstring).

    Options: ``relaxation`` (initial Scholtes ε, set by the homotopy), ``forcing`` (as midpoint-vi);
    ``impacts`` is accepted as on collocation and changes nothing here: the steps' impulses are the only
    contact variables either way.
    """

    def __init__(self, problem, intervals=None, mesh=None, contact="implicit", **options):
        check_contact_vi(problem, dict(options, contact=contact))
        super().__init__(problem, intervals, mesh, **{k: v for k, v in options.items() if k == "forcing"})
        self.relaxation = float(options.get("relaxation", 1e-6))

    def build(self, guess=None):
        rows = ContactVIRows(self.problem, self.vi, self.relaxation, self.mesh)
        traj = as_trajectory(guess)
        warm = Warm(traj.time, {n: traj[n] for n in traj.names}) if traj is not None else None
        return transcribe_midpoint_vi(self.problem, self.mesh, self.vi, traj, contact=rows, warm=warm)

    def trajectory(self, nlp, w, meta=None) -> Trajectory:
        values = nlp.layout.unpack(w)
        problem = self.problem
        t0 = problem.t0_value
        tf = float(values["tf"][0, 0]) if "tf" in values else problem.tf_bounds[0]
        times = t0 + nlp.mesh * (tf - t0)
        info = dict(problem=problem.name, mesh=[float(x) for x in nlp.mesh], contact="implicit")
        info.update(meta or {})
        # the same hook as the NLP's, on numbers: the generalised contact forces at the nodes
        forces = np.asarray(nlp.contact.generalized_forces(values, At(times, values["q"])))
        traj = self.vi.trajectory(times, values["q"], values["u"], values["lam"], values["p"][:, 0], info, forces=forces)
        return with_columns(traj, nlp.contact.columns(values, times), "multiplier")

    def result_metadata(self):
        return dict(contact="implicit")
