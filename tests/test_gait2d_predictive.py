"""problems/gait2d_predictive.py is Moco's 2-D walking prediction: same goals, same constraints.

The oracle is OpenSim Moco's own solution of the same problem (scripts/moco_gait_predictive.py, stored in
tests/data/moco/gait2d_predictive_N20.sto, its report beside it): colloc's objective evaluated
on Moco's trajectory equals the objective Moco reports, and Moco's trajectory meets colloc's constraints
to Moco's tolerance.  The solve itself is checked against Moco's objective by tests/test_problems.py
(``REFERENCE``, a slow test).
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
from colloc.opensim import from_opensim, write_sto

ROOT = pathlib.Path(__file__).resolve().parent.parent
#: Moco's solution of the same problem on 20 intervals and its report (scripts/moco_gait_predictive.py
#: --intervals 20; date, OpenSim version, iterations and objective in the .json).
MOCO = ROOT / "tests" / "data" / "moco" / "gait2d_predictive_N20.sto"
MOCO_REPORT = MOCO.with_suffix(".json")
INTERVALS = 20


@pytest.fixture(scope="module")
def gait():
    spec = importlib.util.spec_from_file_location("problems.gait2d_predictive", ROOT / "problems" / "gait2d_predictive.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def header(path):
    """The ``key=value`` lines of a ``.sto`` header."""
    out = {}
    for line in path.read_text().splitlines():
        if line == "endheader":
            break
        key, _, value = line.partition("=")
        out[key] = value
    return out


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


def test_moco_solution_has_the_same_objective_in_colloc(gait):
    """Moco's solution (its midpoint controls tied to the interval means only to Moco's tolerance 1e-4) gives
    colloc's objective equal to Moco's, and meets colloc's constraints to Moco's tolerance."""
    if not MOCO.exists():
        pytest.skip("no stored Moco solution")
    moco = header(MOCO)
    problem = gait.build(guess=MOCO)
    terms, violations = at_guess(problem, INTERVALS)
    assert terms["effort"] == pytest.approx(float(moco["objective_effort"]), rel=1e-5)
    worst = max(violations, key=violations.get)
    assert violations[worst] < 1e-3, worst


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
def test_colloc_reaches_mocos_objective(gait):
    """colloc from the same guess reaches Moco's objective on the same 20-interval mesh, to the 1e-4 of the
    comparison (or a documented neighbouring optimum: docs/moco-gait.md)."""
    if not MOCO_REPORT.exists():
        pytest.skip("no stored Moco report")
    moco = json.loads(MOCO_REPORT.read_text())
    result = cl.solve(gait.build(), **dict(gait.SOLVE, intervals=INTERVALS))
    assert result.success, result.message
    assert result.objective == pytest.approx(moco["objective"], rel=1e-4)
    assert 0.4 <= result.trajectory.time[-1] <= 0.6
