"""Moco's side of the walking MocoInverse (problems/gait2d_inverse.py), run by OpenSim Moco itself.

    python scripts/moco_inverse.py [--out DIR] [--tolerance 1e-6] [--guess FILE.sto] [--mesh-interval 0.02]

Needs the ``opensim`` package (``pip install ".[opensim]"``) and runs in its own process: the ``opensim``
wheel carries its own libcasadi, which cannot share a process with the ``casadi`` package colloc uses.
The problem is problems/gait2d_inverse.py's: ``2D_gait.osim`` without its lumbar actuator, a
CoordinateActuator of optimal force 100 on each of the pelvis's three coordinates and the lumbar joint
(named as ``ModOpAddReserves`` names its reserves), then ``ModOpAddReserves(1)`` on the six others;
``MocoInverse`` with the coordinates of ``referenceCoordinates.sto`` (unfiltered), time [0, 0.47] s,
``mesh_interval`` 0.02 s (24 intervals) and convergence and constraint tolerances ``--tolerance``.
``--tendons implicit`` makes every tendon compliant (``ignore_tendon_compliance`` false) with implicit
dynamics (``ModOpUseImplicitTendonComplianceDynamicsDGF``), MocoInverse's usual setting.
The study is MocoInverse's own (``MocoInverse.initialize()``), solved with ``MocoStudy.solve`` so that a
guess can be given (``--guess``: a trajectory in Moco's names on the same grid, e.g. colloc's solution).
Writes into DIR:

* ``moco_inverse.sto``: Moco's solution (``MocoTrajectory``; read with ``colloc.Trajectory.read``);
* ``moco_inverse.json``: build and solve seconds (wall and CPU), iterations, objective and its terms,
  success, the settings.
"""
import argparse
import json
import math
import pathlib
import time

import opensim as osim

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "opensim" / "2D_gait.osim"
DATA = ROOT / "problems" / "data" / "gait2d"
RESIDUALS = {"pelvis_tilt": 100.0, "pelvis_tx": 100.0, "pelvis_ty": 100.0, "lumbar": 100.0}
CONTACTS = ("contactHeel_r", "contactFront_r", "contactHeel_l", "contactFront_l")


def model_of(folder, tendons="rigid"):
    """2D_gait without the lumbar actuator, with the residual actuators (module notes).

    The lumbar actuator is dropped from the file's text (the model keeps its forces in ``<components>``,
    out of reach of ``ForceSet.remove``); the copy is written into ``folder``."""
    import re

    text = MODEL.read_text()
    text, count = re.subn(r"<CoordinateActuator name=\"lumbarAct\">.*?</CoordinateActuator>", "", text, flags=re.S)
    assert count == 1
    if tendons == "implicit":  # compliant tendons (their dynamics made implicit by the ModOp in inverse_of)
        text, count = re.subn(r"<ignore_tendon_compliance>true</ignore_tendon_compliance>",
                              "<ignore_tendon_compliance>false</ignore_tendon_compliance>", text)
        assert count == 18
    copy = pathlib.Path(folder) / "2D_gait_no_lumbar_actuator.osim"
    copy.write_text(text)
    model = osim.Model(str(copy))
    model.initSystem()
    for coordinate in model.getCoordinateSet():
        name = coordinate.getName()
        if name not in RESIDUALS:
            continue
        actuator = osim.CoordinateActuator()
        actuator.setCoordinate(coordinate)
        actuator.setName("reserve_" + coordinate.getAbsolutePathString()[1:].replace("/", "_"))
        actuator.setOptimalForce(RESIDUALS[name])
        actuator.setMinControl(-math.inf)
        actuator.setMaxControl(math.inf)
        model.addForce(actuator)
    model.finalizeConnections()
    return model


def inverse_of(folder, mesh_interval, tolerance, duration=0.47, tendons="rigid"):
    tool = osim.MocoInverse()
    processor = osim.ModelProcessor(model_of(folder, tendons))
    if tendons == "implicit":
        processor.append(osim.ModOpUseImplicitTendonComplianceDynamicsDGF())
    processor.append(osim.ModOpAddReserves(1.0, math.nan, True))
    tool.setModel(processor)
    tool.setKinematics(osim.TableProcessor(str(DATA / "referenceCoordinates.sto")))
    tool.set_initial_time(0.0)
    tool.set_final_time(duration)
    tool.set_mesh_interval(mesh_interval)
    tool.set_convergence_tolerance(tolerance)
    tool.set_constraint_tolerance(tolerance)
    tool.set_max_iterations(5000)
    return tool


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=".")
    parser.add_argument("--tolerance", type=float, default=1e-6)
    parser.add_argument("--mesh-interval", type=float, default=0.02)
    parser.add_argument("--guess", default=None)
    parser.add_argument("--tag", default="moco_inverse")
    parser.add_argument("--tendons", choices=("rigid", "implicit"), default="rigid",
                        help="the file's rigid tendons, or compliant ones with implicit dynamics")
    args = parser.parse_args(argv)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    wall, cpu = time.perf_counter(), time.process_time()
    tool = inverse_of(out, args.mesh_interval, args.tolerance, tendons=args.tendons)
    study = tool.initialize()
    solver = osim.MocoCasADiSolver.safeDownCast(study.updSolver())
    if args.guess:
        solver.setGuessFile(str(args.guess))
    built_wall, built_cpu = time.perf_counter(), time.process_time()
    solution = study.solve()
    solved_wall, solved_cpu = time.perf_counter(), time.process_time()
    success = solution.success()
    solution.unseal()
    solution.write(str(out / f"{args.tag}.sto"))
    names = list(solution.getObjectiveTermNames())
    report = {"problem": "gait2d_inverse", "script": "scripts/moco_inverse.py", "opensim": osim.__version__,
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "tolerance": args.tolerance,
              "mesh_interval": args.mesh_interval, "tendons": args.tendons, "intervals": int(solver.get_num_mesh_intervals()),
              "guess": args.guess, "success": bool(success), "status": solution.getStatus(),
              "objective": solution.getObjective(), "terms": {n: solution.getObjectiveTerm(n) for n in names},
              "iterations": solution.getNumIterations(), "build_wall_s": built_wall - wall,
              "build_cpu_s": built_cpu - cpu, "solve_wall_s": solved_wall - built_wall,
              "solve_cpu_s": solved_cpu - built_cpu, "solver_duration_s": solution.getSolverDuration()}
    (out / f"{args.tag}.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
