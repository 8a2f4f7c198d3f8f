"""A homotopy step that ends in IPOPT's restoration failure is tried once more from its own last iterate, with
IPOPT's multipliers and barrier started afresh (``contact_implicit.RETRY``); a second failure ends the homotopy.

The failure is injected (the step's outcome reported as a restoration failure), so the test does not hang on a
problem that happens to fail; the ball that bounces to its target keeps its reference optimum, 3.98359237 (the
two-phase solve, problems/bounce_to_target.py).
"""
from __future__ import annotations

import pytest

import colloc as cl
from colloc.pipeline import contact_implicit
from colloc.solvers.ipopt import IpoptBackend

from test_problems import load


def _injected(monkeypatch, failing):
    """Report the solves numbered in ``failing`` (from 0) as restoration failures; record each run's options and
    whether it started from multipliers."""
    runs, outcome, run = [], IpoptBackend.outcome, IpoptBackend.run

    def recorded(nlp, opts, *args):
        runs.append(dict(opts=dict(opts), multipliers=args[-2] is not None))
        return run(nlp, opts, *args)

    def reported(*args):
        o = outcome(*args)
        if len(runs) - 1 in failing:
            return o._replace(status=cl.Status.RESTORATION_FAILED, success=False)
        return o

    monkeypatch.setattr(IpoptBackend, "run", staticmethod(recorded))
    monkeypatch.setattr(IpoptBackend, "outcome", staticmethod(reported))
    return runs


def test_a_step_that_fails_in_restoration_is_tried_again_cold_from_its_iterate(monkeypatch):
    bt = load("bounce_to_target")
    runs = _injected(monkeypatch, failing={2})
    res = cl.solve(bt.build(), **bt.SOLVE)
    assert res.success, res.message
    steps = res.contact["steps"]
    again = [k for k, s in enumerate(steps) if s.get("retry")]
    assert again == [3] and steps[2]["status"] == "restoration-failed" and steps[2]["relaxation"] == steps[3]["relaxation"]
    assert runs[2]["multipliers"] and not runs[3]["multipliers"]  # the retry starts from no multipliers,
    assert runs[3]["opts"]["mu_init"] == contact_implicit.RETRY["mu_init"]  # with its own barrier
    assert "warm_start_init_point" not in runs[3]["opts"] and runs[3]["opts"]["bound_push"] == 1e-9  # at the iterate
    assert res.iterations == sum(s["iterations"] for s in steps)
    assert res.objective == pytest.approx(bt.REFERENCE["value"], abs=bt.REFERENCE["tolerance"])


def test_a_step_that_fails_again_ends_the_homotopy_as_a_failure(monkeypatch):
    bt = load("bounce_to_target")
    runs = _injected(monkeypatch, failing={1, 2})
    res = cl.solve(bt.build(), **dict(bt.SOLVE, free_steps=False))  # one homotopy, no second stage
    assert not res.success and res.status is cl.Status.RESTORATION_FAILED
    assert len(runs) == 3 and [s.get("retry", False) for s in res.contact["steps"]] == [False, False, True]
    assert res.trajectory.metadata["status"] == "restoration-failed"  # the last iterate, kept
