"""Grid points needed for a given accuracy: adaptive refinement against uniform meshes.

Problem B4a (hyper-sensitive, t_f = 50; docs/problems.md).  Reference: the converged
optimum J* = 1.3308069049 (radau-5 × 600 and radau-6 × 1000 agree to 1e-12;
PSOPT prints 1.330826, which is 1.43e-5 above it).  For each scheme the script
refines adaptively to the tolerance given, then doubles a uniform mesh until it
is as accurate, and prints both grid-point counts.

    python scripts/refinement_study.py [--tolerance 1e-6] [--schemes hermite-simpson radau-3]
"""
import argparse
import importlib.util
from pathlib import Path

import colloc as cl

J_STAR = 1.3308069049
ROOT = Path(__file__).resolve().parents[1]


def load(stem):
    spec = importlib.util.spec_from_file_location(stem, ROOT / "problems" / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tolerance", type=float, default=1e-6)
    ap.add_argument("--schemes", nargs="+", default=["hermite-simpson", "radau-3"])
    args = ap.parse_args(argv)
    hs = load("hypersensitive")
    ipopt = {"tol": 1e-12}
    print(f"{'scheme':16s} {'mesh':8s} {'intervals':>9s} {'grid points':>11s} {'rel. error of J':>16s}")
    for scheme in args.schemes:
        res = cl.solve(hs.build(), scheme=scheme, intervals=10, ipopt=ipopt, refine=dict(tolerance=args.tolerance))
        err = abs(res.objective - J_STAR) / J_STAR
        points = res.trajectory.time.size
        print(f"{scheme:16s} {'refined':8s} {res.trajectory.metadata['intervals']:9d} {points:11d} {err:16.2e}")
        n = 25
        while True:
            uni = cl.solve(hs.build(), scheme=scheme, intervals=n, ipopt=ipopt)
            uerr = abs(uni.objective - J_STAR) / J_STAR
            print(f"{scheme:16s} {'uniform':8s} {n:9d} {uni.trajectory.time.size:11d} {uerr:16.2e}")
            if uerr <= err or n > 3200:
                break
            n *= 2
        print(f"  -> {scheme}: refined {points} grid points; coarsest uniform mesh of the same accuracy {uni.trajectory.time.size}")


if __name__ == "__main__":
    main()
