"""Contact-implicit solves as the mesh grows: IPOPT iterations and CPU seconds at 20, 50, 100 and 200 intervals.

``python scripts/contact_scaling.py`` (or ``scripts/benchmark.py --contact-scaling``) solves, each in a fresh
process with colloc's defaults for ``contact="implicit"`` (free steps, grid sequencing above 40 intervals):
the pushed block (``problems/pushed_block.py``, T = 2 and T = 4, J* = 3.424722 and 3.173349), the ball that
must bounce (``problems/bounce_to_target.py``, two-phase reference 3.983592) and the hopper's stride
(``problems/hopper.py``, its ``SOLVE``: fixed mesh, homotopy from ε = 1).  It prints the iterations summed
over every homotopy step (the coarse mesh's too), the process's CPU seconds for building and solving
(``time.process_time``: it moves less than wall time on a shared machine), their ratio, the objective less
the free steps' pull, and the status.  Usage::

    python scripts/contact_scaling.py [--sizes 20 50 100 200] [--cases block2 block4 ball hopper] [--timeout 900]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = (20, 50, 100, 200)
#: name: (problem file, build() arguments, solve() options beyond the problem's SOLVE)
CASES = {
    "block2": ("pushed_block", dict(duration=2.0), {}),
    "block4": ("pushed_block", dict(duration=4.0), {}),
    "ball": ("bounce_to_target", {}, {}),
    "hopper": ("hopper", {}, {}),
}


def load(stem):
    spec = importlib.util.spec_from_file_location(f"problems.{stem}", os.path.join(ROOT, "problems", f"{stem}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def case(name, intervals):
    """One solve in this process: ``{iterations, cpu, objective, status}``."""
    sys.path.insert(0, ROOT)
    import colloc as cl

    stem, build, extra = CASES[name]
    module = load(stem)
    options = {**module.SOLVE, "intervals": int(intervals), **extra}
    start = time.process_time()
    res = cl.solve(module.build(**build), **options)
    cpu = time.process_time() - start
    return dict(iterations=res.iterations, cpu=cpu, objective=res.objective - res.terms.get("steps", 0.0),
                status=res.status.value, steps=len(res.contact["steps"]))


def table(sizes=SIZES, cases=tuple(CASES), timeout=900.0):
    """Every case at every size, each in a subprocess; prints one row each and returns them."""
    rows = []
    print(f"{'case':8s} {'N':>5s} {'iterations':>10s} {'CPU s':>8s} {'ms/iter':>8s} {'objective':>12s}  status")
    for name in cases:
        for n in sizes:
            cmd = [sys.executable, os.path.abspath(__file__), "--case", name, str(n)]
            env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
            try:
                out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
                row = json.loads(out.stdout.strip().splitlines()[-1])
            except subprocess.TimeoutExpired:
                row = dict(iterations=None, cpu=None, objective=None, status=f"timeout {timeout:g} s")
            except (IndexError, json.JSONDecodeError):
                row = dict(iterations=None, cpu=None, objective=None, status="error: " + out.stderr.strip()[-200:])
            row.update(case=name, intervals=n)
            rows.append(row)
            it, cpu = row["iterations"], row["cpu"]
            per = f"{1e3 * cpu / it:8.2f}" if it and cpu else f"{'-':>8s}"
            print(f"{name:8s} {n:5d} {it if it is not None else '-':>10} {cpu if cpu is not None else float('nan'):8.2f} {per} "
                  f"{row['objective'] if row['objective'] is not None else float('nan'):12.6f}  {row['status']}", flush=True)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds (wall) per solve")
    ap.add_argument("--case", nargs=2, metavar=("NAME", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.case:
        print(json.dumps(case(args.case[0], int(args.case[1]))))
        return None
    return table(args.sizes, args.cases, args.timeout)


if __name__ == "__main__":
    main()
