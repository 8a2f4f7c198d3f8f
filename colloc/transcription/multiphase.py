"""Transcription of a multi-phase problem: one NLP from the phases' NLPs plus linkage rows.

Each phase is transcribed on its own (:func:`colloc.transcription.transcribe`);
the decision vector is ``w = [w_1; …; w_n; w_link]`` (each ``w_i`` is a pure
MX symbol, so the stack is a valid ``nlpsol`` input) where ``w_link`` holds the
post-impact speeds and impulses of every impact.  The objective is the sum of
the phases' objectives and the multi-phase Mayer terms; the constraints are
every phase's rows (names prefixed ``<phase>/``) followed by

* ``link:`` / ``periodic:`` rows of the connections (continuity, jump maps,
  relabelled post-impact states) and of user links, and equal values of
  parameters shared by name;
* ``impact:`` rows: momentum balance, restitution and friction cone;
* ``guard:`` ``g(x(T)) = 0``, ``guard-direction:`` the sign of ``ġ(T)``, and
  ``guard-inside:`` the sign of ``g`` at the grid points strictly inside.

Every endpoint expression (links, jump maps, impacts, guards at T, Mayer
terms) is one SX ``Function`` of the stacked endpoint values of all phases and
the link variables, called once on the MX values.

Legend: ``V`` a phase's variable blocks, ``X`` states, ``Z`` derivative
variables, ``U`` controls, ``LAM`` multipliers, ``P`` parameters, ``tau``
normalised grid times.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import casadi as ca
import numpy as np

from ..errors import OptionError, ProblemError
from ..model.impact import solve_impact
from ..discretization.mesh import make_mesh
from ..model.component import TIME
from .nlp import Layout, RowBlock, Rows
from ..results.phased_trajectory import MultiPhaseResult, PhasedTrajectory
from ..discretization.schemes import get_scheme
from ..results.trajectory import SolveResult, Trajectory
from . import make_options, transcribe
from .base import Transcription
from .collocation import reconstruct

@dataclass
class PhasedNLP:
    """The multi-phase NLP: stacked decision vector, summed objective, labelled rows.

    ``layout`` holds every phase's blocks as ``<phase>/<block>`` (in the order
    of ``w``) followed by the link blocks ``<connection>/<impact>.v+`` and
    ``<connection>/<impact>.P``.
    """

    w: ca.MX
    f: ca.MX
    rows: Rows
    layout: Layout
    nlps: list  # NLP of each phase
    schemes: list
    phase_names: list
    link_blocks: list
    terms: dict = field(default_factory=dict)

    @property
    def g(self):
        return self.rows.g

    @property
    def mapped(self) -> list:
        """The mapped calls of every phase (:mod:`colloc.transcription.derivatives` differentiates them point by point)."""
        return [m for nlp in self.nlps for m in (nlp.mapped or ())]

    def split(self, w) -> tuple:
        """Per-phase block values (as ``Layout.unpack`` of each phase) and the link blocks of a numeric ``w``."""
        values = self.layout.unpack(w)
        phases = [{b: values[f"{name}/{b}"] for b in nlp.layout.blocks} for name, nlp in zip(self.phase_names, self.nlps)]
        return phases, {k: values[k] for k in self.link_blocks}


class _Endpoints:
    """The endpoint values of every phase and the link variables as one input vector.

    Slots per phase: ``t0``, ``tf``, the pointwise variables at ``t0`` and at
    ``tf`` (model order), and the parameters — a parameter name only once,
    at its first phase (later phases' symbols of that name are aliases).
    """

    def __init__(self, mp, link_syms):
        self.mp = mp
        syms, self.params = [], {}  # params: name -> (phase, row, symbol)
        for i, ph in enumerate(mp.phases):
            pr = ph.problem
            pw = [v for v in pr.model.variables if v.kind != "parameter"]
            syms += [pr.t0, pr.tf]
            syms += [pr.endpoint_symbols("t0")[v.name] for v in pw]
            syms += [pr.endpoint_symbols("tf")[v.name] for v in pw]
            for j, v in enumerate(pr.model.parameters):
                if v.name not in self.params:
                    self.params[v.name] = (i, j, v.symbol)
                    syms.append(v.symbol)
        self.syms = syms
        self.link_syms = link_syms
        self.known = {s.element_hash() for s in syms + link_syms}

    def _canonical(self, exprs, where):
        exprs = [ca.SX(e) for e in exprs]
        frm, to = [], []
        for e in exprs:
            for s in ca.symvar(e):
                if s.element_hash() in self.known or any(ca.is_equal(s, f) for f in frm):
                    continue
                if s.name() in self.params:
                    frm.append(s)
                    to.append(self.params[s.name()][2])
                else:
                    raise ProblemError(f"`{s.name()}` used in {where} is not an endpoint value of any phase.")
        if frm:
            exprs = ca.substitute(exprs, [ca.vertcat(*frm)], [ca.vertcat(*to)])
        return exprs

    def function(self, name, exprs, where) -> ca.Function:
        exprs = self._canonical(exprs, where)
        ins = [ca.vertcat(*self.syms), ca.vertcat(*self.link_syms) if self.link_syms else ca.SX(0, 1)]
        return ca.Function(name, ins, exprs)

    def values(self, Vs):
        """Stacked endpoint values from each phase's blocks (MX views or numeric arrays)."""
        out = []
        for i, (ph, V) in enumerate(zip(self.mp.phases, Vs)):
            pr = ph.problem
            out.append(pr.t0_value)
            out.append(V["tf"][0, 0] if "tf" in V else pr.tf_bounds[0])
            blocks = {"state": "x", "control": "u", "multiplier": "lam"}
            rows = {k: {v.name: r for r, v in enumerate(pr.model.of_kind(k))} for k in blocks}
            pw = [v for v in pr.model.variables if v.kind != "parameter"]
            for col in (0, -1):
                out += [V[blocks[v.kind]][rows[v.kind][v.name], col] for v in pw]
            for j, v in enumerate(pr.model.parameters):
                if self.params[v.name][0] == i:
                    out.append(V["p"][j, 0])
        return ca.vertcat(*out) if out else ca.DM(0, 1)


def _phase_settings(phase, defaults, index=None):
    """Scheme, mesh and options of one phase: per-phase meshes of the solve (refinement), else the phase's
    own settings, else the solve's defaults."""
    scheme = get_scheme(phase.scheme or defaults["scheme"])
    if defaults.get("meshes") is not None and index is not None:
        mesh = make_mesh(None, defaults["meshes"][index])
    elif phase.mesh is not None:
        mesh = make_mesh(None, phase.mesh)
    elif phase.intervals is not None:
        mesh = make_mesh(phase.intervals, None)
    else:
        mesh = make_mesh(defaults.get("intervals"), defaults.get("mesh"))
    opts = make_options(**{**defaults.get("options", {}), **phase.options})
    return scheme, mesh, opts


def transcribe_phases(mp, defaults, guesses) -> PhasedNLP:
    """Build the NLP of multi-phase problem ``mp``.

    ``defaults``: ``scheme``, ``intervals``, ``mesh``, ``options`` (dict of
    transcription options) for phases that do not set their own;
    ``guesses``: one warm-start Trajectory (local time) or None per phase.
    """
    nlps, schemes, Vs = [], [], []
    layout = Layout()
    for i, (ph, guess) in enumerate(zip(mp.phases, guesses)):
        scheme, mesh, opts = _phase_settings(ph, defaults, i)
        nlp = transcribe(ph.problem, mesh, scheme, opts, guess)
        nlps.append(nlp)
        schemes.append(scheme)
        Vs.append(nlp.layout.symbols(nlp.w))
        for b in nlp.layout.blocks.values():
            layout.add(f"{ph.name}/{b.name}", b.row_names, b.num_cols, b.lower, b.upper, b.guess, b.col_index)

    start, link_blocks, link_syms = layout.size, [], []
    for c in mp.connections:
        if c.impact is not None:
            vplus, P = c.variables
            body = c.impact.body
            name = f"{c.name}/{c.impact.name}"
            layout.add(f"{name}.v+", [f"{s.name()}+" for s in body.speeds], 1)
            lo, hi = c.impact.impulse_bounds()
            layout.add(f"{name}.P", c.impact.impulse_names, 1, lo.reshape(-1, 1), hi.reshape(-1, 1))
            link_blocks += [f"{name}.v+", f"{name}.P"]
            link_syms += ca.vertsplit(vplus) + ca.vertsplit(P)
    w_link = ca.MX.sym("w_link", layout.size - start)
    ends = _Endpoints(mp, link_syms)

    rows = Rows()
    implied = {}
    for c in mp.connections:
        implied.setdefault(c.b, set()).update(c.implied_start_constraints(mp.phases))
    for i, (ph, nlp) in enumerate(zip(mp.phases, nlps)):
        _copy_rows(rows, nlp.rows, ph.name, drop_start_constraints=implied.get(i, set()))
    blocks = _endpoint_rows(mp)
    E = ends.values(Vs)
    if blocks:
        F = ends.function("links", [ca.vertcat(*[b[2] for b in blocks])], "the links")
        G = F(E, w_link)
        k = 0
        for kind, names, expr, lo, hi in blocks:
            n = len(names)
            rows.add(kind, names, G[k:k + n], [0], lo, hi)
            k += n
    _parameter_rows(rows, mp, ends, Vs)
    for ph, nlp, V in zip(mp.phases, nlps, Vs):
        _guard_rows(rows, ph, nlp, V)

    terms = {}
    for ph, nlp in zip(mp.phases, nlps):
        terms.update({f"{ph.name}/{k}": v for k, v in nlp.terms.items()})
    if mp.costs:
        F = ends.function("costs", [c[1] for c in mp.costs], "the multi-phase costs")
        vals = F(E, w_link)
        vals = vals if isinstance(vals, (list, tuple)) else [vals]
        terms.update({c[0]: v for c, v in zip(mp.costs, vals)})
    f = sum(terms.values()) if terms else ca.MX(0)
    w = ca.vertcat(*[n.w for n in nlps], w_link)
    out = PhasedNLP(w, f, rows, layout, nlps, schemes, [p.name for p in mp.phases], link_blocks, terms)
    _guess_impacts(out, mp, ends)
    return out


def _copy_rows(rows, phase_rows, prefix, drop_start_constraints=()):
    """Append a phase's rows with names ``<prefix>/<name>`` (kind kept).

    ``drop_start_constraints`` names kinematic constraints whose position- and
    velocity-level rows at the phase's first grid point are left out: continuity
    from a phase with the same constraints already implies them, and the
    repeated rows would make the Jacobian rank-deficient.
    """
    for b, e in zip(phase_rows.blocks, phase_rows.exprs):
        if drop_start_constraints and not b.kind and list(b.points) == [0]:
            keep = [i for i, n in enumerate(b.names) if not (_is_state_level(n) and _constraint_name(n) in drop_start_constraints)]
            if not keep:
                continue
            if len(keep) < len(b.names):
                b = RowBlock(b.kind, [b.names[i] for i in keep], b.points, b.offset, b.lower[keep], b.upper[keep])
                e = e[keep]
        if b.kind:
            names = [f"{prefix}/{n}" for n in b.names]
        else:  # names carry their kind: "holonomic:pend.rod"
            names = [f"{n.split(':', 1)[0]}:{prefix}/{n.split(':', 1)[1]}" if ":" in n else f"{prefix}/{n}" for n in b.names]
        rows.blocks.append(RowBlock(b.kind, names, b.points, rows.size, b.lower, b.upper))
        rows.exprs.append(e)
        rows.size += b.size


def _constraint_name(label):
    """The constraint a kinematic row belongs to: ``holonomic:a.b.dot[2]`` → ``a.b``."""
    name = label.partition(":")[2].split("[")[0]
    for suffix in (".ddot", ".dot"):
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return name


def _is_state_level(label):
    """A position- or velocity-level kinematic row (``holonomic:a.b``, ``holonomic:a.b.dot``, ``nonholonomic:a.b``)."""
    kind, _, name = label.partition(":")
    return (kind == "holonomic" and not name.split("[")[0].endswith(".ddot")) or (kind == "nonholonomic" and not name.split("[")[0].endswith(".dot"))


def _endpoint_rows(mp):
    """``(kind, names, SX column, lower, upper)`` of every connection, link and guard-at-T."""
    out = []
    for c in mp.connections:
        if c.targets:
            pb = mp.phases[c.b]
            names = list(c.targets)
            expr = ca.vertcat(*[pb.start(pb.problem.model.lookup(n).symbol) - c.targets[n] for n in names])
            out.append((c.kind, [f"{c.name}/{n}" for n in names], expr, 0.0, 0.0))
        if c.impact is not None:
            imp = c.impact
            qm, vm = c.pre
            vplus, P = c.variables
            momentum, restitution, cone = imp.equations(qm, vm, vplus, P)
            out.append(("impact", [f"{c.name}/{imp.name}.momentum[{s.name()}]" for s in imp.body.speeds], momentum, 0.0, 0.0))
            out.append(("impact", [f"{c.name}/{imp.name}.restitution[{i}]" for i in range(imp.num_rows)], restitution, 0.0, 0.0))
            if cone.numel():
                out.append(("impact", [f"{c.name}/{imp.name}.friction[{i}]" for i in range(cone.numel())], cone, -np.inf, 0.0))
    for lk in mp.links:
        n = lk.expr.numel()
        out.append((lk.kind, [lk.name] if n == 1 else [f"{lk.name}[{i}]" for i in range(n)], lk.expr, lk.lower, lk.upper))
    for ph in mp.phases:
        for g in ph.guards:
            out.append(("guard", [f"{ph.name}/{g.name}"], ph.end(g.expr), 0.0, 0.0))
    return out


def _parameter_rows(rows, mp, ends, Vs):
    """A parameter named in several phases keeps one value: ``p_i − p_first = 0``."""
    for i, ph in enumerate(mp.phases):
        for j, v in enumerate(ph.problem.model.parameters):
            first, row, _ = ends.params[v.name]
            if first != i:
                rows.add("link", [f"{ph.name}/{v.name}"], Vs[i]["p"][j, 0] - Vs[first]["p"][row, 0], [0])


def _guard_rows(rows, phase, nlp, V):
    """Direction of the crossing at T and the sign of g strictly inside the phase."""
    if not phase.guards:
        return
    pr = phase.problem
    model = pr.model
    t, x, p = ca.SX.sym("t"), model.vector("state"), model.vector("parameter")
    xdot = ca.SX.sym("xdot", x.numel())
    tau = nlp.grid.tau
    tf = V["tf"] if "tf" in V else pr.tf_bounds[0]
    t0 = pr.t0_value
    T = t0 + (tf - t0) * ca.DM(tau).T
    X, Z, U, LAM, P = V["x"], V["z"], V["u"], V["lam"], V["p"]
    xdot_end = nlp.point(T[:, -1], X[:, -1], Z[:, -1], U[:, -1], LAM[:, -1], P)[0]
    for g in phase.guards:
        expr = ca.substitute(g.expr, TIME, t)
        if g.direction != "either":
            rate = ca.mtimes(ca.jacobian(expr, x), xdot) + ca.jacobian(expr, t)
            fr = ca.Function("guard_rate", [t, x, xdot, p], [rate])
            lo, hi = (-np.inf, 0.0) if g.direction == "decreasing" else (0.0, np.inf)
            rows.add("guard-direction", [f"{phase.name}/{g.name}"], fr(T[:, -1], X[:, -1], xdot_end, P), [tau.size - 1], lo, hi)
        if g.inside and tau.size > 2:
            fg = ca.Function("guard", [t, x, p], [expr]).map(tau.size - 2)
            inner = list(range(1, tau.size - 1))
            lo, hi = (0.0, np.inf) if g.direction == "decreasing" else (-np.inf, 0.0)
            rows.add("guard-inside", [f"{phase.name}/{g.name}"], fg(T[:, inner], X[:, inner], P), inner, lo, hi)


def _guess_impacts(nlp, mp, ends):
    """Post-impact speeds and impulses consistent with the guessed pre-impact states."""
    impacts = [c for c in mp.connections if c.impact is not None]
    if not impacts:
        return
    Vs, _ = nlp.split(nlp.layout.vector("guess"))
    E = ends.values(Vs)
    zeros = np.zeros(len(ends.link_syms))
    for c in impacts:
        imp = c.impact
        qm, vm = c.pre
        M, J = (ca.substitute(m, imp.body.q, qm) for m in (imp.mass_matrix, imp.jacobian))
        f = ends.function("impact_guess", [M, J, vm], f"impact `{c.name}`")
        Mv, Jv, vv = (np.array(a, dtype=float) for a in f(E, zeros))
        vplus, P = solve_impact(Mv, Jv, vv.ravel(), imp.restitution)
        bv = nlp.layout[f"{c.name}/{imp.name}.v+"]
        bv.guess[:, 0] = vplus
        bp = nlp.layout[f"{c.name}/{imp.name}.P"]
        bp.guess[:, 0] = np.clip(P, bp.lower[:, 0], bp.upper[:, 0])


class MultiPhase(Transcription):
    """A multi-phase problem: each phase by collocation with its own scheme and mesh, plus link rows.

    ``scheme``, ``intervals``, ``mesh`` and ``options`` are the defaults for
    phases that set none; all are checked here, before anything is built.
    """

    def __init__(self, mp, scheme="hermite-simpson", intervals=None, mesh=None, **options):
        get_scheme(scheme)
        meshes = None
        if _per_phase(mesh):
            if intervals is not None:
                raise OptionError(f"Give either `intervals` ({intervals!r}) or per-phase meshes in `mesh`, not both.")
            if len(mesh) != len(mp.phases):
                raise OptionError(f"`mesh` gives {len(mesh)} per-phase meshes but `{mp.name}` has {len(mp.phases)} phases.")
            meshes, mesh = [make_mesh(None, m) for m in mesh], None
        make_mesh(intervals, mesh)
        make_options(**options)
        self.problem = mp
        self.defaults = dict(scheme=scheme, intervals=intervals, mesh=mesh, meshes=meshes, options=options)

    def phase_settings(self):
        """``(scheme, mesh, options)`` of every phase, as the build uses them."""
        return [_phase_settings(ph, self.defaults, i) for i, ph in enumerate(self.problem.phases)]

    def warm_start(self, guess):
        return _phase_guesses(self.problem, guess)

    def build(self, guess=None) -> PhasedNLP:
        return transcribe_phases(self.problem, self.defaults, guess or [None] * len(self.problem.phases))

    def trajectory(self, nlp, w, meta=None) -> PhasedTrajectory:
        return _trajectory(self.problem, nlp, w, meta or {})

    def slacks(self, nlp, w) -> dict:
        values, _ = nlp.split(w)
        out = {}
        for ph, sub, vals in zip(self.problem.phases, nlp.nlps, values):
            out.update({f"{ph.name}/{k}": v for k, v in sub.method.slacks(vals).items()})
        return out

    def result(self, nlp, w, trajectory, **fields) -> MultiPhaseResult:
        from .collocation import between_mesh_points

        between = {}
        for ph, sub, traj in zip(self.problem.phases, nlp.nlps, trajectory.phases):
            for label, v in between_mesh_points(ph.problem, traj, sub.grid).items():
                kind, _, name = label.partition(":")
                between[f"{kind}:{ph.name}/{name}"] = v  # labelled as the phase's rows are
        fields["between_mesh_points"] = between
        _, links = nlp.split(w)
        return MultiPhaseResult(trajectory=trajectory, **fields, phases=list(trajectory.phases),
                                phase_names=[p.name for p in self.problem.phases],
                                links={k: v[:, 0].copy() for k, v in links.items()})


def _per_phase(mesh) -> bool:
    """Whether ``mesh`` is a list of meshes (one per phase) rather than one mesh."""
    return isinstance(mesh, (list, tuple)) and len(mesh) > 0 and all(np.ndim(m) == 1 for m in mesh)


def _phase_guesses(mp, guess):
    """One warm-start Trajectory (in the phase's local time) or None per phase."""
    n = len(mp.phases)
    if guess is None:
        return [None] * n
    if isinstance(guess, SolveResult):
        guess = guess.trajectory
    if isinstance(guess, (str, os.PathLike)):
        guess = Trajectory.read(guess)
    if isinstance(guess, Trajectory):
        guess = PhasedTrajectory.split(guess).phases
    if not isinstance(guess, (list, tuple)) or len(guess) != n:
        raise OptionError(f"`guess` of a multi-phase solve must be a multi-phase result or trajectory, or a list of {n} trajectories (or None), one per phase.")
    out = []
    for ph, g in zip(mp.phases, guess):
        if isinstance(g, SolveResult):
            g = g.trajectory
        if isinstance(g, (str, os.PathLike)):
            g = Trajectory.read(g)
        if g is not None and not isinstance(g, Trajectory):
            raise OptionError(f"The guess of phase `{ph.name}` must be a Trajectory, a SolveResult, a path or None; got {type(g).__name__}.")
        if g is not None:  # to the phase's own clock
            shift = ph.problem.t0_value - g.time[0]
            cols = {k: g[k] for k in g.names}
            own = {v.name for v in ph.problem.model.parameters}  # a result file holds every phase's parameters
            g = Trajectory(g.time + shift, cols, g.kinds, {k: v for k, v in g.parameters.items() if k in own}, g.metadata)
        out.append(g)
    return out


def _trajectory(mp, nlp, w, meta):
    """The concatenated trajectory of a numeric ``w`` (phases moved to global time)."""
    values, _ = nlp.split(w)
    trajs, start = [], mp.phases[0].problem.t0_value
    for ph, sub, scheme, vals in zip(mp.phases, nlp.nlps, nlp.schemes, values):
        tr = reconstruct(ph.problem, sub, vals, meta=dict(meta, phase=ph.name))
        shift = start - tr.time[0]
        tr = Trajectory(tr.time + shift, {k: tr[k] for k in tr.names}, tr.kinds, tr.parameters, tr.metadata)
        trajs.append(tr)
        start = float(tr.time[-1])
    return PhasedTrajectory(trajs, [p.name for p in mp.phases], dict(meta, problem=mp.name, intervals=int(sum(s.grid.num_intervals for s in nlp.nlps))))
