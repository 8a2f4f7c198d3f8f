"""OpenSim's forward simulation of a model held by constant controls (run in its own process).

    python osim_standing.py MODEL.osim START.json OUT.npz [--duration 0.5] [--accuracy 1e-9]

``START.json`` holds ``coordinates`` ({name: value}), ``activations`` ({muscle: a}) and ``controls``
({actuator: constant control}).  The model starts at rest at those coordinates and activations, every
actuator's control held constant by a ``PrescribedController``; OpenSim's ``Manager`` integrates it for
``--duration`` seconds.  The ``.npz`` has ``time``, ``coordinates`` (names) and ``values`` (the coordinate
values at every reported time).
"""
from __future__ import annotations

import argparse
import json

import numpy as np
import opensim as osim


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("start")
    ap.add_argument("out")
    ap.add_argument("--duration", type=float, default=0.5)
    ap.add_argument("--accuracy", type=float, default=1e-9)
    args = ap.parse_args()
    start = json.load(open(args.start))
    osim.Logger.setLevelString("error")
    osim.Logger.removeFileSink()  # OpenSim moves into the model's folder to load it; no opensim.log there
    model = osim.Model(args.model)
    actuators = {c.getName(): osim.Actuator.safeDownCast(c) for c in model.getComponentsList()
                 if osim.Actuator.safeDownCast(c) is not None}
    controller = osim.PrescribedController()
    for name, value in start["controls"].items():
        controller.addActuator(actuators[name])
        controller.prescribeControlForActuator(name, osim.Constant(value))
    model.addController(controller)
    state = model.initSystem()
    coords = model.getCoordinateSet()
    for name, value in start["coordinates"].items():
        coords.get(name).setValue(state, value, False)
        coords.get(name).setSpeedValue(state, 0.0)
    for name, value in start["activations"].items():
        osim.Muscle.safeDownCast(actuators[name]).setActivation(state, value)
    manager = osim.Manager(model)
    manager.setIntegratorAccuracy(args.accuracy)
    manager.initialize(state)
    manager.integrate(args.duration)
    table = manager.getStatesTable()
    names = [coords.get(i).getName() for i in range(coords.getSize())]
    labels = list(table.getColumnLabels())
    columns = [labels.index(f"{coords.get(i).getAbsolutePathString()}/value") for i in range(coords.getSize())]
    values = np.array([[table.getRowAtIndex(r)[c] for c in columns] for r in range(table.getNumRows())])
    np.savez(args.out, time=np.array(table.getIndependentColumn()), coordinates=np.array(names), values=values)


if __name__ == "__main__":
    main()
