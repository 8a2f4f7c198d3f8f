"""Multi-phase problems: phases joined by linkage constraints, events (guards) and jump maps.

A :class:`MultiPhaseProblem` is a sequence of :class:`Phase` objects, each a
:class:`~colloc.Problem` with its own model, mesh, scheme and duration (fixed
or free), joined end-to-start by :meth:`MultiPhaseProblem.connect`:

* continuity of named states, ``x_b(0) = x_a(T_a)``;
* a jump map ``x_b(0) = Δ(x_a(T_a))`` given as ``{target state: expression}``;
* an :class:`~colloc.model.impact.Impact` (Newton's restitution law on a
  multibody) with coordinate relabelling through ``pre`` and ``post`` maps;
* periodicity (:meth:`~MultiPhaseProblem.periodic`): the end of the last phase
  joined to the start of the first, for gaits and limit cycles.

User-written linkage expressions in the phases' endpoint values
(:meth:`Phase.start`, :meth:`Phase.end`, :attr:`Phase.duration`) go through
:meth:`~MultiPhaseProblem.link`; Mayer terms across phases through
:meth:`~MultiPhaseProblem.minimize`.  A phase may end at an event
(:meth:`Phase.end_when`): ``g(x(T)) = 0`` with a direction and, optionally,
``g`` kept on one side inside the phase.

**Time.** Every phase runs on its own clock: its Problem's ``[t0, tf]`` (its
dynamics, path constraints and guesses see this local time) and its duration
is ``tf − t0``.  Phase ``i`` starts, in the time of the result, where phase
``i − 1`` ends; the first starts at its own ``t0``.  So a chain of free
durations needs no time linkage: the switching times are cumulative sums of
durations.  (A time-varying phase that must see the global clock should be
written with a state ``τ̇ = 1`` linked by continuity.)

Parameters with the same name in several phases are one parameter: linkage
rows keep their values equal.

Legend: ``a``, ``b`` the phases before and after a junction, ``T`` a phase's
end, ``g`` a guard, ``w`` decision vector, ``V`` a phase's variable blocks.
"""
from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from .driver import run
from ..errors import ModelError, ProblemError, did_you_mean
from ..model.impact import Impact
from ..discretization.mesh import make_mesh
from ..model.component import TIME
from ..results.phased_trajectory import MultiPhaseResult, PhasedTrajectory  # noqa: F401 - re-exported for colloc.pipeline.multiphase_problem users
from ..model.problem import Problem
from ..discretization.schemes import get_scheme
from ..transcription import make_options
from ..transcription.multiphase import MultiPhase

DIRECTIONS = ("decreasing", "increasing", "either")


@dataclass(eq=False)
class Guard:
    """An event that ends a phase: ``g(x(T)) = 0`` with a crossing direction."""

    name: str
    expr: ca.SX  # in the phase's states, parameters and time
    direction: str
    inside: bool


class Phase:
    """One phase of a multi-phase problem: a Problem with its own mesh and scheme.

    Parameters
    ----------
    problem : Problem
        The phase's model, time span, bounds, costs and guess.  Every phase
        needs its own Problem object (phases may share a Model).
    name : str, optional
        Used in row labels and in the ``phase`` column; default ``problem.name``.
    scheme, intervals, mesh : optional
        As in :func:`colloc.solve`; default to the values given to the solve.
    **options
        Transcription options of this phase (``mode``, ``constraint_method`` …).
    """

    def __init__(self, problem, name=None, scheme=None, intervals=None, mesh=None, **options):
        if not isinstance(problem, Problem):
            raise ProblemError(f"A Phase wraps a colloc.Problem; got {type(problem).__name__}.")
        self.problem = problem
        self.name = str(name if name is not None else problem.name)
        if not self.name or any(ch in self.name for ch in ":/>@"):
            raise ProblemError(f"Phase name {self.name!r} must be non-empty and free of ':', '/', '>' and '@'.")
        if scheme is not None:
            get_scheme(scheme)
        if intervals is not None or mesh is not None:
            make_mesh(intervals, mesh)
        make_options(**options)  # unknown options are refused here, not at solve time
        self.scheme, self.intervals, self.mesh, self.options = scheme, intervals, mesh, dict(options)
        self.guards: list[Guard] = []

    def start(self, expr) -> ca.SX:
        """``expr`` at the start of this phase (for links and multi-phase costs)."""
        return self.problem.at_t0(expr)

    def end(self, expr) -> ca.SX:
        """``expr`` at the end of this phase."""
        return self.problem.at_tf(expr)

    @property
    def duration(self) -> ca.SX:
        """The phase's duration ``tf − t0`` as a symbol (free or fixed)."""
        return self.problem.tf - self.problem.t0

    def end_when(self, guard, direction="decreasing", inside=False, name=None) -> Guard:
        """End the phase where ``guard(x) = 0`` is reached.

        Parameters
        ----------
        guard : casadi.SX, scalar
            ``g(t, x, p)`` in the phase's states, parameters and time.
        direction : {"decreasing", "increasing", "either"}
            ``"decreasing"`` imposes ``ġ(T) ≤ 0`` (g falls through zero),
            ``"increasing"`` ``ġ(T) ≥ 0``, with ``ġ = ∂g/∂x ẋ + ∂g/∂t`` from
            the dynamics at the last grid point.
        inside : bool
            Keep ``g`` on its pre-event side at every grid point strictly
            inside the phase (``g ≥ 0`` when decreasing, ``≤ 0`` when
            increasing), so the event is the first crossing.
        """
        expr = ca.SX(guard)
        name = name or f"guard{len(self.guards)}"
        if expr.numel() != 1:
            raise ProblemError(f"Guard `{name}` of phase `{self.name}` must be a scalar; got shape {expr.shape}.")
        if direction not in DIRECTIONS:
            raise ProblemError(f"Unknown guard direction `{direction}`.{did_you_mean(direction, DIRECTIONS)} Choose one of: {', '.join(DIRECTIONS)}.")
        if inside and direction == "either":
            raise ProblemError(f"Guard `{name}` of phase `{self.name}`: `inside=True` needs a direction (which side is inside?).")
        model = self.problem.model
        own = {v.symbol.name(): v.symbol for v in model.states + model.parameters}
        own[TIME.name()] = TIME
        for s in ca.symvar(expr):
            if s.name() not in own:
                raise ProblemError(f"Guard `{name}` of phase `{self.name}` uses `{s.name()}`; a guard may use the phase's states, parameters and time only.")
        expr = _substitute_by_name(expr, own)
        if any(g.name == name for g in self.guards):
            raise ProblemError(f"Phase `{self.name}` already has a guard named `{name}`.")
        g = Guard(name, expr, direction, bool(inside))
        self.guards.append(g)
        return g

    def __repr__(self):
        return f"Phase({self.name!r})"


@dataclass(eq=False)
class Connection:
    """End of phase ``a`` → start of phase ``b`` (``a`` may equal ``b``: periodicity)."""

    a: int
    b: int
    name: str
    kind: str  # row kind: "link" or "periodic"
    targets: dict  # b state name -> SX value (jump/continuity), in endpoint symbols of a (and link variables)
    impact: Impact | None = None
    pre: tuple = ()  # (q⁻, v⁻) SX in a's endpoint symbols
    variables: tuple = ()  # (v⁺, P) SX symbols
    continuous: bool = False  # every state of b continuous from a, no jump

    def implied_start_constraints(self, phases) -> set:
        """Names of b's kinematic constraints that a already imposes at the junction.

        With every state of b continuous from a, a constraint of b that a also
        declares — same name and kind, and the same position- and velocity-level
        expressions (compared numerically, symbols matched by name, at a few random points) —
        holds at b's start because it holds at a's end; repeating its rows would
        make the Jacobian rank-deficient (a robot's unit quaternion between a
        stance phase and a flight phase).
        """
        if not self.continuous:
            return set()
        ma, mb = phases[self.a].problem.model, phases[self.b].problem.model
        ka = {k.name: k for k in ma.constraints}
        return {k.name for k in mb.constraints
                if k.name in ka and ka[k.name].kind == k.kind and _same_state_levels(ka[k.name], k)}


@dataclass(eq=False)
class Link:
    name: str
    kind: str
    expr: ca.SX
    lower: np.ndarray
    upper: np.ndarray


class MultiPhaseProblem:
    """A sequence of phases joined by linkage constraints; one NLP, one result.

    Parameters
    ----------
    phases : list of Phase or Problem
        In time order.  A bare Problem becomes ``Phase(problem)``.
    name : str
    """

    def __init__(self, phases, name="multiphase"):
        phases = [p if isinstance(p, Phase) else Phase(p) for p in phases]
        if not phases:
            raise ProblemError("A multi-phase problem needs at least one phase.")
        names = [p.name for p in phases]
        for n in names:
            if names.count(n) > 1:
                raise ProblemError(f"Two phases are named `{n}`; give each Phase a distinct `name`.")
        for i, p in enumerate(phases):
            for q in phases[:i]:
                if q.problem is p.problem:
                    raise ProblemError(f"Phases `{q.name}` and `{p.name}` share one Problem object; build one Problem per phase (they may share the model).")
        self.phases, self.name = phases, str(name)
        self.connections: list[Connection] = []
        self.links: list[Link] = []
        self.costs: list[tuple] = []  # (name, SX)

    # -- lookups -------------------------------------------------------------------------------
    def index(self, key) -> int:
        """Index of a phase given as Phase, name or index."""
        if isinstance(key, Phase):
            for i, p in enumerate(self.phases):
                if p is key:
                    return i
            raise ProblemError(f"Phase `{key.name}` is not part of multi-phase problem `{self.name}`.")
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            if -len(self.phases) <= key < len(self.phases):
                return int(key) % len(self.phases)
            raise ProblemError(f"Phase index {key} is out of range; there are {len(self.phases)} phases.")
        names = [p.name for p in self.phases]
        if isinstance(key, str) and key in names:
            return names.index(key)
        raise ProblemError(f"Unknown phase `{key}`.{did_you_mean(str(key), names)}")

    def phase(self, key) -> Phase:
        return self.phases[self.index(key)]

    @property
    def components(self) -> list:
        """Every phase's model components, each once (e.g. for ``colloc.plot.animate``)."""
        out = []
        for p in self.phases:
            out += [c for c in p.problem.model.components if all(c is not o for o in out)]
        return out

    @property
    def bounds(self) -> dict:
        """Variable bounds of every phase (the first phase naming a variable wins), for plots."""
        out = {}
        for p in self.phases:
            for k, v in p.problem.bounds.items():
                out.setdefault(k, v)
        return out

    # -- linkage -------------------------------------------------------------------------------
    def connect(self, a, b, states=None, jump=None, impact=None, pre=None, post=None, name=None, kind="link") -> Connection:
        """Join the end of phase ``a`` to the start of phase ``b``.

        Parameters
        ----------
        a, b : Phase, name or index
        states : list, optional
            States (symbols or names present in both phases) made continuous,
            ``x_b(0) = x_a(T)``.  Default: every state of ``b`` not set by
            ``jump``/``post`` that ``a`` has under the same name.  ``[]``
            leaves the others free.
        jump : dict, optional
            ``{state of b: expression in a's variables}``: the jump map
            ``x_b(0) = Δ(x_a(T))``.
        impact : Impact, optional
            Newton's restitution law between the phases, with the post-impact
            speeds ``v⁺`` and impulse ``P`` as NLP variables.
        pre : dict, optional
            With ``impact``: ``{coordinate or speed of the impact body:
            expression in a's variables}``, the pre-impact configuration.
            Default: the states of ``a`` with the body's names.
        post : dict, optional
            With ``impact``: ``{state of b: expression in the body's
            coordinates and speeds}``, where a speed means its *post-impact*
            value ``v⁺`` (coordinate relabelling, e.g. the legs swap).
            Default: the states of ``b`` with the body's names.
        name : str, optional
            Row label prefix; default ``"<a>><b>"``.
        """
        if kind not in ("link", "periodic"):
            raise ProblemError(f"Connection kind must be `link` or `periodic`; got {kind!r}.")
        ia, ib = self.index(a), self.index(b)
        pa, pb = self.phases[ia], self.phases[ib]
        name = name or f"{pa.name}>{pb.name}"
        if any(c.name == name for c in self.connections):
            raise ProblemError(f"A connection named `{name}` already exists; give this one a `name`.")
        if impact is not None and jump is not None:
            raise ProblemError(f"Connection `{name}`: give either `jump` or `impact` (with `post` for relabelling), not both.")
        if impact is None and (pre is not None or post is not None):
            raise ProblemError(f"Connection `{name}`: `pre` and `post` describe an impact; pass `impact=...` too, or use `jump`.")
        conn = Connection(ia, ib, name, kind, {})
        if jump is not None:
            if not isinstance(jump, dict):
                raise ProblemError(f"`jump` of connection `{name}` takes a dict {{state of `{pb.name}`: expression}}; got {type(jump).__name__}.")
            for key, expr in jump.items():
                target = _state_of(pb, key, f"`jump` of connection `{name}`")
                conn.targets[target] = pa.end(_pointwise(pa, expr, f"`jump` of connection `{name}` (value for `{target}`)"))
        if impact is not None:
            self._impact(conn, pa, pb, impact, pre, post)
        self._continuity(conn, pa, pb, states)
        conn.continuous = jump is None and impact is None and set(conn.targets) == {v.name for v in pb.problem.model.states}
        if not conn.targets and conn.impact is None:
            raise ProblemError(f"Connection `{name}` links nothing: phases `{pa.name}` and `{pb.name}` share no state names; give `states`, `jump` or `impact`.")
        self.connections.append(conn)
        return conn

    def periodic(self, states=None, jump=None, impact=None, pre=None, post=None, name="periodic") -> Connection:
        """Periodicity ``x_first(0) = Δ(x_last(T))`` (``Δ`` = identity by default); rows labelled ``periodic:``.

        Takes the arguments of :meth:`connect`.
        """
        return self.connect(len(self.phases) - 1, 0, states, jump, impact, pre, post, name, kind="periodic")

    def link(self, expr, lower=0.0, upper=0.0, name=None) -> Link:
        """A linkage constraint ``lower ≤ expr ≤ upper`` in endpoint values (``phase.start``, ``phase.end``, ``phase.duration``)."""
        expr = ca.SX(expr)
        name = name or f"link{len(self.links)}"
        if expr.size2() != 1 or expr.is_empty():
            raise ProblemError(f"Link `{name}` must be a scalar or a column; got shape {expr.shape}.")
        self._check_endpoint(expr, f"link `{name}`")
        lo, hi = _row_bounds(expr, lower, upper, f"link `{name}`")
        lk = Link(name, "link", expr, lo, hi)
        self.links.append(lk)
        return lk

    def minimize(self, final, name=None) -> None:
        """Add a Mayer term in endpoint values of any phases (e.g. the sum of durations).

        Integral terms belong to the phases' own Problems; all costs are summed.
        """
        expr = ca.SX(final)
        taken = {c[0] for c in self.costs}
        if name is None:
            name = next(f"cost{k}" for k in range(len(self.costs), len(self.costs) + len(taken) + 1) if f"cost{k}" not in taken)
        name = str(name)
        if name in taken or not name or "/" in name:
            why = "has a cost term of that name already" if name in taken else "needs a name without '/' (phase terms are `phase/name`)"
            raise ProblemError(f"Multi-phase cost `{name}`: `{self.name}` {why}; each term's value is reported by its name.")
        if expr.numel() != 1:
            raise ProblemError(f"Multi-phase cost `{name}` must be a scalar; got shape {expr.shape}.")
        self._check_endpoint(expr, f"multi-phase cost `{name}`")
        self.costs.append((name, expr))

    # -- checks --------------------------------------------------------------------------------
    def validate(self) -> "MultiPhaseProblem":
        """Check each phase and that consecutive phases are connected; return self."""
        for p in self.phases:
            p.problem.validate()
        joined = {(c.a, c.b) for c in self.connections}
        for i in range(len(self.phases) - 1):
            if (i, i + 1) not in joined:
                a, b = self.phases[i].name, self.phases[i + 1].name
                raise ProblemError(f"Phases `{a}` and `{b}` are not connected; call `connect('{a}', '{b}')` (continuity of states), with `jump=` or `impact=` for a jump.")
        return self

    def transcription(self, scheme="hermite-simpson", intervals=None, mesh=None, **options) -> MultiPhase:
        """Validate and return the transcription the solve pipeline uses (settings are defaults for the phases)."""
        return MultiPhase(self.validate(), scheme, intervals, mesh, **options)

    def summary(self) -> str:
        lines = [f"multi-phase problem {self.name}: {len(self.phases)} phase(s)"]
        for p in self.phases:
            pr = p.problem
            tf = pr.tf_bounds if pr.free_final_time else pr.tf_bounds[0]
            lines.append(f"  phase {p.name}: t in [{pr.t0_value}, {tf}], {len(pr.model.states)} states, {len(pr.model.controls)} controls"
                         + (f", guards {', '.join(g.name for g in p.guards)}" if p.guards else ""))
        for c in self.connections:
            what = f"impact `{c.impact.name}`" if c.impact is not None else "jump/continuity"
            lines.append(f"  {c.kind} {c.name}: {what}, {len(c.targets)} state(s) set")
        for lk in self.links:
            lines.append(f"  link {lk.name}")
        return "\n".join(lines)

    # -- helpers -------------------------------------------------------------------------------
    def _impact(self, conn, pa, pb, impact, pre, post):
        if not isinstance(impact, Impact):
            raise ProblemError(f"`impact` of connection `{conn.name}` must be a colloc Impact; got {type(impact).__name__}.")
        body = impact.body
        bq, bv = ca.vertsplit(body.q), ca.vertsplit(body.v)
        given = {}
        for key, expr in (pre or {}).items():
            n = _body_state(body, key, f"`pre` of connection `{conn.name}`")
            given[n] = pa.end(_pointwise(pa, expr, f"`pre` of connection `{conn.name}` (value for `{n}`)"))
        a_states = {v.name: v.symbol for v in pa.problem.model.states}
        missing = []
        for s in bq + bv:
            if s.name() not in given:
                if s.name() in a_states:
                    given[s.name()] = pa.end(a_states[s.name()])
                else:
                    missing.append(s.name())
        if missing:
            raise ProblemError(f"Connection `{conn.name}`: phase `{pa.name}` has no state `{missing[0]}` of impact body `{body.name}`; give its pre-impact value in `pre={{...}}`.")
        qm = ca.vertcat(*[given[s.name()] for s in bq])
        vm = ca.vertcat(*[given[s.name()] for s in bv])
        vplus = ca.SX.sym(f"{conn.name}/{impact.name}.v+", len(bv))
        P = ca.SX.sym(f"{conn.name}/{impact.name}.P", impact.num_rows)
        conn.impact, conn.pre, conn.variables = impact, (qm, vm), (vplus, P)
        body_names = {s.name() for s in bq + bv}
        if post is None:
            post = {v.name: v.symbol for v in pb.problem.model.states if v.name in body_names}
            if not post:
                raise ProblemError(f"Connection `{conn.name}`: phase `{pb.name}` has none of the states of impact body `{body.name}`; give `post={{state: expression}}`.")
        allowed = body_names | {v.name for v in body.variables if v.kind == "parameter"}
        for key, expr in post.items():
            target = _state_of(pb, key, f"`post` of connection `{conn.name}`")
            expr = ca.SX(expr)
            for s in ca.symvar(expr):
                if s.name() not in allowed:
                    raise ProblemError(f"`post` of connection `{conn.name}` (value for `{target}`) uses `{s.name()}`; write it in the coordinates and speeds of impact body `{body.name}`.")
            values = dict(zip([x.name() for x in bq + bv], ca.vertsplit(qm) + ca.vertsplit(vplus)))
            conn.targets[target] = _substitute_by_name(expr, values)

    def _continuity(self, conn, pa, pb, states):
        a_states = {v.name: v.symbol for v in pa.problem.model.states}
        if states is None:
            names = [v.name for v in pb.problem.model.states if v.name in a_states and v.name not in conn.targets]
        else:
            names = []
            for key in states:
                n = _state_of(pb, key, f"`states` of connection `{conn.name}`")
                if n not in a_states:
                    raise ProblemError(f"`states` of connection `{conn.name}`: phase `{pa.name}` has no state `{n}`.{did_you_mean(n, a_states)}")
                if n in conn.targets:
                    raise ProblemError(f"`states` of connection `{conn.name}`: `{n}` is already set by the jump map.")
                names.append(n)
        for n in names:
            conn.targets[n] = pa.end(a_states[n])

    def _check_endpoint(self, expr, where):
        known = set()
        for p in self.phases:
            pr = p.problem
            known |= {s.element_hash() for d in ("t0", "tf") for s in pr.endpoint_symbols(d).values()}
            known |= {pr.t0.element_hash(), pr.tf.element_hash()}
        params = {v.name for p in self.phases for v in p.problem.model.parameters}
        for s in ca.symvar(expr):
            if s.element_hash() not in known and s.name() not in params:
                raise ProblemError(f"`{s.name()}` used in {where} is not an endpoint value of any phase of `{self.name}`; wrap it in `phase.start(...)` or `phase.end(...)`.")

    def __repr__(self):
        return f"MultiPhaseProblem({self.name!r}, phases={[p.name for p in self.phases]})"


# -- solving -----------------------------------------------------------------------------------
def solve_phases(problem, options=None, **keywords):
    """Solve a :class:`MultiPhaseProblem` as one NLP with IPOPT (``colloc.solve`` does the same).

    ``options`` (:class:`colloc.pipeline.options.SolveOptions`) and keywords as :func:`colloc.solve`; ``scheme``, ``intervals``, ``mesh``
    and the transcription ``options`` are defaults for phases that do not set
    their own.  ``guess`` is a :class:`MultiPhaseResult`, a
    :class:`PhasedTrajectory`, a file written from one (it has a ``phase``
    column), or a list with one Trajectory (or None) per phase.

    Returns
    -------
    MultiPhaseResult
        ``trajectory`` concatenates the phases (``phase`` column); ``phases``
        holds one Trajectory per phase in global time.
    """
    if not isinstance(problem, MultiPhaseProblem):
        raise ProblemError(f"solve_phases() takes a colloc MultiPhaseProblem; got {type(problem).__name__}.")
    return run(problem, options, **keywords)


def _same_state_levels(ka, kb, trials=3) -> bool:
    """True if constraints ``ka`` and ``kb`` have equal φ and φ̇ (or ψ) as functions of their symbols by name.

    The symbols (states and parameters, one per name across phases) are matched by
    name and the two expressions compared at a few random points.  A constraint
    that depends on time never counts: each phase runs on its own clock, so the
    end of a and the start of b see different times.
    """
    levels = lambda k: ca.vertcat(*[e for e in (k.position, k.velocity) if e is not None])
    ea, eb = levels(ka), levels(kb)
    sa = sorted(ca.symvar(ea), key=lambda s: s.name())
    sb = sorted(ca.symvar(eb), key=lambda s: s.name())
    if ea.shape != eb.shape or [s.name() for s in sa] != [s.name() for s in sb] or TIME.name() in [s.name() for s in sa]:
        return False
    fa, fb = ca.Function("a", [ca.vertcat(*sa)], [ea]), ca.Function("b", [ca.vertcat(*sb)], [eb])
    rng = np.random.default_rng(0)
    for _ in range(trials):
        x = rng.uniform(-1.0, 1.0, len(sa))
        if not np.allclose(np.array(fa(x)), np.array(fb(x)), rtol=1e-12, atol=1e-12):
            return False
    return True


def _state_of(phase, key, where) -> str:
    try:
        var = phase.problem.model.lookup(key, f"{where} (phase `{phase.name}`)")
    except ModelError as e:
        raise ProblemError(str(e)) from None
    if var.kind != "state":
        raise ProblemError(f"{where}: `{var.name}` is a {var.kind} of phase `{phase.name}`, not a state.")
    return var.name


def _body_state(body, key, where) -> str:
    name = key if isinstance(key, str) else (key.name() if isinstance(key, ca.SX) and key.is_symbolic() and key.numel() == 1 else None)
    names = [s.name() for s in ca.vertsplit(body.q) + ca.vertsplit(body.v)]
    if name not in names:
        raise ProblemError(f"{where}: `{name or key}` is not a coordinate or speed of impact body `{body.name}`.{did_you_mean(str(name), names)}")
    return name


def _pointwise(phase, expr, where) -> ca.SX:
    """``expr`` in the phase's own variable symbols (matched by name), checked."""
    expr = ca.SX(expr)
    own = {v.symbol.name(): v.symbol for v in phase.problem.model.variables}
    own[TIME.name()] = TIME
    for s in ca.symvar(expr):
        if s.name() not in own:
            raise ProblemError(f"{where} uses `{s.name()}`, which is not a variable of phase `{phase.name}`.")
    return _substitute_by_name(expr, own)


def _substitute_by_name(expr, values: dict) -> ca.SX:
    """Replace every symbol of ``expr`` whose name is a key of ``values`` by that value."""
    syms = [s for s in ca.symvar(expr) if s.name() in values]
    if not syms:
        return expr
    return ca.substitute([expr], [ca.vertcat(*syms)], [ca.vertcat(*[values[s.name()] for s in syms])])[0]


def _row_bounds(expr, lower, upper, what):
    n = expr.numel()
    try:
        lo = np.broadcast_to(np.asarray(lower, dtype=float), (n,)).copy()
        hi = np.broadcast_to(np.asarray(upper, dtype=float), (n,)).copy()
    except ValueError:
        raise ProblemError(f"Bounds of {what} must be scalars or have {n} entries.") from None
    if np.isnan(lo).any() or np.isnan(hi).any() or (lo > hi).any():
        raise ProblemError(f"Bounds of {what} must not be NaN and lower ≤ upper.")
    return lo, hi


__all__ = ["Phase", "Guard", "MultiPhaseProblem", "Connection", "Link", "Impact", "DIRECTIONS", "solve_phases"]
