"""colloc.goals against closed forms: an LQ tracking optimum, projections, spline derivatives, and bad input."""
import math

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc import goals
from colloc.errors import ProblemError
from colloc.goals import TimeTable


def _integrator(x0=None):
    comp = cl.Component("plant")
    x, u = comp.state("x"), comp.control("u")
    comp.derivative(x, u)
    return comp, x, u


def test_state_tracking_optimum_matches_the_closed_form():
    """min ∫₀ᵀ w (x − r)² + u² dt, ẋ = u, x(0) = x₀, x(T) free, r = c + d t.

    Euler–Lagrange: ẍ = w (x − r), so x = r + A cosh(k(T − t)) + B sinh(k(T − t)) with k = √w; the free end
    gives u(T) = 0, i.e. B = d/k, and x(0) = x₀ gives A = (x₀ − c − B sinh kT)/cosh kT.  [DERIVED]"""
    w, T, c, d, x0 = 4.0, 1.5, 0.3, -0.8, 1.0
    k = math.sqrt(w)
    B = d / k
    A = (x0 - c - B * math.sinh(k * T)) / math.cosh(k * T)
    s = lambda t: k * (T - t)  # noqa: E731
    exact_x = lambda t: c + d * t + A * np.cosh(s(t)) + B * np.sinh(s(t))  # noqa: E731
    exact_u = lambda t: d - k * (A * np.sinh(s(t)) + B * np.cosh(s(t)))  # noqa: E731
    from scipy.integrate import quad

    J = quad(lambda t: w * (exact_x(t) - c - d * t) ** 2 + exact_u(t) ** 2, 0.0, T, epsabs=1e-14)[0]
    errors = []
    for intervals in (10, 20):
        comp, x, u = _integrator()
        problem = cl.Problem([comp], t0=0.0, tf=T)
        problem.initial({x: x0})
        rows = np.linspace(0.0, T, 7)
        table = TimeTable(rows, {"/jointset/j/q/value": c + d * rows})
        goals.track_states(problem, table, {"/jointset/j/q/value": x}, weights={"/jointset/j/q/value": w})
        goals.control_effort(problem)
        res = cl.solve(problem, intervals=intervals, ipopt={"tol": 1e-13})
        assert res.success
        errors.append(abs(res.objective - J))
        np.testing.assert_allclose(res.trajectory["plant.x"], exact_x(res.trajectory.time), atol=2e-5)
    # Hermite–Simpson: the objective converges at fourth order (measured 1.9e-5 and 1.2e-6 here)
    assert errors[1] < 2e-6 * J and math.log2(errors[0] / errors[1]) >= 3.7


def test_tracked_speed_is_the_derivative_of_the_position_spline():
    """MocoTrack's position derivatives: a speed is tracked against the spline of its position spline's slope
    at the rows (2 for a line), with the weight of the column `q/speed`."""
    comp, x, u = _integrator()
    problem = cl.Problem([comp], t0=0.0, tf=1.0)
    t = np.linspace(0.0, 1.0, 11)
    table = TimeTable(t, {"q": 2.0 * t - 1.0})  # a line: every cubic spline reproduces it and its slope 2
    integrand = goals.track_states(problem, table, {"q": x}, speeds={"q": u}, weights={"q": 3.0, "q/speed": 0.5})
    f = ca.Function("f", [cl.TIME, x, u], [integrand])
    assert float(f(0.37, 0.5, 1.5)) == pytest.approx(3.0 * (0.5 - (2 * 0.37 - 1)) ** 2 + 0.5 * (1.5 - 2.0) ** 2, rel=1e-12)


@pytest.mark.parametrize("projection, vector, expected", [
    ("none", None, 1.0**2 + 2.0**2 + 3.0**2),
    ("plane", (0.0, 0.0, 2.0), 1.0**2 + 2.0**2),
    ("vector", (0.0, 1.0, 1.0), (2.0 + 3.0) ** 2 / 2.0),
])
def test_contact_tracking_projections(projection, vector, expected):
    """MocoContactTrackingGoal: the error of the summed forces, projected on a plane or a unit vector."""
    comp = cl.Component("feet")
    heel, toe = (ca.vertcat(*[comp.control(f"{n}_{a}") for a in "xyz"]) for n in ("heel", "toe"))
    x = comp.state("x")
    comp.derivative(x, 0)
    problem = cl.Problem([comp], t0=0.0, tf=1.0)
    t = np.linspace(0.0, 1.0, 5)
    loads = TimeTable(t, {"grf_vx": 0 * t + 1.0, "grf_vy": 0 * t + 2.0, "grf_vz": 0 * t + 3.0})
    integrand = goals.track_contact(problem, loads, [([heel, toe], "grf_v")], 1.0, projection=projection,
                                    projection_vector=vector)
    f = ca.Function("f", [cl.TIME, heel, toe], [integrand])
    # forces (1, 2, 3) + (1, 2, 3) against the reference (1, 2, 3): the error is (1, 2, 3)
    assert float(f(0.5, [1, 2, 3], [1, 2, 3])) == pytest.approx(expected, rel=1e-13)
    normalized = goals.track_contact(problem, loads, [([heel], "grf_v")], 2.0, normalize_tracking_error=True, name="n")
    g = ca.Function("g", [cl.TIME, heel], [normalized])
    assert float(g(0.5, [2, 4, 6])) == pytest.approx(3.0 / 2.0, rel=1e-13)  # errors over peaks, over the weight


def test_free_final_time_duration_is_a_tied_parameter():
    comp, x, u = _integrator()
    norm = goals.Normalization("norm", center_of_mass=ca.vertcat(x, 0))
    problem = cl.Problem([comp, norm], t0=0.0, tf=(0.5, 2.0))
    problem.initial({x: 0.0})
    problem.final({x: 1.0})
    goals.control_effort(problem, divide_by_duration=True, normalization=norm)
    goals.control_effort(problem, divide_by_displacement=True, normalization=norm, name="per_metre")
    assert [b.name for b in problem.boundaries] == ["norm.duration", "norm.displacement"]
    res = cl.solve(problem, intervals=10, ipopt={"tol": 1e-10})
    assert res.success
    # ∫u² dt / T is least (= 1/T²) at the longest time; the displacement is 1
    assert res.trajectory.parameters["norm.duration"] == pytest.approx(res.trajectory.time[-1], rel=1e-9)
    assert res.trajectory.time[-1] == pytest.approx(2.0, rel=1e-6)
    assert res.objective == pytest.approx(1 / 4 + 1 / 2, rel=1e-6)


def test_average_speed_constraint_sets_the_final_time():
    comp, x, u = _integrator()
    problem = cl.Problem([comp], t0=0.0, tf=(0.1, 5.0))
    problem.initial({x: 0.0})
    problem.final({x: 1.2})
    goals.average_speed(problem, ca.vertcat(x, 0.0, 0.0), 0.8)
    goals.control_effort(problem)
    res = cl.solve(problem, intervals=10)
    assert res.success and res.trajectory.time[-1] == pytest.approx(1.5, rel=1e-8)


@pytest.mark.parametrize("call, message", [
    (lambda p, x, u: goals.control_effort(p, exponent=1), "integer ≥ 2"),
    (lambda p, x, u: goals.control_effort(p, exponent=2.5), "integer ≥ 2"),
    (lambda p, x, u: goals.control_effort(p, controls=[x]), "is a state, not a control"),
    (lambda p, x, u: goals.control_effort(p, weights={"plant.y": 1.0}), "weight for `plant.y`"),
    (lambda p, x, u: goals.control_effort(p, divide_by_displacement=True), "add a `colloc.goals.Normalization`"),
    (lambda p, x, u: goals.periodicity(p, [(x, x)], negate=[u]), "in `negate` .* but starts no pair"),
    (lambda p, x, u: goals.periodicity(p, [(x, x)], mode="soft"), "Unknown mode 'soft'"),
    (lambda p, x, u: goals.track_contact(p, TimeTable(np.arange(4.0), {}), [([ca.vertcat(u, u, u)], "f")], 1.0,
                                         projection="line"), "Unknown projection 'line'"),
    (lambda p, x, u: goals.track_contact(p, TimeTable(np.arange(4.0), {}), [([ca.vertcat(u, u, u)], "f")], 1.0,
                                         projection="plane"), "needs a `projection_vector`"),
    (lambda p, x, u: goals.track_states(p, TimeTable(np.arange(4.0), {"a": np.zeros(4)}), {"b": x}), "no column `b`"),
    (lambda p, x, u: goals.track_markers(p, TimeTable(np.arange(4.0), {}), {"m": ca.vertcat(x, x)},
                                         columns={"m": ["a"]}), "2 coordinates but 1 reference columns"),
    (lambda p, x, u: goals.initial_activation(p), "no DeGrooteFregly2016Muscle"),
    (lambda p, x, u: goals.track_contact(p, TimeTable(np.arange(4.0), {}), [([ca.vertcat(u, u, u)], "f")], 0.0),
     "`body_weight` of goal `contact_tracking` must be a positive number"),
    (lambda p, x, u: goals.average_speed(p, x, "fast"), "speed of goal `average_speed` must be a finite number"),
])
def test_bad_goals_are_refused_by_name(call, message):
    comp, x, u = _integrator()
    problem = cl.Problem([comp], t0=0.0, tf=1.0)
    with pytest.raises(ProblemError, match=message):
        call(problem, x, u)


def test_metabolics_options_are_checked():
    body = cl.Multibody("slider", coordinates=["length"])
    body.kinetic_energy = 0.5 * body.speeds[0] ** 2
    m = cl.DeGrooteFregly2016Muscle("m", body=body, length=body.coordinates[0], max_isometric_force=100.0,
                                    optimal_fiber_length=0.1, tendon_slack_length=0.05)
    with pytest.raises(ProblemError, match="Unknown metabolics option `velocity_smothing`"):
        goals.bhargava2004_rates(m, velocity_smothing=5)
    rates = goals.bhargava2004_rates(m)
    assert set(rates) == {"activation", "maintenance", "shortening", "mechanical_work", "total"}
