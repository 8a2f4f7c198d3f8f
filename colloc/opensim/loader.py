"""Read an ``.osim`` file into colloc components: :func:`load`.

The reading runs in two passes: the first walks the whole file and refuses
anything colloc cannot represent (one sentence naming the element type, its
name and its line), the second builds the SX expressions.
"""
from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass, field

import casadi as ca
import numpy as np

from ..errors import ModelError, did_you_mean
from . import registry
from .document import floats, is_true, names, node_text, objects, parse, where
from .functions import function_child, read_function
from .kinematics import Skeleton
from .muscle_parameters import DGF, REPLACEABLE, check_muscle_option
from .spec import check_names, read_skeleton

#: Constraint types colloc reads.
CONSTRAINTS = ("CoordinateCouplerConstraint",)


@dataclass
class OsimModel:
    """What :func:`load` read from an ``.osim`` file.

    Attributes
    ----------
    skeleton : Skeleton
        Coordinates, frames and the equations of motion (:mod:`colloc.opensim.kinematics`).
    body : OsimBody
        The multibody component (``skeleton.body``).
    components : list of Component
        Every component to put in a :class:`~colloc.Model` or :class:`~colloc.Problem`: the body first,
        then what force elements made (muscles).
    markers : dict
        ``{marker name: (frame path, location (3,))}``; :meth:`marker_position` gives their SX positions.
    forces : list of (str, str)
        ``(type, name)`` of every force element read.
    constraints : list of (str, str)
        ``(type, name)`` of every constraint read (and of every locked coordinate, as ``("locked", name)``).
    ignored : dict
        ``{element type: count}`` of the elements skipped because they change nothing in the dynamics.
    motion : object or None
        What ``load(..., motion=f)`` got from ``f(body)`` (the prescribed motion the muscles are on).
    """

    path: str
    skeleton: Skeleton
    components: list
    markers: dict = field(default_factory=dict)
    forces: list = field(default_factory=list)
    constraints: list = field(default_factory=list)
    ignored: dict = field(default_factory=dict)
    motion: object = None

    @property
    def body(self):
        return self.skeleton.body

    def marker_position(self, name):
        """Position in ground of marker ``name``, SX (3, 1) in q."""
        if name not in self.markers:
            raise ModelError(f"Model `{os.path.basename(self.path)}` has no marker `{name}`.{did_you_mean(name, list(self.markers))}")
        frame, location = self.markers[name]
        return self.skeleton.point_position(frame, location)

    def default_values(self):
        """``{symbol: value}``: each coordinate's ``default_value`` and speed's ``default_speed_value``.

        A ball or free joint's quaternion is the identity (its angles' defaults are not converted), its
        speeds zero.
        Usable as a constant guess: ``problem.guess(model.default_values())``.
        """
        sk = self.skeleton
        out = {}
        for c in sk.spec.coordinates:
            if c.name in sk.coordinates:
                out[sk.coordinate(c.name)] = c.default
            if f"{c.name}_speed" in sk.speeds:
                out[sk.speed(c.name)] = c.default_speed
        for name in sk.coordinates:
            if re.search(r"_q[wxyz]$", name) and sk.coordinate(name) not in out:
                out[sk.coordinate(name)] = 1.0 if name.endswith("_qw") else 0.0
        for name in sk.speeds:  # a ball or free joint's body-frame speeds
            out.setdefault(sk.speed(name), 0.0)
        return out

    def summary(self):
        """What was read, one line per kind of element (what ``colloc info MODEL.osim`` prints)."""
        sk = self.skeleton
        spec = sk.spec
        joints = {}
        for j in spec.joints:
            joints[j.kind] = joints.get(j.kind, 0) + 1
        kinds = lambda pairs: ", ".join(f"{k} {n}" for k, n in _count(pairs).items()) or "none"
        controls = [v.name for c in self.components for v in c.variables if v.kind == "control"]
        lines = [
            f"OpenSim model `{spec.name}` ({os.path.basename(self.path)}, file version {spec.version}) as component `{sk.name}`",
            f"  bodies: {len(spec.bodies)} ({sum(b.mass for b in spec.bodies.values()):.4g} kg), frames: {len(spec.frames)}, gravity {[float(g) for g in spec.gravity]}",
            f"  joints: {', '.join(f'{k} {n}' for k, n in joints.items())}",
            f"  coordinates ({len(sk.coordinates)}): {', '.join(sk.coordinates)}",
            f"  constraints: {kinds(self.constraints)}",
            f"  forces: {self._forces_read()}",
            f"  controls ({len(controls)}): {', '.join(controls) or 'none'}",
            f"  markers: {len(self.markers)}",
            f"  ignored (no effect on the dynamics): {', '.join(f'{k} {n}' for k, n in self.ignored.items()) or 'none'}",
        ]
        return "\n".join(lines)


    def _forces_read(self):
        """Force elements by the type they are built as: a replaced muscle under its replacement,
        ``DeGrooteFregly2016Muscle 9 (replacing Thelen2003Muscle 9)``."""
        replaced = getattr(self.skeleton, "muscles", "degroote") == "degroote"
        built, sources = {}, {}
        for kind, _ in self.forces:
            as_built = DGF if replaced and kind in REPLACEABLE else kind
            built[as_built] = built.get(as_built, 0) + 1
            if as_built != kind:
                sources.setdefault(as_built, {})[kind] = sources.get(as_built, {}).get(kind, 0) + 1
        def entry(kind, n):
            note = ", ".join(f"{k} {m}" for k, m in sources.get(kind, {}).items())
            return f"{kind} {n}" + (f" (replacing {note})" if note else "")
        return ", ".join(entry(k, n) for k, n in built.items()) or "none"


def info(path) -> str:
    """What colloc reads from the model file at ``path`` (``colloc info MODEL.osim`` prints it)."""
    return load(path).summary()


def _count(pairs):
    out = {}
    for kind, _ in pairs:
        out[kind] = out.get(kind, 0) + 1
    return out


def load(path, name="model", forces=True, exact=False, muscles="degroote", motion=None):
    """Read an OpenSim ``.osim`` model into colloc components.

    Parameters
    ----------
    path : str or path-like
        The ``.osim`` file (any version OpenSim 4 reads; geometry files are not read).
    name : str
        Name of the multibody component: coordinates are ``name.<coordinate>``,
        speeds ``name.<coordinate>_speed``, an actuator's control ``name.<actuator>``.
    forces : bool or list of str
        ``True``: every force element (refusing the types colloc does not read);
        ``False``: none (the skeleton alone); a list: the force elements of these names.
    exact : bool
        ``False`` (default): OpenSim's equations of motion to round-off, including Simbody's
        approximate velocity-product term of a CustomJoint whose rotations do not each follow
        their own coordinate (the Rajagopal knee); ``True``: the exact term (see :class:`Skeleton`).
    muscles : {"degroote", "degroote-only"}
        ``"degroote"``: ``Thelen2003Muscle`` and ``Millard2012EquilibriumMuscle`` become DeGroote–Fregly
        muscles as Moco's ``ModOpReplaceMusclesWithDeGrooteFregly2016`` makes them
        (:mod:`colloc.opensim.muscle_parameters`); ``"degroote-only"``: refuse any muscle that is not a
        ``DeGrooteFregly2016Muscle``.
    motion : callable, optional
        ``motion(body)`` → the coordinates q_ref(t) prescribed from data (MocoInverse's ``PositionMotion``):
        an SX column of ``colloc.TIME`` alone, shape (nq, 1) in the order of ``body.coordinates``, or an
        object whose ``q`` is one (:func:`colloc.goals.prescribed_motion`).  Called on the skeleton
        before any force is built; the muscles are then built on that motion (length, lengthening speed
        and moment arms functions of time, no force applied to the skeleton: the inverse problem's
        path constraint carries them), every other force element as usual.  The returned object is
        kept as ``OsimModel.motion``.

    Returns
    -------
    OsimModel
        Its ``components`` go into a :class:`~colloc.Model` or :class:`~colloc.Problem`.

    Raises
    ------
    FileFormatError
        If the file is missing or not well-formed XML.
    ModelError
        For the first element colloc does not read (its type, name and line), before anything is built.
    """
    path = os.fspath(path)
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_]\w*", name):
        raise ModelError(f"`name` must be an identifier; got {name!r}.")
    for module in registry.FORCE_MODULES:
        try:
            importlib.import_module(f"{__package__}.{module}")
        except ModuleNotFoundError as err:
            if err.name != f"{__package__}.{module}":
                raise
    root = parse(path)
    spec = read_skeleton(root, path)
    check_names(spec)
    model = spec.model
    force_els = _forces(model, path, forces)
    check_muscle_option(force_els, muscles, path)
    constraint_els = _constraints(model, spec, path)
    ignored = _check_components(model, path)
    markers = _markers(model, spec, path)
    skeleton = Skeleton(spec, name, exact=exact)
    skeleton.muscles = muscles
    out = OsimModel(path, skeleton, [skeleton.body], markers, ignored=ignored)
    if motion is not None:
        if not callable(motion):
            raise ModelError(f"`motion` must be a callable taking the skeleton's multibody; got {type(motion).__name__}.")
        out.motion = motion(skeleton.body)
        skeleton.prescribed_motion = getattr(out.motion, "q", out.motion)
    for c in spec.coordinates:
        if c.locked:
            skeleton.body.holonomic(f"{c.name}_locked", skeleton.coordinate(c.name) - c.default)
            out.constraints.append(("locked", c.name))
    for el, f in constraint_els:
        _coupler(skeleton, el, f, path)
        out.constraints.append((el.tag, el.get("name")))
    for el in force_els:
        out.components += registry.FORCES[el.tag](skeleton, el, path)
        out.forces.append((el.tag, el.get("name")))
    return out


def _forces(model, path, keep):
    """The force elements to build, every one checked first."""
    listed = objects(model, "ForceSet") + [el for el in _components(model) if registry.is_force(el.tag)]
    els = [el for el in listed if _enabled(el)]
    if keep is False:
        return []
    if keep is not True:
        if isinstance(keep, str) or not all(isinstance(k, str) for k in keep):
            raise ModelError(f"`forces` must be True, False or a list of force names; got {keep!r}.")
        have = [el.get("name") for el in els]
        for k in keep:
            if k not in have:
                raise ModelError(f"`{path}` has no force `{k}`.{did_you_mean(k, have)}")
        els = [el for el in els if el.get("name") in keep]
    for el in els:
        if el.tag not in registry.FORCES:
            raise ModelError(f"Force `{el.tag}` `{el.get('name')}`{where(el, path)} is not supported; colloc reads "
                             f"{', '.join(sorted(registry.FORCES)) or 'no forces yet'} (load with `forces=False` or a list of the forces to keep).")
        if el.tag in registry.CHECKS:
            registry.CHECKS[el.tag](el, path, model)
    return els


def _components(model):
    """Elements of the model's ``ComponentSet`` and ``<components>``."""
    return objects(model, "ComponentSet") + list(model.find("components") if model.find("components") is not None else [])


def _enabled(el):
    """OpenSim 4's ``appliesForce``/``isEnforced`` and OpenSim 3's ``isDisabled``."""
    return is_true(el, "appliesForce", True) and is_true(el, "isEnforced", True) and not is_true(el, "isDisabled", False)


def _constraints(model, spec, path):
    out = []
    coords = [c.name for c in spec.coordinates]
    for el in objects(model, "ConstraintSet"):
        if not _enabled(el):
            continue
        if el.tag not in CONSTRAINTS:
            raise ModelError(f"Constraint `{el.tag}` `{el.get('name')}`{where(el, path)} is not supported; colloc reads {', '.join(CONSTRAINTS)}.")
        fel = function_child(el, "coupled_coordinates_function", path)
        if fel is None:
            raise ModelError(f"CoordinateCouplerConstraint `{el.get('name')}`{where(el, path)} has no coupled_coordinates_function.")
        f = read_function(fel, path)
        for c in names(el, "independent_coordinate_names") + [node_text(el, "dependent_coordinate_name") or ""]:
            if c not in coords:
                raise ModelError(f"CoordinateCouplerConstraint `{el.get('name')}`{where(el, path)} names coordinate `{c}`, which the model does not have.{did_you_mean(c, coords)}")
        if len(names(el, "independent_coordinate_names")) != 1:
            raise ModelError(f"CoordinateCouplerConstraint `{el.get('name')}`{where(el, path)} has {len(names(el, 'independent_coordinate_names'))} independent coordinates; colloc reads couplings to one.")
        out.append((el, f))
    return out


def _coupler(skeleton, el, f, path):
    """``φ = s f(q_ind) − q_dep = 0`` (OpenSim's ``CompoundFunction``), a holonomic constraint with a multiplier."""
    scale = float(node_text(el, "scale_factor") or 1.0)
    qi = skeleton.coordinate(names(el, "independent_coordinate_names")[0])
    qd = skeleton.coordinate(node_text(el, "dependent_coordinate_name"))
    skeleton.body.holonomic(re.sub(r"\W", "_", el.get("name") or "coupler"), scale * f(qi) - qd)


def _check_components(model, path):
    """Count what is skipped; refuse components that might act on the model (forces are read by `_forces`)."""
    ignored = {}
    for el in _components(model):
        if el.tag not in registry.IGNORED_COMPONENTS and not registry.is_force(el.tag):
            raise ModelError(f"Component `{el.tag}` `{el.get('name')}`{where(el, path)} is not supported; colloc reads forces, "
                             "constraints and frames and skips geometry, markers, controllers and reporters.")
    for tag in ("ControllerSet", "ProbeSet", "ContactGeometrySet", "WrapObjectSet"):
        n = len(objects(model, tag))
        if n:
            ignored[tag] = n
    return ignored


def _markers(model, spec, path):
    out = {}
    for el in objects(model, "MarkerSet"):
        frame = node_text(el, "socket_parent_frame") or node_text(el, "body")
        if frame is None:
            raise ModelError(f"Marker `{el.get('name')}`{where(el, path)} names no frame.")
        ref = spec.resolve(frame if frame.startswith("/") or frame == "ground" or "/" in frame else f"/bodyset/{frame}", "/markerset", el)
        out[el.get("name")] = (ref, floats(el, "location", path, size=3, default=np.zeros(3)))
    return out


__all__ = ["load", "info", "OsimModel"]
