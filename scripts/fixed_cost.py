"""Where a small solve's CPU goes: colloc's fixed cost outside IPOPT, stage by stage.

``python scripts/benchmark.py --fixed-cost [--problem all] [--sizes 25 50 100] [--reps 15]``

Times what a user runs — the problem script's ``build()`` and ``colloc.solve(problem, intervals=N)``
with every default (Hermite–Simpson) — in process CPU seconds (``time.process_time``), and splits it
by wrapping the pipeline's stages in this process only (colloc itself is not changed):

``build()``        the problem script's ``build()``
``validate``       ``Problem.validate`` and the transcription's option checks
``guess``          the initial guess from the problem's rules
``projection``     the guess projected onto the kinematic constraints (models with constraints)
``transcription``  the rest of the NLP's construction (point function, layout, rows, costs)
``IPOPT set-up``   the NLP's derivatives (``colloc.transcription.derivatives.structured``) and ``casadi.nlpsol``
``IPOPT solve``    the solver call (``stats["solve_cpu_seconds"]``)
``result``         reconstruction, violations, slacks, the oscillation check, ``SolveResult``
``other``          the rest of ``colloc.solve`` (option probe, backend look-up)

"outside" is everything but IPOPT's set-up and solve, as a share of the total; "overhead" is what colloc
adds around building and solving the NLP — validation, option probe, guess, projection, reconstruction and
result (``validate + guess + projection + result + other``) — as a share of the total.  Each (problem, N)
runs in a fresh spawned process that first solves at N = 4 (plugin loading, first imports and the
one-per-process IPOPT option probe belong to nobody's time), then repeats ``reps`` times; medians.
"""
from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import statistics
import time

SIZES = (25, 50, 100)
#: What colloc adds around building and solving the NLP (the "overhead" column).
OVERHEAD = ("validate", "guess", "projection", "result", "other")
STAGES = ("build()", "validate", "guess", "projection", "transcription", "IPOPT set-up", "IPOPT solve", "result", "other")


class _Clock:
    """Process CPU seconds per stage, accumulated by wrapped functions (inclusive of what they call)."""

    def __init__(self):
        self.spent = {}

    def wrap(self, owner, attr, stage, static=False):
        inner = getattr(owner, attr)

        def timed(*args, **kwargs):
            start = time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                self.spent[stage] = self.spent.get(stage, 0.0) + time.process_time() - start

        setattr(owner, attr, staticmethod(timed) if static else timed)


def _instrument(clock):
    import casadi as ca

    import colloc.pipeline.driver as driver
    import colloc.transcription as transcription
    from colloc.transcription.collocation import Collocation

    clock.wrap(driver, "transcription", "validate")
    clock.wrap(transcription, "initial_guess", "guess")
    clock.wrap(transcription, "project_guess", "projection")
    clock.wrap(Collocation, "build", "build (inclusive)")
    clock.wrap(ca, "nlpsol", "IPOPT set-up")
    import colloc.solvers.ipopt as ipopt
    if hasattr(ipopt, "structured"):  # the NLP's Jacobian and Hessian built point by point for nlpsol
        clock.wrap(ipopt, "structured", "IPOPT set-up")
    clock.wrap(driver, "result", "result")


def _one(bench, problem, n, clock):
    import colloc as cl
    clock.spent.clear()
    start = time.process_time()
    prob = bench.load_problem(problem)
    clock.spent["build()"] = time.process_time() - start
    res = cl.solve(prob, intervals=n)
    total = time.process_time() - start
    s = dict(clock.spent)
    s["IPOPT solve"] = res.stats["solve_cpu_seconds"]
    s["transcription"] = s.pop("build (inclusive)") - s.get("guess", 0.0) - s.get("projection", 0.0)
    s["other"] = total - sum(s.get(k, 0.0) for k in STAGES if k != "other")
    s["total"] = total
    return s, res.iterations, res.objective


def _worker(problem, n, reps):
    import benchmark as bench
    clock = _Clock()
    _instrument(clock)
    _one(bench, problem, 4, clock)
    runs = [_one(bench, problem, n, clock) for _ in range(reps)]
    return runs


def measure(problem, n, reps):
    """``[(seconds by stage, iterations, objective), ...]`` from a fresh process."""
    with cf.ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as pool:
        return pool.submit(_worker, problem, n, reps).result()


def run(problems=("cartpole", "pendulum"), sizes=SIZES, reps=15):
    """Print one row per (problem, N), milliseconds of process CPU (medians), and return them as dicts."""
    print(f"\n## Fixed cost outside IPOPT: process CPU ms, medians of {reps}, Hermite–Simpson, every default\n")
    cols = ("total",) + STAGES
    print("| problem | N | " + " | ".join(cols) + " | outside | overhead | iterations |")
    print("|---" * (len(cols) + 5) + "|")
    out = []
    for problem in problems:
        for n in sizes:
            runs = measure(problem, n, reps)
            med = {k: 1e3 * statistics.median(r[0].get(k, 0.0) for r in runs) for k in cols}
            shares = [1 - (r[0]["IPOPT set-up"] + r[0]["IPOPT solve"]) / r[0]["total"] for r in runs]
            outside = statistics.median(shares)
            overhead = statistics.median(sum(r[0].get(k, 0.0) for k in OVERHEAD) / r[0]["total"] for r in runs)
            out.append(dict(problem=problem, n=n, outside=outside, overhead=overhead, iterations=runs[0][1], objective=runs[0][2], **med))
            print(f"| {problem} | {n} | " + " | ".join(f"{med[k]:.1f}" for k in cols)
                  + f" | {100 * outside:.0f} % | {100 * overhead:.0f} % | {runs[0][1]} |", flush=True)
    return out


def with_sizes(args):
    """The sizes and problems of the command line (``--sizes``, ``--problem``, ``--reps``), or the defaults."""
    problems = ("cartpole", "pendulum") if args.problem == "all" else (args.problem,)
    return run(problems, tuple(args.sizes or SIZES), args.reps if args.reps != 3 else 15)
