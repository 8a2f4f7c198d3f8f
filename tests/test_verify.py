"""Forward simulation of solutions (colloc.verify).

Kirk's problem (docs/problems.md A8) is smooth, so the simulated states must approach the collocated
ones as the mesh refines, at the scheme's order; the Cartesian pendulum (docs/problems.md D1) exercises
IDAS with the multiplier as an algebraic variable, and a residual nonlinear in ẏ exercises IDAS
with the derivative as one.
"""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import colloc as cl
from colloc.simulate.verify import plot_simulation, report, simulate_controls

ROOT = Path(__file__).resolve().parents[1]


def load(stem):
    spec = importlib.util.spec_from_file_location(f"problems.{stem}", ROOT / "problems" / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


kirk = load("kirk")
TIGHT = {"tol": 1e-12}


def simulate(module, scheme, n, **kw):
    res = cl.solve(module.build(), scheme=scheme, intervals=n, ipopt=TIGHT)
    assert res.success
    return simulate_controls(module.build(), res.trajectory, **kw), res.trajectory


@pytest.mark.parametrize("scheme, order", [("hermite-simpson", 4), ("radau-3", 4), ("trapezoidal", 2)])
def test_kirk_simulation_error_is_small_and_shrinks_with_the_mesh(scheme, order):
    meshes = [10, 20, 40]
    sims = [simulate(kirk, scheme, n)[0] for n in meshes]
    largest = np.array([s["max_error"] for s in sims])
    assert all(s["success"] and s["integrator"] == "cvodes" for s in sims)
    assert (np.diff(largest) < 0).all(), largest
    slope = np.polyfit(np.log(1.0 / np.array(meshes)), np.log(largest), 1)[0]
    assert slope >= order - 0.5, (slope, largest)
    finals = np.array([s["final_error"] for s in sims])
    assert finals[-1] < {"hermite-simpson": 1e-6, "radau-3": 1e-6, "trapezoidal": 1e-2}[scheme]
    if scheme != "radau-3":  # Radau's mesh-point values are superconvergent, its final error is tiny at once
        assert (np.diff(finals) < 0).all(), finals


def test_simulation_layout_and_values():
    sim, traj = simulate(kirk, "hermite-simpson", 8, substeps=5)
    assert sim["time"].shape == (8 * 5 + 1,)
    np.testing.assert_allclose(sim["time"][[0, -1]], [0.0, 2.0])
    assert (np.diff(sim["time"]) > 0).all()
    for name in ("plant.x1", "plant.x2"):
        assert sim["states"][name].shape == sim["time"].shape
        assert sim["states"][name][0] == traj[name][0]
        np.testing.assert_allclose(sim["collocated"][name][::5], traj[name][::2], atol=1e-12)  # mesh points
        np.testing.assert_allclose(sim["errors"][name], np.abs(sim["states"][name] - sim["collocated"][name]))
    np.testing.assert_allclose(sim["error_over_time"], np.maximum(sim["errors"]["plant.x1"], sim["errors"]["plant.x2"]))
    assert sim["final_error"] == sim["error_over_time"][-1] and sim["max_error"] == sim["error_over_time"].max()
    # the simulated end state is the analytic optimum up to the collocation error (Kirk eqs. 5.1-69/70)
    x1, x2 = kirk.exact_states(2.0)
    assert abs(sim["states"]["plant.x1"][-1] - x1) < 1e-4 and abs(sim["states"]["plant.x2"][-1] - x2) < 1e-4


def test_simulation_from_a_file_gives_the_same_numbers(tmp_path):
    sim, traj = simulate(kirk, "radau-3", 10)
    back = cl.Trajectory.read(traj.write(tmp_path / "kirk.csv"))
    again = simulate_controls(kirk.build(), back)
    np.testing.assert_allclose(again["error_over_time"], sim["error_over_time"], rtol=1e-6, atol=1e-14)


def test_constrained_pendulum_uses_idas_and_converges():
    pendulum = load("pendulum_cartesian")
    coarse = simulate(pendulum, "hermite-simpson", 20)[0]
    fine = simulate(pendulum, "hermite-simpson", 40)[0]
    assert coarse["integrator"] == fine["integrator"] == "idas"
    assert coarse["success"] and fine["success"]
    assert fine["max_error"] < coarse["max_error"] / 4
    assert fine["final_error"] < 1e-3


def test_nonlinear_implicit_residual_uses_idas():
    c = cl.Component("curve")
    y = c.state("y")
    u = c.control("u")
    c.residual(y, c.dot(y) + c.dot(y) ** 3 - 2 + u)  # no explicit form
    prob = cl.Problem([c], t0=0.0, tf=1.0, name="nonaffine")
    prob.initial({y: 0.0})
    prob.final({y: 1.2})
    prob.minimize(integral=u**2)
    res = cl.solve(prob, intervals=20, ipopt=TIGHT)
    sim = simulate_controls(prob, res.trajectory)
    assert sim["integrator"] == "idas" and sim["success"]
    assert sim["max_error"] < 1e-6


def test_report_and_plot():
    sim = simulate(kirk, "hermite-simpson", 10)[0]
    text = report(sim)
    assert "cvodes" in text and "plant.x1" in text and f"{sim['final_error']:.3e}" in text
    fig = plot_simulation(sim)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["plant.x1", "plant.x2", "state error"]
    assert fig.axes[-1].get_yscale() == "log"
    assert len(fig.axes[0].lines) == 2
    with pytest.raises(cl.FileFormatError, match="plant.x3"):
        plot_simulation(sim, names=["plant.x3"])


def test_a_trajectory_that_does_not_match_the_problem_is_refused():
    traj = cl.solve(kirk.build(), intervals=4).trajectory
    other = load("double_integrator_energy").build()
    with pytest.raises(cl.FileFormatError, match="mass.x"):
        simulate_controls(other, traj)
