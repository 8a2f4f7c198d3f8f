"""Solo12 on four unilateral feet with 3-D friction (problems/solo12_stand.py), checked with Pinocchio.

* at rest, analytic: the least-norm joint torques and foot forces that hold the standing pose through the
  contacts' own Jacobians (``W_n``, ``W_t`` of ``Multibody.contact_point``) balance the weight: the normal
  forces add up to m g and their moment about the centre of mass vanishes, m and the centre of mass by
  Pinocchio (``computeTotalMass``, ``centerOfMass``);
* the contact-implicit stance (no schedule): over the horizon the feet's normal forces average to m g,
  since the base starts and ends at rest (impulse = change of momentum), and ``colloc verify``'s checks of
  the file pass, and fail on a moved knee angle or a raised foot force;
* the soft-landing rows of the schedule-free jump (``build_jump(landing=a)``): each foot's vertical speed
  squared minus 2a times its height, both by Pinocchio's kinematics.
"""
import importlib.util
import os
from copy import deepcopy

import casadi as ca
import numpy as np
import pytest

import colloc as cl

from solo12_setup import solo12  # noqa: E402

pin, URDF = solo12()

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
G = 9.81


def _script(stem):
    spec = importlib.util.spec_from_file_location(stem, os.path.join(ROOT, "problems", f"{stem}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pinocchio_q(model, body, q):
    """colloc's (x, y, z, qw, qx, qy, qz, joints) as Pinocchio's (x, y, z, qx, qy, qz, qw, joints by name)."""
    out = np.zeros(model.nq)
    out[:3], out[3:6], out[6] = q[:3], q[4:7], q[3]
    names = [s.name().split(".", 1)[1] for s in body.coordinates]
    for name in model.names[2:]:
        out[model.joints[model.getJointId(name)].idx_q] = q[names.index(name)]
    return out


def test_standing_feet_forces_balance_the_weight_by_pinocchio():
    stand, jump = _script("solo12_stand"), _script("solo12_jump")
    body = stand.robot()
    q0, feet = jump.standing_pose(body)
    contacts = body.contacts
    W = ca.Function("W", [body.q], [ca.vertcat(*[ca.vertcat(c.normal_jacobian, c.tangent_jacobian) for c in contacts])])
    W = np.array(W(q0))                                            # (12, nv): per foot n, t1, t2
    bias = np.array(ca.Function("c", [body.q, body.v], [body.bias_force])(q0, np.zeros(body.num_speeds))).ravel()
    nv = body.num_speeds
    S = np.zeros((nv - 6, nv))
    S[:, 6:] = np.eye(nv - 6)
    sol = np.linalg.lstsq(np.hstack([S.T, W.T]), bias, rcond=None)[0]
    forces = sol[nv - 6:].reshape(4, 3)                            # (λ, f1, f2) per foot
    assert np.allclose(np.hstack([S.T, W.T]) @ sol, bias, atol=1e-10)
    model = pin.buildModelFromUrdf(URDF, pin.JointModelFreeFlyer())
    data = model.createData()
    qp = _pinocchio_q(model, body, q0)
    mass = pin.computeTotalMass(model)
    com = pin.centerOfMass(model, data, qp)
    assert forces[:, 0].sum() == pytest.approx(mass * G, rel=1e-10)  # 24.525 N
    assert np.allclose(forces[:, 1:].sum(axis=0), 0.0, atol=1e-10)  # no net tangential push
    world = np.column_stack([forces[:, 1], forces[:, 2], forces[:, 0]])  # flat ground: tangents x, y; normal z
    moment = sum(np.cross(p - com, f) for p, f in zip(feet, world))
    assert np.allclose(moment, 0.0, atol=1e-9)
    # the feet are where Pinocchio puts them, on the ground
    pin.framesForwardKinematics(model, data, qp)
    for foot, p in zip(jump.FEET, feet):
        assert np.allclose(data.oMf[model.getFrameId(foot)].translation, p, atol=1e-12)
        assert p[2] == pytest.approx(0.0, abs=1e-12)


@pytest.fixture(scope="module")
def stance():
    stand = _script("solo12_stand")
    res = cl.solve(stand.build(), ipopt={"tol": 1e-8}, **stand.SOLVE)
    assert res.success, res.message
    return stand, res.trajectory


@pytest.mark.slow
def test_contact_implicit_stance_carries_the_weight(stance):
    # measured (4 intervals, mesh given): J = 0.2516392 against 0.2514116 with the feet held by holonomic
    # constraints (scripts/contact_robots.py); average of Σλ 24.5411 N against m g = 24.5250 N (6.5e-4): the
    # transcription's mesh points carry the next interval's force, so each interval's momentum balance is off
    # by O(h ΔF); the file's contact rows and its event-driven re-simulation pass
    from colloc.discretization.interpolant import Interpolant
    from colloc.simulate.contact_checks import check_contact_file

    stand, tr = stance
    model = pin.buildModelFromUrdf(URDF, pin.JointModelFreeFlyer())
    weight = pin.computeTotalMass(model) * G
    lam = np.array([tr[f"solo12.{f}_FOOT.normal_force"] for f in ("FL", "FR", "HL", "HR")])
    grid = Interpolant(tr).grid
    mesh = tr.time[grid.mesh_points]
    average = float(np.diff(mesh) @ lam[:, grid.interval_starts].sum(axis=0)) / tr.duration  # constant per interval
    assert average == pytest.approx(weight, rel=2e-3)  # the base starts and ends at rest: ∫Σλ dt = m g T
    assert (lam > 1.0).all()  # no foot lifts
    checks, _ = check_contact_file(stand.build(), tr, 1e-6, 1e-2)
    judged = {c.name: c for c in checks}
    for name in ("initial", "final", "bounds", "contact", "defects", "derivatives", "resimulation"):
        assert judged[name].passed, judged[name].line()


@pytest.mark.slow
def test_contact_implicit_stance_verifies_and_a_tampered_stance_does_not(stance):
    # Every check passes. Integrated with the file's constant forces each interval of this stance ends 0.86 rad/s
    # off in the knee speeds (a lower leg weighs 38 g: a force error δF moves the foot by h δF / m); its feet stick
    # throughout, so verify integrates each interval with them held by the contact law (colloc.simulate.held_intervals),
    # and those end within 3e-4 of the file.  Two edits must still fail it: a knee angle moved by 0.02 rad at an
    # interior mesh point (the interval ending there does not reach it), and one foot's force raised by 30 % on
    # an interval (the model at its grid points no longer balances)
    from copy import deepcopy

    from colloc.simulate.contact_checks import check_contact_file

    stand, tr = stance
    checks, _ = check_contact_file(stand.build(), tr, 1e-6, 1e-2)
    assert all(c.passed for c in checks), [c.line() for c in checks if not c.passed]
    mesh = np.flatnonzero(np.isin(tr.time, tr.time[::2]))  # Hermite–Simpson: mesh points are every other grid point
    moved = deepcopy(tr)
    moved["solo12.FL_KFE"][mesh[2]] += 0.02
    failed = {c.name for c in check_contact_file(stand.build(), moved, 1e-6, 1e-2)[0] if not c.passed}
    assert "dynamics:solo12.FL_KFE" in failed, failed
    pushed = deepcopy(tr)
    pushed["solo12.HR_FOOT.normal_force"][mesh[1]:mesh[2]] *= 1.3
    failed = {c.name for c in check_contact_file(stand.build(), pushed, 1e-6, 1e-2)[0] if not c.passed}
    assert "derivatives" in failed, failed

@pytest.mark.parametrize("placement", ["interval", "collocation"])
def test_standing_guess_is_an_equilibrium_of_the_transcribed_contact_dynamics(placement):
    # The guess of problems/solo12_stand.py names no contact mode, but it must hold the robot up: its torques
    # and 3-D foot forces (the weight split by least squares through the contacts' Jacobians) put every
    # residual row M a + c − τ − W_nᵀλ − W_tᵀf of the transcription at 0 (at rest a = 0, and c is the
    # weight), the collocation defects at 0, the forces inside their 4-facet cones.  Checks that the guess's
    # friction forces (tangent coordinates) reach the cone's facet variables as the same force.
    from colloc.pipeline import driver

    stand = _script("solo12_stand")
    problem = stand.build()
    guess = stand.standing_guess(0.2)
    tr = driver.transcription(problem, **dict(stand.SOLVE, intervals=2, contact_forces=placement))
    with pytest.warns(UserWarning, match="interpolated linearly"):
        nlp = tr.build(tr.warm_start(guess))
    w = nlp.layout.vector("guess")
    g = np.array(ca.Function("g", [nlp.w], [nlp.g])(w)).ravel()
    for kind in ("residual", "defect"):
        values = np.concatenate([v.ravel() for _, v in nlp.rows.values(g, kind)])
        assert values.size and np.abs(values).max() <= 1e-9, (kind, np.abs(values).max())
    cones = [v for b, v in nlp.rows.values(g, "friction") if any(n.endswith("cone") for n in b.names)]
    assert cones and min(float(v.min()) for v in cones) > 0.0
    lam = np.array([guess[f"solo12.{f}_FOOT.normal_force"][0] for f in ("FL", "FR", "HL", "HR")])
    model = pin.buildModelFromUrdf(URDF, pin.JointModelFreeFlyer())
    assert lam.sum() == pytest.approx(pin.computeTotalMass(model) * G, rel=1e-10)


FEET = ("FL", "FR", "HL", "HR")


def _pinocchio_motion(model, body, tr):
    """Pinocchio's (q, v, a) at every grid point of a solution of ``body`` (its columns and their ``.dot``)."""
    names = [s.name() for s in body.coordinates]
    speeds = [s.name() for s in body.speeds]
    Q = np.column_stack([tr[n] for n in names])
    V = np.column_stack([tr[n] for n in speeds])
    A = np.column_stack([tr[n + ".dot"] for n in speeds])
    joint_v = [model.joints[model.getJointId(n)].idx_v for n in model.names[2:]]
    order = [speeds.index(f"solo12.{n}_speed") for n in model.names[2:]]
    q = np.array([_pinocchio_q(model, body, qk) for qk in Q])
    v, a = np.zeros((len(Q), model.nv)), np.zeros((len(Q), model.nv))
    v[:, :6], a[:, :6] = V[:, :6], A[:, :6]  # the free flyer's (v, ω) in the base frame in both
    v[:, joint_v], a[:, joint_v] = V[:, order], A[:, order]
    return q, v, a


def _com(model, data, q, v, a):
    """Pinocchio's centre of mass, its velocity and its acceleration."""
    pin.centerOfMass(model, data, q, v, a)
    return data.com[0].copy(), data.vcom[0].copy(), data.acom[0].copy()


@pytest.fixture(scope="module")
def jump_implicit():
    stand = _script("solo12_stand")
    # 8 intervals of 0.106 s (the script's 17 take 2.5× as long): a coarse jump, but every check below holds on any
    # mesh; the homotopy stops at ε = 1e-6, where a foot in the air (gap ≥ 1 cm) carries at most 1e-4 N
    options = dict(stand.JUMP_SOLVE, intervals=8, complementarity_tolerance=1e-6)
    res = cl.solve(stand.build_jump(), guess=stand.jump_guess(), ipopt={"tol": 1e-8}, **options)
    assert res.success, res.message
    return stand, res.trajectory


@pytest.mark.slow
def test_schedule_free_jump_obeys_newton_by_pinocchio(jump_implicit):
    # The jump without a schedule, checked as a whole robot by Pinocchio: at every grid point the ground's forces
    # (normal along z, friction along the contacts' tangents x, y) are all the external force besides gravity,
    # m a_com = Σ F + m g, with a_com from the solution's (q, v, a) (the transcription's dynamics rows hold at every
    # grid point with its interval's force); over the horizon, rest to rest, ∫ΣF dt = −m g T (no impulses:
    # impacts=False); the feet on the ground at the start and 0.2 m further at the end; and it does jump: every
    # foot above the ground, with no force, at some grid points in mid-horizon
    from colloc.discretization.interpolant import Interpolant

    stand, tr = jump_implicit
    body = stand.robot()
    model = pin.buildModelFromUrdf(URDF, pin.JointModelFreeFlyer())
    data = model.createData()
    mass, g = pin.computeTotalMass(model), np.array([0.0, 0.0, -G])
    q, v, a = _pinocchio_motion(model, body, tr)
    force = sum(np.column_stack([tr[f"solo12.{f}_FOOT.friction_force_1"], tr[f"solo12.{f}_FOOT.friction_force_2"],
                                 tr[f"solo12.{f}_FOOT.normal_force"]]) for f in FEET)
    acom = np.array([_com(model, data, qk, vk, ak)[2] for qk, vk, ak in zip(q, v, a)])
    assert np.abs(mass * acom - force - mass * g).max() <= 1e-5 * mass * G
    # the impulse by the scheme's own quadrature (Simpson's on each interval: the speeds' defects) against the change
    # of momentum, m Δv_com = 0: the centre of mass's speed is nonlinear in the states, so the two agree to the
    # discretisation error only: measured 0.63/0.19/0.027/0.0087 % of m g T at 8/12/17/24 intervals
    grid = Interpolant(tr).grid
    h, start = np.diff(tr.time[grid.mesh_points]), grid.mesh_points[:-1]
    impulse = sum(hk / 6 * (force[k] + 4 * force[k + 1] + force[k + 2]) for hk, k in zip(h, start))
    vcom = [_com(model, data, q[k], v[k], a[k])[1] for k in (0, -1)]
    assert np.allclose(vcom, 0.0, atol=1e-9)  # at rest at both ends
    assert np.allclose(impulse + mass * g * tr.duration, 0.0, atol=1e-2 * mass * G * tr.duration), impulse
    feet = []
    for k in range(len(q)):
        pin.framesForwardKinematics(model, data, q[k])
        feet.append([data.oMf[model.getFrameId(f"{f}_FOOT")].translation.copy() for f in FEET])
    feet = np.array(feet)  # (points, 4, 3)
    assert np.abs(feet[[0, -1], :, 2]).max() <= 1e-9
    assert np.allclose(feet[-1] - feet[0], [0.2, 0.0, 0.0], atol=1e-9)
    assert feet[..., 2].min() >= -2e-8, feet[..., 2].min()  # never below the ground (to the NLP tolerance)
    airborne = (feet[..., 2] > 1e-3).all(axis=1) & (force[:, 2] <= 1e-4 * mass * G)
    assert airborne.any() and 0.2 < tr.time[airborne].min() < tr.time[airborne].max() < 0.65, tr.time[airborne]
    lam = np.array([tr[f"solo12.{f}_FOOT.normal_force"] for f in FEET])
    friction = np.array([np.abs(tr[f"solo12.{f}_FOOT.friction_force_1"]) + np.abs(tr[f"solo12.{f}_FOOT.friction_force_2"])
                         for f in FEET])
    assert lam.min() >= -1e-8 and (friction - 0.8 * lam).max() <= 1e-8  # the 4-facet cone |f₁| + |f₂| ≤ μλ


def _file_checks(problem, tr):
    """``colloc verify``'s checks of a contact-implicit file short of integrating it: conditions, bounds, paths, the
    contact rows (gaps ≥ 0, forces in their cones, maximal dissipation, no force on an interval whose gap opens) and
    the defects and derivative columns against the model with the file's forces."""
    from colloc.simulate.checks import basic_checks, solution_checks
    from colloc.simulate.consistency import consistency_checks
    from colloc.simulate.contact_checks import _contact_rows_check, consistency_contact, interval_contact

    checks = basic_checks(problem, tr, 1e-6)
    checks += solution_checks(problem, tr, 1e-6)
    setup = interval_contact(problem, tr)
    checks.append(_contact_rows_check(setup["rows"], problem, tr, 1e-6))
    return checks + consistency_checks(problem, tr, 1e-6, 1e-2, consistency_contact(problem, tr, setup))


@pytest.mark.slow
def test_schedule_free_jump_file_checks_pass_and_tampered_jumps_fail(jump_implicit):
    # The checks of `colloc verify` that judge the file against its problem and model pass; a push in mid-air (a foot
    # force at a grid point where every foot is off the ground) and a base moved up by 1 cm at a grid point in flight
    # each fail them.  The integrations of `colloc verify` are left out: on this coarse mesh its per-interval
    # integrations miss at take-off and touch-down, and so does its re-simulation from there on (docs/contacts.md)
    stand, tr = jump_implicit
    problem = stand.build_jump()
    checks = _file_checks(problem, tr)
    assert len(checks) > 5 and all(c.passed for c in checks), [c.line() for c in checks if not c.passed]
    lam = sum(tr[f"solo12.{f}_FOOT.normal_force"] for f in FEET)
    mid = int(np.flatnonzero(lam <= 1e-3)[1])
    pushed = deepcopy(tr)
    pushed["solo12.FL_FOOT.normal_force"][mid] = 5.0
    failed = {c.name for c in _file_checks(problem, pushed) if not c.passed}
    assert {"contact", "derivatives"} <= failed, failed
    raised = deepcopy(tr)
    raised["solo12.base_z"][mid] += 0.01
    failed = {c.name for c in _file_checks(problem, raised) if not c.passed}
    assert "defects" in failed, failed


@pytest.mark.slow
def test_graded_mesh_refines_where_the_feet_lift_and_land(jump_implicit):
    # graded_mesh() imposes nothing but a finer mesh: it keeps every mesh point of the solve and splits into three the
    # intervals on either side of a change between loaded and unloaded intervals, so the finer intervals are those
    # that hold the last grid points before and the first after the flight, where the feet carry no force
    from colloc.discretization.interpolant import Interpolant

    stand, tr = jump_implicit
    grid = Interpolant(tr).grid
    mesh = tr.time[grid.mesh_points] / tr.duration
    graded = stand.graded_mesh(tr, pieces=3)
    assert graded[0] == 0.0 and graded[-1] == 1.0 and (np.diff(graded) > 0).all()
    assert all(np.isclose(graded, m).any() for m in mesh)
    lam = sum(tr[f"solo12.{f}_FOOT.normal_force"] for f in FEET)[grid.interval_starts]
    loaded = lam > 1e-3
    changes = np.flatnonzero(np.diff(loaded.astype(int)))
    split = sorted(set(changes) | set(changes + 1))
    assert changes.size == 2 and graded.size - 1 == mesh.size - 1 + 2 * len(split)
    for i in range(mesh.size - 1):
        inside = (graded > mesh[i] + 1e-12) & (graded < mesh[i + 1] - 1e-12)
        assert inside.sum() == (2 if i in split else 0), i


@pytest.mark.parametrize("tangential, approach, settle", [(False, 0.0, 0.0), (True, 0.0, 0.0), (True, 0.05, 0.0), (True, 0.0, 1e-3)])
def test_soft_landing_rows_are_the_feet_speed_and_height_by_pinocchio(tangential, approach, settle):
    # build_jump(landing=a) adds per foot the path row ẏ² − 2aφ ≤ 2aδ: at a random pose and speed its value is the
    # foot's vertical speed squared minus 2a times its height, both by Pinocchio's forward kinematics (the foot frame's
    # origin, its velocity in the world-aligned frame at the foot); build_jump(tangential=True): the foot's whole
    # speed squared; soft_start(approach=φ₀) adds the boundary row −ẏ − φ √(2a/(φ + φ₀)) ≤ APPROACH_SPEED at t0;
    # build_jump(settle=s): the height term 2aφ²/(φ + s)
    stand = _script("solo12_stand")
    a = 100.0
    problem = stand.build_jump(landing=a, tangential=tangential, settle=settle)
    body = problem.model.components[0]
    rows = {p.name: p for p in problem.paths if p.name.startswith("soft_landing.")}
    assert sorted(rows) == [f"soft_landing.{f}_FOOT" for f in FEET]
    assert all(np.allclose(p.upper, 2 * a * stand.SOFT_CLEARANCE) for p in rows.values())
    if approach:
        stand.soft_start(problem, body, a, approach)
        start = {b.name: b for b in problem.boundaries if b.name.startswith("soft_start.")}
        assert sorted(start) == [f"soft_start.{f}_FOOT" for f in FEET]
        assert all(np.allclose(b.upper, stand.APPROACH_SPEED) for b in start.values())
    rng = np.random.default_rng(3)
    q = np.array(stand._jump_script().standing_pose(body)[0], dtype=float)
    q[[0, 1, 2]] += rng.normal(scale=0.05, size=3)
    quat = rng.normal(size=4)
    q[3:7] = quat / np.linalg.norm(quat)
    q[7:] += rng.normal(scale=0.3, size=12)
    v = rng.normal(size=body.num_speeds)
    model = pin.buildModelFromUrdf(URDF, pin.JointModelFreeFlyer())
    data = model.createData()
    qp = _pinocchio_q(model, body, q)
    vp = np.zeros(model.nv)
    vp[:6] = v[:6]
    names = [s.name().split(".", 1)[1] for s in body.coordinates][7:]
    for j, name in enumerate(names):
        vp[model.joints[model.getJointId(name)].idx_v] = v[6 + j]
    pin.forwardKinematics(model, data, qp, vp)
    pin.updateFramePlacements(model, data)
    for foot in FEET:
        frame = model.getFrameId(f"{foot}_FOOT")
        height = data.oMf[frame].translation[2]
        linear = pin.getFrameVelocity(model, data, frame, pin.LOCAL_WORLD_ALIGNED).linear
        squared = linear @ linear if tangential else linear[2] ** 2
        value = float(ca.Function("row", [body.q, body.v], [rows[f"soft_landing.{foot}_FOOT"].expr])(q, v))
        room = height**2 / (height + settle) if settle else height
        assert value == pytest.approx(squared - 2 * a * room, rel=1e-9, abs=1e-12)
        if approach:  # the row at t0: the initial state's symbols stand for q, v
            ends = problem.at_t0(ca.vertcat(body.q, body.v))
            row = float(ca.Function("row", [ends], [start[f"soft_start.{foot}_FOOT"].expr])(np.r_[q, v]))
            assert row == pytest.approx(-linear[2] - height * np.sqrt(2 * a / (height + approach)), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("landing", [-1.0, float("inf"), float("nan")])
def test_soft_landing_refuses_a_deceleration_that_is_not_positive_and_finite(landing):
    stand = _script("solo12_stand")
    with pytest.raises(cl.ProblemError, match="soft landing's `deceleration`"):
        stand.build_jump(landing=landing)


@pytest.mark.parametrize("settle", [-1e-3, float("inf"), float("nan")])
def test_soft_landing_refuses_a_settling_gap_that_is_not_zero_or_positive_and_finite(settle):
    stand = _script("solo12_stand")
    with pytest.raises(cl.ProblemError, match="soft landing's `settle`"):
        stand.build_jump(landing=100.0, settle=settle)


@pytest.mark.parametrize("approach", [0.0, -1e-3, float("inf"), float("nan")])
def test_soft_start_refuses_an_approach_length_that_is_not_positive_and_finite(approach):
    stand = _script("solo12_stand")
    problem = stand.build_jump()
    with pytest.raises(cl.ProblemError, match="soft landing's `approach`"):
        stand.soft_start(problem, problem.model.components[0], 100.0, approach)


#: The schedule-free jump with soft landings on 25 intervals (98 KB), ``solve_soft_jump()``'s first refinement:
#: ``build_jump(landing=100)`` with ``JUMP_SOLVE_POINTS`` on ``graded_mesh(r, 3)`` of the 17-interval solve ``r`` from
#: ``jump_guess()``, ε 1e-2 → 1e-5 from ``jump_guess()``, then 1e-6 → 1e-8 warm-started from there (J = 1.816618).
JUMP_FILE = os.path.join(ROOT, "tests", "data", "solo12_jump_soft.npz")


def test_graded_mesh_width_splits_the_stance_intervals_next_to_take_off_and_touch_down():
    # graded_mesh(width=w) keeps every mesh point, splits each interval less than w from a change between loaded and
    # unloaded intervals into pieces no longer than the longest interval / pieces, and leaves the others whole
    from colloc.discretization.interpolant import Interpolant

    stand = _script("solo12_stand")
    tr = cl.Trajectory.read(JUMP_FILE)
    grid = Interpolant(tr).grid
    mesh = tr.time[grid.mesh_points] / tr.duration
    lam = sum(tr[f"solo12.{f}_FOOT.normal_force"] for f in FEET)
    loaded = lam[grid.nodes_of_intervals[:, 1:]].max(axis=1) > 1e-3
    at = mesh[np.flatnonzero(np.diff(loaded.astype(int))) + 1]
    assert at.size == 2  # one take-off, one touch-down: all four feet together
    width = 0.1
    graded = stand.graded_mesh(tr, pieces=3, width=width)
    assert graded[0] == 0.0 and graded[-1] == 1.0 and (np.diff(graded) > 0).all()
    assert all(np.isclose(graded, m).any() for m in mesh)
    longest = np.diff(mesh).max() / 3
    for a, b in zip(mesh[:-1], mesh[1:]):
        inside = graded[(graded > a + 1e-12) & (graded < b - 1e-12)]
        near = np.any((a < at + width / tr.duration - 1e-9) & (b > at - width / tr.duration + 1e-9))
        assert inside.size == (int(np.ceil((b - a) / longest - 1e-9)) - 1 if near else 0), (a, b)
    assert np.allclose(stand.graded_mesh(tr, pieces=3, width=0.0), stand.graded_mesh(tr, pieces=3))


def test_graded_mesh_each_foot_splits_where_any_foot_lifts_or_lands():
    # a trot always carries the robot on some foot, so the feet's sum never changes and graded_mesh() leaves its mesh
    # as it is; graded_mesh(each_foot=True) splits the intervals on either side of every foot's own lift-off and
    # touch-down (read here from each foot's force at its interval's points), and no others
    from colloc.discretization.interpolant import Interpolant

    stand = _script("solo12_stand")
    tr = cl.Trajectory.read(os.path.join(ROOT, "tests", "data", "solo12_trot_soft.npz"))
    grid = Interpolant(tr).grid
    mesh = tr.time[grid.mesh_points] / tr.duration
    assert np.allclose(stand.graded_mesh(tr, pieces=3), mesh)
    split = set()
    for f in FEET:
        loaded = tr[f"solo12.{f}_FOOT.normal_force"][grid.nodes_of_intervals[:, 1:]].max(axis=1) > 1e-3
        changes = np.flatnonzero(loaded[1:] != loaded[:-1])
        assert changes.size >= 1, f  # each foot lifts or lands inside the stride
        split |= set(changes) | set(changes + 1)
    graded = stand.graded_mesh(tr, pieces=3, each_foot=True)
    assert all(np.isclose(graded, m).any() for m in mesh)
    longest = np.diff(mesh).max() / 3
    for i, (a, b) in enumerate(zip(mesh[:-1], mesh[1:])):
        inside = graded[(graded > a + 1e-12) & (graded < b - 1e-12)]
        assert inside.size == (int(np.ceil((b - a) / longest - 1e-9)) - 1 if i in split else 0), (a, b)
    assert len(graded) > len(mesh)


def test_split_mesh_splits_the_intervals_named_and_keeps_the_rest():
    # split_mesh() splits the interval holding each time into that many equal pieces (the most, where two fall in one
    # interval), keeps every mesh point and every other interval, and refuses a time on a mesh point or outside
    stand = _script("solo12_stand")
    tr = cl.Trajectory.read(os.path.join(ROOT, "tests", "data", "solo12_trot_soft.npz"))
    mesh = np.asarray(tr.metadata["mesh"])
    times = tr.time[0] + tr.duration * mesh
    mid = lambda i: 0.5 * (times[i] + times[i + 1])
    split = stand.split_mesh(tr, [(mid(2), 3), (mid(5), 2), (0.25 * times[5] + 0.75 * times[6], 4)])
    assert split[0] == 0.0 and split[-1] == 1.0 and (np.diff(split) > 0).all()
    assert all(np.isclose(split, m).any() for m in mesh)
    for i, (a, b) in enumerate(zip(mesh[:-1], mesh[1:])):
        inside = split[(split > a + 1e-12) & (split < b - 1e-12)]
        assert inside.size == {2: 2, 5: 3}.get(i, 0), i
        if inside.size:
            assert np.allclose(np.diff(np.r_[a, inside, b]), (b - a) / (inside.size + 1))
    for bad, words in (([(times[3], 2)], "mesh point"), ([(times[-1] + 1.0, 2)], "outside"), ([(mid(1), 1)], "≥ 2")):
        with pytest.raises(ValueError, match=words):
            stand.split_mesh(tr, bad)


def test_resampled_jump_obeys_newton_by_pinocchio_where_its_feet_carry_it():
    # resampled_guess() puts the jump on a finer mesh with the torques and feet's forces projected onto the dynamics:
    # wherever a foot carries load, Pinocchio's m a_com equals the feet's forces plus the weight (a_com from the
    # resampled q, v, a).  The plain resampling, which interpolates the forces, misses it by newtons at the new points
    # of the landing (measured: 96 in the transcription's base rows)
    stand = _script("solo12_stand")
    tr = cl.Trajectory.read(JUMP_FILE)
    problem = stand.build_jump(landing=stand.SOFT_LANDING)
    mesh = stand.graded_mesh(tr, pieces=2, width=0.1)
    body = stand.robot()
    model = pin.buildModelFromUrdf(URDF, pin.JointModelFreeFlyer())
    data = model.createData()
    mass, g = pin.computeTotalMass(model), np.array([0.0, 0.0, -G])

    def newton_error(guess):
        q, v, a = _pinocchio_motion(model, body, guess)
        force = sum(np.column_stack([guess[f"solo12.{f}_FOOT.friction_force_1"], guess[f"solo12.{f}_FOOT.friction_force_2"],
                                     guess[f"solo12.{f}_FOOT.normal_force"]]) for f in FEET)
        acom = np.array([_com(model, data, qk, vk, ak)[2] for qk, vk, ak in zip(q, v, a)])
        carried = force[:, 2] > 1e-3
        return np.abs(mass * acom - force - mass * g)[carried].max()

    guess = stand.resampled_guess(problem, tr, mesh)
    assert guess.time.size == 3 * (mesh.size - 1) + 1
    assert newton_error(guess) <= 1e-8 * mass * G
    from colloc.pipeline import driver

    options = {k: v for k, v in stand.JUMP_SOLVE_POINTS.items() if k != "intervals"}
    plain = driver.transcription(problem, mesh=mesh, **options)
    nlp = plain.build(plain.warm_start(tr))
    assert newton_error(plain.trajectory(nlp, nlp.layout.vector("guess"))) > 0.1 * mass * G


@pytest.mark.slow
def test_soft_jump_file_checks_pass_and_tampered_copies_fail():
    # colloc verify's checks of the 25-interval soft-landing jump against its problem and model pass: conditions, bounds,
    # the soft-landing paths, the contact rows (gaps, cones, dissipation), the defects and derivative columns, the
    # objective, the whole-horizon re-simulation and Newton's law; a foot pushing in mid-air and a base raised by
    # 1 cm at an interior mesh point in flight fail them.  What it does not pass (docs/contacts.md): the per-interval
    # integrations of the stance intervals 0.20-0.25 and 0.60-0.65 s (a 33-interval mesh passes them), the soft
    # landing between grid points in 0.55-0.60 s, and `impact times` (see the next test)
    from colloc.discretization.interpolant import Interpolant
    from colloc.simulate.contact_checks import check_contact_file

    stand = _script("solo12_stand")
    problem = stand.build_jump(landing=stand.SOFT_LANDING)
    tr = cl.Trajectory.read(JUMP_FILE)
    judged = {c.name: c for c in check_contact_file(problem, tr, 1e-6, 1e-2)[0]}
    for name in ("initial", "final", "bounds", "contact", "defects", "derivatives", "objective", "resimulation", "newton",
                 *[f"path:soft_landing.{f}_FOOT" for f in FEET], "between:soft_landing.FL_FOOT"):
        assert judged[name].passed, judged[name].line()
    grid = Interpolant(tr).grid
    flight = [k for k in grid.mesh_points if 0.38 < tr.time[k] < 0.46]  # 0.40 and 0.45 s, every foot in the air
    pushed = deepcopy(tr)
    pushed["solo12.FL_FOOT.normal_force"][flight[0] + 1] = 5.0
    failed = {c.name for c in _file_checks(problem, pushed) if not c.passed}
    assert {"contact", "derivatives"} <= failed, failed
    raised = deepcopy(tr)
    raised["solo12.base_z"][flight[0]] += 0.01
    failed = {c.name for c in _file_checks(problem, raised) if not c.passed}
    assert "defects" in failed, failed


@pytest.mark.slow
def test_soft_landing_meets_the_ground_at_the_speed_its_clearance_allows():
    # The event-driven simulator, started from the file's own state at the mesh point 17 ms before touch-down and
    # driven by its torques, lands the feet at the file's touch-down, 0.55 s, with the normal speed the rows allow at a
    # closed gap, sqrt(2 a δ) = 0.0141 m/s (a = 100 m/s², δ = 1 µm), not at rest: a plastic impulse of about 1e-3 N s
    # that the file, solved without impulses, lacks: `impact times` fails on it
    from colloc.discretization.interpolant import Interpolant
    from colloc.simulate.control_signals import solution_controls
    from colloc.simulate.events import ContactSystem, simulate_events
    from colloc.transcription.contacts import END

    stand = _script("solo12_stand")
    problem = stand.build_jump(landing=stand.SOFT_LANDING)
    tr = cl.Trajectory.read(JUMP_FILE)
    itp, system = Interpolant(tr), ContactSystem(problem.model)
    ends = itp.grid.interval_ends
    controls = solution_controls(itp, system.control_names, {n: tr[n + END][ends] for n in system.control_names if n + END in tr.names})
    k = int(np.argmin(np.abs(tr.time - 0.55 + 1 / 60)))
    q0, v0 = ([tr[n][k] for n in names] for names in (system.coordinate_names, system.speed_names))
    sim = simulate_events(system, 0.56, q0, v0, controls=controls, t0=float(tr.time[k]), gap_tolerance=1e-8,
                          max_step=float(np.min(np.diff(tr.time))) / 20)
    first = {}
    for e in sim.metadata["events"]:
        if e["kind"] == "impact":
            first.setdefault(e["contact"], e)
    assert sorted(first) == [f"solo12.{f}_FOOT" for f in FEET]
    limit = np.sqrt(2 * stand.SOFT_LANDING * stand.SOFT_CLEARANCE)
    for e in first.values():
        assert e["time"] == pytest.approx(0.55, abs=1e-5)
        assert 0.5 * limit < -e["speed"] < 1.2 * limit, e
        assert e["impulse"] > 1e-4


def test_apex_row_puts_a_level_base_above_what_straight_legs_reach():
    # build_jump(apex=h) adds one path row z + g (t − T/2)² / 2 ≥ h on the base's height; by Pinocchio's kinematics a
    # level base with every leg straight down (HFE = KFE = 0, the farthest a foot gets below its hip) has its feet
    # 0.32 m below the base, less than APEX: at T/2 no foot of a level base at the apex touches the ground
    stand = _script("solo12_stand")
    problem = stand.build_jump(apex=stand.APEX)
    row = next(p for p in problem.paths if p.name == "apex")
    body = problem.model.components[0]
    f = ca.Function("row", [body.q, cl.TIME], [row.expr])
    q = np.array(stand._jump_script().standing_pose(body)[0], dtype=float)
    assert float(f(q, 0.425)) == pytest.approx(q[2], abs=1e-15) and row.lower == stand.APEX
    assert float(f(q, 0.125)) == pytest.approx(q[2] + 0.5 * 9.81 * 0.3**2, rel=1e-12)
    model = pin.buildModelFromUrdf(URDF, pin.JointModelFreeFlyer())
    data = model.createData()
    qp = pin.neutral(model)  # level base at the origin, every joint 0: legs straight down
    pin.framesForwardKinematics(model, data, qp)
    depth = -min(data.oMf[model.getFrameId(f"{foot}_FOOT")].translation[2] for foot in FEET)
    assert depth == pytest.approx(0.32, abs=2e-3) and depth < stand.APEX
    with pytest.raises(cl.ProblemError, match="`apex`"):
        stand.build_jump(apex=-0.3)


#: The same jump on 33 intervals (``graded_mesh(..., 3, width=0.1)`` of the 25-interval file) with the soft landing's
#: clearance δ = 1e-8 m (touch-down at √(2aδ) = 1.4e-3 m/s): ``build_jump(landing=100, clearance=1e-8)`` with
#: ``JUMP_SOLVE_POINTS`` from ``resampled_guess()`` of the 25-interval file, ε 1e-4 → 1e-7 (294, 386, 530, 396
#: iterations; ε = 1e-8 then crawled), then ε = 1e-7 again from that iterate with IPOPT's barrier started at 1e-8 and
#: kept monotone (``solo12_stand.FINISH``): solved, 145 iterations, 193 CPU s, J = 1.755955.
JUMP_FILE_33 = os.path.join(ROOT, "tests", "data", "solo12_jump_soft33.npz")


@pytest.mark.slow
def test_soft_jump_on_33_intervals_passes_every_check_of_colloc_verify():
    # the per-interval integrations, the between-points soft landing, the contact law, the whole-horizon
    # re-simulation, Newton's law and the impact times (the feet land at 1.4e-3 m/s, within the scheme's error);
    # a foot pushing in mid-air fails
    from colloc.discretization.interpolant import Interpolant
    from colloc.simulate.contact_checks import check_contact_file

    stand = _script("solo12_stand")
    problem = stand.build_jump(landing=stand.SOFT_LANDING, clearance=1e-8)
    tr = cl.Trajectory.read(JUMP_FILE_33)
    assert tr.metadata["status"] == "solved"
    checks = check_contact_file(problem, tr, 1e-6, 1e-2)[0]
    assert not [c.line() for c in checks if not c.passed]
    names = {c.name for c in checks}
    assert {"contact", "resimulation", "newton", "impact times", "dynamics:solo12.HR_KFE_speed"} <= names
    flight = [k for k in Interpolant(tr).grid.mesh_points if 0.38 < tr.time[k] < 0.46]
    pushed = deepcopy(tr)
    pushed["solo12.FL_FOOT.normal_force"][flight[0] + 1] = 5.0
    assert "contact" in {c.name for c in _file_checks(problem, pushed) if not c.passed}


#: The jump from ``standing_guess()`` (52 intervals, 176 KB; docs/contacts.md, "The jump from the standing guess"):
#: ``build_jump(apex=APEX, landing=100, tangential=True, clearance=1e-8)``, ``JUMP_SOLVE_POINTS`` on a mesh refined from
#: the 17-interval uniform solve (``graded_mesh(..., 3, each_foot=True)``, then ``split_mesh`` where verify failed),
#: each stage warm-started from the last; the last two with ``arrival`` (every foot reaching the ground at rest): ε =
#: 1e-6 with ``arrival={}``, then ε = 5e-7 with ``arrival={"reach": 1e-6}``: solved, 86 iterations, 300 CPU s, J = 2.509653.
JUMP_FILE_STANDING = os.path.join(ROOT, "tests", "data", "solo12_jump_standing52.npz")


@pytest.mark.slow
def test_jump_from_the_standing_guess_passes_every_check_of_colloc_verify():
    # nothing in the guess leaves the ground: the apex row asks for a base 0.34 m high halfway, and the solve found
    # when and which feet lift; every check passes (the per-interval integrations, the contact law, the soft landings
    # between grid points, the re-simulation, Newton's law, the impact times); a foot pushing in mid-air fails
    from colloc.discretization.interpolant import Interpolant
    from colloc.simulate.contact_checks import check_contact_file

    stand = _script("solo12_stand")
    problem = stand.build_jump(apex=stand.APEX, landing=stand.SOFT_LANDING, tangential=True, clearance=1e-8)
    tr = cl.Trajectory.read(JUMP_FILE_STANDING)
    assert tr.metadata["status"] == "solved" and tr.metadata["arrival"]["reach"] == 1e-6
    checks = check_contact_file(problem, tr, 1e-6, 1e-2)[0]
    assert not [c.line() for c in checks if not c.passed]
    names = {c.name for c in checks}
    assert {"contact", "resimulation", "newton", "impact times", "path:apex", "between:soft_landing.FR_FOOT"} <= names
    forces = np.array([tr[f"solo12.{foot}_FOOT.normal_force"] for foot in FEET])
    middle = np.abs(tr.time - 0.425) < 0.02
    assert (forces[:, middle] < 1e-6).all()  # every foot in the air around the apex
    flight = [k for k in Interpolant(tr).grid.mesh_points if 0.3 < tr.time[k] < 0.42]
    pushed = deepcopy(tr)
    pushed["solo12.FL_FOOT.normal_force"][flight[0] + 1] = 5.0
    assert "contact" in {c.name for c in _file_checks(problem, pushed) if not c.passed}
