"""Muscle paths of an ``.osim`` file as CasADi SX expressions of the coordinates.

* ``GeometryPath`` (OpenSim's ``GeometryPath::computePath`` without wrapping): the length is the sum of
  the distances between consecutive *active* points, each point ``p_F + R_F r`` for its frame F, placed in
  the innermost body every point hangs from (distances are the same in any frame, and there they depend
  on the crossed joints' coordinates only; the points drawn are in ground):

  - ``PathPoint``: r fixed;
  - ``MovingPathPoint``: r = (f_x(q_x), f_y(q_y), f_z(q_z)), each coordinate clamped to its range first
    (``MovingPathPoint::getLocation``); a component without a coordinate is f(0);
  - ``ConditionalPathPoint``: r fixed, active while its coordinate lies in ``[lo − 1e-5, hi + 1e-5]``
    (``ConditionalPathPoint::isActive``).

  A conditional point makes the length jump where it switches (the point is not on the segment it
  replaces).  colloc keeps that step exactly as OpenSim has it, built with ``if_else`` on the
  coordinate: the length then equals OpenSim's everywhere and the path is the one the model's author
  fitted; smoothing it would change every length near a switch by an amount nobody validated.  Away from
  the switches the length is smooth; an optimum that sits on a switch shows as a kink in the solution.

* ``FunctionBasedPath`` (OpenSim 4.5): ``length_function`` of the listed coordinates, with
  ``moment_arm_functions`` and ``lengthening_speed_function`` (of the coordinates then their speeds)
  when the file gives them, as ``FunctionBasedPath::computeMomentArms`` uses them; else both follow
  from the length by AD.

The lengthening speed and the moment arms −∂ℓ/∂q of a ``GeometryPath`` are taken by AD (in
:class:`colloc.opensim.muscle_component.OpenSimMuscle`), which equals OpenSim's sum of segment
velocities and its ``MomentArmSolver`` for any coordinate that no constraint couples.

A path with wrap objects is refused: colloc does not compute wrapping.
"""
from __future__ import annotations

from typing import NamedTuple

import casadi as ca

from ..errors import ModelError
from .multivariate import is_multivariate, multivariate_polynomial
from .xmlvalues import leaf, text, vector

#: ``ConditionalPathPoint::isActive`` widens the range by this much.
CONDITIONAL_SLACK = 1e-5
POINT_TAGS = ("PathPoint", "ConditionalPathPoint", "MovingPathPoint")


class Path(NamedTuple):
    """One muscle's path.

    Attributes
    ----------
    length : casadi.SX, scalar
        l_MT(q) (m).
    moment_arms : casadi.SX, shape (nv, 1), or None
        Given by the file's moment-arm functions; None means −Nᵀ(∂l/∂q)ᵀ by AD.
    lengthening_speed : casadi.SX, scalar, or None
        Given by the file's lengthening-speed function (or −Σ r_i q̇_i with moment-arm functions); None
        means (∂l/∂q) q̇ by AD.
    points : list of (casadi.SX, casadi.SX)
        ``(active, position in ground (3, 1))`` for each path point (drawing); empty for a
        function-based path.
    """

    length: ca.SX
    moment_arms: ca.SX | None = None
    lengthening_speed: ca.SX | None = None
    points: tuple = ()


def _point_frame(point, muscle):
    frame = text(point, "socket_parent_frame") or text(point, "body")
    if not frame:
        raise ModelError(f"Path point `{point.get('name')}` of muscle `{muscle}` names no frame (socket_parent_frame or body).")
    return frame


def _coordinate_name(point, socket, old):
    raw = text(point, socket) or text(point, old)
    return leaf(raw) if raw else None


def _moving_location(point, ctx, muscle):
    location = vector(point, "location", 3, [0.0, 0.0, 0.0])
    out = []
    for i, axis in enumerate("xyz"):
        function = point.find(f"{axis}_location")
        if function is None or len(function) == 0:
            out.append(location[i])
            continue
        f = ctx.function(function[0])
        name = _coordinate_name(point, f"socket_{axis}_coordinate", f"{axis}_coordinate")
        if name is None:
            out.append(f(ca.SX(0.0)))
            continue
        q, _, lo, hi = ctx.coordinate(name)
        out.append(f(ca.fmin(ca.fmax(q, lo), hi)))
    return ca.vertcat(*out)


def _point(point, ctx, muscle):
    """``(active, frame, location in the frame)`` of one path point; ``active`` is True or an SX condition."""
    active = True
    if point.tag == "MovingPathPoint":
        local = _moving_location(point, ctx, muscle)
    else:
        local = ca.DM(vector(point, "location", 3, [0.0, 0.0, 0.0]))
    if point.tag == "ConditionalPathPoint":
        name = _coordinate_name(point, "socket_coordinate", "coordinate")
        if name is None:
            active = False  # OpenSim: an unconnected coordinate socket leaves the point inactive
        else:
            q = ctx.coordinate(name)[0]
            lo, hi = vector(point, "range", 2)
            active = ca.logic_and(q >= lo - CONDITIONAL_SLACK, q <= hi + CONDITIONAL_SLACK)
    return active, _point_frame(point, muscle), local


def _placed(points, pose):
    """``(active, R location + p)`` of each ``(active, frame, location)`` with ``(R, p) = pose(frame)``."""
    out = []
    for active, frame, local in points:
        R, p = pose(frame)
        out.append((active, p + ca.mtimes(R, local)))
    return out


def _distance(a, b):
    d = b - a
    return ca.sqrt(ca.dot(d, d))


def path_length(points):
    """Σ of the distances between consecutive active points.

    With conditional points the previous active point is carried as an ``if_else`` expression, so the
    expression stays linear in the number of points whatever the pattern of switches.
    """
    length, last, have = ca.SX(0.0), None, False  # have: whether `last` is an active point (True or SX)
    for active, position in points:
        if active is False:
            continue
        if last is None:
            last, have = position, active
            continue
        step = have if active is True else (active if have is True else ca.logic_and(active, have))
        d = _distance(last, position)
        length += d if step is True else ca.if_else(step, d, 0.0)
        if active is True:
            last, have = position, True
        else:
            last = ca.if_else(active, position, last)
            have = True if have is True else ca.logic_or(have, active)
    return length


def _wrap_check(geometry, muscle):
    wraps = geometry.find("PathWrapSet")
    objects = [] if wraps is None or wraps.find("objects") is None else list(wraps.find("objects"))
    if objects:
        wrap = text(objects[0], "wrap_object") or objects[0].get("name")
        raise ModelError(
            f"Muscle `{muscle}` wraps over `{wrap}`, and colloc computes no wrapping: replace its path by a "
            "FunctionBasedPath fitted with OpenSim's PolynomialPathFitter (then "
            "ModOpReplacePathsWithFunctionBasedPaths) and load the model it writes.")


def _point_set(geometry):
    """``PathPointSet`` (``MusclePointSet`` in files of version 20301 and older)."""
    holder = geometry.find("PathPointSet")
    return holder if holder is not None else geometry.find("MusclePointSet")


def geometry_path(element, ctx, muscle) -> Path:
    """The :class:`Path` of a ``GeometryPath`` element of muscle ``muscle``."""
    _wrap_check(element, muscle)
    holder = _point_set(element)
    objects = holder.find("objects") if holder is not None else None
    points = []
    for point in (objects if objects is not None else []):
        if point.tag not in POINT_TAGS:
            raise ModelError(f"Path point `{point.get('name')}` of muscle `{muscle}` is a {point.tag}; "
                             f"colloc reads {', '.join(POINT_TAGS)}.")
        points.append(_point(point, ctx, muscle))
    if sum(1 for a, _, _ in points if a is not False) < 2:
        raise ModelError(f"The path of muscle `{muscle}` has fewer than two points.")
    drawn = _placed(points, ctx.frame_pose)
    if ctx.relative_pose is None:
        return Path(path_length(drawn), points=tuple(drawn))
    # the length in the innermost body the path hangs from: the same distances, in the crossed joints only
    base = ctx.common_body([frame for _, frame, _ in points])
    return Path(path_length(_placed(points, lambda frame: ctx.relative_pose(frame, base))), points=tuple(drawn))


def function_based_path(element, ctx, muscle) -> Path:
    """The :class:`Path` of a ``FunctionBasedPath`` element (OpenSim 4.5+)."""
    names = [leaf(p) for p in (text(element, "coordinate_paths") or "").split()]
    if not names:
        raise ModelError(f"The FunctionBasedPath of muscle `{muscle}` lists no coordinate_paths.")
    coords = [ctx.coordinate(n) for n in names]
    q = [c[0] for c in coords]
    qdot = [c[1] for c in coords]
    length = _function(element.find("length_function"), ctx, muscle, "length_function")(q)
    arms_element = element.find("moment_arm_functions")
    arms = list(arms_element) if arms_element is not None else []
    speed_element = element.find("lengthening_speed_function")
    speed = None
    if speed_element is not None and len(speed_element):
        speed = _make(speed_element[0], ctx, muscle)(q + qdot)
    if not arms:
        return Path(length, None, speed)
    if len(arms) != len(names):
        raise ModelError(f"The FunctionBasedPath of muscle `{muscle}` has {len(arms)} moment_arm_functions for {len(names)} coordinates.")
    values = [_make(f, ctx, muscle)(q) for f in arms]
    moment_arms = ca.SX.zeros(ctx.num_speeds, 1)
    for name, r in zip(names, values):
        moment_arms[ctx.speed_index(name)] += r
    if speed is None:  # FunctionBasedPath::computeLengtheningSpeed: −Σ r_i q̇_i
        speed = -sum(r * d for r, d in zip(values, qdot))
    return Path(length, moment_arms, speed)


def _make(element, ctx, muscle):
    """``f(list of SX) -> SX`` for a function element of several arguments."""
    if is_multivariate(element):
        return multivariate_polynomial(element, muscle)
    f = ctx.function(element)
    return lambda args: f(args[0]) if len(args) == 1 else f(ca.vertcat(*args))


def _function(holder, ctx, muscle, what):
    if holder is None or len(holder) == 0:
        raise ModelError(f"The FunctionBasedPath of muscle `{muscle}` has no {what}.")
    return _make(holder[0], ctx, muscle)


def muscle_path(muscle_element, ctx) -> Path:
    """The path of a muscle element: its ``GeometryPath`` or ``FunctionBasedPath`` (``path`` in 4.5 files)."""
    name = muscle_element.get("name")
    for child in muscle_element:
        if child.tag == "GeometryPath":
            return geometry_path(child, ctx, name)
        if child.tag == "FunctionBasedPath":
            return function_based_path(child, ctx, name)
        if child.tag == "path" and len(child):
            inner = child[0]
            if inner.tag == "GeometryPath":
                return geometry_path(inner, ctx, name)
            if inner.tag == "FunctionBasedPath":
                return function_based_path(inner, ctx, name)
            raise ModelError(f"Muscle `{name}` has a path of type {inner.tag}; colloc reads GeometryPath and FunctionBasedPath.")
    raise ModelError(f"Muscle `{name}` has no GeometryPath or FunctionBasedPath.")




def check_path(muscle_element):
    """Refuse, before anything is built, a muscle path colloc cannot read (no path, wrapping, unknown points)."""
    name = muscle_element.get("name")
    for child in muscle_element:
        inner = child[0] if child.tag == "path" and len(child) else child
        if inner.tag == "FunctionBasedPath":
            return
        if inner.tag == "GeometryPath":
            _wrap_check(inner, name)
            holder = _point_set(inner)
            objects = holder.find("objects") if holder is not None else None
            for point in (objects if objects is not None else []):
                if point.tag not in POINT_TAGS:
                    raise ModelError(f"Path point `{point.get('name')}` of muscle `{name}` is a {point.tag}; "
                                     f"colloc reads {', '.join(POINT_TAGS)}.")
            return
    raise ModelError(f"Muscle `{name}` has no GeometryPath or FunctionBasedPath.")


__all__ = ["Path", "geometry_path", "function_based_path", "muscle_path", "path_length", "check_path"]
