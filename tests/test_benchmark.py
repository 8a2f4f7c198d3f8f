"""Smoke test of scripts/benchmark.py: colloc and the hand-written NLP are the same problem.

No timing is asserted; this only guards the benchmark's premise (same NLP, same
optimum) so that its ratios keep meaning something when colloc changes.
"""
import importlib.util
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _load_benchmark():
    spec = importlib.util.spec_from_file_location("colloc_benchmark", os.path.join(ROOT, "scripts", "benchmark.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_benchmark_sides_reach_the_same_objective():
    bench = _load_benchmark()
    for problem, scheme in (("cartpole", "hermite-simpson"), ("pendulum", "hermite-simpson")):
        colloc_side, hand_side = bench.compare(problem, scheme, n=10, reps=1, isolate=False)
        for side in (colloc_side, hand_side):
            assert math.isfinite(side.objective), f"{problem} {side.case.side}: {side.status}"
        assert colloc_side.variables == hand_side.variables and colloc_side.constraints == hand_side.constraints
        assert abs(colloc_side.objective - hand_side.objective) <= 1e-8 * abs(hand_side.objective), (problem, colloc_side.objective, hand_side.objective)


def test_fatrop_section_measures_both_backends_on_the_same_nlp():
    bench = _load_benchmark()
    rows = [bench.fatrop_case("cartpole", 10, backend) for backend in ("ipopt", "fatrop")]
    assert [r["status"] for r in rows] == ["solved", "solved"]
    assert abs(rows[0]["objective"] - rows[1]["objective"]) <= 1e-8 * abs(rows[0]["objective"])
    assert rows[1]["stages"].startswith("nx=") and rows[1]["linalg_s"] >= 0 and rows[0]["variables"] == rows[1]["variables"]
