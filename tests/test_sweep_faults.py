"""A sweep always ends with a summary listing every point, on a real local Dask cluster (2 workers):
points that solve, fail, kill their worker (os._exit, a segfault), hang past --point-timeout, or are
interrupted by Ctrl-C; and sweep arguments are checked before any point runs.

The solving points are the double integrator (J* = 12 d², Kelly, SIAM Review 59(4), 2017, §2),
which Hermite–Simpson reproduces to round-off.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from colloc.cli import commands as cli
from colloc.batch.sweep import read_summary, sweep
from di_script import di_script

pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[1]

FAULTY = di_script('def build(mode=0, marker=""):', solve="dict(intervals=6)", name="faulty", implicit=False, final="1.0 + mode / 10",
                   imports=["ctypes", "os", "time"], setup=[
                       "if marker:", '    open(marker, "w").close()', "if mode == 1:", "    os._exit(3)                  # the worker process dies",
                       "if mode == 2:", "    ctypes.string_at(0)          # a crash in native code (SIGSEGV)",
                       "if mode == 3:", "    while True:                  # a point that never ends", "        time.sleep(0.01)",
                       "if mode == 4:", '    raise ValueError("no such rig")'])


@pytest.fixture
def faulty(tmp_path):
    path = tmp_path / "faulty.py"
    path.write_text(textwrap.dedent(FAULTY))
    return path


def test_crashing_hanging_and_failing_points_all_end_up_in_the_summary(tmp_path, faulty):
    """Points 0 and 5 solve; 1 calls os._exit; 2 segfaults; 3 hangs (time limit 6 s; the workers import colloc
    before the first point, so the limit measures only build and solve, well under a second here); 4 raises."""
    out = tmp_path / "out"
    seen = []
    rows = sweep(faulty, {"mode": [0, 1, 2, 3, 4, 0]}, workers=2, out=out, progress=seen.append, point_timeout=6.0)
    status = [r["status"] for r in rows]
    assert status == ["solved", "crashed", "crashed", "timed-out", "error", "solved"], rows
    assert rows[0]["objective"] == pytest.approx(12.0, rel=1e-8) and rows[5]["objective"] == pytest.approx(12.0, rel=1e-8)
    assert "worker process" in rows[1]["message"] and "time limit of 6 s" in rows[3]["message"]
    assert "no such rig" in rows[4]["message"]
    assert sorted(r["index"] for r in seen) == list(range(6))  # every point reported as it ended
    summary = read_summary(out / "faulty_sweep.csv")
    assert [r["status"] for r in summary] == status
    assert sorted(p.name for p in out.iterdir()) == ["faulty_0.csv", "faulty_5.csv", "faulty_sweep.csv"]


@pytest.mark.slow
def test_a_continuation_sweep_goes_on_past_a_crash(tmp_path, faulty):
    rows = sweep(faulty, {"mode": [0, 1, 0]}, workers=2, out=tmp_path, continuation=True, progress=False)
    assert [r["status"] for r in rows] == ["solved", "crashed", "solved"]
    assert rows[2]["warm_start"] == 0  # warm-started from the last point that finished, not the crashed one


@pytest.mark.parametrize("argv, words", [
    (["--intervals", "-3"], ["--intervals", "-3"]),
    (["--scheme", "radau-99"], ["radau-99"]),
    (["--ipopt", "no_such_option=1"], ["no_such_option"]),
    (["--ipopt", "max_iter=-5"], ["max_iter"]),
    (["--point-timeout", "0"], ["time limit", "0"]),
])
def test_sweep_arguments_are_checked_before_any_point_runs(tmp_path, capsys, faulty, argv, words):
    marker = tmp_path / "built"
    code = cli.main(["sweep", str(faulty), "--set", "mode=0:0:2", "--set", f"marker='{marker}'", "--out", str(tmp_path / "o"),
                     "--quiet", *argv])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("colloc: error: ") and err.count("\n") == 1
    for w in words:
        assert w in err
    assert not marker.exists() and not (tmp_path / "o").exists()


@pytest.mark.slow
def test_ctrl_c_writes_a_summary_listing_every_point_and_exits_130(tmp_path, faulty):
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "colloc", "sweep", str(faulty), "--set", "mode=0:3:4", "--out", str(out), "--quiet"],
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    summary = out / "faulty_sweep.csv"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:  # wait for point 0's row: the hang (point 3) is then running
        if summary.exists() and "solved" in summary.read_text():
            break
        time.sleep(0.1)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr.decode()[-2000:]
    rows = read_summary(summary)
    assert [r["index"] for r in rows] == [0, 1, 2, 3]
    assert rows[0]["status"] == "solved" and rows[3]["status"] == "interrupted"
    assert all(r["status"] in ("solved", "crashed", "interrupted") for r in rows)
    assert b"interrupted" in stderr and b"faulty_sweep.csv" in stdout
