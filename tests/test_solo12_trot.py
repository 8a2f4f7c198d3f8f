"""Solo12 trotting one periodic stride (problems/solo12_trot.py), checked with Pinocchio, the independent oracle.

Both forms, on small meshes: the two-phase trot (FL+HR then FR+HL held by holonomic constraints, the
script's graded mesh) and the contact-implicit stride (4 intervals, no schedule given; warm-started from the
two-phase result to keep this file's cost down, the standing-guess solve being minutes long).  For each:

* over the periodic stride the feet's normal forces average to the weight m g (Pinocchio's
  ``computeTotalMass``): the robot's vertical momentum is the same at both ends, so ∫Σλ_z dt = m g T;
* every foot force lies in its cone (normal part ≥ 0, |f_x| + |f_y| ≤ μ λ_z, the 4-facet cone);
* no foot below the ground at any grid point (Pinocchio's frame placements); the two-phase stance feet
  on their holds at the mesh points;
* periodicity: Pinocchio's feet and centre of mass at T are those at 0 moved forward by the stride;
* ``colloc verify``'s checks of the two-phase file pass, and fail once a swing knee is moved at one mesh point
  (the schedule-free files from the standing guess, 4, 8 and 16 intervals, fail its per-interval check: a loaded
  foot slides with one force per interval; docs/contacts.md; their solves take minutes and are not run here).

Without a solve: ``friction_power`` and ``loaded_slip`` (the feet's friction work rate and loaded slip, cost terms
of the schedule-free stride)
against Pinocchio's inverse dynamics and feet Jacobians at random states, and ``graded_mesh`` against a gait given.

Conventions: Pinocchio orders the free flyer (x, y, z, qx, qy, qz, qw), colloc (x, y, z, qw, qx, qy, qz);
joints are matched by name.
"""
import importlib.util
import os
import re
import warnings

import numpy as np
import pytest

import colloc as cl

from solo12_setup import solo12  # noqa: E402

pin, URDF = solo12()

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
G = 9.81
MU = 0.8
STRIDE, DURATION = 0.1, 0.4
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
NLP_TOL = 1e-8
#: Mesh of the schedule-free solve (the script's 8 take minutes; the checks below hold on any mesh).
FREE_INTERVALS = 4


def _script():
    spec = importlib.util.spec_from_file_location("solo12_trot", os.path.join(ROOT, "problems", "solo12_trot.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pinocchio_q(model, traj, prefix="solo12."):
    """Pinocchio's q at every row of a trajectory."""
    q = np.zeros((traj.time.size, model.nq))
    for i, c in enumerate(("x", "y", "z", "qx", "qy", "qz", "qw")):
        q[:, i] = traj[prefix + "base_" + c]
    for name in model.names[2:]:  # after the universe and the free flyer
        q[:, model.joints[model.getJointId(name)].idx_q] = traj[prefix + name]
    return q


def _feet_and_com(model, q):
    """Feet positions (rows, 4, 3) and centre of mass (rows, 3) by Pinocchio."""
    data = model.createData()
    feet, com = [], []
    for qk in q:
        pin.framesForwardKinematics(model, data, qk)
        feet.append([data.oMf[model.getFrameId(f)].translation.copy() for f in FEET])
        com.append(pin.centerOfMass(model, data, qk).copy())
    return np.array(feet), np.array(com)


@pytest.fixture(scope="module")
def model():
    return pin.buildModelFromUrdf(URDF, pin.JointModelFreeFlyer())


@pytest.fixture(scope="module")
def two_phase(tmp_path_factory):
    module = _script()
    problem = module.build_two_phase(stride=STRIDE, duration=DURATION)
    res = cl.solve(problem, ipopt={"tol": NLP_TOL}, **module.SOLVE_TWO_PHASE)
    assert res.success, res.message
    path = tmp_path_factory.mktemp("trot") / "two_phase.csv"
    res.trajectory.write(path)
    return module, problem, res, cl.Trajectory.read(path)


@pytest.fixture(scope="module")
def free(two_phase, tmp_path_factory):
    # warm-started from the imposed trot (`warm_start`), the homotopy from ε = 1e-3: 47 CPU s at 4 intervals;
    # from the script's standing guess the same mesh took 101 CPU s (8 intervals: 415), beyond this file's budget
    module, _, two, _ = two_phase
    problem = module.build(stride=STRIDE, duration=DURATION)
    options = dict(module.SOLVE, intervals=FREE_INTERVALS, relaxation=1e-3)
    with warnings.catch_warnings():  # the two phases joined name no one scheme: the guess is linear between rows
        warnings.filterwarnings("ignore", message="The trajectory names no scheme", category=UserWarning)
        res = cl.solve(problem, guess=module.warm_start(two), ipopt={"tol": NLP_TOL}, **options)
    assert res.success, res.message
    path = tmp_path_factory.mktemp("trot") / "free.csv"
    res.trajectory.write(path)
    return module, problem, res, cl.Trajectory.read(path)


def _periodic(model, traj):
    feet, com = _feet_and_com(model, _pinocchio_q(model, traj)[[0, -1]])
    shift = np.array([STRIDE, 0.0, 0.0])
    assert np.abs(feet[1] - feet[0] - shift).max() <= 1e-6
    assert np.abs(com[1] - com[0] - shift).max() <= 1e-6


@pytest.mark.slow
def test_two_phase_trot_carries_the_weight_inside_the_cones(two_phase, model):
    module, problem, res, traj = two_phase
    weight = pin.computeTotalMass(model) * G
    phases = dict(zip([p.name for p in problem.phases], res.phases))
    impulse = 0.0
    for (name, tr), pair, in zip(phases.items(), module.PAIRS):
        lam = np.stack([np.column_stack([tr[f"solo12.{f}.lambda_{i}"] for i in range(3)]) for f in pair])
        t = tr.time
        # Simpson's rule on each interval (mesh point, midpoint, mesh point): the scheme's own quadrature
        total = lam[..., 2].sum(axis=0)
        impulse += _simpson(t, total)
        normal, tangential = lam[..., 2], np.abs(lam[..., 0]) + np.abs(lam[..., 1])
        assert normal.min() >= -NLP_TOL
        assert (tangential - MU * normal).max() <= 1e-6
        q = _pinocchio_q(model, tr)
        feet, _ = _feet_and_com(model, q)
        held = [FEET.index(f) for f in pair]
        swing = [k for k in range(4) if k not in held]
        mesh = np.arange(0, t.size, 2)  # Hermite–Simpson: mesh points are every other grid point
        assert np.abs(feet[mesh][:, held] - feet[0][held]).max() <= 1e-7  # the stance feet stay on their holds
        assert np.abs(feet[:, held, 2]).max() <= 1e-4  # and on the ground between mesh points
        assert feet[:, swing, 2].min() >= -1e-7
    # the vertical momentum is periodic: ∫Σλ_z dt = m g T
    assert impulse / DURATION == pytest.approx(weight, rel=1e-3)
    _periodic(model, traj)


@pytest.mark.slow
def test_two_phase_trot_verifies_and_a_tampered_trot_does_not(two_phase):
    # a swing knee moved by 0.02 rad at one interior mesh point of the first phase: the interval that ends there
    # does not reach it (the file's own intervals end within 1.5e-2 of the simulation, docs/contacts.md)
    from copy import deepcopy

    from colloc.simulate.multiphase_checks import verify_file

    module, problem, res, traj = two_phase
    ok, report = verify_file(problem, traj)
    assert ok, report
    moved = deepcopy(traj)
    first = np.flatnonzero(traj["phase"] == 0)
    moved["solo12.FR_KFE"][first[8]] += 0.02  # grid point 8: the end of the fourth Hermite–Simpson interval
    ok, report = verify_file(problem, moved)
    assert not ok
    assert re.search(r"FAIL\s+FL_HR/dynamics:solo12\.FR_KFE\s", report), report


def test_friction_power_is_the_feet_friction_work_rate_by_pinocchio(model):
    # The cost terms the schedule-free stride can weigh: Σ_k |f_t,k · v_k| and Σ_k (λ_k |v_t,k|)² with each foot's
    # force implied by its own leg's equations of motion.  Pinocchio recomputes them from scratch at random states:
    # M a + c by ``rnea``, the feet's world-axis Jacobians, f_k = (J_k,legᵀ)⁻¹ (rnea − τ)_leg, the tangential part
    # along the ground's x, y, the normal one along z.
    import casadi as ca

    module = _script()
    body = module._script("solo12_stand").robot(MU)
    tau = [u.symbol for u in body.variables if u.kind == "control"]
    power = ca.Function("power", [body.q, body.v, body.a, ca.vertcat(*tau)],
                        [module.friction_power(body, tau, smoothing=0.0), module.loaded_slip(body, tau)])
    q0, _ = module._script("solo12_jump").standing_pose(body)
    data = model.createData()
    speeds = [s.name() for s in body.speeds]
    joint_v = [model.joints[model.getJointId(n)].idx_v for n in model.names[2:]]
    order = [speeds.index(f"solo12.{n}_speed") for n in model.names[2:]]
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = np.array(q0, float) + np.r_[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, rng.normal(0.0, 0.2, 12)]
        rot = rng.normal(0.0, 0.1, 3)
        q[3:7] = np.r_[1.0, 0.5 * rot] / np.linalg.norm(np.r_[1.0, 0.5 * rot])
        v, a, t = rng.normal(0.0, 1.0, body.num_speeds), rng.normal(0.0, 5.0, body.num_speeds), rng.normal(0.0, 1.0, 12)
        qp = np.zeros(model.nq)
        qp[:3], qp[3:6], qp[6] = q[:3], q[4:7], q[3]
        names = [c.name().split(".", 1)[1] for c in body.coordinates]
        for name in model.names[2:]:
            qp[model.joints[model.getJointId(name)].idx_q] = q[names.index(name)]
        vp, ap, tp = np.zeros(model.nv), np.zeros(model.nv), np.zeros(model.nv)
        vp[:6], ap[:6] = v[:6], a[:6]
        vp[joint_v], ap[joint_v], tp[joint_v] = v[order], a[order], np.r_[np.zeros(6), t][order]
        load = pin.rnea(model, data, qp, vp, ap) - tp
        pin.computeJointJacobians(model, data, qp)
        pin.framesForwardKinematics(model, data, qp)
        expected = slip = 0.0
        for foot in FEET:
            J = pin.getFrameJacobian(model, data, model.getFrameId(foot), pin.LOCAL_WORLD_ALIGNED)[:3]
            leg = [model.joints[model.getJointId(f"{foot[:2]}_{j}")].idx_v for j in ("HAA", "HFE", "KFE")]
            f = np.linalg.solve(J[:, leg].T, load[leg])
            expected += abs(f[:2] @ (J @ vp)[:2])
            slip += f[2] ** 2 * np.sum((J @ vp)[:2] ** 2)
        got = [float(x) for x in power(q, v, a, t)]
        assert got == pytest.approx([expected, slip], rel=1e-9)


def test_graded_mesh_refines_towards_the_feet_loading_and_unloading():
    # FR+HL loaded on [0, 0.2], FL+HR on [0.2, 0.4] (forces constant per interval): the mesh is the
    # script's PHASE_MESH stretched over each half, whatever the mesh the gait was read from
    module = _script()
    t = np.linspace(0.0, DURATION, 17)
    first = t < 0.2 - 1e-9  # the file holds at a mesh point the force of the interval it starts
    loads = {"FL_FOOT": ~first, "FR_FOOT": first, "HL_FOOT": first, "HR_FOOT": ~first}
    columns = {f"solo12.{f}.normal_force": np.where(on, 12.0, 0.0) for f, on in loads.items()}
    traj = cl.Trajectory(t, columns, kinds={n: "multiplier" for n in columns})
    half = 0.5 * np.array(module.PHASE_MESH)
    assert np.allclose(module.graded_mesh(traj), np.r_[half, 0.5 + half[1:]], atol=1e-12)


def _simpson(t, y):
    """∫y dt by Simpson's rule on each Hermite–Simpson interval (mesh point, midpoint, mesh point)."""
    return sum((t[k + 2] - t[k]) / 6 * (y[k] + 4 * y[k + 1] + y[k + 2]) for k in range(0, t.size - 2, 2))


@pytest.mark.slow
def test_schedule_free_stride_carries_the_weight_inside_the_cones(free, model):
    module, problem, res, traj = free
    weight = pin.computeTotalMass(model) * G
    lam = np.array([traj[f"solo12.{f}.normal_force"] for f in FEET])
    f1 = np.array([traj[f"solo12.{f}.friction_force_1"] for f in FEET])
    f2 = np.array([traj[f"solo12.{f}.friction_force_2"] for f in FEET])
    # the file holds each interval's force from its start to its midpoint, and the next interval's at the mesh
    # point that ends it, as the defects use them: Simpson's rule on those columns is the impulse the discrete
    # dynamics applied (measured at 8 intervals: 3.2e-4 off m g T, the momentum being nonlinear in q, v; the
    # plain mean of the interval forces was 1.5 % off)
    assert _simpson(traj.time, lam.sum(axis=0)) / DURATION == pytest.approx(weight, rel=2e-3)
    assert lam.min() >= -NLP_TOL
    assert (np.abs(f1) + np.abs(f2) - MU * lam).max() <= 1e-6  # the 4-facet cone: tangents along x and y
    feet, _ = _feet_and_com(model, _pinocchio_q(model, traj))
    assert feet[..., 2].min() >= -1e-7
    _periodic(model, traj)


def test_split_mesh_halves_only_the_long_intervals():
    # the 18-interval graded mesh of a trot switching pairs at T/2: its six middle intervals (0.08-0.09 of T) are the
    # only ones longer than SPLIT_LONGEST = 0.075, and each becomes two equal halves
    module = _script()
    half = 0.5 * np.array(module.PHASE_MESH)
    mesh = np.r_[half, 0.5 + half[1:]]
    split = np.array(module.split_mesh(tuple(mesh)))
    assert split.size == mesh.size + 6
    assert set(np.round(mesh, 12)) <= set(np.round(split, 12))
    assert np.diff(split).max() <= module.SPLIT_LONGEST
    long = np.flatnonzero(np.diff(mesh) > module.SPLIT_LONGEST)
    assert np.allclose(sorted(set(np.round(split, 12)) - set(np.round(mesh, 12))), 0.5 * (mesh[long] + mesh[long + 1]))


def test_split_mesh_cuts_each_long_interval_into_the_fewest_equal_pieces():
    # FINE_LONGEST = 0.05 of T: the 18 graded intervals (0.02 … 0.09 of T) become 28, none longer, each cut into
    # ⌈length / 0.05⌉ equal pieces; the intervals already short enough stay whole
    module = _script()
    half = 0.5 * np.array(module.PHASE_MESH)
    mesh = np.r_[half, 0.5 + half[1:]]
    split = np.array(module.split_mesh(tuple(mesh), module.FINE_LONGEST))
    assert split.size - 1 == int(np.ceil(np.diff(mesh) / module.FINE_LONGEST - 1e-9).sum()) == 28
    assert set(np.round(mesh, 12)) <= set(np.round(split, 12)) and np.diff(split).max() <= module.FINE_LONGEST
    for a, b in zip(mesh[:-1], mesh[1:]):
        inside = split[(split >= a - 1e-12) & (split <= b + 1e-12)]
        assert np.allclose(np.diff(inside), (b - a) / (inside.size - 1))


def test_touchdown_mesh_halves_the_long_intervals_just_before_each_touch_down():
    # FR+HL loaded from t = 0 (a touch-down at the start of the periodic stride: preceded by its end) and FL+HR from
    # T/2: of FINE's 28 intervals, those reaching into the TOUCHDOWN_WINDOW before 0.5 or 1.0 and longer than
    # TOUCHDOWN_LONGEST are halved (one before each: 0.44–0.48 and 0.94–0.98 of T, 16 ms), the others stay whole
    module = _script()
    half = 0.5 * np.array(module.PHASE_MESH)
    mesh = np.array(module.split_mesh(tuple(np.r_[half, 0.5 + half[1:]]), module.FINE_LONGEST))
    t = DURATION * mesh
    first = np.where(mesh < 0.5, 10.0, 0.0)
    columns = {f"solo12.{f}.normal_force": first if f in ("FR_FOOT", "HL_FOOT") else 10.0 - first for f in FEET}
    refined = np.array(module.touchdown_mesh(cl.Trajectory(t, columns), tuple(mesh)))
    added = sorted(set(np.round(refined, 12)) - set(np.round(mesh, 12)))
    assert refined.size == mesh.size + 2 and set(np.round(mesh, 12)) <= set(np.round(refined, 12))
    assert np.allclose(added, [0.46, 0.96])
    for a, b in zip(mesh[:-1], mesh[1:]):  # every halved interval is long and ends within the window before one
        if np.any((refined > a + 1e-12) & (refined < b - 1e-12)):
            assert b - a > module.TOUCHDOWN_LONGEST and any(d - module.TOUCHDOWN_WINDOW < b <= d for d in (0.5, 1.0))
