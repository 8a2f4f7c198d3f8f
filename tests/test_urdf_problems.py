"""The URDF problem scripts solve, on coarse meshes, to what their docstrings promise."""
import importlib.util
import os

import casadi as ca
import numpy as np
import pytest

import colloc as cl

pytest.importorskip("urdf_parser_py")
from colloc.model.urdf import example_robot  # noqa: E402

try:
    example_robot("ur_description/urdf/ur5_robot.urdf")
except cl.FileFormatError:
    pytest.skip("example-robot-data is not installed", allow_module_level=True)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IPOPT = {"tol": 1e-8}


def _script(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "problems", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _torques(traj):
    names = [n for n in traj.names if ".tau_" in n and not n.endswith(".dot")]
    return np.vstack([traj[n] for n in names]), names


def test_ur5_minimum_time_is_bang_bang_and_least_effort_is_smoother():
    ur5 = _script("ur5_min_time")
    fast = cl.solve(ur5.build(), scheme="hermite-simpson", intervals=20, ipopt=IPOPT)
    assert fast.success, fast.message
    T = fast.trajectory.time[-1]
    tau, names = _torques(fast.trajectory)
    lift = tau[names.index("ur5.tau_shoulder_lift_joint")]
    # bang-bang: at the 150 N m limit (to 0.1 %) at most grid points, with one switch
    assert np.mean(np.abs(np.abs(lift) - 150.0) <= 0.15) >= 0.8, lift
    assert lift[0] * lift[-1] < 0
    smooth = cl.solve(ur5.build(objective="effort", duration=1.01 * T), scheme="hermite-simpson", intervals=20, ipopt=IPOPT)
    assert smooth.success, smooth.message
    tau_s, _ = _torques(smooth.trajectory)
    t_f, t_s = fast.trajectory.time, smooth.trajectory.time
    rate = lambda u, t: np.mean(np.abs(np.diff(u, axis=1)) / np.maximum(np.diff(t), 1e-12))
    assert rate(tau_s, t_s) < 0.5 * rate(tau, t_f)
    effort = lambda u, t: np.sum(np.trapezoid(u**2, t, axis=1))
    assert effort(tau_s, t_s) < 0.8 * effort(tau, t_f)
    for problem, res in ((ur5.build(), fast), (ur5.build(objective="effort", duration=1.01 * T), smooth)):
        sim = cl.verify(problem, res)
        assert sim["success"] and sim["max_error"] < 0.05, sim["max_error"]


def test_panda_reach_clears_the_sphere_that_the_free_motion_crosses():
    reach = _script("panda_reach")
    free = cl.solve(reach.build(radius=0.0), scheme="hermite-simpson", intervals=12, ipopt=IPOPT)
    problem = reach.build()
    res = cl.solve(problem, scheme="hermite-simpson", intervals=12, ipopt=IPOPT)
    assert free.success and res.success, res.message
    body = problem.model.components[0]
    assert reach.clearance(body, free.trajectory).min() < 0.5 * 0.1  # the obstacle is in the way
    assert reach.clearance(body, res.trajectory).min() >= 0.1 - 1e-6  # cleared at every grid point
    assert res.objective > free.objective
    sim = cl.verify(problem, res)
    # The open-loop arm is unstable (errors grow e-fold about every 0.15 s), so the forward simulation
    # drifts over the horizon; what must hold is that the drift falls as the mesh refines.
    finer = cl.solve(problem, scheme="hermite-simpson", intervals=24, ipopt=IPOPT)
    assert sim["success"] and cl.verify(problem, finer)["max_error"] < 0.5 * sim["max_error"]
    # between grid points (the scheme's interpolant, 8 samples per interval) it clears to 2 %
    q = np.vstack([sim["collocated"][f"panda.{j}"] for j in reach.ARM])
    origins = ca.Function("o", [body.q], [ca.horzcat(*[body.frame(l)[0] for l in reach.OBSTACLE_LINKS])])
    pts = np.asarray(origins.map(q.shape[1])(q)).reshape(3, q.shape[1], -1)
    gap = np.linalg.norm(pts - np.reshape((0.1, 0.1, 0.85), (3, 1, 1)), axis=0).min()
    assert gap >= 0.98 * 0.1, gap


def test_cli_animates_a_urdf_model_in_3d(tmp_path):
    from PIL import Image

    from colloc.cli import commands as cli

    code = cli.main(["solve", os.path.join(ROOT, "problems", "ur5_min_time.py"), "--intervals", "8",
                     "--out", str(tmp_path), "--animate", "--quiet"])
    assert code == 0
    with Image.open(tmp_path / "ur5_min_time.gif") as gif:
        assert gif.n_frames >= 2 and gif.size == (400, 400)
