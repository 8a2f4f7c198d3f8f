"""Faults lose nothing: user-code errors, corrupt files, failed verification, bad output folders,
concurrent and unconverged runs, orphan temporary files, and the exit-code contract.

The double integrator (ẋ = v, v̇ = u, rest to rest over distance d in 1 s, minimize ∫u²) has
J* = 12 d² (Kelly, SIAM Review 59(4), 2017, §2); Hermite–Simpson reproduces it to round-off.
"""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import colloc as cl
from colloc.cli import commands as cli
from colloc.results.files import atomic_write, remove_orphans
from colloc.batch.outputs import ResultSlot
from di_script import di_script

ROOT = Path(__file__).resolve().parents[1]

DI = dict(bounds=True, path='prob.path(v, upper=10.0, name="speed")')


def script(folder, name="di.py", hook="pass"):
    path = folder / name
    path.write_text(di_script(setup=[hook], **DI))
    return path


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def solved(tmp_path, capsys):
    """A converged double-integrator result and its script."""
    path = script(tmp_path)
    code, _, err = run(capsys, "solve", path, "--quiet", "--out", tmp_path / "out")
    assert code == 0, err
    return path, tmp_path / "out" / "di.csv"


# -- 1. errors in the user's script -------------------------------------------------------------
@pytest.mark.parametrize("text, line, cause", [
    ("import colloc\ndef build():\n    return undefined_name + 1\n", 3, "NameError: name 'undefined_name' is not defined"),
    ("import colloc\nD = {}\ndef helper():\n    return D['mass']\ndef build():\n    return helper()\n", 4, "KeyError: key 'mass'"),
    ("import colloc\nimport no_such_module_xyz\ndef build():\n    pass\n", 2, "no module named `no_such_module_xyz`"),
    ("import colloc as cl\ndef build():\n    c = cl.Component('m')\n    x = c.state('x')\n    c.residual(x, 'x - 1')\n", 5,
     "dynamics of `m.x` are the text 'x - 1'"),
    ("def build(:\n    pass\n", 1, "syntax error at line 1"),
    ("import colloc\ndef build():\n    return [1][3]\n", 3, "IndexError"),
])
def test_user_script_errors_show_only_the_users_frames_and_exit_2(tmp_path, capsys, text, line, cause):
    path = tmp_path / "mine.py"
    path.write_text(text)
    for argv in (["solve", path, "--out", tmp_path / "o"], ["info", path]):
        code, out, err = run(capsys, *argv)
        assert code == 2, err
        assert err.startswith("colloc: error: ") and err.count("\n") == 1, err
        assert cause in err, err
        assert f'File "{path}", line {line}' in err, err
        assert "Traceback" not in err and "colloc/script.py" not in err and "importlib" not in err, err
    assert not (tmp_path / "o").exists()  # the folder made for a run that never started is gone


# -- 7. exit codes -------------------------------------------------------------------------------------
def test_an_internal_error_prints_one_line_and_the_traceback_file(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "_run_info", lambda args: 1 / 0)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    code, out, err = run(capsys, "info", ROOT / "problems" / "kirk.py")
    assert code == cli.EXIT_INTERNAL == 70
    assert err.count("\n") == 1 and "internal error (ZeroDivisionError: division by zero)" in err
    report = Path(err.rsplit("Full traceback: ", 1)[1].strip())
    assert report.parent == tmp_path and report.exists()
    text = report.read_text()
    assert "Traceback (most recent call last)" in text and "ZeroDivisionError" in text and "command: colloc info" in text


def test_exit_codes_are_documented_in_help_and_the_cli_guide(capsys):
    for argv in (["--help"], ["solve", "--help"], ["sweep", "--help"], ["verify", "--help"]):
        assert cli.main(argv) == 0
        text = " ".join(capsys.readouterr().out.split())
        for code in ("0 solved", "1 not converged", "2 bad input", "130 interrupted", "70 internal error"):
            assert code in text, (argv, code)
    readme = " ".join((ROOT / "docs" / "cli.md").read_text().split())
    for code in ("`0`", "`1`", "`2`", "`130`", "`70`"):
        assert code in readme


def test_interrupt_exits_130(tmp_path, capsys, monkeypatch):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_run_info", interrupted)
    code, _, err = run(capsys, "info", ROOT / "problems" / "kirk.py")
    assert code == 130 and "interrupted" in err


# -- 2. corrupt and odd files for plot, verify and --guess -----------------------------------------
def corrupt(tmp_path, solved_file, kind):
    path = tmp_path / f"bad_{kind}.csv"
    if kind == "binary":
        path.write_bytes(bytes(range(256)) * 4)
    elif kind == "folder":
        path.mkdir()
    elif kind == "single-row":
        lines = solved_file.read_text().splitlines()
        header = next(i for i, l in enumerate(lines) if l.startswith("time,"))
        path.write_text("\n".join(lines[:header + 2]) + "\n")
    elif kind == "duplicated":
        text = solved_file.read_text().replace("time,mass.x,mass.v", "time,mass.x,mass.x")
        path.write_text(text)
    elif kind in ("truncated-npz", "truncated-sto"):
        suffix = ".npz" if kind == "truncated-npz" else ".sto"
        full = tmp_path / f"full{suffix}"
        cl.Trajectory.read(solved_file).write(full)
        path = tmp_path / f"bad_{kind}{suffix}"
        data = full.read_bytes()
        path.write_bytes(data[:len(data) // 2] if suffix == ".npz" else data[:data.index(b"endheader") - 3])
    return path


KINDS = ["binary", "folder", "single-row", "duplicated", "truncated-npz", "truncated-sto"]
REASON = {"binary": "binary", "folder": "is a folder", "single-row": "1 row of values", "duplicated": "two columns named `mass.x`",
          "truncated-npz": "truncated or corrupt", "truncated-sto": "no `endheader`"}


@pytest.mark.parametrize("kind", KINDS)
def test_corrupt_files_are_refused_by_name_for_plot_verify_and_guess(tmp_path, capsys, solved, kind):
    path_script, good = solved
    bad = corrupt(tmp_path, good, kind)
    marker = tmp_path / "built"
    hooked = script(tmp_path, "hooked.py", hook=f"open({str(marker)!r}, 'w').close()")
    for argv in (["plot", bad, "--out", tmp_path / "p.png"], ["verify", bad, path_script],
                 ["solve", hooked, "--guess", bad, "--quiet", "--out", tmp_path / "g"]):
        code, out, err = run(capsys, *argv)
        assert code == 2, (argv, err)
        assert err.startswith("colloc: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
        assert bad.name in err and REASON[kind] in err, err
    assert not marker.exists(), "build() ran although the guess file was unreadable"


def test_bom_and_crlf_files_work_for_plot_verify_and_guess(tmp_path, capsys, solved):
    path_script, good = solved
    odd = tmp_path / "excel.csv"
    odd.write_bytes(b"\xef\xbb\xbf" + good.read_bytes().replace(b"\n", b"\r\n"))
    assert run(capsys, "plot", odd, "--out", tmp_path / "p.png")[0] == 0
    assert run(capsys, "verify", odd, path_script)[0] == 0
    code, out, err = run(capsys, "solve", path_script, "--guess", odd, "--quiet", "--out", tmp_path / "g")
    assert code == 0, err
    assert cl.Trajectory.read(tmp_path / "g" / "di.csv").metadata["objective"] == pytest.approx(12.0, rel=1e-8)


def test_a_guess_that_does_not_cover_the_horizon_says_so(tmp_path, capsys, solved):
    path_script, good = solved
    traj = cl.Trajectory.read(good)
    half = traj.time <= 0.5
    short = tmp_path / "short.csv"
    cl.Trajectory(traj.time[half], {n: traj[n][half] for n in traj.names}, traj.kinds, traj.parameters, traj.metadata).write(short)
    with pytest.warns(UserWarning, match=r"The guess \(`.*short\.csv`\) covers t ∈ \[0, 0\.5\] but the horizon is \[0, 1\]") as caught:
        code, out, err = run(capsys, "solve", path_script, "--guess", short, "--quiet", "--out", tmp_path / "g")
    assert code == 0, err
    w = caught[0]  # outside pytest the command prints it as one line:
    assert cli._format_warning(w.message, w.category, w.filename, w.lineno) == f"colloc: warning: {w.message}\n"


# -- 3. verify ------------------------------------------------------------------------------------------
def edited(tmp_path, good, name, change):
    traj = cl.Trajectory.read(good)
    time, cols = traj.time.copy(), {n: traj[n].copy() for n in traj.names}
    time, cols = change(time, cols)
    path = tmp_path / f"{name}.csv"
    cl.Trajectory(time, cols, traj.kinds, traj.parameters, traj.metadata).write(path)
    return path


def _set(cols, name, rows, value):
    cols[name][rows] = value
    return cols


CHANGES = {
    "cut-off": (lambda t, c: (t[:11], {k: v[:11] for k, v in c.items()}), "horizon", "cut off before the horizon ends"),
    "backwards": (lambda t, c: (t[::-1].copy(), c), "time", "time does not increase"),
    "nan": (lambda t, c: (t, _set(c, "mass.v", 7, np.nan)), "finite", "`mass.v` is nan"),
    "initial": (lambda t, c: (t, _set(c, "mass.x", 0, 0.01)), "initial", "`mass.x` is 0.01 at t = 0"),
    "bounds": (lambda t, c: (t, _set(c, "mass.x", slice(9, 12), 6.0)), "bounds", "outside its bounds [-5, 5]"),
    "path": (lambda t, c: (t, _set(c, "mass.v", 10, 11.0)), "path:speed", "outside [-inf, 10]"),
    "dynamics": (lambda t, c: (t, _set(c, "mass.x", slice(8, 13), c["mass.x"][8:13] + 0.05)), "dynamics:mass.x",
                 "the states do not follow the dynamics"),
}


@pytest.mark.parametrize("case", list(CHANGES))
def test_verify_fails_with_the_reason_when_the_file_does_not_solve_the_problem(tmp_path, capsys, solved, case):
    path_script, good = solved
    change, check, reason = CHANGES[case]
    bad = edited(tmp_path, good, case, change)
    code, out, err = run(capsys, "verify", bad, path_script)
    assert code == 1, out + err
    assert f"FAIL  {check}" in out and reason in out, out
    assert "verification failed: " in out


def test_verify_passes_a_solution_and_prints_the_tolerance_and_a_verdict_per_state(capsys, solved):
    path_script, good = solved
    code, out, err = run(capsys, "verify", good, path_script, "--tolerance", "1e-7")
    assert code == 0, out + err
    assert "tolerance 1.0e-07 × max(1, |bound|)" in out and "against the local error the file's solve estimated" in out
    for name in ("mass.x", "mass.v"):
        line = next(l for l in out.splitlines() if f"dynamics:{name} " in l)
        assert line.split()[0] == "pass"
        assert float(line.split("error ")[1].split()[0]) < 1e-9  # cubic x*: HS is exact up to the integrator's 1e-10
    assert "verified: every check passed." in out


# -- 4. output folders ----------------------------------------------------------------------------------
def test_an_out_folder_that_cannot_be_created_is_refused_before_build(tmp_path, capsys):
    marker = tmp_path / "built"
    path = script(tmp_path, hook=f"open({str(marker)!r}, 'w').close()")
    blocker = tmp_path / "file"
    blocker.write_text("")
    for out in (blocker / "sub", blocker):
        code, _, err = run(capsys, "solve", path, "--out", out)
        assert code == 2 and str(out) in err and err.count("\n") == 1, err
    assert not marker.exists()


def test_an_out_folder_that_is_not_writable_is_refused_before_build(tmp_path, capsys, monkeypatch):
    marker = tmp_path / "built"
    path = script(tmp_path, hook=f"open({str(marker)!r}, 'w').close()")
    out = tmp_path / "ro"
    out.mkdir()
    if os.geteuid() != 0:
        out.chmod(0o555)
    else:  # root writes anywhere: make the write probe fail the way a read-only folder does
        import tempfile

        real = tempfile.mkstemp

        def refuse(*args, dir=None, **kw):
            if dir is not None and Path(dir) == out:
                raise PermissionError(13, "Permission denied")
            return real(*args, dir=dir, **kw)

        monkeypatch.setattr(tempfile, "mkstemp", refuse)
    code, _, err = run(capsys, "solve", path, "--out", out)
    assert code == 2 and "is not writable" in err and str(out) in err, err
    assert not marker.exists()


# -- 5. results never lost ------------------------------------------------------------------------------
def test_a_run_finding_its_name_claimed_writes_a_new_name(tmp_path, capsys):
    path = script(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    with ResultSlot(out, "di") as other:  # another run (here: this process) holds di.csv
        code, stdout, err = run(capsys, "solve", path, "--quiet", "--out", out)
        assert other.path == out / "di.csv"
    assert code == 0, err
    assert "being written by another colloc run" in err and str(out / "di-2.csv") in err
    assert cl.Trajectory.read(out / "di-2.csv").metadata["success"] is True
    assert not list(out.glob(".*.lock"))


def test_two_concurrent_solves_into_one_folder_keep_both_results(tmp_path):
    """Two processes solving at once (each build waits for the other to start) both keep their result.

    Both have the same file name (no --set: the distance comes from the environment), so the second must
    find the name claimed and write ``di-2.csv``."""
    out = tmp_path / "out"
    gate = tmp_path / "gate"
    gate.mkdir()
    hook = (f"import os, time; distance = float(os.environ['DI_DISTANCE']); open(os.path.join({str(gate)!r}, str(distance)), 'w').close()\n"
            f"    t = time.time()\n    while len(os.listdir({str(gate)!r})) < 2 and time.time() - t < 60: time.sleep(0.02)")
    path = script(tmp_path, hook=hook)
    procs = [subprocess.Popen([sys.executable, "-m", "colloc", "solve", str(path), "--quiet", "--out", str(out)],
                              env={**os.environ, "PYTHONPATH": str(ROOT), "DI_DISTANCE": str(d)}, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for d in (1.0, 2.0)]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    assert sorted(f.name for f in out.glob("di*.csv")) == ["di-2.csv", "di.csv"]
    objectives = sorted(cl.Trajectory.read(f).metadata["objective"] for f in out.glob("di*.csv"))
    assert objectives == pytest.approx([12.0, 48.0], rel=1e-8)  # J* = 12 d²: both results are there
    assert not list(out.glob(".*"))  # no lock or temporary file left


def test_an_unconverged_solve_never_replaces_a_converged_result(tmp_path, capsys, solved):
    path, good = solved
    before = good.read_bytes()
    code, out, err = run(capsys, "solve", path, "--quiet", "--out", good.parent, "--ipopt", "max_iter=1", "--checkpoint-every", "1")
    assert code == 1
    assert good.read_bytes() == before
    kept = cl.Trajectory.read(good.parent / "di.unconverged.csv")
    assert kept.metadata["success"] is False and "di.unconverged.csv" in out and "--force" in out
    # a converged rerun replaces the result and drops the stale unconverged file
    assert run(capsys, "solve", path, "--quiet", "--out", good.parent)[0] == 0
    assert not (good.parent / "di.unconverged.csv").exists()
    # --force lets an unconverged result replace it
    assert run(capsys, "solve", path, "--quiet", "--out", good.parent, "--ipopt", "max_iter=1", "--force")[0] == 1
    assert cl.Trajectory.read(good).metadata["success"] is False


def test_a_stale_lock_of_a_killed_run_is_taken_over(tmp_path, capsys):
    path = script(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    import socket

    (out / ".di.csv.lock").write_text(f"{socket.gethostname()} {dead}\n")
    (out / ".other.csv.lock").write_text(f"{socket.gethostname()} {dead}\n")
    (out / ".live.csv.lock").write_text(f"{socket.gethostname()} {os.getpid()}\n")
    assert run(capsys, "solve", path, "--quiet", "--out", out)[0] == 0
    assert (out / "di.csv").exists() and not (out / "di-2.csv").exists()
    assert sorted(p.name for p in out.glob(".*")) == [".live.csv.lock"]  # stale locks are cleaned, a live one stays


def test_a_writer_killed_mid_write_leaves_an_orphan_that_the_next_run_removes(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    killed = textwrap.dedent(f"""
        import os
        import colloc.results.files as f
        os.replace = lambda *a: os._exit(9)          # the process dies between writing and renaming
        f.atomic_write({str(out / 'di.csv')!r}, b"x" * 100000)
    """)
    proc = subprocess.run([sys.executable, "-c", killed], env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 9
    orphans = list(out.glob(".colloc-*.tmp"))
    assert len(orphans) == 1
    atomic_write(out / "mine.txt", b"live")  # a live writer's own file is never taken for an orphan
    from colloc.results.files import _host

    live = out / f".colloc-{_host()}-{os.getpid()}-x.tmp"
    live.write_bytes(b"")
    assert remove_orphans(out) == [str(orphans[0])]
    assert live.exists()
    live.unlink()
    assert run(capsys, "solve", script(tmp_path), "--quiet", "--out", out)[0] == 0
    assert not list(out.glob(".colloc-*"))


def test_every_test_named_in_the_reliability_document_exists():
    import re

    text = (ROOT / "docs" / "reliability.md").read_text()
    named, current = [], None
    for m in re.finditer(r"`(tests/\w+\.py)?::(\w+)`", text):
        current = m.group(1) or current
        named.append((current, m.group(2)))
    assert len(named) > 20
    for file, name in named:
        assert re.search(rf"^def {name}\(", (ROOT / file).read_text(), re.M), f"{file}::{name}"


def test_a_non_finite_residual_is_reported_as_non_finite_in_the_violations_and_the_summary():
    """√(x − 1) at x = 0: IPOPT stops on the first evaluation and hands back no constraint values."""
    import casadi as ca

    c = cl.Component("m")
    x = c.state("x", bounds=(-10, 10))
    u = c.control("u", bounds=(-5, 5))
    c.derivative(x, ca.sqrt(x - 1) + u)
    p = cl.Problem([c], t0=0, tf=1, name="nan")
    p.initial({x: 0.0})
    p.minimize(integral=u**2)
    res = cl.solve(p, intervals=5)
    assert res.status == cl.Status.INVALID_NUMBER and not res.success
    assert "defect.hermite:m.x@k=0" in res.message
    assert not np.isfinite(res.violations["defect.hermite:m.x"])
    text = res.summary()
    assert "non-finite" in text and "max violation defect.hermite         0.00e+00" not in text


def test_ctrl_c_stops_a_solve_without_iteration_callback_and_keeps_the_iterate(monkeypatch):
    """With no progress or checkpoint there is no iteration callback: CasADi's own signal check stops IPOPT."""
    import importlib
    import signal
    import threading

    from colloc.solvers import ipopt as ipopt_backend

    class SignalWhileRunning(ipopt_backend._interruptible):
        @contextlib.contextmanager
        def armed(self):
            with super().armed():
                timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
                timer.start()
                try:
                    yield
                finally:
                    timer.cancel()

    monkeypatch.setattr(ipopt_backend, "_interruptible", SignalWhileRunning)
    problem = importlib.import_module("problems.cartpole").build()
    res = cl.solve(problem, intervals=3000, ipopt={"tol": 1e-14, "max_iter": 500})
    if res.status == cl.Status.SOLVED:
        pytest.skip("the solve converged before SIGINT arrived")
    assert res.status == cl.Status.INTERRUPTED and not res.success and "interrupted" in res.message
    assert np.isfinite(res.trajectory["cartpole.x"]).all() and res.trajectory.time.size == 6001
