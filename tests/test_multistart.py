"""Multi-start: seeded perturbed guesses, distinct local optima, the best kept.

The pendulum swing-up of the tutorial (docs/tutorial.md) has two local optima at 40
Hermite–Simpson intervals: J = 68.1307 (swung straight up, reached from the
straight-line guess) and J = 65.4771 (the pendulum first swings back to about
−0.53 rad).  The cart-pole of Kelly 2017 has two as well: 58.8077 (the optimum
docs/problems.md C1 cites) and 57.9448 (the pole first swings back).  The
values are the converged optima of those meshes; the tests check that
multi-start finds both, which single solves from the script's guess do not.
"""
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import colloc as cl
from colloc.cli import commands as cli
from colloc.pipeline.multistart import distinct_optima, perturbed_guesses
from colloc.pipeline.script import load_problem

TUTORIAL = Path(__file__).resolve().parents[1] / "docs" / "tutorial.md"
SWINGUP_OPTIMA = (65.4770684, 68.1306690)   # 40 HS intervals; 200 intervals: 65.4769, 68.1306
CARTPOLE_OPTIMA = (57.9450221, 58.8075759)  # 40 HS intervals; continuous: 57.944780, 58.807667


@pytest.fixture(scope="module")
def swingup(tmp_path_factory):
    """The tutorial's problem script, taken from docs/tutorial.md so that the two cannot drift."""
    text = TUTORIAL.read_text()
    start = text.index('"""Pendulum swing-up')
    path = tmp_path_factory.mktemp("tutorial") / "swingup.py"
    path.write_text(text[start:text.index("```", start)])
    return path


def test_multistart_from_a_fixed_seed_finds_both_swingup_optima(swingup):
    _, problem = load_problem(swingup)
    problem.source = None  # solved in this process (the CLI test below runs the starts on Dask)
    single = cl.solve(problem, intervals=40)
    assert single.objective == pytest.approx(SWINGUP_OPTIMA[1], rel=1e-6)  # the straight-line guess's optimum
    res = cl.solve(problem, intervals=40, starts=6, seed=0)
    found = [o["objective"] for o in res.optima]
    assert found == pytest.approx(list(SWINGUP_OPTIMA), rel=1e-6)
    assert sum(o["count"] for o in res.optima) == 6 and sorted(s for o in res.optima for s in o["starts"]) == list(range(6))
    assert 0 in res.optima[1]["starts"]  # start 0 is the unperturbed guess
    assert res.objective == pytest.approx(SWINGUP_OPTIMA[0], rel=1e-6) and res.success  # the best is the result
    theta = res.trajectory["pendulum.theta"]
    assert theta.min() == pytest.approx(-0.53, abs=0.02)  # the cheaper motion swings back first
    assert res.optima[1]["trajectory"]["pendulum.theta"].min() > -1e-6
    assert "2 distinct local optima" in res.summary() and "reached by" in res.summary()
    again = cl.solve(problem, intervals=40, starts=6, seed=0)
    assert [o["starts"] for o in again.optima] == [o["starts"] for o in res.optima]  # reproducible


def test_multistart_finds_the_cartpole_optimum_below_the_cited_one():
    from problems import cartpole

    res = cl.solve(cartpole.build(), **cartpole.SOLVE, starts=6, seed=0)
    assert [o["objective"] for o in res.optima] == pytest.approx(list(CARTPOLE_OPTIMA), rel=1e-6)
    assert res.objective == pytest.approx(CARTPOLE_OPTIMA[0], rel=1e-6)


def test_guesses_are_seeded_within_bounds_and_independent_of_the_number_of_starts():
    from problems import cartpole

    prob = cartpole.build()
    a = perturbed_guesses(prob, 4, seed=3, intervals=10)
    b = perturbed_guesses(prob, 6, seed=3, intervals=10)
    c = perturbed_guesses(prob, 4, seed=4, intervals=10)
    for name in ("cartpole.x", "cartpole.theta", "cartpole.force"):
        for k in range(4):
            np.testing.assert_array_equal(a[k][name], b[k][name])
        assert not np.allclose(a[1][name], c[1][name])
        assert not np.allclose(a[0][name], a[1][name])
    for g in b:
        assert np.all(np.abs(g["cartpole.force"]) <= 20) and np.all(np.abs(g["cartpole.x"]) <= 2)
        assert g["cartpole.theta"][0] == 0 and g["cartpole.theta"][-1] == pytest.approx(np.pi)  # fixed ends kept


def _fake(objective, theta, success=True):
    traj = cl.Trajectory(np.linspace(0, 1, theta.size), {"theta": theta}, {"theta": "state"})
    return SimpleNamespace(objective=objective, success=success, trajectory=traj)


def test_optima_are_the_same_only_when_objective_and_trajectory_agree():
    s = np.linspace(0, 1, 11)
    up, mirror = np.pi * s, -np.pi * s
    results = [(0, _fake(10.0, up)), (1, _fake(10.0 * (1 + 1e-9), up + 1e-6)), (2, _fake(10.0, mirror)),
               (3, _fake(9.0, up)), (4, _fake(8.0, up, success=False))]
    optima = distinct_optima(results)
    assert [(o["objective"], o["starts"]) for o in optima] == [(9.0, [3]), (10.0, [0, 1]), (10.0, [2])]


@pytest.mark.parametrize("kwargs, match", [
    (dict(starts=0), "`starts` must be a positive whole number"),
    (dict(starts=2, seed=-1), "`seed` must be a whole number"),
    (dict(starts=2, scheduler="tcp://127.0.0.1:1"), "load it with colloc.pipeline.script.load_problem.*to use `scheduler`"),
    (dict(starts=2, workers=2), "to use `workers`"),
    (dict(starts=2, refine=dict(tolerance=1e-6)), "`refine` cannot be combined with `starts`"),
    (dict(workers=2), "`scheduler` and `workers` go with `starts`"),
])
def test_bad_multistart_options_are_refused_in_one_sentence(kwargs, match):
    from problems import double_integrator_energy as di

    with pytest.raises(cl.OptionError, match=match):
        cl.solve(di.build(), intervals=5, **kwargs)


def test_cli_multistart_on_dask_writes_each_optimum(swingup, tmp_path, capsys):
    code = cli.main(["solve", str(swingup), "--starts", "3", "--seed", "0", "--out", str(tmp_path), "--workers", "2"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert len(re.findall(r"^start \d: solved", out, re.M)) == 3
    files = sorted(p.name for p in tmp_path.glob("*.csv"))
    assert files == ["swingup.csv", "swingup.optimum-1.csv", "swingup.optimum-2.csv"]
    best = cl.Trajectory.read(tmp_path / "swingup.csv")
    assert best.metadata["objective"] == pytest.approx(SWINGUP_OPTIMA[0], rel=1e-6)
    assert best.metadata["multistart"]["optima"][1]["objective"] == pytest.approx(SWINGUP_OPTIMA[1], rel=1e-6)
    assert cl.Trajectory.read(tmp_path / "swingup.optimum-2.csv").metadata["objective"] == pytest.approx(SWINGUP_OPTIMA[1], rel=1e-6)


def test_cli_refuses_cluster_flags_without_starts(swingup, capsys):
    assert cli.main(["solve", str(swingup), "--workers", "2"]) == 2
    assert "--workers goes with --starts" in capsys.readouterr().err


def test_without_dask_the_starts_run_in_this_process_and_say_so_once(monkeypatch):
    import warnings

    from colloc.pipeline import multistart

    _, problem = load_problem(Path(__file__).resolve().parents[1] / "problems" / "double_integrator_energy.py")
    monkeypatch.setattr(multistart, "_dask_available", lambda: False)
    monkeypatch.setattr(multistart, "_said_serial", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            res = cl.solve(problem, intervals=5, starts=2)
    said = [w for w in caught if "Dask is not installed" in str(w.message)]
    assert len(said) == 1 and "one after another" in str(said[0].message)
    assert res.optima[0]["objective"] == pytest.approx(12.0, rel=1e-9) and res.optima[0]["count"] == 2  # convex: one optimum
    monkeypatch.setattr("colloc.pipeline.cluster.dask_client_class", lambda: (_ for _ in ()).throw(cl.OptionError("no Dask here")))
    with pytest.raises(cl.OptionError, match="no Dask here"):  # a cluster asked for by name is not replaced silently
        cl.solve(problem, intervals=5, starts=2, workers=2)


def test_an_interrupted_multistart_keeps_the_starts_done_and_begins_no_other(monkeypatch):
    import dataclasses

    from colloc.pipeline import driver
    from problems import cartpole

    real, calls = driver.run, []

    def run(*args, **kwargs):  # Ctrl-C during the third start: IPOPT stops with its iterate
        res = real(*args, **kwargs)
        calls.append(res)
        return dataclasses.replace(res, status=cl.Status.INTERRUPTED, success=False) if len(calls) == 3 else res

    monkeypatch.setattr(driver, "run", run)
    res = cl.solve(cartpole.build(), intervals=20, starts=6, seed=0)
    assert len(calls) == 3
    assert [s["status"] for s in res.starts] == ["solved", "solved", "interrupted", "interrupted", "interrupted", "interrupted"]
    assert res.success and sum(o["count"] for o in res.optima) == 2
    assert "4 interrupted" in res.summary()
