"""Multibody models from URDF files: the joints become coordinates, the links rigid bodies.

The file is read with ``urdf_parser_py`` (PyPI ``urdfdom-py``, the ROS parser
that ships with Pinocchio; imported only here, when a URDF is loaded).  Links
joined by ``fixed`` joints — and movable joints left out of ``joints=`` — are
merged into one rigid body, as Pinocchio does.  The dynamics come from
:mod:`colloc.model.rigidbody` (recursive Newton–Euler and composite-rigid-body
algorithms in CasADi SX), the choice measured in docs/urdf.md.

A floating base adds the root link's position ``(x, y, z)`` and unit
quaternion ``(qw, qx, qy, qz)`` as coordinates and its body-frame velocity
``(vx, vy, vz, wx, wy, wz)`` as speeds, with ``q̇ = N(q) v``,
``N = diag(R(quat), ½ Q(quat), I)`` and the quaternion's unit norm declared as
a holonomic invariant (kept at position level only, no multiplier).
"""
from __future__ import annotations

import math
import os
import re

import casadi as ca
import numpy as np

from ..errors import FileFormatError, ModelError, did_you_mean
from .multibody import Multibody
from .rigidbody import Body, Tree, quaternion_rate_matrix, quaternion_rotation
from .urdf_checks import check_efforts, check_robot, check_speeds, placeholder_limits

SUPPORTED_JOINTS = ("revolute", "continuous", "prismatic", "fixed")
BASE_COORDINATES = ("base_x", "base_y", "base_z", "base_qw", "base_qx", "base_qy", "base_qz")
BASE_SPEEDS = ("base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz")


class RobotBody(Multibody):
    """A :class:`~colloc.Multibody` built from a URDF (see :func:`from_urdf`).

    Attributes
    ----------
    tree : rigidbody.Tree
        The bodies and joints behind the equations of motion.
    joint_names : list of str
        URDF names of the joints that are coordinates, in coordinate order
        (after the floating base's seven, if any).
    links : list of str
        Every link of the URDF, each a frame (:meth:`frame`).
    skeleton : list of (str, str)
        ``(parent link, child link)`` of every joint, for drawing.
    moving_links : list of str
        The child link of every kept joint (and the root of a floating base):
        one per body; their origins are also declared as named points.
    """

    def equations(self):
        """As :meth:`Multibody.equations`, with the residual from RNEA itself.

        ``M(q) a + c(q, v)`` is built by RNEA with the accelerations ``a``
        (Featherstone 2008 §5.3) instead of multiplying out the CRBA mass
        matrix: the same value with about half the expression graph
        (docs/urdf.md has the measurement).
        """
        if self._equations is not None:
            return self._equations
        eq = super().equations()
        lam_force = ca.mtimes(eq.constraint_jacobian.T, self.multiplier_vector)
        eq = eq._replace(residual=self._inverse_dynamics - eq.generalized_force - lam_force)
        if self._finalized:
            self._equations = eq
        return eq

    def frame(self, link):
        """Pose of a link frame in the world: ``(position (3, 1), rotation (3, 3))`` SX in q.

        ``x_world = R x_link + p``.
        """
        body, R, p = self._frame_spec(link)
        if body < 0:
            return ca.SX(ca.DM(p.reshape(3, 1))), ca.SX(ca.DM(R))
        Rb, pb = self._world[body]
        return pb + ca.mtimes(Rb, ca.DM(p.reshape(3, 1))), ca.mtimes(Rb, ca.DM(R))

    def frame_velocity(self, link):
        """Twist of a link frame: ``(angular velocity ω, velocity of the frame origin)`` in world axes.

        Both (3, 1) SX in q and v (Pinocchio's ``LOCAL_WORLD_ALIGNED``):
        ``ṗ = (∂p/∂q) N v`` and ``[ω]× = Ṙ Rᵀ``.
        """
        p, R = self.frame(link)
        pdot = ca.jtimes(p, self.q, self.qdot)
        W = ca.mtimes(ca.jtimes(ca.vec(R), self.q, self.qdot).reshape((3, 3)), R.T)
        return ca.vertcat(W[2, 1], W[0, 2], W[1, 0]), pdot

    def _frame_spec(self, link):
        if link not in self._frames:
            raise ModelError(f"Unknown frame `{link}` of robot `{self.name}`; frames are the URDF's links.{did_you_mean(link, list(self._frames))}")
        return self._frames[link]


def from_urdf(path, name="robot", base="fixed", joints=None, gravity=(0.0, 0.0, -9.81), actuated=None, efforts=None, check_inertia=True):
    """Build a :class:`RobotBody` from a URDF file.

    Parameters
    ----------
    path : str or path-like
        The ``.urdf`` file (meshes are not read).
    name : str
        Component name; states are ``name.<joint>`` and ``name.<joint>_speed``.
    base : {"fixed", "floating"}
        ``"fixed"``: the root link is the world frame.  ``"floating"``: the
        root link moves freely (position + unit quaternion, see module notes).
    joints : list of str, optional
        Movable joints to keep as coordinates (default all); the others are
        locked at 0 and their links merged into their parents.  A mimic
        joint listed here is an independent coordinate (its coupling is not
        imposed, as in Pinocchio's default); with ``joints=None`` a mimic
        joint is an error.
    gravity : 3 floats
        Gravitational acceleration in world axes [m/s²].
    actuated : list of str, optional
        Joints that get a torque (or force) control ``tau_<joint>`` bounded by
        the URDF's effort limit (default every kept joint; ``[]`` for none).
    efforts : dict, optional
        ``{joint: limit}`` effort limits that replace the file's (``math.inf``
        for none), e.g. for joints whose file gives ``effort="0"``.
    check_inertia : bool
        Refuse a link whose principal moments are negative or break the
        triangle inequality ``A + B ≥ C`` (default: no mass distribution has
        them).  ``False`` loads the file's inertias as they are.

    Returns
    -------
    RobotBody
        With ``M(q)`` (CRBA) and bias ``c(q, v)`` (RNEA with ``a = 0``) set,
        joint position limits as coordinate bounds and velocity limits as
        speed bounds.

    Raises
    ------
    FileFormatError
        If the file is missing or is not a URDF.
    ModelError
        For an unknown joint name (with the closest one), an unsupported joint
        type, a bad ``base`` or ``gravity``; for a file that is not one tree of
        physical bodies (:mod:`colloc.model.urdf_checks`: a link or joint declared
        twice, a joint to a link the file lacks, a kinematic loop, a negative
        mass, a non-physical inertia, a non-finite number, reversed limits, an
        actuated joint with no effort limit).
    """
    if base not in ("fixed", "floating"):
        raise ModelError(f"`base` must be \"fixed\" or \"floating\"; got {base!r}.")
    try:
        g = np.asarray(gravity, dtype=float).ravel() if np.ndim(gravity) == 1 else None
    except (TypeError, ValueError):
        g = None
    if g is None or g.size != 3 or not np.all(np.isfinite(g)):
        raise ModelError(f"`gravity` must be three finite numbers (m/s², world axes); got {gravity!r}.")
    robot = _read(path)
    check_robot(robot, path, check_inertia)
    movable = [j.name for j in robot.joints if j.type != "fixed"]
    for j in robot.joints:
        if j.type not in SUPPORTED_JOINTS:
            if joints is None or j.name in joints:
                raise ModelError(f"Joint `{j.name}` of `{path}` has type `{j.type}`; colloc supports {', '.join(SUPPORTED_JOINTS)} joints (leave it out of `joints=` to lock it).")
        if j.mimic is not None and joints is None:
            raise ModelError(f"Joint `{j.name}` of `{path}` mimics `{j.mimic.joint}`; colloc does not couple joints: list it in `joints=` to make it an independent coordinate (as Pinocchio does) or leave it out to lock it.")
    kept = list(movable) if joints is None else _checked_names(joints, movable, "joints", path)
    acts = list(kept) if actuated is None else _checked_names(actuated, kept, "actuated", path)
    efforts = _efforts(efforts, acts, path)
    placeholders = placeholder_limits(robot, path)
    check_speeds(robot, [j for j in kept if j not in placeholders], path)
    check_efforts(robot, [j for j in acts if j not in placeholders and j not in efforts], path)
    spec = _tree_spec(robot, set(kept), base == "floating")
    return _build(name, spec, robot, kept, acts, g, efforts)


def example_robot(relative):
    """Path of a URDF shipped by the ``example-robot-data`` wheel, e.g. ``"ur_description/urdf/ur5_robot.urdf"``.

    Raises
    ------
    FileFormatError
        If the wheel is not installed (``pip install example-robot-data``,
        or colloc's ``robots`` extra) or does not ship that file.
    """
    from importlib import metadata

    try:
        dist = metadata.distribution("example-robot-data")
    except metadata.PackageNotFoundError:
        raise FileFormatError(f"The robot `{relative}` comes from the `example-robot-data` wheel, which is not installed; `pip install colloc[robots]`.") from None
    path = dist.locate_file(os.path.join("cmeel.prefix", "share", "example-robot-data", "robots", relative))
    if not os.path.isfile(path):
        raise FileFormatError(f"`example-robot-data` has no file `{relative}`.")
    return os.fspath(path)


def _read(path):
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileFormatError(f"URDF file `{path}` does not exist.")
    from urdf_parser_py import xml_reflection
    from urdf_parser_py.urdf import URDF

    quiet = xml_reflection.core.on_error
    xml_reflection.core.on_error = lambda message: None  # extra vendor attributes (e.g. <dynamics K=...>) are harmless
    try:
        with open(path, "rb") as fh:
            robot = URDF.from_xml_string(fh.read())
    except Exception as err:  # the parser raises bare exceptions of several kinds
        raise FileFormatError(f"Cannot read `{path}` as a URDF: {err}.") from None
    finally:
        xml_reflection.core.on_error = quiet
    if not robot.links:
        raise FileFormatError(f"URDF file `{path}` has no links.")
    return robot


def _checked_names(given, valid, what, path):
    if isinstance(given, str):
        raise ModelError(f"`{what}` must be a list of joint names; got the string {given!r}.")
    for n in given:
        if n not in valid:
            raise ModelError(f"Unknown joint `{n}` in `{what}` for `{path}`.{did_you_mean(n, valid)}")
    return [n for n in valid if n in given]  # tree order


def _origin(pose):
    if pose is None:
        return np.eye(3), np.zeros(3)
    xyz = np.asarray(pose.xyz if pose.xyz is not None else [0, 0, 0], dtype=float)
    r, p, y = pose.rpy if pose.rpy is not None else (0.0, 0.0, 0.0)
    # URDF fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    R = np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                  [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                  [-sp, cp * sr, cp * cr]])
    # cos(π/2) = 6e-17 would make every product with R dense in SX; exact zeros keep the graph small
    R[np.abs(R) < 1e-14] = 0.0
    xyz = np.where(np.abs(xyz) < 1e-14, 0.0, xyz)
    return R, xyz


def _tree_spec(robot, kept, floating):
    """Walk the links from the root: bodies (one per kept joint) and each link's place on a body."""
    children = {}
    for j in robot.joints:
        children.setdefault(j.parent, []).append(j)
    child_links = {j.child for j in robot.joints}
    roots = [l.name for l in robot.links if l.name not in child_links]
    if len(roots) != 1:
        raise ModelError(f"URDF `{robot.name}` must have exactly one root link; found {roots}.")
    bodies, frames, skeleton = [], {}, []
    inertials = {l.name: l.inertial for l in robot.links}
    root = roots[0]
    if floating:
        bodies.append(Body("base", "free", -1, np.eye(3), np.zeros(3)))
    frames[root] = (0 if floating else -1, np.eye(3), np.zeros(3))
    stack = [root]
    while stack:
        link = stack.pop()  # depth first, children in file order (Pinocchio's order)
        body, R, p = frames[link]
        parent_joint = next((j for j in robot.joints if j.child == link), None)
        if parent_joint is not None and parent_joint.name in kept:  # a body starts here
            Rj, pj = R, p
            bodies.append(Body(parent_joint.name, "prismatic" if parent_joint.type == "prismatic" else "revolute",
                               body, Rj, pj, _axis(parent_joint)))
            body, R, p = len(bodies) - 1, np.eye(3), np.zeros(3)
            frames[link] = (body, R, p)
        if body >= 0:
            _add_inertia(bodies[body], inertials.get(link), R, p)
        for j in reversed(children.get(link, [])):
            Ro, po = _origin(j.origin)
            # a kept joint's child is placed at the joint frame of its parent body, then starts its own body
            frames[j.child] = (body, R @ Ro, p + R @ po)
            skeleton.append((link, j.child))
            stack.append(j.child)
    return bodies, frames, skeleton


def _axis(joint):
    axis = np.asarray(joint.axis if joint.axis is not None else [1.0, 0.0, 0.0], dtype=float)
    if np.linalg.norm(axis) == 0:
        raise ModelError(f"Joint `{joint.name}` has a zero axis.")
    return axis / np.linalg.norm(axis)


def _add_inertia(body, inertial, R, p):
    """Merge a link's inertia, given in a frame at pose (R, p) on ``body``, into ``body``."""
    if inertial is None or not inertial.mass:
        return
    Ri, pi = _origin(inertial.origin)
    m = float(inertial.mass)
    c = p + R @ pi
    Rc = R @ Ri
    Ic = Rc @ np.asarray(inertial.inertia.to_matrix(), dtype=float) @ Rc.T
    total = body.mass + m
    com = (body.mass * body.com + m * c) / total
    shift = lambda mass, d: mass * (d @ d * np.eye(3) - np.outer(d, d))  # parallel-axis term
    body.inertia = body.inertia + shift(body.mass, body.com - com) + Ic + shift(m, c - com)
    body.mass, body.com = total, com


def _coordinate_name(joint):
    ident = re.sub(r"\W", "_", joint)
    return ident if re.match(r"[A-Za-z_]", ident) else f"j_{ident}"


def _efforts(efforts, acts, path):
    """``efforts`` checked: actuated joint names to limits > 0."""
    if efforts is None:
        return {}
    if not isinstance(efforts, dict):
        raise ModelError(f"`efforts` must be a dict {{joint: limit}}; got {type(efforts).__name__}.")
    out = {}
    for joint, limit in efforts.items():
        if joint not in acts:
            raise ModelError(f"`efforts` names `{joint}`, which is not an actuated joint of `{path}`.{did_you_mean(joint, acts)}")
        try:
            out[joint] = float(limit)
        except (TypeError, ValueError):
            out[joint] = math.nan
        if not out[joint] > 0:
            raise ModelError(f"The effort limit of `{joint}` in `efforts` must be a number > 0 (math.inf for none); got {limit!r}.")
    return out


def _build(name, spec, robot, kept, acts, g, efforts):
    bodies, frames, skeleton = spec
    tree = Tree(bodies)
    floating = bool(bodies) and bodies[0].kind == "free"
    kept = [b.name for b in bodies if b.kind != "free"]  # tree order = coordinate order
    joints = {j.name: j for j in robot.joints}
    coords = [_coordinate_name(j) for j in kept]
    if len(set(coords)) != len(coords):
        raise ModelError(f"Joint names of `{robot.name}` collide once made identifiers: {coords}.")
    cb, sb = {}, {}
    for j, c in zip(kept, coords):
        lim = joints[j].limit
        if lim is not None and joints[j].type != "continuous" and lim.lower is not None and lim.upper is not None and lim.lower < lim.upper:
            cb[c] = (float(lim.lower), float(lim.upper))
        if lim is not None and lim.velocity:
            sb[f"{c}_speed"] = (-float(lim.velocity), float(lim.velocity))
    base_q = list(BASE_COORDINATES) if floating else []
    base_v = list(BASE_SPEEDS) if floating else []
    cb.update({c: (-1.0, 1.0) for c in base_q[3:]})
    kinematics = _floating_kinematics if floating else None
    body = RobotBody(name, coordinates=base_q + coords, speeds=base_v + [f"{c}_speed" for c in coords],
                     kinematics=kinematics, coordinate_bounds=cb, speed_bounds=sb)
    body.tree, body.joint_names, body.skeleton = tree, list(kept), skeleton
    body.links = [l.name for l in robot.links]
    body.moving_links = [joints[j].child for j in kept] + ([robot.get_root()] if floating else [])
    body._frames = frames
    body._world = tree.world_poses(body.q)
    for link in body.moving_links:  # named points: what `colloc solve --animate` checks for before solving
        body.point(_coordinate_name(link), body.frame(link)[0])
    body.mass_matrix = tree.mass_matrix(body.q)
    body.bias_force = tree.inverse_dynamics(body.q, body.v, ca.SX.zeros(tree.nv, 1), g)
    body._inverse_dynamics = tree.inverse_dynamics(body.q, body.v, body.a, g)
    tau = [ca.SX(0)] * tree.nv
    for i, (j, c) in enumerate(zip(kept, coords)):
        if j in acts:
            eff = efforts.get(j, joints[j].limit.effort if joints[j].limit is not None else None)
            bounds = (-eff, eff) if eff and math.isfinite(eff) else None  # 0 or none: a placeholder <limit>, warned about
            tau[tree.v_slices[i + floating].start] = body.control(f"tau_{c}", bounds=bounds)
    body.generalized_force = ca.vertcat(*tau)
    if floating:
        body.holonomic("unit_quaternion", ca.sumsqr(body.q[3:7]) - 1)
    return body


def _floating_kinematics(q):
    """``N(q) = diag(R(quat), ½ Q(quat), I)``: body-frame speeds to coordinate rates."""
    n = q.numel() - 7
    quat = q[3:7]
    return ca.diagcat(quaternion_rotation(quat), 0.5 * quaternion_rate_matrix(quat), ca.SX.eye(n))


Multibody._urdf_builder = staticmethod(from_urdf)

__all__ = ["RobotBody", "from_urdf", "example_robot", "SUPPORTED_JOINTS"]
