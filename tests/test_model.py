"""The model layer: coupled implicit DAEs across components, one labelled residual Function."""
import casadi as ca
import numpy as np
import pytest

import colloc as cl


def coupled():
    """p' + q' = 1 (tied to p, in component a, using b's derivative); q' = p (component b).

    Exact: p = 1 − e^{−t}, q = t − 1 + e^{−t} from p(0) = q(0) = 0.
    """
    a, b = cl.Component("a"), cl.Component("b")
    p = a.state("p")
    q = b.state("q")
    a.residual(p, a.dot(p) + b.dot(q) - 1)
    b.residual(q, b.dot(q) - p)
    return a, b, p, q


def test_whole_model_residual_is_one_function_with_labels():
    a, b, p, q = coupled()
    m = cl.Model([a, b])
    f = m.dynamics()
    assert isinstance(f, ca.Function) and f.name() == "dynamics"
    assert m.residual_labels() == ["residual:a.p", "residual:b.q"]
    xdot, res = f(0.0, [0.3, 0.1], [0.5, 0.2], [], [], [])
    assert np.allclose(np.asarray(res).ravel(), [0.5 + 0.2 - 1, 0.2 - 0.3])
    assert np.allclose(np.asarray(xdot).ravel(), [0.5, 0.2])


@pytest.mark.parametrize("scheme", ["trapezoidal", "hermite-simpson", "radau-3"])
def test_coupled_implicit_dae_matches_the_exact_solution(scheme):
    a, b, p, q = coupled()
    prob = cl.Problem([a, b], tf=1.0)
    prob.initial({p: 0.0, q: 0.0})
    res = cl.solve(prob, scheme=scheme, intervals=40, ipopt={"tol": 1e-12})
    assert res.success
    t = res.trajectory.time
    tol = {"trapezoidal": 1e-4, "hermite-simpson": 1e-9, "radau-3": 1e-9}[scheme]
    assert np.abs(res.trajectory["a.p"] - (1 - np.exp(-t))).max() < tol
    assert np.abs(res.trajectory["b.q"] - (t - 1 + np.exp(-t))).max() < tol


def test_explicit_rows_are_substituted_inside_residuals():
    c = cl.Component("c")
    x = c.state("x")
    y = c.state("y")
    c.derivative(x, -x)
    c.residual(y, c.dot(y) - c.dot(x))  # y' = x' = −x
    m = cl.Model([c])
    xdot, res = m.dynamics()(0.0, [2.0, 0.0], [5.0], [], [], [])
    assert np.allclose(np.asarray(res).ravel(), [5.0 + 2.0])


def test_model_names_and_lookup():
    a, b, p, q = coupled()
    m = cl.Model([a, b])
    assert m.names == ["a.p", "b.q"]
    assert m.lookup("b.q").symbol is q
    with pytest.raises(cl.ModelError, match="Did you mean `a.p`"):
        m.lookup("a.pp")
