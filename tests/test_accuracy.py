"""Every result says how far to trust it: the objective error estimate against published optima, the verdict
and the fixes it proposes, and bounds active on a free final time.

References (each problem script's docstring has the source):
alp rider J* = 2030.85609 (Betts 2010, pp. 163–165); hyper-sensitive B4a continuous optimum 1.3308077
(docs/problems.md B4a [COMPUTED]); Kirk's Example 5.1-1 J* = 16.7507233968 (analytic); linear tangent
steering −3.37630662124788 (analytic); Bryson–Denham J* = 4 (Bryson & Ho 1975); catalyst mixing
−0.0480556 (COPS 3.0, six digits).
"""
from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

import colloc as cl
from colloc.pipeline import accuracy
from colloc.results import oscillation
from colloc.errors import OptionError

PROBLEMS = Path(__file__).resolve().parents[1] / "problems"
IPOPT = {"tol": 1e-12, "print_level": 0}

#: True optima, for the error the estimate must predict.
OPTIMA = dict(alp_rider=2030.85609, hypersensitive=1.3308077, kirk=16.7507233968,
              linear_tangent_steering=-3.37630662124788, bryson_denham=4.0, catalyst_mixing=-0.0480556)


def load(stem):
    spec = importlib.util.spec_from_file_location(f"problems.{stem}", PROBLEMS / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _solve(stem, **options):
    module = load(stem)
    settings = {k: v for k, v in getattr(module, "SOLVE", {}).items() if k not in ("refine", "intervals", "scheme")}
    settings.update({"ipopt": IPOPT, **options})
    return cl.solve(module.build(), **settings)


@pytest.mark.parametrize("stem", [pytest.param(s, marks=[pytest.mark.slow] if s == "alp_rider" else []) for s in sorted(OPTIMA)])
def test_the_objective_error_estimate_is_within_a_factor_of_10_of_the_true_error(stem):
    """Hermite–Simpson at 10, 20 and 40 intervals: |estimate / (J* − J_h)| in [0.1, 10] (measured 0.2–3).

    Not at 80 for Bryson–Denham: there the true error (6e-8) is below IPOPT's bound relaxation of x ≤ ℓ
    (3.6e-7, see problems/bryson_denham.py), which no discretisation estimate can see."""
    for n in (10, 20, 40):
        res = _solve(stem, intervals=n)
        assert res.success
        true = OPTIMA[stem] - res.objective
        ratio = res.accuracy["objective_error"] / true
        assert 0.1 <= abs(ratio) <= 10, f"{stem} at {n} intervals: estimate {res.accuracy['objective_error']:.3e}, true {true:.3e}"


def test_alp_rider_on_200_intervals_says_it_is_not_resolved_and_what_to_do():
    """The case that asked for the estimate: 2087.78, 2.8 % high, once reported `solved` without a word."""
    res = _solve("alp_rider", intervals=200, ipopt={"print_level": 0})
    assert res.success and res.objective > OPTIMA["alp_rider"] * (1 + 1e-2)
    assert not res.accuracy["resolved"] and res.accuracy["relative_objective_error"] > 1e-3
    [note] = [w for w in res.warnings if w.startswith(accuracy.HEAD)]
    assert "refine=dict(tolerance=1e-06)" in note
    assert "NOT RESOLVED" in res.summary() and "accuracy   max relative local error" in res.summary()
    assert res.trajectory.metadata["accuracy"]["resolved"] is False


@pytest.mark.parametrize("stem", ["alp_rider", "catalyst_mixing"])
def test_default_results_land_within_1e_4_or_say_they_are_not_resolved(stem):
    """``cl.solve(build())`` with every default (Hermite–Simpson, 50 intervals, free interior controls)."""
    res = cl.solve(load(stem).build(), ipopt={"print_level": 0})
    error = abs(res.objective - OPTIMA[stem]) / abs(OPTIMA[stem])
    assert error <= 1e-4 or any(w.startswith(accuracy.HEAD) for w in res.warnings)
    assert error > 1e-4  # both are far off at these defaults (alp rider 19 %, catalyst 9e-4): the warning is there


@pytest.mark.slow
def test_the_proposed_refinement_resolves_the_alp_rider():
    """The fix the warning proposes, applied: ~10 s on 2 cores."""
    res = cl.solve(load("alp_rider").build(), intervals=200, refine=dict(tolerance=accuracy.PROPOSED_REFINEMENT),
                   ipopt={"print_level": 0})
    assert res.success and res.accuracy["resolved"]
    assert res.objective == pytest.approx(OPTIMA["alp_rider"], rel=1e-4)
    assert not any(w.startswith(accuracy.HEAD) for w in res.warnings)


def test_every_fix_the_catalyst_warnings_propose_removes_them():
    """Catalyst mixing with free midpoint controls chatters and is not resolved; each proposed fix, applied
    alone, leaves neither warning and lands within the reference's six digits."""
    build = load("catalyst_mixing").build
    res = cl.solve(build(), intervals=50, ipopt=IPOPT)  # the defaults: free interior controls
    [chatter] = [w for w in res.warnings if "oscillates" in w]
    assert any(w.startswith(accuracy.HEAD) for w in res.warnings)
    proposed = {oscillation.LINEAR_FIX: dict(control_interpolation="linear"), oscillation.REFINE_FIX: dict(refine={"tolerance": 1e-6})}
    assert [fix for fix in proposed if fix in chatter] == list(proposed)
    for fix, options in proposed.items():
        fixed = cl.solve(build(), intervals=50, ipopt=IPOPT, **options)
        assert not any("oscillates" in w or w.startswith(accuracy.HEAD) for w in fixed.warnings), fix
        assert fixed.objective == pytest.approx(OPTIMA["catalyst_mixing"], rel=2e-5), fix


def test_a_fix_already_in_use_is_not_proposed():
    assert oscillation.fixes(stride=2, control_interpolation="free") == [oscillation.LINEAR_FIX, oscillation.REFINE_FIX]
    assert oscillation.fixes(stride=2, control_interpolation="linear") == [oscillation.REFINE_FIX]
    assert oscillation.fixes(stride=1) == [oscillation.REFINE_FIX]  # the trapezoid has no interior controls to tie
    assert oscillation.fixes(stride=2, control_interpolation="linear", refining=True) == []
    # the UR10's wrist torques still zig-zag with tied interior controls: the warning must not propose them again
    res = _solve("catalyst_mixing", intervals=50, control_interpolation="free", scheme="trapezoidal")
    [chatter] = [w for w in res.warnings if "oscillates" in w]
    assert "control_interpolation" not in chatter and "refine" in chatter


def test_a_minimum_time_problem_with_unbounded_controls_names_its_final_time_on_its_bound():
    c = cl.Component("m")
    x, v, u = c.state("x"), c.state("v"), c.control("u")
    c.derivative(x, v)
    c.derivative(v, u)
    prob = cl.Problem([c], t0=0.0, tf=(0.1, 10.0), name="unbounded_min_time")
    prob.initial({x: 0.0, v: 0.0})
    prob.final({x: 1.0, v: 0.0})
    prob.minimize(final=prob.tf)
    res = cl.solve(prob, intervals=20, ipopt={"print_level": 0})
    assert res.success and res.trajectory.time[-1] == pytest.approx(0.1, rel=1e-6)
    [note] = [w for w in res.warnings if "final time" in w]
    assert "lower bound 0.1" in note and "fix:" in note
    assert "warning: the final time T = " in res.summary()


def test_a_parameter_on_its_bound_is_named_and_one_inside_is_not():
    for upper, named in ((0.5, True), (5.0, False)):
        c = cl.Component("m")
        x, k = c.state("x"), c.parameter("k", bounds=(0.0, upper))
        c.derivative(x, -k * x)
        prob = cl.Problem([c], t0=0.0, tf=1.0, name="decay")
        prob.initial({x: 1.0})
        prob.minimize(final=(x - math.exp(-1.0)) ** 2)  # the optimum is k = 1
        res = cl.solve(prob, intervals=10, ipopt={"print_level": 0})
        assert any("parameter `m.k`" in w and "upper bound" in w for w in res.warnings) == named


def test_the_record_is_in_the_file_and_the_estimate_can_be_turned_off(tmp_path):
    res = _solve("kirk", intervals=20)
    path = res.trajectory.write(tmp_path / "kirk.csv")
    record = cl.Trajectory.read(path).metadata["accuracy"]
    assert record["max_error"] == pytest.approx(res.accuracy["max_error"]) and record["resolved"] is True
    assert record["seconds"] >= 0.0
    off = _solve("kirk", intervals=20, accuracy=False)
    assert off.accuracy is None and "accuracy" not in off.trajectory.metadata
    loose = _solve("alp_rider", intervals=20, accuracy=0.5, ipopt={"print_level": 0})
    assert loose.accuracy["tolerance"] == 0.5 and loose.accuracy["resolved"]


@pytest.mark.parametrize("bad", [0, -1e-3, "tight", True, math.inf])
def test_a_bad_accuracy_tolerance_is_refused(bad):
    with pytest.raises(OptionError, match="`accuracy` must be a positive relative objective error"):
        cl.solve(load("kirk").build(), intervals=5, accuracy=bad)
