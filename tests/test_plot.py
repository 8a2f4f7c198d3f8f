"""Figures of trajectories (Agg backend, set in conftest): subplots, titles, overlays, bounds, files."""
from __future__ import annotations

import os
import subprocess
import sys

import matplotlib
import numpy as np
import pytest

import colloc as cl
from colloc.errors import FileFormatError, OptionError
from colloc.plot import plot_trajectory, save_figure

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


def test_bounds_drawn_dashed_when_near_the_data():
    # data: a.x = sin t in [0, 1]; a.u = sin(t + 1); a.rod.lambda = sin(t + 2) in [-0.76, 0.91]
    fig = plot_trajectory(make_traj(), bounds={"a.x": (-0.2, 1.0), "a.u": (-1e3, 1e3), "a.rod.lambda": (-np.inf, 1.5)})
    ax_x, ax_u, ax_lam = fig.axes
    assert dashed_levels(ax_x) == [-0.2, 1.0]
    assert dashed_levels(ax_u) == []  # far from the data: would squash the curve
    assert dashed_levels(ax_lam) == [1.5]
    assert ax_u.get_ylim()[1] < 10


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


def test_import_colloc_does_not_import_matplotlib():
    code = "import sys, colloc, colloc.plot, colloc.cli; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
