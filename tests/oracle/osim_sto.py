"""What OpenSim reads from a .sto file colloc wrote (run with a Python that has `opensim`).

    python tests/oracle/osim_sto.py MODEL.osim FILE.sto OUT.npz [replace-muscles]

Reads FILE.sto as a TimeSeriesTable and as a MocoTrajectory, and turns its states into a
StatesTrajectory of MODEL (which refuses a column that is not one of the model's states), then records
the state and control names and values OpenSim sees, the path of every actuator of the model (the
names Moco gives their controls), and each coordinate's value at each time as
OpenSim's own state holds it.  With ``replace-muscles`` the model's muscles are first replaced as Moco's
``ModOpReplaceMusclesWithDeGrooteFregly2016`` does (``DeGrooteFregly2016Muscle.replaceMuscles``).
"""
import sys

import numpy as np
import opensim as osim


def main(model_path, sto, out, replace=""):
    osim.Logger.removeFileSink()  # OpenSim moves into the model's folder to load it; no opensim.log there
    table = osim.TimeSeriesTable(sto)
    traj = osim.MocoTrajectory(sto)
    model = osim.Model(model_path)
    if replace == "replace-muscles":
        osim.DeGrooteFregly2016Muscle.replaceMuscles(model)
    model.initSystem()
    states = traj.exportToStatesTable()
    st = osim.StatesTrajectory.createFromStatesTable(model, states, True, False)  # missing ok, extra not
    coords = model.getCoordinateSet()
    names = [coords.get(i).getName() for i in range(coords.getSize())]
    values = np.array([[coords.get(i).getValue(st.get(k)) for i in range(len(names))] for k in range(st.getSize())])
    speeds = np.array([[coords.get(i).getSpeedValue(st.get(k)) for i in range(len(names))] for k in range(st.getSize())])
    actuators = [c.getAbsolutePathString() for c in model.getComponentsList() if osim.Actuator.safeDownCast(c) is not None]
    controls = traj.getControlsTrajectory().to_numpy() if traj.getNumControls() else np.zeros((0, 0))
    np.savez(out, labels=np.array(list(table.getColumnLabels()), dtype=str),
             state_names=np.array(list(traj.getStateNames()), dtype=str),
             control_names=np.array(list(traj.getControlNames()), dtype=str), actuators=np.array(actuators, dtype=str),
             time=np.array(traj.getTimeMat()).ravel(), coordinates=np.array(names, dtype=str),
             values=values, speeds=speeds, controls=controls)


if __name__ == "__main__":
    main(*sys.argv[1:5])
