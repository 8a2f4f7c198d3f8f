"""`colloc verify` reads every stored value: a tampered file fails with the reason, exit 1.

Edits that the mesh-point simulation alone let through: a state changed at a Hermite–Simpson midpoint
or a Radau interior node, a tolerance inflated by one huge edited value, every derivative column shifted
by 1, the objective in the metadata changed, a coast midpoint of a two-phase file raised by 5.  A FIFO
given as FILE is refused in one sentence instead of blocking, and the per-interval work is one gather
per column whatever the file's length.

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
from colloc.discretization.schemes import get_scheme
from colloc.pipeline.script import load_problem
from di_script import di_script

ROOT = Path(__file__).resolve().parents[1]
ROCKET = ROOT / "problems" / "two_phase_rocket.py"

FREE_DI = di_script("def build():", final="1.0")


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module", params=["hermite-simpson", "radau-2"])
def solved(request, tmp_path_factory):
    """A converged double integrator without bounds or path constraints (only the new checks can see an edit)."""
    folder = tmp_path_factory.mktemp(request.param)
    path = folder / "di.py"
    path.write_text(textwrap.dedent(FREE_DI))
    assert cli.main(["solve", str(path), "--quiet", "--out", str(folder / "out"), "--scheme", request.param]) == 0
    return path, folder / "out" / "di.csv"


def edited(tmp_path, good, change, metadata=None):
    traj = cl.Trajectory.read(good)
    cols = {n: traj[n].copy() for n in traj.names}
    change(cols)
    path = tmp_path / "edited.csv"
    cl.Trajectory(traj.time, cols, traj.kinds, traj.parameters, {**traj.metadata, **(metadata or {})}).write(path)
    return path


def failed(out, check):
    return next((line for line in out.splitlines() if line.split()[:2] == ["FAIL", check]), None)


def test_a_state_edited_between_mesh_points_fails_the_defects(tmp_path, capsys, solved):
    script, good = solved
    row = 2 * get_scheme(cl.Trajectory.read(good).metadata["scheme"]).stride + 1  # interval 2, first interior node
    bad = edited(tmp_path, good, lambda c: c["mass.x"].__setitem__(row, c["mass.x"][row] + 0.01))
    code, out, err = run(capsys, "verify", bad, script)
    assert code == 1, out + err
    line = failed(out, "defects")
    assert line and "`mass.x`" in line and "in interval 2" in line, out


def test_a_time_edited_between_mesh_points_fails_the_grid_check(tmp_path, capsys, solved):
    script, good = solved
    traj = cl.Trajectory.read(good)
    time = traj.time.copy()
    time[5] += 0.01  # an interior node of interval 2 (both schemes here have stride 2)
    bad = tmp_path / "retimed.csv"
    cl.Trajectory(time, {n: traj[n] for n in traj.names}, traj.kinds, traj.parameters, traj.metadata).write(bad)
    code, out, err = run(capsys, "verify", bad, script)
    assert code == 1, out + err
    line = failed(out, "grid")
    assert line and "row 6" in line, out


def test_one_huge_edited_value_does_not_inflate_the_tolerance_of_the_others(tmp_path, capsys, solved):
    """x = 1e6 at one interior node made the dynamics limit 1e-2 × 1e6; a shifted stretch of mesh states then passed."""
    script, good = solved
    m = get_scheme(cl.Trajectory.read(good).metadata["scheme"]).stride

    def change(c):
        c["mass.x"][1] = 1e6
        c["mass.x"][4 * m:6 * m + 1] += 0.05
    code, out, err = run(capsys, "verify", edited(tmp_path, good, change), script)
    assert code == 1, out + err
    line = failed(out, "dynamics:mass.x")
    assert line and "5.00e-02 > " in line, out
    assert float(line.split("5.00e-02 > ")[1].split()[0]) <= 1e-2, out  # the scale is 1, not 1e4


def test_derivative_columns_shifted_by_one_fail(tmp_path, capsys, solved):
    script, good = solved

    def change(c):
        c["mass.x.dot"] += 1.0
        c["mass.v.dot"] += 1.0
    code, out, err = run(capsys, "verify", edited(tmp_path, good, change), script)
    assert code == 1, out + err
    assert failed(out, "derivatives") and failed(out, "defects"), out


def test_an_edited_objective_fails_and_the_recomputed_one_is_the_analytic_optimum(tmp_path, capsys, solved):
    script, good = solved
    code, out, _ = run(capsys, "verify", good, script)
    assert code == 0, out
    line = next(l for l in out.splitlines() if l.split()[:2] == ["pass", "objective"])
    assert float(line.split("recomputed ")[1]) == pytest.approx(12.0, rel=1e-6)  # J* = 12
    code, out, err = run(capsys, "verify", edited(tmp_path, good, lambda c: None, {"objective": 11.0}), script)
    assert code == 1, out + err
    line = failed(out, "objective")
    assert line and "the file records 11" in line, out


@pytest.fixture(scope="module")
def rocket(tmp_path_factory):
    out = tmp_path_factory.mktemp("rocket")
    assert cli.main(["solve", str(ROCKET), "--quiet", "--out", str(out), "--intervals", "8"]) == 0
    return out / "two_phase_rocket.csv"


def test_a_multi_phase_coast_midpoint_raised_by_5_or_an_edited_objective_fails(tmp_path, capsys, rocket):
    code, out, _ = run(capsys, "verify", rocket, ROCKET)
    assert code == 0 and failed(out, "objective") is None, out

    def raise_midpoint(c):
        coast = np.flatnonzero(c["phase"] == 1)
        c["rocket.h"][coast[3]] += 5.0  # the midpoint of the coast's second interval
    code, out, err = run(capsys, "verify", edited(tmp_path, rocket, raise_midpoint), ROCKET)
    assert code == 1 and failed(out, "coast/defects"), out + err
    recorded = cl.Trajectory.read(rocket).metadata["objective"]
    code, out, err = run(capsys, "verify", edited(tmp_path, rocket, lambda c: None, {"objective": 0.9 * recorded}), ROCKET)
    assert code == 1 and failed(out, "objective"), out + err


def test_a_fifo_is_refused_in_one_sentence_instead_of_blocking(tmp_path, solved):
    script, _ = solved
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for argv in (["verify", str(fifo), str(script)], ["plot", str(fifo)]):
        proc = subprocess.run([sys.executable, "-m", "colloc", *argv], check=False, capture_output=True, text=True, timeout=120, env=env)
        assert proc.returncode == 2, proc.stderr
        assert "is not a regular file" in proc.stderr and str(fifo) in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr


def test_the_interval_work_gathers_each_column_once_whatever_the_length(monkeypatch, solved):
    """Gathering a column per interval made a 2,000,001-row file quadratic; count the gathers."""
    from colloc.discretization.interpolant import Interpolant
    from colloc.simulate.verify import interval_errors, simulate_controls

    script, good = solved
    _, problem = load_problem(script, {})
    traj = cl.Trajectory.read(good)
    calls = []
    real = Interpolant.nodes
    monkeypatch.setattr(Interpolant, "nodes", lambda self, name: calls.append(name) or real(self, name))
    errors, _, _ = interval_errors(problem, traj)
    sim = simulate_controls(problem, traj)
    assert max(calls.count(name) for name in calls) <= 2  # once per function, not once per interval (10 here)
    assert max(float(np.max(e)) for e in errors.values()) < 1e-8 and sim["success"]
