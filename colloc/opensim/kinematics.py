"""colloc/opensim/kinematics.py — the skeleton of an ``.osim`` model: coordinates, frames, equations of motion.

:class:`Skeleton` turns a :class:`~colloc.opensim.spec.SkeletonSpec` into a
kinematic tree of :mod:`colloc.model.rigidbody` (one tree body per moving joint; a
``WeldJoint``'s child is merged into its parent, as Pinocchio merges fixed
URDF joints) and a :class:`OsimBody` multibody component whose mass matrix
(CRBA) and residual (RNEA) come from that tree.  What force elements need:

* ``coordinates`` / ``speeds``: local variable names, coordinates in file order
  (joint by joint); ``q``, ``v`` (SX columns) and ``qdot = N(q) v`` (``N = I``
  but for the quaternion of a ``BallJoint`` or ``FreeJoint``);
* ``coordinate(name)``, ``speed(name)``: one SX symbol by its OpenSim name;
* ``frame_pose(name) -> (R (3, 3), p (3, 1))`` in ground (``x_ground = R x + p``)
  for every body and ``PhysicalOffsetFrame``, by name or absolute path
  (``"femur_r"``, ``"/bodyset/femur_r"``, ``"/jointset/hip_r/femur_r_offset"``);
  ``point_position(frame, r)`` for a point fixed in a frame; ``frame_velocity(name) -> (ω, ṗ)``
  and ``point_velocity(frame, r)`` in ground;
* ``add_generalized_force(source, tau)``: a generalised force in v-space
  (shape (nv, 1)); ``add_control(name, bounds)``: a control of the multibody;
* ``opensim_names``: ``{colloc variable name: OpenSim name}`` (``model.hip_flexion_r`` ->
  ``/jointset/hip_r/hip_flexion_r/value``, a control -> the actuator's path ``/forceset/<actuator>`` or ``/<actuator>``), which
  force elements extend with their own states (``/forceset/<muscle>/activation``).

Frames are fixed on tree bodies: ``placement[path] = (tree body, R, p)``.
"""
from __future__ import annotations

import re

import casadi as ca
import numpy as np

from ..errors import ModelError, did_you_mean
from ..model.rigidbody import Body, Tree, quaternion_rate_matrix, quaternion_rotation
from ..model.urdf import RobotBody
from .document import where
from .joints import tree_joint
from .spec import GROUND

#: Moco's default speed bounds (MocoPhase::default_speed_bounds).
DEFAULT_SPEED_BOUNDS = (-50.0, 50.0)


class OsimBody(RobotBody):
    """The :class:`~colloc.Multibody` of an ``.osim`` skeleton (residual by RNEA, as for a URDF robot)."""


class Skeleton:
    """Bodies, joints and frames of an OpenSim model as SX in its coordinates (see the module notes).

    Parameters
    ----------
    spec : SkeletonSpec
    name : str
        Name of the multibody component; states ``name.<coordinate>`` and ``name.<coordinate>_speed``.
    exact : bool
        ``False`` (default): a CustomJoint's velocity-product term is Simbody's, so that the
        equations are OpenSim's to round-off; ``True``: the exact ``Ṡu`` (they differ only for a
        CustomJoint whose k-th rotation is not a function of its k-th coordinate alone, such as
        the Rajagopal model's knee; see :func:`colloc.opensim.joints._custom_terms`).
    """

    def __init__(self, spec, name, exact=False):
        self.spec, self.path, self.exact, self.name = spec, spec.path, exact, name
        self.placement = {GROUND: (-1, np.eye(3), np.zeros(3))}
        bodies, joints = self._tree(spec)
        self.tree = Tree(bodies)
        self.joint_of_coordinate = {}
        self.coordinates, self.speeds, cb = [], [], {}
        self.opensim_names = {}  # colloc variable name -> OpenSim's (state path, or actuator path for a control)
        for j, b in zip(joints, bodies):
            self._names(j, b, cb)
        free = [b for b in bodies if b.kind in ("free", "spherical")]
        kin = self._kinematics if free else None
        sb = {s: DEFAULT_SPEED_BOUNDS for s in self.speeds}
        self.body = OsimBody(name, coordinates=self.coordinates, speeds=self.speeds, kinematics=kin,
                             coordinate_bounds=cb, speed_bounds=sb)
        body = self.body
        self._joint = self.tree.joint_poses(body.q)
        self._world = self.tree.world_poses(body.q, self._joint)
        self._relative = {}
        body.tree, body.joint_names = self.tree, [j.name for j in joints]
        body._frames = {k: v for k, v in self.placement.items()}
        body._world = self._world
        body.links = list(self.placement)
        body.moving_links = [p for p in spec.bodies if p in self.placement]
        body.skeleton = self._edges(spec)
        g = spec.gravity
        body.mass_matrix = self.tree.mass_matrix(body.q)
        body.bias_force = self.tree.inverse_dynamics(body.q, body.v, ca.SX.zeros(self.tree.nv, 1), g)
        body._inverse_dynamics = self.tree.inverse_dynamics(body.q, body.v, body.a, g)
        body.display_rotation = _upright(g)
        for path in body.moving_links:  # named points: what `colloc solve --animate` looks for before solving
            body.point(_identifier(spec.bodies[path].name), self.frame_pose(path)[1])
        for b in free:
            s = self.tree.q_slices[bodies.index(b)]
            body.holonomic(f"{b.name}_unit_quaternion", ca.sumsqr(body.q[s][-4:]) - 1)

    # -- symbols ---------------------------------------------------------------------------------
    q = property(lambda self: self.body.q, doc="Coordinates, SX shape (nq, 1).")
    v = property(lambda self: self.body.v, doc="Speeds, SX shape (nv, 1).")
    qdot = property(lambda self: self.body.qdot, doc="``N(q) v``, SX shape (nq, 1).")

    def coordinate(self, name):
        """The SX symbol of coordinate ``name`` (OpenSim's name)."""
        return self.body.q[self._index(name, self.coordinates, "coordinate")]

    def speed(self, name):
        """The SX symbol of the speed of coordinate ``name`` (or of a speed by its local name)."""
        key = name if name in self.speeds else f"{name}_speed"
        return self.body.v[self._index(key, self.speeds, "speed")]

    def _index(self, name, names, what):
        if name not in names:
            raise ModelError(f"Model `{self.name}` has no {what} `{name}`.{did_you_mean(name, names)}")
        return names.index(name)

    # -- frames ----------------------------------------------------------------------------------
    @property
    def frames(self):
        """Absolute paths of every body and frame (``/ground`` first)."""
        return list(self.placement)

    def frame_path(self, name):
        """Absolute path of a frame given by path or by name."""
        if name in self.placement:
            return name
        hits = [p for p in self.placement if p.split("/")[-1] == name.strip("/").split("/")[-1]]
        if name.startswith("/") or len(hits) != 1:
            raise ModelError(f"Model `{self.name}` has no body or frame `{name}`.{did_you_mean(name, list(self.placement))}")
        return hits[0]

    def frame_pose(self, name):
        """``(R (3, 3), p (3, 1))`` SX in q: the frame in ground, ``x_ground = R x_frame + p``."""
        i, R, p = self.placement[self.frame_path(name)]
        if i < 0:
            return ca.SX(ca.DM(R)), ca.SX(ca.DM(p.reshape(3, 1)))
        Rb, pb = self._world[i]
        return ca.mtimes(Rb, ca.DM(R)), pb + ca.mtimes(Rb, ca.DM(p.reshape(3, 1)))

    def frame_body(self, name):
        """Index of the tree body ``name`` is fixed on (−1: ground)."""
        return self.placement[self.frame_path(name)][0]

    def common_body(self, names):
        """Index of the innermost tree body (−1: ground) that every frame of ``names`` hangs from."""
        chains = []
        for name in names:
            chain, i = [], self.frame_body(name)
            while i >= 0:
                chain.append(i)
                i = self.tree.bodies[i].parent
            chains.append(chain[::-1])
        common = -1
        for level in zip(*chains):
            if any(i != level[0] for i in level):
                break
            common = level[0]
        return common

    def relative_pose(self, name, base):
        """``(R, p)`` SX of frame ``name`` in the frame of tree body ``base`` (one of its ancestors, or −1: ground).

        Composed from the joint poses between ``base`` and the frame's body only, so it depends on those joints'
        coordinates alone: a muscle's path in its bodies' innermost common body depends on the joints it
        crosses, where in ground it would depend on every joint above them, only to cancel numerically.
        Poses of a body in an ancestor are kept and shared by every caller.
        """
        i, R, p = self.placement[self.frame_path(name)]
        Rb, pb = self._chain(i, base)
        return ca.mtimes(Rb, ca.DM(R)), pb + ca.mtimes(Rb, ca.DM(p.reshape(3, 1)))

    def _chain(self, i, base):
        if i == base:
            return ca.SX.eye(3), ca.SX.zeros(3, 1)
        if i < 0:
            raise ModelError(f"Tree body {base} of model `{self.name}` is not an ancestor of the frame asked for.")
        key = (i, base)
        if key not in self._relative:
            Rp, pp = self._chain(self.tree.bodies[i].parent, base)
            R, p = self._joint[i]
            self._relative[key] = (R, p) if self.tree.bodies[i].parent == base else (ca.mtimes(Rp, R), pp + ca.mtimes(Rp, p))
        return self._relative[key]

    def point_position(self, frame, location):
        """Position in ground of the point fixed at ``location`` (3,) in ``frame``, SX (3, 1)."""
        R, p = self.frame_pose(frame)
        return p + ca.mtimes(R, ca.DM(np.asarray(location, dtype=float).reshape(3, 1)))

    def frame_velocity(self, name):
        """``(ω, ṗ)``: the frame's angular velocity and its origin's velocity, in ground, SX (3, 1) in q and v.

        ``[ω]× = Ṙ Rᵀ`` and ``ṗ = (∂p/∂q) q̇`` with ``q̇ = N(q) v`` (OpenSim's ``getVelocityInGround``).
        """
        R, p = self.frame_pose(name)
        W = ca.mtimes(ca.reshape(ca.jtimes(ca.vec(R), self.q, self.qdot), 3, 3), R.T)
        return ca.vertcat(W[2, 1], W[0, 2], W[1, 0]), ca.jtimes(p, self.q, self.qdot)

    def point_velocity(self, frame, location):
        """Velocity in ground of the point fixed at ``location`` (3,) in ``frame``, SX (3, 1) in q and v."""
        return ca.jtimes(self.point_position(frame, location), self.q, self.qdot)

    # -- what force elements add -----------------------------------------------------------------
    def add_generalized_force(self, source, tau):
        """Add ``tau`` (SX, shape (nv, 1), in v-space) to the generalised forces, under the name ``source``."""
        self.body.apply_generalized_force(source, tau)

    def add_control(self, name, bounds=None):
        """Declare a control of the multibody (``<model>.<name>``) and return its symbol."""
        return self.body.control(name, bounds)

    # -- building --------------------------------------------------------------------------------
    def _tree(self, spec):
        """Tree bodies in topological order (file order where it already is) and their joints."""
        pending, bodies, joints = list(spec.joints), [], []
        while pending:
            ready = next((j for j in pending if self._placed(spec, j.parent)), None)
            if ready is None:
                j = pending[0]
                raise ModelError(f"Joint `{j.name}`{where(j.element, spec.path)} hangs from `{j.parent}`, which no chain of joints connects to ground.")
            pending.remove(ready)
            self._add_joint(spec, ready, bodies, joints)
        for path in spec.bodies:
            if path not in self.placement:
                raise ModelError(f"Body `{path}`{where(spec.bodies[path].element, spec.path)} is the child of no joint; every body needs one.")
        for path in spec.frames:
            self._place(spec, path)
        return bodies, joints

    def _base(self, spec, path):
        """``(body path, R, p)``: the body a frame is fixed on and the frame's pose on it."""
        R, p = np.eye(3), np.zeros(3)
        seen = set()
        while path in spec.frames:
            if path in seen:
                raise ModelError(f"Frame `{path}`{where(spec.frames[path].element, spec.path)} is fixed on itself through a loop of frames.")
            seen.add(path)
            f = spec.frames[path]
            R, p = f.R @ R, f.R @ p + f.p
            path = f.parent
        return path, R, p

    def _placed(self, spec, path):
        return self._base(spec, path)[0] in self.placement

    def _place(self, spec, path):
        base, R, p = self._base(spec, path)
        i, Rb, pb = self.placement[base]
        self.placement[path] = (i, Rb @ R, Rb @ p + pb)
        return self.placement[path]

    def _add_joint(self, spec, joint, bodies, joints):
        ti, Rf, pf = self._place(spec, joint.parent)
        child, Rc, pc = self._base(spec, joint.child)
        if child not in spec.bodies:
            raise ModelError(f"Joint `{joint.name}`{where(joint.element, spec.path)} has child frame `{joint.child}`, which is not on a body.")
        if child in self.placement:
            raise ModelError(f"Body `{child}` is the child of a second joint, `{joint.name}`{where(joint.element, spec.path)}; closed loops need a constraint, which colloc does not read from joints.")
        kind, axis, motion, product = tree_joint(joint, spec.path, self.exact)
        Rcb, pcb = Rc.T, -Rc.T @ pc  # the child body in the child (M) frame
        if kind == "free" and ti >= 0:
            raise ModelError(f"FreeJoint `{joint.name}`{where(joint.element, spec.path)} hangs from a moving body; colloc reads free joints whose parent is ground.")
        if joint.kind == "WeldJoint":
            self.placement[child] = (ti, Rf @ Rcb, pf + Rf @ pcb)
        else:
            bodies.append(Body(joint.name, kind, ti, _exact(Rf), _exact(pf), axis if axis is not None else np.array([0.0, 0.0, 1.0]),
                               motion=motion, dofs=len(joint.coordinates), terms=product))
            joints.append(joint)
            self.placement[child] = (len(bodies) - 1, Rcb, pcb)
        ti, R, p = self.placement[child]
        if ti >= 0:
            b = spec.bodies[child]
            _merge_inertia(bodies[ti], b.mass, b.com, b.inertia, R, p)

    def _names(self, joint, tb, cb):
        if tb.kind in ("free", "spherical"):
            trans = [c.name for c in joint.coordinates[3:]]
            quat = [f"{joint.name}_q{k}" for k in "wxyz"]
            coords = trans + quat
            speeds = [f"{joint.name}_{k}" for k in ("vx", "vy", "vz")[:len(trans)] + ("wx", "wy", "wz")]
            cb.update({c: (-1.0, 1.0) for c in quat})
            for c in joint.coordinates[3:]:  # a free joint's translations are OpenSim's (in the parent frame)
                if np.isfinite(c.range).all():
                    cb[c.name] = c.range
                self.opensim_names[f"{self.name}.{c.name}"] = f"/jointset/{joint.name}/{c.name}/value"
        else:
            coords, speeds = [c.name for c in joint.coordinates], [f"{c.name}_speed" for c in joint.coordinates]
            for c in joint.coordinates:
                if np.isfinite(c.range).all():
                    cb[c.name] = c.range
                self.opensim_names[f"{self.name}.{c.name}"] = f"/jointset/{joint.name}/{c.name}/value"
                self.opensim_names[f"{self.name}.{c.name}_speed"] = f"/jointset/{joint.name}/{c.name}/speed"
        for c in coords:
            self.joint_of_coordinate[c] = joint.name
        self.coordinates += coords
        self.speeds += speeds

    def _kinematics(self, q):
        """``N(q)``: identity but for each free joint's block ``diag(R(quat), ½ Q(quat))``."""
        blocks = []
        for b, sq in zip(self.tree.bodies, self.tree.q_slices):
            if b.kind == "free":
                quat = q[sq][3:7]
                blocks.append(ca.diagcat(quaternion_rotation(quat), 0.5 * quaternion_rate_matrix(quat)))
            elif b.kind == "spherical":
                blocks.append(0.5 * quaternion_rate_matrix(q[sq]))
            else:
                blocks.append(ca.SX.eye(sq.stop - sq.start))
        return ca.diagcat(*blocks)

    def _edges(self, spec):
        """``(parent body, child body)`` of every joint, for drawing."""
        out = []
        for j in spec.joints:
            out.append((self._base(spec, j.parent)[0], self._base(spec, j.child)[0]))
        return out


def _upright(gravity):
    """Rotation that turns the model's up (against gravity; OpenSim's y by default) to the drawing's z."""
    g = np.asarray(gravity, dtype=float)
    if not np.linalg.norm(g):
        return None
    z = -g / np.linalg.norm(g)
    x = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = x - (x @ z) * z
    x /= np.linalg.norm(x)
    return _exact(np.vstack([x, np.cross(z, x), z]))


def _identifier(name):
    ident = re.sub(r"\W", "_", name)
    return ident if re.match(r"[A-Za-z_]", ident) else f"b_{ident}"


def _exact(x):
    """Round-off zeros made exact: ``cos(π/2)`` would make every product with it dense in SX."""
    x = np.array(x, dtype=float)
    x[np.abs(x) < 1e-14] = 0.0
    return x


def _merge_inertia(body, mass, com, inertia, R, p):
    """Add a rigid part (mass, COM and inertia about it in its own frame at pose (R, p) on ``body``) to ``body``."""
    if not mass:
        return
    c = p + R @ com
    Ic = R @ inertia @ R.T
    total = body.mass + mass
    new_com = (body.mass * body.com + mass * c) / total
    shift = lambda m, d: m * (d @ d * np.eye(3) - np.outer(d, d))  # parallel-axis term
    body.inertia = body.inertia + shift(body.mass, body.com - new_com) + Ic + shift(mass, c - new_com)
    body.mass, body.com = total, new_com


__all__ = ["Skeleton", "OsimBody", "DEFAULT_SPEED_BOUNDS"]
