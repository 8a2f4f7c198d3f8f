"""The hopper's gait found contact-implicitly against the same gait solved with its phases scheduled.

``python scripts/hopper_gait.py`` solves ``problems/hopper.py``: the two-phase problem (stance, flight,
touchdown) at each mesh, then the contact-implicit problem from its guess with no contact schedule, and
prints both costs, their gap and the schedule each found (stance fraction, lift-off and touchdown times);
``--starts N`` then solves the contact-implicit problem from N random guesses (every state perturbed,
forces zero; ``scripts/contact_starts.py``) and counts those within 1 % of the best objective.  Usage::

    python scripts/hopper_gait.py [--intervals 10 20 40] [--starts 10] [--start-intervals 20] [--seed 0] [--free-steps]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import colloc as cl  # noqa: E402
from contact_starts import load, perturbed  # noqa: E402


FREE_STEPS = False


def options(hopper):
    """The script's solve options but its mesh (``contact="implicit"``, the homotopy's first ε), and free steps if asked."""
    return dict({k: v for k, v in hopper.SOLVE.items() if k != "intervals"}, free_steps=FREE_STEPS)


def two_phase(hopper, intervals):
    res = cl.solve(hopper.build_two_phase(), intervals=intervals)
    ph = res.trajectory.metadata["phases"]
    return res, dict(stance=ph[0]["duration"], fraction=ph[0]["duration"] / (ph[0]["duration"] + ph[1]["duration"]))


def compare(meshes):
    hopper = load("hopper")
    rows = []
    for n in meshes:
        ref, sched = two_phase(hopper, n)
        start = time.perf_counter()
        res = cl.solve(hopper.build(), intervals=n, **options(hopper))
        seconds = time.perf_counter() - start
        g = hopper.gait(res, n)
        rows.append(dict(intervals=n, two_phase=ref.objective, implicit=res.objective, status=res.status.value, **g))
        print(f"{n:3d} intervals: two-phase {ref.objective:.4f} (stance {sched['stance']:.4f} s, {sched['fraction']:.3f}); "
              f"contact-implicit {res.status.value} {res.objective:.4f} in {res.iterations} it, {seconds:.0f} s "
              f"(gap {res.objective / ref.objective - 1:+.2%}); stance {g['stance']:.4f} s ({g['fraction']:.3f}), "
              f"lift-off {[round(x, 4) for x in g['lift_off']]}, touchdown {[round(x, 4) for x in g['touchdown']]}", flush=True)
    return rows


def starts(count, intervals, seed):
    hopper = load("hopper")
    rng = np.random.default_rng(seed)
    warnings.filterwarnings("ignore", message="The (guess|trajectory)")
    problem = hopper.build()
    times = np.linspace(problem.t0_value, problem.tf_bounds[0], 4 * intervals + 1)
    values = []
    for k in range(count):
        res = cl.solve(hopper.build(), intervals=intervals, guess=perturbed(problem, times, rng), **options(hopper))
        values.append(res.objective if res.success else np.nan)
        g = hopper.gait(res, intervals) if res.success else {}
        print(f"start {k}: {res.status.value} {res.objective:.4f} stance {g.get('fraction', float('nan')):.3f}", flush=True)
    values = np.array(values)
    best = np.nanmin(values)
    within = np.isfinite(values) & (np.abs(values - best) <= 0.01 * abs(best))
    print(f"{within.sum()}/{count} within 1 % of the best {best:.4f}; {np.isfinite(values).sum()} converged", flush=True)
    return values


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--intervals", type=int, nargs="*", default=[10, 20, 40])
    ap.add_argument("--starts", type=int, default=0)
    ap.add_argument("--start-intervals", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--free-steps", action="store_true", help="contact-implicit solves with free steps (free_steps=True)")
    args = ap.parse_args(argv)
    global FREE_STEPS
    FREE_STEPS = args.free_steps
    compare(args.intervals)
    if args.starts:
        starts(args.starts, args.start_intervals, args.seed)


if __name__ == "__main__":
    main()
