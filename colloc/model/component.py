"""Components and models: variables, implicit residuals and kinematic constraints.

A :class:`Component` declares states, controls, parameters and multipliers as
CasADi ``SX`` symbols and gives one residual row per state it owns, either in
implicit form ``f(t, x, ẋ, u, p) = 0`` (:meth:`Component.residual`) or in
explicit form ``ẋ = f`` (:meth:`Component.derivative`).  A :class:`Model` is the
ordered union of components; it checks the whole system and builds the
whole-model dynamics as one CasADi ``Function`` whose rows are labelled by the
state they belong to.

Legend: ``t`` time, ``x`` states, ``z`` implicit derivative variables (one per
state whose derivative is an NLP variable), ``u`` controls, ``lam`` multipliers,
``p`` parameters.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import casadi as ca

from ..errors import ModelError, did_you_mean
from .rigidbody import solve_affine

#: The one time symbol every component shares.
TIME = ca.SX.sym("t")

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
KINDS = ("state", "control", "parameter", "multiplier")


@dataclass(eq=False)
class Variable:
    """One scalar decision variable of a model.

    ``name`` is ``component.local``; ``bounds`` are ``(lower, upper)`` with
    ``±inf`` for none.
    """

    name: str
    kind: str
    symbol: ca.SX
    bounds: tuple = (-math.inf, math.inf)
    component: str = ""
    dot: ca.SX | None = None  # derivative symbol, states only

    def __repr__(self):
        return f"Variable({self.name!r}, {self.kind})"


@dataclass(eq=False)
class KinematicConstraint:
    """A kinematic constraint with every level colloc enforces.

    ``kind`` is ``"holonomic"`` (φ(q, t) = 0), ``"nonholonomic"`` (ψ(q, v, t) = 0)
    or ``"acceleration"`` (α(q, v, a, t) = 0).  ``position`` holds φ (holonomic
    only), ``velocity`` φ̇ or ψ (not for acceleration-only), ``acceleration``
    φ̈, ψ̇ or α written with derivative symbols (``Component.dot``).  One
    multiplier per underived row.  A holonomic constraint the kinematics keep
    by themselves (a position-level invariant, e.g. a quaternion's unit norm)
    has ``velocity`` and ``acceleration`` None and no multiplier.
    """

    name: str
    kind: str
    position: ca.SX | None
    velocity: ca.SX | None
    acceleration: ca.SX | None
    multipliers: list = field(default_factory=list)

    @property
    def num_rows(self) -> int:
        """Rows per level; a position-level invariant (``acceleration`` None) counts its φ rows."""
        return int((self.acceleration if self.acceleration is not None else self.position).numel())


def _check_name(name, what):
    if not isinstance(name, str) or not _NAME.match(name):
        raise ModelError(f"{what} name {name!r} is not a valid identifier (letters, digits and _, not starting with a digit).")


def _check_bounds(bounds, what):
    if bounds is None:
        return (-math.inf, math.inf)
    try:
        lo, hi = bounds
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError):
        raise ModelError(f"Bounds of `{what}` must be a pair (lower, upper); got {bounds!r}.") from None
    if math.isnan(lo) or math.isnan(hi):
        raise ModelError(f"Bounds of `{what}` contain NaN: {bounds!r}.")
    if lo > hi:
        raise ModelError(f"Lower bound {lo} of `{what}` is greater than its upper bound {hi}.")
    if lo == math.inf or hi == -math.inf:
        raise ModelError(f"Bounds of `{what}` leave no finite value: ({lo}, {hi}).")
    return (lo, hi)


class Component:
    """A named part of a model that declares variables and residual rows.

    Parameters
    ----------
    name : str
        Prefix of every variable name (``name.local``).
    """

    def __init__(self, name: str):
        _check_name(name, "Component")
        self.name = name
        self.variables: list[Variable] = []
        self._by_symbol: dict[str, Variable] = {}
        self._rows: dict[str, tuple[str, ca.SX]] = {}  # state name -> ("implicit"|"explicit", expr)
        self._equivalents: dict[str, ca.SX] = {}  # state name -> ẋ solved from its implicit row
        self.constraints: list[KinematicConstraint] = []
        self.outputs: dict[str, ca.SX] = {}  # full name -> expression (see `output`)

    # -- declarations -------------------------------------------------------------------------
    @property
    def time(self) -> ca.SX:
        """The time symbol ``t`` (shared by all components)."""
        return TIME

    def _declare(self, local, kind, bounds):
        _check_name(local, kind.capitalize())
        full = f"{self.name}.{local}"
        if any(v.name == full for v in self.variables) or full in self.outputs:
            raise ModelError(f"Component `{self.name}` declares `{local}` twice.")
        var = Variable(full, kind, ca.SX.sym(full), _check_bounds(bounds, full), self.name)
        if kind == "state":
            var.dot = ca.SX.sym(full + ".dot")
        self.variables.append(var)
        self._by_symbol[var.symbol.name()] = var
        return var.symbol

    def state(self, name: str, bounds=None) -> ca.SX:
        """Declare a state; returns its symbol."""
        return self._declare(name, "state", bounds)

    def control(self, name: str, bounds=None) -> ca.SX:
        """Declare a control (an input chosen by the optimizer at every grid point)."""
        return self._declare(name, "control", bounds)

    def parameter(self, name: str, bounds=None) -> ca.SX:
        """Declare a static parameter (one optimized constant)."""
        return self._declare(name, "parameter", bounds)

    def multiplier(self, name: str, bounds=None) -> ca.SX:
        """Declare an algebraic variable present at every grid point (e.g. a Lagrange multiplier)."""
        return self._declare(name, "multiplier", bounds)

    def variable(self, symbol) -> Variable:
        """The :class:`Variable` record behind ``symbol`` (declared by this component)."""
        key = _symbol_name(symbol)
        if key not in self._by_symbol:
            raise ModelError(f"`{key}` is not a variable of component `{self.name}`.")
        return self._by_symbol[key]

    def dot(self, state) -> ca.SX:
        """The time derivative symbol ẋ of a state of this component."""
        var = self.variable(state)
        if var.kind != "state":
            raise ModelError(f"`{var.name}` is a {var.kind}, not a state; only states have a derivative.")
        return var.dot

    # -- dynamics ------------------------------------------------------------------------------
    def derivative(self, state, expr) -> None:
        """Explicit dynamics ``ẋ = expr`` for one state (or a vector of states)."""
        self._add_rows(state, expr, "explicit")

    def residual(self, state, expr, explicit=None) -> None:
        """Implicit dynamics ``expr = 0``, one row tied to each given state.

        ``state`` is one state symbol or a list/vector of them; ``expr`` has as
        many rows.  The rows may use any state's derivative (``dot``).
        ``explicit``, optional, is the same dynamics solved for the derivatives
        (``ẋ = explicit``, as many rows, no derivative symbols): the collocation
        NLP keeps the implicit rows, while forms that need an ODE
        (``mode="explicit"``, forward simulation by ``colloc verify``) use it
        where the rows are nonlinear in ẋ and cannot be solved symbolically.
        """
        self._add_rows(state, expr, "implicit")
        if explicit is not None:
            syms = _as_symbol_list(state)
            rate = as_sx(explicit, f"The explicit equivalent of `{_symbol_name(syms[0])}`")
            if rate.shape != (len(syms), 1):
                raise ModelError(f"The explicit equivalent of `{_symbol_name(syms[0])}` must have one row per state ({len(syms)}); got shape {rate.shape}.")
            for i, s in enumerate(syms):
                self._equivalents[self.variable(s).name] = rate[i]

    def output(self, name: str, expr) -> ca.SX:
        """Declare an output ``NAME.name``: a scalar expression of t, x, ẋ, u, λ and p.

        Outputs are not decision variables: every solution evaluates them on its
        grid as columns of kind ``"output"`` (so result files carry them and
        plots can draw them).  Returns the expression.
        """
        _check_name(name, "Output")
        full = f"{self.name}.{name}"
        if full in self.outputs or any(v.name == full for v in self.variables):
            raise ModelError(f"Component `{self.name}` declares `{name}` twice (an output and a variable share names).")
        value = as_sx(expr, f"Output `{full}`")
        if value.numel() != 1:
            raise ModelError(f"Output `{full}` must be a scalar expression; got shape {value.shape}.")
        self.outputs[full] = value
        return value

    def _add_rows(self, states, expr, form):
        syms = _as_symbol_list(states)
        owner = ", ".join(_symbol_name(s) for s in syms)
        if isinstance(expr, (str, bytes)):
            raise ModelError(f"The {form} dynamics of `{owner}` are the text {expr!r}; give a CasADi expression "
                             "built from the component's symbols (e.g. `x - u`, not `\"x - u\"`).")
        expr = as_sx(expr, f"The {form} dynamics of `{owner}`")
        if expr.is_empty() or expr.size2() != 1:
            raise ModelError(f"The {form} dynamics given for {', '.join(_symbol_name(s) for s in syms)} must be a column of expressions; got shape {expr.shape}.")
        if expr.size1() != len(syms):
            raise ModelError(f"Residual of `{owner}` has {expr.size1()} rows but it is tied to {len(syms)} state(s); give one row per state.")
        for i, s in enumerate(syms):
            var = self.variable(s)
            if var.kind != "state":
                raise ModelError(f"Dynamics were given for `{var.name}`, which is a {var.kind}, not a state.")
            if var.name in self._rows:
                raise ModelError(f"State `{var.name}` has more than one residual row; each state gets exactly one.")
            self._rows[var.name] = (form, expr[i])

    # -- kinematic constraints (used by Multibody) ---------------------------------------------
    def add_constraint(self, constraint: KinematicConstraint) -> None:
        if any(c.name == constraint.name for c in self.constraints):
            raise ModelError(f"Constraint `{constraint.name}` is declared twice.")
        self.constraints.append(constraint)

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r})"


MX_HINT = ("colloc expressions are CasADi SX, not MX: declare symbols with `component.state`, "
           "`component.control` or `component.parameter` (or `ca.SX.sym` for a helper symbol), never `ca.MX.sym`")


def as_sx(expr, where, error=ModelError) -> ca.SX:
    """``expr`` as a CasADi ``SX``; an ``MX`` (or an expression mixing MX) is refused with how to declare it.

    Mixing the two matrix types fails deep inside CasADi ("Wrong number or type
    of arguments for overloaded function 'new_SX'"), so it is caught here, where
    the user's expression enters colloc.
    """
    if isinstance(expr, ca.SX):
        return expr
    if isinstance(expr, ca.MX):
        raise error(f"{where} is a CasADi MX expression; {MX_HINT}.")
    try:
        return ca.SX(expr)
    except (NotImplementedError, TypeError, ValueError, RuntimeError):
        if isinstance(expr, (list, tuple)) and any(isinstance(e, ca.MX) for e in expr):
            raise error(f"{where} contains a CasADi MX expression; {MX_HINT}.") from None
        raise error(f"{where} must be a CasADi SX expression or a number; got {type(expr).__name__}.") from None


def _symbol_name(s) -> str:
    if isinstance(s, str):
        return s
    if isinstance(s, ca.MX):
        raise ModelError(f"`{s}` is a CasADi MX symbol; {MX_HINT}.")
    if isinstance(s, ca.SX) and s.is_symbolic() and s.numel() == 1:
        return s.name()
    raise ModelError(f"Expected a variable symbol, got {s!r}.")


def _as_symbol_list(states):
    if isinstance(states, (list, tuple)):
        return list(states)
    if isinstance(states, ca.SX) and states.numel() > 1:
        return [states[i] for i in range(states.numel())]
    return [states]


class Model:
    """The ordered union of components.

    Builds the whole-model dynamics as one CasADi ``Function`` (see
    :meth:`dynamics`) with one label per residual row naming the state it belongs
    to, and the kinematic-constraint functions used by the transcriptions.
    """

    def __init__(self, components):
        if isinstance(components, Component):
            components = [components]
        if callable(components):
            # e.g. Problem(c.state): a bound method of a component, not the component
            what = getattr(components, "__qualname__", type(components).__name__)
            raise ModelError(f"A model is built from components; got the callable `{what}` (pass the component itself, e.g. `Problem([c])`, not one of its methods).")
        components = list(components)
        if not components:
            raise ModelError("A model needs at least one component.")
        for c in components:
            if not isinstance(c, Component):
                raise ModelError(f"Model components must be colloc.Component instances; got {type(c).__name__}.")
        names = [c.name for c in components]
        for n in names:
            if names.count(n) > 1:
                raise ModelError(f"Two components are named `{n}`; component names must be unique.")
        self.components = components
        for c in components:  # e.g. Multibody builds its rows here, once
            if hasattr(c, "finalize"):
                c.finalize()
        self.variables = [v for c in components for v in c.variables]
        self._by_name = {v.name: v for v in self.variables}
        self._by_symbol = {v.symbol.name(): v for v in self.variables}
        self.states = self.of_kind("state")
        self.controls = self.of_kind("control")
        self.parameters = self.of_kind("parameter")
        self.multipliers = self.of_kind("multiplier")
        self.constraints = [k for c in components for k in c.constraints]
        self._rows, self._equivalents, self.outputs = {}, {}, {}
        for c in components:
            self._rows.update(c._rows)
            self._equivalents.update(c._equivalents)
            self.outputs.update(c.outputs)
        self._check()

    # -- lookup --------------------------------------------------------------------------------
    def of_kind(self, kind):
        return [v for v in self.variables if v.kind == kind]

    def vector(self, kind) -> ca.SX:
        """The symbols of one kind stacked in model order (built once: a transcription asks hundreds of times)."""
        cache = self.__dict__.setdefault("_vectors", {})
        if (kind, len(self.variables)) not in cache:
            of = self.of_kind(kind)
            cache[(kind, len(self.variables))] = ca.vertcat(*[v.symbol for v in of]) if of else ca.SX(0, 1)
        return cache[(kind, len(self.variables))]

    @property
    def dots(self) -> ca.SX:
        cache = self.__dict__.setdefault("_vectors", {})
        if ("dots", len(self.states)) not in cache:
            cache[("dots", len(self.states))] = ca.vertcat(*[v.dot for v in self.states]) if self.states else ca.SX(0, 1)
        return cache[("dots", len(self.states))]

    def lookup(self, key, where="the model") -> Variable:
        """The variable named ``key`` (a full name or a symbol), or a ModelError with a suggestion."""
        if isinstance(key, Variable):
            return key
        name = key if isinstance(key, str) else None
        if isinstance(key, ca.MX):
            raise ModelError(f"`{key}` in {where} is a CasADi MX symbol; {MX_HINT}.")
        if name is None:
            if isinstance(key, ca.SX) and key.is_symbolic() and key.numel() == 1:
                name = key.name()
            else:
                raise ModelError(f"Expected a variable (a symbol or its name) in {where}; got the expression {key}.")
        if name in self._by_name:
            return self._by_name[name]
        raise ModelError(f"Unknown variable `{name}` in {where}.{did_you_mean(name, self._by_name)}")

    @property
    def names(self):
        return [v.name for v in self.variables]

    # -- checks --------------------------------------------------------------------------------
    def _check(self):
        for s in self.states:
            if s.name not in self._rows:
                raise ModelError(f"State `{s.name}` has no residual or derivative; give it exactly one row with `residual` or `derivative`.")
        known = {v.symbol.name() for v in self.variables} | {s.dot.name() for s in self.states} | {TIME.name()}
        exprs = [(expr, f"the dynamics of `{name}`") for name, (_, expr) in self._rows.items()]
        exprs += [(e, f"constraint `{k.name}`") for k in self.constraints for e in (k.position, k.velocity, k.acceleration) if e is not None]
        exprs += [(expr, f"output `{name}`") for name, expr in self.outputs.items()]
        # one symvar over everything (each CasADi call costs tens of µs); expression by expression only to name a culprit
        if not exprs or not all(isinstance(e, ca.SX) for e, _ in exprs) or not {s.name() for s in ca.symvar(ca.veccat(*[e for e, _ in exprs]))} <= known:
            for expr, where in exprs:
                self._check_symbols(expr, where, known)
        for name, expr in self._equivalents.items():
            self._check_symbols(expr, f"the explicit equivalent of `{name}`", known - {s.dot.name() for s in self.states})
        self._check_singular()

    def _check_symbols(self, expr, where, known):
        for s in ca.symvar(ca.SX(expr)):
            if s.name() not in known:
                raise ModelError(f"Symbol `{s.name()}` used in {where} was not declared by any component of the model.{did_you_mean(s.name(), known)}")

    def implicit_states(self, mode="default"):
        """States whose derivative is an NLP variable: implicit rows, or every state with ``mode="implicit"``."""
        if mode == "implicit":
            return list(self.states)
        if mode == "explicit":
            return []
        return [s for s in self.states if self._rows[s.name][0] == "implicit"]

    def _check_singular(self):
        imp = self.implicit_states()
        if not imp:
            return
        rows, zdot = self._implicit_rows(imp)
        pattern = ca.jacobian_sparsity(rows, zdot)  # the pattern only: no derivative expressions
        if ca.sprank(pattern) < len(imp):
            used = set(pattern.get_triplet()[0])
            for i, s in enumerate(imp):
                if i not in used:
                    raise ModelError(f"The residual of state `{s.name}` does not depend on any state derivative, so its derivative is undetermined (structurally singular in ẋ); write it in terms of `dot({s.name})`.")
            names = ", ".join(s.name for s in imp)
            raise ModelError(f"The residuals of states {names} are structurally singular in their derivatives: some derivative cannot be determined from them.")

    def _explicit_substitution(self, imp):
        """Derivative symbols of explicit states and their right-hand sides."""
        imp_names = {s.name for s in imp}
        ex = [s for s in self.states if s.name not in imp_names]
        return [s.dot for s in ex], [self._rows[s.name][1] for s in ex]

    def _substitute_explicit(self, expr, imp):
        """``expr`` with the derivative symbols of explicit states replaced by their right-hand sides
        (no substitution where ``expr`` uses none of them: each CasADi call costs tens of µs)."""
        dots_ex, rhs_ex = self._explicit_substitution(imp)
        if not dots_ex or not expr.numel():
            return expr
        dots = self._once(("explicit dots", tuple(s.name for s in imp)), lambda: ca.vertcat(*dots_ex))
        if not ca.depends_on(expr, dots):
            return expr
        return ca.substitute([expr], [dots], [ca.vertcat(*rhs_ex)])[0]

    def _implicit_rows(self, imp, equivalents=False):
        return self._once(("implicit rows", tuple(s.name for s in imp), equivalents), lambda: self._make_implicit_rows(imp, equivalents))

    def _make_implicit_rows(self, imp, equivalents):
        rows = []
        for s in imp:
            form, expr = self._rows[s.name]
            if equivalents and s.name in self._equivalents:
                form, expr = "explicit", self._equivalents[s.name]
            rows.append(expr if form == "implicit" else s.dot - expr)
        rows = self._substitute_explicit(ca.vertcat(*rows) if rows else ca.SX(0, 1), imp)
        return rows, ca.vertcat(*[s.dot for s in imp])

    # -- functions -----------------------------------------------------------------------------
    def _once(self, key, make):
        """``make()``, built once per model: the model's rows and constraints are fixed when it is built,
        and a solve (or a refinement's or sweep's many solves) asks for the same functions again."""
        cache = self.__dict__.setdefault("_functions", {})
        if key not in cache:
            cache[key] = make()
        return cache[key]

    def dynamics(self, mode="default") -> ca.Function:
        """Whole-model dynamics ``(t, x, z, u, lam, p) -> (xdot, res)``.

        ``z`` are the derivative variables of :meth:`implicit_states`; ``xdot``
        (shape ``(num_states, 1)``) is ``f`` for explicit states and ``z`` for
        implicit ones; ``res`` are the residual rows, labelled by
        :meth:`residual_labels`.  Explicit rows used inside residuals are
        substituted by their right-hand sides.
        """
        def make():
            inputs, xdot, res = self.dynamics_expressions(mode)
            return ca.Function("dynamics", inputs, [xdot, res], ["t", "x", "z", "u", "lam", "p"], ["xdot", "res"])
        return self._once(("dynamics", mode), make)

    def dynamics_expressions(self, mode="default"):
        """:meth:`dynamics` as SX expressions, ``(inputs, xdot, res)``: ``inputs`` are the model's own
        symbols ``(t, x, z, u, lam, p)``, ``z`` the derivative symbols ``dot(s)`` of the implicit states."""
        if mode == "explicit":
            return self._once(("dynamics expressions", mode), self._explicit_dynamics)
        return self._once(("dynamics expressions", mode), lambda: self._dynamics(mode))

    def _dynamics(self, mode, equivalents=False):
        imp = self.implicit_states(mode)
        rows, zdot = self._implicit_rows(imp, equivalents)
        xdot = []
        for s in self.states:
            if s in imp:
                xdot.append(s.dot)
            else:
                xdot.append(self._rows[s.name][1])
        # an explicit right-hand side may itself use derivative symbols
        xdot = self._substitute_explicit(ca.vertcat(*xdot) if xdot else ca.SX(0, 1), imp)
        return self.inputs(zdot), xdot, rows

    def _explicit_dynamics(self):
        """``mode="explicit"``: solve residuals affine in ẋ for ẋ symbolically (no z variables).

        A nonlinear implicit row with an explicit equivalent (:meth:`Component.residual`) is replaced by it.
        """
        imp = self.implicit_states()
        inputs, xdot, res = self._dynamics("default", equivalents=True)
        if not imp:
            return inputs, xdot, res
        zdot = inputs[2]
        J = ca.jacobian(res, zdot)
        for i, s in enumerate(imp):
            if ca.depends_on(J[i, :], zdot):
                raise ModelError(f"mode='explicit' needs residuals affine in the derivatives, but the residual of `{s.name}` is nonlinear in them; use the default mode.")
        r0 = ca.substitute(res, zdot, ca.DM.zeros(zdot.shape))
        solved = -solve_affine(J, r0)
        xdot = ca.substitute(xdot, zdot, solved)
        return self.inputs(ca.SX(0, 1)), xdot, ca.SX(0, 1)

    def output_function(self) -> ca.Function:
        """The declared outputs ``(t, x, xdot, u, lam, p) -> values`` (shape ``(num_outputs, 1)``), in model order."""
        values = ca.vertcat(*self.outputs.values()) if self.outputs else ca.SX(0, 1)
        return ca.Function("outputs", [TIME, self.vector("state"), self.dots, self.vector("control"), self.vector("multiplier"),
                                       self.vector("parameter")], [values], ["t", "x", "xdot", "u", "lam", "p"], ["y"])

    def inputs(self, zdot):
        return [TIME, self.vector("state"), zdot, self.vector("control"), self.vector("multiplier"), self.vector("parameter")]

    def residual_labels(self, mode="default"):
        return [f"residual:{s.name}" for s in self.implicit_states(mode)]

    def constraint_function(self, level) -> tuple[ca.Function, list]:
        """Kinematic constraint errors at one level and their labels.

        ``level`` is ``"position"`` (φ), ``"velocity"`` (φ̇, ψ) or
        ``"acceleration"`` (φ̈, ψ̇, α). The function maps ``(t, x, xdot, u, lam, p)``
        to the stacked errors; derivative symbols are replaced by ``xdot``.
        """
        f, labels = self._once(("constraint", level), lambda: self._constraint_function(level))
        return f, list(labels)

    def mesh_levels(self):
        """``F(t, x, p) = [φ; φ̇; ψ]`` (the position and velocity levels, imposed at mesh points) and its
        Jacobian ``F_x``, built once: ``(Function (t, x, p) -> (F, Fx), labels, (F, Fx, t, x, p))``."""
        return self._once(("mesh levels",), self._mesh_levels)

    def _mesh_levels(self):
        (ep, lp), (ev, lv) = self.constraint_expressions("position"), self.constraint_expressions("velocity")
        t, x, p = TIME, self.vector("state"), self.vector("parameter")
        F = ca.vertcat(ep, ev)  # in t, q, v, p only: a Multibody refuses u, λ and derivatives in these levels
        Fx = ca.jacobian(F, x)
        return ca.Function("F", [t, x, p], [F, Fx], ["t", "x", "p"], ["F", "Fx"]), lp + lv, (F, Fx, t, x, p)

    def _constraint_function(self, level):
        expr, labels = self.constraint_expressions(level)
        x, xdot = self.vector("state"), self.dots
        f = ca.Function(f"constraint_{level}", [TIME, x, xdot, self.vector("control"), self.vector("multiplier"), self.vector("parameter")], [expr], ["t", "x", "xdot", "u", "lam", "p"], ["err"])
        return f, labels

    def constraint_expressions(self, level) -> tuple[ca.SX, list]:
        """The stacked constraint errors of one level (as :meth:`constraint_function` evaluates them) and their labels."""
        expr, labels = self._once(("constraint expressions", level), lambda: self._stack_constraints(level))
        return expr, list(labels)

    def _stack_constraints(self, level):
        exprs, labels = [], []
        suffix = {"position": "", "velocity": ".dot", "acceleration": ".ddot"}
        for k in self.constraints:
            e = getattr(k, level)
            if e is None:
                continue
            exprs.append(e)
            if k.kind == "holonomic":
                tag = suffix[level]
            elif k.kind == "nonholonomic":
                tag = "" if level == "velocity" else ".dot"
            else:
                tag = ""
            n = int(e.numel())
            labels += [f"{k.kind}:{k.name}{tag}" + (f"[{i}]" if n > 1 else "") for i in range(n)]
        return (ca.vertcat(*exprs) if exprs else ca.SX(0, 1)), labels

    def __repr__(self):
        return f"Model({[c.name for c in self.components]})"
