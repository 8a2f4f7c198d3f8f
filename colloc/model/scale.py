"""Numbers a double cannot resolve against IPOPT's tolerances: refused by name before the build, or named in a failed result.

IPOPT meets constraints to an absolute tolerance (``constr_viol_tol`` = 1e-4; about 1e-8 with colloc's
``tol``) and stops iterates beyond 1e20 as diverging.  A double holds about 16 significant digits, so a
value of 1e12 is resolved only to 2.2e-4: a defect between states of that size cannot be met to IPOPT's
tolerance, whatever the mesh.  And a value of 1e-12 is met by 0.  A problem that forces such values —
an initial or final value, a guess, a time, a change between initial and final values, or a state that
must cross its range within a very short horizon (rates ~ range / horizon) — is refused with the
quantity named and the cure (other units); a solve that fails among values that large names the largest.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ProblemError

#: Magnitude from which a double resolves a value more coarsely (|v| · 2.2e-16 ≥ 2.2e-4) than IPOPT's
#: constraint tolerance 1e-4.
MAX_MAGNITUDE = 1e12

#: Smallest nonzero value (or change) a trajectory may be made to take: IPOPT meets constraints to about
#: 1e-8 (colloc's ``tol``), so 1e-6 is resolved to 1 % and 1e-12 not at all (x ≡ 0 then meets x(T) = 1e-12,
#: and the objective of moving nothing is reported as solved).
MIN_MAGNITUDE = 1e-6

CURE = "express it in other units (colloc solves best when values and rates are within a few orders of 1)"


def check_problem_scale(problem) -> None:
    """Refuse a problem whose given numbers, or the rates they imply over the horizon, reach ``MAX_MAGNITUDE``."""
    t0, tf = problem.t0_value, problem.tf_bounds[1]
    for what, value in (("The initial time t0", t0), ("The final time tf", tf)):
        _refuse_large(what, value, "time")
    horizon = tf - t0
    for which, given in (("initial", problem.initial_bounds), ("final", problem.final_bounds)):
        for name, (lo, hi) in given.items():
            if lo == hi:  # a value the trajectory must take (a wide range may be a stand-in for none)
                _refuse_large(f"The {which} value of `{name}`", lo, f"`{name}`")
                _refuse_small(f"The {which} value of `{name}`", lo, f"`{name}`")
    for name, (kind, data) in problem.guesses.items():
        values = [data] if kind == "constant" else list(data) if kind == "linear" else list(np.ravel(data[1]))
        for v in values:
            _refuse_large(f"The guess of `{name}`" if name != "tf" else "The guess of tf", v, f"`{name}`")
    for name in set(problem.initial_bounds) & set(problem.final_bounds):
        a, b = problem.initial_bounds[name], problem.final_bounds[name]
        change = max(0.0, a[0] - b[1], b[0] - a[1])  # the least change the two ranges force
        if a[0] == a[1] and b[0] == b[1]:  # two fixed values: their difference is what the trajectory must achieve
            _refuse_small(f"The change of `{name}` from its initial to its final value", b[0] - a[0], f"`{name}`")
        if change / horizon >= MAX_MAGNITUDE:
            raise ProblemError(
                f"`{name}` must change by {change:g} within the horizon of {horizon:g}, a rate of at least "
                f"{change / horizon:.3g} per unit time: residual rows with rates that large are met only to ~1e-4 in double "
                f"precision, and the controls driving them pass IPOPT's limit of 1e20; measure time (or `{name}`) in other "
                "units so that the horizon and the change are within a few orders of 1.")


def horizon_note(problem) -> str:
    """For a failed solve: a sentence naming the state whose forced change over the horizon implies second
    derivatives of ``MAX_MAGNITUDE`` or more (change / horizon²: the controls of a double integrator), or ``""``."""
    if not hasattr(problem, "initial_bounds"):
        return ""
    horizon = problem.tf_bounds[1] - problem.t0_value
    worst, name = 0.0, None
    for key in set(problem.initial_bounds) & set(problem.final_bounds):
        a, b = problem.initial_bounds[key], problem.final_bounds[key]
        change = max(0.0, a[0] - b[1], b[0] - a[1])
        if change > worst:
            worst, name = change, key
    if name is None or worst / horizon**2 < MAX_MAGNITUDE:
        return ""
    return (f"The horizon {horizon:g} is short for the change of `{name}` ({worst:g}): rates of {worst / horizon:.2g} and second "
            f"derivatives of {worst / horizon**2:.2g} per unit time², which IPOPT resolves poorly; measure time (or `{name}`) "
            "in other units so that both are within a few orders of 1.")


def _refuse_large(what, value, thing):
    if math.isfinite(value) and abs(value) >= MAX_MAGNITUDE:
        raise ProblemError(f"{what} is {value:g}; a double resolves it only to {abs(value) * 2.2e-16:.2g}, coarser than IPOPT's "
                           f"constraint tolerance (1e-4): {CURE.replace('it', thing, 1)}.")


def _refuse_small(what, value, thing):
    if value != 0 and abs(value) < MIN_MAGNITUDE:
        raise ProblemError(f"{what} is {value:g}, below what IPOPT's tolerance (about 1e-8) resolves (a trajectory that "
                           f"misses it by all of it still meets it): {CURE.replace('it', thing, 1)}.")


def large_values(w, name_of, variable_label) -> str:
    """For a failed solve: a sentence naming the largest variable at or beyond ``MAX_MAGNITUDE`` in ``w``, or ``""``;
    ``name_of(j)`` and ``variable_label(j)`` name entry ``j`` of ``w`` (called only for the sentence)."""
    w = np.asarray(w, dtype=float).ravel()
    size = np.where(np.isfinite(w), np.abs(w), 0.0)
    if not size.size or size.max() < MAX_MAGNITUDE:
        return ""
    j = int(np.argmax(size))
    return (f"{variable_label(j)} is {w[j]:.3g}, too large for IPOPT to resolve the rows it enters to its tolerances in double "
            f"precision: {CURE.replace('it', f'`{name_of(j)}` (or time)', 1)}.")
