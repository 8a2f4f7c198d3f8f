"""OpenSim's side of the goal and table checks, run as ``python tests/oracle/moco_goals.py REQUEST.json OUT.json``.

OpenSim's wheel carries its own libcasadi, so it never shares a process with colloc; the tests write a
request, run this script with the same interpreter and read the answer (a JSON object of numbers).

Kinds of request:

* ``lowpass``: ``TabOpLowPassFilter(cutoff)`` on a table of ``time`` and ``columns``.
* ``track``: MocoTrack's problem (``MocoTrack.initialize``) with a states reference of positions whose
  derivatives it tracks too, evaluated the same way as ``goals``.
* ``inverse``: ``MocoInverse`` solved on the ``arm`` model (reserves from ``ModOpAddReserves``).
* ``goals``: a Moco problem on one of the models below with the given goals, on ``intervals``
  Hermite–Simpson intervals over [t0, tf]; its guess is the given trajectory (values at the 2N + 1 grid
  times) and IPOPT runs zero iterations, so the solution's objective terms are Moco's own evaluation of
  each goal on that trajectory (``MocoSolution.getObjectiveTerm``).  Bounds are wide so that IPOPT's
  bound push leaves the guess untouched.

Models (built here with OpenSim's API; the tests write the same ones by hand in colloc):

* ``slider``: a 2 kg body on ``/jointset/slider`` (coordinate ``position`` along x), ``/forceset/actuator`` a
  CoordinateActuator on it (optimal force 1).
* ``twolink``: two 1 m links pinned in series at the origin (coordinates ``swing_r`` then ``swing_l``
  about z, each link along its body's x), CoordinateActuators ``/forceset/act_r`` and ``/forceset/act_l``, marker ``tip``
  at the end of the second link.
* ``muscle``: a 2 kg body on ``/jointset/slider`` (coordinate ``length`` along x) pulled by ``/forceset/muscle``,
  a DeGrooteFregly2016Muscle from the ground's origin to the body's origin (so its length is the
  coordinate), implicit tendon (its tendon-force derivative given with the trajectory), no fiber damping; with ``metabolics`` a
  Bhargava2004SmoothedMuscleMetabolics (smoothed, tanh) at ``/metabolics``.
"""
import json
import sys

import numpy as np
import opensim as osim

BIG = 1e4


def lowpass(req):
    """TabOpLowPassFilter on a table given as times and columns."""
    table = osim.TimeSeriesTable()
    labels = list(req["columns"])
    table.setColumnLabels(labels)
    data = np.column_stack([req["columns"][k] for k in labels])
    for t, row in zip(req["time"], data):
        table.appendRow(t, osim.RowVector(list(map(float, row))))
    proc = osim.TableProcessor(table)
    proc.append(osim.TabOpLowPassFilter(float(req["cutoff"])))
    out = proc.process()
    return {"time": list(out.getIndependentColumn()),
            "columns": {k: out.getDependentColumn(k).to_numpy().tolist() for k in labels}}


def _slider(name, coordinate, mass=2.0):
    model = osim.Model()
    model.setName(name)
    body = osim.Body("body", mass, osim.Vec3(0), osim.Inertia(1))
    model.addBody(body)
    joint = osim.SliderJoint("slider", model.getGround(), body)
    joint.updCoordinate().setName(coordinate)
    model.addJoint(joint)
    return model, joint.updCoordinate(), body


def _actuator(model, coord, name):
    act = osim.CoordinateActuator()
    act.setCoordinate(coord)
    act.setName(name)
    act.setOptimalForce(1.0)
    model.addForce(act)


def slider_model(req):
    model, coord, _ = _slider("slider", "position")
    _actuator(model, coord, "actuator")
    return model


def twolink_model(req):
    model = osim.Model()
    model.setName("twolink")
    parent = model.getGround()
    offset = osim.Vec3(0)
    for side in ("r", "l"):
        link = osim.Body(f"link_{side}", 1.0, osim.Vec3(0.5, 0, 0), osim.Inertia(0.1))
        model.addBody(link)
        joint = osim.PinJoint(f"pin_{side}", parent, offset, osim.Vec3(0), link, osim.Vec3(0), osim.Vec3(0))
        joint.updCoordinate().setName(f"swing_{side}")
        model.addJoint(joint)
        _actuator(model, joint.updCoordinate(), f"act_{side}")
        parent, offset = link, osim.Vec3(1, 0, 0)
    model.addMarker(osim.Marker("tip", model.getBodySet().get("link_l"), osim.Vec3(1, 0, 0)))
    return model


def muscle_model(req):
    model, coord, body = _slider("muscle", "length")
    m = osim.DeGrooteFregly2016Muscle()
    m.setName("muscle")
    p = req["muscle"]
    for key in ("max_isometric_force", "optimal_fiber_length", "tendon_slack_length", "pennation_angle_at_optimal",
                "max_contraction_velocity"):
        getattr(m, f"set_{key}")(float(p[key]))
    m.set_fiber_damping(0.0)
    m.set_ignore_tendon_compliance(False)
    # implicit: Moco's MocoInitialVelocityEquilibriumDGFGoal realizes only to Velocity, which the explicit
    # form's tendon-force derivative needs Dynamics for (OpenSim 4.6 throws); the derivative then comes
    # from the trajectory, and the tests give it the explicit form's value.
    m.set_tendon_compliance_dynamics_mode("implicit")
    m.addNewPathPoint("origin", model.getGround(), osim.Vec3(0))
    m.addNewPathPoint("insertion", body, osim.Vec3(0))
    model.addForce(m)
    if req.get("metabolics"):
        met = osim.Bhargava2004SmoothedMuscleMetabolics()
        met.setName("metabolics")
        met.set_use_smoothing(True)
        met.addMuscle("muscle", m)
        model.addComponent(met)
    return model


def foot_model(req):
    """A 2 kg body on a planar joint (tx, ty, rz) with two contact spheres (heel, toe) on the ground's half space."""
    model = osim.Model()
    model.setName("foot")
    body = osim.Body("foot", 2.0, osim.Vec3(0), osim.Inertia(0.1))
    model.addBody(body)
    joint = osim.PlanarJoint("planar", model.getGround(), body)
    for k, name in enumerate(("rz", "tx", "ty")):
        joint.updCoordinate(k).setName(name)
    model.addJoint(joint)
    floor = osim.ContactHalfSpace(osim.Vec3(0), osim.Vec3(0, 0, -0.5 * np.pi), model.getGround(), "floor")
    model.addContactGeometry(floor)
    for name, x in (("heel", -0.1), ("toe", 0.15)):
        sphere = osim.ContactSphere(0.03, osim.Vec3(x, -0.05, 0), body, name)
        model.addContactGeometry(sphere)
        force = osim.SmoothSphereHalfSpaceForce(f"contact_{name}", sphere, floor)
        force.set_stiffness(1e6)  # the 2-D gait model's values (the defaults are unit stiffness and friction)
        force.set_dissipation(2.0)
        force.set_static_friction(0.8)
        force.set_dynamic_friction(0.8)
        force.set_viscous_friction(0.5)
        force.set_transition_velocity(0.2)
        model.addForce(force)
    return model


def arm_model(req):
    """A forearm on a pin at the origin (coordinate ``flexion`` about z, the body's x along the forearm, gravity −y)
    with DeGrooteFregly2016Muscles from ground points to forearm points (implicit tendons, no damping)."""
    p = req["arm"]
    model = osim.Model()
    model.setName("arm")
    body = osim.Body("forearm", p["mass"], osim.Vec3(p["com"], 0, 0), osim.Inertia(0, 0, p["inertia_com"]))
    model.addBody(body)
    joint = osim.PinJoint("elbow", model.getGround(), osim.Vec3(0), osim.Vec3(0), body, osim.Vec3(0), osim.Vec3(0))
    joint.updCoordinate().setName("flexion")
    model.addJoint(joint)
    for spec in req["muscles"]:
        m = osim.DeGrooteFregly2016Muscle()
        m.setName(spec["name"])
        for key in ("max_isometric_force", "optimal_fiber_length", "tendon_slack_length"):
            getattr(m, f"set_{key}")(float(spec[key]))
        m.set_fiber_damping(0.0)
        m.set_ignore_tendon_compliance(False)
        m.set_tendon_compliance_dynamics_mode("implicit")
        m.addNewPathPoint("origin", model.getGround(), osim.Vec3(*spec["origin"], 0))
        m.addNewPathPoint("insertion", body, osim.Vec3(spec["insertion"], 0, 0))
        model.addForce(m)
    return model


def inverse(req):
    """MocoInverse itself (reserves added by ModOpAddReserves), solved; its objective and terms."""
    model = arm_model(req)
    model.finalizeConnections()
    processor = osim.ModelProcessor(model)
    processor.append(osim.ModOpAddReserves(float(req["reserves"])))
    tool = osim.MocoInverse()
    tool.setModel(processor)
    tool.setKinematics(osim.TableProcessor(_table(req["time"], req["kinematics"])))
    tool.set_initial_time(float(req["time"][0]))
    tool.set_final_time(float(req["time"][-1]))
    tool.set_mesh_interval(float(req["mesh_interval"]))
    tool.set_convergence_tolerance(float(req["tolerance"]))
    tool.set_constraint_tolerance(float(req["tolerance"]))
    result = tool.solve()  # kept: the solution below is a reference into it
    solution = result.getMocoSolution()
    solution.unseal()
    names = list(solution.getObjectiveTermNames())
    controls = solution.getControlsTrajectory().to_numpy()
    states = solution.getStatesTrajectory().to_numpy()
    derivatives = solution.getDerivativesTrajectory().to_numpy()
    return {"objective": solution.getObjective(), "success": solution.success(),
            "terms": {n: solution.getObjectiveTerm(n) for n in names},
            "time": solution.getTime().to_numpy().tolist(),
            "controls": {n: controls[:, i].tolist() for i, n in enumerate(solution.getControlNames())},
            "states": {n: states[:, i].tolist() for i, n in enumerate(solution.getStateNames())},
            "derivatives": {n: derivatives[:, i].tolist() for i, n in enumerate(solution.getDerivativeNames())}}


MODELS = {"slider": slider_model, "twolink": twolink_model, "muscle": muscle_model, "foot": foot_model}


def _external_loads(spec, time, folder):
    """ExternalLoads with one ExternalForce ``right`` (on ``foot``, identifiers ``ground_force_v`` …) reading
    the reference forces from a .sto written here."""
    ref = np.asarray(spec["reference"])
    columns = {f"ground_force_v{a}": ref[:, k] for k, a in enumerate("xyz")}
    columns.update({f"ground_force_p{a}": 0 * time for a in "xyz"})
    columns.update({f"ground_torque_{a}": 0 * time for a in "xyz"})
    path = f"{folder}/grf.sto"
    osim.STOFileAdapter.write(_table(time, columns), path)
    loads = osim.ExternalLoads()
    loads.setDataFileName(path)
    force = osim.ExternalForce()
    force.setName("right")
    force.set_applied_to_body("foot")
    force.set_force_expressed_in_body("ground")
    force.set_point_expressed_in_body("ground")
    force.set_force_identifier("ground_force_v")
    force.set_point_identifier("ground_force_p")
    force.set_torque_identifier("ground_torque_")
    loads.cloneAndAppend(force)
    return loads


def _table(time, columns):
    table = osim.TimeSeriesTable()
    labels = list(columns)
    table.setColumnLabels(labels)
    for k, t in enumerate(time):
        table.appendRow(float(t), osim.RowVector([float(columns[c][k]) for c in labels]))
    table.addTableMetaDataString("inDegrees", "no")
    return table


def _goal(spec, time):
    kind, name, weight = spec["type"], spec["name"], float(spec.get("weight", 1.0))
    time = np.array(spec.get("reference_time", time))  # the reference's rows, the grid's times by default
    if kind == "control":
        goal = osim.MocoControlGoal(name, weight)
        goal.setExponent(int(spec.get("exponent", 2)))
        for c, w in spec.get("weights", {}).items():
            goal.setWeightForControl(c, float(w))
    elif kind == "state_tracking":
        goal = osim.MocoStateTrackingGoal(name, weight)
        goal.setReference(osim.TableProcessor(_table(time, spec["reference"])))
        for s, w in spec.get("weights", {}).items():
            goal.setWeightForState(s, float(w))
        goal.setScaleWeightsWithRange(bool(spec.get("scale_weights_with_range", False)))
    elif kind == "marker_tracking":
        goal = osim.MocoMarkerTrackingGoal(name, weight)
        table = osim.TimeSeriesTableVec3()
        table.setColumnLabels(list(spec["reference"]))
        for k, t in enumerate(time):
            table.appendRow(float(t), osim.RowVectorVec3([osim.Vec3(*spec["reference"][m][k]) for m in spec["reference"]]))
        table.addTableMetaDataString("Units", "m")
        weights = osim.SetMarkerWeights()
        for m, w in spec.get("weights", {}).items():
            weights.cloneAndAppend(osim.MarkerWeight(m, float(w)))
        goal.setMarkersReference(osim.MarkersReference(table, weights))
    elif kind == "periodicity":
        goal = osim.MocoPeriodicityGoal(name)
        for first, last, negate in spec["states"]:
            pair = osim.MocoPeriodicityGoalPair(first, last)
            pair.set_negate(bool(negate))
            goal.addStatePair(pair)
        for first, last, negate in spec.get("controls", []):
            pair = osim.MocoPeriodicityGoalPair(first, last)
            pair.set_negate(bool(negate))
            goal.addControlPair(pair)
    elif kind == "average_speed":
        goal = osim.MocoAverageSpeedGoal(name)
        goal.set_desired_average_speed(float(spec["speed"]))
    elif kind == "initial_activation":
        goal = osim.MocoInitialActivationGoal(name)
    elif kind == "initial_velocity_equilibrium":
        goal = osim.MocoInitialVelocityEquilibriumDGFGoal(name)
    elif kind == "contact_tracking":
        goal = osim.MocoContactTrackingGoal(name, weight)
        goal.setExternalLoads(_external_loads(spec, time, "."))
        paths = osim.StdVectorString()
        for path in spec["forces"]:
            paths.append(path)
        goal.addContactGroup(osim.MocoContactTrackingGoalGroup(paths, "right"))
        if spec.get("projection", "none") != "none":
            goal.setProjection(spec["projection"])
            goal.setProjectionVector(osim.Vec3(*spec["projection_vector"]))
        goal.setNormalizeTrackingError(bool(spec.get("normalize_tracking_error", False)))
    elif kind == "output":
        goal = osim.MocoOutputGoal(name, weight)
        goal.setOutputPath(spec["output"])
    else:
        raise ValueError(f"unknown goal type {kind}")
    if spec.get("cost_mode"):
        goal.setMode("cost")
    goal.setWeight(weight)
    goal.setDivideByDuration(bool(spec.get("divide_by_duration", False)))
    goal.setDivideByDisplacement(bool(spec.get("divide_by_displacement", False)))
    return goal


def _bounds(problem, model):
    """Wide bounds on every state and control, so that IPOPT's bound push leaves the guess where it is."""
    model.initSystem()
    names = model.getStateVariableNames()
    for name in [names.get(i) for i in range(names.getSize())]:
        problem.setStateInfo(name, [-BIG, BIG])
    for i in range(model.getActuators().getSize()):
        problem.setControlInfo(model.getActuators().get(i).getAbsolutePathString(), [-BIG, BIG])


def goals(req):
    """A MocoStudy with the requested goals on the requested model, evaluated on the trajectory."""
    model = MODELS[req["model"]](req)
    model.finalizeConnections()
    study = osim.MocoStudy()
    problem = study.updProblem()
    problem.setModel(model)
    problem.setTimeBounds(float(req["t0"]), float(req["tf"]))
    _bounds(problem, model)
    time = np.array(req["trajectory"]["time"])
    for spec in req["goals"]:
        problem.addGoal(_goal(spec, time))
    solver = study.initCasADiSolver()
    solver.set_num_mesh_intervals(int(req["intervals"]))
    return _evaluate(study, solver, req)


def track(req):
    """MocoTrack's own set-up (states reference of positions, their derivatives tracked too), evaluated on the
    trajectory: its ``state_tracking`` term is MocoTrack's state tracking."""
    model = MODELS[req["model"]](req)
    model.finalizeConnections()
    tool = osim.MocoTrack()
    tool.setModel(osim.ModelProcessor(model))
    tool.setStatesReference(osim.TableProcessor(_table(req["reference_time"], req["reference"])))
    tool.set_track_reference_position_derivatives(True)
    tool.set_states_global_tracking_weight(float(req["weight"]))
    weights = osim.MocoWeightSet()
    for name, w in req.get("weights", {}).items():
        weights.cloneAndAppend(osim.MocoWeight(name, float(w)))
    tool.set_states_weight_set(weights)
    tool.set_initial_time(float(req["t0"]))
    tool.set_final_time(float(req["tf"]))
    tool.set_mesh_interval((float(req["tf"]) - float(req["t0"])) / int(req["intervals"]))
    study = tool.initialize()
    problem = study.updProblem()
    _bounds(problem, problem.getPhase(0).getModelProcessor().process())
    solver = osim.MocoCasADiSolver.safeDownCast(study.updSolver())
    solver.resetProblem(problem)  # the bounds changed after MocoTrack set the solver up
    return _evaluate(study, solver, req)


def _evaluate(study, solver, req):
    """Zero IPOPT iterations from the given trajectory; the solution's objective terms are Moco's values."""
    time = np.array(req["trajectory"]["time"])
    solver.set_optim_max_iterations(0)
    solver.set_parallel(0)
    guess = solver.createGuess()
    grid = np.array(guess.getTime().to_numpy())
    assert np.allclose(grid, time, rtol=0, atol=1e-14), (grid, time)
    for path, values in req["trajectory"]["states"].items():
        guess.setState(path, osim.Vector([float(v) for v in values]))
    for path, values in req["trajectory"]["controls"].items():
        guess.setControl(path, osim.Vector([float(v) for v in values]))
    for path, values in req["trajectory"].get("derivatives", {}).items():
        guess.setDerivative(path, osim.Vector([float(v) for v in values]))
    solver.setGuess(guess)
    solution = study.solve()
    solution.unseal()
    names = list(solution.getObjectiveTermNames())
    states = solution.getStatesTrajectory().to_numpy()
    controls = solution.getControlsTrajectory().to_numpy()
    return {"terms": {n: solution.getObjectiveTerm(n) for n in names}, "forces": _contact_forces(req, solution),
            "states": {n: states[:, i].tolist() for i, n in enumerate(solution.getStateNames())},
            "controls": {n: controls[:, i].tolist() for i, n in enumerate(solution.getControlNames())}}


def _contact_forces(req, solution):
    """The forces on each contact sphere (in ground) at every grid state of the foot model."""
    if req["model"] != "foot":
        return {}
    model = MODELS[req["model"]](req)  # a fresh copy: the problem owns the one it was given
    model.finalizeConnections()
    model.initSystem()
    trajectory = solution.exportToStatesTrajectory(model)
    forces = {}
    for path in ("/forceset/contact_heel", "/forceset/contact_toe"):
        force = osim.SmoothSphereHalfSpaceForce.safeDownCast(model.getComponent(path))
        rows = []
        for i in range(trajectory.getSize()):
            st = trajectory.get(i)
            model.realizeVelocity(st)
            values = force.getRecordValues(st)
            rows.append([values.get(k) for k in range(3)])
        forces[path] = rows
    return forces


KINDS = {"lowpass": lowpass, "goals": goals, "track": track, "inverse": inverse}


def main(argv):
    with open(argv[1]) as fh:
        req = json.load(fh)
    out = KINDS[req["kind"]](req)
    with open(argv[2], "w") as fh:
        json.dump(out, fh)


if __name__ == "__main__":
    main(sys.argv)
