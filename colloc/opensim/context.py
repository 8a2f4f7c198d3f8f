"""What the force elements of an ``.osim`` file need from its skeleton (a narrow interface, so that
muscles, paths, contacts and springs never depend on how the skeleton is built)."""
from __future__ import annotations

from typing import Callable, NamedTuple

import casadi as ca


class ForceContext(NamedTuple):
    """The skeleton as the force elements see it.

    Attributes
    ----------
    q, v, qdot : casadi.SX, shape (nq, 1), (nv, 1), (nq, 1)
        Coordinates, speeds and q̇ = N(q) v.
    frame_pose : callable
        ``frame_pose(frame) -> (R, p)``, SX (3, 3) and (3, 1) in ground, for a body name or a component
        path such as ``/bodyset/femur_r`` (``/ground`` included).
    coordinate : callable
        ``coordinate(name) -> (q_i, qdot_i, lower, upper)``: the SX coordinate, its rate and its range.
    speed_index : callable
        ``speed_index(name) -> int``: the coordinate's row in v, where a mobility force on it acts.
    motion_type : callable
        ``motion_type(name) -> str``: ``"rotational"``, ``"translational"`` or ``"coupled"`` (OpenSim's
        ``Coordinate::getMotionType``; a ``CoordinateLimitForce`` reads its limits in degrees for a
        rotational coordinate).
    function : callable
        ``function(element) -> f``: an OpenSim ``Function`` element as ``f(x: SX) -> SX``.
    common_body, relative_pose : callable
        ``common_body(frames) -> base``: the innermost body every frame hangs from; ``relative_pose(frame, base)
        -> (R, p)``: the frame in that body's frame, SX in the coordinates of the joints between them only
        (distances, such as a path's length, are the same in any frame).
    """

    q: ca.SX
    v: ca.SX
    qdot: ca.SX
    frame_pose: Callable
    coordinate: Callable
    speed_index: Callable
    motion_type: Callable
    function: Callable
    common_body: Callable = None
    relative_pose: Callable = None

    @property
    def num_speeds(self) -> int:
        return self.v.numel()

    def mobility_force(self, name, value) -> ca.SX:
        """An (nv, 1) generalized force ``value`` on coordinate ``name``'s speed."""
        tau = ca.SX.zeros(self.num_speeds, 1)
        tau[self.speed_index(name)] = value
        return tau

    def point_velocity(self, frame, point):
        """Velocity in ground of the material point of ``frame``'s body now at ground position ``point``.

        ``J(q; s) q̇`` with J = ∂(p_F + R_F s)/∂q for a body-fixed station s, then s = R_Fᵀ (point − p_F):
        ``point``'s own dependence on q is not differentiated, as Simbody's ``findStationVelocityInGround``
        of ``findStationAtGroundPoint`` does.  (The same as ṗ_F + ω × (point − p_F) with ω̂ = Ṙ Rᵀ, at
        40 % of its SX size and of its Hessian's.)
        """
        R, p = self.frame_pose(frame)
        if not ca.depends_on(ca.vertcat(ca.vec(R), p), self.q):
            return ca.SX.zeros(3, 1)
        station = ca.SX.sym("station", 3)
        jacobian = ca.jacobian(p + ca.mtimes(R, station), self.q)
        jacobian = ca.substitute(jacobian, station, ca.mtimes(R.T, point - p))
        return ca.mtimes(jacobian, self.qdot)


#: Joints whose coordinates are all rotations; SliderJoint's is a translation.
ROTATIONAL_JOINTS = ("PinJoint", "UniversalJoint", "BallJoint", "GimbalJoint", "EllipsoidJoint")
AXES = ("rotation1", "rotation2", "rotation3", "translation1", "translation2", "translation3")


def motion_type(joint_kind, joint_element, index, name):
    """OpenSim's ``Coordinate::getMotionType`` for coordinate ``name``, the ``index``-th of its joint.

    For a ``CustomJoint`` as ``CustomJoint::constructCoordinates``: an axis that uses the coordinate
    through a ``LinearFunction`` of slope ±1 makes it rotational (rotation axes) or translational (later
    axes win); any other function makes it coupled unless an axis already decided.
    """
    if joint_kind in ROTATIONAL_JOINTS:
        return "rotational"
    if joint_kind == "SliderJoint":
        return "translational"
    if joint_kind == "PlanarJoint":
        return "rotational" if index == 0 else "translational"
    if joint_kind == "FreeJoint":
        return "rotational" if index < 3 else "translational"
    kind = "undefined"
    for axis in joint_element.iter("TransformAxis"):
        if axis.get("name") not in AXES or name not in (axis.findtext("coordinates") or "").split():
            continue
        holder = axis.find("function")
        function = holder[0] if holder is not None and len(holder) else next(
            (c for c in axis if c.tag not in ("coordinates", "axis", "function")), None)
        if function is None:
            continue
        slope = (function.findtext("coefficients") or "").split()
        if function.tag == "LinearFunction" and slope and abs(float(slope[0])) == 1.0:
            kind = "rotational" if axis.get("name").startswith("rotation") else "translational"
        elif kind == "undefined":
            kind = "coupled"
    return kind


def from_skeleton(skeleton, path) -> ForceContext:
    """The :class:`ForceContext` of a :class:`colloc.opensim.kinematics.Skeleton` read from ``path``."""
    from .functions import read_function

    specs = {c.name: (j, k, c) for j in skeleton.spec.joints for k, c in enumerate(j.coordinates)}
    qdot = skeleton.qdot

    def coordinate(name):
        q = skeleton.coordinate(name)
        i = skeleton.coordinates.index(name)
        lo, hi = specs[name][2].range
        return q, qdot[i], lo, hi

    def speed_index(name):
        skeleton.coordinate(name)  # names the coordinate in the error if unknown
        return skeleton.speeds.index(f"{name}_speed")

    def kind(name):
        skeleton.coordinate(name)
        joint, k, _ = specs[name]
        return motion_type(joint.kind, joint.element, k, name)

    return ForceContext(skeleton.q, skeleton.v, qdot, skeleton.frame_pose, coordinate, speed_index, kind,
                        lambda element: read_function(element, path), skeleton.common_body, skeleton.relative_pose)
