"""Figures of trajectories (Agg backend, set in conftest): subplots, titles, overlays, bounds, files;
violation bars, mesh-refinement convergence and GIF animations of multibody points."""
from __future__ import annotations

import os
import subprocess
import sys

import casadi as ca
import matplotlib
import numpy as np
import pytest
from PIL import Image

import colloc as cl
from colloc.errors import FileFormatError, OptionError
from colloc.viz.plot import VIOLATION_FLOOR, animate, model_points, plot_refinement, plot_trajectory, plot_violations, save_figure
from colloc.viz.plot import _point_positions

matplotlib.use("Agg")


@pytest.fixture(autouse=True)
def close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def make_traj(scale=1.0, columns=("a.x", "a.u", "a.rod.lambda")):
    t = np.linspace(0.0, 2.0, 11)
    kinds = {"a.x": "state", "a.u": "control", "a.rod.lambda": "multiplier", "a.x.dot": "derivative"}
    cols = {n: scale * np.sin(t + i) for i, n in enumerate(columns)}
    if "a.x" in cols:
        cols["a.x.dot"] = scale * np.cos(t)
    return cl.Trajectory(t, cols, {n: kinds[n] for n in cols})


def titles(fig):
    return [ax.get_title() for ax in fig.axes]


def dashed_levels(ax):
    return sorted(float(line.get_ydata()[0]) for line in ax.lines if line.get_linestyle() == "--")


def test_one_subplot_per_state_control_and_multiplier():
    fig = plot_trajectory(make_traj())
    assert len(fig.axes) == 3
    assert titles(fig) == ["a.x", "a.u", "a.rod.lambda"]  # no a.x.dot
    assert fig.axes[-1].get_xlabel() == "time"
    assert fig.legends == []  # one trajectory, no labels: no legend


def test_grid_holds_many_variables():
    t = np.linspace(0, 1, 5)
    traj = cl.Trajectory(t, {f"c.s{i}": t * i for i in range(7)})
    fig = plot_trajectory(traj)
    assert len(fig.axes) == 7  # unused cells of the 3 × 3 grid are removed
    assert titles(fig) == [f"c.s{i}" for i in range(7)]


def test_solved_trajectory_is_drawn_with_scheme_interpolant():
    c = cl.Component("mass")
    x, v, u = c.state("x"), c.state("v"), c.control("u")
    c.derivative(x, v)
    c.derivative(v, u)
    prob = cl.Problem([c], tf=1.0)
    prob.initial({x: 0.0, v: 0.0})
    prob.final({x: 1.0, v: 0.0})
    prob.minimize(integral=u**2)
    traj = cl.solve(prob, intervals=4).trajectory
    fig = plot_trajectory(traj)
    assert titles(fig) == ["mass.x", "mass.v", "mass.u"]
    curve = fig.axes[0].lines[0]
    t, y = curve.get_xdata(), curve.get_ydata()
    assert t.size > traj.time.size  # dense curve between grid points
    s = t / 1.0
    np.testing.assert_allclose(y, 3 * s**2 - 2 * s**3, atol=1e-8)  # exact cubic (Kelly 2017 §2)


def test_overlay_labels_and_legend():
    fig = plot_trajectory([make_traj(), make_traj(2.0)], labels=["first", "second"])
    assert len(fig.axes) == 3
    for ax in fig.axes:
        assert len([ln for ln in ax.lines if ln.get_linestyle() == "-"]) == 2
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["first", "second"]


def test_overlay_of_different_columns_uses_union():
    fig = plot_trajectory([make_traj(columns=("a.x",)), make_traj(columns=("a.u",))], labels=["x only", "u only"])
    assert titles(fig) == ["a.x", "a.u"]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["x only", "u only"]


def test_names_select_columns_in_order():
    fig = plot_trajectory(make_traj(), names=["a.u", "a.x.dot"])
    assert titles(fig) == ["a.u", "a.x.dot"]


def test_every_finite_bound_is_dashed_and_far_ones_are_named_beyond_the_clipped_axis():
    # data: a.x = sin t in [0, 1]; a.u = sin(t + 1); a.rod.lambda = sin(t + 2) in [-0.76, 0.91]
    fig = plot_trajectory(make_traj(), bounds={"a.x": (-0.2, 1.0), "a.u": (-1e3, 1e3), "a.rod.lambda": (-np.inf, 1.5)})
    ax_x, ax_u, ax_lam = fig.axes
    assert dashed_levels(ax_x) == [-0.2, 1.0]
    lo, hi = ax_x.get_ylim()
    assert lo < -0.2 and hi > 1.0  # near bounds are in view
    assert dashed_levels(ax_u) == [-1e3, 1e3]  # drawn, but beyond the axis, which stays on the data
    assert ax_u.get_ylim()[1] < 10
    assert sorted(t.get_text() for t in ax_u.texts) == ["↑ 1000", "↓ -1000"]
    assert dashed_levels(ax_lam) == [1.5] and len(ax_lam.texts) == 0


def test_controls_are_drawn_as_their_grid_values_and_never_pass_a_bound_the_grid_respects():
    from problems import double_integrator_time as di

    prob = di.build()
    traj = cl.solve(prob, intervals=10, ipopt={"tol": 1e-10}).trajectory
    u = traj["mass.u"]
    assert np.max(np.abs(u)) <= 1 + 1e-7  # every grid value within |u| ≤ 1
    polynomial = traj.sample(np.linspace(0, traj.time[-1], 2001))["mass.u"]
    assert np.max(np.abs(polynomial)) > 1.1  # the Hermite–Simpson control polynomial overshoots between grid points
    fig = plot_trajectory(traj, bounds=prob.bounds)
    ax = fig.axes[titles(fig).index("mass.u")]
    curve = ax.lines[0]
    np.testing.assert_array_equal(curve.get_xdata(), traj.time)  # straight lines between the grid values
    assert np.max(np.abs(curve.get_ydata())) <= 1 + 1e-7
    assert dashed_levels(ax) == [-1.0, 1.0]
    held = cl.Trajectory(traj.time, {"mass.u": u}, {"mass.u": "control"}, metadata={"scheme": "midpoint-vi"})
    t, y = plot_trajectory(held).axes[0].lines[0].get_data()
    assert t.size > traj.time.size and set(np.round(y, 12)) <= set(np.round(u, 12))  # midpoint-vi: held values


def test_parameters_are_in_the_title_of_one_trajectory_and_in_the_legend_of_several():
    a, b = make_traj(), make_traj(2.0)
    a.parameters, b.parameters = {"arm.k": 1.2345678}, {"arm.k": 2.5}
    a.metadata.update(problem="arm", params={"length": 0.5})
    b.metadata.update(problem="arm", params={"length": 1.5})
    assert plot_trajectory(a)._suptitle.get_text() == "arm (length=0.5; arm.k = 1.23457)"
    texts = [t.get_text() for t in plot_trajectory([a, b], labels=["arm_00", "arm_01"]).legends[0].get_texts()]
    assert texts == ["arm_00 (length=0.5; arm.k = 1.23457)", "arm_01 (length=1.5; arm.k = 2.5)"]
    assert plot_trajectory(make_traj())._suptitle is None  # nothing to say: no title


@pytest.mark.parametrize("kwargs, match", [
    (dict(names=["a.xx"]), "Did you mean `a.x`"),
    (dict(names=[]), "empty"),
    (dict(labels=["one", "two"]), "2 labels for 1"),
])
def test_bad_arguments_raise(kwargs, match):
    with pytest.raises(OptionError, match=match):
        plot_trajectory(make_traj(), **kwargs)


def test_not_a_trajectory_raises():
    with pytest.raises(OptionError, match="Trajectory"):
        plot_trajectory([])


def test_save_figure_writes_png_atomically(tmp_path):
    fig = plot_trajectory(make_traj())
    path = save_figure(fig, tmp_path / "fig.png")
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    assert os.listdir(tmp_path) == ["fig.png"]  # no temporary file left behind


def test_save_figure_by_suffix(tmp_path):
    fig = plot_trajectory(make_traj())
    assert open(save_figure(fig, tmp_path / "fig.svg")).read(200).lstrip().startswith("<?xml")
    with pytest.raises(FileFormatError, match=r"\.xyz"):
        save_figure(fig, tmp_path / "fig.xyz")
    with pytest.raises(FileFormatError, match="does not exist"):
        save_figure(fig, tmp_path / "missing" / "fig.png")


def test_import_colloc_does_not_import_matplotlib_or_dask():
    code = ("import sys, colloc, colloc.viz.plot, colloc.cli.commands, colloc.batch.sweep; "
            "print([m for m in ('matplotlib', 'dask', 'distributed', 'PIL') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# -- violations ---------------------------------------------------------------------------------
def violations_traj(table):
    traj = make_traj()
    traj.metadata.update(problem="demo", violations=table)
    return traj


def bar_ends(ax):
    """Right end of every drawn bar, by bar container."""
    return [[p.get_x() + p.get_width() for p in c.patches] for c in ax.containers]


def test_violation_bars_end_at_the_recorded_values():
    table = {"defect.simpson:a.x": 3e-9, "path:a.track": 0.0, "holonomic:a.rod": 2e-12}
    fig = plot_violations(violations_traj(table))
    ax, = fig.axes
    assert ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_yticklabels()] == list(table)
    ends = bar_ends(ax)[0]
    np.testing.assert_allclose(ends, [3e-9, VIOLATION_FLOOR, 2e-12], rtol=1e-12)  # a zero draws no bar
    assert ax.patches[1].get_width() == 0.0
    assert fig.legends == [] and ax.get_legend() is None


def test_violations_by_kind_take_the_largest_of_each_kind():
    table = {"defect.simpson:a.x": 3e-9, "defect.simpson:a.v": 5e-9, "path:a.track": 1e-10}
    ax, = plot_violations(violations_traj(table), by="kind").axes
    assert [t.get_text() for t in ax.get_yticklabels()] == ["defect.simpson", "path"]
    np.testing.assert_allclose(bar_ends(ax)[0], [5e-9, 1e-10], rtol=1e-12)


def test_violations_overlay_uses_the_union_of_labels():
    first = violations_traj({"defect:a.x": 1e-9})
    second = violations_traj({"defect:a.x": 1e-8, "path:a.y": 1e-6})
    ax, = plot_violations([first, second], labels=["coarse", "fine"]).axes
    assert [t.get_text() for t in ax.get_yticklabels()] == ["defect:a.x", "path:a.y"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["coarse", "fine"]
    assert np.isnan(ax.containers[0].patches[1].get_width())  # absent from the first file: no bar
    np.testing.assert_allclose(bar_ends(ax)[1], [1e-8, 1e-6], rtol=1e-12)


def test_violations_of_a_solve_result():
    c = cl.Component("mass")
    x, v, u = c.state("x"), c.state("v"), c.control("u")
    c.derivative(x, v)
    c.derivative(v, u)
    prob = cl.Problem([c], tf=1.0)
    prob.initial({x: 0.0, v: 0.0})
    prob.final({x: 1.0, v: 0.0})
    prob.minimize(integral=u**2)
    res = cl.solve(prob, intervals=4)
    ax, = plot_violations(res).axes
    assert [t.get_text() for t in ax.get_yticklabels()] == list(res.violations)


@pytest.mark.parametrize("args, kwargs, match", [
    ((make_traj(),), {}, "records no constraint violations"),
    ((violations_traj({"d:a": 1.0}),), dict(by="row"), "`by` must be"),
    ((violations_traj({"d:a": 1.0}),), dict(labels=["a", "b"]), "2 labels for 1"),
    (([],), {}, "non-empty"),
    ((violations_traj({}),), {}, "no constraint rows"),
    (("file.csv",), {}, "SolveResult or Trajectory"),
])
def test_violation_plot_errors(args, kwargs, match):
    with pytest.raises(OptionError, match=match):
        plot_violations(*args, **kwargs)


# -- mesh refinement ------------------------------------------------------------------------------
RECORDS = [
    dict(iteration=0, intervals=10, grid_points=21, max_error=3e-3, objective=1.2, iterations=14, seconds=0.20, status="solved", success=True),
    dict(iteration=1, intervals=24, grid_points=49, max_error=2e-5, objective=1.3, objective_change=0.3 / 1.3, iterations=6, seconds=0.30,
         status="solved", success=True),
    dict(iteration=2, intervals=31, grid_points=63, max_error=4e-8, objective=1.3, objective_change=0.0, iterations=3, seconds=0.35,
         status="solved", success=True),
]


def test_refinement_plot_axes_and_data():
    fig = plot_refinement(RECORDS, tolerance=1e-6)
    assert titles(fig) == ["max relative local error", "objective J (relative change)", "intervals", "IPOPT iterations", "seconds"]
    ax_err, ax_obj, ax_int, ax_ipopt, ax_sec = fig.axes
    np.testing.assert_array_equal(ax_obj.lines[0].get_ydata(), [1.2, 1.3, 1.3])
    assert [t.get_text() for t in ax_obj.texts] == ["2.3e-01", "0.0e+00"]
    assert ax_err.get_xscale() == "log" and ax_err.get_yscale() == "log"
    line = ax_err.lines[0]
    np.testing.assert_array_equal(line.get_xdata(), [21, 49, 63])
    np.testing.assert_array_equal(line.get_ydata(), [3e-3, 2e-5, 4e-8])
    assert dashed_levels(ax_err) == [1e-6]
    np.testing.assert_array_equal(ax_int.lines[0].get_ydata(), [10, 24, 31])
    np.testing.assert_array_equal(ax_ipopt.lines[0].get_ydata(), [14, 6, 3])
    np.testing.assert_array_equal(ax_sec.lines[0].get_xdata(), [0, 1, 2])
    assert ax_int.get_xlabel() == "mesh iteration"


def test_refinement_from_results_and_trajectories_overlaid():
    class Result:  # the shape of colloc.pipeline.refine.solve_adaptive's result
        refinement = RECORDS

    traj = make_traj()
    traj.metadata["refinement"] = RECORDS[:2]
    fig = plot_refinement([Result(), traj], labels=["result", "file"])
    assert [len(line.get_xdata()) for line in fig.axes[0].lines] == [3, 2]
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["result", "file"]


@pytest.mark.parametrize("records, match", [
    ([{k: v for k, v in RECORDS[0].items() if k != "max_error"}], "has no `max_error`"),
    ([], "non-empty"),
    (make_traj(), "records no mesh refinement"),
    ([RECORDS, [1, 2]], "not a dict"),
    ("records", "got str"),
])
def test_refinement_plot_errors(records, match):
    with pytest.raises(OptionError, match=match):
        plot_refinement(records)


# -- animation ------------------------------------------------------------------------------------
def double_pendulum():
    """A two-link chain with unit links; points pivot, elbow, tip in drawing order."""
    body = cl.Multibody("arm", coordinates=["q1", "q2"])
    q1, q2 = body.coordinates
    body.point("pivot", ca.vertcat(0, 0))
    body.point("elbow", ca.vertcat(ca.sin(q1), -ca.cos(q1)))
    body.point("tip", ca.vertcat(ca.sin(q1) + ca.sin(q1 + q2), -ca.cos(q1) - ca.cos(q1 + q2)))
    return body


def swing(duration=1.0):
    t = np.linspace(0.0, duration, 11)
    return cl.Trajectory(t, {"arm.q1": np.pi / 2 * t / duration, "arm.q2": np.pi / 4 * t / duration}, {"arm.q1": "state", "arm.q2": "state"})


def test_animation_writes_a_gif_with_one_frame_per_tick(tmp_path):
    path = animate(swing(), double_pendulum(), tmp_path / "arm.gif", fps=10)
    assert path == str(tmp_path / "arm.gif")
    with Image.open(path) as gif:
        assert gif.format == "GIF"
        assert gif.n_frames == 11  # 1 s at 10 fps, both ends
        gif.seek(0)
        first = np.asarray(gif.convert("RGB")).copy()
        gif.seek(gif.n_frames - 1)
        last = np.asarray(gif.convert("RGB"))
    assert (first != last).any()  # the chain moved
    assert os.listdir(tmp_path) == ["arm.gif"]  # written atomically, no temporary file left


def test_points_are_evaluated_on_the_trajectory():
    groups = model_points(double_pendulum())
    assert list(groups) == ["arm"] and list(groups["arm"]) == ["arm.pivot", "arm.elbow", "arm.tip"]
    times = np.array([0.0, 0.5, 1.0])
    pos = _point_positions(swing(), groups, times)["arm"]  # (times, points, xy)
    q1, q2 = np.pi / 2 * times, np.pi / 4 * times
    np.testing.assert_allclose(pos[:, 0], 0.0)
    np.testing.assert_allclose(pos[:, 1], np.column_stack([np.sin(q1), -np.cos(q1)]), atol=1e-12)
    np.testing.assert_allclose(pos[:, 2], np.column_stack([np.sin(q1) + np.sin(q1 + q2), -np.cos(q1) - np.cos(q1 + q2)]), atol=1e-12)


def test_points_of_a_problem_and_a_dict_with_time_and_parameters(tmp_path):
    body = double_pendulum()
    body.mass_matrix = ca.DM.eye(2)  # any equations of motion: the Model wants them
    other = cl.Component("mass")
    x = other.state("x")
    k = other.parameter("k")
    other.derivative(x, k)
    prob = cl.Problem([body, other], tf=1.0)
    assert list(model_points(prob)) == ["arm"]  # a plain Component has no points
    traj = swing()
    traj = cl.Trajectory(traj.time, {**{n: traj[n] for n in traj.names}, "mass.x": traj.time}, parameters={"mass.k": 2.0})
    pos = _point_positions(traj, model_points({"marker": ca.vertcat(x * k, cl.TIME)}), np.array([0.0, 1.0]))["points"]
    np.testing.assert_allclose(pos[:, 0], [[0.0, 0.0], [2.0, 1.0]])
    assert animate(traj, {"marker": ca.vertcat(x, 0, 1)}, tmp_path / "m.gif", fps=5)  # 3-D: drawn by x and y


@pytest.mark.parametrize("what, match", [
    (cl.Multibody("bare", coordinates=["q"]), r"body\.point"),
    ({}, "no points"),
    ({"p": ca.MX.sym("m", 2)}, "MX"),
    ({"p": [1.0, 2.0, 3.0, 4.0]}, "2-D or 3-D"),
    ({"p": ca.vertcat(ca.SX.sym("arm.q3"), 0)}, "uses `arm.q3`.*Did you mean"),
    (3, "Problem, Model, Multibody"),
])
def test_animation_errors(tmp_path, what, match):
    with pytest.raises(OptionError, match=match):
        animate(swing(), what, tmp_path / "x.gif")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("path, kwargs, error, match", [
    ("x.png", {}, FileFormatError, "give a .gif"),
    ("missing/x.gif", {}, FileFormatError, "does not exist"),
    ("x.gif", dict(fps=0), OptionError, "`fps` must be a positive"),
    ("x.gif", dict(speed=-1), OptionError, "`speed`"),
])
def test_animation_argument_errors(tmp_path, path, kwargs, error, match):
    with pytest.raises(error, match=match):
        animate(swing(), double_pendulum(), tmp_path / path, **kwargs)


def test_animation_speed_sets_the_frame_count(tmp_path):
    path = animate(swing(duration=2.0), double_pendulum(), tmp_path / "fast.gif", fps=5, speed=2.0)
    with Image.open(path) as gif:
        assert gif.n_frames == 6  # 2 s played in 1 s at 5 fps


def test_cartpole_swing_up_gif_has_one_frame_per_sample(tmp_path):
    """Issue check: a GIF of the cart-pole swing-up has one frame per requested sample (2 s at 10 fps: 21)."""
    import importlib.util
    from pathlib import Path

    import casadi as ca
    from PIL import Image

    import colloc as cl
    from colloc.viz.plot import animate

    spec = importlib.util.spec_from_file_location("cartpole", Path(__file__).resolve().parents[1] / "problems" / "cartpole.py")
    cartpole = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cartpole)
    prob = cartpole.build()
    res = cl.solve(prob, intervals=20)
    x, theta = prob.model.lookup("cartpole.x").symbol, prob.model.lookup("cartpole.theta").symbol
    points = {"cart": ca.vertcat(x, 0), "bob": ca.vertcat(x + 0.5 * ca.sin(theta), -0.5 * ca.cos(theta))}
    path = animate(res.trajectory, points, tmp_path / "cartpole.gif", fps=10)
    with Image.open(path) as gif:
        assert gif.n_frames == 21


def test_colloc_plot_of_sweep_files_labels_each_with_its_swept_values_and_parameters(tmp_path, monkeypatch):
    from colloc.cli import commands as cli

    paths = []
    for i, (length, k) in enumerate([(0.5, 1.25), (1.5, 2.0)]):
        traj = make_traj(1.0 + i)
        traj.parameters = {"arm.k": k}
        traj.metadata.update(problem="arm", params={"length": length})
        paths.append(traj.write(tmp_path / f"arm_{i}.csv"))
    figures = []
    monkeypatch.setattr(cli, "save_figure", lambda fig, path, close=False: figures.append(fig) or str(path))
    assert cli.main(["plot", *paths]) == 0
    assert [t.get_text() for t in figures[0].legends[0].get_texts()] == ["arm_0 (length=0.5; arm.k = 1.25)", "arm_1 (length=1.5; arm.k = 2)"]
