"""The default build: a mapped per-point function inside an MX NLP, and the cheap fixed costs around it.

The NLP must not depend on how it is evaluated: the mapped copy that keeps only the used inputs
and outputs gives the point function's own values, the default (MX) and the expanded (SX) NLP
reach the same optimum, the end-to-end benchmark compares like with like, and an IPOPT option set
accepted once is not probed again while a bad one is still refused by name.
"""
import importlib.util
import os
import sys

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.solvers import ipopt as ipopt_backend
from colloc.transcription import make_options, map_points, point_function

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from problems import cartpole, pendulum_cartesian  # noqa: E402


@pytest.mark.parametrize("module", [cartpole, pendulum_cartesian])
def test_lean_map_gives_the_point_functions_values(module):
    """Columns of map_points equal the point function evaluated column by column, empty outputs included."""
    problem = module.build()
    point, _ = point_function(problem, make_options())
    count = 7
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((point.size1_in(i), count if i < 5 else 1)) for i in range(point.n_in())]
    got, _ = map_points(point, count, [ca.MX(a) for a in args])
    for k in range(count):
        want = point(*[a[:, k if a.shape[1] == count else 0] for a in args])
        for i, (g, w) in enumerate(zip(got, want)):
            g = np.asarray(ca.evalf(g)).reshape(point.size1_out(i), count)
            assert g.shape[0] == w.shape[0]
            np.testing.assert_allclose(g[:, k], np.asarray(w).ravel(), rtol=1e-14, atol=1e-14)


def test_lean_map_drops_unused_time_and_empty_blocks():
    """The cart-pole's dynamics read neither time nor any multiplier: the mapped function takes x and u only."""
    point, _ = point_function(cartpole.build(), make_options())
    x = ca.MX.sym("x", 4, 5)
    u = ca.MX.sym("u", 1, 5)
    outs, _ = map_points(point, 5, [ca.MX(1, 5), x, ca.MX(0, 5), u, ca.MX(0, 5), ca.MX(0, 1)])
    f = ca.Function("f", [x, u], [outs[0]])
    assert f.n_nodes() < 10
    called = [f.instruction_MX(k) for k in range(f.n_instructions()) if f.instruction_id(k) == ca.OP_CALL]
    assert len(called) == 1
    assert called[0].which_function().n_in() == 2


@pytest.mark.parametrize("module, intervals", [(cartpole, 20), (pendulum_cartesian, 20)])
def test_default_and_expanded_nlp_reach_the_same_optimum(module, intervals):
    """Evaluation by MX map or by the expanded SX graph is the same NLP: same optimum to round-off."""
    fast = cl.solve(module.build(), intervals=intervals)
    expanded = cl.solve(module.build(), intervals=intervals, expand=True)
    assert fast.success and expanded.success
    assert abs(fast.objective - expanded.objective) <= 1e-10 * abs(expanded.objective)
    assert fast.violations.keys() == expanded.violations.keys()


def test_accepted_ipopt_options_are_probed_once(monkeypatch):
    calls = []
    real = ipopt_backend._probe
    monkeypatch.setattr(ipopt_backend, "_probe", lambda opts: calls.append(dict(opts)) or real(opts))
    monkeypatch.setattr(ipopt_backend, "_ACCEPTED", set())
    options = {"tol": 1e-9, "max_iter": 77}
    ipopt_backend.ipopt_options(options)
    ipopt_backend.ipopt_options(dict(options))
    assert len(calls) == 1
    with pytest.raises(cl.OptionError, match="Unknown IPOPT option `max_iterz`"):
        ipopt_backend.ipopt_options({"max_iterz": 3})
    with pytest.raises(cl.OptionError, match="Unknown IPOPT option `max_iterz`"):
        ipopt_backend.ipopt_options({"max_iterz": 3})


def _end_to_end():
    scripts = os.path.join(ROOT, "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    spec = importlib.util.spec_from_file_location("end_to_end", os.path.join(scripts, "end_to_end.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("problem", ["cartpole", "pendulum"])
def test_end_to_end_benchmark_compares_the_same_nlp(problem):
    """Both MUMPS orderings of the hand-written NLP and colloc's defaults reach one optimum (no timing asserted)."""
    rows = _end_to_end()._worker(problem, 10, 1)
    objectives = [r[0][2] for r in rows.values()]
    assert np.ptp(objectives) <= 1e-8 * abs(objectives[0]), objectives
    assert rows["colloc"][0][1] == rows["amd"][0][1]  # colloc uses AMD: same NLP, same iterates
