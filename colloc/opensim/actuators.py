"""``CoordinateActuator``: a generalised force ``optimal_force × control`` on one coordinate.

OpenSim's ``CoordinateActuator::computeActuation`` is ``getControl(s) *
getOptimalForce()``, applied to the coordinate's mobility.  The control is a
control of the multibody named after the actuator, bounded by ``min_control``
and ``max_control`` (Moco's default control bounds); its OpenSim name is the actuator's path, as Moco names
the control: ``/forceset/<name>`` in the ForceSet, ``/<name>`` among the model's ``<components>``.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from ..errors import ModelError
from .document import force_path, node_text, where
from .registry import register_force


def coordinate_actuator(skeleton, el, path):
    """Read a ``<CoordinateActuator>``: one control, one generalised force; no extra component."""
    name = el.get("name")
    coord = node_text(el, "coordinate") or node_text(el, "socket_coordinate")
    if coord is None:
        raise ModelError(f"CoordinateActuator `{name}`{where(el, path)} names no coordinate.")
    coord = coord.strip("/").split("/")[-1]
    if f"{coord}_speed" not in skeleton.speeds:
        raise ModelError(f"CoordinateActuator `{name}`{where(el, path)} acts on `{coord}`, which is not a coordinate with a speed of its own in the model.")
    lo = node_text(el, "min_control")
    hi = node_text(el, "max_control")
    bounds = (float(lo) if lo is not None else -np.inf, float(hi) if hi is not None else np.inf)
    u = skeleton.add_control(name, bounds if np.isfinite(bounds).any() else None)
    force = float(node_text(el, "optimal_force") or 1.0)
    tau = ca.SX.zeros(len(skeleton.speeds), 1)
    tau[skeleton.speeds.index(f"{coord}_speed")] = force * u
    skeleton.add_generalized_force(name, tau)
    skeleton.opensim_names[f"{skeleton.name}.{name}"] = force_path(skeleton.spec.model, el)
    return []


register_force("CoordinateActuator", coordinate_actuator)

__all__ = ["coordinate_actuator"]
