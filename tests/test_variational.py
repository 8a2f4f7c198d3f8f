"""Discrete mechanics: the midpoint variational integrator as a simulator and as a transcription.

Checked against answers nobody here wrote: the discrete Legendre transforms of
a harmonic oscillator by hand; second-order convergence of the simulator to a
tight scipy solution and of the transcription to a fine Hermite–Simpson
optimum (slopes fitted by least squares); bounded energy error over 1000 steps
(symplectic integrators, Hairer–Lubich–Wanner 2006 ch. IX) against the
secular drift of Heun's method (order 2, not symplectic) and of Radau IIA
collocation; step derivatives by the implicit function theorem against
central differences.
"""
from __future__ import annotations

import importlib
import math

import casadi as ca
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import colloc as cl
from colloc.pipeline.variational import ConvergenceError, MidpointVI, simulate, solve_midpoint_vi, transcribe_midpoint_vi

G = 9.81
TIGHT = {"tol": 1e-12}


def load(stem):
    return importlib.import_module(f"problems.{stem}")


def pendulum(forced=False, name="pend"):
    """Point pendulum, θ from the downward vertical: L = ½θ̇² + g cos θ, force u."""
    body = cl.Multibody(name, coordinates=["theta"], speeds=["omega"])
    (theta,), (omega,) = body.coordinates, body.speeds
    body.kinetic_energy = 0.5 * omega**2
    body.potential_energy = -G * ca.cos(theta)
    if forced:
        body.generalized_force = body.control("u")
    return body


def cartesian_pendulum():
    body = cl.Multibody("pend", coordinates=["x", "y"], speeds=["vx", "vy"])
    x, y = body.coordinates
    vx, vy = body.speeds
    body.kinetic_energy = 0.5 * (vx**2 + vy**2)
    body.potential_energy = G * y
    body.generalized_force = ca.vertcat(body.control("u") * y, 0)
    body.holonomic("rod", x**2 + y**2 - 1)
    return body


def pendulum_energy(theta, omega):
    return 0.5 * np.asarray(omega) ** 2 - G * np.cos(theta)


def slope(h, err):
    return np.polyfit(np.log(h), np.log(err), 1)[0]


# -- 1. discrete equations at fixed numbers ---------------------------------------------------

@pytest.mark.parametrize("forcing", ["midpoint", "trep"])
def test_discrete_legendre_transforms_of_a_harmonic_oscillator(forcing):
    # L = ½ m v² − ½ k q², f = u:  D₁L_d = −m Δq/h − (h/2) k q̄,  D₂L_d = m Δq/h − (h/2) k q̄
    m, k = 2.0, 3.0
    body = cl.Multibody("osc", coordinates=["q"], speeds=["v"])
    (q,), (v,) = body.coordinates, body.speeds
    body.kinetic_energy = 0.5 * m * v**2
    body.potential_energy = 0.5 * k * q**2
    body.generalized_force = body.control("u")
    vi = MidpointVI(body, forcing)
    q1, q2, t1, h, u = 0.3, 0.7, 1.0, 0.1, 5.0
    Pm, Pp, qm, vm, tm = (float(x) for x in vi.interval(q1, q2, t1, h, u, np.zeros(0)))
    dq, qbar = q2 - q1, 0.5 * (q1 + q2)
    fm, fp = (h * u / 2, h * u / 2) if forcing == "midpoint" else (h * u, 0.0)
    assert Pm == pytest.approx(m * dq / h + 0.5 * h * k * qbar - fm, abs=1e-14)
    assert Pp == pytest.approx(m * dq / h - 0.5 * h * k * qbar + fp, abs=1e-14)
    assert (qm, vm, tm) == pytest.approx((qbar, dq / h, t1 + h / 2))


def test_energy_momentum_and_velocity_are_inverse():
    vi = MidpointVI(load("double_pendulum_swing").build())
    q, v = np.array([0.4, -1.1]), np.array([0.7, 2.0])
    p = vi.momentum(q, v, 0.0, np.zeros(0))
    assert np.allclose(np.array(vi.velocity(q, p, 0.0, np.zeros(0))).ravel(), v, atol=1e-13)


def test_rows_are_labelled_by_coordinate_and_constraint():
    prob = load("pendulum_cartesian").build()
    vi = MidpointVI(prob)
    nlp = transcribe_midpoint_vi(prob, np.linspace(0, 1, 6), vi)
    labels = nlp.rows.labels()
    for label in ("del:pend.x@k=3", "del:pend.y@k=1", "holonomic:pend.rod@k=0", "holonomic:pend.rod@k=5",
                  "holonomic:pend.rod.dot@k=0", "holonomic:pend.rod.dot@k=5", "initial:pend.vy@k=0", "final:pend.vx@k=5",
                  "bound:pend.vx@k=4"):
        assert label in labels
    assert "del:pend.x@k=0" not in labels and "del:pend.x@k=5" not in labels
    assert len(labels) == nlp.rows.size == len(set(labels))


# -- 2. simulator ----------------------------------------------------------------------------

def test_simulator_and_transcription_solve_the_same_discrete_equations():
    steps, h = 200, 0.05
    times = np.arange(steps + 1) * h
    sim = simulate(pendulum(), times, [1.2], v0=[0.5])
    prob = cl.Problem([pendulum()], t0=0.0, tf=steps * h)
    theta, omega = prob.model.states[0].symbol, prob.model.states[1].symbol
    prob.initial({theta: 1.2, omega: 0.5})
    res = solve_midpoint_vi(prob, intervals=steps, guess=sim, ipopt=TIGHT)
    assert res.success, res.message
    for name in ("pend.theta", "pend.omega"):
        assert np.abs(res.trajectory[name] - sim[name]).max() < 1e-9


def test_simulator_converges_at_second_order_and_trep_forcing_at_first():
    # forced pendulum θ̈ = −g sin θ + u(t) against scipy's DOP853 at rtol 1e-12
    u = lambda t: 3 * np.sin(2 * t) + 1
    steps = np.array([50, 100, 200, 400])
    h = 2.0 / steps
    errors = {"midpoint": [], "trep": []}
    for n in steps:
        times = np.linspace(0, 2, n + 1)
        exact = solve_ivp(lambda t, x: [x[1], -G * np.sin(x[0]) + u(t)], (0, 2), [1.0, 0.3], method="DOP853",
                          rtol=1e-12, atol=1e-12, t_eval=times).y
        for forcing in errors:
            tr = simulate(pendulum(forced=True), times, [1.0], v0=[0.3], controls=u, forcing=forcing)
            errors[forcing].append(max(np.abs(tr["pend.theta"] - exact[0]).max(), np.abs(tr["pend.omega"] - exact[1]).max()))
    assert slope(h, errors["midpoint"]) >= 1.8, errors
    # trep's split f⁻ = h f, f⁺ = 0 is first order under forcing: why the default is the symmetric split
    assert slope(h, errors["trep"]) < 1.3, errors


def test_simulator_energy_error_is_bounded_over_1000_steps_while_heun_drifts():
    h, steps, theta0 = 0.05, 1000, 1.5
    times = np.arange(steps + 1) * h
    tr = simulate(pendulum(), times, [theta0], v0=[0.0])
    err = np.abs(pendulum_energy(tr["pend.theta"], tr["pend.omega"]) - pendulum_energy(theta0, 0.0))
    first, last = err[:100].max(), err[-100:].max()
    assert last <= 1.05 * first and err.max() < 0.02  # bounded, O(h²): no secular drift (measured 8.63e-3, 8.63e-3)
    # Heun's method (explicit trapezoidal, also order 2) on the same run
    x, f = np.array([theta0, 0.0]), lambda x: np.array([x[1], -G * np.sin(x[0])])
    heun = []
    for _ in range(steps):
        k1 = f(x)
        k2 = f(x + h * k1)
        x = x + 0.5 * h * (k1 + k2)
        heun.append(abs(pendulum_energy(*x) - pendulum_energy(theta0, 0.0)))
    heun = np.array(heun)
    assert heun[-100:].max() > 5 * heun[:100].max() and heun[-1] > 20 * first  # measured 0.78 vs 0.073


def test_constrained_simulation_stays_on_the_constraint_and_keeps_its_energy():
    steps, h, th0 = 1000, 0.02, 1.0
    times = np.arange(steps + 1) * h
    q0 = [math.sin(th0), -math.cos(th0)]
    tr = simulate(cartesian_pendulum(), times, q0, v0=[0.0, 0.0])
    x, y, vx, vy = (tr[n] for n in ("pend.x", "pend.y", "pend.vx", "pend.vy"))
    assert np.abs(x**2 + y**2 - 1).max() < 1e-10
    assert np.abs(x * vx + y * vy).max() < 1e-2  # φ̇ holds to O(h²) between the ends, exactly at them
    assert abs(x[-1] * vx[-1] + y[-1] * vy[-1]) < 1e-10
    energy = 0.5 * (vx**2 + vy**2) + G * y
    err = np.abs(energy - energy[0])
    assert err[-200:].max() <= 1.05 * err[:200].max() and err.max() < 1e-2  # measured 5.44e-3 in both windows
    # the rod multiplier λ = (g y − v²)/2 (problems/pendulum_cartesian.py), second order inside
    lam = 0.5 * (G * y - vx**2 - vy**2)
    assert np.abs(tr["pend.rod.lambda"][1:-1] - lam[1:-1]).max() < 1e-2


def test_step_derivatives_match_central_differences():
    cases = [(load("double_pendulum_swing").build(), [0.4, -0.7], [1.2, -0.5], [3.0, -2.0]),
             (cartesian_pendulum(), [math.cos(-0.3), math.sin(-0.3)], [0.8 * math.sin(0.3), 0.8 * math.cos(0.3)], [1.5])]
    for model, q1, v1, u1 in cases:
        vi = MidpointVI(model)
        q1, u1 = np.array(q1), np.array(u1)
        p1 = np.array(vi.momentum(q1, v1, 0.3, np.zeros(0))).ravel()
        args = dict(q1=q1, p1=p1, u1=u1)
        D = vi.step_derivatives(q1, p1, u1, 0.3, 0.35, tolerance=1e-14)
        for wrt, x in args.items():
            for i in range(x.size):
                plus, minus = dict(args), dict(args)
                plus[wrt], minus[wrt] = x + 1e-6 * np.eye(x.size)[i], x - 1e-6 * np.eye(x.size)[i]
                yp = vi.step(plus["q1"], plus["p1"], plus["u1"], 0.3, 0.35, tolerance=1e-14)
                ym = vi.step(minus["q1"], minus["p1"], minus["u1"], 0.3, 0.35, tolerance=1e-14)
                for k, out in enumerate(("q2", "p2")):
                    fd = (yp[k] - ym[k]) / 2e-6
                    assert np.abs(D[f"{out}_d{wrt}"][:, i] - fd).max() < 1e-6, (out, wrt, i)


# -- 3. transcription ------------------------------------------------------------------------

def pendulum_swing_down():
    """Betts 10.103/104 in the angle (problems/pendulum_minimal.py) as a Lagrangian Multibody."""
    body = cl.Multibody("pend", coordinates=["phi"], speeds=["omega"])
    (phi,), (omega,) = body.coordinates, body.speeds
    u = body.control("u")
    body.kinetic_energy = 0.5 * omega**2
    body.potential_energy = G * ca.sin(phi)
    body.generalized_force = -u
    prob = cl.Problem([body], t0=0.0, tf=3.0)
    prob.initial({phi: 0.0, omega: 0.0})
    prob.final({phi: -0.5 * math.pi, omega: 0.0})
    prob.minimize(integral=u**2)
    prob.guess({phi: (0.0, -0.5 * math.pi), omega: -0.5 * math.pi / 3.0})
    return prob


def test_midpoint_vi_converges_at_second_order_on_a_smooth_problem():
    fine = cl.solve(pendulum_swing_down(), scheme="hermite-simpson", intervals=320, ipopt=TIGHT)
    assert fine.success
    meshes = [20, 40, 80, 160]
    errors, gaps = [], []
    for n in meshes:
        res = solve_midpoint_vi(pendulum_swing_down(), intervals=n, ipopt=TIGHT)
        assert res.success, res.message
        idx = np.arange(0, 641, 640 // n)  # HS grid: mesh points at even columns
        errors.append(max(np.abs(res.trajectory[s] - fine.trajectory[s][idx]).max() for s in ("pend.phi", "pend.omega")))
        gaps.append(abs(res.objective - 12.8738888777))  # docs/problems.md D1
    h = 3.0 / np.array(meshes)
    assert slope(h, errors) >= 1.8, errors  # measured 1.95
    assert slope(h, gaps) >= 1.8, gaps  # measured 2.00


def test_midpoint_vi_approaches_hermite_simpson_on_the_double_pendulum():
    module = load("double_pendulum_swing")
    ref = module.REFERENCE["value"]
    meshes = [20, 40, 80, 160]
    gaps = []
    for n in meshes:
        res = solve_midpoint_vi(module.build(), intervals=n, ipopt=TIGHT)
        assert res.success, res.message
        gaps.append(abs(res.objective - ref) / ref)
    assert (np.diff(gaps) < 0).all() and gaps[-1] < 5e-4, gaps  # measured 1.7e-2 … 3.0e-4
    assert slope(1.0 / np.array(meshes), gaps) >= 1.8, gaps
    hs = cl.solve(module.build(), scheme="hermite-simpson", intervals=40, ipopt=TIGHT)
    assert abs(hs.objective - ref) / ref < 1e-6


def test_closed_chain_reaches_the_hermite_simpson_optimum():
    module = load("closed_chain")
    ref = module.REFERENCE["value"]
    gaps = []
    for n in (20, 40, 80):
        res = solve_midpoint_vi(module.build(), intervals=n, ipopt=TIGHT)
        assert res.success, res.message
        assert res.violation_by_kind()["holonomic"] < 1e-10
        gaps.append(abs(res.objective - ref) / ref)
    assert slope(1.0 / np.array([20, 40, 80]), gaps) >= 1.8 and gaps[-1] < 2e-4, gaps  # measured 1.5e-3, 3.2e-4, 7.6e-5
    traj = res.trajectory
    th2, th3 = module.configuration(traj["chain.theta1"])
    assert np.abs(traj["chain.theta2"] - th2).max() < 1e-9 and np.abs(traj["chain.theta3"] - th3).max() < 1e-9


def test_long_horizon_problem_keeps_energy_while_radau_collocation_drifts():
    module = load("pendulum_long_horizon")
    res = solve_midpoint_vi(module.build(steps=1000, step=0.05), intervals=1000)
    assert res.success, res.message
    err = np.abs(module.energy_error(res.trajectory))
    assert err[-100:].max() <= 1.05 * err[:100].max() and err.max() < 0.02
    # Radau IIA (radau-2, order 3) loses energy at a steady rate on the same step: error ∝ horizon
    drift = []
    for steps in (100, 200):
        rad = cl.solve(module.build(steps=steps, step=0.05), scheme="radau-2", intervals=steps)
        assert rad.success, rad.message
        drift.append(module.energy_error(rad.trajectory)[-1])
    assert drift[0] < 0 and drift[1] < 1.8 * drift[0], drift  # measured −0.0087 per 100 steps, linear


def test_free_final_time_and_speed_bounds():
    def build(vmax):
        body = cl.Multibody("cart", coordinates=["x"], speeds=["v"], speed_bounds={"v": (-vmax, vmax)})
        (x,), (v,) = body.coordinates, body.speeds
        body.kinetic_energy = 0.5 * v**2
        body.generalized_force = body.control("u", bounds=(-1, 1))
        prob = cl.Problem([body], t0=0.0, tf=(0.5, 5.0))
        prob.initial({x: 0.0, v: 0.0})
        prob.final({x: 1.0, v: 0.0})
        prob.minimize(final=prob.tf)
        prob.guess({x: (0.0, 1.0), "tf": 2.5})
        return prob
    # bang-bang: tf = 2 unbounded; with |v| ≤ 0.6, tf = 0.6 + 1/0.6 (accelerate, cruise, brake)
    assert solve_midpoint_vi(build(10.0), intervals=20).objective == pytest.approx(2.0, abs=1e-6)
    res = solve_midpoint_vi(build(0.6), intervals=80)
    assert res.success and res.objective == pytest.approx(0.6 + 1 / 0.6, abs=1e-3)
    assert np.abs(np.diff(res.trajectory["cart.x"]) / np.diff(res.trajectory.time)).max() <= 0.6 + 1e-8


def test_trajectory_round_trip_and_warm_start(tmp_path):
    res = solve_midpoint_vi(pendulum_swing_down(), intervals=30, ipopt=TIGHT)
    traj = res.trajectory
    assert traj.metadata["scheme"] == "midpoint-vi" and traj.metadata["success"]
    assert set(traj.of_kind("derivative")) == {"pend.phi.dot", "pend.omega.dot"}
    assert np.allclose(traj["pend.phi.dot"], traj["pend.omega"])
    path = traj.write(tmp_path / "vi.csv")
    back = cl.Trajectory.read(path)
    assert np.array_equal(back["pend.u"], traj["pend.u"]) and back.metadata["scheme"] == "midpoint-vi"
    assert np.isfinite(back(1.234)["pend.phi"])
    again = solve_midpoint_vi(pendulum_swing_down(), intervals=30, guess=path, ipopt=TIGHT)
    assert again.objective == pytest.approx(res.objective, rel=1e-10)


# -- 4. errors -------------------------------------------------------------------------------

def _given_terms():
    body = cl.Multibody("b", coordinates=["q"], speeds=["v"])
    body.mass_matrix = ca.SX(1)
    return body


def _plain_state():
    c = cl.Component("c")
    x = c.state("x")
    c.derivative(x, -x)
    return [pendulum(), c]


def _nonholonomic():
    body = cl.Multibody("b", coordinates=["x", "y"], speeds=["vx", "vy"])
    body.kinetic_energy = 0.5 * (body.speeds[0] ** 2 + body.speeds[1] ** 2)
    body.nonholonomic("knife", body.speeds[0] - body.speeds[1])
    return body


def _quartic():
    body = cl.Multibody("b", coordinates=["q"], speeds=["v"])
    body.kinetic_energy = body.speeds[0] ** 4
    return body


@pytest.mark.parametrize("make, error, match", [
    (_given_terms, cl.ModelError, "no `kinetic_energy`"),
    (_plain_state, cl.ModelError, "Component `c` has the state `c.x`"),
    (_nonholonomic, cl.ModelError, "holonomic constraints only"),
    (_quartic, cl.ModelError, "quadratic in the speeds"),
])
def test_non_lagrangian_models_are_refused(make, error, match):
    with pytest.raises(error, match=match):
        MidpointVI(make())


@pytest.mark.parametrize("kwargs, match", [
    (dict(constraint_method="posa2016"), "does not apply to scheme `midpoint-vi`"),
    (dict(forcing="trap"), "Unknown forcing `trap`"),
])
def test_bad_options_are_refused(kwargs, match):
    with pytest.raises(cl.OptionError, match=match):
        solve_midpoint_vi(pendulum_swing_down(), intervals=4, **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    (dict(q0=[0.1], v0=[0.0], p0=[0.0]), "exactly one of `p0`"),
    (dict(q0=[0.1, 0.2], v0=[0.0]), "`q0` must have 1 entries"),
    (dict(q0={"pend.thta": 0.1}, v0=[0.0]), "Did you mean `pend.theta`"),
    (dict(q0=[0.1], v0=[0.0], controls=np.zeros((3, 1))), r"shape \(num_steps, num_controls\) = \(4, 1\)"),
    (dict(q0=[0.1], v0=[0.0], controls={"pend.v": 1.0}), "not a control"),
    (dict(q0=[0.1], v0=[0.0], t=[0.0, 0.1, 0.1]), "strictly increasing"),
])
def test_bad_simulation_inputs_are_refused(kwargs, match):
    kwargs.setdefault("t", np.linspace(0, 0.4, 5))
    with pytest.raises(cl.OptionError, match=match):
        simulate(pendulum(forced=True), **kwargs)


def test_inconsistent_initial_configuration_is_refused():
    with pytest.raises(cl.OptionError, match="violates constraint `pend.rod`"):
        simulate(cartesian_pendulum(), [0.0, 0.1], [1.0, 0.5], v0=[0.0, 0.0])


def test_a_step_that_does_not_converge_raises():
    with pytest.raises(ConvergenceError, match="did not solve the DEL equation"):
        simulate(pendulum(), [0.0, 50.0], [3.0], v0=[40.0], max_iterations=3)


def test_non_uniform_steps_keep_second_order_with_constraints():
    # graded steps t = 2 s^1.3: the constraint impulse weights (h_{k−1} + h_k)/2 keep q and the inner λ second order
    errors, lam_errors = [], []
    for n in (100, 200, 400):
        times = 2 * np.linspace(0, 1, n + 1) ** 1.3
        tr = simulate(cartesian_pendulum(), times, [math.sin(1.0), -math.cos(1.0)], v0=[0.0, 0.0])
        exact = solve_ivp(lambda t, x: [x[1], -G * np.sin(x[0])], (0, 2), [1.0, 0.0], method="DOP853",
                          rtol=1e-12, atol=1e-12, t_eval=times).y
        errors.append(np.abs(tr["pend.x"] - np.sin(exact[0])).max())
        lam_errors.append(np.abs(tr["pend.rod.lambda"] - 0.5 * (-G * np.cos(exact[0]) - exact[1] ** 2))[1:-1].max())
    h = 1.0 / np.array([100, 200, 400])
    assert slope(h, errors) >= 1.8 and slope(h, lam_errors) >= 1.8, (errors, lam_errors)  # measured 2.00, 2.00


@pytest.mark.slow
def test_energy_stays_bounded_over_20000_steps():
    h, steps, theta0 = 0.05, 20000, 2.5  # amplitude close to the separatrix
    tr = simulate(pendulum(), np.arange(steps + 1) * h, [theta0], v0=[0.0])
    err = np.abs(pendulum_energy(tr["pend.theta"], tr["pend.omega"]) - pendulum_energy(theta0, 0.0))
    assert err[-2000:].max() <= 1.05 * err[:2000].max()


def test_matches_hermite_simpson_on_the_constrained_double_pendulum():
    """Issue check: midpoint-vi reaches the optimum of the constraints issue's double pendulum (end effector
    held on a line; REFERENCE 177.4049512932 from its minimal twin) at second order as the mesh refines."""
    import importlib.util
    from pathlib import Path

    import colloc as cl

    path = Path(__file__).resolve().parents[1] / "problems" / "double_pendulum_line.py"
    spec = importlib.util.spec_from_file_location("double_pendulum_line", path)
    dp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dp)
    meshes = [20, 40, 80]
    gaps = []
    for n in meshes:
        res = cl.solve(dp.build(), scheme="midpoint-vi", intervals=n, ipopt={"tol": 1e-10})
        assert res.success, res.message
        gaps.append(abs(res.objective - dp.REFERENCE["value"]) / dp.REFERENCE["value"])
    slope = np.polyfit(np.log(1.0 / np.array(meshes)), np.log(gaps), 1)[0]
    assert slope >= 1.8 and gaps[-1] < 5e-6, gaps
