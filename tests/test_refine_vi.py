"""Mesh refinement with scheme='midpoint-vi': the step-doubling local error and the steps it splits.

Reference nobody here wrote: the swing-down optimum by Hermite–Simpson on 320 intervals (fourth
order, so far closer to J* than any mesh here), as in tests/test_variational.py.
"""
from __future__ import annotations

import math

import numpy as np

import colloc as cl
from colloc.pipeline.refine_vi import local_errors
from test_variational import pendulum_swing_down

TIGHT = {"tol": 1e-12}


def test_step_doubling_error_falls_at_third_order():
    """The midpoint rule is second order, so its local error is O(h³)."""
    errs = [local_errors(pendulum_swing_down(), cl.solve(pendulum_swing_down(), scheme="midpoint-vi", intervals=n, ipopt=TIGHT).trajectory).max()
            for n in (20, 40)]
    assert math.log2(errs[0] / errs[1]) > 2.5


def test_refinement_splits_steps_until_the_local_error_is_below_tolerance():
    fine = cl.solve(pendulum_swing_down(), scheme="hermite-simpson", intervals=320, ipopt=TIGHT).objective
    res = cl.solve(pendulum_swing_down(), scheme="midpoint-vi", intervals=10, refine=dict(tolerance=1e-4), ipopt=TIGHT)
    records = res.refinement
    assert res.success and records[-1]["max_error"] <= 1e-4 < records[0]["max_error"]
    assert records[-1]["intervals"] > 10 and res.trajectory.metadata["scheme"] == "midpoint-vi"
    gaps = [abs(r["objective"] - fine) for r in records]
    assert all(b < a for a, b in zip(gaps, gaps[1:])) and gaps[-1] < 0.1 * gaps[0]
    assert np.diff(res.trajectory.time).min() < np.diff(res.trajectory.time).max()  # split where the error was largest
