"""Multi-phase results say how far to trust them: every phase's local error and the objective error estimate.

References nobody here wrote: the closed-form apex of the two-phase rocket (problems/two_phase_rocket.py,
Tsiolkovsky with gravity loss) and the bouncing ball's flight times ``e^k √(2h₀/g)``
(problems/bouncing_ball.py, Newton's restitution law).  IPOPT ``tol`` is 1e-12 and its bound relaxation is off:
the rocket's optimum has its mass on the bound ``m ≥ m_dry``, and the default relaxation of that bound (1e-8)
lets it burn more propellant than it has, an error of ~4e-8 that no discretisation estimate can see.
"""
from __future__ import annotations

import importlib

import numpy as np

import colloc as cl
from colloc.pipeline import accuracy
from colloc.pipeline.phase_accuracy import phase_errors

EXACT = {"tol": 1e-12, "bound_relax_factor": 0.0, "print_level": 0}


def load(stem):
    return importlib.import_module(f"problems.{stem}")


def test_rocket_objective_error_estimate_is_within_a_factor_of_10_of_the_true_error():
    """5, 10 and 20 Hermite–Simpson intervals per phase (measured ratio 0.58–0.60): the error is all the burn's
    (the coast's dynamics are quadratic in time, which the scheme integrates exactly)."""
    rocket = load("two_phase_rocket")
    for n in (5, 10, 20):
        res = cl.solve(rocket.build(), scheme="hermite-simpson", intervals=n, ipopt=EXACT)
        assert res.success
        acc, true = res.accuracy, rocket.REFERENCE["value"] - res.objective
        assert 0.1 <= acc["objective_error"] / true <= 10, f"{n} intervals: estimate {acc['objective_error']:.3e}, true {true:.3e}"
        assert acc["phase"] == "burn" and set(acc["phases"]) == {"burn", "coast"}
        assert acc["phases"]["coast"]["max_error"] < 1e-12 < acc["phases"]["burn"]["max_error"] == acc["max_error"]
        assert acc["objective_error"] == sum(p["objective_error"] for p in acc["phases"].values())
        assert acc["time"][1] <= res.durations[0] + 1e-12  # the worst interval is placed in the result's time


def test_bouncing_ball_is_integrated_exactly_and_says_so():
    """Gravity makes the flight quadratic in time, so Hermite–Simpson is exact: the flight times match the closed
    form to round-off on every mesh, and so does the estimate (a factor of 10 means nothing between round-offs).
    Feasibility only: no objective, so no objective error and no verdict."""
    ball = load("bouncing_ball")
    for n in (2, 4, 8):
        res = cl.solve(ball.build(), scheme="hermite-simpson", intervals=n, ipopt=EXACT)
        assert res.success
        assert np.max(np.abs(res.durations - np.array(ball.exact_durations()))) < 1e-12
        acc = res.accuracy
        assert acc["max_error"] < 1e-12 and len(acc["phases"]) == 7
        assert np.isnan(acc["objective_error"]) and acc["resolved"] is None


def test_an_unresolved_phase_is_named_in_the_summary_the_warning_and_the_file(tmp_path):
    """Above the threshold the summary says NOT RESOLVED, and the warning names the phase and proposes the fix."""
    rocket = load("two_phase_rocket")
    res = cl.solve(rocket.build(), scheme="hermite-simpson", intervals=5, ipopt=EXACT, accuracy=1e-7)
    line = next(x for x in res.summary().splitlines() if x.strip().startswith("accuracy"))
    assert "of phase burn" in line and "NOT RESOLVED" in line
    note = next(w for w in res.warnings if w.startswith(accuracy.HEAD))
    assert "in phase `burn`" in note and "refine=dict(tolerance=1e-06)" in note
    path = res.trajectory.write(tmp_path / "rocket.csv")
    back = cl.Trajectory.read(path).metadata["accuracy"]
    assert back["phase"] == "burn" and back["phases"]["coast"]["max_error"] == res.accuracy["phases"]["coast"]["max_error"]


def test_refinement_of_a_multi_phase_problem_reads_the_same_numbers():
    rocket = load("two_phase_rocket")
    res = cl.solve(rocket.build(), scheme="hermite-simpson", intervals=5, ipopt=EXACT)
    errors = phase_errors(rocket.build(), res.trajectory)
    assert [e.max() for e in errors] == [res.accuracy["phases"][n]["max_error"] for n in ("burn", "coast")]
    refined = cl.solve(rocket.build(), scheme="hermite-simpson", intervals=5, ipopt=EXACT, refine=dict(tolerance=1e-9))
    last = refined.refinement[-1]
    assert last["phase_errors"] == {n: p["max_error"] for n, p in refined.accuracy["phases"].items()}
    assert refined.accuracy["resolved"] and not any(w.startswith(accuracy.HEAD) for w in refined.warnings)
