"""Hermite–Simpson midpoint controls: free against tied to the mean of the interval's end controls.

For every single-phase problem in ``problems/`` with a ``REFERENCE`` (and catalyst mixing, a
singular arc), solve with Hermite–Simpson on the script's own mesh twice — the midpoint control
a free variable (``control_interpolation="free"``), and constrained to the mean of the
interval-end controls (``"linear"``, OpenSim Moco's default) — and print the relative error of
the reported quantity against the reference, the IPOPT iterations and whether the solution was
flagged for control oscillation.

Usage: ``python scripts/midpoint_controls.py [STEM ...]``
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import colloc as cl

PROBLEMS = Path(__file__).resolve().parents[1] / "problems"
TREATMENTS = ("free", "linear")


def load(stem):
    spec = importlib.util.spec_from_file_location(f"problems.{stem}", PROBLEMS / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def candidates():
    """Problem scripts that are one collocation phase with a reference value."""
    for path in sorted(PROBLEMS.glob("*.py")):
        if path.stem.startswith("_"):
            continue
        module = load(path.stem)
        solve = dict(getattr(module, "SOLVE", {}))
        if not hasattr(module, "REFERENCE") or solve.get("scheme") == "midpoint-vi":
            continue
        if isinstance(module.build(), cl.Problem):
            yield path.stem, module


def measure(module, treatment):
    ref = module.REFERENCE
    options = {"intervals": 30, **getattr(module, "SOLVE", {})}
    options.update(scheme="hermite-simpson", control_interpolation=treatment)
    ipopt = {"tol": min(1e-9, ref["tolerance"] * 1e-2), "print_level": 0, "max_iter": 1000}
    result = cl.solve(module.build(), ipopt=ipopt, **options)
    quantity = ref.get("quantity", "objective")
    value = result.objective if quantity == "objective" else result.trajectory.final(quantity.split(" ", 1)[1])
    error = abs(value - ref["value"]) / max(abs(ref["value"]), 1e-12)
    return options["intervals"], error, ref["tolerance"], result


def main(stems):
    print(f"{'problem':28s} {'N':>4s} {'tol':>7s}  " + "  ".join(f"{t + ' error':>12s} {'it':>4s} {'osc':>3s}" for t in TREATMENTS))
    for stem, module in candidates():
        if stems and stem not in stems:
            continue
        cells, n, tol = [], None, None
        for treatment in TREATMENTS:
            n, error, tol, result = measure(module, treatment)
            flag = "yes" if any("oscillat" in w for w in result.warnings) else "no"
            cells.append(f"{error:12.2e} {result.iterations:4d} {flag:>3s}" + ("" if result.success else "!"))
        print(f"{stem:28s} {n:4d} {tol:7.0e}  " + "  ".join(cells), flush=True)


if __name__ == "__main__":
    main(set(sys.argv[1:]))
