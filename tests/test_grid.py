"""The Grid's index sets and weights, and the one interpolation of a Trajectory (numbers by hand)."""
from __future__ import annotations

import math

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.errors import FileFormatError
from colloc.discretization.grid import Grid
from colloc.discretization.schemes import get_scheme


def test_hermite_simpson_index_sets_by_hand():
    g = Grid([0.0, 0.25, 1.0], get_scheme("hermite-simpson"))
    assert g.num_intervals == 2 and g.num_points == 5 and g.stride == 2
    assert np.allclose(g.tau, [0.0, 0.125, 0.25, 0.625, 1.0])
    assert g.mesh_points.tolist() == [0, 2, 4]
    assert g.interior_points.tolist() == [1, 3]
    assert g.interval_starts.tolist() == [0, 2] and g.interval_ends.tolist() == [2, 4]
    assert g.node(1).tolist() == [1, 3]
    assert g.nodes_of_intervals.tolist() == [[0, 1, 2], [2, 3, 4]]
    assert g.collocation_points.tolist() == [0, 1, 2, 3, 4]
    # Simpson on each interval: h/6 (1, 4, 1), the shared mesh point gets both halves
    assert np.allclose(g.weights, [0.25 / 6, 0.25 * 4 / 6, 0.25 / 6 + 0.75 / 6, 0.75 * 4 / 6, 0.75 / 6], rtol=0, atol=1e-15)


@pytest.mark.parametrize("name", ["trapezoidal", "hermite-simpson", "radau-3", "legendre-gauss-2"])
def test_weights_integrate_polynomials_of_the_scheme_degree(name):
    scheme = get_scheme(name)
    g = Grid(np.array([0.0, 0.1, 0.45, 1.0]), scheme)
    degree = scheme.order - 1  # a rule of order p integrates degree p − 1 exactly
    assert g.weights.sum() == pytest.approx(1.0, abs=1e-14)
    assert g.weights @ g.tau**degree == pytest.approx(1.0 / (degree + 1), abs=1e-13)


def test_radau_collocation_points_leave_out_only_the_first_point():
    g = Grid(np.linspace(0, 1, 4), get_scheme("radau-2"))
    assert g.collocation_points.tolist() == list(range(1, g.num_points))
    lg = Grid(np.linspace(0, 1, 4), get_scheme("legendre-gauss-1"))
    assert lg.collocation_points.tolist() == [1, 3, 5]  # the Gauss roots, no mesh point


def test_grid_is_frozen_and_of_points_recovers_the_mesh():
    g = Grid([0.0, 0.3, 1.0], get_scheme("radau-2"))
    with pytest.raises(AttributeError):
        g.mesh = np.zeros(3)
    with pytest.raises(ValueError):
        g.mesh[0] = 1.0
    back = Grid.of_points(2.0 + 4.0 * g.tau, g.scheme)
    assert np.allclose(back.mesh, g.mesh, rtol=0, atol=1e-15)
    with pytest.raises(FileFormatError, match=r"`hermite-simpson` trajectory has 1 \+ 2·n points; this one has 4"):
        Grid.of_points(np.arange(4.0), get_scheme("hermite-simpson"))


def test_midpoint_vi_controls_are_held_on_their_interval():
    """Zero-order hold: a control of 2.0 on the first interval is 2.0 at every time of that interval."""
    t = np.array([0.0, 0.25, 0.5])
    traj = cl.Trajectory(t, {"pend.theta": [0.0, 1.0, 3.0], "pend.u": [2.0, 1.0, 1.0]},
                         {"pend.theta": "state", "pend.u": "control"}, metadata=dict(scheme="midpoint-vi", control_hold="zero-order"))
    assert traj(0.125)["pend.u"] == 2.0
    assert traj(0.25)["pend.u"] == 1.0 and traj(0.5)["pend.u"] == 1.0
    assert traj(0.375)["pend.theta"] == pytest.approx(2.0, abs=1e-15)  # states: linear between nodes


def test_midpoint_vi_solution_holds_its_control():
    body = cl.Multibody("pend", coordinates=["theta"], speeds=["omega"])
    (theta,), (omega,) = body.coordinates, body.speeds
    u = body.control("u", bounds=(-5, 5))
    body.kinetic_energy = 0.5 * omega**2
    body.potential_energy = -9.81 * ca.cos(theta)
    body.generalized_force = u
    prob = cl.Problem([body], t0=0.0, tf=1.0)
    prob.initial({theta: 0.0, omega: 0.0})
    prob.final({theta: 0.5, omega: 0.0})
    prob.minimize(integral=u**2)
    traj = cl.solve(prob, scheme="midpoint-vi", intervals=8).trajectory
    mid = 0.5 * (traj.time[:-1] + traj.time[1:])
    assert np.array_equal(traj.sample(mid)["pend.u"], traj["pend.u"][:-1])


def test_a_file_from_elsewhere_is_interpolated_linearly_with_a_warning():
    traj = cl.Trajectory([0.0, 1.0, 3.0], {"a": [0.0, 2.0, 6.0]})
    with pytest.warns(UserWarning, match="names no scheme colloc knows"):
        assert traj(2.0)["a"] == pytest.approx(4.0)
    odd = cl.Trajectory([0.0, 1.0, 3.0, 4.0], {"a": [0.0, 2.0, 6.0, 8.0]}, metadata=dict(scheme="hermite-simpson"))
    with pytest.warns(UserWarning, match="has 4 points, which a `hermite-simpson` grid cannot have"):
        assert odd(3.5)["a"] == pytest.approx(7.0)


def test_collocation_controls_follow_their_polynomial():
    """Hermite–Simpson: the control is the quadratic through its three node values (u = t² exactly)."""
    t = np.array([0.0, 0.5, 1.0])
    traj = cl.Trajectory(t, {"x": t**3 / 3, "x.dot": t**2, "u": t**2}, {"x": "state", "x.dot": "derivative", "u": "control"},
                         metadata=dict(scheme="hermite-simpson"))
    out = traj([0.2, 0.7])
    assert np.allclose(out["u"], [0.04, 0.49], rtol=0, atol=1e-15)
    assert np.allclose(out["x"], np.array([0.2, 0.7]) ** 3 / 3, rtol=0, atol=1e-15)  # the cubic is exact for ẋ = t²
    assert math.isfinite(out["x"][0])
