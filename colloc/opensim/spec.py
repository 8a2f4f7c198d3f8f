"""What an ``.osim`` file says about the skeleton, in one layout for every file version.

OpenSim 4 files (``Version`` ≥ 40000) list joints in a ``JointSet`` whose
sockets name a parent and a child frame (often ``PhysicalOffsetFrame``s in the
joint's ``<frames>``); older files (``gait2354``'s 10905, ``leg6dof9musc``'s
20303, 30000) nest each joint in its child ``Body`` with ``parent_body``,
``location_in_parent``/``orientation_in_parent`` and ``location``/``orientation``.
:func:`read_skeleton` reads either into :class:`SkeletonSpec`, converting the
old layout the way OpenSim 4 does on loading (the two offsets become frames
``/jointset/<joint>/<parent body>_offset`` and ``…/<child body>_offset``).

Frames are named by OpenSim's absolute paths: ``/ground``, ``/bodyset/<body>``,
``/jointset/<joint>/<frame>``, ``/bodyset/<body>/<frame>``, ``/<frame>``.
Orientations are body-fixed X–Y–Z angles (``Rotation::setRotationToBodyFixedXYZ``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError, did_you_mean
from .document import floats, is_true, names, node_text, objects, where

GROUND = "/ground"
#: OpenSim's default gravity (Model::gravity).
DEFAULT_GRAVITY = (0.0, -9.80665, 0.0)


@dataclass
class CoordinateSpec:
    """A ``<Coordinate>``: name, default value, range, flags, and its element."""

    name: str
    joint: str
    default: float
    range: tuple
    clamped: bool
    locked: bool
    element: object
    default_speed: float = 0.0


@dataclass
class FrameSpec:
    """A frame fixed on another: ``x_parent = R x_frame + p``."""

    path: str
    parent: str
    R: np.ndarray
    p: np.ndarray
    element: object = None


@dataclass
class BodySpec:
    """A ``<Body>``: mass, centre of mass and inertia about it (body axes)."""

    path: str
    name: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    element: object


@dataclass
class JointSpec:
    """A joint between two frames; ``coordinates`` in the joint's own order."""

    name: str
    kind: str
    parent: str
    child: str
    coordinates: list
    element: object


@dataclass
class SkeletonSpec:
    """Bodies, frames, joints and gravity of one model, plus the model element for the rest."""

    path: str
    name: str
    version: int
    gravity: np.ndarray
    bodies: dict = field(default_factory=dict)
    frames: dict = field(default_factory=dict)
    joints: list = field(default_factory=list)
    model: object = None

    @property
    def coordinates(self):
        """Every ``CoordinateSpec`` in OpenSim's order: joint by joint, a CustomJoint's in the order its axes use them."""
        return [c for j in self.joints for c in j.coordinates]

    def resolve(self, ref, owner, el=None):
        """Absolute path of the frame ``ref`` named from the component at path ``owner``.

        OpenSim resolves a relative socket path from the socket's owner; files
        also name a body by its bare name (3.x) — any unique last path segment is accepted.
        """
        known = {**self.frames, **{b: None for b in self.bodies}, GROUND: None}
        ref = ref.strip()
        if ref.startswith("/"):
            cands = [_normalize(ref)]
        else:
            parts = [s for s in owner.split("/") if s]
            cands = ["/" + "/".join(parts[:k] + [ref]) for k in range(len(parts), -1, -1)]
            cands = [_normalize(c) for c in cands]
        for c in cands:
            if c in known:
                return c
        tail = ref.rstrip("/").split("/")[-1]
        hits = [k for k in known if k.split("/")[-1] == tail] if tail != "ground" else [GROUND]
        if len(hits) == 1:
            return hits[0]
        raise ModelError(f"Frame `{ref}` named by `{owner}`{where(el, self.path)} is not a body or frame of the model.{did_you_mean(ref, list(known))}")


def _normalize(path):
    out = []
    for s in path.split("/"):
        if s in ("", "."):
            continue
        if s == "..":
            if out:
                out.pop()
        else:
            out.append(s)
    return "/" + "/".join(out)


def body_fixed_xyz(angles):
    """``R = Rx(a) Ry(b) Rz(c)`` for body-fixed X–Y–Z angles (a, b, c), exact zeros kept exact."""
    a, b, c = np.asarray(angles, dtype=float)
    ca_, sa, cb, sb, cc, sc = np.cos(a), np.sin(a), np.cos(b), np.sin(b), np.cos(c), np.sin(c)
    Rx = np.array([[1, 0, 0], [0, ca_, -sa], [0, sa, ca_]])
    Ry = np.array([[cb, 0, sb], [0, 1, 0], [-sb, 0, cb]])
    Rz = np.array([[cc, -sc, 0], [sc, cc, 0], [0, 0, 1]])
    return Rx @ Ry @ Rz


def read_skeleton(root, path):
    """:class:`SkeletonSpec` of the ``<Model>`` in the parsed document ``root``."""
    model = root if root.tag == "Model" else root.find("Model")
    if model is None:
        raise ModelError(f"`{path}` has no <Model> element; it is not an OpenSim model file.")
    version = int(root.get("Version", "40000")) if root.tag == "OpenSimDocument" else 40000
    g = floats(model, "gravity", path, size=3, default=DEFAULT_GRAVITY)
    spec = SkeletonSpec(path, model.get("name", "model"), version, g, model=model)
    bodies = objects(model, "BodySet")
    for el in bodies:
        if el.tag != "Body":
            raise ModelError(f"`{el.tag}` `{el.get('name')}`{where(el, path)} in the BodySet is not supported; colloc reads Body elements.")
        name = el.get("name")
        if version < 40000 and name == "ground":
            continue
        spec.bodies[f"/bodyset/{name}"] = _body(el, name, path)
    if version < 40000:
        _old_joints(spec, bodies, path)
    else:
        _frames_in(spec, model.find("components"), "", path)
        _frames_in(spec, model.find("Ground"), "/ground", path, tag="components")
        for el in bodies:
            _frames_in(spec, el, f"/bodyset/{el.get('name')}", path, tag="components")
        for el in objects(model, "JointSet"):
            _frames_in(spec, el, f"/jointset/{el.get('name')}", path, tag="frames")
        for el in objects(model, "JointSet"):
            spec.joints.append(_new_joint(spec, el, path))
    for f in spec.frames.values():
        f.parent = spec.resolve(f.parent, f.path.rsplit("/", 1)[0] or "/", f.element)
    return spec


def _body(el, name, path):
    mass = float(floats(el, "mass", path, size=1, default=[0.0])[0])
    com = floats(el, "mass_center", path, size=3, default=np.zeros(3))
    if el.find("inertia") is not None:
        i = floats(el, "inertia", path, size=6)
    else:
        # OpenSim 4 joins the six values through a stream of default precision (Body::updateFromXMLNode)
        i = np.array([float(f"{float(node_text(el, f'inertia_{k}') or 0.0):.6g}") for k in ("xx", "yy", "zz", "xy", "xz", "yz")])
    inertia = np.array([[i[0], i[3], i[4]], [i[3], i[1], i[5]], [i[4], i[5], i[2]]])
    return BodySpec(f"/bodyset/{name}", name, mass, com, inertia, el)


def _frames_in(spec, el, owner, path, tag="frames"):
    holder = el.find(tag) if el is not None else None
    for f in (list(holder) if holder is not None else []):
        if f.tag != "PhysicalOffsetFrame":
            continue  # geometry, other components: read by their own readers if they matter
        parent = node_text(f, "socket_parent") or node_text(f, "socket_parent_frame")
        if parent is None:
            raise ModelError(f"PhysicalOffsetFrame `{f.get('name')}`{where(f, path)} names no parent frame (`socket_parent`).")
        R = body_fixed_xyz(floats(f, "orientation", path, size=3, default=np.zeros(3)))
        p = floats(f, "translation", path, size=3, default=np.zeros(3))
        fpath = f"{owner}/{f.get('name')}"
        spec.frames[fpath] = FrameSpec(fpath, parent, R, p, f)


def _coordinate(el, joint, path):
    rng = floats(el, "range", path, size=2, default=[-np.inf, np.inf])
    default = float(node_text(el, "default_value") or 0.0)
    if is_true(el, "prescribed") and el.find("prescribed_function") is not None and len(el.find("prescribed_function")):
        raise ModelError(f"Coordinate `{el.get('name')}`{where(el, path)} is prescribed by a function of time; colloc does not read prescribed coordinates (bound or constrain it in the problem instead).")
    return CoordinateSpec(el.get("name"), joint, default, (float(rng[0]), float(rng[1])), is_true(el, "clamped"),
                          is_true(el, "locked"), el, float(node_text(el, "default_speed_value") or 0.0))


def _new_joint(spec, el, path):
    name = el.get("name")
    owner = f"/jointset/{name}"
    parent, child = node_text(el, "socket_parent_frame"), node_text(el, "socket_child_frame")
    if parent is None or child is None:
        raise ModelError(f"{el.tag} `{name}`{where(el, path)} must name its parent and child frames (`socket_parent_frame`, `socket_child_frame`).")
    coords = _transform_order(el, [_coordinate(c, name, path) for c in objects(el, "coordinates")])
    return JointSpec(name, el.tag, spec.resolve(parent, owner, el), spec.resolve(child, owner, el), coords, el)


def _transform_order(el, coords):
    """A CustomJoint's coordinates in order of first use by its transform axes, as OpenSim orders them
    (``CustomJoint::constructCoordinates``); coordinates no axis uses come last."""
    st = el.find("SpatialTransform")
    if el.tag != "CustomJoint" or st is None:
        return coords
    used = []
    for axis in st.findall("TransformAxis"):
        used += [n for n in names(axis, "coordinates") if n not in used]
    rank = {n: i for i, n in enumerate(used)}
    return sorted(coords, key=lambda c: rank.get(c.name, len(used)))


def _old_joints(spec, bodies, path):
    """OpenSim < 4 files: each body's ``<Joint>`` becomes a joint between two offset frames."""
    for body in bodies:
        holder = body.find("Joint")
        kids = list(holder) if holder is not None else []
        if not kids:
            continue
        el, child = kids[0], body.get("name")
        name = el.get("name")
        if is_true(el, "reverse"):
            raise ModelError(f"{el.tag} `{name}`{where(el, path)} is reversed; colloc does not read reversed joints.")
        parent = node_text(el, "parent_body")
        ppath = GROUND if parent == "ground" else f"/bodyset/{parent}"
        cpath = f"/bodyset/{child}"
        offsets = []
        for target, loc, ori in ((ppath, "location_in_parent", "orientation_in_parent"), (cpath, "location", "orientation")):
            fpath = f"/jointset/{name}/{target.split('/')[-1]}_offset"
            # OpenSim 4 converts the offsets through a C++ stream of default precision (6 significant digits,
            # XMLDocument::addPhysicalOffsetFrame30505_30517): rounded the same way, the frames are OpenSim's
            rounded = lambda tag: np.array([float(f"{x:.6g}") for x in floats(el, tag, path, size=3, default=np.zeros(3))])
            spec.frames[fpath] = FrameSpec(fpath, target, body_fixed_xyz(rounded(ori)), rounded(loc), el)
            offsets.append(fpath)
        coords = _transform_order(el, [_coordinate(c, name, path) for c in objects(el, "CoordinateSet")])
        spec.joints.append(JointSpec(name, el.tag, offsets[0], offsets[1], coords, el))


def check_names(spec):
    """Coordinates must have distinct names (they become variable names)."""
    seen = {}
    for c in spec.coordinates:
        if c.name in seen:
            raise ModelError(f"Coordinate `{c.name}`{where(c.element, spec.path)} has the name of a coordinate of joint `{seen[c.name]}`; coordinate names must be distinct.")
        seen[c.name] = c.joint


__all__ = ["SkeletonSpec", "JointSpec", "BodySpec", "FrameSpec", "CoordinateSpec", "read_skeleton",
           "body_fixed_xyz", "GROUND"]
