"""OpenSim joints as the mobilizers of :mod:`colloc.model.rigidbody`.

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
BallJoint          unit quaternion (see below)                            spherical (nq 4, nv 3)
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

``BallJoint`` and ``FreeJoint``: a unit quaternion, as OpenSim 4.6's own
state has (and as for a floating URDF base), with speeds in the body's own
axes (Simbody's are in the parent's).  A ball joint's coordinates are
``<joint>_qw … _qz``, its speeds ``<joint>_wx … _wz``; a free joint's coordinates are
its three translations (by their file names) and ``<joint>_qw … _qz``, its
speeds ``<joint>_vx … _wz`` (the body's velocity in its own axes).
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from ..errors import ModelError
from ..model.rigidbody import axis_rotation
from .document import floats, names, where
from .functions import function_child, read_function

#: Joint tag -> number of coordinates (None: as the file lists).
JOINTS = {"WeldJoint": 0, "PinJoint": 1, "SliderJoint": 1, "PlanarJoint": 3, "UniversalJoint": 2,
          "GimbalJoint": 3, "BallJoint": 3, "FreeJoint": 6, "CustomJoint": None}
_E = np.eye(3)


def tree_joint(joint, path, exact=False):
    """``(kind, axis, motion, terms)`` of a joint for :class:`colloc.model.rigidbody.Body`.

    ``motion`` is ``q_j -> (R, p)`` for ``function`` joints, else ``None``; a ``WeldJoint`` is ``"weld"``.
    ``terms`` is ``(q_j, u) -> (R, p, S, c_J)`` in closed form for a CustomJoint (Simbody's
    velocity-product term unless ``exact=True``), None for every other joint.

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
        return "weld", None, None, None
    if kind == "PinJoint":
        return "revolute", _E[2], None, None
    if kind == "SliderJoint":
        return "prismatic", _E[0], None, None
    if kind == "FreeJoint":
        return "free", _E[2], None, None
    if kind == "PlanarJoint":
        return "function", None, lambda q: (axis_rotation(_E[2], q[0]), ca.vertcat(q[1], q[2], 0)), None
    if kind == "UniversalJoint":
        return "function", None, lambda q: (ca.mtimes(axis_rotation(_E[0], q[0]), axis_rotation(_E[1], q[1])), ca.SX.zeros(3, 1)), None
    if kind == "BallJoint":
        return "spherical", _E[2], None, None
    if kind == "GimbalJoint":
        return "function", None, lambda q: (_rotations([_E[0], _E[1], _E[2]], [q[0], q[1], q[2]]), ca.SX.zeros(3, 1)), None
    motion, terms = _custom_motion(joint, path)
    return "function", None, motion, lambda q, u: terms(q, u, not exact)


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

    def values(q):
        return [f(*[q[i] for i in idx]) if idx else f(ca.SX(0)) for f, idx in funcs]  # no coordinate: a constant

    def motion(q):
        vals = values(q)
        R = _rotations(axes[:3], vals[:3])
        p = sum((ca.DM(axes[3 + k]) * vals[3 + k] for k in range(3)), ca.SX.zeros(3, 1))
        return R, p

    return motion, lambda q, u, simbody: _custom_terms(axes, values(q), q, u, simbody)


def _custom_terms(axes, vals, q, u, simbody):
    """``(R, p, S, c_J)`` of a CustomJoint in closed form, as Simbody's ``FunctionBasedImpl`` builds H and Ḣ.

    In the parent frame F, with ``θ_k = f_k(q)`` the rotation values, ``W = [a₁, R₁a₂, R₁R₂a₃]`` and
    ``A = [a₄ a₅ a₆]``: ``ω = W θ̇``, ``ṗ = A ṫ``, so ``H = [W ∂θ/∂q; A ∂t/∂q]``; with u held
    fixed, ``(Ḣu)_ω = (ω₁ × W₁) θ̇₂ + (ω₂ × W₂) θ̇₃ + W θ̈`` (``ω₁ = a₁θ̇₁``, ``ω₂ = ω₁ + W₁θ̇₂``)
    and ``(Ḣu)_p = A ẗ``.  In body axes: ``S = Rᵀ H`` and
    ``c_J = (Rᵀ (Ḣu)_ω, Rᵀ (Ḣu)_p − ω_b × v_b)`` (the apparent derivative of ``Rᵀ H u``).

    ``simbody=True`` takes ω₁ and ω₂ as Simbody's ``buildHdot`` does: the angular velocity of the
    joint's first mobility alone and of every mobility but its third — the same when rotation k
    follows mobility k, and OpenSim's numbers otherwise (the Rajagopal knee).
    """
    n = q.numel()
    theta, trans = ca.vertcat(*vals[:3]), ca.vertcat(*vals[3:])
    Fr, Ft = ca.jacobian(theta, q), ca.jacobian(trans, q)
    a1, a2, a3 = (ca.DM(a) for a in axes[:3])
    R1 = axis_rotation(axes[0], theta[0])
    R12 = ca.mtimes(R1, axis_rotation(axes[1], theta[1]))
    R = ca.mtimes(R12, axis_rotation(axes[2], theta[2]))
    W = ca.horzcat(a1, ca.mtimes(R1, a2), ca.mtimes(R12, a3))
    A = ca.DM(np.column_stack(axes[3:]))
    p = ca.mtimes(A, trans)
    dtheta, dtrans = ca.mtimes(Fr, u), ca.mtimes(Ft, u)
    ddtheta, ddtrans = ca.jtimes(dtheta, q, u), ca.jtimes(dtrans, q, u)
    if simbody:
        first = ca.vertcat(u[0], ca.SX.zeros(n - 1, 1))
        but_third = ca.vertcat(u[0:2], ca.SX.zeros(1, 1), u[3:]) if n > 2 else u
        w1, w2 = ca.mtimes(W, ca.mtimes(Fr, first)), ca.mtimes(W, ca.mtimes(Fr, but_third))
    else:
        w1 = a1 * dtheta[0]
        w2 = w1 + W[:, 1] * dtheta[1]
    hdot_w = ca.cross(w1, W[:, 1]) * dtheta[1] + ca.cross(w2, W[:, 2]) * dtheta[2] + ca.mtimes(W, ddtheta)
    S = ca.vertcat(ca.mtimes(R.T, ca.mtimes(W, Fr)), ca.mtimes(R.T, ca.mtimes(A, Ft)))
    wb, vb = ca.mtimes(R.T, ca.mtimes(W, dtheta)), ca.mtimes(R.T, ca.mtimes(A, dtrans))
    cJ = ca.vertcat(ca.mtimes(R.T, hdot_w), ca.mtimes(R.T, ca.mtimes(A, ddtrans)) - ca.cross(wb, vb))
    return R, p, S, cJ


__all__ = ["tree_joint", "JOINTS"]
