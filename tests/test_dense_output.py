"""The one dense output (colloc/discretization/interpolant.py): exact on polynomials of each scheme's degree,
the same numerically and symbolically, held controls for midpoint-vi; the one interval search; Rows.values."""
from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.discretization.grid import Grid, locate
from colloc.discretization.interpolant import Interpolant, lagrange_polynomials, polynomial, sample
from colloc.transcription.nlp import Rows

#: Degree of the state polynomial each scheme's interpolant holds exactly: the trapezoid's derivative is the
#: line through f₀, f₁ (Kelly 2017 eq. 3.10), Hermite–Simpson's the quadratic through f₀, f_m, f₁ (eq. 4.10),
#: Radau-d and Legendre–Gauss-d interpolate d + 1 node states (Garg et al. 2010; Benson et al. 2006).
STATE_DEGREE = {"trapezoidal": 2, "hermite-simpson": 3, "radau-1": 1, "radau-2": 2, "radau-3": 3, "radau-5": 5,
                "legendre-gauss-1": 1, "legendre-gauss-2": 2, "legendre-gauss-3": 3}
MESH = np.array([0.0, 0.13, 0.4, 0.45, 0.8, 1.0])
T0, T1 = 0.3, 2.3


def _trajectory(name, x, u, meta=None):
    """A solution of ``name`` on MESH whose state is ``x`` (np.poly1d), whose control and multiplier are ``u``."""
    grid = Grid(MESH, cl.get_scheme(name))
    t = T0 + (T1 - T0) * grid.tau
    cols = {"p.x": x(t), "p.u": u(t), "p.lam": u(t), "p.x.dot": x.deriv()(t)}
    kinds = {"p.x": "state", "p.u": "control", "p.lam": "multiplier", "p.x.dot": "derivative"}
    return cl.Trajectory(t, cols, kinds, metadata=dict(scheme=name, **(meta or {})))


def _times():
    rng = np.random.default_rng(3)
    return np.concatenate([T0 + (T1 - T0) * MESH, rng.uniform(T0, T1, 40)])


@pytest.mark.parametrize("name", list(STATE_DEGREE))
def test_states_and_controls_of_the_schemes_degree_are_reproduced_exactly(name):
    scheme = cl.get_scheme(name)
    rng = np.random.default_rng(len(name))
    dx, du = STATE_DEGREE[name], scheme.collocation_indices.size - 1
    x, u = np.poly1d(rng.normal(size=dx + 1)), np.poly1d(rng.normal(size=du + 1))
    t = _times()
    got = sample(_trajectory(name, x, u), t)
    for key, want in (("p.x", x(t)), ("p.u", u(t)), ("p.lam", u(t))):
        np.testing.assert_allclose(got[key], want, rtol=0, atol=1e-12 * max(1.0, np.abs(want).max()), err_msg=key)
    itp = Interpolant(_trajectory(name, x, u))
    s = np.linspace(0.0, 1.0, 7)
    X, XD = itp.states(["p.x"], s)
    np.testing.assert_allclose(XD[0], x.deriv()(itp.times(s)), atol=1e-10)
    np.testing.assert_allclose(itp.controls(["p.u"], s)[0], u(itp.times(s)), atol=1e-12)
    # one degree more is not reproduced: the degrees above are the schemes' own, not a loose bound
    x2, u2 = np.poly1d(rng.normal(size=dx + 2)), np.poly1d(rng.normal(size=du + 2))
    over = sample(_trajectory(name, x2, u2), t)
    assert np.abs(over["p.x"] - x2(t)).max() > 1e-6 and np.abs(over["p.u"] - u2(t)).max() > 1e-6


def test_the_state_sample_is_the_schemes_own_interpolant():
    """Against ``Scheme.interpolate_state`` on each interval (what sampling computed before it was one dense
    output), on node values that are no polynomial."""
    rng = np.random.default_rng(7)
    for name in ("trapezoidal", "hermite-simpson", "radau-3", "legendre-gauss-2"):
        scheme = cl.get_scheme(name)
        grid = Grid(MESH, scheme)
        t = T0 + (T1 - T0) * grid.tau
        traj = cl.Trajectory(t, {"x": rng.normal(size=t.size), "x.dot": rng.normal(size=t.size)}, {"x": "state", "x.dot": "derivative"},
                             metadata=dict(scheme=name))
        times = rng.uniform(T0, T1, 25)
        got = sample(traj, times)["x"]
        mesh_t = t[grid.mesh_points]
        for k, tk in enumerate(times):
            i = int(np.flatnonzero(mesh_t[:-1] <= tk)[-1])
            h = mesh_t[i + 1] - mesh_t[i]
            nodes = grid.nodes_of_intervals[i]
            want = scheme.interpolate_state((tk - mesh_t[i]) / h, traj["x"][nodes][None, :], traj["x.dot"][nodes][None, :], h)[0, 0]
            assert got[k] == pytest.approx(want, abs=1e-13), (name, tk)


def test_linear_control_interpolation_gives_the_line_between_the_interval_ends():
    line = np.poly1d([1.7, -0.4])
    traj = _trajectory("hermite-simpson", np.poly1d([1.0]), line, dict(control_interpolation="linear"))
    traj["p.u"][Grid(MESH, cl.get_scheme("hermite-simpson")).interior_points] += 5.0  # midpoints off the line: not read
    t = _times()
    np.testing.assert_allclose(sample(traj, t)["p.u"], line(t), atol=1e-12)
    quadratic = _trajectory("hermite-simpson", np.poly1d([1.0]), np.poly1d([0.9, 1.7, -0.4]), dict(control_interpolation="linear"))
    assert np.abs(sample(quadratic, t)["p.u"] - np.poly1d([0.9, 1.7, -0.4])(t)).max() > 1e-3


def test_midpoint_vi_controls_are_held_and_states_linear():
    t = np.array([0.0, 0.5, 1.5, 2.0])
    q, u = np.array([0.0, 1.0, 3.0, 2.0]), np.array([4.0, -1.0, 2.0, 2.0])
    traj = cl.Trajectory(t, {"q": q, "u": u}, {"q": "state", "u": "control"}, metadata=dict(scheme="midpoint-vi"))
    times = np.array([0.0, 0.25, 0.5, 1.0, 1.49, 1.5, 2.0])
    got = sample(traj, times)
    np.testing.assert_array_equal(got["u"], [4.0, 4.0, -1.0, -1.0, -1.0, 2.0, 2.0])
    np.testing.assert_allclose(got["q"], np.interp(times, t, q), atol=1e-15)
    control = Interpolant(traj).control("u")
    assert [control(s) for s in (0.1, 0.5, 1.6)] == [4.0, -1.0, 2.0] and control.breakpoints == [0.5, 1.5]


@pytest.mark.parametrize("name", ["hermite-simpson", "radau-3", "trapezoidal"])
def test_symbolic_and_numeric_evaluation_agree(name):
    rng = np.random.default_rng(11)
    traj = _trajectory(name, np.poly1d(rng.normal(size=3)), np.poly1d(rng.normal(size=4)))
    itp = Interpolant(traj)
    s = ca.SX.sym("s")
    U, V = ca.SX.sym("U", 1, itp.control_nodes.size), ca.SX.sym("V", 1, itp.value_nodes.size)
    f = ca.Function("f", [s, U, V], [itp.control_expression(U, s), itp.value_expression(V, s)])
    k = 2
    for sk in (0.0, 0.3, 0.77, 1.0):
        u_sym, v_sym = (float(a) for a in f(sk, itp.nodes("p.u")[k, itp.control_nodes], itp.nodes("p.lam")[k, itp.value_nodes]))
        assert u_sym == pytest.approx(itp.controls(["p.u"], [sk])[0, k, 0], abs=1e-14)
        assert v_sym == pytest.approx(itp.others(["p.lam"], [sk])[0, k, 0], abs=1e-14)
        if sk < 1.0:  # at its end time an interval's control is the next one's
            assert itp.control("p.u")(float(itp.times([sk])[k, 0])) == pytest.approx(u_sym, abs=1e-13)
    nodes = np.array([0.0, 0.2, 0.9])
    basis = ca.Function("b", [s], [ca.vertcat(*lagrange_polynomials(nodes, s))])
    np.testing.assert_allclose(np.asarray(basis(0.37)).ravel(), lagrange_polynomials(nodes, np.array(0.37)), atol=1e-15)
    np.testing.assert_allclose(polynomial(np.eye(3), nodes, nodes), np.eye(3), atol=1e-15)  # ℓ_j(x_m) = δ_jm


def test_the_interval_search_gives_a_mesh_time_to_the_interval_it_starts():
    mesh = np.array([0.0, 1.0, 1.0, 3.0])
    i, s = locate(mesh, [-1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(i, [0, 0, 0, 2, 2, 2, 2])  # an empty interval is skipped; the end is the last one's
    np.testing.assert_allclose(s, [-1.0, 0.0, 0.5, 0.0, 0.5, 1.0, 1.5])


def test_rows_values_reads_each_block_of_a_kind():
    rows = Rows()
    A = np.arange(6.0).reshape(2, 3)
    rows.add("defect.hermite", ["x", "v"], ca.DM(A), [0, 1, 2])
    rows.add("path", ["limit"], ca.DM([[7.0, 8.0]]), [1, 2], -1.0, 1.0)
    rows.add("defect.simpson", ["x", "v"], ca.DM(-A), [0, 1, 2])
    rows.add(None, ["rod"], ca.DM([[9.0]]), [0])
    g = np.asarray(ca.evalf(rows.g)).ravel()
    defects = rows.values(g, "defect")
    assert [b.kind for b, _ in defects] == ["defect.hermite", "defect.simpson"]
    np.testing.assert_array_equal(defects[0][1], A)
    np.testing.assert_array_equal(defects[1][1], -A)
    [(block, path)] = rows.values(g, "path")
    np.testing.assert_array_equal(path, [[7.0, 8.0]])
    assert rows.label(block.offset + 1) == "path:limit@k=2"
    np.testing.assert_array_equal(rows.values(g, None)[0][1], [[9.0]])
    assert rows.values(g, "def") == [] and rows.values(g, "defect.hermite")[0][0].kind == "defect.hermite"


def test_verify_refuses_a_midpoint_vi_solution_by_name():
    c = cl.Component("m")
    x, u = c.state("x"), c.control("u")
    c.derivative(x, u)
    prob = cl.Problem([c], t0=0.0, tf=1.0)
    traj = cl.Trajectory(np.array([0.0, 0.5, 1.0]), {"m.x": np.zeros(3), "m.u": np.zeros(3)}, {"m.x": "state", "m.u": "control"},
                         metadata=dict(scheme="midpoint-vi"))
    with pytest.raises(cl.OptionError, match="A midpoint-vi solution has no collocation defects or interval errors to check"):
        cl.verify(prob, traj)
