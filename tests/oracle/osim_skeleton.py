"""OpenSim's own mass matrix, inverse dynamics and frame poses of an .osim model at random states.

Run as a script with a Python that has the `opensim` package (never beside casadi: the opensim wheel
carries its own libcasadi):

    python tests/oracle/osim_skeleton.py MODEL.osim OUT.npz [NUM_STATES] [SEED]

Every force element is switched off (appliesForce = false), every coordinate unlocked, so that the
numbers are those of the skeleton alone: M(q) from SimbodyMatterSubsystem::calcM and
tau = M a + c(q, v) - g(q) from InverseDynamicsSolver::solve (which ignores constraints). Coordinates are
drawn uniformly within their ranges (a range wider than 2 pi is cut to +-pi about its middle), speeds and
accelerations from N(0, 1). Arrays are in the model's coordinate order (`coordinates`); poses of
every body and PhysicalOffsetFrame in ground are stored by absolute path (`frames`), with their angular
velocity `w` and the velocity of their origin `pdot` in ground; `coupling` holds the value each
CoordinateCouplerConstraint (`couplers`) requires of its dependent coordinate at each state.
"""
import sys

import numpy as np
import opensim as osim


def main(model_path, out, num_states=20, seed=0):
    model = osim.Model(model_path)
    for comp in model.getComponentsList():
        force = osim.Force.safeDownCast(comp)
        if force is not None:
            osim.Force.safeDownCast(model.updComponent(comp.getAbsolutePathString())).set_appliesForce(False)
    coords = model.getCoordinateSet()
    for i in range(coords.getSize()):
        coords.get(i).set_locked(False)
    state = model.initSystem()
    names = [coords.get(i).getName() for i in range(coords.getSize())]
    nu = state.getNU()
    uindex = []
    for i in range(len(names)):
        state.setU(osim.Vector(nu, 0.0))
        coords.get(i).setSpeedValue(state, 1.0)
        uindex.append(int(np.argmax(np.abs(np.array([state.getU().get(k) for k in range(nu)])))))
    frames = [c.getAbsolutePathString() for c in model.getComponentsList()
              if c.getConcreteClassName() in ("Body", "PhysicalOffsetFrame")]
    rng = np.random.default_rng(seed)
    lo = np.array([coords.get(i).getRangeMin() for i in range(len(names))])
    hi = np.array([coords.get(i).getRangeMax() for i in range(len(names))])
    wide = hi - lo > 2 * np.pi
    mid = 0.5 * (lo + hi)
    lo, hi = np.where(wide, mid - np.pi, lo), np.where(wide, mid + np.pi, hi)
    q = rng.uniform(lo, hi, size=(num_states, len(names)))
    v = rng.normal(size=(num_states, len(names)))
    a = rng.normal(size=(num_states, len(names)))
    M = np.zeros((num_states, len(names), len(names)))
    tau = np.zeros((num_states, len(names)))
    R = np.zeros((num_states, len(frames), 3, 3))
    p = np.zeros((num_states, len(frames), 3))
    w = np.zeros((num_states, len(frames), 3))
    pdot = np.zeros((num_states, len(frames), 3))
    solver = osim.InverseDynamicsSolver(model)
    matter = model.getMatterSubsystem()
    for k in range(num_states):
        for i in range(len(names)):
            coords.get(i).setValue(state, q[k, i], False)
            coords.get(i).setSpeedValue(state, v[k, i])
        model.realizeVelocity(state)
        Mk = osim.Matrix()
        matter.calcM(state, Mk)
        Mu = np.array([[Mk.get(r, c) for c in range(nu)] for r in range(nu)])
        M[k] = Mu[np.ix_(uindex, uindex)]
        udot = np.zeros(nu)
        udot[uindex] = a[k]
        t = solver.solve(state, osim.Vector.createFromMat(udot))
        tau[k] = np.array([t.get(j) for j in range(nu)])[uindex]
        model.realizeVelocity(state)
        for f, path in enumerate(frames):
            frame = osim.Frame.safeDownCast(model.getComponent(path))
            X = frame.getTransformInGround(state)
            Rm, pv = X.R(), X.p()
            R[k, f] = [[Rm.get(r, c) for c in range(3)] for r in range(3)]
            p[k, f] = [pv.get(r) for r in range(3)]
            V = frame.getVelocityInGround(state)
            w[k, f] = [V.get(0).get(r) for r in range(3)]
            pdot[k, f] = [V.get(1).get(r) for r in range(3)]
    couplers = [osim.CoordinateCouplerConstraint.safeDownCast(c) for c in model.getComponentsList()
                if c.getConcreteClassName() == "CoordinateCouplerConstraint"]
    coupling = np.zeros((num_states, len(couplers)))
    for i, c in enumerate(couplers):  # s f(q_independent): what the dependent coordinate must equal
        ind = names.index(c.getIndependentCoordinateNames().get(0))
        scale = osim.PropertyHelper.getValueDouble(c.getPropertyByName("scale_factor"))
        for k in range(num_states):
            coupling[k, i] = scale * c.getFunction().calcValue(osim.Vector(1, float(q[k, ind])))
    np.savez(out, coordinates=np.array(names), couplers=np.array([c.getName() for c in couplers], dtype=str),
             coupling=coupling, frames=np.array(frames), q=q, v=v, a=a, M=M, tau=tau, R=R, p=p, w=w, pdot=pdot,
             gravity=np.array([model.getGravity().get(i) for i in range(3)]))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *(int(x) for x in sys.argv[3:5]))
