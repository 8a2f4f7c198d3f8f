"""problems/gait2d_standing.py: the standing pose colloc finds is an equilibrium of OpenSim's own model.

OpenSim is the oracle (``tests/oracle/osim_standing.py`` in a subprocess): its forward simulation from
colloc's optimum, with the optimal controls held constant, stays within the script's ``STAY_PUT`` for
0.5 s (the tolerance is justified in the script's docstring), while a start 0.02 rad off at the hips
falls by more than 1e-2 in the same time (so the check can fail).
"""
from __future__ import annotations

import importlib.util
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import colloc as cl

ROOT = pathlib.Path(__file__).resolve().parent.parent
ORACLE = ROOT / "tests" / "oracle" / "osim_standing.py"


def _problem_module():
    spec = importlib.util.spec_from_file_location("problems.gait2d_standing", ROOT / "problems" / "gait2d_standing.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _simulate(tmp_path, start, tag):
    path = tmp_path / f"{tag}.json"
    path.write_text(json.dumps(start))
    out = tmp_path / f"{tag}.npz"
    done = subprocess.run([sys.executable, str(ORACLE), str(_problem_module().MODEL), str(path), str(out)],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)  # opensim.log goes there
    assert done.returncode == 0, done.stderr[-2000:]
    data = np.load(out)
    return data["time"], np.abs(data["values"] - data["values"][0]).max()


@pytest.mark.slow
def test_forward_simulation_stays_at_the_optimal_pose(tmp_path):
    if importlib.util.find_spec("opensim") is None:
        pytest.skip("needs the opensim package")
    module = _problem_module()
    result = cl.solve(module.build(), **module.SOLVE)
    assert result.success, result.message
    traj = result.trajectory
    sk_names = [n for n in traj.names if n.startswith("model.") and not n.endswith((".dot", "_speed", ".lumbarAct"))]
    coordinates = {n[len("model."):]: float(traj.final(n)) for n in sk_names}
    activations = {n[:-len(".activation")]: float(traj.final(n)) for n in traj.names if n.endswith(".activation")}
    controls = {n[:-len(".excitation")]: float(traj.final(n)) for n in traj.names if n.endswith(".excitation")}
    controls["lumbarAct"] = float(traj.final("model.lumbarAct"))
    start = dict(coordinates=coordinates, activations=activations, controls=controls)
    time, moved = _simulate(tmp_path, start, "optimum")
    assert time[-1] == pytest.approx(0.5)
    assert moved < module.STAY_PUT, f"OpenSim's simulation leaves the pose by {moved:.3g}"
    off = dict(start, coordinates=dict(coordinates, hip_flexion_l=coordinates["hip_flexion_l"] + 0.02,
                                       hip_flexion_r=coordinates["hip_flexion_r"] + 0.02))
    assert _simulate(tmp_path, off, "off")[1] > 1e-2
