"""OpenSim joints as the mobilizers of :mod:`colloc.rigidbody`.

Each joint moves its child frame M relative to its parent frame F by
``X_FM(q_j)``, exactly as the Simbody mobilizer OpenSim creates for it:

=================  =====================================================  =========================
joint              X_FM                                                   colloc tree joint
=================  =====================================================  =========================
WeldJoint          identity                                               merged into the parent
PinJoint           rotation q about z                                     revolute, axis z
SliderJoint        translation q along x                                  prismatic, axis x
PlanarJoint        rotation q₀ about z, then translation (q₁, q₂, 0) in F  function
UniversalJoint     rotation q₀ about x, then q₁ about the new y           function
GimbalJoint        body-fixed x–y–z rotations q₀, q₁, q₂                   function
BallJoint          body-fixed x–y–z rotations q₀, q₁, q₂ (see below)       function
FreeJoint          translation (x, y, z) in F, unit quaternion             free (nq 7, nv 6)
CustomJoint        R(f₁ a₁) R(f₂ a₂) R(f₃ a₃), p = Σ f_k a_k (k = 4…6)       function
=================  =====================================================  =========================

``CustomJoint`` is Simbody's ``MobilizedBody::FunctionBased``
(``FunctionBasedImpl::calcMobilizerTransformFromQ``): the three rotations are
about the constant axes ``a₁, a₂, a₃`` composed left to right (each about the
frame the previous ones rotated), the translation is ``Σ f_k a_k`` in F, and
every ``f_k`` is the ``TransformAxis``'s function of its coordinates.  A
transform axis with coordinates and no function is the identity of its
coordinate.  In all of these the speeds are the coordinates' rates
(``q̇ = u``), as in Simbody's ``Custom``, ``Pin``, ``Slider``, ``Planar``,
``Universal`` and ``Gimbal`` mobilizers.

``BallJoint``: colloc keeps OpenSim's three coordinates (body-fixed x–y–z
angles, what OpenSim's Euler-angle mode shows) with their rates as speeds,
whereas Simbody's ball mobilizer takes the angular velocity as speeds; the
motion is the same, the speeds differ by ``N(q)``.  ``FreeJoint``: a unit
quaternion as for a floating URDF base; its coordinates are the joint's three
translations (by their file names) and ``<joint>_qw … _qz``, its speeds
``<joint>_vx … _wz`` (the body's velocity in its own axes).
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from ..errors import ModelError
from ..rigidbody import axis_rotation
from .document import floats, names, where
from .functions import function_child, read_function

#: Joint tag -> number of coordinates (None: as the file lists).
JOINTS = {"WeldJoint": 0, "PinJoint": 1, "SliderJoint": 1, "PlanarJoint": 3, "UniversalJoint": 2,
          "GimbalJoint": 3, "BallJoint": 3, "FreeJoint": 6, "CustomJoint": None}
_E = np.eye(3)


def tree_joint(joint, path):
    """``(kind, axis, motion)`` of a joint for :class:`colloc.rigidbody.Body`.

    ``motion`` is ``q_j -> (R, p)`` for ``function`` joints, else ``None``; a ``WeldJoint`` is ``"weld"``.

    Raises
    ------
    ModelError
        For an unsupported joint type or a joint with the wrong number of coordinates.
    """
    el, n = joint.element, len(joint.coordinates)
    if joint.kind not in JOINTS:
        raise ModelError(f"Joint type `{joint.kind}` (`{joint.name}`{where(el, path)}) is not supported; colloc reads "
                         f"{', '.join(JOINTS)}.")
    want = JOINTS[joint.kind]
    if want is not None and n != want:
        raise ModelError(f"{joint.kind} `{joint.name}`{where(el, path)} has {n} coordinates; it needs {want}.")
    kind = joint.kind
    if kind == "WeldJoint":
        return "weld", None, None
    if kind == "PinJoint":
        return "revolute", _E[2], None
    if kind == "SliderJoint":
        return "prismatic", _E[0], None
    if kind == "FreeJoint":
        return "free", _E[2], None
    if kind == "PlanarJoint":
        return "function", None, lambda q: (axis_rotation(_E[2], q[0]), ca.vertcat(q[1], q[2], 0))
    if kind == "UniversalJoint":
        return "function", None, lambda q: (ca.mtimes(axis_rotation(_E[0], q[0]), axis_rotation(_E[1], q[1])), ca.SX.zeros(3, 1))
    if kind in ("GimbalJoint", "BallJoint"):
        return "function", None, lambda q: (_rotations([_E[0], _E[1], _E[2]], [q[0], q[1], q[2]]), ca.SX.zeros(3, 1))
    return "function", None, _custom_motion(joint, path)


def _rotations(axes, angles):
    R = ca.SX.eye(3)
    for a, t in zip(axes, angles):
        R = ca.mtimes(R, axis_rotation(a, t))
    return R


def _custom_motion(joint, path):
    """``q_j -> (R, p)`` of a CustomJoint's SpatialTransform (see the module notes)."""
    el = joint.element
    st = el.find("SpatialTransform")
    if st is None:
        raise ModelError(f"CustomJoint `{joint.name}`{where(el, path)} has no SpatialTransform.")
    axes_el = {a.get("name"): a for a in st.findall("TransformAxis")}
    order = ["rotation1", "rotation2", "rotation3", "translation1", "translation2", "translation3"]
    own = [c.name for c in joint.coordinates]
    axes, funcs = [], []
    for k, key in enumerate(order):
        a = axes_el.get(key)
        default_axis = _E[k % 3]
        if a is None:
            axes.append(default_axis)
            funcs.append((lambda s: ca.SX(0), []))
            continue
        axis = floats(a, "axis", path, size=3, default=default_axis)
        if np.linalg.norm(axis) == 0:
            raise ModelError(f"TransformAxis `{key}` of CustomJoint `{joint.name}`{where(a, path)} has a zero axis.")
        coords = names(a, "coordinates")
        for c in coords:
            if c not in own:
                raise ModelError(f"TransformAxis `{key}` of CustomJoint `{joint.name}`{where(a, path)} uses coordinate `{c}`, which is not one of the joint's ({', '.join(own) or 'none'}).")
        fel = function_child(a, "function", path)
        if fel is None:
            f = (lambda s: s) if len(coords) == 1 else (lambda s: ca.SX(0))
        else:
            f = read_function(fel, path)
        if len(coords) > 1:
            raise ModelError(f"TransformAxis `{key}` of CustomJoint `{joint.name}`{where(a, path)} is a function of {len(coords)} coordinates; colloc reads functions of one coordinate.")
        axes.append(axis / np.linalg.norm(axis))
        funcs.append((f, [own.index(c) for c in coords]))

    def motion(q):
        vals = [f(*[q[i] for i in idx]) if idx else f(ca.SX(0)) for f, idx in funcs]  # no coordinate: a constant
        R = _rotations(axes[:3], vals[:3])
        p = sum((ca.DM(axes[3 + k]) * vals[3 + k] for k in range(3)), ca.SX.zeros(3, 1))
        return R, p

    return motion


__all__ = ["tree_joint", "JOINTS"]
