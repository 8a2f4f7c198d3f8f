"""Nothing finished is lost, nothing is overwritten by another run, nothing stale is left behind.

A reader that leaves the pipe, a closed or full stdout, a result path that is a folder, a build() that
changes the working folder, a write that fails after the solve; ``--set`` values that differ only in
type, sweeps at other fixed values or into another run's files; stale ``NAME.unconverged.csv`` and
``NAME.optimum-<i>.csv`` files, and a better optimum of an earlier multi-start.

The double integrator (ẋ = v, v̇ = u, rest to rest over 1 in 1 s, minimize ∫u²) has J* = 12
(Kelly, SIAM Review 59(4), 2017, §2); Hermite–Simpson reproduces it to round-off.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import colloc as cl
from colloc import cli
from colloc.batch.outputs import merge_optima, result_name
from di_script import di_script

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

DI = di_script("def build(k=None, pause=0.0, hook=None):", imports=["os"], final="1.0", setup=[
    'if hook == "chdir":', '    os.chdir(os.environ["DI_ELSEWHERE"])', 'if hook == "mark":', '    open(os.environ["DI_MARK"], "w").close()',
    "if pause:", "    import time", "    time.sleep(pause)"])


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "di.py"
    path.write_text(textwrap.dedent(DI))
    return path


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def objective(path):
    return cl.Trajectory.read(path).metadata["objective"]


# -- standard output that goes away ----------------------------------------------------------------
def test_a_pipe_closed_after_one_line_loses_no_file(tmp_path, script):
    """`colloc solve … | head -1` exited 141 with nothing written."""
    proc = subprocess.Popen([sys.executable, "-m", "colloc", "solve", str(script), "--out", str(tmp_path / "o"), "--intervals", "200"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    proc.stdout.readline()
    proc.stdout.close()  # the reader leaves, as `head -1` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert objective(tmp_path / "o" / "di.csv") == pytest.approx(12.0, rel=1e-8)
    assert "standard output was dropped (the reader closed the pipe)" in err and "Traceback" not in err


@pytest.mark.parametrize("redirect", [">&-", "> /dev/full"])
def test_a_closed_or_full_stdout_loses_no_file(tmp_path, script, redirect):
    """A closed or full stdout exited 70 with nothing written."""
    if "full" in redirect and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    cmd = f"{sys.executable} -m colloc solve {script} --out {tmp_path / 'o'} {redirect}"
    proc = subprocess.run(cmd, shell=True, capture_output=True, text=True, env=ENV, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert objective(tmp_path / "o" / "di.csv") == pytest.approx(12.0, rel=1e-8)
    assert "standard output was dropped" in proc.stderr and "internal error" not in proc.stderr


# -- result paths ------------------------------------------------------------------------------------
def test_a_result_path_that_is_a_folder_is_refused_before_build(tmp_path, capsys, script, monkeypatch):
    out = tmp_path / "o"
    (out / "di_hook=mark.csv").mkdir(parents=True)
    monkeypatch.setenv("DI_MARK", str(tmp_path / "built"))
    code, _, err = run(capsys, "solve", script, "--set", "hook='mark'", "--out", out)
    assert code == 2 and str(out / "di_hook=mark.csv") in err and "is not a file" in err and err.count("\n") == 1, err
    assert not (tmp_path / "built").exists()  # refused before build() ran


def test_a_build_that_changes_the_working_folder_writes_into_out(tmp_path, capsys, script, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(tmp_path)  # (restored after the test: the build moves this process)
    monkeypatch.setenv("DI_ELSEWHERE", str(elsewhere))
    code, out, err = run(capsys, "solve", script, "--set", "hook='chdir'", "--quiet", "--out", "o")
    assert code == 0, err
    assert objective(tmp_path / "o" / "di_hook=chdir.csv") == pytest.approx(12.0, rel=1e-8)


def test_a_write_that_fails_after_the_solve_saves_the_result_elsewhere(tmp_path, capsys, script, monkeypatch):
    """A full disk at the end of the solve lost the result."""
    import colloc.results.trajectory as trajectory_module
    from colloc.errors import FileFormatError

    out, rescue = tmp_path / "o", tmp_path / "rescue"
    rescue.mkdir()
    real = trajectory_module.atomic_write

    def full_disk(path, data):
        if Path(path).parent == out:
            raise FileFormatError(f"Cannot write `{path}`: No space left on device.")
        return real(path, data)
    monkeypatch.setattr(trajectory_module, "atomic_write", full_disk)
    monkeypatch.setattr("tempfile.tempdir", str(rescue))
    code, stdout, err = run(capsys, "solve", script, "--quiet", "--out", out)
    assert code == 2, err
    saved = list(rescue.glob("colloc-rescued-di-*.csv"))
    assert len(saved) == 1 and objective(saved[0]) == pytest.approx(12.0, rel=1e-8)
    assert f"Cannot write `{out / 'di.csv'}`: No space left on device" in err and str(saved[0]) in err and err.count("\n") == 1, err
    assert "objective  12" in stdout  # the summary is still printed


# -- names ---------------------------------------------------------------------------------------------
def test_set_values_that_differ_only_in_type_get_their_own_names(tmp_path, capsys, script):
    names = [result_name("di", {"k": v}) for v in ([1, 2], "1,2", (1, 2), 1, "1", 1.0, "True", True)]
    assert len(set(names)) == len(names), names
    assert result_name("swingup", {"mode": "time"}) == "swingup_mode=time"  # a plain word stays bare
    for value in ("[1,2]", "'1,2'", "(1,2)"):
        assert run(capsys, "solve", script, "--set", f"k={value}", "--quiet", "--out", tmp_path / "o")[0] == 0
    assert len(list((tmp_path / "o").glob("di_k=*.csv"))) == 3


def test_a_sweep_never_takes_another_runs_files(tmp_path, capsys, script):
    """Point files that record other build parameters (another script's, or another sweep's) make the sweep
    choose a new name; its own earlier files (same parameters) are its to replace."""
    from colloc.batch.sweep import _unshared

    out = tmp_path / "o"
    assert run(capsys, "solve", script, "--quiet", "--out", out)[0] == 0
    (out / "di.csv").rename(out / "di_0.csv")  # e.g. the result of a script named di_0.py
    points = [{"k": 1}, {"k": 2}]
    with pytest.warns(UserWarning, match="holds results of another run"):
        assert _unshared(out, "di", points) == "di-2"
    traj = cl.Trajectory.read(out / "di_0.csv")
    traj.metadata["params"] = {"k": 1}
    traj.write(out / "di_0.csv")  # this sweep's own earlier point
    assert _unshared(out, "di", points) == "di"
    assert result_name("di", {"extra": 1}) != result_name("di", {"extra": 2})  # fixed values name the sweep


# -- stale files and earlier optima --------------------------------------------------------------------
def test_a_stale_unconverged_file_is_removed_by_the_next_result_in_name_csv(tmp_path, capsys, script):
    out = tmp_path / "o"
    assert run(capsys, "solve", script, "--quiet", "--out", out)[0] == 0
    assert run(capsys, "solve", script, "--quiet", "--out", out, "--ipopt", "max_iter=0")[0] == 1
    assert (out / "di.unconverged.csv").exists()
    (out / "di.csv").unlink()
    assert run(capsys, "solve", script, "--quiet", "--out", out)[0] == 0
    assert not (out / "di.unconverged.csv").exists()


def _optimum(good, objective_value, shift=0.0, **meta):
    traj = cl.Trajectory.read(good)
    cols = {n: traj[n] + (shift if n == "mass.x" else 0.0) for n in traj.names}
    metadata = {**traj.metadata, "objective": objective_value, **meta}
    return cl.Trajectory(traj.time, cols, traj.kinds, traj.parameters, metadata)


def test_optima_of_earlier_multi_starts_are_merged_never_lost_and_never_stale(tmp_path, capsys, script):
    out = tmp_path / "o"
    assert run(capsys, "solve", script, "--quiet", "--out", out)[0] == 0
    good = out / "di.csv"
    for i, (value, shift) in enumerate([(9.0, 0.0), (10.0, 0.5), (10.5, 0.7)], start=1):
        _optimum(good, value, shift).write(out / f"di.optimum-{i}.csv")
    new = [dict(objective=10.0, trajectory=_optimum(good, 10.0, 0.5)), dict(objective=11.0, trajectory=_optimum(good, 11.0, 1.0))]
    paths, best = merge_optima(out, "di", new, {"params": {}})
    assert [objective(p) for p in paths] == [9.0, 10.0, 10.5, 11.0]  # the earlier 10 and the new 10 are one optimum
    assert best is not None and best.metadata["objective"] == 9.0  # NAME.csv should keep the earlier, better one
    other = [dict(objective=12.0, trajectory=_optimum(good, 12.0, intervals=20))]  # another mesh: the earlier ones go
    paths, best = merge_optima(out, "di", other, {"params": {}})
    assert best is None and sorted(p.name for p in out.glob("di.optimum-*.csv")) == ["di.optimum-1.csv"]


# -- signals and the cluster -----------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["info", "solve"])
def test_sigterm_during_the_build_exits_130(tmp_path, script, command):
    """SIGTERM outside the IPOPT call exited 143."""
    import signal
    import time

    mark = tmp_path / "built"
    argv = [sys.executable, "-m", "colloc", command, str(script), "--set", "hook='mark'", "--set", "pause=60"]
    proc = subprocess.Popen(argv + (["--out", str(tmp_path / "o")] if command == "solve" else []),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**ENV, "DI_MARK": str(mark)})
    start = time.time()
    while not mark.exists() and time.time() - start < 60:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err, err


def test_a_point_still_running_when_the_sweep_stops_writes_no_file(tmp_path, script):
    """SIGTERM mid-sweep listed points as interrupted that then finished and wrote their files."""
    from colloc.batch.sweep import STOP_OPTION, solve_point

    stop = tmp_path / ".colloc-stop-test"
    stop.touch()
    row = solve_point(str(script), {}, 0, str(tmp_path / "di_0.csv"), {STOP_OPTION: str(stop)})
    assert row["status"] == "interrupted" and not (tmp_path / "di_0.csv").exists()
    row = solve_point(str(script), {}, 0, str(tmp_path / "di_0.csv"), {STOP_OPTION: str(tmp_path / "absent")})
    assert row["status"] == "solved" and row["objective"] == pytest.approx(12.0, rel=1e-8)


def test_ctrl_c_while_starts_are_submitted_is_an_interrupt_not_an_internal_error(monkeypatch):
    """Ctrl-C while `--starts 100000` submitted exited 70 (IndexError)."""
    pytest.importorskip("distributed")
    import colloc.pipeline.cluster as cluster
    from colloc.pipeline import multistart

    class Client:
        submitted = 0

        def submit(self, *args, **kwargs):
            Client.submitted += 1
            if Client.submitted == 3:
                raise KeyboardInterrupt
            return object()

        def cancel(self, futures):
            pass

    monkeypatch.setattr(cluster, "connect", lambda *a: (Client(), []))
    outcomes = multistart._on_dask(("di.py", {}), [None] * 5, {}, None, 1, None)
    assert [(k, r.status) for k, r in outcomes] == [(k, "interrupted") for k in range(5)]
    with pytest.raises(KeyboardInterrupt):
        multistart._combine(outcomes, 0, 1.0)


def test_a_start_whose_worker_died_is_reported_lost_not_unconverged():
    distributed = pytest.importorskip("distributed")
    from colloc.pipeline.multistart import _lost

    assert _lost(distributed.KilledWorker("task", "worker", 0)).status == "lost"
    assert _lost(ValueError("bad")).status == "error"


def test_more_workers_than_cores_is_refused_in_one_sentence(tmp_path, capsys, script):
    cores = os.cpu_count() or 1
    for argv in (["sweep", script, "--set", "pause=0:0:2"], ["solve", script, "--starts", "3"]):
        code, _, err = run(capsys, *argv, "--workers", 500, "--out", tmp_path / "o")
        assert code == 2 and f"this machine has {cores} core" in err and err.count("\n") == 1, err


def test_a_scheduler_without_workers_is_refused_instead_of_hanging(tmp_path, capsys, script, monkeypatch):
    distributed = pytest.importorskip("distributed")
    import colloc.pipeline.cluster as cluster

    monkeypatch.setattr(cluster, "WORKER_TIMEOUT", 1.0)
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None) as empty:
        code, _, err = run(capsys, "sweep", script, "--set", "pause=0:0:2", "--scheduler", empty.scheduler_address,
                           "--point-timeout", 5, "--out", tmp_path / "o", "--quiet")
    assert code == 2 and "has no workers" in err and empty.scheduler_address in err, err


@pytest.mark.slow
def test_a_sweep_whose_workers_all_leave_gives_up_instead_of_hanging(tmp_path, capsys, script, monkeypatch):
    """Every worker of a running scheduler gone mid-sweep: the points left are rows, not a silent hang."""
    import threading

    distributed = pytest.importorskip("distributed")
    import colloc.pipeline.sweep_runner as sweep_runner

    monkeypatch.setattr(sweep_runner, "NO_WORKER_LIMIT", 2.0)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        timer = threading.Timer(8.0, cluster.scale, (0,))  # the worker leaves while a point sleeps in build()
        timer.start()
        code, out, err = run(capsys, "sweep", script, "--set", "pause=30:31:2", "--scheduler", cluster.scheduler_address,
                             "--out", tmp_path / "o", "--quiet")
        timer.cancel()
    assert code == 1, err
    assert "no Dask worker was left to run it" in out and "crashed" in out, out


def test_ctrl_c_during_fatrop_s_build_ends_the_process_at_once():
    """The build is one C++ call; Python's handler would run only after it."""
    code = ("import os, signal, time\nfrom colloc.solvers.fatrop import _ctrl_c_ends_the_process\n"
            "with _ctrl_c_ends_the_process():\n    os.kill(os.getpid(), signal.SIGINT)\n    time.sleep(30)\nprint('survived')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=60)
    assert proc.returncode == -2 and "survived" not in proc.stdout  # killed by SIGINT: a shell reports 130


@pytest.mark.slow
def test_ctrl_c_to_a_multi_start_prints_no_worker_tracebacks(tmp_path, script):
    import signal
    import time

    proc = subprocess.Popen([sys.executable, "-m", "colloc", "solve", str(script), "--set", "pause=3.0", "--starts", "8",
                             "--workers", str(min(2, os.cpu_count() or 1)), "--out", str(tmp_path / "o")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, start_new_session=True)
    start = time.time()
    while time.time() - start < 90 and not list((tmp_path / "o").glob("*.lock")):
        time.sleep(0.1)
    time.sleep(12)  # the cluster up and some starts running
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: to the whole process group
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "WARNING" not in err, err
