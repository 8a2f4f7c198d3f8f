"""problems/gait2d_tracking.py is Moco's 2-D walking tracking problem: same goals, same symmetry.

The oracle is OpenSim Moco itself (scripts/moco_gait.py in a subprocess: the ``opensim`` wheel carries its
own libcasadi): on colloc's solution, Moco's own evaluation of its goals (zero iterations from that
trajectory) equals colloc's cost terms.  Fast checks: the symmetry pairs of the example's script and the
effort's normalisation on a constant guess (a closed form).
"""
from __future__ import annotations

import importlib.util
import json
import pathlib
import subprocess
import sys
import warnings

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.opensim import to_opensim

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def gait():
    spec = importlib.util.spec_from_file_location("problems.gait2d_tracking", ROOT / "problems" / "gait2d_tracking.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def problem(gait):
    return gait.build()


def terms(problem, trajectory, intervals):
    """colloc's cost terms on ``trajectory`` (values at the grid) with the problem's transcription."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nlp = cl.build_nlp(problem, intervals=intervals, guess=trajectory, control_interpolation="linear")
    values = ca.Function("terms", [nlp.w], list(nlp.terms.values()))(nlp.layout.vector("guess"))
    return {k: float(v) for k, v in zip(nlp.terms, values)}


def test_symmetry_pairs_are_the_example_scripts(gait):
    # example2DWalking.py: every /jointset state with _r pairs with its _l twin and back, the others with
    # themselves except pelvis tx; activations right↔left; 10 coordinates + 10 speeds + 18 activations
    names = {v: k for k, v in gait.model().skeleton.opensim_names.items()}
    pairs = gait.symmetry_pairs(names)
    assert len(pairs) == 12 + 7 + 18
    assert ("/jointset/hip_r/hip_flexion_r/value", "/jointset/hip_l/hip_flexion_l/value") in pairs
    assert ("/jointset/hip_l/hip_flexion_l/speed", "/jointset/hip_r/hip_flexion_r/speed") in pairs
    assert ("/jointset/groundPelvis/pelvis_tx/speed",) * 2 in pairs
    assert not any(a.endswith("pelvis_tx/value") for a, _ in pairs)
    assert ("/soleus_l/activation", "/soleus_r/activation") in pairs


def test_effort_and_tracking_at_the_guess(gait, problem):
    """The guess holds every control constant (muscles 0.1, lumbar 0): Simpson's rule integrates it
    exactly, so the effort is 10 · 0.47 s · 18 · 0.1² = 0.846 (no division by the duration, as Moco's);
    the guess is the tracked reference itself, so the state tracking is small."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nlp = cl.build_nlp(problem, intervals=4, control_interpolation="linear")
    values = ca.Function("terms", [nlp.w], list(nlp.terms.values()))(nlp.layout.vector("guess"))
    got = {k: float(v) for k, v in zip(nlp.terms, values)}
    assert got["control_effort"] == pytest.approx(10 * 0.47 * 18 * 0.1**2, rel=1e-12)
    assert got["state_tracking"] < 1e-2 * got["control_effort"]
    assert got["contact"] > 0


def test_mirrored_stride_swaps_sides(gait):
    time = np.linspace(0.0, 0.47, 5)
    columns = {"model.hip_flexion_r": np.sin(time), "model.hip_flexion_l": np.cos(time),
               "model.pelvis_tx": 1.3 * time, "model.lumbarAct": time**2}
    traj = cl.Trajectory(time, columns, {**{k: "state" for k in columns}, "model.lumbarAct": "control"})
    stride = gait.mirrored(traj)
    assert stride.time[-1] == pytest.approx(0.94) and stride.time.size == 9
    np.testing.assert_allclose(stride["model.hip_flexion_r"][5:], np.cos(time[1:]), rtol=0, atol=0)
    np.testing.assert_allclose(stride["model.hip_flexion_l"][5:], np.sin(time[1:]), rtol=0, atol=0)
    np.testing.assert_allclose(stride["model.pelvis_tx"], 1.3 * stride.time, rtol=1e-14, atol=1e-15)


def moco_names(trajectory, osim):
    """States and controls under Moco's names (the lumbar actuator, among the model's components, is
    ``/lumbarAct``)."""
    keep = [n for n in trajectory.names if trajectory.kinds[n] in ("state", "control")]
    return to_opensim(cl.Trajectory(trajectory.time, {n: trajectory[n] for n in keep},
                                    {n: trajectory.kinds[n] for n in keep}), osim)


@pytest.mark.slow
def test_moco_evaluates_the_same_objective(gait, problem, tmp_path):
    """Moco's goals (MocoTrack's state tracking, MocoControlGoal, MocoContactTrackingGoal) on colloc's
    coarse solution equal colloc's terms: the two problems have the same objective (measured 3e-10 and
    better; colloc's contact forces equal OpenSim's to 1e-9, tests/test_osim_forces.py, hence 1e-8)."""
    if importlib.util.find_spec("opensim") is None:
        pytest.skip("needs the opensim package")
    intervals = 5
    result = cl.solve(problem, **dict(gait.SOLVE, intervals=intervals))
    assert result.success, result.message
    path = tmp_path / "colloc.sto"
    moco_names(result.trajectory, gait.model()).write(path)
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "moco_gait.py"), "--intervals", str(intervals),
                           "--guess", str(path), "--evaluate", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = json.loads((tmp_path / f"moco_gait_N{intervals}.json").read_text())
    mine = terms(problem, result.trajectory, intervals)
    for name in ("state_tracking", "control_effort", "contact"):
        assert mine[name] == pytest.approx(theirs["terms"][name], rel=1e-8), name
    assert result.objective == pytest.approx(theirs["objective"], rel=1e-8)
