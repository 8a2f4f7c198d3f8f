"""The planar hopper (``problems/hopper.py``): its problems build, its stance ground force, its gait found contact-implicitly.

References: the ground force of the pinned stance model is checked against hand-derived values
(static balance, free fall of the body); the contact-implicit gait against the two-phase solve of the
same gait (stance, flight, touchdown scheduled), the reference of docs/contacts.md "Contact-implicit solves".
"""
from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.pipeline.driver import build_nlp

from test_problems import load


@pytest.fixture(scope="module")
def hopper():
    return load("hopper")


def test_contact_implicit_problem_builds_without_a_schedule(hopper):
    prob = hopper.build().validate()
    nlp = build_nlp(prob, intervals=6, contact="implicit")
    labels = set(nlp.rows.labels())
    for kind in ("gap", "friction", "impact", "complementarity", "boundary"):
        assert any(label.startswith(kind) for label in labels), kind
    # the guess: the foot on the ground at every grid point, no force, no impulse
    lay = nlp.layout
    assert not lay["cn"].guess.any() and not lay["pn"].guess.any()
    x = lay["x"].guess
    names = [s.name for s in prob.model.states]
    foot_y = x[names.index("hopper.y")] - x[names.index("hopper.r")] * np.cos(x[names.index("hopper.theta")])
    assert np.allclose(foot_y, 0.0)


def test_two_phase_problem_builds(hopper):
    mp = hopper.build_two_phase().validate()
    assert [p.name for p in mp.phases] == ["stance", "flight"]
    assert [c.kind for c in mp.connections] == ["link", "periodic"]
    assert mp.connections[1].impact.name == "touchdown"


def test_stance_ground_force_by_hand(hopper):
    # at rest, leg vertical: F = m_b g holds the body and the ground carries the whole weight (m_b + m_f) g;
    # with F = 0 the body falls freely (a = −g) and the ground carries the foot only, m_f g
    body, _, ground, _ = hopper.stance_model()
    f = ca.Function("ground", [body.q, body.v, ca.vertcat(*[v.symbol for v in body.variables if v.kind == "control"])], [ground])
    g, mb, mf = hopper.GRAVITY, hopper.BODY_MASS, hopper.FOOT_MASS
    assert np.allclose(np.asarray(f([0.0, 0.5], [0.0, 0.0], [0.0, mb * g])).ravel(), [0.0, (mb + mf) * g], atol=1e-12)
    assert np.allclose(np.asarray(f([0.0, 0.5], [0.0, 0.0], [0.0, 0.0])).ravel(), [0.0, mf * g], atol=1e-12)


@pytest.mark.slow
def test_contact_implicit_hopper_finds_the_two_phase_gait(hopper):
    # reference: the two-phase solve of the same gait, 870.53 at 10 intervals per phase (870.39–870.63 from 10 to
    # 80), stance 0.3274 s of 0.6; measured contact-implicit from the schedule-free guess, 10 intervals: 895.76
    # (+2.9 %, the stance a whole number of intervals, 0.36 s, and the touchdown on a mesh point)
    ref = cl.solve(hopper.build_two_phase(), intervals=10)
    assert ref.success
    stance_ref = ref.trajectory.metadata["phases"][0]["duration"]
    opts = {k: v for k, v in hopper.SOLVE.items() if k != "intervals"}
    res = cl.solve(hopper.build(), intervals=10, **opts)
    assert res.success
    assert res.objective == pytest.approx(ref.objective, rel=0.04)
    g = hopper.gait(res, 10)
    assert len(g["touchdown"]) == 1 and len(g["lift_off"]) == 1  # one stance, one flight per stride
    assert abs(g["stance"] - stance_ref) <= 0.6 / 10 + 1e-9  # the stance spans whole intervals
    assert max(res.contact["complementarity"].values()) <= 1e-6


def test_verify_reads_a_fixed_mesh_file_solved_with_own_ends_on_its_own_accelerations(hopper):
    # own_ends=True closes the interval ending where an impulse falls (the touchdown at 0.24 s) on its own
    # accelerations, on a fixed mesh too; the file records it, and verify's defect check closes that interval the same
    # way: read on the mesh point's stored (post-impact, stance) accelerations instead, hopper.r_speed's Simpson defect
    # was 0.92 against a tolerance of 1e-6
    from colloc.simulate.consistency import consistency_checks
    from colloc.simulate.contact_checks import interval_contact, consistency_contact

    opts = {k: v for k, v in hopper.SOLVE.items() if k != "intervals"}
    res = cl.solve(hopper.build(), intervals=10, own_ends=True, **opts)
    assert res.success and res.trajectory.metadata["own_ends"] and not res.trajectory.metadata["free_steps"]
    assert any(abs(it["time"] - 0.24) < 1e-9 and it["impulse"] > 1.0 for it in res.trajectory.metadata["impacts"])
    problem, traj = hopper.build(), res.trajectory
    checks = consistency_checks(problem, traj, 1e-6, 1e-2, contact=consistency_contact(problem, traj, interval_contact(problem, traj)))
    defects = [c for c in checks if c.name == "defects"]
    assert defects and defects[0].passed, defects[0].line()
    traj.metadata["own_ends"] = False  # read as a plain fixed mesh: the landing interval's defect is off by the stance's pull
    checks = consistency_checks(problem, traj, 1e-6, 1e-2, contact=consistency_contact(problem, traj, interval_contact(problem, traj)))
    assert not [c for c in checks if c.name == "defects"][0].passed
