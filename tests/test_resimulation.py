"""Re-simulation of multi-phase results with event detection (colloc.simulate.events.resimulate_phases).

The bouncing ball's phases are exact (ballistic flight is quadratic, Hermite–Simpson integrates
it exactly), so every guard time must be found again to the integrator's accuracy.  The simplest
walker (Garcia et al. 1998) and Kelly's five-link biped (SIAM Review 2017) must reproduce their
heel-strike time to 1e-6 and their states to the scheme's accuracy, which shrinks with the mesh.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import colloc as cl
from colloc.errors import ModelError
from colloc.simulate.events import format_resimulation, resimulate_phases
from colloc.pipeline.multiphase_problem import MultiPhaseProblem, Phase, solve_phases

PROBLEMS = Path(__file__).resolve().parents[1] / "problems"
TIGHT = {"tol": 1e-12, "bound_relax_factor": 1e-14, "print_level": 0}


def load(stem):
    spec = importlib.util.spec_from_file_location(f"problems.{stem}", PROBLEMS / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bouncing_ball_phases_found_again():
    ball = load("bouncing_ball")
    mp = ball.build(bounces=2, restitution=0.8)
    res = solve_phases(mp, intervals=4, ipopt=TIGHT)
    assert res.success
    rep = resimulate_phases(mp, res)
    assert [p["event"] for p in rep["phases"]] == ["ground", "apex", "ground", "apex", "ground"]
    assert rep["max_time_error"] <= 1e-9
    assert rep["max_state_error"] <= 1e-9
    # Newton's law at the first bounce: P = m (1 + e) |ẏ⁻| with |ẏ⁻| = √(2 g h₀)
    assert rep["phases"][0]["impulse"][0] == pytest.approx(1.8 * np.sqrt(2 * 9.81), rel=1e-9)
    assert rep["periodic_error"] is None


@pytest.mark.parametrize("intervals, state_tol", [(10, 1e-6), (20, 1e-8)])
def test_simplest_walker_heel_strike_reproduced(intervals, state_tol, tmp_path):
    sw = load("simplest_walker")
    mp = sw.build()
    res = solve_phases(mp, scheme="radau-4", intervals=intervals, ipopt=TIGHT)
    assert res.success
    rep = resimulate_phases(mp, res)
    step = rep["phases"][0]
    assert step["event"] == "heel_strike"  # the mid-stance crossing (θ > 0) is skipped
    assert step["time_error"] <= 1e-6
    assert step["state_error"] <= state_tol  # measured 1.6e-7 (10 intervals), 5.2e-9 (20)
    assert rep["periodic_error"] <= state_tol
    text = format_resimulation(rep)
    assert "heel_strike" in text and "periodicity" in text
    again = resimulate_phases(mp, cl.Trajectory.read(res.trajectory.write(tmp_path / "walker.csv")))
    assert again["phases"][0]["time_found"] == pytest.approx(step["time_found"], abs=1e-12)


@pytest.fixture(scope="module")
def biped_result():
    biped = load("five_link_biped")
    mp = biped.build()
    return mp, solve_phases(mp, scheme="radau-3", intervals=40, ipopt={"tol": 1e-10, "print_level": 0})


@pytest.mark.slow
def test_five_link_biped_heel_strike_reproduced(biped_result):
    mp, res = biped_result
    assert res.success
    rep = resimulate_phases(mp, res)
    step = rep["phases"][0]
    assert step["event"] == "heel_strike"
    assert step["time_error"] <= 1e-6  # measured 1.7e-7 (radau-3, 40 intervals); 5e-5 with HS 25
    assert step["state_error"] <= 2e-4  # open-loop drift of an unstable gait; measured 5.5e-5
    assert step["impulse"][0] > 0  # the heel pushes, never pulls


def test_resimulation_errors():
    body = cl.Multibody("p", coordinates=["x", "y"])
    body.kinetic_energy = 0.5 * (body.v[0] ** 2 + body.v[1] ** 2)
    body.holonomic("rod", body.q[0] ** 2 + body.q[1] ** 2 - 1)
    prob = cl.Problem([body], t0=0.0, tf=1.0, name="p")
    mp = MultiPhaseProblem([Phase(prob)])
    traj = cl.Trajectory(np.array([0.0, 0.5, 1.0]), {n: np.zeros(3) for n in ("p.x", "p.y", "p.x_speed", "p.y_speed")},
                         metadata={"scheme": "trapezoidal"})
    traj = cl.PhasedTrajectory([traj], ["p"])
    with pytest.raises(ModelError, match="Phase `p` has kinematic constraints"):
        resimulate_phases(mp, traj)
    with pytest.raises(ModelError, match="The result has 2 phases but problem `multiphase` has 1"):
        resimulate_phases(mp, cl.PhasedTrajectory([traj.phases[0], traj.phases[0]], ["a", "b"]))
