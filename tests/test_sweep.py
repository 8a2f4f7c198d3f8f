"""Parameter sweeps on Dask: grids, the worker function, ``colloc sweep`` on a LocalCluster and on a running scheduler.

Reference value: the double integrator x'' = u, x(0) = v(0) = 0, x(T) = d, v(T) = 0,
minimize ∫₀ᵀ u² dt has u* = (d/T²)(6 − 12 t/T) and J* = 12 d²/T³ (Kelly, SIAM Review
59(4), 2017, §2; docs/problems.md A4a); x* is cubic, so Hermite–Simpson reproduces J* to
round-off on any mesh and the assertions use rel=1e-8 (IPOPT tol 1e-8 on a QP that
it solves in one Newton step).
"""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

import colloc as cl
from colloc.cli import commands as cli
from colloc.errors import OptionError
from colloc.batch.sweep import grid_points, parse_range, point_file, read_summary, serpentine, solve_chained, solve_point, sweep
from di_script import di_script

distributed = pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[1]
ENERGY = ROOT / "problems" / "double_integrator_energy.py"  # build(distance=1.0, duration=1.0)

# Fails to build for distance > 1.5 (a bad point must become a row, not stop the sweep).
PICKY = di_script(solve="dict(intervals=8)", name="picky", implicit=False,
                  setup=["if distance > 1.5:", '    raise ValueError("distance too large for this rig")'])


def exact(distance, duration=1.0):
    return 12.0 * distance**2 / duration**3


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def scheduler():
    """A running Dask scheduler with two worker processes, shared by the tests of this module."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        yield cluster.scheduler_address


@pytest.fixture
def picky(tmp_path):
    path = tmp_path / "picky.py"
    path.write_text(textwrap.dedent(PICKY))
    return path


# -- grids (no Dask) --------------------------------------------------------------------------------
@pytest.mark.parametrize("text, values", [
    ("1:2:3", [1.0, 1.5, 2.0]),
    ("1:5:5", [1, 2, 3, 4, 5]),           # integer ends and whole values: ints (e.g. a number of links)
    ("1:2:2", [1, 2]),
    ("0.5:0.5:1", [0.5]),
    ("2:1:3", [2.0, 1.5, 1.0]),
    ("-1e-1:1e-1:3", [-0.1, 0.0, 0.1]),
    ("abc", None), ("3", None), ("'a:b'", None), ("x:y:z", None),
])
def test_parse_range(text, values):
    got = parse_range(text)
    assert got == (None if values is None else pytest.approx(values))
    if values is not None:
        assert [type(v) for v in got] == [type(v) for v in values]


@pytest.mark.parametrize("text, match", [("1:2", "needs a count"), ("1:2:0", "at least one"), ("1:2:x", "whole number")])
def test_bad_ranges(text, match):
    with pytest.raises(OptionError, match=match):
        parse_range(text)


def test_grid_points_are_the_product_last_name_fastest():
    assert grid_points({"a": [1, 2], "b": ["x", "y", "z"]}) == [
        {"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 1, "b": "z"},
        {"a": 2, "b": "x"}, {"a": 2, "b": "y"}, {"a": 2, "b": "z"}]


@pytest.mark.parametrize("sizes", [[3], [2, 3], [3, 2, 2], [1, 4], [2, 2, 2, 2]])
def test_serpentine_visits_every_point_once_by_grid_neighbours(sizes):
    grid = {f"p{i}": list(range(n)) for i, n in enumerate(sizes)}
    points = grid_points(grid)
    order = serpentine(grid)
    assert sorted(order) == list(range(len(points)))
    for a, b in zip(order, order[1:]):
        steps = [abs(points[a][k] - points[b][k]) for k in grid]
        assert sorted(steps)[-1] == 1 and sum(steps) == 1  # one parameter, one step


def test_point_file_pads_to_the_largest_index():
    assert point_file("di", 3, 3) == "di_3.csv"
    assert point_file("di", 3, 12) == "di_03.csv"
    assert point_file("di", 0, 1) == "di_0.csv"


# -- the worker function, in this process ---------------------------------------------------------
def test_solve_point_writes_the_trajectory_and_returns_a_row(tmp_path):
    row = solve_point(str(ENERGY), {"distance": 2.0}, 4, str(tmp_path / "e_4.csv"), {"intervals": 5})
    assert row["success"] and row["status"] == "solved" and row["index"] == 4
    assert row["objective"] == pytest.approx(exact(2.0), rel=1e-8)
    traj = cl.Trajectory.read(row["file"])
    assert traj.metadata["params"] == {"distance": 2.0}
    assert traj.metadata["intervals"] == 5
    assert set(traj.metadata["violations"]) >= {"defect.simpson:mass.x"}


def test_a_point_that_cannot_be_built_is_an_error_row(picky, tmp_path):
    row = solve_point(str(picky), {"distance": 2.0}, 1, str(tmp_path / "p_1.csv"))
    assert row["status"] == "error" and not row["success"]
    assert "distance too large" in row["message"] and "picky.py" in row["message"]
    assert row["file"] == "" and not (tmp_path / "p_1.csv").exists()


def test_continuation_falls_back_to_the_last_successful_trajectory(picky):
    first = solve_chained(None, str(picky), {"distance": 1.0}, 0)
    assert first[0]["warm_start"] is None and first[1][0] == 0
    failed = solve_chained(first, str(picky), {"distance": 2.0}, 1)
    assert failed[0]["status"] == "error" and failed[0]["warm_start"] == 0
    assert failed[1][0] == 0 and failed[1][1] is first[1][1]  # passes point 0's trajectory on
    third = solve_chained(failed, str(picky), {"distance": 1.5}, 2)
    assert third[0]["warm_start"] == 0 and third[0]["objective"] == pytest.approx(exact(1.5), rel=1e-8)


# -- colloc sweep on Dask ---------------------------------------------------------------------------
def test_sweep_on_a_local_cluster_writes_files_and_summary(tmp_path, capsys):
    out = tmp_path / "results"
    code, stdout, err = run(capsys, "sweep", ENERGY, "--set", "distance=1:2:3", "--workers", 2, "--out", out)
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == [
        "double_integrator_energy_0.csv", "double_integrator_energy_1.csv", "double_integrator_energy_2.csv",
        "double_integrator_energy_sweep.csv"]
    rows = read_summary(out / "double_integrator_energy_sweep.csv")
    assert list(rows[0]) == ["index", "distance", "status", "success", "objective", "iterations", "seconds", "warm_start", "file", "message"]
    assert [r["distance"] for r in rows] == [1.0, 1.5, 2.0]
    for r in rows:
        assert r["status"] == "solved" and r["success"] is True and r["iterations"] >= 0 and r["seconds"] > 0
        assert r["objective"] == pytest.approx(exact(r["distance"]), rel=1e-8)
        traj = cl.Trajectory.read(out / r["file"])  # file names are relative to the summary
        assert traj.metadata["objective"] == pytest.approx(r["objective"], rel=1e-12)
        assert traj.final("mass.x") == pytest.approx(r["distance"], abs=1e-8)
    assert "3/3" in err and "solved 3" in err  # the progress bar, on stderr
    assert "objective" in stdout and "wrote 3 trajectories" in stdout


def test_sweep_grid_on_a_running_scheduler(tmp_path, capsys, scheduler):
    code, stdout, err = run(capsys, "sweep", ENERGY, "--set", "distance=1:2:2", "--set", "duration=1:2:2",
                            "--scheduler", scheduler, "--intervals", 4, "--out", tmp_path, "--quiet")
    assert code == 0, err
    assert "sweep [" not in err  # --quiet: no progress bar
    rows = read_summary(tmp_path / "double_integrator_energy_sweep.csv")
    assert [(r["distance"], r["duration"]) for r in rows] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    for r in rows:
        assert r["objective"] == pytest.approx(exact(r["distance"], r["duration"]), rel=1e-8)
        assert cl.Trajectory.read(tmp_path / r["file"]).metadata["intervals"] == 4


def test_continuation_warm_starts_along_the_serpentine(tmp_path, capsys, scheduler):
    code, _, err = run(capsys, "sweep", ENERGY, "--set", "distance=1:2:2", "--set", "duration=1:2:2",
                       "--scheduler", scheduler, "--continuation", "--out", tmp_path)
    assert code == 0, err
    rows = read_summary(tmp_path / "double_integrator_energy_sweep.csv")
    # serpentine order 0 (1,1) → 1 (1,2) → 3 (2,2) → 2 (2,1): each starts from the one before
    assert {r["index"]: r["warm_start"] for r in rows} == {0: None, 1: 0, 3: 1, 2: 3}
    for r in rows:
        assert r["objective"] == pytest.approx(exact(r["distance"], r["duration"]), rel=1e-8)


def test_failed_points_are_reported_and_exit_1(picky, tmp_path, capsys, scheduler):
    code, stdout, err = run(capsys, "sweep", picky, "--set", "distance=1:2:3", "--scheduler", scheduler, "--out", tmp_path)
    assert code == 1
    rows = read_summary(tmp_path / "picky_sweep.csv")
    assert [r["status"] for r in rows] == ["solved", "solved", "error"]
    assert "distance too large" in rows[2]["message"] and rows[2]["file"] == ""
    assert sorted(p.name for p in tmp_path.glob("picky_*.csv")) == ["picky_0.csv", "picky_1.csv", "picky_sweep.csv"]
    assert "point 2: " in stdout and "failed 1" in err


def test_a_first_point_that_fails_does_not_stop_the_sweep(picky, tmp_path, scheduler):
    rows = sweep(picky, {"distance": [2.0, 1.0]}, scheduler=scheduler, continuation=True, progress=False, out=tmp_path)
    assert [(r["status"], r["warm_start"]) for r in rows] == [("error", None), ("solved", None)]
    assert rows[1]["objective"] == pytest.approx(exact(1.0), rel=1e-8)


def test_script_without_build_exits_2(tmp_path, capsys):
    path = tmp_path / "nobuild.py"
    path.write_text("X = 1\n")
    code, _, err = run(capsys, "sweep", path, "--set", "distance=1:2:3", "--out", tmp_path / "out")
    assert code == 2 and "nobuild.py" in err and "`build`" in err


def test_sweep_function_with_a_client_and_no_output(tmp_path, scheduler, monkeypatch):
    monkeypatch.chdir(tmp_path)
    seen = []
    with distributed.Client(scheduler) as client:
        rows = sweep(ENERGY, {"distance": [1.0, 3.0]}, {"duration": 2.0}, scheduler=client, progress=seen.append,
                     options={"intervals": 3})
        assert client.status == "running"  # a client passed in stays open
    assert [r["index"] for r in rows] == [0, 1] and len(seen) == 2
    assert [r["duration"] for r in rows] == [2.0, 2.0]  # fixed parameters are columns too
    assert [r["objective"] for r in rows] == pytest.approx([exact(1.0, 2.0), exact(3.0, 2.0)], rel=1e-8)
    assert all(r["file"] == "" for r in rows) and list(tmp_path.iterdir()) == []


# -- refusals, all before any cluster starts ----------------------------------------------------------
@pytest.mark.parametrize("argv, words", [
    (["--set", "distance=1"], ["at least one range"]),
    (["--set", "distance=1:2"], ["needs a count"]),
    (["--set", "distance=1:2:3", "--set", "distance=1"], ["`distance` is given twice"]),
    (["--set", "distnce=1:2:3"], ["`distnce`", "Did you mean `distance`?"]),
    (["--set", "distance=1:2:3", "--workers", "0"], ["`workers`", "positive"]),
    (["--set", "distance=1:2:3", "--workers", "2", "--scheduler", "tcp://127.0.0.1:8786"], ["not allowed with"]),
])
def test_sweep_refusals_exit_2(tmp_path, capsys, argv, words):
    code, out, err = run(capsys, "sweep", ENERGY, *argv, "--out", tmp_path / "never")
    assert code == 2
    assert not (tmp_path / "never").exists()
    for w in words:
        assert w in err
    assert "Traceback" not in out + err


def test_unreachable_scheduler_exits_2_and_leaves_no_folder(tmp_path, capsys, monkeypatch):
    import importlib
    import socket

    module = importlib.import_module("colloc.pipeline.cluster")  # where sweeps and multi-starts connect
    with socket.socket() as s:  # a free port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(module, "CONNECT_TIMEOUT", "0.5s")
    code, _, err = run(capsys, "sweep", ENERGY, "--set", "distance=1:2:3", "--scheduler", f"tcp://127.0.0.1:{port}", "--out", tmp_path / "out")
    assert code == 2
    assert f"127.0.0.1:{port}" in err and "dask scheduler" in err
    assert not (tmp_path / "out").exists()


def test_missing_dask_exits_2_with_the_install_hint(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # makes `from dask.distributed import ...` fail
    code, _, err = run(capsys, "sweep", ENERGY, "--set", "distance=1:2:3", "--out", tmp_path)
    assert code == 2
    assert "install colloc[sweep]" in err
    assert list(tmp_path.iterdir()) == []


def test_sweep_function_refuses_bad_grids():
    with pytest.raises(OptionError, match="at least one swept parameter"):
        sweep(ENERGY, {})
    with pytest.raises(OptionError, match="no values"):
        sweep(ENERGY, {"distance": []})
    with pytest.raises(OptionError, match="both swept and fixed"):
        sweep(ENERGY, {"distance": [1]}, {"distance": 2})
    with pytest.raises(OptionError, match="must be a sequence"):
        sweep(ENERGY, {"distance": 3.0})


CARTPOLE = Path(__file__).resolve().parents[1] / "problems" / "cartpole.py"


def test_cartpole_sweep_of_six_and_continuation_saves_iterations(tmp_path, capsys, scheduler):
    """Issue check: 6 cart-pole solves on a Dask cluster write 6 files and a 6-row summary; with
    --continuation (each solve warm-started from its neighbour) the same sweep takes fewer IPOPT iterations."""
    totals = {}
    for mode in ("cold", "continuation"):
        out = tmp_path / mode
        extra = ["--continuation"] if mode == "continuation" else []
        code, _, err = run(capsys, "sweep", CARTPOLE, "--set", "m_pole=0.25:0.35:6", "--intervals", 30,
                           "--scheduler", scheduler, "--out", out, "--quiet", *extra)
        assert code == 0, err
        rows = read_summary(out / "cartpole_sweep.csv")
        assert len(rows) == 6 and all(r["status"] == "solved" for r in rows)
        assert len(list(out.glob("cartpole_[0-9]*.csv"))) == 6
        totals[mode] = sum(r["iterations"] for r in rows)
    assert totals["continuation"] < totals["cold"], totals


def test_without_a_terminal_the_progress_bar_prints_a_line_every_few_seconds(monkeypatch):
    import io

    from colloc.pipeline import sweep_runner

    clock = [0.0]
    monkeypatch.setattr(sweep_runner._time, "perf_counter", lambda: clock[0])
    log = io.StringIO()  # not a tty
    bar = sweep_runner._TextBar(100, ["k"], stream=log)
    for i in range(100):  # a point every 0.25 s: 25 s in all
        clock[0] = 0.25 * (i + 1)
        bar.update(dict(params={"k": i}, success=True, status="solved"))
    lines = log.getvalue().splitlines()
    assert sweep_runner.LOG_PERIOD == 5.0
    # the first point (0.25 s), then every 5 s (5.25, 10.25, 15.25, 20.25 s), then the last point (25 s)
    assert [line.split("/100")[0].split()[-1] for line in lines] == ["1", "21", "41", "61", "81", "100"]
