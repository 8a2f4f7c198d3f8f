"""Numerics of every scheme, numpy only (STYLE: tests fast to slow, level 1)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from colloc.discretization.schemes import differentiation_matrix, get_scheme, lagrange_basis

NAMES = ["trapezoidal", "hermite-simpson"] + [f"radau-{d}" for d in range(1, 10)] + [f"legendre-gauss-{d}" for d in range(1, 10)]


@pytest.mark.parametrize("name", NAMES)
def test_weights_sum_to_one_and_nodes_span_interval(name):
    s = get_scheme(name)
    assert s.weights.sum() == pytest.approx(1.0, abs=1e-13)
    assert s.nodes[0] == 0.0 and s.nodes[-1] == pytest.approx(1.0)
    assert (np.diff(s.nodes) > 0).all()


@pytest.mark.parametrize("name", NAMES)
def test_quadrature_exact_to_claimed_degree(name):
    s = get_scheme(name)
    # trapezoid: degree 1; Simpson: 3; Radau with d roots: 2d - 2
    if name.startswith("legendre-gauss"):
        degree = 2 * s.degree - 1
    else:
        degree = {"trapezoidal": 1, "hermite-simpson": 3}.get(name, 2 * s.num_nodes - 4)
    for k in range(degree + 1):
        assert s.weights @ s.nodes**k == pytest.approx(1.0 / (k + 1), abs=1e-12)
    assert abs(s.weights @ s.nodes ** (degree + 1) - 1.0 / (degree + 2)) > 1e-11


@pytest.mark.parametrize("name", [f"radau-{d}" for d in range(1, 10)])
def test_differentiation_matrix_exact_on_polynomials(name):
    s = get_scheme(name)
    D = s.D
    assert np.abs(D @ np.ones(s.num_nodes)).max() < 1e-9
    for k in range(1, s.num_nodes):
        assert np.allclose(D @ s.nodes**k, k * s.nodes ** (k - 1), atol=1e-8)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=2, max_size=6))
def test_interpolant_reproduces_nodes(values):
    nodes = np.linspace(0, 1, len(values))
    B = lagrange_basis(nodes, nodes)
    assert np.allclose(np.asarray(values) @ B, values)
    D = differentiation_matrix(nodes)
    assert np.abs(D.sum(axis=1)).max() < 1e-8


@pytest.mark.parametrize("name", ["trapezoidal", "hermite-simpson"])
def test_state_interpolant_matches_nodes_and_slopes(name):
    s = get_scheme(name)
    h = 0.3
    # a polynomial of the degree the interpolant reproduces exactly
    deg = 2 if name == "trapezoidal" else 3
    c = np.array([0.3, -1.2, 0.7, 2.0][: deg + 1])
    x = lambda t: sum(ci * t**i for i, ci in enumerate(c))
    dx = lambda t: sum(i * ci * t ** (i - 1) for i, ci in enumerate(c) if i)
    t = s.nodes * h
    X, F = x(t)[None, :], dx(t)[None, :]
    ss = np.linspace(0, 1, 7)
    assert np.allclose(s.interpolate_state(ss, X, F, h)[0], x(ss * h), atol=1e-12)


def test_radau_roots_are_the_published_radau_iia_nodes():
    # Radau IIA, 3 stages (Hairer & Wanner): c = (4 − √6)/10, (4 + √6)/10, 1
    s = get_scheme("radau-3")
    assert np.allclose(s.nodes[1:], [(4 - np.sqrt(6)) / 10, (4 + np.sqrt(6)) / 10, 1.0])
    assert np.allclose(s.weights[1:], [(16 - np.sqrt(6)) / 36, (16 + np.sqrt(6)) / 36, 1 / 9])


@pytest.mark.parametrize("d", range(1, 10))
def test_legendre_gauss_differentiation_and_continuity_exact(d):
    s = get_scheme(f"legendre-gauss-{d}")
    poly = s.nodes[: d + 1]
    for k in range(d + 1):
        assert np.allclose(s.D @ poly**k, k * poly ** (k - 1) if k else 0 * poly, atol=1e-8)
        assert s.C @ poly**k == pytest.approx(1.0, abs=1e-9)  # extrapolation to s = 1 of a degree-≤d polynomial
    assert s.order == 2 * d and list(s.collocation_indices) == list(range(1, d + 1))
