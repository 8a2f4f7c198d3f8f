"""colloc.opensim without OpenSim: what is read, what is refused (with the line), the CLI listing."""
from __future__ import annotations

import pathlib

import casadi as ca
import numpy as np
import pytest

import colloc as cl
import colloc.opensim as co
from colloc import cli
from colloc.errors import FileFormatError, ModelError

ROOT = pathlib.Path(__file__).resolve().parents[1]
ZOO = ROOT / "tests" / "data" / "joint_zoo.osim"
RAJAGOPAL = ROOT / "models" / "opensim" / "Rajagopal2015_right_leg_9musc.osim"


def _edited(tmp_path, old, new, source=ZOO):
    text = source.read_text()
    assert old in text
    path = tmp_path / "edited.osim"
    path.write_text(text.replace(old, new, 1))
    return path, text.replace(old, new, 1)


def _line(text, needle):
    return text[:text.index(needle)].count("\n") + 1


#: (text replaced, replacement, the element whose line the message names, message with {line})
FOREIGN = [
    ('<PinJoint name="pin">', '<EllipsoidJoint name="pin">', '<EllipsoidJoint name="pin">',  # and its end tag, below
     r"Joint type `EllipsoidJoint` \(`pin` \(line {line} of `edited.osim`\)\) is not supported"),
    ('<CoordinateActuator name="pin_motor">', '<PointToPointSpring name="m1"></PointToPointSpring><CoordinateActuator name="pin_motor">',
     '<PointToPointSpring', r"Force `PointToPointSpring` `m1` \(line {line} of `edited.osim`\) is not supported"),
    ('<MarkerSet name="markerset">', '<ConstraintSet><objects><WeldConstraint name="w"/></objects></ConstraintSet><MarkerSet name="markerset">',
     '<WeldConstraint', r"Constraint `WeldConstraint` `w` \(line {line} of `edited.osim`\) is not supported"),
    ('<PiecewiseLinearFunction name="function"><x>-1 0 1</x><y>0.02 -0.01 0.04</y></PiecewiseLinearFunction>',
     '<StepFunction name="function"><x>-1 0 1</x></StepFunction>', '<StepFunction',
     r"Function `StepFunction` `function` \(line {line} of `edited.osim`\) is not supported"),
    ('<MarkerSet name="markerset">', '<components><Foo name="bar"/></components><MarkerSet name="markerset">',
     '<Foo', r"Component `Foo` `bar` \(line {line} of `edited.osim`\) is not supported"),
    ('<coordinates>cu_b</coordinates><axis>0.3 0 1</axis>', '<coordinates>pin_z</coordinates><axis>0.3 0 1</axis>',
     '<TransformAxis name="rotation1">', r"TransformAxis `rotation1` of CustomJoint `custom` \(line {line} of `edited.osim`\) uses coordinate `pin_z`"),
    ('<socket_parent_frame>b4_offset</socket_parent_frame>', '<socket_parent_frame>b44_offset</socket_parent_frame>',
     '<PlanarJoint', r"Frame `b44_offset` named by `/jointset/planar` \(line {line} of `edited.osim`\) is not a body or frame of the model. Did you mean"),
]


@pytest.mark.parametrize("old,new,needle,message", FOREIGN, ids=["joint", "force", "constraint", "function", "component", "axis-coordinate", "frame"])
def test_what_colloc_cannot_read_is_one_sentence_with_its_line(tmp_path, old, new, needle, message):
    path, text = _edited(tmp_path, old, new)
    if "Ellipsoid" in new:
        text = text.replace("</PinJoint>", "</EllipsoidJoint>")
        path.write_text(text)
    with pytest.raises(ModelError, match=message.format(line=_line(text, needle))):
        co.load(path)


def test_bad_files_and_arguments(tmp_path):
    with pytest.raises(FileFormatError, match="does not exist"):
        co.load(tmp_path / "none.osim")
    broken = tmp_path / "broken.osim"
    broken.write_text(ZOO.read_text().replace("</BodySet>", "", 1))
    with pytest.raises(FileFormatError, match=r"not well-formed XML: mismatched tag at line \d+"):
        co.load(broken)
    with pytest.raises(ModelError, match="has no force `pin_motr`. Did you mean `pin_motor`"):
        co.load(ZOO, forces=["pin_motr"])
    with pytest.raises(ModelError, match="`name` must be an identifier"):
        co.load(ZOO, name="my model")
    with pytest.raises(ModelError, match="has no body or frame `femur`"):
        co.load(ZOO, forces=False).skeleton.frame_pose("femur")


def test_forces_false_and_a_list_choose_what_is_built():
    assert co.load(ZOO, forces=False).forces == []
    assert co.load(ZOO, forces=["pin_motor"]).forces == [("CoordinateActuator", "pin_motor")]


def test_coordinate_actuator_is_optimal_force_times_a_bounded_control():
    """CoordinateActuator::computeActuation = control × optimal_force on its coordinate's speed row."""
    model = co.load(ZOO)
    body = model.body
    u = body.variable(next(v for v in body.variables if v.kind == "control").symbol)
    assert u.name == "model.pin_motor" and tuple(u.bounds) == (-2.0, 3.0)
    tau = ca.Function("tau", [u.symbol], [body.generalized_force])(0.25)
    expect = np.zeros(len(model.skeleton.speeds))
    expect[model.skeleton.speeds.index("pin_z_speed")] = 40 * 0.25
    np.testing.assert_array_equal(np.array(tau).ravel(), expect)


def test_ranges_defaults_locks_and_markers():
    model = co.load(RAJAGOPAL, forces=False)
    body = model.body
    tilt = body.variable(model.skeleton.coordinate("pelvis_tilt"))
    assert tilt.name == "model.pelvis_tilt" and tuple(tilt.bounds) == (-1.5707963300000001, 1.5707963300000001)
    assert body.variable(model.skeleton.speed("pelvis_tilt")).name == "model.pelvis_tilt_speed"
    locked = [name for kind, name in model.constraints if kind == "locked"]
    assert locked == ["subtalar_angle_r", "mtp_angle_r"]
    assert ("CoordinateCouplerConstraint", "patellofemoral_knee_angle_r_con") in model.constraints
    assert len(model.markers) == 17
    frame, loc = model.markers["R.ASIS"]
    R, p = model.skeleton.frame_pose(frame)
    f = ca.Function("m", [body.q], [model.marker_position("R.ASIS"), p + ca.mtimes(R, ca.DM(loc))])
    a, b = f(np.linspace(0.1, 0.5, body.q.numel()))
    np.testing.assert_allclose(np.array(a), np.array(b))


def test_default_values_are_the_files():
    model = co.load(RAJAGOPAL, forces=False)
    defaults = {str(k): v for k, v in model.default_values().items()}
    assert defaults["model.pelvis_ty"] == 0.93000000000000005 and defaults["model.pelvis_tilt_speed"] == 0.0
    zoo = {str(k): v for k, v in co.load(ZOO, forces=False).default_values().items()}
    assert zoo["model.ball_qw"] == 1.0 and zoo["model.free_qz"] == 0.0 and zoo["model.free_tx"] == 0.0


def test_a_loaded_model_builds_a_problem():
    """The components go into a Problem as they are: the multibody's rows, the quaternion invariants."""
    model = co.load(ZOO)
    problem = cl.Problem(model.components, tf=0.5)
    names = problem.model.names() if callable(getattr(problem.model, "names", None)) else None
    assert names is None or "model.free_qw" in str(names)
    assert {k.name for k in model.body.constraints} >= {"model.free_unit_quaternion", "model.ball_unit_quaternion"}


def test_colloc_info_lists_what_was_read(capsys, tmp_path):
    assert cli.main(["info", str(ZOO)]) == 0
    out = capsys.readouterr().out
    assert "joints: FreeJoint 1, BallJoint 1, UniversalJoint 1, GimbalJoint 1, PlanarJoint 1, SliderJoint 1, PinJoint 1, WeldJoint 1, CustomJoint 1" in out
    assert "forces: CoordinateActuator 1" in out and "controls (1): model.pin_motor" in out and "markers: 1" in out
    path, text = _edited(tmp_path, '<CoordinateActuator name="pin_motor">', '<Foo2Force name="f"/><CoordinateActuator name="pin_motor">')
    assert cli.main(["info", str(path)]) == 2
    assert f"Force `Foo2Force` `f` (line {_line(text, '<Foo2Force')} of `edited.osim`) is not supported" in capsys.readouterr().err


def test_colloc_info_lists_replaced_muscles_under_their_replacement_and_every_control(capsys):
    """leg6dof9musc's Thelen muscles and gait10dof18musc's Millard muscles are built as DeGroote–Fregly
    muscles (Moco's replacement) and listed so; every muscle's excitation and every actuator is a control."""
    cases = [("leg6dof9musc.osim", "forces: DeGrooteFregly2016Muscle 9 (replacing Thelen2003Muscle 9)", 9),
             ("gait10dof18musc_subject01.osim", "forces: DeGrooteFregly2016Muscle 18 (replacing Millard2012EquilibriumMuscle 18)", 18),
             ("2D_gait.osim", "forces: SmoothSphereHalfSpaceForce 4, CoordinateActuator 1, DeGrooteFregly2016Muscle 18\n", 19)]
    for stem, forces, num_controls in cases:
        assert cli.main(["info", str(ROOT / "models" / "opensim" / stem)]) == 0
        out = capsys.readouterr().out
        assert forces in out, out
        model = co.load(ROOT / "models" / "opensim" / stem)
        controls = [v.name for c in model.components for v in c.variables if v.kind == "control"]
        assert len(controls) == num_controls
        assert f"controls ({num_controls}): {', '.join(controls)}\n" in out
    assert "hamstrings_r.excitation" in controls and "model.lumbarAct" in controls


def test_animate_draws_the_bodies_upright(tmp_path):
    """OpenSim's y is up: the drawn frames are turned so that the pelvis height is the drawing's z."""
    from PIL import Image

    from colloc.viz.animation import _upright, frame_poses
    from colloc.viz.plot import animate

    model = co.load(ROOT / "models" / "opensim" / "2D_gait.osim", forces=False)
    t = np.linspace(0.0, 0.4, 5)
    cols = {v.name: 0.2 * np.sin(3 * t + i) for i, v in enumerate(model.body.variables)}
    cols["model.pelvis_ty"] = 0.9 + 0.05 * t
    traj = cl.Trajectory(t, cols, {v.name: v.kind for v in model.body.variables}, metadata={"scheme": "trapezoidal"})
    origins, _ = _upright(model.body, *frame_poses(traj, model.body, t))
    pelvis = model.body.links.index("/bodyset/pelvis")
    np.testing.assert_allclose(origins[:, pelvis, 2], cols["model.pelvis_ty"], atol=1e-12)
    path = animate(traj, model.components, tmp_path / "gait.gif", fps=10)
    assert Image.open(path).n_frames == 5


def test_a_model_read_from_a_file_solves_to_the_hand_written_models_optimum():
    """problems/double_pendulum_swing.py's swing-up, its model read from tests/data/double_pendulum.osim
    (point masses, pins, coordinate actuators of optimal force 100): the same optimum, 162.15184481
    [the problem's REFERENCE, its converged Hermite–Simpson value], within that problem's 1e-5."""
    import math

    model = co.load(ROOT / "tests" / "data" / "double_pendulum.osim", name="dp")
    sk, body = model.skeleton, model.body
    q1, q2, w1, w2 = sk.coordinate("q1"), sk.coordinate("q2"), sk.speed("q1"), sk.speed("q2")
    u1, u2 = (v.symbol for v in body.variables if v.kind == "control")
    prob = cl.Problem(model.components, t0=0.0, tf=2.0, name="osim_double_pendulum")
    prob.initial({q1: 0.0, q2: 0.0, w1: 0.0, w2: 0.0})
    prob.final({q1: math.pi, q2: 0.0, w1: 0.0, w2: 0.0})
    prob.minimize(integral=(100 * u1) ** 2 + (100 * u2) ** 2)
    prob.guess({q1: (0.0, math.pi), q2: 0.0, w1: math.pi / 2.0, w2: 0.0, u1: 0.0, u2: 0.0})
    result = cl.solve(prob, scheme="hermite-simpson", intervals=40)
    assert result.success
    assert abs(result.objective - 162.15184481) <= 1e-5 * 162.15184481


def test_point_velocity_is_the_rate_of_its_position_along_the_kinematics():
    """A point on the last body of the joint zoo (behind a free joint's quaternion): its velocity equals the
    central difference of its position along q̇ = N(q) v, to the difference's O(h²)."""
    model = co.load(ZOO, forces=False)
    sk = model.skeleton
    r = [0.1, -0.2, 0.3]
    f = ca.Function("f", [sk.q, sk.v], [sk.point_position("/bodyset/b9", r), sk.point_velocity("b9", r), sk.qdot])
    rng = np.random.default_rng(4)
    q = rng.uniform(-0.5, 0.5, sk.q.numel())
    for joint in ("free", "ball"):
        s = [sk.coordinates.index(f"{joint}_q{k}") for k in "wxyz"]
        q[s] = q[s] / np.linalg.norm(q[s])
    v = rng.normal(size=sk.v.numel())
    _, vel, qdot = (np.array(x).ravel() for x in f(q, v))
    h = 1e-6
    fd = (np.array(f(q + h * qdot, v)[0]) - np.array(f(q - h * qdot, v)[0])).ravel() / (2 * h)
    np.testing.assert_allclose(vel, fd, atol=1e-8)


@pytest.mark.parametrize("stem, planar, num_muscles", [("2D_gait", True, 18), ("gait10dof18musc_subject01", True, 18),
                                                       ("leg6dof9musc", False, 9)])
def test_animation_draws_every_muscle_path_in_2d_for_a_planar_model(stem, planar, num_muscles):
    """2D_gait's and gait10dof18musc's joints all turn about z and slide in x–y (planar models): their scene
    is a 2-D axes in x–y; leg6dof9musc's ankle turns about an oblique axis, so it is drawn in 3-D.  Either
    way one line per muscle, through its path points in ground."""
    from colloc.viz.animation import RobotScene, muscle_paths

    model = co.load(ROOT / "models" / "opensim" / f"{stem}.osim")
    t = np.linspace(0.0, 0.4, 4)
    kinds = {v.name: v.kind for c in model.components for v in c.variables if v.kind in ("state", "control")}
    cols = {n: 0.3 * np.sin(3 * t + i) for i, n in enumerate(kinds)}
    traj = cl.Trajectory(t, cols, kinds, metadata={"scheme": "trapezoidal"})
    paths = muscle_paths(model.components)
    muscles = [c for c in model.components if hasattr(c, "path_points")]
    assert len(paths) == len(muscles) == num_muscles
    scene = RobotScene(traj, [model.body], t, muscles=paths)
    assert scene.planar is planar and scene.ax.name == ("rectilinear" if planar else "3d")
    scene.show(2)
    lines = {line.get_label(): line for line in scene.ax.get_lines()}
    assert set(scene.muscle_lines) == set(paths) and all(lines[m] is scene.muscle_lines[m] for m in paths)
    muscle = muscles[0]
    where = ca.Function("p", [model.body.q], [ca.horzcat(*[p for _, p in muscle.path_points])])
    q = ca.DM([cols[f"model.{c}"][2] for c in model.skeleton.coordinates])
    expected = np.asarray(where(q)).T
    drawn = scene.muscle_lines[muscle.name]
    got = np.column_stack(drawn.get_data() if planar else drawn.get_data_3d())
    if planar:
        np.testing.assert_allclose(got, expected[:, :2], atol=1e-12)
    else:
        np.testing.assert_allclose(got, expected @ model.body.display_rotation.T, atol=1e-12)
