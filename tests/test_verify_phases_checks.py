"""`colloc verify` of a multi-phase file makes per phase the checks a single-phase file gets (time, horizon,
finite values, boundary conditions, bounds, path constraints, each interval simulated alone), with the
phases' order, guards and connections: altered files fail with the reason and exit 1.

The file is the two-phase rocket (burn, then coast to the apex v = 0; problems/two_phase_rocket.py).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import colloc as cl
from colloc.cli import commands as cli

ROCKET = Path(__file__).resolve().parents[1] / "problems" / "two_phase_rocket.py"


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    out = tmp_path_factory.mktemp("rocket")
    assert cli.main(["solve", str(ROCKET), "--quiet", "--out", str(out), "--intervals", "8"]) == 0
    return out / "two_phase_rocket.csv"


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def edited(tmp_path, good, name, change):
    traj = cl.Trajectory.read(good)
    time, cols = change(traj.time.copy(), {n: traj[n].copy() for n in traj.names})
    path = tmp_path / f"{name}.csv"
    cl.Trajectory(time, cols, traj.kinds, traj.parameters, traj.metadata).write(path)
    return path


def _coast(cols):
    return np.flatnonzero(cols["phase"] == 1)


def _set(cols, name, rows, value):
    cols[name][rows] = value
    return cols


def _nudge(cols, name, rows, delta):
    cols[name][rows] += delta
    return cols


def _cut_coast(t, c):
    keep = np.ones(t.size, bool)
    keep[_coast(c)[len(_coast(c)) // 2 + 1:]] = False
    return t[keep], {k: v[keep] for k, v in c.items()}


CHANGES = {
    "edited": (lambda t, c: (t, _nudge(c, "rocket.v", slice(5, 9), 0.05)), "burn/dynamics:rocket.v", "do not follow the dynamics"),
    "initial": (lambda t, c: (t, _set(c, "rocket.m", 0, 0.9)), "burn/initial", "`rocket.m` is 0.9 at t = 0"),
    "bounds": (lambda t, c: (t, _set(c, "rocket.m", _coast(c)[3:], 1.5)), "coast/bounds", "outside its bounds [0, 1]"),
    "nan": (lambda t, c: (t, _set(c, "rocket.h", _coast(c)[4], np.nan)), "coast/finite", "`rocket.h` is nan"),
    "reversed": (lambda t, c: (np.concatenate([t[c["phase"] == 0], t[c["phase"] == 1][::-1]]), c), "coast/time", "time does not increase"),
    "late-start": (lambda t, c: (np.where(c["phase"] == 1, t + 0.1, t), c), "junctions", "phase `coast` starts at t = 0.6"),
    "cut-off": (_cut_coast, "coast/guard:apex", "the phase should end where it is 0"),
    "phase-missing": (lambda t, c: (t[c["phase"] == 0], {k: v[c["phase"] == 0] for k, v in c.items()}), "phases",
                      "the file has 1 phase; `two_phase_rocket` has 2"),
    "phase-index": (lambda t, c: (t, _set(c, "phase", 6, np.nan)), "phases", "row 7 has phase nan"),
    "jump": (lambda t, c: (t, _set(c, "rocket.h", _coast(c)[0], c["rocket.h"][_coast(c)[0]] + 0.01)), "connection:burn>coast",
             "`rocket.h` starts phase `coast`"),
}


@pytest.mark.parametrize("case", list(CHANGES))
def test_an_altered_multi_phase_file_fails_verification_with_the_reason(tmp_path, capsys, solved, case):
    change, check, reason = CHANGES[case]
    bad = edited(tmp_path, solved, case, change)
    code, out, err = run(capsys, "verify", bad, ROCKET)
    assert code == 1, out + err
    line = next((l for l in out.splitlines() if l.split()[:2] == ["FAIL", check]), None)
    assert line is not None and reason in line, out
    assert "verification failed: " in out and "Traceback" not in err


def test_a_multi_phase_solution_passes_every_per_phase_check(capsys, solved):
    code, out, err = run(capsys, "verify", solved, ROCKET)
    assert code == 0, out + err
    for name in ("phases", "burn/initial", "burn/bounds", "burn/dynamics:rocket.v", "coast/horizon", "coast/guard:apex",
                 "connection:burn>coast"):
        assert any(l.split()[:2] == ["pass", name] for l in out.splitlines()), (name, out)
    assert "FAIL" not in out and "verified" in out


def test_a_multi_phase_sto_file_without_its_phase_column_is_verified_and_warm_starts(tmp_path, capsys, solved):
    """OpenSim's .sto has no room for the phase column; the phases come back from the metadata."""
    from colloc.results.phased_trajectory import PhasedTrajectory

    sto = Path(PhasedTrajectory.split(cl.Trajectory.read(solved)).write(tmp_path / "rocket.sto"))
    assert "phase" not in cl.Trajectory.read(sto)
    code, out, err = run(capsys, "verify", sto, ROCKET)
    assert code == 0 and "verified" in out, out + err
    code, out, err = run(capsys, "solve", ROCKET, "--guess", sto, "--quiet", "--out", tmp_path / "w", "--intervals", "8")
    assert code == 0, err
    lines = sto.read_text().splitlines()
    (tmp_path / "short.sto").write_text("\n".join(lines[:-3]) + "\n")
    code, out, err = run(capsys, "verify", tmp_path / "short.sto", ROCKET)
    assert code == 2 and "its 31 rows are not the 34 its `phases` metadata lists" in err, err
