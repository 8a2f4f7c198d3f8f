"""End to end (build + solve) with colloc's defaults against the best hand-written CasADi NLP.

``python scripts/benchmark.py --end-to-end [--sizes 25 100 ...] [--reps 3] [--problem all]``

colloc's side is what a user runs: the problem script's ``build()`` and ``colloc.solve(problem,
intervals=N)`` with every default (Hermite–Simpson, colloc's IPOPT options), timed from before
``build()`` to the returned result (validation, option checks, guess, transcription, IPOPT's set-up
and solve, reconstruction, violations, oscillation check).  The hand-written side is the careful
CasADi user's NLP of the same scheme (``benchmark.build_cartpole`` / ``build_pendulum``: one SX
Function per grid point, ``map``-ped, MX NLP, no expansion of the whole NLP), timed from the symbolic
model to the solution, once with MUMPS's AMD ordering (``mumps_pivot_order=0``) and once with
IPOPT's default choice (``7``); the faster of the two is the reference.  The target is colloc ≤ 1.1×
that reference at every N.  Every run is timed in wall seconds and in process CPU seconds; the CPU
columns (the faster ordering's CPU time as the reference) move less when other work shares the machine.

Each (problem, N) runs in a fresh spawned process that first solves both sides at N = 4 (plugin
loading belongs to nobody's time) and then alternates the three runs ``reps`` times, so a change
of the machine's load hits all of them alike; medians are reported.
"""
from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import statistics
import time

TARGET = 1.1
ORDERS = {"amd": 0, "auto": 7}
SIZES = (25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 10000)


def _hand(bench, problem, n, order, data):
    mode = "explicit" if problem == "cartpole" else "default"
    case = bench.Case(problem, "hermite-simpson", n, mode, "hand", expand=False, ipopt=(("mumps_pivot_order", order),))
    start, cpu = time.perf_counter(), time.process_time()
    out = bench._run_hand(case, data)
    return time.perf_counter() - start, out["iterations"], out["objective"], time.process_time() - cpu


def _colloc(bench, problem, n):
    import colloc as cl
    start, cpu = time.perf_counter(), time.process_time()
    res = cl.solve(bench.load_problem(problem), intervals=n)
    return time.perf_counter() - start, res.iterations, res.objective, time.process_time() - cpu, res.build_seconds, res.solve_seconds


def _worker(problem, n, reps):
    import benchmark as bench
    data = bench.PendulumData.from_problem(bench.load_problem("pendulum")) if problem == "pendulum" else None
    for order in ORDERS.values():
        _hand(bench, problem, 4, order, data)
    _colloc(bench, problem, 4)
    rows = {name: [] for name in (*ORDERS, "colloc")}
    for _ in range(reps):
        for name, order in ORDERS.items():
            rows[name].append(_hand(bench, problem, n, order, data))
        rows["colloc"].append(_colloc(bench, problem, n))
    return rows


def measure(problem, n, reps):
    """``{side: [(seconds, iterations, objective, CPU seconds, ...), ...]}`` from a fresh process."""
    with cf.ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as pool:
        return pool.submit(_worker, problem, n, reps).result()


def run(problems=("cartpole", "pendulum"), sizes=SIZES, reps=3):
    """Print one row per (problem, N) and return them as dicts."""
    print(f"\n## End to end, colloc defaults vs the best hand-written MX-map NLP (medians of {reps}; target ≤ {TARGET}×)\n")
    print(f"{'problem':9} {'N':>6} | {'hand amd':>9} {'hand auto':>9} {'best':>9} | {'colloc':>9} {'build':>7} {'solve':>7} | "
          f"{'ratio':>6} {'it c/h':>7} {'rel.diff':>8} target | {'CPU hand':>8} {'colloc':>7} {'ratio':>6}")
    out = []
    for problem in problems:
        for n in sizes:
            rows = measure(problem, n, reps)
            med = {k: statistics.median(r[0] for r in v) for k, v in rows.items()}
            best = min(med[k] for k in ORDERS)
            ratio = med["colloc"] / best
            c = rows["colloc"][0]
            h = rows[min(ORDERS, key=med.get)][0]
            diff = abs(c[2] - h[2]) / max(abs(h[2]), 1e-300)
            build = statistics.median(r[4] for r in rows["colloc"])
            solve = statistics.median(r[5] for r in rows["colloc"])
            cpu = {k: statistics.median(r[3] for r in v) for k, v in rows.items()}
            cpu_best = min(cpu[k] for k in ORDERS)
            row = dict(problem=problem, n=n, hand_amd=med["amd"], hand_auto=med["auto"], best=best, colloc=med["colloc"],
                       build=build, solve=solve, ratio=ratio, iterations=(c[1], h[1]), rel_diff=diff,
                       cpu_hand=cpu_best, cpu_colloc=cpu["colloc"], cpu_ratio=cpu["colloc"] / cpu_best)
            out.append(row)
            print(f"{problem:9} {n:6d} | {med['amd']:9.3f} {med['auto']:9.3f} {best:9.3f} | {med['colloc']:9.3f} {build:7.3f} {solve:7.3f} | "
                  f"{ratio:6.2f} {c[1]:>3d}/{h[1]:<3d} {diff:8.1e} {'met' if ratio <= TARGET else 'MISSED':6} | "
                  f"{cpu_best:8.3f} {cpu['colloc']:7.3f} {cpu['colloc'] / cpu_best:6.2f}", flush=True)
    return out


def with_sizes(args):
    """The sizes and problems of the command line (``--sizes``, ``--problem``), or the defaults."""
    problems = ("cartpole", "pendulum") if args.problem == "all" else (args.problem,)
    return run(problems, tuple(args.sizes or SIZES), args.reps)

