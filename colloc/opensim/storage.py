"""Trajectories under OpenSim's names: ``.sto`` files that OpenSim and Moco read as states and controls.

colloc names a coordinate ``model.hip_flexion_r`` and its speed
``model.hip_flexion_r_speed``; OpenSim names them by state path,
``/jointset/hip_r/hip_flexion_r/value`` and ``…/speed``, and an actuator's control
by the actuator's path, ``/forceset/<actuator>`` or, for one among the model's ``<components>``,
``/<actuator>`` (``MocoTrajectory``'s columns).
:func:`to_opensim` renames a trajectory's columns by
``OsimModel.skeleton.opensim_names``, :func:`from_opensim` renames back, and
:func:`write_sto` writes the renamed trajectory in ``MocoTrajectory``'s layout
(:meth:`colloc.Trajectory.write`).  Columns without an OpenSim name (a ball or
free joint's quaternion, multipliers, slacks) keep colloc's.
"""
from __future__ import annotations

from ..errors import FileFormatError
from ..results.trajectory import Trajectory


def _renamed(traj, names):
    columns = {names.get(n, n): traj[n] for n in traj.names}
    if len(columns) != len(traj.names):
        raise FileFormatError("Two columns of the trajectory get the same name; rename one before converting.")
    kinds = {names.get(n, n): k for n, k in traj.kinds.items()}
    return Trajectory(traj.time, columns, kinds, traj.parameters, traj.metadata)


def to_opensim(traj, model):
    """The trajectory with OpenSim's column names (see the module notes)."""
    return _renamed(traj, dict(model.skeleton.opensim_names))


def from_opensim(traj, model):
    """A trajectory with OpenSim's column names (a Moco solution read with ``Trajectory.read``) under colloc's."""
    return _renamed(traj, {v: k for k, v in model.skeleton.opensim_names.items()})


def write_sto(traj, model, path):
    """Write ``traj`` as a ``.sto`` file with OpenSim's names (``MocoTrajectory`` reads it); returns the path."""
    return to_opensim(traj, model).write(path)


__all__ = ["to_opensim", "from_opensim", "write_sto"]
