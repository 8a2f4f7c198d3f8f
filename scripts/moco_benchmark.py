"""colloc and OpenSim Moco on Moco's 2-D walking tracking problem, on the same machine in one run.

    python scripts/moco_benchmark.py [--intervals 50] [--out DIR] [--skip-moco]

Each side runs in its own fresh process, one after the other (the ``opensim`` wheel carries its own
libcasadi and cannot share a process with colloc's ``casadi``): colloc builds and solves
problems/gait2d_tracking.py; Moco solves the same problem with scripts/moco_gait.py.  Reported per side:
set-up seconds (colloc: loading the model, the tables and the goals plus transcription and ``nlpsol``;
Moco: MocoTrack's set-up and the study's), solve seconds (IPOPT), end-to-end wall and process CPU
seconds, iterations and objective; then the ratios Moco / colloc.  On a machine shared with other work
the CPU seconds are the fairer measure (wall time grows with the load).
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent

COLLOC_SIDE = r"""
import importlib.util, json, sys, time
wall, cpu = time.time(), time.process_time()
import colloc as cl
spec = importlib.util.spec_from_file_location("gait2d_tracking", sys.argv[1])
module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
problem = module.build()
setup_wall, setup_cpu = time.time() - wall, time.process_time() - cpu
options = dict(module.SOLVE, intervals=int(sys.argv[2]))
result = cl.solve(problem, **options)
result.trajectory.write(sys.argv[3] + ".sto")
report = dict(setup_wall=setup_wall + result.build_seconds, solve_wall=result.solve_seconds,
              wall=time.time() - wall, cpu=time.process_time() - cpu, iterations=result.iterations,
              objective=result.objective, success=bool(result.success), status=str(result.status))
open(sys.argv[3] + ".json", "w").write(json.dumps(report))
"""


def run_colloc(intervals, out):
    stem = out / f"colloc_gait_N{intervals}"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    subprocess.run([sys.executable, "-c", COLLOC_SIDE, str(ROOT / "problems" / "gait2d_tracking.py"), str(intervals),
                    str(stem)], check=True, env=env, cwd=out)
    return json.loads(pathlib.Path(f"{stem}.json").read_text())


def run_moco(intervals, out):
    wall = time.time()
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "moco_gait.py"), "--intervals", str(intervals),
                           "--out", str(out)], capture_output=True, text=True, cwd=out)
    if done.returncode != 0:
        raise RuntimeError(f"scripts/moco_gait.py failed: {done.stderr[-2000:]}")
    report = json.loads((out / f"moco_gait_N{intervals}.json").read_text())
    wall = time.time() - wall
    return dict(setup_wall=report["build_wall"], solve_wall=report["solve_wall"], wall=wall,
                cpu=report["build_cpu"] + report["solve_cpu"], iterations=report["iterations"],
                objective=report["objective"], success=report["success"], status=report["status"])


def table(rows):
    head = f"{'side':8} {'setup s':>9} {'solve s':>9} {'wall s':>9} {'CPU s':>9} {'iter':>5} {'objective':>12}  status"
    lines = [head]
    for side, r in rows.items():
        lines.append(f"{side:8} {r['setup_wall']:9.2f} {r['solve_wall']:9.2f} {r['wall']:9.2f} {r['cpu']:9.2f} "
                     f"{r['iterations']:5d} {r['objective']:12.7f}  {r['status']}")
    if len(rows) == 2:
        c, m = rows["colloc"], rows["moco"]
        lines.append(f"Moco / colloc: wall {m['wall'] / c['wall']:.1f}×, CPU {m['cpu'] / c['cpu']:.1f}×, "
                     f"solve {m['solve_wall'] / c['solve_wall']:.1f}×; objectives differ by "
                     f"{abs(m['objective'] - c['objective']) / abs(m['objective']):.2e} relative")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--intervals", type=int, default=50)
    parser.add_argument("--out", default="moco_benchmark")
    parser.add_argument("--skip-moco", action="store_true", help="colloc's side only (no opensim package)")
    args = parser.parse_args(argv)
    out = pathlib.Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    rows = {"colloc": run_colloc(args.intervals, out)}
    if not args.skip_moco:
        rows["moco"] = run_moco(args.intervals, out)
    text = table(rows)
    (out / f"moco_benchmark_N{args.intervals}.txt").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
