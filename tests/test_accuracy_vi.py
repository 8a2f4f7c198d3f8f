"""Midpoint-vi results say how far to trust them: step doubling on every step, added up into an error estimate.

Reference nobody here wrote: the double pendulum swing-up's converged Hermite–Simpson optimum
(problems/double_pendulum_swing.py, REFERENCE, 162.15184481, good to 6e-9 relative), far closer to J* than
any midpoint-vi mesh here (second order).
"""
from __future__ import annotations

import importlib
import math

import colloc as cl
from colloc.pipeline import accuracy, refine_vi

TIGHT = {"tol": 1e-10, "print_level": 0}


def swing():
    return importlib.import_module("problems.double_pendulum_swing")


def test_the_step_doubling_estimate_is_within_a_factor_of_10_of_the_true_error():
    """20, 40 and 80 steps: Σ ε_k over |J_h − J*| / J* measured 1.4–1.6; every mesh says it is not resolved."""
    dp = swing()
    J = dp.REFERENCE["value"]
    for n in (20, 40, 80):
        res = cl.solve(dp.build(), scheme="midpoint-vi", intervals=n, ipopt=TIGHT)
        acc = res.accuracy
        true = abs(res.objective - J) / J
        assert 0.1 <= acc["relative_objective_error"] / true <= 10, f"{n} steps: estimate {acc['relative_objective_error']:.2e}, true {true:.2e}"
        assert acc["method"] == "step doubling" and acc["resolved"] is False
        assert acc["max_error"] == res.interval_errors.max() == refine_vi.local_errors(dp.build(), res.trajectory).max()
        assert "NOT RESOLVED" in res.summary() and any(w.startswith(accuracy.HEAD) for w in res.warnings)


def test_the_intervals_the_warning_proposes_resolve_the_swing_up():
    """The midpoint rule is second order: the warning's count ``n √(2 Σε / tolerance)`` lands within it."""
    dp = swing()
    res = cl.solve(dp.build(), scheme="midpoint-vi", intervals=40, ipopt=TIGHT)
    note = next(w for w in res.warnings if w.startswith(accuracy.HEAD))
    proposed = int(note.split("intervals=")[1].split()[0])
    assert proposed == math.ceil(40 * math.sqrt(2 * res.accuracy["relative_objective_error"] / accuracy.TOLERANCE))
    fine = cl.solve(dp.build(), scheme="midpoint-vi", intervals=proposed, ipopt=TIGHT)
    assert abs(fine.objective - dp.REFERENCE["value"]) / dp.REFERENCE["value"] < accuracy.TOLERANCE
    assert fine.accuracy["resolved"] and not any(w.startswith(accuracy.HEAD) for w in fine.warnings)
