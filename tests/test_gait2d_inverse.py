"""MocoInverse of Moco's 2-D walking motion (problems/gait2d_inverse.py) against Moco's own solution.

``tests/data/moco/gait2d_inverse_moco.sto`` is OpenSim Moco 4.6's MocoInverse solution of the same problem
(``scripts/moco_inverse.py --tolerance 1e-4 --tendons implicit``, run 2026-11-26; its numbers in the ``.json``
beside it)."""
import json
import pathlib
import sys

import numpy as np
import pytest

import colloc as cl
from colloc import goals
from colloc.errors import ModelError, ProblemError

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "problems"))
import gait2d_inverse as inverse  # noqa: E402

MOCO = ROOT / "tests" / "data" / "moco" / "gait2d_inverse_moco"


@pytest.fixture(scope="module")
def problem():
    return inverse.build()


def test_prescribed_walk_has_only_muscle_states(problem):
    """No skeleton states: each muscle's activation and tendon force; controls the 18 excitations and one
    reserve per coordinate; MocoInverse's goals."""
    states = [v.name for v in problem.model.states]
    controls = [v.name for v in problem.model.controls]
    assert sum(s.endswith(".activation") for s in states) == 18
    assert sum(s.endswith(".normalized_tendon_force") for s in states) == 18 and len(states) == 36
    assert [c.name for c in problem.costs] == ["excitation_effort", "auxiliary_derivatives"]
    assert sum(c.endswith(".excitation") for c in controls) == 18
    assert sorted(c for c in controls if c.startswith("reserves.")) == sorted(
        f"reserves.reserve_{c}" for c in ("pelvis_tilt", "pelvis_tx", "pelvis_ty", "hip_flexion_l", "hip_flexion_r",
                                          "knee_angle_l", "knee_angle_r", "ankle_angle_l", "ankle_angle_r", "lumbar"))


@pytest.mark.slow
def test_objective_at_mocos_solution_is_mocos(problem):
    """Same NLP as Moco's: colloc's objective at Moco's solution is Moco's (to 1e-9; the file keeps 16
    digits) and Moco's solution meets colloc's constraints to its own tolerance (1e-4; it reached 1.7e-6)."""
    moco = json.loads(MOCO.with_suffix(".json").read_text())
    traj = inverse.from_moco(MOCO.with_suffix(".sto"), problem)
    assert traj.time.size == 2 * moco["intervals"] + 1
    objective, violation, _ = inverse.evaluate(problem, traj, moco["intervals"])
    assert objective == pytest.approx(moco["objective"], rel=1e-9)
    assert violation < 1e-5


def test_reserves_and_motion_input_are_checked():
    body = cl.Multibody("arm", coordinates=["flexion", "abduction"])
    rows = np.linspace(0.0, 1.0, 5)
    table = goals.TimeTable(rows, {"a": rows, "b": rows})
    motion = goals.prescribed_motion(body, table, {"arm.flexion": "a", "arm.abduction": "b"})
    muscle = cl.DeGrooteFregly2016Muscle("m", body=body, length=0.3 + 0.01 * body.coordinates[0],
                                         prescribed_motion=motion.q, max_isometric_force=100.0,
                                         optimal_fiber_length=0.1, tendon_slack_length=0.2)
    with pytest.raises(ProblemError, match="`arm.flexon` in `reserves` is not a coordinate of `arm`"):
        goals.inverse_problem(motion, [muscle], reserves={"arm.flexon": 1.0, "arm.abduction": 1.0}, guess=False)
    with pytest.raises(ProblemError, match="Coordinate `arm.abduction` has no reserve optimal force"):
        goals.inverse_problem(motion, [muscle], reserves={"arm.flexion": 1.0}, guess=False)
    with pytest.raises(ProblemError, match="optimal force must be positive; got -1.0 for `arm.abduction`"):
        goals.inverse_problem(motion, [muscle], reserves={"arm.flexion": 1.0, "arm.abduction": -1.0}, guess=False)
    with pytest.raises(ModelError, match="`motion` must be a callable"):
        cl.opensim.load(inverse.MODEL, forces=False, motion=motion.q)


@pytest.mark.slow
def test_missing_accuracy_estimate_is_explained():
    """Between grid points the cubic interpolant of a tendon force can fall below −0.2, where the tendon curve's
    inverse (a logarithm) is undefined: no estimate then, but a warning that names the state and says why."""
    res = inverse.run(quick=True)["result"]
    assert res.success and res.accuracy is None
    notes = [w for w in res.warnings if w.startswith("no accuracy estimate")]
    assert len(notes) == 1 and ".normalized_tendon_force`" in notes[0]
