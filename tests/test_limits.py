"""Bounds and path constraints between grid points: measured on the scheme's interpolant, reported by the
summary and ``colloc verify``, and imposed inside the intervals by ``path_points=k``.

References: the trapezoid's state interpolant (Kelly 2017, eq. 3.10) through x = 1 at both ends with
slopes +1 and −1 is 1 + s − s², whose peak 1.25 at s = ½ is derived by hand; the UR10's wrist speed limit
3.2 rad/s is its URDF's (example-robot-data 6.0.0).
"""
from __future__ import annotations

import importlib.util
import math
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

import colloc as cl
from colloc.simulate import limits
from colloc.simulate.checks import Check
from colloc.errors import OptionError

PROBLEMS = Path(__file__).resolve().parents[1] / "problems"


def load(stem):
    spec = importlib.util.spec_from_file_location(f"problems.{stem}", PROBLEMS / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _line_problem(upper=1.0):
    c = cl.Component("m")
    x, u = c.state("x", bounds=(-math.inf, upper)), c.control("u")
    c.derivative(x, u)
    prob = cl.Problem([c], t0=0.0, tf=1.0, name="line")
    prob.path(x + 0.0 * u, upper=upper, name="cap")
    prob.minimize(integral=u**2)
    return prob


def test_an_overshoot_between_two_grid_points_is_found_at_its_peak():
    traj = cl.Trajectory(np.array([0.0, 1.0]), {"m.x": np.array([1.0, 1.0]), "m.u": np.array([1.0, -1.0]),
                                               "m.x.dot": np.array([1.0, -1.0])},
                         {"m.x": "state", "m.u": "control", "m.x.dot": "derivative"}, {}, {"scheme": "trapezoidal"})
    found = {v["name"]: v for v in limits.violations(_line_problem(), traj)}
    # 20 points at s = j/21: the nearest to the peak is s = 10/21, x = 1 + s − s² = 1.24943
    assert found["m.x"]["value"] == pytest.approx(1.0 + 10 / 21 - (10 / 21) ** 2, rel=1e-12)
    assert found["m.x"]["excess"] == pytest.approx(0.25, rel=1e-2)
    assert found["path:cap"]["value"] == pytest.approx(found["m.x"]["value"])
    [bounds, cap] = limits.checks(_line_problem(), traj)
    assert isinstance(bounds, Check) and not bounds.passed and "`m.x` reaches 1.24943" in bounds.message
    assert bounds.name == "between:bounds" and cap.name == "between:cap" and not cap.passed


def test_a_resolved_solution_passes_between_its_grid_points():
    res = cl.solve(load("bryson_denham").build(), intervals=30, ipopt={"print_level": 0})
    between = res.accuracy["between"]
    assert between["name"] == "mass.x" and between["violated"] == []  # x ≤ 1/9 on its boundary arc, ~1e-4 over
    assert "limits     worst between grid points: `mass.x`" in res.summary()
    assert all(c.passed for c in limits.checks(load("bryson_denham").build(), res.trajectory))


def test_path_points_add_rows_inside_every_interval_and_hold_the_limits_there():
    prob = load("alp_rider").build()
    plain = cl.solve(prob, intervals=50, ipopt={"print_level": 0, "max_iter": 3000})
    assert plain.accuracy["between"]["name"] == "path:terrain" and plain.accuracy["between"]["relative"] > 0.1
    nlp = cl.build_nlp(prob, intervals=50, path_points=2)
    labels = nlp.rows.labels()
    assert sum(label.startswith("path:terrain@s=") for label in labels) == 2 * 50
    assert "path:terrain@s=0.333@k=0" in labels and "path:terrain@s=0.667@k=49" in labels
    bounded = cl.build_nlp(_line_problem(), intervals=4, path_points=3)
    assert sum(label.startswith("inside:m.x@s=") for label in bounded.rows.labels()) == 3 * 4


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True, 51])
def test_bad_path_points_are_refused(bad):
    with pytest.raises(OptionError, match="`path_points` must be a whole number from 0 to 50"):
        cl.solve(_line_problem(), intervals=4, path_points=bad)


def _needs_robots():
    pytest.importorskip("urdf_parser_py")
    try:
        metadata.distribution("example-robot-data")
    except metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")


def test_ur10_speeds_over_their_limit_between_grid_points_are_reported_then_held_with_path_points():
    """Least ∫|τ|² on 30 intervals: with no acceleration penalty and no path points a wrist speed reaches 5.4 rad/s
    between grid points (limit 3.2) and the result and ``colloc verify``'s check say so; with the script's
    settings (path_points=3, penalty 1e-3) the speed stays within 1 % of the limit everywhere."""
    _needs_robots()
    ur10 = load("ur10_reach")
    prob = ur10.build(acceleration_weight=0.0)
    res = cl.solve(prob, intervals=30, ipopt={"print_level": 0})
    assert res.success and ur10.measure(res) > 3.2 * 1.5
    between = res.accuracy["between"]
    assert between["name"].startswith("ur10.wrist") and between["bound"] == pytest.approx(3.2)
    assert any("between grid points" in w and "path_points=3" in w for w in res.warnings)
    # the light wrist makes the torques zig-zag: the warning proposes the acceleration penalty (measured to remove it)
    chatter = [w for w in res.warnings if "oscillates" in w]
    assert chatter and all("acceleration penalty" in w and "control_interpolation" not in w for w in chatter)
    assert not next(c for c in limits.checks(prob, res.trajectory) if c.name == "between:bounds").passed
    # at the grid points themselves the limit holds: the bounds check of the grid alone passes
    for joint in ur10.WRIST:
        assert np.abs(res.trajectory[f"ur10.{joint}_speed"]).max() <= 3.2 * (1 + 1e-6)
    held = cl.solve(ur10.build(), ipopt={"print_level": 0}, **ur10.SOLVE)
    assert held.success and ur10.measure(held) <= 3.2 * 1.01
    assert not any("between grid points" in w or "oscillates" in w for w in held.warnings)


def test_verify_checks_between_grid_points():
    from colloc.simulate.verify import verify

    prob = load("bryson_denham").build()
    res = cl.solve(prob, intervals=30, ipopt={"print_level": 0})
    names = [c.name for c in verify(prob, res)["checks"]]
    assert "between:bounds" in names
