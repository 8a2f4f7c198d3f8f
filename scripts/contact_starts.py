"""Contact-implicit solves: iterations and seconds per problem, and how often random starts converge.

``python scripts/contact_starts.py`` (or ``scripts/benchmark.py --contact``) prints, per problem, the IPOPT
iterations summed over the relaxation homotopy, the build and solve seconds and the objective; then,
for each problem, solves it from 20 random initial guesses — the problem's guess with every state
perturbed (seeded normal noise, 0.2 × the state's range on the guess plus 0.1), contact forces zero —
and prints the fraction that converge to within 1 % of the best objective found.

Problems: the pushed block (``problems/pushed_block.py``; T = 2, slides throughout, J* = 3.424722;
T = 4, sticks, J* = 3.173349) and the ball that must bounce (``problems/bounce_to_target.py``; two-phase
reference 3.983592) by collocation; the block and the bar landing (``problems/bar_landing.py``, J* = 0)
by the contact-implicit midpoint-vi equations; the hopper's stride (``problems/hopper.py``, its homotopy from
ε = 1; two-phase reference 870.39 at 20 intervals per phase; ``scripts/hopper_gait.py`` compares the two).  Usage::

    python scripts/contact_starts.py [--starts 20] [--intervals 20] [--seed 0] [--only vi] [--fixed-mesh]

The collocation solves have free steps (``free_steps=True``) unless ``--fixed-mesh``.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import colloc as cl  # noqa: E402


def load(stem):
    spec = importlib.util.spec_from_file_location(f"problems.{stem}", os.path.join(ROOT, "problems", f"{stem}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cases(free_steps=True):
    """``(label, build(), solve options, reference objective)`` of every contact-implicit problem measured."""
    block, ball, bar, hopper = load("pushed_block"), load("bounce_to_target"), load("bar_landing"), load("hopper")
    opts = dict(contact="implicit", impacts=False, free_steps=free_steps)
    vi = dict(contact="implicit", scheme="midpoint-vi")
    return [("block T=2", lambda: block.build(duration=2.0), opts, block.optimum(2.0)),
            ("block T=4", lambda: block.build(duration=4.0), opts, block.optimum(4.0)),
            ("ball (bounce)", ball.build, dict(contact="implicit", free_steps=free_steps), 3.98359237),
            ("hopper stride", hopper.build, dict(contact="implicit", relaxation=1.0, free_steps=free_steps), 870.3932),
            ("block T=2 vi", lambda: block.build(duration=2.0), vi, block.optimum(2.0)),
            ("block T=4 vi", lambda: block.build(duration=4.0), vi, block.optimum(4.0)),
            ("bar land. vi", bar.build, vi, 0.0)]


def timings(intervals=20, only=None, free_steps=True):
    """One solve per problem from its own guess: iterations, seconds, objective and error."""
    rows = []
    for label, build, opts, ref in cases(free_steps):
        if only and only not in label:
            continue
        res = cl.solve(build(), intervals=intervals, **opts)
        rows.append(dict(problem=label, status=res.status.value, iterations=res.iterations, build=res.build_seconds,
                         solve=res.solve_seconds, objective=res.objective, error=res.objective - ref))
        r = rows[-1]
        print(f"{label:14s} {r['status']:14s} it {r['iterations']:5d}  build {r['build']:6.2f} s  solve {r['solve']:6.2f} s  "
              f"J {r['objective']:.7f}  (J − ref {r['error']:+.2e})", flush=True)
    return rows


def perturbed(problem, grid_times, rng):
    """The problem's own guess (sampled on ``grid_times``) with every state perturbed; controls and forces zero."""
    from colloc.transcription.guess import _default, _from_spec

    cols, kinds = {}, {}
    for v in problem.model.states:
        base = _from_spec(problem.guesses[v.name], grid_times) if v.name in problem.guesses else _default(problem, v.name, grid_times)
        span = float(np.ptp(base)) if base.size else 0.0
        lo, hi = problem.bounds[v.name]
        cols[v.name] = np.clip(base + (0.2 * span + 0.1) * rng.standard_normal(grid_times.size), lo, hi)
        kinds[v.name] = "state"
    return cl.Trajectory(grid_times, cols, kinds)


def starts(count=20, intervals=20, seed=0, only=None, free_steps=True):
    """Fraction of ``count`` perturbed starts per problem that end within 1 % of the best objective."""
    rng = np.random.default_rng(seed)
    warnings.filterwarnings("ignore", message="The (guess|trajectory)")  # a perturbed state table, no controls: expected
    out = {}
    for label, build, opts, ref in cases(free_steps):
        if only and only not in label:
            continue
        problem = build()
        tf = problem.tf_bounds[0] if not problem.free_final_time else problem.guesses.get("tf", ("constant", 1.0))[1]
        times = np.linspace(problem.t0_value, tf, 4 * intervals + 1)
        values = []
        for _ in range(count):
            res = cl.solve(build(), intervals=intervals, guess=perturbed(problem, times, rng), **opts)
            values.append(res.objective if res.success else np.nan)
        values = np.array(values)
        best = np.nanmin(values) if np.isfinite(values).any() else np.nan
        within = np.isfinite(values) & (np.abs(values - best) <= 0.01 * max(abs(best), 1e-3))  # 1e-5 of a zero optimum
        out[label] = dict(fraction=float(within.mean()), best=float(best), reference=ref, converged=int(np.isfinite(values).sum()))
        near = np.isfinite(values) & (np.abs(values - ref) <= 0.01 * max(abs(ref), 1e-3))
        out[label].update(near_reference=int(near.sum()))
        print(f"{label:14s} {within.sum():2d}/{count} within 1 % of the best {best:.6f} (reference {ref:.6f}), "
              f"{near.sum():2d}/{count} within 1 % of the reference; {np.isfinite(values).sum()} converged", flush=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--starts", type=int, default=20)
    ap.add_argument("--intervals", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-starts", action="store_true", help="timings only")
    ap.add_argument("--only", metavar="TEXT", help="the problems whose label contains TEXT (e.g. 'vi')")
    ap.add_argument("--fixed-mesh", action="store_true", help="collocation on the mesh given, not free steps (free_steps=False)")
    args = ap.parse_args(argv)
    timings(args.intervals, args.only, not args.fixed_mesh)
    if not args.no_starts:
        starts(args.starts, args.intervals, args.seed, args.only, not args.fixed_mesh)


if __name__ == "__main__":
    main()
