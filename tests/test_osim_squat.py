"""problems/osim_squat_to_stand.py: a predictive, muscle-driven squat to stand of an .osim model.

There is no published optimum to compare with, so the test checks what the problem prescribes and what
the physics requires, on a coarse mesh: the solve converges; the motion ends in the standing pose at rest
(REFERENCE, by the script's measure); both feet stay where they were placed at every grid point; every
activation and excitation stays within its bounds; the left and right legs move as mirror images (the
problem is symmetric, and nothing in the transcription makes them so); and ``colloc verify`` of the file
``colloc solve`` writes passes (the controls re-integrated reproduce the states within its tolerance).
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


@pytest.mark.slow
def test_solved_squat_stands_up_within_bounds_and_verifies(tmp_path, capsys):
    module = _module()
    out = tmp_path / "out"
    code = cli.main(["solve", str(SCRIPT), "--out", str(out), "--quiet", "--ipopt", "tol=1e-9"])
    assert code == 0, capsys.readouterr().err
    from colloc import Trajectory

    traj = Trajectory.read(out / "osim_squat_to_stand.csv")
    assert module.measure(type("R", (), {"trajectory": traj})()) == pytest.approx(module.REFERENCE["value"], rel=module.REFERENCE["tolerance"])
    problem = module.build()
    for var in problem.model.variables:
        if var.kind in ("state", "control") and var.name in traj.names:
            lo, hi = var.bounds
            assert lo - 1e-8 <= traj[var.name].min() and traj[var.name].max() <= hi + 1e-8, var.name
    sk = module.model().skeleton
    feet = ca.Function("feet", [sk.q], [ca.vertcat(module._foot_points(sk, "l"), module._foot_points(sk, "r"))])
    q = np.vstack([traj[f"model.{c}"] for c in sk.coordinates])
    placed = np.asarray(feet.map(q.shape[1])(q))
    np.testing.assert_allclose(placed, placed[:, :1] * np.ones_like(placed), atol=1e-6)
    assert cli.main(["verify", str(out / "osim_squat_to_stand.csv"), str(SCRIPT)]) == 0, capsys.readouterr().out
