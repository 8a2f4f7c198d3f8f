"""Checks of a parsed URDF before any body is built: one sentence naming the link or joint at fault.

``urdf_parser_py`` accepts files whose model is not a tree of physical bodies — a link declared twice
(the second replaces the first), a joint hanging from a link that does not exist (its subtree was
dropped), a kinematic loop (the walk from the root never ended), a negative mass, an inertia that no
mass distribution has, a NaN in an origin, a joint whose lower limit is above its upper one — and
every one of them used to give a model, and then an optimum of some other robot.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..errors import ModelError

#: Relative tolerance of the inertia checks: exported files round principal moments to a few digits, and a
#: point mass or a thin rod (a zero moment, ``A + B = C``) is physical.
INERTIA_TOLERANCE = 1e-6


def check_robot(robot, path, check_inertia=True) -> None:
    """Refuse a URDF whose links and joints do not form one tree of physical bodies with finite numbers."""
    _unique(robot, path)
    _tree(robot, path)
    for joint in robot.joints:
        _joint_numbers(joint, path)
    for link in robot.links:
        _inertial(link, path, check_inertia)


def check_efforts(robot, actuated, path) -> None:
    """Refuse an actuated joint whose effort limit is 0 or missing where the URDF requires one (revolute and prismatic
    joints must have a ``<limit>`` with ``effort``): its torque would be unbounded.  A continuous joint may leave
    ``<limit>`` out (the format's own "no limit"), and its torque is then unbounded as the file says."""
    joints = {j.name: j for j in robot.joints}
    for name in actuated:
        limit = joints[name].limit
        if limit is None and joints[name].type == "continuous":
            continue
        effort = None if limit is None else limit.effort
        if effort is None or effort == 0:
            given = "has no effort limit" if effort is None else "has effort=\"0\""
            raise ModelError(f"Joint `{name}` of `{path}` {given}, so its torque would be unbounded; give it an effort "
                             f"limit in the file or with `efforts={{'{name}': ...}}` (math.inf for none), or leave it "
                             "out of `actuated=` to make it passive.")


def check_speeds(robot, kept, path) -> None:
    """Refuse a kept joint whose ``velocity`` limit is 0: the file says it cannot move, and reading 0 as no limit
    would let it move at any speed."""
    joints = {j.name: j for j in robot.joints}
    for name in kept:
        limit = joints[name].limit
        if limit is not None and limit.velocity == 0:
            raise ModelError(f"Joint `{name}` of `{path}` has velocity=\"0\", so it could not move; give it a speed limit in "
                             "the file, or leave it out of `joints=` to lock it.")


def placeholder_limits(robot, path) -> set:
    """Joints whose ``<limit>`` is all zeros (lower, upper, effort, velocity): an exporter's placeholder, read as
    no limits (with a warning), not as a joint that may neither move nor push."""
    out = set()
    for j in robot.joints:
        lim = j.limit
        if j.type in ("revolute", "prismatic", "continuous") and lim is not None and not any((lim.lower, lim.upper, lim.effort, lim.velocity)):
            warnings.warn(f"Joint `{j.name}` of `{path}` has an all-zero <limit> (an exporter's placeholder); it is read as "
                          "no position, speed or effort limit.", stacklevel=3)
            out.add(j.name)
    return out


def _unique(robot, path):
    for kind, items in (("link", robot.links), ("joint", robot.joints)):
        seen = set()
        for item in items:
            if item.name in seen:
                raise ModelError(f"The {kind} `{item.name}` is declared twice in `{path}`; {kind} names must be unique.")
            seen.add(item.name)


def _tree(robot, path):
    """Every joint between existing links, every link the child of one joint at most, every link reached from the root."""
    links = {l.name for l in robot.links}
    parent_of = {}
    for j in robot.joints:
        for role, link in (("parent", j.parent), ("child", j.child)):
            if link not in links:
                raise ModelError(f"Joint `{j.name}` of `{path}` names the {role} link `{link}`, which the file does not declare.")
        if j.parent == j.child:
            raise ModelError(f"Joint `{j.name}` of `{path}` joins link `{j.child}` to itself.")
        if j.child in parent_of:
            raise ModelError(f"Link `{j.child}` of `{path}` is the child of two joints, `{parent_of[j.child].name}` and "
                             f"`{j.name}`: a kinematic loop, which a URDF tree cannot describe.")
        parent_of[j.child] = j
    roots = [l.name for l in robot.links if l.name not in parent_of]
    if len(roots) != 1:
        raise ModelError(f"URDF `{path}` must have exactly one root link (a link no joint moves); found {roots}.")
    children = {}
    for j in robot.joints:
        children.setdefault(j.parent, []).append(j.child)
    reached, stack = {roots[0]}, [roots[0]]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in reached:
                reached.add(child)
                stack.append(child)
    lost = [l.name for l in robot.links if l.name not in reached]
    if lost:  # each link has one parent at most and only the root has none: what the root misses is a loop
        loop = [parent_of[name].name for name in lost]
        raise ModelError(f"The joints {', '.join(f'`{n}`' for n in loop)} of `{path}` form a kinematic loop "
                         f"(links {', '.join(f'`{n}`' for n in lost)} cannot be reached from the root link `{roots[0]}`).")


def _finite(values, what):
    if values is not None and not np.all(np.isfinite(np.asarray(values, dtype=float))):
        raise ModelError(f"{what} is not finite: {list(values)}.")


def _joint_numbers(j, path):
    where = f"joint `{j.name}` of `{path}`"
    if j.origin is not None:
        _finite(j.origin.xyz, f"The origin xyz of {where}")
        _finite(j.origin.rpy, f"The origin rpy of {where}")
    _finite(j.axis, f"The axis of {where}")
    lim = j.limit
    if lim is None:
        return
    for name in ("lower", "upper", "effort", "velocity"):
        value = getattr(lim, name, None)
        if value is not None and math.isnan(float(value)):
            raise ModelError(f"The {name} limit of {where} is NaN.")
    for name in ("effort", "velocity"):
        value = getattr(lim, name, None)
        if value is not None and value < 0:
            raise ModelError(f"The {name} limit of {where} is negative ({value}); it is a magnitude.")
    if j.type in ("revolute", "prismatic") and lim.lower is not None and lim.upper is not None and lim.lower > lim.upper:
        raise ModelError(f"The limits of {where} are reversed: lower {lim.lower} > upper {lim.upper}.")


def _inertial(link, path, check_inertia):
    inertial = link.inertial
    if inertial is None:
        return
    where = f"link `{link.name}` of `{path}`"
    mass = inertial.mass
    if mass is not None and (not math.isfinite(float(mass)) or mass < 0):
        raise ModelError(f"The mass of {where} is {mass}; a mass is a finite number ≥ 0.")
    if inertial.origin is not None:
        _finite(inertial.origin.xyz, f"The inertial origin xyz of {where}")
        _finite(inertial.origin.rpy, f"The inertial origin rpy of {where}")
    if inertial.inertia is None:
        return
    matrix = np.asarray(inertial.inertia.to_matrix(), dtype=float)
    _finite(matrix.ravel(), f"The inertia of {where}")
    if not mass or not check_inertia:  # check_inertia=False: the file's inertias as they are
        return
    moments = np.linalg.eigvalsh(matrix)  # ascending: A ≤ B ≤ C
    scale = max(float(np.abs(moments).max()), 1e-300)
    if moments[0] < -INERTIA_TOLERANCE * scale:
        raise ModelError(f"The inertia of {where} is not positive semi-definite (principal moments {_moments(moments)}); "
                         "no body has a negative moment of inertia (correct it, or load the file as it is with "
                         "`check_inertia=False`).")
    if moments[0] + moments[1] < moments[2] * (1 - INERTIA_TOLERANCE):
        # a warning, not a refusal: the inertia is positive definite, so the dynamics are well posed, and 11 of
        # example-robot-data's 77 robots (anymal, go1, hyq, b1, allegro, romeo_small ...) break it by a little
        warnings.warn(f"The inertia of {where} breaks the triangle inequality A + B ≥ C of its principal moments "
                      f"({_moments(moments)}), which every mass distribution satisfies; it is used as it is "
                      "(`check_inertia=False` silences this).", stacklevel=4)


def _moments(m):
    return ", ".join(f"{v:.6g}" for v in m)
