"""problems/gait2d_predictive.py is Moco's 2-D walking prediction: same goals, same constraints.

The oracle is OpenSim Moco (scripts/moco_gait_predictive.py in a subprocess, run once and stored: the
``opensim`` wheel carries its own libcasadi): Moco's own evaluation of its goals on colloc's 20-interval
solution (tests/data/moco/gait2d_predictive_N20_colloc.{sto,json}) equals colloc's objective; slow tests
ask Moco again in a subprocess and solve the problem again to reach that objective.  Moco's own solves of the problem are
compared in docs/moco-gait.md.
"""
from __future__ import annotations

import importlib.util
import json
import pathlib
import re
import subprocess
import sys
import warnings

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.opensim import from_opensim, write_sto

ROOT = pathlib.Path(__file__).resolve().parent.parent
#: colloc's 20-interval solution (OpenSim's names) and Moco's evaluation of its goals on it
#: (scripts/moco_gait_predictive.py --intervals 20 --evaluate --guess FILE; date, OpenSim version in the .json).
SOLUTION = ROOT / "tests" / "data" / "moco" / "gait2d_predictive_N20_colloc.sto"
MOCO_REPORT = SOLUTION.with_suffix(".json")
INTERVALS = 20


@pytest.fixture(scope="module")
def gait():
    spec = importlib.util.spec_from_file_location("problems.gait2d_predictive", ROOT / "problems" / "gait2d_predictive.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def at_guess(problem, intervals):
    """The NLP of ``problem`` at its own guess: (terms, {``kind:name``: largest violation})."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nlp = cl.build_nlp(problem, intervals=intervals, control_interpolation="linear", mode="explicit", compile=False)
    w0 = nlp.layout.vector("guess")
    values = ca.Function("terms", [nlp.w], [nlp.g, *nlp.terms.values()])(w0)
    return {k: float(v) for k, v in zip(nlp.terms, values[1:])}, nlp.rows.violations(values[0])


OPENSIM_COM = r"""
import json, sys
import opensim as osim
model = osim.Model(sys.argv[1])
state = model.initSystem()
for name, value in json.loads(sys.argv[2]).items():
    model.getCoordinateSet().get(name).setValue(state, value, False)
model.realizePosition(state)
print(json.dumps(list(model.calcMassCenterPosition(state).to_numpy())))
"""


def test_center_of_mass_is_opensims(gait):
    """The centre of mass at a walking pose equals OpenSim's ``Model::calcMassCenterPosition`` (subprocess:
    the ``opensim`` wheel carries its own libcasadi)."""
    if importlib.util.find_spec("opensim") is None:
        pytest.skip("needs the opensim package")
    osim = gait.tracking.model()
    pose = {"pelvis_tilt": -0.2, "pelvis_tx": 0.3, "pelvis_ty": 0.9, "hip_flexion_r": 0.5, "hip_flexion_l": -0.1,
            "knee_angle_r": -0.6, "knee_angle_l": -0.2, "ankle_angle_r": 0.1, "ankle_angle_l": -0.2, "lumbar": 0.15}
    q = np.array([pose[c] for c in osim.skeleton.coordinates])
    mine = np.asarray(ca.Function("com", [osim.skeleton.q], [gait.center_of_mass(osim)])(q)).ravel()
    done = subprocess.run([sys.executable, "-c", OPENSIM_COM, str(gait.tracking.MODEL), json.dumps(pose)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-12)


def test_moco_evaluates_the_same_objective(gait):
    """On the stored trajectory Moco's own goals (MocoControlGoal with exponent 3 divided by the centre of
    mass's travel; zero IPOPT iterations) equal colloc's objective, and the trajectory meets colloc's
    constraints (it is colloc's solution, so the average speed, symmetry and dynamics hold)."""
    moco = json.loads(MOCO_REPORT.read_text())
    problem = gait.build(guess=SOLUTION)
    terms, violations = at_guess(problem, INTERVALS)
    assert terms["effort"] == pytest.approx(moco["terms"]["effort"], rel=1e-9)
    worst = max(violations, key=violations.get)
    assert violations[worst] < 1e-6, worst


def test_full_stride_reads_back_in_opensim(gait, tmp_path):
    """The full stride (the half cycle, then its mirror image) written under OpenSim's names is read by
    OpenSim as a table and as a MocoTrajectory holding every state of the model, over twice the half cycle
    (scripts/moco_gait_predictive.py --check, in a subprocess)."""
    if importlib.util.find_spec("opensim") is None:
        pytest.skip("needs the opensim package")
    osim = gait.tracking.model()
    half = from_opensim(cl.Trajectory.read(gait.GUESS), osim)
    stride = gait.mirrored(half)
    path = write_sto(stride, osim, tmp_path / "stride.sto")
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "moco_gait_predictive.py"), "--check", str(path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    read = json.loads(done.stdout.strip().splitlines()[-1])
    assert read["missing"] == [] and read["states"] == 38 and read["controls"] == 19
    assert read["rows"] == 2 * half.time.size - 1
    assert read["tf"] == pytest.approx(2 * half.time[-1], rel=1e-12)


@pytest.mark.slow
def test_moco_evaluates_colloc_solution_live(gait, tmp_path):
    """Moco itself, now (scripts/moco_gait_predictive.py --evaluate in a subprocess: zero IPOPT iterations on
    the stored solution), evaluates its goals to colloc's objective on that trajectory; and its IPOPT takes the
    barrier update from the ``ipopt.opt`` the script writes (its list of user-set options shows it used)."""
    if importlib.util.find_spec("opensim") is None:
        pytest.skip("needs the opensim package")
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "moco_gait_predictive.py"), "--intervals",
                           str(INTERVALS), "--evaluate", "--mu-strategy", "monotone", "--guess", str(SOLUTION),
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    moco = json.loads(done.stdout.strip().splitlines()[-1])
    terms, _ = at_guess(gait.build(guess=SOLUTION), INTERVALS)
    assert moco["objective"] == pytest.approx(terms["effort"], rel=1e-9)
    assert re.search(r"mu_strategy\s*=\s*monotone\s+yes", done.stdout)


@pytest.mark.slow
def test_colloc_reaches_the_objective_moco_evaluates(gait):
    """Solved again from the tracking solution on 20 intervals, colloc reaches the objective Moco computed for
    its stored solution (to the comparison's 1e-4; measured: the same to 3e-16), within the free final time."""
    moco = json.loads(MOCO_REPORT.read_text())
    result = cl.solve(gait.build(), **dict(gait.SOLVE, intervals=INTERVALS))
    assert result.success, result.message
    assert result.objective == pytest.approx(moco["objective"], rel=1e-4)
    assert 0.4 <= result.trajectory.time[-1] <= 0.6
