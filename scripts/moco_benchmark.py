"""colloc and OpenSim Moco on Moco's 2-D walking problems, on the same machine in one run.

    python scripts/benchmark.py --moco [--quick] [--problems tracking predictive inverse] [--out DIR] [--skip-moco]
    python scripts/moco_benchmark.py   (the same options, and [--moco-max-iterations N])

Problems (each side solves the same NLP: same model, goals, bounds, mesh and tolerance conventions):

``tracking``    problems/gait2d_tracking.py against scripts/moco_gait.py (MocoTrack, 50 intervals);
``predictive``  problems/gait2d_predictive.py against scripts/moco_gait_predictive.py (50 intervals), both
                from colloc's stored tracking solution, Moco with the example's settings (limited-memory
                Hessian, tolerances 1e-4, at most 1000 iterations or ``--moco-max-iterations``); from there
                Moco does not finish (docs/moco-gait.md), so a second Moco row, ``moco from colloc``,
                starts Moco from colloc's solution (written by the script's ``write_opensim``) and shows
                where Moco converges: the objectives are compared there, the times against the first;
``inverse``     problems/gait2d_inverse.py (its ``run()``: implicit tendons) against scripts/moco_inverse.py
                (MocoInverse, 0.02 s mesh, ``--tendons implicit``), when both files are present; else the row
                says it is missing.

``--quick`` solves tracking and prediction on 20 intervals and the inverse problem on a 0.04 s mesh (Moco's
runs still take minutes).

Each run is a fresh process, one after the other (the ``opensim`` wheel carries its own libcasadi and cannot
share a process with colloc's ``casadi``); colloc's bytecode is compiled beforehand, as ``pip install`` leaves
it.  colloc runs twice, with its defaults (``compile="auto"``): ``colloc cold`` with an empty cache folder for
compiled point functions (the compiler's CPU, if ``"auto"`` compiles, is counted), ``colloc warm`` with the
folder the first run left, as any later solve of the same expressions has (``COLLOC_CACHE_DIR``).  Columns:
set-up seconds (colloc: the script's ``build()`` plus the NLP, its derivatives and compiling; Moco: its
study), solve seconds (IPOPT), end-to-end wall and CPU seconds (process and children: the compiler, Moco's
threads), iterations and objective; then Moco / colloc ratios of the CPU seconds, the fairer measure on a
shared machine.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROBLEMS = ("tracking", "predictive", "inverse")
INTERVALS = {"tracking": 50, "predictive": 50}
QUICK_INTERVALS = 20
SCRIPTS = {"tracking": "gait2d_tracking", "predictive": "gait2d_predictive", "inverse": "gait2d_inverse"}

COLLOC_SIDE = r"""
import importlib.util, json, resource, sys, time
wall, cpu = time.time(), time.process_time()
import colloc as cl
path, intervals, stem, quick = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "quick"
spec = importlib.util.spec_from_file_location("problems." + path.rsplit("/", 1)[-1][:-3], path)
module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
if hasattr(module, "run"):  # a script that times itself (the inverse problem)
    out = module.run(quick=quick)
    result = out["result"]
    setup_wall, solve_wall = out["build_s"], out["solve_s"]
else:
    problem = module.build()
    script_wall = time.time() - wall
    result = cl.solve(problem, **dict(module.SOLVE, intervals=intervals))
    setup_wall, solve_wall = script_wall + result.build_seconds, result.solve_seconds
children = resource.getrusage(resource.RUSAGE_CHILDREN)
report = dict(setup_wall=setup_wall, solve_wall=solve_wall, wall=time.time() - wall,
              cpu=time.process_time() - cpu + children.ru_utime + children.ru_stime,
              compiler_cpu=children.ru_utime + children.ru_stime, iterations=result.iterations,
              objective=result.objective, success=bool(result.success), status=str(result.status.value))
result.trajectory.write(stem + ".sto")
if hasattr(module, "write_opensim"):  # OpenSim's names: a start for the Moco side (the prediction's check)
    module.write_opensim(result, stem + "_opensim.sto")
open(stem + ".json", "w").write(json.dumps(report))
"""


def colloc_script(problem):
    return ROOT / "problems" / f"{SCRIPTS[problem]}.py"


def moco_command(problem, quick, out, guess=None, max_iterations=None):
    """The Moco side's command line, or None when its script is missing; ``guess``: the prediction started
    from that .sto (OpenSim's names) instead of the tracking solution; ``max_iterations``: the prediction's
    iteration limit (None: the example's 1000)."""
    if problem == "inverse":
        script = ROOT / "scripts" / "moco_inverse.py"
        args = ["--tolerance", "1e-4", "--mesh-interval", "0.04" if quick else "0.02", "--tendons", "implicit",
                "--tag", "moco_inverse"]  # gait2d_inverse.run()'s defaults: implicit tendons
    else:
        script = ROOT / "scripts" / ("moco_gait.py" if problem == "tracking" else "moco_gait_predictive.py")
        args = ["--intervals", str(QUICK_INTERVALS if quick else INTERVALS[problem])]
        if guess is not None:
            args += ["--guess", str(guess), "--tag", "_from_colloc"]
        if problem == "predictive" and max_iterations is not None:
            args += ["--max-iterations", str(max_iterations)]
    return [sys.executable, str(script), *args, "--out", str(out)] if script.exists() else None


def bytecode(out):
    """colloc's and the problems' bytecode compiled beforehand into their ``__pycache__`` folders, as ``pip install``
    leaves it (this environment may forbid writing bytecode, and then every run compiled colloc's sources
    again: 0.15 CPU s); the environment of the colloc runs, which may read it.  (Not a ``PYTHONPYCACHEPREFIX``:
    Python then looks there for every module's bytecode, NumPy's and CasADi's too, and the first run compiled
    those: 0.4 s.)  ``out`` is unused."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "colloc"), str(ROOT / "problems")], env=env,
                   capture_output=True, check=False)
    return env


def run_colloc(problem, quick, out, cache, side="warm"):
    """One colloc run in a subprocess; its files are named by ``side`` (cold or warm compile cache), so that the
    second run does not overwrite the first's."""
    intervals = QUICK_INTERVALS if quick else INTERVALS.get(problem, 0)
    stem = out / f"colloc_{problem}_{'quick' if quick else 'full'}_{side}"
    env = dict(bytecode(out), PYTHONPATH=str(ROOT), COLLOC_CACHE_DIR=str(cache))
    done = subprocess.run([sys.executable, "-c", COLLOC_SIDE, str(colloc_script(problem)), str(intervals), str(stem),
                           "quick" if quick else "full"], capture_output=True, text=True, env=env, cwd=out)
    if done.returncode != 0:
        return dict(error=(done.stderr.strip().splitlines() or ["?"])[-1])
    return json.loads(pathlib.Path(f"{stem}.json").read_text())


def run_moco(problem, quick, out, guess=None, max_iterations=None):
    command = moco_command(problem, quick, out, guess, max_iterations)
    if command is None:
        return dict(error="its Moco script is not in scripts/")
    wall = time.time()
    before = os.times()
    done = subprocess.run(command, capture_output=True, text=True, cwd=out)
    after = os.times()
    if done.returncode != 0:
        return dict(error=f"{pathlib.Path(command[1]).name} failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    report = json.loads(done.stdout.strip().splitlines()[-1]) if problem != "inverse" else \
        json.loads((out / "moco_inverse.json").read_text())
    get = lambda *keys: next(report[k] for k in keys if k in report)  # noqa: E731 (the scripts name them two ways)
    return dict(setup_wall=get("build_wall", "build_wall_s"), solve_wall=get("solve_wall", "solve_wall_s"),
                wall=time.time() - wall, cpu=(after.children_user + after.children_system)
                - (before.children_user + before.children_system), compiler_cpu=0.0,
                iterations=report["iterations"], objective=report["objective"], success=report["success"],
                status=report["status"])


def line(problem, side, r):
    if "error" in r:
        return f"{problem:10} {side:16} not run: {r['error']}"
    return (f"{problem:10} {side:16} {r['setup_wall']:9.2f} {r['solve_wall']:9.2f} {r['wall']:9.2f} {r['cpu']:9.2f} "
            f"{r['compiler_cpu']:7.2f} {r['iterations']:5d} {r['objective']:14.8f}  {r['status']}")


def ratios(problem, rows):
    moco = rows.get("moco", {})
    out = []
    for side in ("colloc cold", "colloc warm"):
        mine = rows.get(side, {})
        if "error" in moco or "error" in mine or not moco or not mine:
            continue
        out.append(f"{problem:10} Moco / {side}: CPU {moco['cpu'] / mine['cpu']:.1f}×, wall {moco['wall'] / mine['wall']:.1f}×; "
                   f"objectives differ by {abs(moco['objective'] - mine['objective']) / abs(moco['objective']):.1e} relative")
    check, mine = rows.get("moco from colloc", {}), rows.get("colloc warm", {})
    if check and mine and "error" not in check and "error" not in mine:
        out.append(f"{problem:10} Moco from colloc's solution: {check['iterations']} iterations, {check['objective']:.8f} "
                   f"({(check['objective'] - mine['objective']) / abs(mine['objective']):+.1e} relative to colloc's)")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", choices=PROBLEMS, default=list(PROBLEMS))
    parser.add_argument("--quick", action="store_true", help="20 intervals (inverse: 0.04 s mesh)")
    parser.add_argument("--out", default="moco_benchmark")
    parser.add_argument("--moco-max-iterations", type=int,
                        help="the prediction's Moco iteration limit from the tracking guess (default: the example's 1000)")
    parser.add_argument("--skip-moco", action="store_true", help="colloc's side only (no opensim package)")
    args = parser.parse_args(argv)
    out = pathlib.Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    head = (f"{'problem':10} {'side':16} {'setup s':>9} {'solve s':>9} {'wall s':>9} {'CPU s':>9} {'cc CPU':>7} "
            f"{'iter':>5} {'objective':>14}  status")
    lines, table = [head], {}
    print(head, flush=True)
    for problem in args.problems:
        rows = table[problem] = {}
        if not colloc_script(problem).exists():
            rows["colloc cold"] = dict(error=f"problems/{SCRIPTS[problem]}.py is not in this checkout")
        else:
            with tempfile.TemporaryDirectory(prefix="colloc-cc-") as cache:
                rows["colloc cold"] = run_colloc(problem, args.quick, out, cache, "cold")
                rows["colloc warm"] = run_colloc(problem, args.quick, out, cache, "warm")
        if not args.skip_moco:
            rows["moco"] = run_moco(problem, args.quick, out, max_iterations=args.moco_max_iterations)
            start = out / f"colloc_{problem}_{'quick' if args.quick else 'full'}_warm_opensim.sto"
            if problem == "predictive" and start.exists():  # is colloc's optimum Moco's too? (not timed against)
                rows["moco from colloc"] = run_moco(problem, args.quick, out, guess=start)
        for side, r in rows.items():
            lines.append(line(problem, side, r))
            print(lines[-1], flush=True)
    lines += [r for problem, rows in table.items() for r in ratios(problem, rows)]
    text = "\n".join(lines)
    (out / f"moco_benchmark{'_quick' if args.quick else ''}.txt").write_text(text + "\n")
    (out / f"moco_benchmark{'_quick' if args.quick else ''}.json").write_text(json.dumps(table, indent=1))
    print("\n".join(lines[len(lines) - sum(len(ratios(p, r)) for p, r in table.items()):]))
    return table


if __name__ == "__main__":
    main()
