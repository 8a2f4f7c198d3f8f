"""Which element types of an ``.osim`` file colloc reads, ignores or refuses: one table, filled by modules.

Force elements are built by the functions in :data:`FORCES`, keyed by the
element's tag (``"CoordinateActuator"``, ``"DeGrooteFregly2016Muscle"``, ...).
A builder has the signature ``builder(skeleton, element, path) -> list``:

* ``skeleton`` is the :class:`~colloc.opensim.kinematics.Skeleton` (coordinates,
  ``q``, ``v``, ``qdot``, ``frame_pose``, ``add_generalized_force``, ``add_control``);
* ``element`` is the force's XML element (:class:`~colloc.opensim.document.Node`,
  with ``sourceline``), ``path`` the file (for error messages, through
  :func:`~colloc.opensim.document.where`);
* it returns the extra :class:`~colloc.Component` s it made (a muscle with its
  own states), ``[]`` if it only added generalised forces and controls.

A module registers its builders with :func:`register_force` when it is
imported; :func:`colloc.opensim.load` imports the modules listed in
:data:`FORCE_MODULES` (those that exist) before reading a file.  Forces are read from the ``ForceSet`` and from the model's
``<components>`` (where Moco's examples put their contact forces).  A force tag
that no builder claims is refused, naming the element, its name and its line,
before anything is built.  :data:`CHECKS` may hold a validator per tag
``check(element, path, model_element)`` run in that first pass, so a builder's
own bad-input errors can come before anything is built too.
"""
from __future__ import annotations

#: Force element tag -> builder(skeleton, element, path) -> list of extra components.
FORCES = {}
#: Force element tag -> check(element, path, model_element), run before anything is built.
CHECKS = {}
#: Modules of this package that register force builders when imported (missing ones are skipped).
FORCE_MODULES = ("actuators", "muscles", "paths", "contact", "springs")
#: Components that change nothing in the dynamics, skipped where a ComponentSet or `components` lists them.
IGNORED_COMPONENTS = {"PhysicalOffsetFrame", "Marker", "FrameGeometry", "Mesh", "Sphere", "Cylinder", "Brick",
                      "Ellipsoid", "Arrow", "Line", "Cone", "Torus", "ContactSphere", "ContactHalfSpace",
                      "ContactMesh", "ContactEllipsoid", "TableReporter", "TableReporterVec3",
                      "ConsoleReporter", "PrescribedController", "ControlSetController", "Controller"}

#: Endings of OpenSim's force type names: such an element among the model's components is a force.
FORCE_ENDINGS = ("Force", "Muscle", "Actuator", "Spring", "Damper", "Ligament", "Bushing")


def is_force(tag):
    """Whether an element type is a force (registered, or named as OpenSim names its forces)."""
    return tag in FORCES or tag.endswith(FORCE_ENDINGS)


def register_force(tag, builder, check=None):
    """Make ``builder`` read force elements ``<tag>`` (see the module notes); ``check`` validates first."""
    FORCES[tag] = builder
    if check is not None:
        CHECKS[tag] = check


__all__ = ["FORCES", "CHECKS", "FORCE_MODULES", "IGNORED_COMPONENTS", "FORCE_ENDINGS", "is_force", "register_force"]
