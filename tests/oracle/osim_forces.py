"""OpenSim as the oracle for the force elements of an ``.osim`` model (run in its own process).

    python osim_forces.py MODEL.osim OUT.npz [--states 20] [--seed 0]

OpenSim's Python package carries its own libcasadi, so it cannot share a process with colloc: the
tests run this script with the same interpreter in a subprocess and compare with the ``.npz`` it writes.

The model's muscles are first replaced as Moco does (``DeGrooteFregly2016Muscle.replaceMuscles``).  At
``--states`` random states (every free coordinate uniform in its range, speeds uniform in [−1, 1] (±0.1 where a sphere touches),
projected onto the constraints by ``assemble``/``projectU``; with contact spheres, every other state
lowers the model so that its first sphere touches the floor) it records

* per muscle: length, lengthening speed, ``computeMomentArm`` about every coordinate, and at a random
  activation, normalized tendon force and excitation: tendon force, fiber length and the state derivatives;
* per coordinate: the coupling vector of OpenSim's ``MomentArmSolver`` (u with this coordinate's
  speed 1, projected onto the constraints), so that a moment arm can be compared with −(∂ℓ/∂q)·coupling;
* per ``SmoothSphereHalfSpaceForce``, ``CoordinateLimitForce`` and ``SpringGeneralizedForce``: its
  ``getRecordValues``;
* the DeGroote–Fregly properties of every muscle after the replacement.
"""
from __future__ import annotations

import argparse
import math

import numpy as np
import opensim as osim

PROPERTIES = ("max_isometric_force", "optimal_fiber_length", "tendon_slack_length", "pennation_angle_at_optimal",
              "max_contraction_velocity", "activation_time_constant", "deactivation_time_constant",
              "fiber_damping", "passive_fiber_strain_at_one_norm_force", "tendon_strain_at_one_norm_force",
              "active_force_width_scale", "activation_dynamics_smoothing", "min_control", "max_control",
              "ignore_tendon_compliance", "ignore_activation_dynamics", "ignore_passive_fiber_force")
RECORDED = ("SmoothSphereHalfSpaceForce", "CoordinateLimitForce", "SpringGeneralizedForce")


def muscle_properties(muscle):
    out = {}
    for key in PROPERTIES:
        getter = {"min_control": muscle.getMinControl, "max_control": muscle.getMaxControl}.get(key)
        out[key] = float((getter or getattr(muscle, "get_" + key))())
    return out


def constraint_jacobian(model, state):
    """G (m × nu) of the model's constraints at ``state`` (Position stage)."""
    model.realizePosition(state)
    G = osim.Matrix()
    model.getMatterSubsystem().calcG(state, G)
    return np.array([[G.get(i, j) for j in range(G.ncol())] for i in range(G.nrow())]).reshape(G.nrow(), state.getNU())


def project(G, u):
    """Simbody's projectU with unit weights: the closest u with G u = 0 (no coordinate is locked here)."""
    if G.shape[0] == 0:
        return u
    return u - np.linalg.pinv(G) @ (G @ u)


def coupling(G, i, n):
    """MomentArmSolver::computeCouplingVector: u with u_i = 1 projected, divided by its new u_i."""
    p = project(G, np.eye(n)[i])
    return p / p[i]


def lower_to_floor(model, state, rng):
    """Shift ``pelvis_ty`` so that the first contact sphere's indentation is uniform in [−5, 10] mm."""
    coords = model.getCoordinateSet()
    if not coords.contains("pelvis_ty"):
        return
    sphere = osim.ContactSphere.safeDownCast(model.getContactGeometrySet().get(0))
    if sphere is None:
        return
    model.realizePosition(state)
    centre = sphere.getFrame().findStationLocationInGround(state, sphere.get_location())
    depth = rng.uniform(-0.005, 0.01)
    ty = coords.get("pelvis_ty")
    ty.setValue(state, ty.getValue(state) - (centre.get(1) - sphere.getRadius()) - depth, False)


def random_state(model, state, rng, touch):
    coords = model.getCoordinateSet()
    for i in range(coords.getSize()):
        c = coords.get(i)
        if not c.getLocked(state):
            c.setValue(state, rng.uniform(c.getRangeMin(), c.getRangeMax()), False)
        c.setSpeedValue(state, rng.uniform(-1.0, 1.0) * (0.1 if touch else 1.0))
    if touch:
        lower_to_floor(model, state, rng)
    model.assemble(state)
    G = constraint_jacobian(model, state)
    u = project(G, np.array([state.getU().get(i) for i in range(state.getNU())]))
    for i in range(state.getNU()):
        state.updU().set(i, float(u[i]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--states", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    osim.Logger.setLevelString("error")
    osim.Logger.removeFileSink()  # OpenSim moves into the model's folder to load it; no opensim.log there
    model = osim.Model(args.model)
    osim.DeGrooteFregly2016Muscle.replaceMuscles(model)
    state = model.initSystem()
    coords = model.getCoordinateSet()
    nq = coords.getSize()
    # forces live in the ForceSet or, in newer files, directly among the model's components
    forces = [c for c in model.getComponentsList() if osim.Force.safeDownCast(c) is not None]
    muscles = [osim.DeGrooteFregly2016Muscle.safeDownCast(f) for f in forces
               if f.getConcreteClassName() == "DeGrooteFregly2016Muscle"]
    forces = [getattr(osim, f.getConcreteClassName()).safeDownCast(f) for f in forces
              if f.getConcreteClassName() in RECORDED]
    recorded = forces
    touch = model.getContactGeometrySet().getSize() > 0
    S, m = args.states, len(muscles)
    out = {k: np.full((S, m), np.nan) for k in ("length", "speed", "activation", "tendon_state", "excitation",
                                                  "tendon_force", "fiber_length", "activation_dot", "tendon_state_dot")}
    out["moment_arm"] = np.zeros((S, m, nq))
    out["coupling"] = np.zeros((S, nq, nq))
    out["q"], out["u"] = np.zeros((S, nq)), np.zeros((S, nq))
    out["records"] = np.zeros((S, len(recorded), 12))
    for k in range(S):
        random_state(model, state, rng, touch and k % 2 == 0)
        controls = osim.Vector(model.getNumControls(), 0.0)
        for j, musc in enumerate(muscles):
            a, f, e = rng.uniform(0.01, 1.0), rng.uniform(0.05, 1.2), rng.uniform(0.0, 1.0)
            out["activation"][k, j], out["excitation"][k, j] = a, e
            if not musc.get_ignore_activation_dynamics():
                musc.setActivation(state, a)
            if not musc.get_ignore_tendon_compliance():
                musc.setStateVariableValue(state, "normalized_tendon_force", f)
                out["tendon_state"][k, j] = f
            musc.setControls(osim.Vector(1, e), controls)
        model.realizeVelocity(state)
        model.setControls(state, controls)
        model.realizeAcceleration(state)
        G = constraint_jacobian(model, state)
        for i in range(nq):
            out["q"][k, i] = coords.get(i).getValue(state)
            out["u"][k, i] = coords.get(i).getSpeedValue(state)
            out["coupling"][k, i] = coupling(G, i, nq)
        for j, musc in enumerate(muscles):
            out["length"][k, j] = musc.getLength(state)
            out["speed"][k, j] = musc.getLengtheningSpeed(state)
            out["tendon_force"][k, j] = musc.getTendonForce(state)
            out["fiber_length"][k, j] = musc.getFiberLength(state)
            if not musc.get_ignore_activation_dynamics():
                out["activation_dot"][k, j] = musc.getStateVariableDerivativeValue(state, "activation")
            if not musc.get_ignore_tendon_compliance():
                out["tendon_state_dot"][k, j] = musc.getStateVariableDerivativeValue(state, "normalized_tendon_force")
        for j, musc in enumerate(muscles):
            for i in range(nq):
                out["moment_arm"][k, j, i] = musc.getGeometryPath().computeMomentArm(state, coords.get(i)) \
                    if musc.getPath().getConcreteClassName() == "GeometryPath" else musc.getPath().computeMomentArm(state, coords.get(i))
        for j, f in enumerate(recorded):
            values = f.getRecordValues(state)
            row = [values.get(i) for i in range(values.getSize())]
            out["records"][k, j, :len(row)] = row
    out["coordinates"] = np.array([coords.get(i).getName() for i in range(nq)])
    out["muscles"] = np.array([musc.getName() for musc in muscles])
    out["forces"] = np.array([f.getName() for f in recorded])
    for key in PROPERTIES:
        out["param_" + key] = np.array([muscle_properties(musc)[key] for musc in muscles])
    out["compliance_mode"] = np.array([musc.get_tendon_compliance_dynamics_mode() for musc in muscles])
    np.savez(args.out, **out)


if __name__ == "__main__":
    main()
