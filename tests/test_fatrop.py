"""The FATROP backend: the stage-wise form of a collocation NLP, solves that match IPOPT, refusals, CLI.

IPOPT (MUMPS) on colloc's own layout is the oracle: the two solvers share
nothing but the NLP, so the same objective to 1e-8 (relative, both at tol 1e-10)
checks the permutation, the copies of shared mesh points and the mapping back
(FATROP at tol 1e-9: at 1e-10 it stalls on some of these problems, see the
docs/backends.md).
"""
from __future__ import annotations

import importlib
import os
import signal

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.cli import commands as cli
from colloc.solvers import fatrop as fatrop_backend
from colloc.solvers.stages import stage_structure, stagewise


def _both(name, scheme, intervals, **kw):
    build = importlib.import_module(f"problems.{name}").build
    a = cl.solve(build(), scheme=scheme, intervals=intervals, ipopt={"tol": 1e-10}, **kw)
    b = cl.solve(build(), scheme=scheme, intervals=intervals, backend="fatrop", fatrop={"tol": 1e-9}, **kw)
    return a, b


@pytest.mark.parametrize("name, scheme, intervals", [
    ("cartpole", "hermite-simpson", 20),             # explicit multibody, the benchmark's problem
    ("pendulum_cartesian", "radau-3", 10),           # holonomic rod (bordalba2023 projections), Radau's control penalty
    ("pendulum_cartesian", "trapezoidal", 20),
    ("bryson_denham", "hermite-simpson", 20),        # a path (state) bound that becomes active
    ("closed_chain", "hermite-simpson", 20),         # a closed kinematic loop
])
def test_fatrop_reaches_ipopts_objective_and_trajectory(name, scheme, intervals):
    a, b = _both(name, scheme, intervals)
    assert a.success and b.success, (a.message, b.message)
    assert b.objective == pytest.approx(a.objective, rel=1e-8)
    for key in a.trajectory.names:
        assert np.allclose(b.trajectory[key], a.trajectory[key], rtol=1e-5, atol=1e-5), key
    assert max(b.violations.values()) < 1e-8
    assert b.iterations > 0 and b.stats["return_status"] == 0


def test_posa2016_hermite_simpson_matches_ipopt():
    a, b = _both("pendulum_cartesian", "hermite-simpson", 20, constraint_method="posa2016")
    assert b.success and b.objective == pytest.approx(a.objective, rel=1e-8)


def test_stage_form_is_a_permutation_with_copies_of_the_shared_mesh_points():
    """Every variable has one home; copies sit one stage before their state; the rows are a permutation plus gap rows."""
    nlp = cl.build_nlp(importlib.import_module("problems.pendulum_cartesian").build(), scheme="hermite-simpson", intervals=6)
    st = stage_structure(nlp)
    assert np.array_equal(st.source[st.home], np.arange(nlp.layout.size))
    copies = np.flatnonzero(st.copy >= 0)
    assert np.array_equal(st.source[st.copy[copies]], copies)
    assert np.array_equal(np.sort(st.rows[st.rows >= 0]), np.arange(nlp.rows.size))
    assert sum(st.nx[1:]) == int((st.rows < 0).sum()) == copies.size
    assert sum(st.nx) + sum(st.nu) == st.size and len(st.nx) == 7
    # at a feasible point with copies equal to their states, the stage-wise rows are the NLP's rows, reordered
    W, f, g, x0, *_ = stagewise(nlp, st)
    w0 = nlp.layout.vector("guess")
    gw = np.asarray(ca.Function("g", [W], [g])(x0)).ravel()
    g0 = np.asarray(ca.Function("g", [nlp.w], [nlp.g])(w0)).ravel()
    assert np.allclose(gw[st.rows >= 0], g0[st.rows[st.rows >= 0]]) and np.allclose(gw[st.rows < 0], 0)
    assert float(ca.Function("f", [W], [f])(x0)) == pytest.approx(float(ca.Function("f", [nlp.w], [nlp.f])(w0)))


def _with_parameter():
    c = cl.Component("mass")
    x, v = c.state("x"), c.state("v")
    u = c.control("u", bounds=(-10, 10))
    k = c.parameter("k", bounds=(0, 2))
    c.derivative(x, v)
    c.derivative(v, u - k * x)
    prob = cl.Problem([c], t0=0.0, tf=1.0, name="spring")
    prob.initial({x: 0.0, v: 0.0})
    prob.final({x: 1.0, v: 0.0})
    prob.minimize(integral=u**2)
    return prob, x


def _sliding_mass():
    c = cl.Multibody("mass", coordinates=["x"], speeds=["v"])
    (x,), (v,) = c.coordinates, c.speeds
    u = c.control("u", bounds=(-100, 100))
    c.kinetic_energy = 0.5 * v**2
    c.potential_energy = 0 * x
    c.generalized_force = u
    prob = cl.Problem([c], t0=0.0, tf=1.0, name="di")
    prob.initial({x: 0.0, v: 0.0})
    prob.final({x: 1.0, v: 0.0})
    prob.minimize(integral=u**2)
    return prob


@pytest.mark.parametrize("make, kw, match", [
    (lambda: importlib.import_module("problems.double_integrator_time").build(), {}, "its final time is free"),
    (lambda: _with_parameter()[0], {}, r"it has parameters \(mass.k\)"),
    (lambda: importlib.import_module("problems.cartpole").build(), {"scheme": "legendre-gauss-2"}, "scheme `legendre-gauss-2`"),
    (lambda: _sliding_mass(), {"scheme": "midpoint-vi"}, "it takes single-phase collocation only"),
    (lambda: importlib.import_module("problems.simplest_walker").build(), {}, "it takes single-phase collocation only"),
])
def test_problems_fatrop_cannot_take_are_refused_before_building(make, kw, match, monkeypatch):
    def no_build(*a, **k):
        raise AssertionError("built")
    monkeypatch.setattr(fatrop_backend, "stage_structure", no_build)
    with pytest.raises(cl.OptionError, match=f"backend='fatrop' cannot solve this problem: {match}"):
        cl.solve(make(), backend="fatrop", intervals=4, **kw)


def test_endpoint_constraint_linking_both_ends_is_refused():
    c = cl.Component("free")
    y = c.state("y")
    q = c.control("q")
    c.derivative(y, q)
    prob = cl.Problem([c], t0=0.0, tf=1.0, name="periodic")
    prob.boundary(prob.at_tf(y) - prob.at_t0(y), 0.0, 0.0, name="periodic")
    prob.minimize(integral=q**2 + (y - 1) ** 2)
    with pytest.raises(cl.OptionError, match="endpoint constraint `periodic` links the initial and the final point"):
        cl.solve(prob, backend="fatrop", intervals=4)


@pytest.mark.parametrize("kw, match", [
    ({"backend": "fatrop", "fatrop": {"max_itr": 3}}, "Unknown FATROP option `max_itr`. Did you mean `max_iter`"),
    ({"backend": "fatrop", "fatrop": {"tol": "small"}}, "FATROP refused option `tol` = 'small'"),
    ({"backend": "fatrop", "fatrop": [1]}, "`fatrop` must be a dict of FATROP options; got list"),
    ({"backend": "fatrop", "ipopt": {"tol": 1e-6}}, "`ipopt=` options do not apply to backend='fatrop'; pass them as fatrop="),
    ({"fatrop": {"tol": 1e-6}}, "`fatrop=` options do not apply to backend='ipopt'"),
    ({"backend": "fatrp"}, "Unknown backend `fatrp`. Did you mean `fatrop`"),
    ({"backend": "fatrop", "checkpoint": ("x.csv", 2)}, "backend='fatrop' reports no iterations while it runs"),
    ({"backend": "fatrop", "progress": print}, "no `checkpoint` or progress callable"),
])
def test_bad_fatrop_options_raise_one_sentence(kw, match, monkeypatch):
    def no_build(*a, **k):
        raise AssertionError("built")
    monkeypatch.setattr(fatrop_backend, "stage_structure", no_build)
    with pytest.raises(cl.OptionError, match=match):
        cl.solve(importlib.import_module("problems.double_integrator_energy").build(), intervals=4, **kw)


def test_iteration_limit_is_a_flagged_result_with_the_last_iterate():
    res = cl.solve(importlib.import_module("problems.cartpole").build(), intervals=10, backend="fatrop", fatrop={"max_iter": 3})
    assert res.status == cl.Status.MAX_ITERATIONS and not res.success and "max_iter" in res.message
    assert np.isfinite(res.trajectory["cartpole.x"]).all()


def test_ctrl_c_flags_the_result_interrupted_and_keeps_the_iterate(monkeypatch):
    """A SIGINT while FATROP runs is honoured when it returns (it cannot stop between iterations)."""
    class SignalOnEntry(fatrop_backend._interruptible):
        def __enter__(self):
            entered = super().__enter__()
            os.kill(os.getpid(), signal.SIGINT)  # delivered to the handler the solve installed
            return entered
    monkeypatch.setattr(fatrop_backend, "_interruptible", SignalOnEntry)
    res = cl.solve(importlib.import_module("problems.cartpole").build(), intervals=10, backend="fatrop")
    assert res.status == cl.Status.INTERRUPTED and "interrupted" in res.message and not res.success
    monkeypatch.undo()
    done = cl.solve(importlib.import_module("problems.cartpole").build(), intervals=10, backend="fatrop")
    assert res.objective == done.objective  # FATROP finished its run: the kept iterate is its solution


def test_cli_solves_with_fatrop_and_refuses_a_bad_option(tmp_path, capsys):
    script = os.path.join(os.path.dirname(__file__), "..", "problems", "cartpole.py")
    code = cli.main(["solve", script, "--backend", "fatrop", "--fatrop", "max_iter=200", "--intervals", "10",
                     "--out", str(tmp_path), "--quiet"])
    assert code == 0 and (tmp_path / "cartpole.csv").exists()
    assert cl.Trajectory.read(tmp_path / "cartpole.csv").metadata["status"] == "solved"
    code = cli.main(["solve", script, "--backend", "fatrop", "--fatrop", "max_itr=2", "--out", str(tmp_path), "--quiet"])
    assert code == 2 and "Unknown FATROP option `max_itr`" in capsys.readouterr().err


def test_mesh_refinement_runs_every_mesh_with_fatrop():
    """Each mesh is solved by FATROP warm-started from the last; the final mesh agrees with IPOPT on it."""
    build = importlib.import_module("problems.cartpole").build
    res = cl.solve(build(), intervals=10, backend="fatrop", refine=dict(tolerance=1e-4, max_iterations=3))
    assert res.success and len(res.refinement) > 1
    mesh = res.trajectory.metadata["mesh"]
    assert cl.solve(build(), mesh=mesh).objective == pytest.approx(res.objective, rel=1e-8)


def test_multi_start_solves_every_start_with_fatrop():
    build = importlib.import_module("problems.cartpole").build
    res = cl.solve(build(), intervals=10, starts=2, backend="fatrop", fatrop={"tol": 1e-9})
    assert res.success and res.objective == pytest.approx(cl.solve(build(), intervals=10).objective, rel=1e-8)
