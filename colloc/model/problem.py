"""The optimal control problem: model, time span, bounds, costs, constraints, guess.

A :class:`Problem` is symbolic and solver-agnostic: it records what the user
asked for and checks it (:meth:`Problem.validate`); ``colloc.solve`` turns it
into an NLP.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import casadi as ca
import numpy as np

from ..errors import ModelError, ProblemError
from .component import TIME, Component, Model, Variable, as_sx
from .scale import check_problem_scale


@dataclass(eq=False)
class PathConstraint:
    name: str
    expr: ca.SX
    lower: np.ndarray
    upper: np.ndarray


@dataclass(eq=False)
class BoundaryConstraint:
    name: str
    expr: ca.SX  # in endpoint symbols
    lower: np.ndarray
    upper: np.ndarray


@dataclass(eq=False)
class CostTerm:
    name: str
    integral: ca.SX | None  # integrand in (t, x, u, lam, p)
    final: ca.SX | None  # endpoint expression


#: Names of the cost terms a transcription adds itself (``colloc.nlp.TERM_LEGEND`` explains them); a user's
#: term of the same name would be replaced by it in the objective and in the per-term values.
RESERVED_COST_NAMES = frozenset({"projection", "control-polynomial", "steps"})


def _finite_or_inf(value, what):
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ProblemError(f"{what} must be a number; got {value!r}.") from None
    if math.isnan(v):
        raise ProblemError(f"{what} is NaN.")
    return v


def _range(value, what):
    """A value or (lower, upper) pair as floats; rejects NaN and lower > upper."""
    if isinstance(value, (tuple, list)) and len(value) == 2:
        lo, hi = (_finite_or_inf(v, what) for v in value)
    else:
        try:
            float(value)
        except (TypeError, ValueError):
            raise ProblemError(f"{what} must be a number or a (lower, upper) pair; got {value!r}.") from None
        lo = hi = _finite_or_inf(value, what)
        if math.isinf(lo):
            raise ProblemError(f"{what} is infinite; give a finite value or a (lower, upper) range.")
    if lo > hi:
        raise ProblemError(f"{what}: lower value {lo} is greater than upper value {hi}.")
    if lo == math.inf or hi == -math.inf:
        raise ProblemError(f"{what}: the range ({lo}, {hi}) holds no finite value.")
    return lo, hi


class Problem:
    """An optimal control problem on ``[t0, tf]``.

    Parameters
    ----------
    components : Component, list of Component, or Model
        The model.
    t0 : float
        Initial time (fixed).
    tf : float or (float, float)
        Final time, fixed, or free within ``(lower, upper)``.
    name : str, optional
        Used in result files and summaries.
    """

    def __init__(self, components, t0=0.0, tf=1.0, name="problem"):
        self.model = components if isinstance(components, Model) else Model(components)
        self.name = str(name)
        self.t0_value = _finite_or_inf(t0, "Initial time t0")
        if math.isinf(self.t0_value):
            raise ProblemError("Initial time t0 must be finite.")
        self.tf_bounds = _range(tf, "Final time tf")
        if math.isinf(self.tf_bounds[1]):
            raise ProblemError("Final time tf needs a finite upper bound.")
        if self.tf_bounds[0] <= self.t0_value:
            raise ProblemError(f"Final time tf (lower value {self.tf_bounds[0]}) must be greater than t0 = {self.t0_value}.")
        self.t0 = ca.SX.sym("t0")
        self.tf = ca.SX.sym("tf")
        pointwise = [v for v in self.model.variables if v.kind != "parameter"]
        self._endpoint = {
            "t0": {v.name: ca.SX.sym(v.name + "@t0") for v in pointwise},
            "tf": {v.name: ca.SX.sym(v.name + "@tf") for v in pointwise},
        }
        self.bounds = {v.name: v.bounds for v in self.model.variables}
        self.initial_bounds: dict[str, tuple] = {}
        self.final_bounds: dict[str, tuple] = {}
        self.paths: list[PathConstraint] = []
        self.boundaries: list[BoundaryConstraint] = []
        self.costs: list[CostTerm] = []
        self.guesses: dict[str, object] = {}

    # -- lookups -------------------------------------------------------------------------------
    @property
    def free_final_time(self) -> bool:
        return self.tf_bounds[0] < self.tf_bounds[1]

    def variable(self, key, where) -> Variable:
        try:
            return self.model.lookup(key, where)
        except ModelError as e:
            raise ProblemError(str(e)) from None

    def endpoint_symbols(self, which):
        return self._endpoint[which]

    def _pointwise_symbols(self):
        vs = [v for v in self.model.variables if v.kind != "parameter"]
        return [v.symbol for v in vs], vs

    def at_t0(self, expr) -> ca.SX:
        """``expr`` evaluated at the initial time (for boundary constraints and costs)."""
        return self._at("t0", expr)

    def at_tf(self, expr) -> ca.SX:
        """``expr`` evaluated at the final time (for boundary constraints and costs)."""
        return self._at("tf", expr)

    def _at(self, which, expr):
        syms, vs = self._pointwise_symbols()
        ends = [self._endpoint[which][v.name] for v in vs]
        expr = as_sx(expr, f"The expression passed to `at_{which}`", ProblemError)
        time = self.t0 if which == "t0" else self.tf
        return ca.substitute([expr], [ca.vertcat(*syms, TIME)], [ca.vertcat(*ends, time)])[0]

    # -- declarations --------------------------------------------------------------------------
    def initial(self, values: dict) -> None:
        """Initial values or ranges: ``{x: 0.0, y: (0.5, 1.5)}``."""
        self._endpoint_bounds(values, self.initial_bounds, "initial")

    def final(self, values: dict) -> None:
        """Final values or ranges: ``{x: 1.0}``."""
        self._endpoint_bounds(values, self.final_bounds, "final")

    def _endpoint_bounds(self, values, target, where):
        if not isinstance(values, dict):
            raise ProblemError(f"`{where}` takes a dict {{variable: value or (lower, upper)}}; got {type(values).__name__}.")
        for key, value in values.items():
            var = self.variable(key, f"`{where}`")
            if var.kind == "parameter":
                raise ProblemError(f"`{var.name}` is a parameter; bound it with `bound`, not `{where}`.")
            target[var.name] = _range(value, f"{where.capitalize()} value of `{var.name}`")

    def bound(self, var, lower=-math.inf, upper=math.inf) -> None:
        """Bounds on a variable at every grid point (or on a parameter)."""
        v = self.variable(var, "`bound`")
        self.bounds[v.name] = _range((lower, upper), f"Bounds of `{v.name}`")

    def path(self, expr, lower=-math.inf, upper=math.inf, name=None) -> None:
        """Path constraint ``lower ≤ expr ≤ upper`` at every collocation point."""
        name = name or f"path{len(self.paths)}"
        expr = as_sx(expr, f"Path constraint `{name}`", ProblemError)
        self._check_pointwise(expr, f"path constraint `{name}`")
        lo, hi = self._row_bounds(expr, lower, upper, f"path constraint `{name}`")
        self.paths.append(PathConstraint(name, expr, lo, hi))

    def boundary(self, expr, lower=0.0, upper=0.0, name=None) -> None:
        """Endpoint constraint ``lower ≤ expr ≤ upper`` in ``at_t0``/``at_tf`` terms."""
        name = name or f"boundary{len(self.boundaries)}"
        expr = as_sx(expr, f"Boundary constraint `{name}`", ProblemError)
        pointwise, _ = self._pointwise_symbols()
        bare = [s.name() for s in ca.symvar(expr) if s.name() in {p.name() for p in pointwise} | {TIME.name()}]
        if bare:
            raise ProblemError(f"Boundary constraint `{name}` uses `{bare[0]}` directly; wrap it in `problem.at_t0(...)` or `problem.at_tf(...)`.")
        self._check_endpoint(expr, f"boundary constraint `{name}`")
        lo, hi = self._row_bounds(expr, lower, upper, f"boundary constraint `{name}`")
        self.boundaries.append(BoundaryConstraint(name, expr, lo, hi))

    def minimize(self, integral=None, final=None, name=None) -> None:
        """Add a cost term: ``∫ integral dt`` (Lagrange) and/or ``final`` (Mayer).

        ``final`` may use ``at_t0``/``at_tf`` values, ``t0``/``tf`` and
        parameters; a bare variable in it means its value at ``tf``.
        Maximize by minimizing the negative.
        """
        if integral is None and final is None:
            raise ProblemError("`minimize` needs an `integral` or a `final` term.")
        name = self._cost_name(name)
        if integral is not None:
            integral = as_sx(integral, f"The integral of cost `{name}`", ProblemError)
            if integral.numel() != 1:
                raise ProblemError(f"The integral of cost `{name}` must be a scalar; got shape {integral.shape}.")
            self._check_pointwise(integral, f"cost `{name}`", derivatives=True)
        if final is not None:
            final = self.at_tf(final)
            if final.numel() != 1:
                raise ProblemError(f"The final term of cost `{name}` must be a scalar; got shape {final.shape}.")
            self._check_endpoint(final, f"cost `{name}`")
        self.costs.append(CostTerm(name, integral, final))

    def _cost_name(self, name):
        """``name`` checked to be new, or the first free ``costK``: the objective's terms are reported by
        name, so two terms of one name would show one value for both (or drop one of them)."""
        taken = {c.name for c in self.costs}
        if name is None:
            k = len(self.costs)
            while f"cost{k}" in taken:
                k += 1
            return f"cost{k}"
        name = str(name)
        if not name:
            raise ProblemError("A cost term's name must not be empty.")
        if name in taken:
            raise ProblemError(f"Problem `{self.name}` has a cost term named `{name}` already; give this one another name "
                               "(each term's value is reported by its name).")
        if name in RESERVED_COST_NAMES:
            raise ProblemError(f"The cost name `{name}` is that of a term colloc's transcription adds; choose another name.")
        return name

    def guess(self, values: dict) -> None:
        """Initial guess per variable: a constant, ``(start, end)`` linear, or ``(times, values)`` arrays."""
        if not isinstance(values, dict):
            raise ProblemError(f"`guess` takes a dict {{variable: guess}}; got {type(values).__name__}.")
        for key, value in values.items():
            if (isinstance(key, str) and key == "tf") or (isinstance(key, ca.SX) and key.is_symbolic() and key.name() == "tf"):
                if not self.free_final_time:
                    raise ProblemError("A guess for `tf` was given but the final time is fixed.")
                self.guesses["tf"] = _check_guess("tf", value)
                if self.guesses["tf"][0] != "constant":
                    raise ProblemError("The guess of `tf` must be a single number.")
                continue
            var = self.variable(key, "`guess`")
            self.guesses[var.name] = _check_guess(var.name, value)

    # -- checks --------------------------------------------------------------------------------
    def _row_bounds(self, expr, lower, upper, what):
        n = expr.numel()
        if expr.size2() != 1:
            raise ProblemError(f"The expression of {what} must be a column; got shape {expr.shape}.")
        lo = np.broadcast_to(np.asarray(lower, dtype=float), (n,)).copy() if np.ndim(lower) == 0 or np.size(lower) == n else None
        hi = np.broadcast_to(np.asarray(upper, dtype=float), (n,)).copy() if np.ndim(upper) == 0 or np.size(upper) == n else None
        if lo is None or hi is None:
            raise ProblemError(f"Bounds of {what} must be scalars or have {n} entries.")
        if np.isnan(lo).any() or np.isnan(hi).any():
            raise ProblemError(f"Bounds of {what} contain NaN.")
        if (lo > hi).any():
            raise ProblemError(f"Lower bound of {what} is greater than its upper bound.")
        return lo, hi

    def _check_pointwise(self, expr, where, derivatives=False):
        allowed = {v.symbol.name() for v in self.model.variables} | {TIME.name()}
        if derivatives:  # an integrand may weigh state rates, e.g. a regularisation of dF̃/dt
            allowed |= {v.dot.name() for v in self.model.states}
        for s in ca.symvar(expr):
            if s.name() not in allowed:
                hint = " Endpoint values belong in `boundary` or in `minimize(final=...)`." if "@" in s.name() or s.name() in ("t0", "tf") else ""
                raise ProblemError(f"Symbol `{s.name()}` used in {where} is not a variable of the model.{hint}")

    def _check_endpoint(self, expr, where):
        allowed = {s.name() for d in self._endpoint.values() for s in d.values()}
        allowed |= {v.symbol.name() for v in self.model.parameters} | {"t0", "tf"}
        for s in ca.symvar(expr):
            if s.name() not in allowed:
                raise ProblemError(f"Symbol `{s.name()}` used in {where} is not a variable of the model.")

    def validate(self) -> "Problem":
        """Check everything that can be checked before building an NLP; return self."""
        if not self.model.states:
            raise ProblemError(f"Problem `{self.name}` has no states; collocation needs at least one (declare it with "
                               "`component.state(name)` and give its dynamics with `derivative` or `residual`).")
        for name, (lo, hi) in self.bounds.items():
            var = self.model.lookup(name)
            for which, b in (("initial", self.initial_bounds), ("final", self.final_bounds)):
                if name in b and (b[name][1] < lo or b[name][0] > hi):
                    raise ProblemError(f"The {which} range {b[name]} of `{name}` lies outside its bounds ({lo}, {hi}).")
            if var.kind == "parameter" and (math.isinf(lo) or math.isinf(hi)) and name not in self.guesses:
                pass  # a free parameter with no bounds starts from 0
        check_problem_scale(self)
        return self

    def summary(self) -> str:
        m = self.model
        lines = [f"problem {self.name}: t in [{self.t0_value}, {self.tf_bounds if self.free_final_time else self.tf_bounds[0]}]"]
        for kind in ("state", "control", "multiplier", "parameter"):
            for v in m.of_kind(kind):
                lo, hi = self.bounds[v.name]
                lines.append(f"  {kind:10s} {v.name:30s} [{lo:g}, {hi:g}]")
        return "\n".join(lines)


def _check_guess(name, value):
    if isinstance(value, (int, float, np.floating, np.integer)):
        v = float(value)
        if not math.isfinite(v):
            raise ProblemError(f"Guess of `{name}` is {v}; guesses must be finite.")
        return ("constant", v)
    if isinstance(value, (tuple, list)) and len(value) == 2:
        a, b = value
        if np.ndim(a) == 0 and np.ndim(b) == 0:
            a, b = float(a), float(b)
            if not (math.isfinite(a) and math.isfinite(b)):
                raise ProblemError(f"Guess of `{name}` is not finite: {value!r}.")
            return ("linear", (a, b))
        times, vals = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        if times.ndim != 1 or vals.shape != times.shape or times.size < 2:
            raise ProblemError(f"Guess of `{name}` as (times, values) needs two 1-D arrays of the same length ≥ 2; got shapes {times.shape} and {vals.shape}.")
        if not (np.isfinite(times).all() and np.isfinite(vals).all()):
            raise ProblemError(f"Guess of `{name}` contains NaN or inf.")
        if (np.diff(times) <= 0).any():
            raise ProblemError(f"Guess times of `{name}` must be strictly increasing.")
        return ("table", (times, vals))
    raise ProblemError(f"Guess of `{name}` must be a number, a (start, end) pair or (times, values) arrays; got {value!r}.")


__all__ = ["Problem", "Component", "Model"]
