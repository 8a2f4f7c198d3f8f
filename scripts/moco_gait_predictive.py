"""Moco's side of the 2-D walking prediction (problems/gait2d_predictive.py), run by OpenSim Moco itself.

    python scripts/moco_gait_predictive.py [--intervals 50] [--out DIR] [--guess FILE.sto] [--max-iterations N]
                                           [--tolerance 1e-4] [--hessian limited-memory|exact]
                                           [--mu-strategy monotone|adaptive] [--evaluate] [--stride] [--tag TAG]

Needs the ``opensim`` package (``pip install ".[opensim]"``) and runs in its own process: the ``opensim``
wheel carries its own libcasadi, which cannot share a process with the ``casadi`` package colloc uses.
It sets up the prediction half of opensim-core's ``example2DWalking`` exactly as its script does
(``MocoStudy`` "gaitPrediction": symmetry of coordinates, speeds, activations and the lumbar control;
``MocoAverageSpeedGoal`` 1.2 m/s, an end-point constraint; ``MocoControlGoal`` weight 10, exponent 3,
divided by the displacement; the example's bounds; final time in [0.4, 0.6] s), solves it with
MocoCasADiSolver at tolerances 1e-4 from the guess, and writes into DIR:

* ``moco_predictive_N<intervals><tag>.sto``: Moco's solution (a ``MocoTrajectory``);
* ``moco_predictive_N<intervals><tag>.json``: build and solve seconds (wall and CPU), iterations,
  objective and its terms, final time, success;
* with ``--stride``: ``moco_predictive_N<intervals><tag>_stride.sto``, the full stride of
  ``createPeriodicTrajectory`` (the example's output), and the same file read back as a
  ``MocoTrajectory`` and a ``TimeSeriesTable`` to check that OpenSim reads it.

``--guess`` (default: colloc's tracking solution, problems/data/gait2d/tracking_solution.sto, the example's
warm start) is a trajectory in Moco's names, resampled onto Moco's grid (``resampleWithNumTimes``).  With
``--evaluate`` the objective reported is Moco's evaluation of its goals on that trajectory (zero iterations,
bounds widened so that IPOPT's bound push leaves the trajectory where it is).  With ``--check FILE.sto``
OpenSim reads FILE (any stride written by colloc) as a ``TimeSeriesTable`` and a ``MocoTrajectory`` against
the model's states and prints what it found.

``--tolerance`` sets Moco's convergence and constraint tolerances, ``--hessian`` its
``optim_hessian_approximation``; ``--mu-strategy`` IPOPT's barrier update, which MocoCasADiSolver has no
property for: it is written to an ``ipopt.opt`` in a fresh working folder, the options file IPOPT reads
(its "List of user-set options" then shows it used).

Measured (docs/moco-gait.md, "Moco's solve of the prediction"): with the example's settings Moco does not
finish from the tracking solution (at 20 intervals 0.13574 after 340 iterations, still infeasible): with a
limited-memory Hessian IPOPT uses its adaptive barrier update, which takes μ to 5e-9 while the iterate is
still far from feasible, stalls against the bounds, raises μ again and creeps; the monotone update is slower
still, and the "exact" (finite-difference) Hessian did not finish its set-up.  Started from colloc's solution
Moco converges in 17–28 iterations to colloc's optimum, its objective 5e-5–1.3e-4 high at its tolerance 1e-4.
"""
import argparse
import contextlib
import json
import os
import pathlib
import tempfile
import time

import opensim as osim

from moco_gait import joint_bounds, solve_and_report, symmetry_goal, widen  # the tracking script's goal and bounds

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "opensim" / "2D_gait.osim"
GUESS = ROOT / "problems" / "data" / "gait2d" / "tracking_solution.sto"


def study_of(intervals, tolerance=1e-4, max_iterations=1000, hessian="limited-memory"):
    """The example's prediction study and its solver (as opensim-core's example2DWalking.py builds them;
    ``hessian`` is ``optim_hessian_approximation``, the example's default "limited-memory" or "exact")."""
    study = osim.MocoStudy()
    study.setName("gaitPrediction")
    problem = study.updProblem()
    processor = osim.ModelProcessor(str(MODEL))
    problem.setModelProcessor(processor)
    model = processor.process()
    model.initSystem()
    problem.addGoal(symmetry_goal(model))
    speed = osim.MocoAverageSpeedGoal("speed")
    speed.set_desired_average_speed(1.2)
    problem.addGoal(speed)
    effort = osim.MocoControlGoal("effort", 10)
    effort.setExponent(3)
    effort.setDivideByDisplacement(True)
    problem.addGoal(effort)
    problem.setTimeBounds(0, [0.4, 0.6])
    joint_bounds(problem)
    solver = study.initCasADiSolver()
    solver.set_num_mesh_intervals(intervals)
    solver.set_optim_convergence_tolerance(tolerance)
    solver.set_optim_constraint_tolerance(tolerance)
    solver.set_optim_max_iterations(max_iterations)
    solver.set_optim_hessian_approximation(hessian)
    return study, solver


def guess_from(solver, path):
    """Moco's own guess with every state and control of ``path`` copied in by name, the file resampled onto
    Moco's grid (the same number of uniformly spaced times over the file's span)."""
    given = osim.MocoTrajectory(str(pathlib.Path(path).resolve()))
    guess = solver.createGuess()
    count = guess.getNumTimes()
    if given.getNumTimes() != count:
        given.resampleWithNumTimes(count)
    guess.setTime(given.getTime())
    for name in given.getStateNames():
        guess.setState(name, given.getStateMat(name))
    for name in given.getControlNames():
        guess.setControl(name, given.getControlMat(name))
    return guess


@contextlib.contextmanager
def ipopt_options(options):
    """Run the block in a fresh folder holding an ``ipopt.opt`` with ``options`` (a dict): IPOPT reads that
    file from the working directory, and MocoCasADiSolver has no property for options such as
    ``mu_strategy``.  Paths given to Moco must be absolute."""
    if not options:
        yield
        return
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="moco-ipopt-") as folder:
        pathlib.Path(folder, "ipopt.opt").write_text("".join(f"{k} {v}\n" for k, v in options.items()))
        os.chdir(folder)
        try:
            yield
        finally:
            os.chdir(here)


def check(path):
    """OpenSim reads ``path`` as a table and as a MocoTrajectory whose states are the model's; a dict."""
    model = osim.Model(str(MODEL))
    model.initSystem()
    table = osim.TimeSeriesTable(str(path))
    trajectory = osim.MocoTrajectory(str(path))
    states = [model.getStateVariableNames().getitem(i) for i in range(model.getNumStateVariables())]
    missing = [s for s in states if s not in list(trajectory.getStateNames())]
    times = table.getIndependentColumn()
    return dict(rows=table.getNumRows(), columns=table.getNumColumns(), t0=times[0], tf=times[-1],
                states=len(trajectory.getStateNames()), controls=len(trajectory.getControlNames()), missing=missing)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--intervals", type=int, default=50)
    parser.add_argument("--out", default=".")
    parser.add_argument("--guess", default=str(GUESS), help="start from this MocoTrajectory .sto")
    parser.add_argument("--max-iterations", type=int, default=1000)
    parser.add_argument("--tolerance", type=float, default=1e-4, help="optim_convergence and constraint tolerance")
    parser.add_argument("--hessian", default="limited-memory", choices=("limited-memory", "exact"),
                        help="optim_hessian_approximation")
    parser.add_argument("--mu-strategy", choices=("monotone", "adaptive"),
                        help="IPOPT's barrier update (default: IPOPT's, adaptive with the limited-memory Hessian)")
    parser.add_argument("--tag", default="", help="suffix of the output files' names")
    parser.add_argument("--evaluate", action="store_true", help="Moco's goals on the guess (no iteration)")
    parser.add_argument("--stride", action="store_true", help="also write the full stride and read it back")
    parser.add_argument("--check", help="only read this .sto back in OpenSim and print what it holds")
    args = parser.parse_args(argv)
    if args.check:
        print(json.dumps(check(args.check)))
        return
    out = pathlib.Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    wall, cpu = time.time(), time.process_time()
    study, solver = study_of(args.intervals, tolerance=args.tolerance, hessian=args.hessian,
                             max_iterations=0 if args.evaluate else args.max_iterations)
    if args.evaluate:
        widen(study.updProblem())
    solver.resetProblem(study.getProblem())
    solver.setGuess(guess_from(solver, args.guess))
    build_wall, build_cpu = time.time() - wall, time.process_time() - cpu
    stem = f"moco_predictive_N{args.intervals}{args.tag}"
    with ipopt_options({"mu_strategy": args.mu_strategy} if args.mu_strategy else {}):
        solution, report = solve_and_report(study, out / f"{stem}.sto", intervals=args.intervals,
                                            build_wall=build_wall, build_cpu=build_cpu)
    report.update(final_time=solution.getFinalTime(), guess=args.guess, tolerance=args.tolerance, hessian=args.hessian,
                  mu_strategy=args.mu_strategy or "IPOPT's default", date=time.strftime("%Y-%m-%d"),
                  opensim=osim.GetVersionAndDate())
    if args.stride:
        stride = osim.createPeriodicTrajectory(solution)
        stride.write(str(out / f"{stem}_stride.sto"))
        report["stride"] = check(out / f"{stem}_stride.sto")
    (out / f"{stem}.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report))


if __name__ == "__main__":
    main()
