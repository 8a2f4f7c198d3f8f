"""URDF models against Pinocchio, the independent oracle.

For six robots of example-robot-data, at 20 random states each, colloc's M(q),
inverse dynamics τ(q, v, a) = M a + c and every link frame's pose must equal
Pinocchio's (``crba``, ``rnea``, ``framesForwardKinematics``) to 1e-9.

Conventions matched here: gravity (0, 0, −9.81) in both; Pinocchio orders a
free flyer's coordinates (x, y, z, qx, qy, qz, qw) and colloc (x, y, z, qw,
qx, qy, qz), both with speeds (v, ω) in the base frame; Pinocchio writes a
continuous joint as (cos θ, sin θ) and colloc as θ; joints locked in colloc
(``joints=``) are locked at 0 in Pinocchio by ``buildReducedModel``.
"""
import casadi as ca
import numpy as np
import pytest

import colloc as cl

pin = pytest.importorskip("pinocchio")
pytest.importorskip("urdf_parser_py")
from colloc.model.urdf import example_robot  # noqa: E402

try:
    example_robot("ur_description/urdf/ur5_robot.urdf")
except cl.FileFormatError:
    pytest.skip("example-robot-data is not installed", allow_module_level=True)

TOL = 1e-9
NUM_STATES = 20

ROBOTS = {
    "ur5": ("ur_description/urdf/ur5_robot.urdf", "fixed", None),
    "panda": ("panda_description/urdf/panda.urdf", "fixed", [f"panda_joint{i}" for i in range(1, 8)]),
    "panda_fingers": ("panda_description/urdf/panda.urdf", "fixed",
                      [f"panda_joint{i}" for i in range(1, 8)] + ["panda_finger_joint1", "panda_finger_joint2"]),
    "kinova": ("kinova_description/robots/kinova.urdf", "fixed", None),
    "talos_arm": ("talos_data/robots/talos_left_arm.urdf", "fixed", [f"arm_left_{i}_joint" for i in range(2, 8)]),
    "double_pendulum": ("double_pendulum_description/urdf/double_pendulum.urdf", "fixed", None),
    "solo12": ("solo_description/robots/solo12.urdf", "floating", None),
}


def load(key, **kw):
    rel, base, joints = ROBOTS[key]
    path = example_robot(rel)
    body = cl.Multibody.from_urdf(path, name=key, base=base, joints=joints, **kw)
    model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if base == "floating" else pin.buildModelFromUrdf(path)
    if joints is not None:
        locked = [model.getJointId(n) for n in model.names[1:] if n not in joints]
        model = pin.buildReducedModel(model, locked, pin.neutral(model))
    return body, model


def to_colloc(body, model, qp):
    """Pinocchio's configuration as colloc's coordinates, and colloc's speed order as Pinocchio indices."""
    q, order = [], []
    if body.num_coordinates > len(body.joint_names):  # free flyer first
        q += list(qp[:3]) + [qp[6], qp[3], qp[4], qp[5]]
        order += list(range(6))
    for name in body.joint_names:
        joint = model.joints[model.getJointId(name)]
        q.append(np.arctan2(qp[joint.idx_q + 1], qp[joint.idx_q]) if joint.nq == 2 else qp[joint.idx_q])
        order.append(joint.idx_v)
    return np.array(q), np.array(order)


def states(model, seed):
    rng = np.random.default_rng(seed)
    for _ in range(NUM_STATES):
        qp = pin.randomConfiguration(model, -3.0 * np.ones(model.nq), 3.0 * np.ones(model.nq))
        yield qp, rng.normal(size=model.nv), rng.normal(size=model.nv)


@pytest.mark.parametrize("key", list(ROBOTS))
def test_mass_matrix_inverse_dynamics_and_frames_equal_pinocchio(key):
    body, model = load(key, actuated=[])
    data = model.createData()
    M_fun = ca.Function("M", [body.q], [body.mass_matrix])
    frames = [l for l in body.links if model.existFrame(l)]
    assert len(frames) == len(body.links)
    pose = ca.Function("poses", [body.q], [ca.horzcat(*[ca.horzcat(*body.frame(l)) for l in frames])])
    for k, (qp, vp, ap) in enumerate(states(model, seed=len(key))):
        q, order = to_colloc(body, model, qp)
        M_pin = pin.crba(model, data, qp)
        M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
        assert np.abs(np.array(M_fun(q)) - M_pin[np.ix_(order, order)]).max() <= TOL, (key, k)
        tau = body.inverse_dynamics(q, vp[order], ap[order])
        assert np.abs(tau - pin.rnea(model, data, qp, vp, ap)[order]).max() <= TOL, (key, k)
        pin.framesForwardKinematics(model, data, qp)
        P = np.array(pose(q))  # [p R] per frame, side by side
        for i, link in enumerate(frames):
            ref = data.oMf[model.getFrameId(link)]
            got = P[:, 4 * i:4 * i + 4]
            assert np.abs(got[:, 0] - ref.translation).max() <= TOL, (key, link, k)
            assert np.abs(got[:, 1:] - ref.rotation).max() <= TOL, (key, link, k)


@pytest.mark.parametrize("key", ["ur5", "solo12"])
def test_frame_velocity_equals_pinocchio(key):
    body, model = load(key, actuated=[])
    data = model.createData()
    link = body.links[-1]
    w, v = body.frame_velocity(link)
    f = ca.Function("twist", [body.q, body.v], [w, v])
    for qp, vp, _ in list(states(model, seed=3))[:5]:
        q, order = to_colloc(body, model, qp)
        pin.forwardKinematics(model, data, qp, vp)
        ref = pin.getFrameVelocity(model, data, model.getFrameId(link), pin.LOCAL_WORLD_ALIGNED)
        got_w, got_v = (np.array(x).ravel() for x in f(q, vp[order]))
        assert np.abs(got_w - ref.angular).max() <= TOL and np.abs(got_v - ref.linear).max() <= TOL


def test_free_fall_conserves_momentum():
    """Solo12 thrown with random speeds and no torques: Pinocchio's centroidal momentum of the
    simulated motion keeps its angular part and changes its linear part by m g t only."""
    body, model = load("solo12", actuated=[])
    data = model.createData()
    eq = body.equations()
    x = ca.vertcat(body.q, body.v)
    ode = ca.vertcat(body.qdot, ca.solve(eq.mass_matrix, -eq.bias))
    duration = 0.5
    sim = ca.integrator("fall", "cvodes", {"x": x, "ode": ode}, 0.0, duration, {"abstol": 1e-12, "reltol": 1e-12})
    rng = np.random.default_rng(7)
    q0 = np.r_[0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, rng.uniform(-1, 1, 12)]
    v0 = rng.normal(size=18)
    xf = np.array(sim(x0=np.r_[q0, v0])["xf"]).ravel()

    joints = [model.joints[model.getJointId(n)] for n in body.joint_names]

    def momentum(qc, vc):
        quat = qc[3:7] / np.linalg.norm(qc[3:7])
        qp, vp = np.empty(19), np.empty(18)
        qp[:7] = np.r_[qc[:3], quat[1:], quat[0]]
        qp[[j.idx_q for j in joints]] = qc[7:]
        vp[np.r_[np.arange(6), [j.idx_v for j in joints]]] = vc
        return pin.computeCentroidalMomentum(model, data, qp, vp).copy()

    h0, h1 = momentum(q0, v0), momentum(xf[:19], xf[19:])
    mass = pin.computeTotalMass(model)
    assert abs(np.linalg.norm(xf[3:7]) - 1.0) <= 1e-9  # the kinematics keep the unit norm
    assert np.abs(h1.angular - h0.angular).max() <= 1e-7 * max(1.0, np.abs(h0.angular).max())
    assert np.abs(h1.linear - h0.linear - mass * np.array([0.0, 0.0, -9.81]) * duration).max() <= 1e-7 * mass


def test_limits_become_bounds():
    body = cl.Multibody.from_urdf(example_robot("ur_description/urdf/ur5_robot.urdf"), name="ur5")
    elbow = body.variable(body.coordinates[2])
    assert elbow.name == "ur5.elbow_joint" and elbow.bounds == (-3.14159265359, 3.14159265359)
    assert body.variable(body.speeds[2]).bounds == (-3.15, 3.15)
    controls = [v for v in body.variables if v.kind == "control"]
    assert [c.name for c in controls][:2] == ["ur5.tau_shoulder_pan_joint", "ur5.tau_shoulder_lift_joint"]
    assert controls[0].bounds == (-150.0, 150.0) and controls[5].bounds == (-28.0, 28.0)


def test_floating_base_keeps_the_unit_quaternion_as_an_invariant():
    body, _ = load("solo12")
    assert body.coordinates[3].name() == "solo12.base_qw"
    unit = [k for k in body.constraints if k.name == "solo12.unit_quaternion"][0]
    assert unit.velocity is None and not unit.multipliers


def test_actuated_subset_gets_controls_only_there():
    path = example_robot("double_pendulum_description/urdf/double_pendulum.urdf")
    names = cl.Multibody.from_urdf(path).joint_names
    body = cl.Multibody.from_urdf(path, name="acro", actuated=[names[1]])
    tau = body.generalized_force
    assert [v.name for v in body.variables if v.kind == "control"] == [f"acro.tau_{names[1]}"]
    assert tau[0].is_zero() and not tau[1].is_zero()


ZERO_AXIS = """<robot name="r"><link name="a"/><link name="b"/>
<joint name="hinge" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 0"/>
<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>"""
PLANAR = """<robot name="r"><link name="a"/><link name="b"/>
<joint name="slide" type="planar"><parent link="a"/><child link="b"/></joint></robot>"""


@pytest.mark.parametrize("call, error, match", [
    (lambda p: cl.Multibody.from_urdf(p / "none.urdf"), cl.FileFormatError, r"`.*none\.urdf` does not exist"),
    (lambda p: cl.Multibody.from_urdf(_write(p, "x.urdf", "not xml <")), cl.FileFormatError, r"Cannot read `.*x\.urdf` as a URDF"),
    (lambda p: cl.Multibody.from_urdf(_write(p, "pl.urdf", PLANAR)), cl.ModelError, r"Joint `slide` .* has type `planar`"),
    (lambda p: cl.Multibody.from_urdf(_write(p, "z.urdf", ZERO_AXIS)), cl.ModelError, r"Joint `hinge` has a zero axis"),
    (lambda p: cl.Multibody.from_urdf(example_robot("ur_description/urdf/ur5_robot.urdf"), joints=["elbow_jiont"]),
     cl.ModelError, r"Unknown joint `elbow_jiont` in `joints`.*Did you mean `elbow_joint`"),
    (lambda p: cl.Multibody.from_urdf(example_robot("ur_description/urdf/ur5_robot.urdf"), actuated=["wrist_9_joint"]),
     cl.ModelError, r"Unknown joint `wrist_9_joint` in `actuated`.*Did you mean `wrist_._joint`"),
    (lambda p: cl.Multibody.from_urdf(example_robot("ur_description/urdf/ur5_robot.urdf")).frame("tool1"),
     cl.ModelError, r"Unknown frame `tool1` of robot `robot`.*Did you mean `tool0`"),
    (lambda p: cl.Multibody.from_urdf(example_robot("panda_description/urdf/panda.urdf")),
     cl.ModelError, r"Joint `panda_finger_joint2` .* mimics `panda_finger_joint1`"),
    (lambda p: cl.Multibody.from_urdf(example_robot("ur_description/urdf/ur5_robot.urdf"), base="free"),
     cl.ModelError, r"`base` must be \"fixed\" or \"floating\"; got 'free'"),
    (lambda p: cl.Multibody.from_urdf(example_robot("ur_description/urdf/ur5_robot.urdf"), gravity=(0, -9.81)),
     cl.ModelError, r"`gravity` must be three finite numbers"),
    (lambda p: cl.Multibody.from_urdf(example_robot("ur_description/urdf/ur5_robot.urdf"), gravity=("a", 0, 0)),
     cl.ModelError, r"`gravity` must be three finite numbers"),
    (lambda p: example_robot("nothing/robot.urdf"), cl.FileFormatError, r"`example-robot-data` has no file `nothing/robot\.urdf`"),
])
def test_bad_input_is_one_sentence(tmp_path, call, error, match):
    with pytest.raises(error, match=match):
        call(tmp_path)


def _write(folder, name, text):
    path = folder / name
    path.write_text(text)
    return path


def test_animation_draws_every_link_frame_in_3d(tmp_path):
    from PIL import Image

    from colloc.viz.animation import frame_poses

    path = example_robot("double_pendulum_description/urdf/double_pendulum.urdf")
    body = cl.Multibody.from_urdf(path, name="dp")
    q, v = body.coordinates, body.speeds
    prob = cl.Problem([body], t0=0.0, tf=1.0)
    prob.initial({q[0]: 0.0, q[1]: 0.0, v[0]: 0.0, v[1]: 0.0})
    prob.final({q[0]: 0.5, v[0]: 0.0, v[1]: 0.0})
    prob.minimize(integral=ca.sumsqr(body.generalized_force))
    res = cl.solve(prob, intervals=4)
    out = cl.plot.animate(res.trajectory, prob, tmp_path / "dp.gif", fps=5)
    with Image.open(out) as gif:
        assert gif.n_frames == 6
    times = np.array([0.0, 0.5, 1.0])
    origins, rotations = frame_poses(res.trajectory, body, times)
    p, R = body.frame(body.links[-1])
    ref = ca.Function("pose", [body.q], [p, R])
    state = res.trajectory(0.5)
    got = ref([state[f"dp.{c}"] for c in body.joint_names])
    assert np.allclose(origins[1, -1], np.array(got[0]).ravel(), atol=1e-12)
    assert np.allclose(rotations[1, -1], np.array(got[1]), atol=1e-12)


def test_floating_base_solve_falls_freely():
    """Least ∫|τ|² from a thrown state, nothing to push against: τ = 0 and the centre of mass (by
    Pinocchio) follows the parabola c0 + ċ0 t + ½ g t² — the floating base through the transcription,
    quaternion invariant included."""
    body, model = load("solo12")
    data = model.createData()
    q, v = body.coordinates, body.speeds
    prob = cl.Problem([body], t0=0.0, tf=0.3)
    q0 = np.r_[0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, np.tile([0.1, 0.8, -1.6], 4)]
    v0 = np.r_[0.5, 0.0, 1.0, 0.2, 0.0, 0.5, np.zeros(12)]
    prob.initial({**dict(zip(q, q0)), **dict(zip(v, v0))})
    prob.minimize(integral=ca.sumsqr(body.generalized_force))
    prob.guess(dict(zip(q, q0)))
    res = cl.solve(prob, intervals=6, ipopt={"tol": 1e-10})
    assert res.success and res.objective < 1e-9

    def com(qc, vc):
        qp, vp = np.empty(model.nq), np.empty(model.nv)
        joints = [model.joints[model.getJointId(n)] for n in body.joint_names]
        qp[:7] = np.r_[qc[:3], qc[4:7], qc[3]]
        qp[[j.idx_q for j in joints]] = qc[7:]
        vp[np.r_[np.arange(6), [j.idx_v for j in joints]]] = vc
        pin.centerOfMass(model, data, qp, vp)
        return data.com[0].copy(), data.vcom[0].copy()

    traj = res.trajectory
    final = lambda syms: np.array([traj.final(s) for s in syms])
    c0, cd0 = com(q0, v0)
    c1, _ = com(final(q), final(v))
    T = 0.3
    err = np.abs(c1 - (c0 + cd0 * T + 0.5 * np.array([0.0, 0.0, -9.81]) * T**2)).max()
    assert err <= 1e-7  # measured 5e-9 at 6 Hermite–Simpson intervals
    assert abs(np.linalg.norm(final(q)[3:7]) - 1.0) <= 1e-8
