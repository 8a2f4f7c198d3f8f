"""Compiled point functions against CasADi's SX virtual machine, first and second run.

``python scripts/benchmark.py --compiled [--cases panda-50 ur5-40 ...] [--reps 1]``

Each run is a fresh Python process (``--compiled-case CASE SETTING CACHE``) that imports colloc, builds the
problem with its script's ``build()`` and solves it with the script's own settings, once, timed from before
``build()`` to the returned result:

``off``     ``compile=False``: the SX virtual machine.
``first``   ``compile=True`` into an empty cache folder: every point function compiled (the compiler runs as
            child processes; their CPU seconds are reported apart and added to the total CPU).
``second``  ``compile=True`` again, a new process, the same folder: the libraries are loaded, nothing compiled.
``auto``    the default ``compile="auto"`` into an empty cache folder: what it chooses to compile, and its time.

Columns: wall and CPU seconds end to end (CPU = this process + the compilers), the compiler's CPU seconds and
how many libraries it built, IPOPT iterations, the seconds IPOPT spent in NLP function evaluations per
iteration (CasADi's ``t_proc_nlp_*`` summed, i.e. CPU time), and the objective (printed with 15 digits: it is
the same with and without compiling).
"""
from __future__ import annotations

import importlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: case -> (problem module, build() keyword arguments, intervals; None: the script's SOLVE)
CASES = {
    "cartpole-100": ("cartpole", {}, 100),
    "cartpole-1600": ("cartpole", {}, 1600),
    "panda-50": ("panda_reach", {}, 50),
    "panda-100": ("panda_reach", {}, 100),
    "ur5-40": ("ur5_min_time", {}, 40),
    "ur5-100": ("ur5_min_time", {}, 100),
    "solo12-6": ("solo12_jump", {}, None),
    "muscles40-30": ("muscle_redundancy", {"num_muscles": 40}, 30),
    "muscles40-100": ("muscle_redundancy", {"num_muscles": 40}, 100),
}
SETTINGS = ("off", "first", "second", "auto")


def case(name, setting, cache):
    """One solve in this process; a dict of what the table prints."""
    sys.path.insert(0, ROOT)
    os.environ["COLLOC_CACHE_DIR"] = cache
    import colloc as cl
    from colloc.transcription import compilation

    built = []
    start_compiler = compilation.run_compiler
    compilation.run_compiler = lambda command: built.append(command) or start_compiler(command)
    module, kwargs, intervals = CASES[name]
    script = importlib.import_module(f"problems.{module}")
    solve = dict(getattr(script, "SOLVE", {}))
    if intervals is not None:
        solve["intervals"] = intervals
    compile_ = {"off": False, "first": True, "second": True, "auto": "auto"}[setting]
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    start, cpu = time.perf_counter(), time.process_time()
    res = cl.solve(script.build(**kwargs), compile=compile_, **solve)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    compiler = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    evaluations = sum(v for k, v in res.stats.items() if k.startswith("t_proc_nlp_"))
    return dict(case=name, setting=setting, wall=wall, cpu=cpu + compiler, compiler=compiler, libraries=len(built),
                iterations=res.iterations, eval_per_iteration=evaluations / max(res.iterations, 1), objective=res.objective,
                status=res.status.value, build=res.build_seconds)


def _run(name, setting, cache):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "benchmark.py"), "--compiled-case", name, setting, cache],
                         capture_output=True, text=True, env=env)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        return dict(case=name, setting=setting, error=(out.stderr.strip().splitlines() or ["?"])[-1])
    return json.loads(lines[-1])


def table(cases=None, reps=1):
    """Run every case in every setting (fresh processes), print the table and return its rows."""
    rows = []
    print(f"{'case':14s} {'setting':7s} | {'wall s':>7s} {'CPU s':>7s} {'cc CPU':>7s} {'libs':>4s} | {'iter':>5s} "
          f"{'eval ms/it':>10s} | {'objective':>22s} status")
    for name in cases or CASES:
        for _ in range(reps):
            first_cache, auto_cache = tempfile.mkdtemp(prefix="colloc-cc-"), tempfile.mkdtemp(prefix="colloc-cc-")
            try:
                for setting in SETTINGS:
                    r = _run(name, setting, auto_cache if setting == "auto" else first_cache)
                    rows.append(r)
                    if "error" in r:
                        print(f"{name:14s} {setting:7s} | failed: {r['error']}", flush=True)
                        continue
                    print(f"{name:14s} {setting:7s} | {r['wall']:7.2f} {r['cpu']:7.2f} {r['compiler']:7.2f} {r['libraries']:4d} | "
                          f"{r['iterations']:5d} {r['eval_per_iteration'] * 1e3:10.2f} | {r['objective']:22.15g} {r['status']}", flush=True)
            finally:
                shutil.rmtree(first_cache, ignore_errors=True)
                shutil.rmtree(auto_cache, ignore_errors=True)
    return rows
