"""The constraint-level machinery of a :class:`~colloc.Multibody`: derivatives, checks and registration.

A constraint is declared once, at its own level (``holonomic``, ``nonholonomic``,
``acceleration``); this mixin derives the other levels along ``q̇ = N(q) v``,
``v̇ = a`` with ``jtimes``, checks that the expression is linear in what its
level allows, detects position-level invariants (``Φ_q N ≡ 0``, ``φ̇ ≡ 0``)
and rows that repeat another constraint (their speed Jacobians are linearly
dependent at reproducible random sample points), and registers the
:class:`~colloc.model.KinematicConstraint` with its multiplier.  The public
declaration methods stay on :class:`~colloc.Multibody`.

Legend: ``q`` coordinates, ``v`` speeds, ``a`` accelerations, ``G`` constraint
Jacobian with respect to the speeds.
"""
from __future__ import annotations

import math

import casadi as ca
import numpy as np

from ..errors import ModelError
from .component import TIME, KinematicConstraint, Variable, _check_bounds, _check_name
from ..numeric import Evaluator

#: Sample points used to detect linearly dependent constraint rows.
_NUM_SAMPLES = 3
_RANK_RTOL = 1e-8
_ZERO_ATOL = 1e-10


class ConstraintLevels:
    """Private constraint machinery of :class:`~colloc.Multibody` (see the module docstring)."""

    def _rate(self, expr):
        """``d expr / dt`` along ``q̇ = N v``, ``v̇ = a``; other symbols held constant."""
        return ca.jtimes(expr, self._column("qvt", lambda: ca.vertcat(self.q, self.v, TIME)),
                         self._column("rates", lambda: ca.vertcat(self.qdot, self.a, 1)))

    def _constraint_expr(self, name, expr, kind, allow_v, allow_a):
        self._check_open(f"declare constraint `{name}`")
        _check_name(name, "Constraint")
        full = f"{self.name}.{name}"
        if any(k.name == full for k in self.constraints):
            raise ModelError(f"Constraint `{full}` is declared twice.")
        expr = _as_sx(expr, f"constraint `{full}`")
        if expr.is_empty() or expr.size2() != 1:
            raise ModelError(f"Constraint `{full}` must be a scalar or a column; got shape {expr.shape}.")
        speeds = {s.name() for s in self._v}
        accels = {s.name() for s in ca.vertsplit(self.a)}
        own = {v.name: v for v in self.variables}
        for s in ca.symvar(expr):
            n = s.name()
            if n in speeds and not allow_v:
                raise ModelError(f"Holonomic constraint `{full}` uses the speed `{n}`; φ(q, t) may depend on coordinates, time and parameters only. Declare a velocity constraint with `nonholonomic`.")
            if n in accels and not allow_a:
                hint = " Declare it with `acceleration`." if kind == "nonholonomic" else ""
                raise ModelError(f"{kind.capitalize()} constraint `{full}` uses the acceleration `{n}`; colloc derives its acceleration level itself.{hint}")
            if n.endswith(".dot") and n not in accels:
                raise ModelError(f"Constraint `{full}` uses the derivative symbol `{n}`; write constraints in this multibody's coordinates, speeds, accelerations (`a`), time and parameters.")
            if n in own and own[n].kind in ("control", "multiplier"):
                raise ModelError(f"Constraint `{full}` uses the {own[n].kind} `{n}`; constraints may use coordinates, speeds, accelerations, time and parameters only.")
        return expr

    def _check_linear(self, name, kind, expr, J, wrt, words, lower_kind):
        full = f"{self.name}.{name}"
        for i in range(expr.numel()):
            if J[i, :].nnz() == 0 or not ca.depends_on(expr[i], wrt):
                raise ModelError(f"{kind.capitalize()} constraint `{full}`{_row(expr, i)} does not depend on the {words}; declare it with `{lower_kind}`.")
        if ca.depends_on(J, wrt):
            raise ModelError(f"{kind.capitalize()} constraint `{full}` is not linear in the {words}: its Jacobian with respect to them depends on them. colloc supports only constraints linear in the {words}.")

    def _is_invariant(self, name, phi, G, phi_dot):
        """True if every row of φ has ``Φ_q N = 0`` and ``φ̇ = 0`` at every sample point."""
        n = phi.numel()
        samples = self._sample(ca.horzcat(G, phi_dot))  # phi_dot also depends on v, sampled alike
        scale = [max(1.0, float(np.abs(S).max())) for S in samples]
        zero = np.array([[np.abs(S[i, :]).max() <= _ZERO_ATOL * sc for i in range(n)] for S, sc in zip(samples, scale)]).all(axis=0)
        if zero.all():
            return True
        if zero.any():
            rows = ", ".join(str(i) for i in np.flatnonzero(zero))
            raise ModelError(f"Holonomic constraint `{self.name}.{name}` mixes rows the kinematics keep by themselves (Φ_q N = 0 and φ̇ = 0: row {rows}) with rows that need a constraint force; declare them as separate constraints.")
        return False

    def _register_invariant(self, name, phi):
        """A holonomic constraint kept by the kinematics: position level only, no multiplier."""
        full = f"{self.name}.{name}"
        Phi_q = ca.jacobian(phi, self.q)
        earlier = [k for k in self.constraints if k.kind == "holonomic" and k.velocity is None]
        blocks = [ca.jacobian(k.position, self.q) for k in earlier] + [Phi_q]
        samples = self._sample(ca.vertcat(*blocks))
        starts = np.cumsum([0] + [b.size1() for b in blocks])
        rows = lambda idx: np.concatenate([np.arange(starts[j], starts[j + 1]) for j in idx])
        if _deficient(samples, rows([len(blocks) - 1])) or _deficient(samples, rows(range(len(blocks)))):
            partners = [earlier[j].name for j in range(len(earlier)) if _deficient(samples, rows([j, len(blocks) - 1]))]
            what = f"repeats constraint {', '.join(f'`{p}`' for p in partners)}" if partners else "has linearly dependent rows"
            raise ModelError(f"Constraint `{full}` {what}: its position Jacobian Φ_q is rank-deficient (it is kept by the kinematics, Φ_q N = 0, so only its position level is imposed). Declare each invariant once.")
        k = KinematicConstraint(full, "holonomic", phi, None, None, [])
        self.add_constraint(k)
        return k

    def _register(self, name, kind, position, velocity, acceleration, G, bounds):
        full = f"{self.name}.{name}"
        self._check_independent(full, G)
        bounds = _check_bounds(bounds, f"{full}.lambda")
        n = int(acceleration.numel())
        lams = []
        for i in range(n):
            lam_name = f"{full}.lambda" if n == 1 else f"{full}.lambda_{i}"
            var = Variable(lam_name, "multiplier", ca.SX.sym(lam_name), bounds, self.name)
            self.variables.append(var)
            self._by_symbol[lam_name] = var
            lams.append(var)
        k = KinematicConstraint(full, kind, position, velocity, acceleration, lams)
        self.add_constraint(k)
        self._jacobians.append(G)
        self._jacobian_names.append(full)
        return k

    def _check_independent(self, full, G):
        """Refuse constraint rows that are linearly dependent on earlier ones.

        The stacked ``G`` (rows ``∂(velocity or acceleration level)/∂(v or a)``)
        must keep full row rank; it is evaluated at random points inside the
        bounds (a dependency that holds everywhere is never a coincidence).  A
        hand-derived duplicate (holonomic ``x² + y² − 1`` and nonholonomic
        ``x ẋ + y ẏ``) is the usual cause; it would make the NLP Jacobian
        rank-deficient.
        """
        blocks = self._jacobians + [G]
        names = self._jacobian_names + [full]
        samples = self._sample(ca.vertcat(*blocks))
        starts = np.cumsum([0] + [b.size1() for b in blocks])
        rows = lambda idx: np.concatenate([np.arange(starts[j], starts[j + 1]) for j in idx])
        new = len(blocks) - 1
        if _deficient(samples, rows([new])):
            raise ModelError(f"Constraint `{full}` does not constrain the speeds independently: the rows of its Jacobian G with respect to the speeds are zero or linearly dependent (for a holonomic constraint, Φ_q N = 0 means the kinematics already keep it).")
        if not _deficient(samples, rows(range(len(blocks)))):
            return
        partners = [names[j] for j in range(new) if _deficient(samples, rows([j, new]))] or names[:new]
        listed = ", ".join(f"`{p}`" for p in partners)
        raise ModelError(f"Constraint `{full}` repeats constraint {listed}: their Jacobians with respect to the speeds are linearly dependent (is one the hand-written derivative of the other?). Declare each constraint once, at its own level; colloc derives φ̇, φ̈ and ψ̇ itself.")

    def _sample(self, expr):
        """``expr`` evaluated at a few reproducible random points, within finite bounds."""
        syms = ca.symvar(expr)
        rng = np.random.default_rng(20230)
        own = {v.name: v for v in self.variables}
        f = ca.Function("sample", [ca.vertcat(*syms)] if syms else [ca.SX(0, 1)], [expr])
        bounds = [own[s.name()].bounds if s.name() in own else (0.5, 1.5) for s in syms]
        points = np.array([[_draw(rng, b) for b in bounds] for _ in range(_NUM_SAMPLES)]).reshape(_NUM_SAMPLES, len(syms))
        # arrays bound to CasADi once (each conversion between numpy and CasADi costs tens of µs, and so
        # does building a mapped copy)
        evaluate = Evaluator(f)
        return [evaluate(p.reshape(-1, 1))[0] for p in points]

    # -- points --------------------------------------------------------------------------------

def _draw(rng, bounds):
    lo, hi = bounds
    if math.isfinite(lo) and math.isfinite(hi):
        return rng.uniform(lo, hi)
    if math.isfinite(lo):
        return lo + rng.uniform(0.0, 1.0)
    if math.isfinite(hi):
        return hi - rng.uniform(0.0, 1.0)
    return rng.uniform(-1.0, 1.0)


def _deficient(samples, idx):
    """True if the rows ``idx`` lose rank at every sample point (rows normalised, zero rows count as dependent)."""
    for G in samples:
        sub = G[idx, :]
        norms = np.linalg.norm(sub, axis=1)
        if (norms <= _ZERO_ATOL * max(1.0, float(np.abs(G).max()))).any():
            continue  # a zero row (up to round-off, which the SX graph does not cancel exactly)
        s = np.linalg.svd(sub / norms[:, None], compute_uv=False)
        if len(s) == len(idx) and s[-1] > _RANK_RTOL:
            return False
    return True


def _row(expr, i):
    return f" (row {i})" if expr.numel() > 1 else ""


def _as_sx(value, what):
    if isinstance(value, ca.SX):
        return value
    if isinstance(value, (list, tuple)):
        value = ca.vertcat(*value)
    try:
        return ca.SX(value)
    except (NotImplementedError, TypeError, RuntimeError):
        raise ModelError(f"{what} must be a CasADi SX expression; got {type(value).__name__}.") from None
