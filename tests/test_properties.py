"""Property-based tests over random small problems and meshes (hypothesis)."""
import math

import casadi as ca
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import colloc as cl
from colloc.transcription.nlp import Layout

SCHEMES = ["trapezoidal", "hermite-simpson", "radau-1", "radau-2", "radau-3"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 4)), min_size=1, max_size=4), st.integers(0, 2**32 - 1))
def test_layout_pack_unpack_round_trip(shapes, seed):
    lay = Layout()
    for i, (rows, cols) in enumerate(shapes):
        lay.add(f"b{i}", [f"r{j}" for j in range(rows)], cols)
    w = np.random.default_rng(seed).normal(size=lay.size)
    assert np.array_equal(lay.pack(lay.unpack(w)), w)
    assert len(lay.labels()) == lay.size


def mesh_strategy():
    return st.lists(st.floats(0.01, 1.0), min_size=1, max_size=5).map(lambda d: np.concatenate([[0.0], np.cumsum(d) / np.sum(d)]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nx=st.integers(1, 3), nu=st.integers(1, 2), seed=st.integers(0, 10_000),
    scheme=st.sampled_from(SCHEMES), mesh=mesh_strategy(),
    implicit=st.booleans(), free_tf=st.booleans(), mode=st.sampled_from(["default", "implicit", "explicit"]),
)
def test_any_valid_problem_solves_without_crashing(nx, nu, seed, scheme, mesh, implicit, free_tf, mode):
    rng = np.random.default_rng(seed)
    A, B = rng.normal(size=(nx, nx)), rng.normal(size=(nx, nu))
    c = cl.Component("sys")
    xs = [c.state(f"x{i}", bounds=(-10, 10)) for i in range(nx)]
    us = [c.control(f"u{i}", bounds=(-5, 5)) for i in range(nu)]
    x, u = ca.vertcat(*xs), ca.vertcat(*us)
    rhs = ca.mtimes(ca.DM(A), x) + ca.mtimes(ca.DM(B), u)
    for i, s in enumerate(xs):
        if implicit and i == 0:
            c.residual(s, c.dot(s) - rhs[i])
        else:
            c.derivative(s, rhs[i])
    p = cl.Problem([c], tf=(0.5, 2.0) if free_tf else 1.0)
    p.initial({s: float(v) for s, v in zip(xs, rng.uniform(-1, 1, nx))})
    p.minimize(integral=ca.sumsqr(u) + ca.sumsqr(x), final=p.tf if free_tf else None)
    res = cl.solve(p, scheme=scheme, mesh=mesh, mode=mode, ipopt={"max_iter": 200})
    assert isinstance(res, cl.SolveResult)
    assert res.trajectory.time.size == (mesh.size - 1) * cl.get_scheme(scheme).stride + 1
    assert np.isfinite(res.objective) or not res.success


BAD_VALUES = [math.nan, math.inf, -math.inf, "x", None, (1, 0), (math.nan, 1)]


@settings(max_examples=60, deadline=None)
@given(where=st.sampled_from(["initial", "final", "bound", "guess", "state_bounds", "tf", "intervals", "scheme", "mesh", "name"]),
       bad=st.sampled_from(BAD_VALUES))
def test_any_invalid_input_raises_a_colloc_error(where, bad):
    c = cl.Component("c")

    def attempt():
        if where == "state_bounds":
            c.state("y", bounds=bad if isinstance(bad, tuple) else (bad, bad) if bad in (math.inf, -math.inf) else (bad, 1))
            return
        x = c.state("x")
        c.derivative(x, -x)
        if where == "tf":
            cl.Problem([c], tf=bad)
            return
        p = cl.Problem([c], tf=1.0)
        if where == "initial":
            p.initial({x: bad})
        elif where == "final":
            p.final({"c.xx" if bad is None else x: bad})
        elif where == "bound":
            p.bound(x, *(bad if isinstance(bad, tuple) else (bad, bad)))
        elif where == "guess":
            p.guess({x: bad if not isinstance(bad, tuple) else (bad[0], math.nan)})
        elif where == "intervals":
            cl.solve(p, intervals=bad if bad is not None else -1)
        elif where == "scheme":
            cl.solve(p, scheme=bad if bad is not None else "nope")
        elif where == "mesh":
            cl.solve(p, mesh=[0.0, bad if not isinstance(bad, tuple) else 2.0, 1.0] if bad is not None else [0.5, 1.0])
        elif where == "name":
            cl.Component(f"{bad} bad")

    with pytest.raises(cl.CollocError):
        attempt()


def test_same_problem_gives_bit_identical_results():
    def build():
        c = cl.Component("m")
        x, v = c.state("x"), c.state("v")
        u = c.control("u", bounds=(-3, 3))
        c.derivative(x, v)
        c.residual(v, c.dot(v) - u + 0.1 * ca.sin(x))
        p = cl.Problem([c], tf=(0.5, 4.0))
        p.initial({x: 0, v: 0})
        p.final({x: 1, v: 0})
        p.minimize(integral=u**2, final=p.tf)
        return p

    a = cl.solve(build(), intervals=15)
    b = cl.solve(build(), intervals=15)
    assert a.objective == b.objective and a.iterations == b.iterations
    for n in a.trajectory.names:
        assert np.array_equal(a.trajectory[n], b.trajectory[n]), n
