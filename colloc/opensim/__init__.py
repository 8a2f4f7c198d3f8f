"""OpenSim ``.osim`` models as colloc components.

``colloc.opensim.load(path)`` reads the file with the standard library
(no OpenSim at run time) and returns an :class:`OsimModel` whose
``components`` go into a :class:`~colloc.Model`.  A module-level ``load``
rather than ``Multibody.from_osim``: an ``.osim`` file makes more than one
multibody (muscles are components with states of their own, markers are named
points), and the reader needs a home for the tables that say which elements it
reads (:mod:`colloc.opensim.registry`).

Modules: :mod:`.document` (XML with line numbers), :mod:`.functions`
(OpenSim's functions as SX), :mod:`.spec` (bodies, frames, joints,
coordinates of every file version), :mod:`.joints` (joints as mobilizers),
:mod:`.kinematics` (the :class:`Skeleton`: coordinates, frame poses, the
equations of motion), :mod:`.actuators` (``CoordinateActuator``),
:mod:`.registry` (force builders by element tag), :mod:`.loader` (:func:`load`),
:mod:`.storage` (trajectories under OpenSim's names, `.sto` files Moco reads).
"""
from .kinematics import OsimBody, Skeleton
from .loader import OsimModel, info, load
from .registry import FORCES, register_force
from .storage import from_opensim, to_opensim, write_sto

__all__ = ["load", "info", "OsimModel", "Skeleton", "OsimBody", "FORCES", "register_force", "to_opensim", "from_opensim", "write_sto"]
