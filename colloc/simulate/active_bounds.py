"""Bounds active at the optimum on the quantities that are not functions of time: the final time and parameters.

A state or control on its bound is the everyday shape of an optimal control
(bang–bang, a boundary arc).  A free final time or a parameter on its bound is
different: the problem's own optimum lies at or beyond a limit the user chose,
often only to keep the solver in a box (a minimum-time problem with no bound on
the controls goes ever faster, and "solves" with T on its lower bound).  The
result names each one.
"""
from __future__ import annotations

import math

#: Distance from a bound, relative to max(1, |bound|), within which a value sits on it (IPOPT's default
#: bound_relax_factor is 1e-8, and its interior point stops within ~tol of an active bound).
RELATIVE_GAP = 1e-6


def _on(value, lo, hi):
    """``"lower"``, ``"upper"`` or None: which of the finite bounds ``value`` sits on."""
    for side, bound in (("lower", lo), ("upper", hi)):
        if math.isfinite(bound) and abs(value - bound) <= RELATIVE_GAP * max(1.0, abs(bound)):
            return side
    return None


def warnings(problem, trajectory) -> list:
    """One sentence per free final time or parameter that ends on one of its bounds (none if fixed)."""
    out = []
    lo, hi = problem.tf_bounds
    if lo < hi:
        side = _on(float(trajectory.time[-1]), lo, hi)
        if side:
            bound = lo if side == "lower" else hi
            why = " (with unbounded controls a minimum-time problem can always go faster)" if side == "lower" else ""
            out.append(f"the final time T = {trajectory.time[-1]:.8g} sits on its {side} bound {bound:.8g}, so the optimum as posed "
                       f"lies at or beyond it{why}; fix: widen the bound if it is not a real limit, or bound the controls.")
    for v in problem.model.parameters:
        plo, phi = problem.bounds[v.name]
        value = trajectory.parameters.get(v.name)
        if value is None or not plo < phi:
            continue
        side = _on(float(value), plo, phi)
        if side:
            out.append(f"parameter `{v.name}` = {value:.8g} sits on its {side} bound {plo if side == 'lower' else phi:.8g}, so the "
                       f"optimum as posed lies at or beyond it; fix: widen the bound if it is not a real limit.")
    return out
