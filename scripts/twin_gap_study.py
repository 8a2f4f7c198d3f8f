"""Where the gap between a constrained formulation and its minimal twin comes from.

For each problem the script first solves the minimal twin with radau-5 on 100
intervals (the continuous optimum J*, to ~1e-10), then, on uniform
Hermite–Simpson meshes, the twin and the constrained form with each constraint
method, and prints every optimum's own relative error against J* and the gap
between the two forms.  The gap is the difference of two O(h⁴) discretisation
errors; redundant Cartesian coordinates carry a larger error constant than the
angle, so the gap falls at fourth order but from a higher start.

    python scripts/twin_gap_study.py [--problems cartpole_cartesian pendulum_cartesian] [--intervals 25 50 100 200]
"""
import argparse
import importlib.util
from pathlib import Path

import colloc as cl

ROOT = Path(__file__).resolve().parents[1]
IPOPT = {"tol": 1e-12}


def load(stem):
    spec = importlib.util.spec_from_file_location(stem, ROOT / "problems" / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def constrained_problem(module, twin):
    """The constrained problem, started from its twin's solution where the script offers a mapping."""
    problem = module.build()
    if hasattr(module, "guess_from_twin"):
        return module.guess_from_twin(problem, twin.trajectory), {"mu_init": 1e-6}
    return problem, {}


def study(stem, meshes, methods):
    module = load(stem)
    twin_module = load(module.TWIN)
    j_star = cl.solve(twin_module.build(), scheme="radau-5", intervals=100, ipopt=IPOPT).objective
    print(f"\n{stem} (twin {module.TWIN}); J* = {j_star:.10f} (twin, radau-5 × 100)")
    print(f"{'N':>5s} {'twin error':>12s} " + " ".join(f"{m + ' error':>20s} {'gap':>9s}" for m in methods))
    for n in meshes:
        twin = cl.solve(twin_module.build(), scheme="hermite-simpson", intervals=n, ipopt=IPOPT)
        cells = []
        for method in methods:
            problem, extra = constrained_problem(module, twin)
            res = cl.solve(problem, scheme="hermite-simpson", intervals=n, constraint_method=method, ipopt={**IPOPT, **extra})
            flag = "" if res.success else " (failed)"
            cells.append(f"{res.objective / j_star - 1:20.2e} {abs(res.objective / twin.objective - 1):9.2e}{flag}")
        print(f"{n:5d} {twin.objective / j_star - 1:12.2e} " + " ".join(cells))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", nargs="+", default=["cartpole_cartesian", "pendulum_cartesian"])
    ap.add_argument("--intervals", nargs="+", type=int, default=[25, 50, 100, 200])
    ap.add_argument("--methods", nargs="+", default=["bordalba2023", "posa2016"])
    args = ap.parse_args(argv)
    for stem in args.problems:
        study(stem, args.intervals, args.methods)


if __name__ == "__main__":
    main()
