"""More ways of breaking colloc, each answered by one sentence and the documented exit code: scripts without
states or with a runaway recursion, usage errors, tolerances that cannot be met, files of another problem,
guesses and plots of files whose time runs backwards, unreachable schedulers, ranges that are not ranges,
and a multi-phase problem warm-started from its own result file."""
from __future__ import annotations

from pathlib import Path

import pytest

import colloc as cl
from colloc.cli import commands as cli
from di_script import di_script

ROOT = Path(__file__).resolve().parents[1]
ROCKET = ROOT / "problems" / "two_phase_rocket.py"

def di(hook="pass"):
    return di_script(setup=[hook], bounds=True)


def script(folder, name="di.py", hook="pass", text=None):
    path = folder / name
    path.write_text(text if text is not None else di(hook))
    return path


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code, err, *words):
    assert code == 2, err
    assert err.startswith("colloc: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, (w, err)


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("di")
    path = script(folder)
    assert cli.main(["solve", str(path), "--quiet", "--out", str(folder / "out")]) == 0
    return path, folder / "out" / "di.csv"


def test_a_problem_without_states_is_refused_in_one_sentence(tmp_path, capsys):
    path = script(tmp_path, "controls.py", text="import colloc as cl\ndef build():\n    c = cl.Component('m')\n"
                  "    u = c.control('u')\n    p = cl.Problem([c], t0=0, tf=1, name='static')\n    p.minimize(integral=u**2)\n    return p\n")
    for argv in (["solve", path, "--quiet", "--out", tmp_path / "o"], ["info", path]):
        one_line_error(*run(capsys, *argv)[::2], "Problem `static` has no states")
    with pytest.raises(cl.ProblemError, match="has no states"):
        cl.solve(cl.Problem([cl.Component("m")], t0=0, tf=1))


def test_a_runaway_recursion_in_the_script_is_one_line_with_its_frame_once(tmp_path, capsys):
    path = script(tmp_path, "deep.py", text="def build():\n    return build()\n")
    code, _, err = run(capsys, "solve", path, "--quiet", "--out", tmp_path / "o")
    one_line_error(code, err, "RecursionError", f'File "{path}", line 2, in build', "(the same frame")
    assert err.count(f'File "{path}"') <= 3 and len(err) < 1000


@pytest.mark.parametrize("argv, words", [
    (["solve", "{di}", "--intervals", "abc"], ["colloc solve: argument --intervals: invalid int value: 'abc'", "colloc solve --help"]),
    (["solve", "{di}", "--quiet", "--verbose"], ["not allowed with argument --quiet"]),
    (["solve"], ["the following arguments are required: PROBLEM.py"]),
    (["bogus"], ["invalid choice: 'bogus'"]),
    (["verify", "{csv}", "{di}", "--tolerance", "abc"], ["invalid float value: 'abc'"]),
    (["verify", "{csv}", "{di}", "--tolerance", "-1"], ["--tolerance must be a positive number; got -1."]),
    (["verify", "{csv}", "{di}", "--tolerance", "nan"], ["--tolerance must be a positive number; got nan."]),
    (["verify", "{csv}", "{di}", "--dynamics-tolerance", "0"], ["--dynamics-tolerance must be a positive number; got 0."]),
    (["solve", "{rocket}", "--scheme", "midpoint-vi", "--quiet", "--out", "{tmp}/o"], ["`midpoint-vi` is the midpoint variational integrator",
                                                                                    "single-phase"]),
])
def test_usage_errors_are_one_line_with_exit_2(tmp_path, capsys, solved, argv, words):
    path, good = solved
    argv = [a.format(di=path, csv=good, rocket=ROCKET, tmp=tmp_path) for a in argv]
    one_line_error(*run(capsys, *argv)[::2], *words)


def test_a_file_of_another_problem_is_refused_naming_the_file_and_the_column(tmp_path, capsys, solved):
    path, good = solved
    other = script(tmp_path, "other.py", text=di().replace('"mass"', '"body"'))
    one_line_error(*run(capsys, "verify", good, other)[::2], f"`{good}` has no column `body.x`", "another problem")
    one_line_error(*run(capsys, "verify", good, ROCKET)[::2], f"`{good}` has no `phase` column")
    rocket = tmp_path / "rocket"
    assert run(capsys, "solve", ROCKET, "--quiet", "--out", rocket, "--intervals", "4")[0] in (0, 1)
    (phased,) = rocket.glob("*.csv")
    one_line_error(*run(capsys, "solve", path, "--guess", phased, "--quiet", "--out", tmp_path / "g")[::2],
                   f"The guess `{phased}` is a multi-phase result")


def test_a_guess_whose_time_runs_backwards_is_refused_before_build(tmp_path, capsys, solved):
    path, good = solved
    traj = cl.Trajectory.read(good)
    time = traj.time.copy()
    time[[3, 4]] = time[[4, 3]]
    bad = tmp_path / "back.csv"
    cl.Trajectory(time, {n: traj[n] for n in traj.names}, traj.kinds, traj.parameters, traj.metadata).write(bad)
    marker = tmp_path / "built"
    hooked = script(tmp_path, "hooked.py", hook=f"open({str(marker)!r}, 'w').close()")
    code, _, err = run(capsys, "solve", hooked, "--guess", bad, "--quiet", "--out", tmp_path / "g")
    one_line_error(code, err, f"The times of the guess of `{bad}` decrease from row 4 to 5")
    assert not marker.exists()
    one_line_error(*run(capsys, "plot", bad, "--out", tmp_path / "p.png")[::2], f"The times of the trajectory of `{bad}` decrease")
    assert not (tmp_path / "p.png").exists()


def test_a_guess_with_a_nan_names_the_file_the_column_and_the_row(tmp_path, capsys, solved):
    path, good = solved
    traj = cl.Trajectory.read(good)
    cols = {n: traj[n].copy() for n in traj.names}
    cols["mass.v"][5] = float("nan")
    bad = tmp_path / "nan.csv"
    cl.Trajectory(traj.time, cols, traj.kinds, traj.parameters, traj.metadata).write(bad)
    code, _, err = run(capsys, "solve", path, "--guess", bad, "--quiet", "--out", tmp_path / "g")
    one_line_error(code, err, f"Guess column `mass.v` of `{bad}` is NaN at t = {traj.time[5]:.6g} (row 6)")


def test_sweep_refuses_an_unreachable_scheduler_and_a_range_that_is_not_one(tmp_path, capsys, solved):
    path, _ = solved
    argv = ["sweep", path, "--set", "distance=1:2:2", "--out", tmp_path / "s", "--quiet"]
    one_line_error(*run(capsys, *argv, "--scheduler", "nonsense")[::2], "Cannot connect to the Dask scheduler at `nonsense`")
    argv[3] = "distance=a:b:3"
    one_line_error(*run(capsys, *argv)[::2], "--set distance=a:b:3 looks like a range but is not one")
    assert not (tmp_path / "s").exists()


def test_a_multi_phase_problem_warm_starts_from_its_own_result_file(tmp_path, capsys):
    """The file holds every phase's parameters (the burn's thrust); the coast takes none of them."""
    import importlib.util

    out = tmp_path / "r"
    assert cli.main(["solve", str(ROCKET), "--quiet", "--out", str(out), "--intervals", "6"]) == 0
    code, _, err = run(capsys, "solve", ROCKET, "--guess", out / "two_phase_rocket.csv", "--quiet", "--out", tmp_path / "w",
                       "--intervals", "6")
    assert code == 0, err
    spec = importlib.util.spec_from_file_location("rocket", ROCKET)
    rocket = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rocket)
    apex = -cl.Trajectory.read(tmp_path / "w" / "two_phase_rocket.csv").metadata["objective"]
    assert apex == pytest.approx(rocket.exact()["apex"], rel=1e-4)  # the closed form of the problem's docstring


def test_a_sweep_finding_its_name_claimed_by_another_sweep_writes_new_names(tmp_path, capsys, solved):
    """Two sweeps of one script into one folder at once would write the same point files and summary."""
    from colloc.batch.outputs import ResultSlot
    from colloc.batch.sweep import read_summary

    path, _ = solved
    out = tmp_path / "s"
    out.mkdir()
    with ResultSlot(out, "di_sweep"), pytest.warns(UserWarning, match="being written by another colloc sweep"):
        code, text, err = run(capsys, "sweep", path, "--set", "distance=1:2:2", "--workers", "1", "--out", out, "--quiet")
    assert code == 0, err
    assert str(out / "di-2_sweep.csv") in text
    rows = read_summary(out / "di-2_sweep.csv")
    assert [r["objective"] for r in rows] == pytest.approx([12.0, 48.0], rel=1e-8)  # J* = 12 d²
    assert all(r["file"].startswith("di-2_") for r in rows) and not (out / "di_sweep.csv").exists()
    assert not list(out.glob(".*"))  # the claim is released


def test_a_checkpoint_that_cannot_be_written_warns_once_and_the_solve_goes_on(tmp_path, solved):
    path, _ = solved
    from colloc.pipeline.script import load_problem

    _, problem = load_problem(path)
    where = tmp_path / "no-such-folder" / "ck.csv"
    with pytest.warns(UserWarning, match="Could not write a checkpoint") as caught:
        res = cl.solve(problem, intervals=10, checkpoint=(where, 1), progress=lambda info: None)
    assert res.success and res.objective == pytest.approx(12.0, rel=1e-8)
    assert sum("checkpoint" in str(w.message) for w in caught) == 1


def test_verify_refuses_by_name_a_file_solved_with_a_parameter_the_script_does_not_take(tmp_path, capsys, solved):
    path, _ = solved
    out = tmp_path / "o"
    assert run(capsys, "solve", path, "--set", "distance=2", "--quiet", "--out", out)[0] == 0
    (file,) = out.glob("*.csv")
    fixed = script(tmp_path, "fixed.py", text=di().replace("def build(distance=1.0):", "def build():\n    distance = 2.0"))
    one_line_error(*run(capsys, "verify", file, fixed)[::2], "was solved with --set distance=2", "takes no parameter `distance`")
