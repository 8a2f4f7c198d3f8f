"""Moco's side of the 2-D walking tracking problem (problems/gait2d_tracking.py), run by OpenSim Moco itself.

    python scripts/moco_gait.py [--intervals 50] [--out DIR] [--guess FILE.sto] [--max-iterations N]

Needs the ``opensim`` package (``pip install ".[opensim]"``) and runs in its own process: the ``opensim``
wheel carries its own libcasadi, which cannot share a process with the ``casadi`` package colloc uses.
It sets up opensim-core's ``example2DWalking`` tracking half exactly as its script does (MocoTrack: the
coordinates low-pass filtered at 6 Hz and their derivatives tracked with weight 1, the tracked states as
the guess; symmetry of coordinates, speeds, activations and the lumbar control; effort weight 10; the GRF
tracked with weight 1 on the plane normal to z; the example's bounds; [0, 0.47] s), solves it with
MocoCasADiSolver at tolerances 1e-4, and writes into DIR:

* ``moco_gait_N<intervals>.sto``: Moco's solution (a ``MocoTrajectory``; colloc reads it with
  ``colloc.Trajectory.read`` and ``colloc.opensim.from_opensim``);
* ``moco_gait_N<intervals>.json``: build and solve seconds (wall and CPU), iterations, objective and
  its terms, success.

``--guess`` starts from a trajectory file in Moco's names on the same grid (e.g. colloc's solution written
by ``colloc.opensim.write_sto``, states and controls only); with ``--evaluate`` the objective reported is
Moco's evaluation of its goals on that trajectory (zero iterations, bounds widened so that IPOPT's bound
push leaves the trajectory where it is).
"""
import argparse
import json
import math
import pathlib
import re
import time

import opensim as osim

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "opensim" / "2D_gait.osim"
DATA = ROOT / "problems" / "data" / "gait2d"
DEG = math.pi / 180


def symmetry_goal(model):
    """The example's ``MocoPeriodicityGoal``: its pairs built from the model's state names."""
    symmetry = osim.MocoPeriodicityGoal("symmetryGoal")
    names = [model.getStateVariableNames().getitem(i) for i in range(model.getNumStateVariables())]
    for s in names:
        if s.startswith("/jointset"):
            if "_r" in s:
                symmetry.addStatePair(osim.MocoPeriodicityGoalPair(s, re.sub(r"_r", "_l", s)))
            if "_l" in s:
                symmetry.addStatePair(osim.MocoPeriodicityGoalPair(s, re.sub(r"_l", "_r", s)))
            if not ("_r" in s or "_l" in s or "pelvis_tx/value" in s or "/activation" in s):
                symmetry.addStatePair(osim.MocoPeriodicityGoalPair(s))
    for s in names:
        if s.endswith("/activation"):
            if "_r" in s:
                symmetry.addStatePair(osim.MocoPeriodicityGoalPair(s, re.sub(r"_r", "_l", s)))
            if "_l" in s:
                symmetry.addStatePair(osim.MocoPeriodicityGoalPair(s, re.sub(r"_l", "_r", s)))
    symmetry.addControlPair(osim.MocoPeriodicityGoalPair("/lumbarAct"))
    return symmetry


def joint_bounds(problem):
    """The example's bounds on the pelvis and the joints (degrees as in example2DWalking)."""
    problem.setStateInfo("/jointset/groundPelvis/pelvis_tilt/value", [-20 * DEG, -10 * DEG])
    problem.setStateInfo("/jointset/groundPelvis/pelvis_tx/value", [0, 1])
    problem.setStateInfo("/jointset/groundPelvis/pelvis_ty/value", [0.75, 1.25])
    for side in "lr":
        problem.setStateInfo(f"/jointset/hip_{side}/hip_flexion_{side}/value", [-10 * DEG, 60 * DEG])
        problem.setStateInfo(f"/jointset/knee_{side}/knee_angle_{side}/value", [-50 * DEG, 0])
        problem.setStateInfo(f"/jointset/ankle_{side}/ankle_angle_{side}/value", [-15 * DEG, 25 * DEG])
    problem.setStateInfo("/jointset/lumbar/lumbar/value", [0, 20 * DEG])


def study_of(intervals, duration=0.47, tolerance=1e-4, max_iterations=1000):
    """The example's MocoStudy and its solver (as opensim-core's example2DWalking.py builds them)."""
    track = osim.MocoTrack()
    track.setName("gaitTracking")
    table = osim.TableProcessor(str(DATA / "referenceCoordinates.sto"))
    table.append(osim.TabOpLowPassFilter(6))
    processor = osim.ModelProcessor(str(MODEL))
    track.setModel(processor)
    track.setStatesReference(table)
    track.set_states_global_tracking_weight(1)
    track.set_allow_unused_references(True)
    track.set_track_reference_position_derivatives(True)
    track.set_apply_tracked_states_to_guess(True)
    track.set_initial_time(0.0)
    track.set_final_time(duration)
    study = track.initialize()
    problem = study.updProblem()
    model = processor.process()
    model.initSystem()
    problem.addGoal(symmetry_goal(model))
    osim.MocoControlGoal.safeDownCast(problem.updGoal("control_effort")).setWeight(10)
    contact = osim.MocoContactTrackingGoal("contact", 1)
    contact.setExternalLoadsFile(str(DATA / "referenceGRF.xml"))
    for side in "rl":
        group = osim.StdVectorString()
        group.append(f"contactHeel_{side}")
        group.append(f"contactFront_{side}")
        contact.addContactGroup(group, "Right_GRF" if side == "r" else "Left_GRF")
    contact.setProjection("plane")
    contact.setProjectionVector(osim.Vec3(0, 0, 1))
    problem.addGoal(contact)
    joint_bounds(problem)
    solver = osim.MocoCasADiSolver.safeDownCast(study.updSolver())
    solver.set_num_mesh_intervals(intervals)
    solver.set_optim_convergence_tolerance(tolerance)
    solver.set_optim_constraint_tolerance(tolerance)
    solver.set_optim_max_iterations(max_iterations)
    return study, solver


def guess_from(solver, path):
    """Moco's own guess on its grid with every state and control of ``path`` copied in by name (a file's
    columns may come in another order than Moco's states; the times must be Moco's grid)."""
    given = osim.MocoTrajectory(str(pathlib.Path(path).resolve()))
    guess = solver.createGuess()
    grid, times = guess.getTime().to_numpy(), given.getTime().to_numpy()
    if len(grid) != len(times) or max(abs(a - b) for a, b in zip(grid, times)) > 1e-12:
        raise SystemExit(f"{path}: its times are not Moco's grid of {len(grid)} points")
    for name in given.getStateNames():
        guess.setState(name, given.getStateMat(name))
    for name in given.getControlNames():
        guess.setControl(name, given.getControlMat(name))
    return guess


def widen(problem, big=1e3):
    """Wide bounds on every state and control, so that IPOPT's bound push leaves a guess where it is
    (for ``--evaluate``: the goals' values at the guess itself)."""
    model = problem.getPhase(0).getModelProcessor().process()
    model.initSystem()
    names = model.getStateVariableNames()
    for name in [names.get(i) for i in range(names.getSize())]:
        problem.setStateInfo(name, [-big, big])
    for name in problem.createRep().createControlInfoNames():  # muscles kept among <components> too
        problem.setControlInfo(name, [-big, big])


def solve_and_report(study, path, **report):
    """Solve ``study``, write its solution to ``path`` (.sto) and return it with a report: ``report``'s items,
    solve wall and CPU seconds, iterations, objective and its terms, success and status."""
    wall, cpu = time.time(), time.process_time()
    solution = study.solve()
    report.update(solve_wall=time.time() - wall, solve_cpu=time.process_time() - cpu)
    solution.unseal()
    solution.write(str(path))
    report.update(iterations=solution.getNumIterations(), objective=solution.getObjective(),
                  terms={n: solution.getObjectiveTerm(n) for n in solution.getObjectiveTermNames()},
                  success=solution.success(), status=solution.getStatus())
    return solution, report


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--intervals", type=int, default=50)
    parser.add_argument("--out", default=".")
    parser.add_argument("--guess", help="start from this MocoTrajectory .sto (same grid)")
    parser.add_argument("--max-iterations", type=int, default=1000)
    parser.add_argument("--tag", default="", help="suffix of the output files' names")
    parser.add_argument("--evaluate", action="store_true",
                        help="with --guess: Moco's goals on that trajectory (bounds widened, no iteration)")
    args = parser.parse_args(argv)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    wall, cpu = time.time(), time.process_time()
    study, solver = study_of(args.intervals, max_iterations=0 if args.evaluate else args.max_iterations)
    if args.evaluate:
        widen(study.updProblem())
    if args.guess:
        solver.resetProblem(study.getProblem())
        solver.setGuess(guess_from(solver, args.guess))
    build_wall, build_cpu = time.time() - wall, time.process_time() - cpu
    stem = f"moco_gait_N{args.intervals}{args.tag}"
    _, report = solve_and_report(study, out / f"{stem}.sto", intervals=args.intervals, build_wall=build_wall,
                                 build_cpu=build_cpu, guess=args.guess)
    (out / f"{stem}.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report))


if __name__ == "__main__":
    main()
