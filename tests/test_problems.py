"""Every problem script is built, solved on a coarse mesh and compared with its REFERENCE.

Each ``problems/NAME.py`` that defines ``REFERENCE = dict(value, source, tolerance[, quantity])``
is solved with its ``SOLVE`` defaults (a few dozen intervals) and IPOPT ``tol`` at least 100×
tighter than the relative ``tolerance`` asserted.  ``quantity`` is ``"objective"`` (the
default: the value the solver reports, so a maximization's reference is the negative of the
maximized quantity), ``"final NAME"`` (the value of variable ``NAME`` at the final time) or
``"measure: WHAT"`` (the script's own ``measure(result)``, e.g. a speed on the interpolant).
The sources of the values are in each script's docstring and in docs/problems.md (entry ids cited there).
"""
from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

import colloc as cl

PROBLEMS_DIR = Path(__file__).resolve().parents[1] / "problems"
DEFAULT_INTERVALS = 30
#: Problems whose solve takes more than ~5 s (the alp rider refines its mesh to 1e-6: ~10 s; the 2-D walking
#: tracking solves 50 intervals of an 18-muscle model; the OpenSim squat to stand, 18 muscles on a closed
#: chain: about a minute; the 2-D walking MocoInverse, 18 muscles on 24 intervals: ~15 s; the 2-D walking
#: prediction, 50 intervals: ~100 iterations).
SLOW = {"alp_rider", "gait2d_tracking", "osim_squat_to_stand", "gait2d_inverse", "gait2d_predictive"}
#: Scripts that load a robot of the optional example-robot-data wheel (colloc's `robots` extra).
ROBOTS = {"panda_reach", "solo12_jump", "solo12_stand", "solo12_trot", "ur5_min_time", "ur10_reach"}


def load(stem):
    """Import ``problems/<stem>.py`` by path, as the CLI does."""
    path = PROBLEMS_DIR / f"{stem}.py"
    spec = importlib.util.spec_from_file_location(f"problems.{stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def problem_stems():
    return sorted(p.stem for p in PROBLEMS_DIR.glob("*.py") if not p.stem.startswith("_"))


def referenced():
    params = []
    for stem in problem_stems():
        if hasattr(load(stem), "REFERENCE"):
            marks = [pytest.mark.slow] if stem in SLOW else []
            params.append(pytest.param(stem, marks=marks, id=stem))
    return params


def solve(module, **overrides):
    ref = module.REFERENCE
    given = getattr(module, "SOLVE", {})
    options = {"scheme": "hermite-simpson"} if "mesh" in given else {"scheme": "hermite-simpson", "intervals": DEFAULT_INTERVALS}
    options.update(given)
    options.update(overrides)
    ipopt = {**options.pop("ipopt", {}), "tol": min(1e-9, ref["tolerance"] * 1e-2), "print_level": 0}
    return cl.solve(module.build(), ipopt=ipopt, **options)


def measured(result, quantity, module=None):
    if quantity == "objective":
        return result.objective
    if quantity.startswith("measure: "):
        return module.measure(result)
    kind, _, name = quantity.partition(" ")
    assert kind == "final" and name, f"unknown REFERENCE quantity {quantity!r}"
    return result.trajectory.final(name)


def _needs_robots():
    from importlib import metadata

    pytest.importorskip("urdf_parser_py")
    try:
        metadata.distribution("example-robot-data")
    except metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")


@pytest.mark.parametrize("stem", problem_stems())
def test_builds_and_validates(stem):
    if stem in ROBOTS:
        _needs_robots()
    module = load(stem)
    assert module.__doc__ and "Source" in module.__doc__, f"{stem} needs a docstring with its source"
    problem = module.build()
    assert isinstance(problem, (cl.Problem, cl.MultiPhaseProblem))
    problem.validate()


@pytest.mark.parametrize("stem", problem_stems())
def test_reference_is_well_formed(stem):
    ref = getattr(load(stem), "REFERENCE", None)
    if ref is None:
        pytest.skip("no REFERENCE")
    assert set(ref) <= {"value", "source", "tolerance", "quantity"}
    assert math.isfinite(ref["value"]) and ref["source"] and 0 < ref["tolerance"] < 0.1
    quantity = ref.get("quantity", "objective")
    assert quantity == "objective" or quantity.startswith("final ") or quantity.startswith("measure: ")
    if quantity.startswith("measure: "):
        assert callable(getattr(load(stem), "measure", None)), f"{stem} names a measured quantity but has no measure(result)"


@pytest.mark.parametrize("stem", referenced())
def test_matches_reference(stem):
    if stem in ROBOTS:
        _needs_robots()
    module = load(stem)
    ref = module.REFERENCE
    result = solve(module)
    assert result.success, f"{stem}: {result.status} {result.message}"
    got = measured(result, ref.get("quantity", "objective"), module)
    assert got == pytest.approx(ref["value"], rel=ref["tolerance"]), ref["source"]


# -- analytic helpers exposed by the scripts -------------------------------------------------


def test_kirk_exact_states_meet_the_boundary_conditions():
    kirk = load("kirk")
    x1, x2 = kirk.exact_states([0.0, 2.0])
    np.testing.assert_allclose(x1, [0.0, 5.0], atol=1e-12)
    np.testing.assert_allclose(x2, [0.0, 2.0], atol=1e-12)
    # docs/problems.md A8 [DERIVED]
    np.testing.assert_allclose(kirk.constants(), [-7.29179207419799, -6.10482735969732], rtol=1e-12)


def test_kirk_states_match_the_analytic_solution():
    # Moco's testMocoAnalytic.cpp checks these states to 1e-5 with 50 mesh intervals (docs/problems.md A8).
    kirk = load("kirk")
    traj = solve(kirk, intervals=50).trajectory
    x1, x2 = kirk.exact_states(traj.time)
    np.testing.assert_allclose(traj["plant.x1"], x1, atol=1e-5)
    np.testing.assert_allclose(traj["plant.x2"], x2, atol=1e-5)


def test_linear_tangent_steering_analytic_values():
    lts = load("linear_tangent_steering")
    # docs/problems.md B8m [DERIVED]
    assert lts.theta0() == pytest.approx(1.17017700561676, rel=1e-12)
    assert lts.exact_final_speed() == pytest.approx(-lts.REFERENCE["value"], rel=1e-12)


def test_bryson_denham_formula():
    bd = load("bryson_denham")
    # docs/problems.md A3 [SEEN]: 4 for ell = 1/9, Breakwell 40/9 for ell = 0.1, 2 for ell >= 1/4
    assert bd.exact_objective() == pytest.approx(bd.REFERENCE["value"], rel=1e-15)
    assert bd.exact_objective(0.1) == pytest.approx(40.0 / 9.0, rel=1e-15)
    assert bd.exact_objective(0.3) == 2.0


def test_activation_mass_reference_is_the_gramian_formula():
    am = load("activation_mass")
    assert am.exact_objective() == pytest.approx(am.REFERENCE["value"], rel=1e-9)
    # with instantaneous activation the drive is a force on a double integrator: J* = 12 d²/(T³ F_max²)
    assert am.exact_objective(tau=1e-6) == pytest.approx(12.0 / 10.0**2, rel=1e-4)


def test_implicit_sqrt_states_match_the_closed_form():
    isq = load("implicit_sqrt")
    traj = solve(isq).trajectory
    np.testing.assert_allclose(traj["curve.y"], isq.exact_solution(traj.time), rtol=1e-6)
