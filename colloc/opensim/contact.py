"""OpenSim's ``SmoothSphereHalfSpaceForce``: smooth Hunt–Crossley contact with smoothed Coulomb friction.

The force of Simbody's ``SmoothSphereHalfSpaceForceImpl::calcForce`` (Serrancolí, Falisse et al.,
"Subject-exoskeleton contact model calibration leads to accurate interaction force predictions",
IEEE TNSRE 27(8), 2019), between a ``ContactSphere`` (radius R, centre c in ground) and a
``ContactHalfSpace`` (origin o, normal n = its frame's x axis, pointing into the half space):

    δ = (c − o)·n + R                                  indentation
    f_H = (4/3) k √(R k) (δ² + c_f)^(3/4) (½ + ½ tanh(b_d δ)),   k = ½ E^(2/3)
    f_HC = f_H (1 + (3/2) c v_n) (½ + ½ tanh(b_v (v_n + 2/(3c))))
    v_s = √(|v_t|² + c_f),  v_r = v_s / v_tr
    f_f = f_HC (min(v_r, 1) (μ_d + 2 (μ_s − μ_d)/(1 + v_r²)) + μ_v v_s)
    F = f_HC n + f_f v_t / v_s

with v the velocity of the sphere's body relative to the half space's body at the contact point
P = c + R n − ½ δ n, v_n = v·n, v_t = v − v_n n.  The sphere's body receives −F at P, the half
space's body +F.  ``min(v_r, 1)`` is kept as ``fmin`` (Simbody's own expression): its kink at
|v_t| = v_tr is in the friction magnitude's slope only.
"""
from __future__ import annotations

from typing import NamedTuple

import casadi as ca

from ..errors import ModelError
from .xmlvalues import leaf, number, text, vector

#: ``SmoothSphereHalfSpaceForce::constructProperties`` (OpenSim 4.6).
DEFAULTS = dict(stiffness=1.0, dissipation=0.0, static_friction=0.0, dynamic_friction=0.0, viscous_friction=0.0,
                transition_velocity=0.01, constant_contact_force=1e-5, hertz_smoothing=300.0,
                hunt_crossley_smoothing=50.0)


class ContactGeometry(NamedTuple):
    name: str
    frame: str
    location: tuple
    orientation: tuple
    radius: float | None


class SmoothContact(NamedTuple):
    """One built contact force.

    Attributes
    ----------
    name : str
    generalized_force : casadi.SX, shape (nv, 1)
    record : casadi.SX, shape (12, 1)
        OpenSim's ``getRecordValues``: the sphere body's force and torque (about its body origin), then
        the half space body's, all in ground.
    sphere_frame : str
    indentation : casadi.SX
    """

    name: str
    generalized_force: ca.SX
    record: ca.SX
    sphere_frame: str
    indentation: ca.SX


def contact_geometries(model_element) -> dict:
    """``{name: ContactGeometry}`` from the model's ``ContactGeometrySet``."""
    out = {}
    for element in model_element.iter():
        if element.tag not in ("ContactSphere", "ContactHalfSpace"):
            continue
        frame = text(element, "socket_frame") or text(element, "body")
        out[element.get("name")] = ContactGeometry(
            element.get("name"), frame, tuple(vector(element, "location", 3, [0.0] * 3)),
            tuple(vector(element, "orientation", 3, [0.0] * 3)),
            number(element, "radius", None) if element.tag == "ContactSphere" else None)
    return out


def _body_xyz(angles):
    """Simbody's body-fixed X–Y–Z rotation sequence (``ContactGeometry::getTransform``)."""
    def axis(i, a):
        c, s = ca.cos(a), ca.sin(a)
        m = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
        j, k = (i + 1) % 3, (i + 2) % 3
        m[j][j], m[j][k], m[k][j], m[k][k] = c, -s, s, c
        return ca.DM(m)
    return ca.mtimes(ca.mtimes(axis(0, angles[0]), axis(1, angles[1])), axis(2, angles[2]))


def _params(element):
    p = {key: number(element, key, default) for key, default in DEFAULTS.items()}
    for key in DEFAULTS:
        if p[key] < 0:
            raise ModelError(f"`{key}` of SmoothSphereHalfSpaceForce `{element.get('name')}` must not be negative; got {p[key]}.")
    if p["dissipation"] == 0.0:
        raise ModelError(f"SmoothSphereHalfSpaceForce `{element.get('name')}` has dissipation 0, where Simbody's "
                         "Hunt–Crossley smoothing divides by it; give a positive dissipation.")
    return p


def _geometry(element, geometries, socket, kind):
    raw = text(element, f"socket_{socket}") or text(element, f"contact_{socket}")
    name = leaf(raw or "")
    if name not in geometries or (geometries[name].radius is None) != (kind == "half space"):
        raise ModelError(f"SmoothSphereHalfSpaceForce `{element.get('name')}` names {kind} {raw!r}, which is not a "
                         f"{'ContactHalfSpace' if kind == 'half space' else 'ContactSphere'} of the model.")
    return geometries[name]


def smooth_contact(element, geometries, ctx) -> SmoothContact:
    """Build one ``SmoothSphereHalfSpaceForce`` element on the skeleton ``ctx``."""
    P = _params(element)
    sphere = _geometry(element, geometries, "sphere", "sphere")
    plane = _geometry(element, geometries, "half_space", "half space")
    R_s, p_s = ctx.frame_pose(sphere.frame)
    R_h, p_h = ctx.frame_pose(plane.frame)
    radius = sphere.radius
    centre = p_s + ca.mtimes(R_s, ca.DM(sphere.location))
    origin = p_h + ca.mtimes(R_h, ca.DM(plane.location))
    normal = ca.mtimes(R_h, ca.mtimes(_body_xyz(plane.orientation), ca.DM([1.0, 0.0, 0.0])))
    depth = ca.dot(centre - origin, normal) + radius
    point = centre + radius * normal - 0.5 * depth * normal
    v_sphere, v_plane = ctx.point_velocity(sphere.frame, point), ctx.point_velocity(plane.frame, point)
    force = _force(P, radius, depth, normal, v_sphere - v_plane)
    # virtual power: the station velocities are linear in v, so their Jacobians map F to τ
    tau = ca.mtimes(ca.jacobian(v_sphere, ctx.v).T, -force) + ca.mtimes(ca.jacobian(v_plane, ctx.v).T, force)
    record = ca.vertcat(-force, ca.cross(point - p_s, -force), force, ca.cross(point - p_h, force))
    return SmoothContact(element.get("name"), tau, record, sphere.frame, depth)


def _force(P, radius, depth, normal, velocity):
    cf = P["constant_contact_force"]
    k = 0.5 * P["stiffness"] ** (2.0 / 3.0)
    hertz = (4.0 / 3.0) * k * (radius * k) ** 0.5 * (depth ** 2 + cf) ** 0.75
    hertz = hertz * (0.5 + 0.5 * ca.tanh(P["hertz_smoothing"] * depth))
    c = P["dissipation"]
    v_n = ca.dot(velocity, normal)
    v_t = velocity - v_n * normal
    normal_force = hertz * (1.0 + 1.5 * c * v_n) * (0.5 + 0.5 * ca.tanh(P["hunt_crossley_smoothing"] * (v_n + 2.0 / (3.0 * c))))
    slip = ca.sqrt(ca.dot(v_t, v_t) + cf)
    ratio = slip / P["transition_velocity"]
    us, ud, uv = P["static_friction"], P["dynamic_friction"], P["viscous_friction"]
    friction = normal_force * (ca.fmin(ratio, 1.0) * (ud + 2.0 * (us - ud) / (1.0 + ratio ** 2)) + uv * slip)
    return normal_force * normal + friction * v_t / slip


def check_contact(element, path, model_element):
    """Refuse a malformed contact force before anything is built."""
    from .document import where

    try:
        _params(element)
        geometries = contact_geometries(model_element)
        _geometry(element, geometries, "sphere", "sphere")
        _geometry(element, geometries, "half_space", "half space")
    except ModelError as err:
        raise ModelError(f"{err}".rstrip(".") + f"{where(element, path)}.") from None


def build_contact(skeleton, element, path):
    """Registry builder: the contact's generalized force on ``skeleton``; the built :class:`SmoothContact`
    (with OpenSim's record values as SX) is kept in ``skeleton.contacts``."""
    from .context import from_skeleton

    geometries = contact_geometries(skeleton.spec.model)
    contact = smooth_contact(element, geometries, from_skeleton(skeleton, path))
    skeleton.add_generalized_force(contact.name, contact.generalized_force)
    skeleton.__dict__.setdefault("contacts", {})[contact.name] = contact
    return []


def _register():
    from .registry import register_force

    register_force("SmoothSphereHalfSpaceForce", build_contact, check_contact)


_register()

__all__ = ["SmoothContact", "contact_geometries", "smooth_contact", "DEFAULTS", "build_contact"]
