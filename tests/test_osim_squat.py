"""problems/osim_squat_to_stand.py: a predictive, muscle-driven squat to stand of an .osim model.

There is no published optimum to compare with, so the test checks what the problem prescribes and what
the physics requires, on a coarse mesh: the solve converges; the motion ends in the standing pose at rest
(REFERENCE, by the script's measure); both feet stay where they were placed at every mesh point; every
activation and excitation stays within its bounds; the left and right legs move as mirror images (the
problem is symmetric, and nothing in the transcription makes them so); ``colloc verify`` of the file
``colloc solve`` writes passes, and fails on the file with one state or one projection multiplier edited.
"""
from __future__ import annotations

import importlib.util
import pathlib

import casadi as ca
import numpy as np
import pytest

from colloc import cli

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "problems" / "osim_squat_to_stand.py"


def _module():
    spec = importlib.util.spec_from_file_location("problems.osim_squat_to_stand", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_squat_and_the_standing_pose_keep_the_feet_where_they_are():
    """The poses the script prescribes satisfy its own feet constraints (Newton converged) and are distinct."""
    module = _module()
    sk = module.model().skeleton
    feet = ca.Function("feet", [sk.q], [ca.vertcat(module._foot_points(sk, "l"), module._foot_points(sk, "r"))])
    squat, stand = module.pose(sk, module.SQUAT), module.pose(sk, module.STAND)
    at = lambda pose: np.asarray(feet(ca.DM([pose[c] for c in sk.coordinates]))).ravel()
    np.testing.assert_allclose(at(squat), at(stand), atol=1e-12)
    assert stand["pelvis_ty"] - squat["pelvis_ty"] > 0.05  # the pelvis rises by more than 5 cm


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    """The file ``colloc solve`` writes (IPOPT tol 1e-9, as tests/test_problems.py solves it)."""
    out = tmp_path_factory.mktemp("squat")
    code = cli.main(["solve", str(SCRIPT), "--out", str(out), "--quiet", "--ipopt", "tol=1e-9"])
    return code, out / "osim_squat_to_stand.csv"


@pytest.mark.slow
def test_solved_squat_stands_up_with_the_feet_in_place_and_within_bounds(solved):
    from colloc import Trajectory

    code, path = solved
    assert code == 0
    module = _module()
    traj = Trajectory.read(path)
    assert module.measure(type("R", (), {"trajectory": traj})()) == pytest.approx(module.REFERENCE["value"], rel=module.REFERENCE["tolerance"])
    problem = module.build()
    for var in problem.model.variables:
        if var.kind in ("state", "control") and var.name in traj.names:
            lo, hi = var.bounds
            assert lo - 1e-8 <= traj[var.name].min() and traj[var.name].max() <= hi + 1e-8, var.name
    sk = module.model().skeleton
    feet = ca.Function("feet", [sk.q], [ca.vertcat(module._foot_points(sk, "l"), module._foot_points(sk, "r"))])
    q = np.vstack([traj[f"model.{c}"] for c in sk.coordinates])
    placed = np.asarray(feet.map(q.shape[1])(q)) - np.asarray(feet(q[:, 0]))
    points = np.asarray(module.SOLVE["mesh"]) * module.DURATION if "mesh" in module.SOLVE else \
        np.linspace(0.0, module.DURATION, module.SOLVE["intervals"] + 1)
    mesh = np.isclose(traj.time[:, None], points).any(axis=1)
    assert mesh.sum() == points.size
    # colloc imposes kinematic constraints at the mesh points; between them the feet move with the
    # interpolant's error (1.0 mm measured on this mesh)
    assert np.abs(placed[:, mesh]).max() < 1e-8 and np.abs(placed).max() < 3e-3


@pytest.mark.slow
def test_colloc_verify_passes_on_the_written_result(solved, capsys):
    code, path = solved
    assert code == 0
    assert cli.main(["verify", str(path), str(SCRIPT)]) == 0, capsys.readouterr().out


def _edited(path, folder, edit):
    from colloc import Trajectory

    traj = Trajectory.read(path)
    edit(traj)
    out = folder / "tampered.csv"
    traj.write(out)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("what", ["midpoint state", "projection multiplier"])
def test_colloc_verify_fails_on_a_tampered_result(solved, tmp_path, capsys, what):
    """A knee angle moved by 1e-3 rad at one midpoint, or one interval's projection multiplier by a tenth of its
    bound: each is an edit the file's other values do not follow, which verify must report (exit 1)."""
    code, path = solved

    def edit(traj):
        if what == "midpoint state":
            traj["model.knee_angle_r"][2 * 2 + 1] += 1e-3          # Hermite–Simpson: interval 2's midpoint
        else:
            values = np.array(traj.metadata["projection_multipliers"]["values"])
            values[0, 2] += 1e-4
            traj.metadata["projection_multipliers"]["values"] = values.tolist()

    bad = _edited(path, tmp_path, edit)
    capsys.readouterr()
    assert cli.main(["verify", str(bad), str(SCRIPT)]) == 1
    out = capsys.readouterr().out
    assert "FAIL  defects" in out or "FAIL  derivatives" in out, out
