"""The cheaper paths of a small solve give what the direct computations give.

A small solve's fixed cost is mostly CasADi calls from Python, so colloc builds a model's constraint
functions once, projects the guess with stacked inputs and normal-equation steps, reads which endpoint
rows fixed values settle from sparsity patterns, and evaluates the levels between mesh points in one
call.  Each is checked here against an independent answer: NumPy's least squares, CasADi's own
``depends_on`` row by row, and the pendulum's constraint written out by hand.
"""
from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.transcription.consistent import _lstsq_steps, fixed_endpoint_rows
from problems import pendulum_cartesian


def _reference_steps(J, r, movable=None):
    """Minimum-norm least-squares step of every point by NumPy's ``lstsq`` (one point at a time)."""
    if movable is not None:
        J = J * movable[:, None, :]
    return np.array([-np.linalg.lstsq(Jk, rk, rcond=None)[0] for Jk, rk in zip(J, r)])


@pytest.mark.parametrize("shape", [(1, 2), (2, 4), (3, 3), (2, 1), (4, 2)], ids=["row", "wide", "square", "column", "tall"])
def test_steps_are_numpys_minimum_norm_least_squares(shape):
    rng = np.random.default_rng(7)
    J = rng.normal(size=(40, *shape))
    r = rng.normal(size=(40, shape[0]))
    np.testing.assert_allclose(_lstsq_steps(J, r), _reference_steps(J, r), rtol=1e-10, atol=1e-12)


def test_steps_with_fixed_entries_and_rank_deficient_points():
    """A point whose movable entries leave a row without any (an endpoint fixed by its bounds) has a
    rank-deficient Jacobian there: the step is still the minimum-norm least-squares one."""
    rng = np.random.default_rng(11)
    J = rng.normal(size=(30, 2, 3))
    r = rng.normal(size=(30, 2))
    movable = np.ones((30, 3), bool)
    movable[0] = [True, False, False]  # one movable entry for two rows
    J[5, 1] = 2.0 * J[5, 0]  # dependent rows
    J[9, 0] = 0.0  # a zero row
    np.testing.assert_allclose(_lstsq_steps(J, r, movable), _reference_steps(J, r, movable), rtol=1e-9, atol=1e-12)


def _pendulum_levels(x, y, vx, vy):
    return np.array([x**2 + y**2 - 1, 2 * (x * vx + y * vy)])


def test_mesh_levels_are_the_rod_constraint_and_its_derivative():
    model = pendulum_cartesian.build().model
    levels, labels, _ = model.mesh_levels()
    assert labels == ["holonomic:pend.rod", "holonomic:pend.rod.dot"]
    names = [s.name for s in model.states]
    rng = np.random.default_rng(3)
    for _ in range(5):
        values = dict(zip(names, rng.normal(size=len(names))))
        x, y, vx, vy = (values[f"pend.{k}"] for k in ("x", "y", "vx", "vy"))
        F, Fx = (np.asarray(o) for o in levels(0.0, [values[n] for n in names], np.zeros(0)))
        np.testing.assert_allclose(F.ravel(), _pendulum_levels(x, y, vx, vy), rtol=1e-14, atol=1e-14)
        by_name = {n: Fx[:, i] for i, n in enumerate(names)}
        np.testing.assert_allclose(by_name["pend.x"], [2 * x, 2 * vx], rtol=1e-14)
        np.testing.assert_allclose(by_name["pend.vy"], [0.0, 2 * y], atol=1e-14)


def test_a_models_functions_are_built_once_and_hand_out_their_own_labels():
    model = pendulum_cartesian.build().model
    f1, labels1 = model.constraint_function("velocity")
    labels1.append("changed by the caller")
    f2, labels2 = model.constraint_function("velocity")
    assert f1 is f2 and labels2 == ["holonomic:pend.rod.dot"]
    assert model.dynamics() is model.dynamics() and model.mesh_levels() is model.mesh_levels()


def test_between_mesh_points_is_the_rod_error_at_the_midpoints():
    res = cl.solve(pendulum_cartesian.build(), intervals=10)
    traj = res.trajectory
    mid = np.arange(1, traj.time.size, 2)  # Hermite–Simpson midpoints
    err = np.abs(_pendulum_levels(*(traj[f"pend.{k}"][mid] for k in ("x", "y", "vx", "vy")))).max(axis=1)
    got = res.between_mesh_points
    assert set(got) == {"holonomic:pend.rod", "holonomic:pend.rod.dot"}
    np.testing.assert_allclose([got["holonomic:pend.rod"], got["holonomic:pend.rod.dot"]], err, rtol=1e-12)
    assert err.min() > 1e-8  # the levels hold at mesh points only: a check that reads mesh points would see ~0


@pytest.mark.parametrize("which", ["t0", "tf"])
def test_rows_settled_by_fixed_endpoints_match_casadis_depends_on(which):
    """Rows of F(t, x, p) whose states are all fixed, and which use neither p nor (free tf) t, are dropped."""
    c = cl.Component("c")
    x = [c.state(f"x{i}") for i in range(4)]
    for s in x:
        c.derivative(s, 0 * s)
    k = c.parameter("k", bounds=(0, 1))
    prob = cl.Problem([c], t0=0.0, tf=(0.5, 2.0))
    prob.initial({x[0]: 1.0, x[1]: 0.0, x[2]: (0.0, 1.0)})
    prob.final({x[0]: 0.0, x[1]: 1.0, x[3]: 2.0})
    prob.minimize(final=prob.tf)
    model = prob.model
    t, xs, p = cl.TIME, model.vector("state"), model.vector("parameter")
    F = ca.vertcat(x[0] ** 2 + x[1], x[0] * x[2], x[1] + k, x[3] * t, x[0] - x[1] * t, ca.SX(0.5) * x[1])
    got = fixed_endpoint_rows(prob, F, t, xs, p, which)
    bounds = prob.initial_bounds if which == "t0" else prob.final_bounds
    fixed = {f"c.x{i}" for i in range(4) if f"c.x{i}" in bounds and bounds[f"c.x{i}"][0] == bounds[f"c.x{i}"][1]}
    want = []
    for r in range(F.numel()):
        used = {f"c.x{i}" for i in range(4) if ca.depends_on(F[r], x[i])}
        timed = which == "tf" and ca.depends_on(F[r], t)
        want.append(bool(used) and used <= fixed and not ca.depends_on(F[r], p) and not timed)
    assert got.tolist() == want
    assert any(want) and not all(want)


def test_buffer_call_gives_casadis_own_call():
    """Dense and sparse outputs, an empty input, a parameter column broadcast over a mapped function."""
    from colloc.numeric import call

    x, p, z = ca.SX.sym("x", 3), ca.SX.sym("p", 2), ca.SX.sym("z", 0)
    jac = ca.jacobian(x * x[0], x)  # sparse
    f = ca.Function("f", [x, p, z], [ca.veccat(x * p[0], jac), ca.sin(x[:2]) + p, ca.SX(0, 1)]).map(7)
    rng = np.random.default_rng(5)
    X, P, Z = rng.normal(size=(3, 7)), rng.normal(size=(2, 1)), np.zeros((0, 7))
    want = [np.asarray(o) for o in f(X, P, Z)]
    got = call(f, X, P, Z)
    assert [g.shape for g in got] == [w.shape for w in want]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_repeated_evaluations_return_their_own_arrays():
    from colloc.numeric import Evaluator

    x = ca.SX.sym("x", 2)
    ev = Evaluator(ca.Function("f", [x], [ca.vertcat(x[0] * x[1], ca.exp(x[0]))]).map(4))
    a, b = np.arange(8.0).reshape(2, 4), -np.ones((2, 4))
    first = ev(a)[0]
    second = ev(b)[0]
    np.testing.assert_array_equal(first, np.vstack([a[0] * a[1], np.exp(a[0])]))
    np.testing.assert_array_equal(second, np.vstack([b[0] * b[1], np.exp(b[0])]))
