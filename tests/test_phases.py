"""Multi-phase problems, events (guards), impacts (Newton restitution), jump maps and periodicity.

Reference solves compare with closed forms (bouncing ball, two-phase rocket, harmonic
oscillator period) or published values (docs/problems.md E1, Garcia's simplest walker), with IPOPT
``tol`` at least 100× tighter than the assertion.  The biped's impact map is checked against
Kelly's five angular-momentum conservations (docs/problems.md C2) at fixed numbers.
"""
from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.errors import ModelError, OptionError, ProblemError
from colloc.model.impact import Impact
from colloc.results.phased_trajectory import MultiPhaseResult, PhasedTrajectory
from colloc.pipeline.multiphase_problem import MultiPhaseProblem, Phase, solve_phases

PROBLEMS = Path(__file__).resolve().parents[1] / "problems"
TIGHT = {"tol": 1e-12, "bound_relax_factor": 1e-14}


def load(stem):
    spec = importlib.util.spec_from_file_location(f"problems.{stem}", PROBLEMS / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ball():
    return load("bouncing_ball")


@pytest.fixture(scope="module")
def ball_result(ball):
    return solve_phases(ball.build(bounces=3, restitution=0.8), intervals=4, ipopt=TIGHT)


@pytest.fixture(scope="module")
def biped():
    return load("five_link_biped")


# -- impacts at fixed numbers (no IPOPT) --------------------------------------------------------
def test_ball_restitution_reverses_the_normal_speed(ball):
    body = ball.ball_model(mass=2.0)
    imp = Impact(body, contact=body.coordinates[1], restitution=0.7)
    vplus, P = imp.velocity_after([0.3, 0.0], [0.5, -4.0])
    np.testing.assert_allclose(vplus, [0.5, 2.8], rtol=1e-14)
    np.testing.assert_allclose(P, [2.0 * (1 + 0.7) * 4.0], rtol=1e-14)  # m (1 + e) |ẏ⁻|


def _kelly_impact(fb):
    """Kelly's heel-strike map: five angular-momentum conservations (docs/problems.md C2), as a Function."""
    def cross(a, b):
        return a[0] * b[1] - a[1] * b[0]

    def momentum(q, dq, links, about):
        _, G = fb.kinematics(q)
        return sum(cross(G[k] - about, fb.MASS[k] * ca.jtimes(G[k], q, dq)) + fb.INERTIA[k] * dq[k] for k in links)

    qm, dqm, dqp = ca.SX.sym("qm", 5), ca.SX.sym("dqm", 5), ca.SX.sym("dqp", 5)
    qp = qm[::-1]
    Pm, _ = fb.kinematics(qm)
    Pp, _ = fb.kinematics(qp)
    E = ca.vertcat(
        momentum(qm, dqm, range(5), Pm[5]) - momentum(qp, dqp, range(5), Pp[0]),
        momentum(qm, dqm, range(4), Pm[4]) - momentum(qp, dqp, range(1, 5), Pp[1]),
        momentum(qm, dqm, range(3), Pm[2]) - momentum(qp, dqp, range(2, 5), Pp[2]),
        momentum(qm, dqm, range(2), Pm[2]) - momentum(qp, dqp, range(3, 5), Pp[2]),
        momentum(qm, dqm, [0], Pm[1]) - momentum(qp, dqp, [4], Pp[4]),
    )
    A, b = ca.jacobian(E, dqp), ca.substitute(E, dqp, ca.DM.zeros(5))
    return ca.Function("kelly", [qm, dqm], [-ca.solve(A, b)])


def test_biped_restitution_equals_kellys_angular_momentum_map(biped):
    body, _ = biped.stance_model()
    impact, pre, post = biped.heel_strike(body)
    kelly = _kelly_impact(biped)
    rng = np.random.default_rng(7)
    for _ in range(4):
        q, v = rng.uniform(-0.6, 0.6, 5), rng.uniform(-2, 2, 5)
        vplus, P = impact.velocity_after(np.r_[0, 0, q], np.r_[0, 0, v])
        np.testing.assert_allclose(vplus[2:][::-1], np.array(kelly(q, v)).ravel(), rtol=1e-10, atol=1e-12)


# -- reference solves -------------------------------------------------------------------------
def test_ball_apex_heights_and_flight_times(ball, ball_result):
    # [DERIVED] h_k = e^{2k} h₀; durations √(2h₀/g), then e^k √(2h₀/g) per rise and fall.
    res = ball_result
    assert res.success, res.message
    apex = [res.phase("fall0")["ball.y"][0]] + [res.phase(f"rise{k}")["ball.y"][-1] for k in (1, 2, 3)]
    np.testing.assert_allclose(apex, ball.exact_apex_heights(3, 0.8), atol=1e-6, rtol=0)
    np.testing.assert_allclose(res.durations, ball.exact_durations(3, 0.8), atol=1e-6, rtol=0)
    flights = [res.durations[2 * k - 1] + res.durations[2 * k] for k in (1, 2, 3)]
    np.testing.assert_allclose(flights, [2 * 0.8**k * math.sqrt(2 / 9.81) for k in (1, 2, 3)], atol=1e-6, rtol=0)
    for k in (1, 2, 3):  # the horizontal speed survives a frictionless impact; P = m (1 + e) |ẏ⁻|
        vplus = res.links[f"fall{k - 1}>rise{k}/ground.v+"]
        assert vplus[0] == pytest.approx(0.5, abs=1e-9)
        assert res.links[f"fall{k - 1}>rise{k}/ground.P"][0] == pytest.approx(1.8 * vplus[1] / 0.8, rel=1e-9)
    kinds = res.violation_by_kind()
    assert max(kinds["guard"], kinds["impact"], kinds["link"]) <= 1e-10


def test_simplest_walker_long_gait_fixed_point():
    sw = load("simplest_walker")
    res = solve_phases(sw.build(), scheme="radau-4", intervals=20, ipopt=TIGHT)
    assert res.success, res.message
    step = res.phases[0]
    theta, theta_dot = sw.FIXED_POINTS["long"]  # docs/problems.md E1 [SEEN], Garcia's code to 1e-10
    assert abs(step["walker.theta"][0] - theta) <= 1e-6
    assert abs(step["walker.theta_dot"][0] - theta_dot) <= 1e-6
    assert res.durations[0] == pytest.approx(sw.PERIODS["long"], abs=1e-5)  # [COMPUTED], 8 digits
    assert step["walker.theta"][-1] < 0
    assert res.violation_by_kind()["periodic"] <= 1e-10


def test_simplest_walker_short_gait_from_its_own_guess():
    sw = load("simplest_walker")
    res = solve_phases(sw.build(gait="short"), scheme="radau-4", intervals=20, ipopt=TIGHT)
    theta, theta_dot = sw.FIXED_POINTS["short"]
    assert res.success
    assert res.phases[0]["walker.theta"][0] == pytest.approx(theta, abs=1e-6)
    assert res.phases[0]["walker.theta_dot"][0] == pytest.approx(theta_dot, abs=1e-6)


def test_two_phase_rocket_switching_time_and_apex():
    rk = load("two_phase_rocket")
    ex = rk.exact()
    res = solve_phases(rk.build(), intervals=20, ipopt=TIGHT)
    assert res.success, res.message
    np.testing.assert_allclose(res.durations, [ex["burn"], ex["coast"]], atol=1e-6, rtol=0)
    assert -res.objective == pytest.approx(ex["apex"], abs=1e-6)
    assert res.objective == pytest.approx(rk.REFERENCE["value"], abs=1e-6)
    assert res.terms["apex_height"] == pytest.approx(res.objective)
    assert res.phase("burn").parameters["rocket.thrust"] == pytest.approx(2.0, abs=1e-9)


def test_biped_periodic_step_converges_from_the_straight_line_guess(biped):
    res = solve_phases(biped.build(), scheme="hermite-simpson", intervals=25, ipopt={"tol": 1e-10})
    assert res.success, res.message
    kinds = res.violation_by_kind()
    for kind in ("periodic", "impact", "guard", "guard-direction", "guard-inside"):
        assert kinds[kind] <= 1e-8, kind
    step = res.phases[0]
    P = res.links["periodic/heel_strike.P"]
    assert P[1] > 0  # the ground pushes
    vplus = res.links["periodic/heel_strike.v+"]
    assert vplus[1] >= 0  # the old stance foot lifts off
    # relabelling: q(0) is the mirror image of q(T)
    q0 = [step[f"biped.q{i}"][0] for i in range(1, 6)]
    qT = [step[f"biped.q{i}"][-1] for i in range(1, 6)]
    np.testing.assert_allclose(q0, qT[::-1], atol=1e-8)
    assert res.objective > 0


@pytest.mark.slow
def test_biped_schemes_agree(biped):
    # No published cost (docs/problems.md C2 [NOT FOUND]): self-consistency across schemes and meshes.
    a = solve_phases(biped.build(), scheme="hermite-simpson", intervals=50, ipopt={"tol": 1e-10})
    b = solve_phases(biped.build(), scheme="radau-3", intervals=40, ipopt={"tol": 1e-10})
    assert a.success and b.success
    assert a.objective == pytest.approx(b.objective, rel=1e-3)


def van_der_pol(mu=1.0):
    """One period of the Van der Pol limit cycle from a maximum of x (section v = 0)."""
    c = cl.Component("osc")
    x, v = c.state("x"), c.state("v")
    c.derivative(x, v)
    c.derivative(v, mu * (1 - x**2) * v - x)
    prob = cl.Problem([c], tf=(1.0, 10.0), name="orbit")
    prob.initial({v: 0.0})
    t = np.linspace(0, 6.5, 30)
    prob.guess({"tf": 6.5, x: (t, 2 * np.cos(2 * np.pi * t / 6.5)), v: (t, -2 * np.sin(2 * np.pi * t / 6.5))})
    ph = Phase(prob)
    ph.end_when(v, "decreasing", name="x_max")
    mp = MultiPhaseProblem([ph], name="van_der_pol")
    mp.periodic(states=["osc.x"])
    return mp, ph


def van_der_pol_period(mu=1.0):
    """The period by scipy's event location on a long simulation (an independent integrator)."""
    from scipy.integrate import solve_ivp

    def event(t, y):
        return y[1]
    event.direction = -1
    sol = solve_ivp(lambda t, y: [y[1], mu * (1 - y[0] ** 2) * y[1] - y[0]], (0, 80), [0.5, 0.0],
                    events=event, rtol=1e-12, atol=1e-12, method="DOP853")
    return float(np.diff(sol.t_events[0])[-1])


def test_periodic_limit_cycle_found_by_guard_direction():
    # v = ẋ crosses zero increasing at the minimum of x (T/2) and decreasing at the maximum (T).
    mp, _ = van_der_pol()
    res = solve_phases(mp, scheme="radau-4", intervals=30, ipopt=TIGHT)
    assert res.success, res.message
    assert res.durations[0] == pytest.approx(van_der_pol_period(), abs=1e-6)
    assert "periodic:periodic/osc.x" in res.violations
    assert res.phases[0]["osc.x"][0] > 1.9  # the section at the maximum


def test_guard_kept_positive_lands_the_thrown_ball(ball):
    # From the ground with ẏ = 3 up: y = 0 again at T = 2·3/g, not at T → 0 [DERIVED].
    body = ball.ball_model()
    x, y = body.coordinates
    vx, vy = body.speeds
    prob = cl.Problem([body], tf=(1e-3, 5.0), name="throw")
    prob.initial({x: 0.0, y: 0.0, vx: 1.0, vy: 3.0})
    prob.guess({"tf": 0.2})
    ph = Phase(prob)
    ph.end_when(y, "decreasing", inside=True, name="ground")
    res = solve_phases(MultiPhaseProblem([ph]), intervals=6, ipopt=TIGHT)
    assert res.success
    assert res.durations[0] == pytest.approx(6 / 9.81, abs=1e-9)


def drift(k_bounds=(-5, 5)):
    """Two phases of ẋ = k (k a parameter shared by name), durations linked by a user expression."""
    phases = []
    for name in ("one", "two"):
        c = cl.Component("d")
        x = c.state("x")
        k = c.parameter("k", bounds=k_bounds)
        c.derivative(x, k)
        prob = cl.Problem([c], tf=(0.1, 2.0), name=name)
        phases.append((Phase(prob), x, k))
    (a, xa, ka), (b, xb, kb) = phases
    a.problem.initial({xa: 0.0})
    b.problem.final({xb: 3.0})
    mp = MultiPhaseProblem([a, b], name="drift")
    mp.connect(a, b)
    mp.link(b.duration - 2 * a.duration, name="twice")
    mp.link(a.duration, 0.5, 0.5, name="first")
    return mp


def test_shared_parameter_and_user_link():
    res = solve_phases(drift(), intervals=3, ipopt=TIGHT)
    assert res.success
    np.testing.assert_allclose(res.durations, [0.5, 1.0], atol=1e-10)
    for p in res.phases:
        assert p.parameters["d.k"] == pytest.approx(2.0, abs=1e-10)
    assert res.start_times[1] == pytest.approx(0.5)
    assert "link:two/d.k" in res.violations and "link:twice" in res.violations


def test_continuity_of_a_constrained_model_matches_the_single_phase_optimum():
    # docs/problems.md D1 (Betts 10.103, Cartesian pendulum with a rod) split at t = 1.5 s: the same optimum.
    # Continuity implies phase two's rod rows at its start; they are left out (else posa2016 crawls).
    pc = load("pendulum_cartesian")
    whole = pc.build()
    t = np.linspace(0.0, 3.0, 61)
    phi = -0.5 * math.pi * t / 3.0
    phases = []
    for name, sel in (("one", t <= 1.5), ("two", t >= 1.5)):
        prob = cl.Problem(whole.model, t0=0.0, tf=1.5, name=name)
        prob.minimize(integral=whole.costs[0].integral)
        ts = t[sel] - t[sel][0]
        prob.guess({"pend.x": (ts, np.cos(phi[sel])), "pend.y": (ts, np.sin(phi[sel]))})
        phases.append(Phase(prob, constraint_method="posa2016"))
    phases[0].problem.initial_bounds.update(whole.initial_bounds)
    phases[1].problem.final_bounds.update(whole.final_bounds)
    mp = MultiPhaseProblem(phases, name="pendulum_split")
    mp.connect("one", "two")
    res = solve_phases(mp, intervals=40, ipopt={"tol": 1e-10})
    assert res.success, res.message
    assert res.objective == pytest.approx(pc.REFERENCE["value"], rel=1e-5)
    assert res.violation_by_kind()["holonomic"] <= 1e-9


def _mass_on_circle(radius, pinned):
    """A point mass on a circle (x² + y² = r²); with ``pinned`` also held on the line y = 0.

    ``radius="growing"``: r = 1 + t/10, in each phase's own time.
    """
    body = cl.Multibody("m", coordinates=["x", "y"])
    (x, y), (vx, vy) = body.coordinates, body.speeds
    body.kinetic_energy = 0.5 * (vx**2 + vy**2)
    r = 1.0 + cl.TIME / 10 if radius == "growing" else radius
    body.holonomic("circle", x**2 + y**2 - r**2)
    if pinned:
        body.holonomic("line", y)
    prob = cl.Problem([body], t0=0.0, tf=1.0, name="pinned" if pinned else "free")
    prob.guess({x: 1.0 if radius == "growing" else radius})
    return prob


@pytest.mark.parametrize("radius, dropped", [(1.0, True), (2.0, False), ("growing", False)])
def test_a_constraint_both_phases_share_is_not_repeated_at_the_junction(radius, dropped):
    # Phase one declares {circle, line}, phase two {circle}: continuity imposes two's circle at its start,
    # and repeating those rows makes the Jacobian rank-deficient. A circle of another radius is another
    # constraint under the same name, so its rows stay; so are those of a circle that grows with time,
    # since each phase has its own clock (the end of one and the start of the next see different times).
    first = _mass_on_circle("growing" if radius == "growing" else 1.0, True)
    mp = MultiPhaseProblem([Phase(first), Phase(_mass_on_circle(radius, False))])
    mp.connect("pinned", "free")
    nlp = cl.build_nlp(mp, intervals=3)
    start = [lab for lab in nlp.rows.labels()  # position and velocity levels (φ̈ is imposed at every grid point)
             if lab.startswith("holonomic:free/m.circle") and lab.endswith("@k=0") and ".ddot" not in lab]
    assert (start == []) == dropped, start
    assert [lab for lab in nlp.rows.labels() if lab.startswith("holonomic:free/m.circle") and "@k=3" in lab]
    eq = np.flatnonzero(nlp.rows.lower == nlp.rows.upper)
    J = np.array(ca.Function("J", [nlp.w], [ca.jacobian(nlp.g, nlp.w)])(nlp.layout.vector("guess")))[eq]
    if dropped:
        assert np.linalg.matrix_rank(J) == J.shape[0]


# -- results, files, warm starts --------------------------------------------------------------
def test_concatenated_trajectory_and_csv_round_trip(ball_result, tmp_path):
    res = ball_result
    traj = res.trajectory
    assert isinstance(res, MultiPhaseResult) and isinstance(traj, PhasedTrajectory)
    assert traj.kinds["phase"] == "phase"
    assert traj.time.size == sum(p.time.size for p in res.phases)
    assert set(np.unique(traj["phase"])) == set(range(7))
    # time runs on: phase i starts where phase i − 1 ends
    np.testing.assert_allclose(res.start_times[1:], np.cumsum(res.durations)[:-1], rtol=1e-14)
    path = traj.write(tmp_path / "ball.csv")
    back = cl.Trajectory.read(path)
    assert back.names == traj.names
    np.testing.assert_array_equal(back["phase"], traj["phase"])
    split = PhasedTrajectory.split(back)
    assert split.phase_names == res.phase_names
    np.testing.assert_array_equal(split.phase("rise2")["ball.y"], res.phase("rise2")["ball.y"])
    assert "phase" not in cl.Trajectory.read(traj.write(tmp_path / "ball.sto")).names


def test_sampling_uses_each_phase_and_takes_the_later_phase_at_a_junction(ball_result):
    res = ball_result
    traj = res.trajectory
    t1 = res.start_times[1]
    at = traj(t1)
    assert at["phase"] == 1.0
    assert at["ball.y_speed"] > 0  # post-impact, going up
    inside = res.start_times[2] + 0.3 * res.durations[2]
    assert traj(inside)["ball.y"] == pytest.approx(res.phase(2)(inside)["ball.y"], rel=1e-14)
    assert "phase fall0" in res.summary()


def test_warm_start_from_a_file(ball, ball_result, tmp_path):
    path = ball_result.trajectory.write(tmp_path / "ball.csv")
    res = solve_phases(ball.build(bounces=3, restitution=0.8), intervals=4, guess=str(path), ipopt=TIGHT)
    assert res.success
    np.testing.assert_allclose(res.durations, ball_result.durations, atol=1e-9)
    res2 = solve_phases(ball.build(bounces=3, restitution=0.8), intervals=4, guess=ball_result, ipopt=TIGHT)
    assert res2.success


def test_checkpoint_writes_the_concatenated_iterate(ball, tmp_path):
    path = tmp_path / "ck.csv"
    solve_phases(ball.build(bounces=1), intervals=4, checkpoint=(path, 1), ipopt={"tol": 1e-10})
    assert "phase" in cl.Trajectory.read(path).names


def test_biped_pose_strip(biped, tmp_path):
    traj = cl.Trajectory(np.array([0.0, 0.7]), {f"biped.q{i}": np.array([a, b]) for i, a, b in
                                               zip(range(1, 6), biped.START_POSE, biped.START_POSE[::-1])})
    fig = biped.draw_steps(traj, steps=2, poses=4)
    assert len(fig.axes[0].lines) == 1 + 2 * 4 * 3  # ground + (stance, torso, swing) per pose


# -- malformed problems -------------------------------------------------------------------------
def two_phases():
    a, b = van_der_pol()[1], van_der_pol()[1]
    b.name = "later"
    return a, b


def case_same_names():
    a, b = two_phases()
    b.name = a.name
    MultiPhaseProblem([a, b])


def case_shared_problem():
    a, _ = two_phases()
    MultiPhaseProblem([a, Phase(a.problem, name="again")])


def case_unknown_phase():
    a, b = two_phases()
    MultiPhaseProblem([a, b]).connect("orbitt", b)


def case_not_connected():
    a, b = two_phases()
    MultiPhaseProblem([a, b]).validate()


def case_jump_to_a_parameter():
    mp = drift()
    mp.connect("two", "one", jump={"d.k": 1.0}, name="back")


def case_jump_uses_foreign_symbol():
    a, b = two_phases()
    mp = MultiPhaseProblem([a, b])
    mp.connect(a, b, jump={"osc.x": ca.SX.sym("nope")})


def case_pre_without_impact():
    a, b = two_phases()
    MultiPhaseProblem([a, b]).connect(a, b, pre={})


def case_link_with_bare_symbol():
    a, b = two_phases()
    mp = MultiPhaseProblem([a, b])
    mp.link(a.problem.model.states[0].symbol)


def case_guard_with_control():
    c = cl.Component("c")
    x, u = c.state("x"), c.control("u")
    c.derivative(x, u)
    Phase(cl.Problem([c])).end_when(u)


def case_guard_direction():
    a, _ = two_phases()
    a.end_when(a.problem.model.states[0].symbol, "downwards")


def case_inside_either():
    a, _ = two_phases()
    a.end_when(a.problem.model.states[0].symbol, "either", inside=True)


def case_restitution_range():
    body = load("bouncing_ball").ball_model()
    Impact(body, body.coordinates[1], restitution=1.5)


def case_contact_uses_speed():
    body = load("bouncing_ball").ball_model()
    Impact(body, body.speeds[1])


def case_friction_needs_tangent():
    body = load("bouncing_ball").ball_model()
    Impact(body, body.coordinates[1], friction=0.5)


def case_impact_pre_missing():
    a, b = two_phases()
    body = load("bouncing_ball").ball_model()
    MultiPhaseProblem([a, b]).connect(a, b, impact=Impact(body, body.coordinates[1]))


def case_bad_guess():
    solve_phases(drift(), guess=[None])


def case_not_multiphase():
    solve_phases(van_der_pol()[1].problem)


def case_not_a_problem():
    Phase("orbit")


def case_bad_phase_name():
    Phase(van_der_pol()[1].problem, name="a/b")


def case_phase_option():
    Phase(van_der_pol()[1].problem, constraint_metod="posa2016")


def case_phase_scheme():
    Phase(van_der_pol()[1].problem, scheme="hermite-simpsn")


def case_no_phases():
    MultiPhaseProblem([])


def case_index_out_of_range():
    a, b = two_phases()
    MultiPhaseProblem([a, b]).phase(5)


def case_foreign_phase():
    a, b = two_phases()
    MultiPhaseProblem([a]).connect(a, b)


def case_duplicate_connection():
    a, b = two_phases()
    mp = MultiPhaseProblem([a, b])
    mp.connect(a, b)
    mp.connect(a, b)


def case_jump_and_impact():
    a, b = two_phases()
    body = load("bouncing_ball").ball_model()
    MultiPhaseProblem([a, b]).connect(a, b, jump={}, impact=Impact(body, body.coordinates[1]))


def case_jump_not_a_dict():
    a, b = two_phases()
    MultiPhaseProblem([a, b]).connect(a, b, jump=[1.0])


def case_states_overlap_jump():
    a, b = two_phases()
    MultiPhaseProblem([a, b]).connect(a, b, jump={"osc.x": 1.0}, states=["osc.x"])


def case_links_nothing():
    rk = load("two_phase_rocket").build()
    mp = MultiPhaseProblem([Phase(rk.phases[0].problem, name="b"), Phase(van_der_pol()[1].problem, name="o")])
    mp.connect("b", "o")


def case_post_foreign_symbol():
    ball = load("bouncing_ball")
    body = ball.ball_model()
    phases = [Phase(cl.Problem([body], tf=(0.1, 1), name=n)) for n in ("a", "b")]
    mp = MultiPhaseProblem(phases)
    mp.connect("a", "b", impact=Impact(body, body.coordinates[1]), post={"ball.y": ca.SX.sym("z")})


def case_link_bounds():
    mp = drift()
    a = mp.phase("one")
    mp.link(ca.vertcat(a.duration, a.duration), [0, 1, 2], 3)


def case_cost_not_scalar():
    mp = drift()
    a = mp.phase("one")
    mp.minimize(ca.vertcat(a.duration, a.duration))


def case_guard_twice():
    a, _ = two_phases()
    a.end_when(a.problem.model.states[0].symbol, name="x_max")


def case_contact_shape():
    body = load("bouncing_ball").ball_model()
    Impact(body, ca.horzcat(body.coordinates[0], body.coordinates[1]))


def case_restitution_count():
    body = load("bouncing_ball").ball_model()
    Impact(body, body.q, restitution=[0.1, 0.2, 0.3])


def case_normal_range():
    body = load("bouncing_ball").ball_model()
    Impact(body, body.q, normal=2)


def case_not_a_multibody():
    Impact(cl.Component("c"), 1.0)


def case_split_without_phases():
    PhasedTrajectory.split(cl.Trajectory([0.0, 1.0], {"x": [0.0, 1.0]}))


@pytest.mark.parametrize("case, error, match", [
    (case_same_names, ProblemError, "Two phases are named `orbit`"),
    (case_shared_problem, ProblemError, "share one Problem object"),
    (case_unknown_phase, ProblemError, "Unknown phase `orbitt`. Did you mean `orbit`"),
    (case_not_connected, ProblemError, "`orbit` and `later` are not connected"),
    (case_jump_to_a_parameter, ProblemError, "`d.k` is a parameter of phase `one`, not a state"),
    (case_jump_uses_foreign_symbol, ProblemError, "uses `nope`, which is not a variable of phase `orbit`"),
    (case_pre_without_impact, ProblemError, "`pre` and `post` describe an impact"),
    (case_link_with_bare_symbol, ProblemError, "not an endpoint value of any phase.*phase.start"),
    (case_guard_with_control, ProblemError, "uses `c.u`; a guard may use the phase's states"),
    (case_guard_direction, ProblemError, "Unknown guard direction `downwards`"),
    (case_inside_either, ProblemError, "`inside=True` needs a direction"),
    (case_restitution_range, ModelError, r"must lie in \[0, 1\]"),
    (case_contact_uses_speed, ModelError, "uses `ball.y_speed`"),
    (case_friction_needs_tangent, ModelError, "friction cone needs exactly one normal row and at least one tangential"),
    (case_impact_pre_missing, ProblemError, "phase `orbit` has no state `ball.x`.*`pre="),
    (case_bad_guess, OptionError, "a list of 2 trajectories"),
    (case_not_multiphase, ProblemError, "solve_phases\\(\\) takes a colloc MultiPhaseProblem"),
    (case_not_a_problem, ProblemError, "A Phase wraps a colloc.Problem; got str"),
    (case_bad_phase_name, ProblemError, "must be non-empty and free of"),
    (case_phase_option, OptionError, "Unknown transcription option `constraint_metod`"),
    (case_phase_scheme, OptionError, "hermite-simpsn"),
    (case_no_phases, ProblemError, "needs at least one phase"),
    (case_index_out_of_range, ProblemError, "Phase index 5 is out of range; there are 2 phases"),
    (case_foreign_phase, ProblemError, "Phase `later` is not part of"),
    (case_duplicate_connection, ProblemError, "A connection named `orbit>later` already exists"),
    (case_jump_and_impact, ProblemError, "give either `jump` or `impact`"),
    (case_jump_not_a_dict, ProblemError, "`jump` of connection `orbit>later` takes a dict"),
    (case_states_overlap_jump, ProblemError, "`osc.x` is already set by the jump map"),
    (case_links_nothing, ProblemError, "Connection `b>o` links nothing"),
    (case_post_foreign_symbol, ProblemError, "uses `z`; write it in the coordinates and speeds"),
    (case_link_bounds, ProblemError, "Bounds of link `link2` must be scalars or have 2 entries"),
    (case_cost_not_scalar, ProblemError, "Multi-phase cost `cost0` must be a scalar"),
    (case_guard_twice, ProblemError, "already has a guard named `x_max`"),
    (case_contact_shape, ModelError, "must be a scalar or a column"),
    (case_restitution_count, ModelError, "has 2 contact rows; give one restitution coefficient or 2"),
    (case_normal_range, ModelError, "`normal` of impact `impact` must list distinct rows"),
    (case_not_a_multibody, ModelError, "needs a colloc.Multibody; got Component"),
    (case_split_without_phases, cl.FileFormatError, "no `phase` column"),
])
def test_malformed(case, error, match):
    with pytest.raises(error, match=match):
        case()
