"""Defect and residual rows at fixed numbers against hand-derived formulas (no IPOPT)."""
import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.transcription import make_options, transcribe


def nonlinear_problem(implicit=False):
    c = cl.Component("c")
    x = c.state("x")
    y = c.state("y")
    u = c.control("u")
    c.derivative(x, -x**2 + u * ca.sin(y))
    if implicit:
        c.residual(y, (1 + x**2) * c.dot(y) - x * y)
    else:
        c.derivative(y, x * y / (1 + x**2))
    p = cl.Problem([c], t0=0.5, tf=2.0)
    p.minimize(integral=u**2 + x**2)
    return p


def evaluate(problem, scheme, n, seed=0, **opts):
    nlp = transcribe(problem, cl.make_mesh(n), cl.get_scheme(scheme), make_options(**opts))
    w = np.random.default_rng(seed).uniform(-1, 1, nlp.layout.size)
    g = np.asarray(ca.Function("g", [nlp.w], [nlp.g, nlp.f])(w)[0]).ravel()
    f = float(ca.Function("f", [nlp.w], [nlp.f])(w))
    return nlp, nlp.layout.unpack(w), g, f


def rows_of(nlp, g, kind):
    for b in nlp.rows.blocks:
        if b.kind == kind:
            return g[b.offset:b.offset + b.size].reshape(len(b.points), len(b.names)).T
    raise KeyError(kind)


def f_explicit(x, y, u):
    return np.array([-x**2 + u * np.sin(y), x * y / (1 + x**2)])


def test_trapezoidal_defect_formula():
    nlp, V, g, f = evaluate(nonlinear_problem(), "trapezoidal", 4)
    X, U = V["x"], V["u"]
    h = 1.5 / 4
    F = f_explicit(X[0], X[1], U[0])
    expected = X[:, 1:] - X[:, :-1] - h / 2 * (F[:, :-1] + F[:, 1:])
    assert np.allclose(rows_of(nlp, g, "defect"), expected, atol=1e-13)
    # integral cost by the trapezoid rule
    L = U[0] ** 2 + X[0] ** 2
    assert f == pytest.approx(h * (L.sum() - 0.5 * L[0] - 0.5 * L[-1]), rel=1e-13)


def test_hermite_simpson_defect_formulas():
    nlp, V, g, f = evaluate(nonlinear_problem(), "hermite-simpson", 3)
    X, U = V["x"], V["u"]
    h = 1.5 / 3
    F = f_explicit(X[0], X[1], U[0])
    x0, xm, x1 = X[:, 0:-1:2], X[:, 1::2], X[:, 2::2]
    f0, fm, f1 = F[:, 0:-1:2], F[:, 1::2], F[:, 2::2]
    assert np.allclose(rows_of(nlp, g, "defect.hermite"), xm - (x0 + x1) / 2 - h / 8 * (f0 - f1), atol=1e-13)
    assert np.allclose(rows_of(nlp, g, "defect.simpson"), x1 - x0 - h / 6 * (f0 + 4 * fm + f1), atol=1e-13)
    L = U[0] ** 2 + X[0] ** 2
    simpson = sum(h / 6 * (L[2 * i] + 4 * L[2 * i + 1] + L[2 * i + 2]) for i in range(3))
    assert f == pytest.approx(simpson, rel=1e-13)


def test_implicit_rows_use_derivative_variables():
    nlp, V, g, _ = evaluate(nonlinear_problem(implicit=True), "hermite-simpson", 2)
    X, Z, U = V["x"], V["z"], V["u"]
    res = rows_of(nlp, g, "residual")
    assert np.allclose(res[0], (1 + X[0] ** 2) * Z[0] - X[0] * X[1], atol=1e-13)
    h = 1.5 / 2
    F = np.vstack([-X[0] ** 2 + U[0] * np.sin(X[1]), Z[0]])
    simpson = X[:, 2::2] - X[:, 0:-1:2] - h / 6 * (F[:, 0:-1:2] + 4 * F[:, 1::2] + F[:, 2::2])
    assert np.allclose(rows_of(nlp, g, "defect.simpson"), simpson, atol=1e-13)


def test_mode_implicit_adds_derivative_variables_for_explicit_states():
    nlp, V, g, _ = evaluate(nonlinear_problem(), "trapezoidal", 2, mode="implicit")
    X, Z, U = V["x"], V["z"], V["u"]
    assert nlp.layout["z"].row_names == ["c.x.dot", "c.y.dot"]
    res = rows_of(nlp, g, "residual")
    assert np.allclose(res, Z - f_explicit(X[0], X[1], U[0]), atol=1e-13)


def test_mode_explicit_solves_affine_residuals():
    nlp, V, g, _ = evaluate(nonlinear_problem(implicit=True), "trapezoidal", 2, mode="explicit")
    assert nlp.layout["z"].row_names == []
    X, U = V["x"], V["u"]
    h = 1.5 / 2
    F = f_explicit(X[0], X[1], U[0])
    assert np.allclose(rows_of(nlp, g, "defect"), X[:, 1:] - X[:, :-1] - h / 2 * (F[:, :-1] + F[:, 1:]), atol=1e-13)


def test_radau_defects_are_differentiation_matrix_rows():
    nlp, V, g, _ = evaluate(nonlinear_problem(), "radau-3", 2)
    s = cl.get_scheme("radau-3")
    X, U = V["x"], V["u"]
    h = 1.5 / 2
    F = f_explicit(X[0], X[1], U[0])
    for k in range(1, 4):
        rows = rows_of(nlp, g, f"defect.defect{k - 1}")
        for i in range(2):
            cols = 3 * i + np.arange(4)
            assert np.allclose(rows[:, i], h * F[:, cols[k]] - X[:, cols] @ s.D[k], atol=1e-12)


def test_linear_control_interpolation_rows():
    nlp, V, g, _ = evaluate(nonlinear_problem(), "hermite-simpson", 3, control_interpolation="linear")
    U = V["u"][0]
    rows = rows_of(nlp, g, "control-interpolation")
    assert np.allclose(rows[0], U[1::2] - 0.5 * (U[0:-1:2] + U[2::2]), atol=1e-14)


@pytest.mark.parametrize("scheme", ["radau-3", "legendre-gauss-2"])
def test_controls_no_defect_uses_sit_on_the_control_polynomial(scheme):
    # Radau's first point and every Legendre–Gauss mesh point are not collocation points: their controls
    # are pulled to the polynomial through the interval's collocation controls (extrapolated; averaged
    # where two intervals meet), with a penalty that vanishes at the optimum, not left at the guess.
    problem = nonlinear_problem()
    problem.initial({"c.x": 1.0, "c.y": 0.5})
    result = cl.solve(problem, scheme=scheme, intervals=4, ipopt={"tol": 1e-12})
    assert result.success
    sch = cl.get_scheme(scheme)
    u, m, cols = result.trajectory["c.u"], sch.stride, sch.collocation_indices
    loose = [j for j in range(sch.num_nodes) if j not in set(cols)]
    side = {}
    for i in range(4):
        for j in loose:
            if i * m + j not in {k * m + c for k in range(4) for c in cols}:
                value = u[i * m + cols] @ cl.discretization.schemes.lagrange_basis(sch.nodes[cols], sch.nodes[j])[:, 0]
                side.setdefault(i * m + j, []).append(value)
    assert side and (0 in side)
    for g, values in side.items():
        assert u[g] == pytest.approx(np.mean(values), abs=1e-7), f"{scheme}: control at grid point {g}"
    assert result.terms["control-polynomial"] < 1e-14


def test_every_row_has_a_label():
    nlp, _, g, _ = evaluate(nonlinear_problem(), "hermite-simpson", 3)
    labels = nlp.rows.labels()
    assert len(labels) == g.size == nlp.rows.size
    assert "defect.simpson:c.y@k=2" in labels


@pytest.mark.parametrize("name,scheme", [("cartpole", "hermite-simpson"), ("cartpole", "trapezoidal"), ("cartpole", "radau-3"),
                                         ("cartpole", "legendre-gauss-3"), ("double_integrator_time", "hermite-simpson"),
                                         ("goddard", "radau-2")])
def test_defects_as_matrix_products_equal_the_node_by_node_formulas(name, scheme, monkeypatch):
    """The transcription writes a scheme's defects as ``X A + (tf − t0) XD B``; on a non-uniform mesh, with a
    fixed or a free final time, every row equals :meth:`Scheme.defects` applied to the node slices."""
    import importlib

    from colloc.discretization.schemes import Scheme

    prob = importlib.import_module(f"problems.{name}").build()
    mesh = np.array([0.0, 0.1, 0.25, 0.3, 0.55, 0.8, 1.0])
    a = cl.build_nlp(prob, scheme=scheme, mesh=mesh)
    monkeypatch.setattr(Scheme, "defect_coefficients", lambda self: None)  # the node-by-node formulas
    b = cl.build_nlp(prob, scheme=scheme, mesh=mesh)
    assert a.rows.labels() == b.rows.labels()
    rng = np.random.default_rng(3)
    guess = a.layout.vector("guess")
    defect = np.array([label.startswith("defect") for label in a.rows.labels()])
    assert defect.any()
    for _ in range(2):
        w = guess + 0.05 * rng.normal(size=guess.size) * (1 + np.abs(guess))
        ga = np.asarray(ca.Function("g", [a.w], [a.g])(w)).ravel()[defect]
        gb = np.asarray(ca.Function("g", [b.w], [b.g])(w)).ravel()[defect]
        assert np.all(np.isfinite(gb)) and np.abs(gb).max() > 0
        np.testing.assert_allclose(ga, gb, rtol=1e-12, atol=1e-12 * np.abs(gb).max())
