"""Unilateral contacts, LCP solvers and the event-driven simulator (Siconos' scheme).

Answers come from closed forms nobody here wrote: a bouncing mass (impact times, apex heights
e^{2k} h₀, accumulation time t₁(1 + e)/(1 − e)), Newton's cradle (Moreau's simultaneous-impact
LCP: (−1/3, 2/3, 2/3) for e = 1, (1/3, 1/3, 1/3) for e = 0), a block braking on a slope
(t* = v₀/(g(μ cos α − sin α))), and LCPs built around a chosen solution.
"""
from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.errors import ModelError, OptionError
from colloc.simulate.events import ContactSystem, SimulationError, contact_lcp
from colloc.simulate.lcp import LCPError, complementarity_error, lemke, solve_lcp, solve_symmetric_lcp

G = 9.81


# -- LCP solvers -------------------------------------------------------------------------------
def _planted(rng, n, symmetric):
    """An LCP with a known solution: A positive definite (a P-matrix, so the solution is unique)."""
    B = rng.normal(size=(n, n))
    A = B @ B.T + 0.1 * np.eye(n) if symmetric else B @ B.T + 0.1 * np.eye(n) + (B - B.T)
    z = np.where(rng.random(n) < 0.5, rng.random(n) + 0.1, 0.0)
    w = np.where(z > 0, 0.0, rng.random(n) + 0.1)
    return A, w - A @ z, z


@pytest.mark.parametrize("symmetric", [True, False])
def test_lemke_finds_the_planted_solution(symmetric):
    rng = np.random.default_rng(7)
    for _ in range(40):
        A, b, z = _planted(rng, int(rng.integers(1, 9)), symmetric)
        np.testing.assert_allclose(lemke(A, b), z, atol=1e-10)
        np.testing.assert_allclose(solve_lcp(A, b), z, atol=1e-9)


def test_symmetric_lcp_by_qp_matches_the_hand_solution():
    # 2z₁ + z₂ = 5, z₁ + 2z₂ = 6 with both z > 0: z = (4/3, 7/3).
    np.testing.assert_allclose(solve_symmetric_lcp([[2.0, 1.0], [1.0, 2.0]], [-5.0, -6.0]), [4 / 3, 7 / 3], atol=1e-12)
    rng = np.random.default_rng(3)
    for _ in range(20):
        A, b, z = _planted(rng, int(rng.integers(1, 7)), True)
        np.testing.assert_allclose(solve_symmetric_lcp(A, b), z, atol=1e-9)


def test_lemke_degenerate_cradle_lcp_and_trivial_case():
    # Moreau's cradle LCP (unit masses, e = 1): P = (4/3, 2/3); b has a zero entry (degenerate).
    A = np.array([[2.0, -1.0], [-1.0, 2.0]])
    np.testing.assert_allclose(lemke(A, [-2.0, 0.0]), [4 / 3, 2 / 3], atol=1e-14)
    assert complementarity_error(A, np.array([-2.0, 0.0]), lemke(A, [-2.0, 0.0])) < 1e-14
    np.testing.assert_array_equal(lemke(A, [1.0, 0.0]), [0.0, 0.0])


def test_lemke_reports_an_lcp_without_solution():
    with pytest.raises(LCPError, match="secondary ray"):
        lemke([[-1.0]], [-1.0])  # w = −z − 1 ≥ 0 has no z ≥ 0


def test_friction_lcp_sticks_inside_and_slides_outside_the_cone():
    # A unit point mass on the floor pushed sideways by f: it sticks iff |f| ≤ μ m g.
    Minv, Wn, Wt = np.eye(2), np.array([[0.0, 1.0]]), np.array([[1.0, 0.0]])
    for push, mu in ((2.0, 0.5), (6.0, 0.5)):
        a0 = np.array([push, -G])
        Fn, Ft, slip = contact_lcp(Minv, Wn, Wt, Wn @ a0, Wt @ a0, np.array([mu]), np.zeros(1), np.ones(1, bool))
        assert Fn[0] == pytest.approx(G, abs=1e-12)
        if push <= mu * G:
            assert Ft[0] == pytest.approx(-push, abs=1e-12) and slip[0] == pytest.approx(0.0, abs=1e-12)
        else:
            assert Ft[0] == pytest.approx(-mu * G, abs=1e-12) and slip[0] == pytest.approx(push - mu * G, abs=1e-12)


# -- models: the problem scripts ---------------------------------------------------------------
PROBLEMS = Path(__file__).resolve().parents[1] / "problems"


def load(stem):
    spec = importlib.util.spec_from_file_location(f"problems.{stem}", PROBLEMS / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bouncing_mass(e, mass=1.0):
    return load("bouncing_mass_events").model(e, mass)


def cradle(e):
    return load("newton_cradle").model(e)


def block_on_slope(alpha, mu, mass=2.0):
    return load("block_on_slope").model(alpha, mu, mass)


def bar(e, mass=1.0, length=1.0):
    return load("falling_bar").model(e, mass, length)


def test_problem_scripts_simulate_to_their_closed_forms():
    ball = load("bouncing_mass_events")
    closed = [ev for ev in ball.simulate().metadata["events"] if ev["kind"] == "closed"]
    assert closed[0]["time"] == pytest.approx(ball.accumulation_time(), abs=1e-6)
    cr = load("newton_cradle")
    for e, expected in cr.EXPECTED.items():
        traj = cr.simulate(restitution=e, times=[1.0])
        np.testing.assert_allclose([traj[f"cradle.x{i}_speed"][-1] for i in (1, 2, 3)], expected, atol=1e-14)
    block = load("block_on_slope")
    t_stop, _ = block.stop()
    stick = [ev for ev in block.simulate(times=[2.0]).metadata["events"] if ev["kind"] == "stick"]
    assert stick[0]["time"] == pytest.approx(t_stop, abs=1e-8)
    fb = load("falling_bar")
    traj = fb.simulate(restitution=0.0)
    assert np.diff(fb.energy(traj)).max() <= 1e-10 and abs(traj["bar.x"]).max() <= 1e-12


# -- declaration -------------------------------------------------------------------------------
def test_contact_jacobians_by_ad():
    body = bar(0.5)
    left = body.contacts[0]
    f = ca.Function("J", [body.q], [left.normal_jacobian])
    th = 0.3
    np.testing.assert_allclose(np.array(f([0.1, 1.0, th])).ravel(), [0.0, 1.0, -0.5 * math.cos(th)], atol=1e-15)
    slope = block_on_slope(0.3, 0.5).contacts[0]
    np.testing.assert_allclose(np.array(ca.DM(slope.tangent_jacobian)).ravel(), [math.cos(0.3), -math.sin(0.3)], atol=1e-15)


@pytest.mark.parametrize("kwargs, match", [
    (dict(gap="q"), "must be a CasADi SX expression"),
    (dict(gap="vec"), "must be a scalar expression"),
    (dict(gap="const"), "does not depend on the coordinates"),
    (dict(gap="speed"), "uses `b.x_speed`"),
    (dict(restitution=-0.1), r"Restitution of contact `b.c` must be \[0, 1\]"),
    (dict(restitution=1.5), r"Restitution of contact `b.c` must be \[0, 1\]"),
    (dict(friction=-1.0), "Friction coefficient of contact `b.c` must be ≥ 0"),
    (dict(friction=math.inf), "must be finite"),
    (dict(friction=0.3), "has friction 0.3 but no `tangent`"),
    (dict(tangent="vec"), "The tangent of contact `b.c` must be a scalar"),
    (dict(name="1c"), "Contact name '1c' is not a valid identifier"),
])
def test_contact_declaration_errors(kwargs, match):
    body = cl.Multibody("b", coordinates=["x", "y"])
    exprs = {"q": "y", "vec": body.q, "const": ca.SX(1.0), "speed": body.v[0] + body.q[0]}
    args = dict(name="c", gap=body.q[1])
    args.update(kwargs)
    for k in ("gap", "tangent"):
        if isinstance(args.get(k), str):
            args[k] = exprs[args[k]]
    with pytest.raises(ModelError, match=match):
        body.contact(args.pop("name"), args.pop("gap"), **args)


def test_contact_declared_twice_and_model_without_contacts():
    body = bouncing_mass(0.5)
    with pytest.raises(ModelError, match="Contact `mass.ground` is declared twice"):
        body.contact("ground", body.q[0])
    other = cl.Multibody("free", coordinates=["x"])
    other.kinetic_energy = 0.5 * other.v[0] ** 2
    with pytest.raises(ModelError, match="declares no contact"):
        ContactSystem(other)


def test_simulate_events_input_errors():
    body = bouncing_mass(0.5)
    with pytest.raises(OptionError, match="`q0` must have 1 entries"):
        cl.simulate_events(body, 1.0, [1.0, 2.0], [0.0])
    with pytest.raises(OptionError, match="penetrates contact `mass.ground`"):
        cl.simulate_events(body, 1.0, [-0.1], [0.0])
    with pytest.raises(OptionError, match="`t_final` must be a finite time after"):
        cl.simulate_events(body, -1.0, [1.0], [0.0])
    with pytest.raises(OptionError, match="`rest_speed` must be a positive finite number"):
        cl.simulate_events(body, 1.0, [1.0], [0.0], rest_speed=0.0)
    with pytest.raises(OptionError, match="`mass.yy` in `v0` is not one of mass.y_speed"):
        cl.simulate_events(body, 1.0, [1.0], {"mass.yy": 0.0})
    with pytest.raises(SimulationError, match="More than 3 events"):
        cl.simulate_events(body, 3.0, [1.0], [0.0], max_events=3)


# -- simulations against closed forms ----------------------------------------------------------
def test_bouncing_mass_impacts_apexes_and_accumulation():
    e, h0 = 0.8, 1.0
    t1 = math.sqrt(2 * h0 / G)
    traj = cl.simulate_events(bouncing_mass(e), 5.0, [h0], [0.0], times=np.linspace(0, 5, 11))
    events = traj.metadata["events"]
    impacts = [ev for ev in events if ev["kind"] == "impact"]
    # k-th impact at t₁ + 2 t₁ (e + … + e^k); the apex after it at height e^{2k} h₀.
    for k in range(8):
        exact = t1 + 2 * t1 * sum(e**j for j in range(1, k + 1))
        assert impacts[k]["time"] == pytest.approx(exact, abs=1e-9)
        row = np.flatnonzero(traj.time == impacts[k]["time"])[-1]  # the post-impact row
        apex = traj["mass.y_speed"][row] ** 2 / (2 * G)
        assert apex == pytest.approx(e ** (2 * (k + 1)) * h0, abs=1e-9)
    closed = [ev for ev in events if ev["kind"] == "closed"]
    assert len(closed) == 1
    assert closed[0]["time"] == pytest.approx(t1 * (1 + e) / (1 - e), abs=1e-6)
    after = traj.time > closed[0]["time"]
    assert np.abs(traj["mass.y"][after]).max() <= 1e-12
    np.testing.assert_allclose(traj["mass.ground.normal_force"][after], G, rtol=1e-12)


def test_apex_reached_by_the_smooth_integration():
    e, h0 = 0.8, 1.0
    t1 = math.sqrt(2 * h0 / G)
    apex_times = [t1 * (1 + e), t1 * (1 + 2 * e + e**2)]  # after the 1st and the 2nd impact
    traj = cl.simulate_events(bouncing_mass(e), 2.0, [h0], [0.0], times=apex_times)
    for k, t in enumerate(apex_times, start=1):
        row = np.flatnonzero(traj.time == t)[0]
        assert traj["mass.y"][row] == pytest.approx(e ** (2 * k) * h0, abs=1e-9)
        assert traj["mass.y_speed"][row] == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("e, expected", [(1.0, (-1 / 3, 2 / 3, 2 / 3)), (0.0, (1 / 3, 1 / 3, 1 / 3))])
def test_newtons_cradle_simultaneous_impact(e, expected):
    traj = cl.simulate_events(cradle(e), 1.0, [0.0, 1.0, 2.0], [1.0, 0.0, 0.0])
    v = [traj[f"cradle.x{i}_speed"][-1] for i in (1, 2, 3)]
    np.testing.assert_allclose(v, expected, atol=1e-14)
    energy = 0.5 * sum(x**2 for x in v)
    if e == 1.0:
        assert energy == pytest.approx(0.5, abs=1e-14)
    impacts = {ev["contact"] for ev in traj.metadata["events"] if ev["kind"] == "impact"}
    assert impacts == {"cradle.c12", "cradle.c23"}  # both contacts resolved in one LCP


def test_block_on_slope_stops_then_sticks():
    alpha, mu, v0, mass = 0.3, 0.5, 2.0, 2.0
    decel = G * (mu * math.cos(alpha) - math.sin(alpha))
    t_stop, s_stop = v0 / decel, v0**2 / (2 * decel)
    body = block_on_slope(alpha, mu, mass)
    traj = cl.simulate_events(body, 2 * t_stop, [0.0, 0.0], v0 * np.array([math.cos(alpha), -math.sin(alpha)]),
                              times=[0.5 * t_stop, 1.5 * t_stop, 2 * t_stop])
    stick = [ev for ev in traj.metadata["events"] if ev["kind"] == "stick"]
    assert len(stick) == 1 and stick[0]["time"] == pytest.approx(t_stop, abs=1e-8)
    s = math.cos(alpha) * traj["block.x"] - math.sin(alpha) * traj["block.y"]
    assert s[-1] == pytest.approx(s_stop, abs=1e-8)
    assert abs(traj["block.x_speed"][-1]) + abs(traj["block.y_speed"][-1]) <= 1e-12
    # sticking: normal force m g cos α, friction holds m g sin α up the slope
    assert traj["block.floor.normal_force"][-1] == pytest.approx(mass * G * math.cos(alpha), rel=1e-12)
    assert traj["block.floor.friction_force"][-1] == pytest.approx(-mass * G * math.sin(alpha), rel=1e-12)
    mid = np.flatnonzero(traj.time == 0.5 * t_stop)[0]  # sliding: friction μ F_n against the motion
    assert traj["block.floor.friction_force"][mid] == pytest.approx(-mu * mass * G * math.cos(alpha), rel=1e-12)


def test_block_on_steep_slope_keeps_sliding():
    alpha, mu = 0.6, 0.3  # μ < tan α: it never stops; s = ½ g (sin α − μ cos α) t²
    traj = cl.simulate_events(block_on_slope(alpha, mu), 1.0, [0.0, 0.0], [0.0, 0.0], times=[1.0])
    assert not [ev for ev in traj.metadata["events"] if ev["kind"] == "stick"]
    s = math.cos(alpha) * traj["block.x"][-1] - math.sin(alpha) * traj["block.y"][-1]
    assert s == pytest.approx(0.5 * G * (math.sin(alpha) - mu * math.cos(alpha)), abs=1e-10)


@pytest.mark.parametrize("e", [0.5, 0.0])
def test_tilted_bar_on_two_contacts(e):
    mass, length = 1.0, 1.0
    traj = cl.simulate_events(bar(e, mass, length), 2.5, [0.0, 1.0, 0.4], [0.0, 0.0, 0.0])
    y, th = traj["bar.y"], traj["bar.theta"]
    energy = 0.5 * mass * (traj["bar.x_speed"] ** 2 + traj["bar.y_speed"] ** 2) \
        + 0.5 * mass * length**2 / 12 * traj["bar.theta_speed"] ** 2 + mass * G * y
    assert np.diff(energy).max() <= 1e-10  # never increases (impacts dissipate, flights conserve)
    assert min((y - length / 2 * np.sin(th)).min(), (y + length / 2 * np.sin(th)).min()) >= -1e-9
    kinds = {(ev["contact"], ev["kind"]) for ev in traj.metadata["events"]}
    assert ("bar.left", "impact") in kinds and ("bar.right", "impact") in kinds
    # at rest on both points, each carrying half the weight
    assert abs(traj["bar.theta"][-1]) <= 1e-9 and abs(traj["bar.y"][-1]) <= 1e-9
    assert max(abs(traj[n][-1]) for n in ("bar.x_speed", "bar.y_speed", "bar.theta_speed")) <= 1e-9
    assert traj["bar.left.normal_force"][-1] == pytest.approx(mass * G / 2, rel=1e-9)
    assert traj["bar.right.normal_force"][-1] == pytest.approx(mass * G / 2, rel=1e-9)


def test_events_survive_a_file_round_trip(tmp_path):
    traj = cl.simulate_events(cradle(1.0), 0.5, [0.0, 1.0, 2.0], [1.0, 0.0, 0.0], times=[0.5])
    back = cl.Trajectory.read(traj.write(tmp_path / "cradle.csv"))
    assert back.metadata["events"] == traj.metadata["events"]


def _box(mu=0.4, mass=2.0):
    body = cl.Multibody("box", coordinates=["x", "y"])
    push = body.control("push")
    lift = body.control("lift")
    body.kinetic_energy = 0.5 * mass * ca.sumsqr(body.v)
    body.potential_energy = mass * G * body.q[1]
    body.generalized_force = ca.vertcat(push, lift)
    body.contact("floor", body.q[1], friction=mu, tangent=body.q[0])
    return body


def test_pushed_box_sticks_until_the_cone_then_slips():
    # push k t: stuck while k t ≤ μ m g; then ẍ = k (t − t_s)/m, so x = k (t − t_s)³/(6m).
    mu, mass, k = 0.4, 2.0, 3.0
    t_slip = mu * mass * G / k
    t_end = t_slip + 1.0
    traj = cl.simulate_events(_box(mu, mass), t_end, [0.0, 0.0], [0.0, 0.0],
                              controls={"box.push": lambda t: k * t}, times=[0.5 * t_slip, t_end])
    slip = [ev for ev in traj.metadata["events"] if ev["kind"] == "slip"]
    assert len(slip) == 1 and slip[0]["time"] == pytest.approx(t_slip, abs=1e-10)
    assert traj["box.x"][-1] == pytest.approx(k * (t_end - t_slip) ** 3 / (6 * mass), abs=1e-10)
    mid = np.flatnonzero(traj.time == 0.5 * t_slip)[0]
    assert traj["box.x"][mid] == 0.0 and traj["box.floor.friction_force"][mid] == pytest.approx(-0.5 * k * t_slip, rel=1e-12)


def test_lifted_box_takes_off_when_the_lift_exceeds_its_weight():
    # lift k t: on the floor while k t ≤ m g (normal force m g − k t); then y = k (t − t_o)³/(6m).
    mass, k = 2.0, 10.0
    t_off = mass * G / k
    t_end = t_off + 0.5
    traj = cl.simulate_events(_box(0.4, mass), t_end, [0.0, 0.0], [0.0, 0.0], controls=lambda t: [0.0, k * t],
                              times=[0.5 * t_off, t_end])
    off = [ev for ev in traj.metadata["events"] if ev["kind"] == "take-off"]
    assert len(off) == 1 and off[0]["time"] == pytest.approx(t_off, abs=1e-10)
    assert traj["box.y"][-1] == pytest.approx(k * (t_end - t_off) ** 3 / (6 * mass), abs=1e-10)
    mid = np.flatnonzero(traj.time == 0.5 * t_off)[0]
    assert traj["box.floor.normal_force"][mid] == pytest.approx(mass * G - 0.5 * k * t_off, rel=1e-12)
    with pytest.raises(OptionError, match=r"`controls\(t\)` must return 2 values"):
        cl.simulate_events(_box(), 1.0, [0.0, 0.0], [0.0, 0.0], controls=lambda t: [1.0])
    with pytest.raises(OptionError, match="`box.pish` in `controls` is not a control of the model"):
        cl.simulate_events(_box(), 1.0, [0.0, 0.0], [0.0, 0.0], controls={"box.pish": 1.0})


@pytest.mark.parametrize("vx", [1.0, 5.0])
def test_oblique_impact_with_friction(vx):
    # A point mass hits a rough floor at normal speed v_n: P_n = m(1 + e)|v_n|; the tangential impulse
    # stops the sliding if |v_t| ≤ μ(1 + e)|v_n|, else it removes μ P_n/m of it (Coulomb at impact).
    e, mu, mass, h = 0.5, 0.5, 1.0, 1.0
    body = cl.Multibody("ball", coordinates=["x", "y"])
    body.kinetic_energy = 0.5 * mass * ca.sumsqr(body.v)
    body.potential_energy = mass * G * body.q[1]
    body.contact("floor", body.q[1], restitution=e, friction=mu, tangent=body.q[0])
    t1 = math.sqrt(2 * h / G)
    traj = cl.simulate_events(body, t1 + 0.1, [0.0, h], [vx, 0.0], times=[t1 + 0.1])
    first = traj.metadata["events"][0]
    vn = math.sqrt(2 * G * h)
    assert first["kind"] == "impact" and first["time"] == pytest.approx(t1, abs=1e-10)
    assert first["impulse"] == pytest.approx(mass * (1 + e) * vn, rel=1e-10)
    expected_vx = 0.0 if vx <= mu * (1 + e) * vn else vx - mu * (1 + e) * vn
    assert traj["ball.x_speed"][-1] == pytest.approx(expected_vx, abs=1e-10)
    assert traj["ball.y_speed"][-1] == pytest.approx(e * vn - G * 0.1, abs=1e-10)


@pytest.mark.parametrize("mu", [0.2, 0.05])
def test_cylinder_on_incline_rolls_or_slips(mu):
    # Solid cylinder (I = m r²/2) released on an incline α, in the slope's frame.  It rolls without
    # slipping, ẍ = (2/3) g sin α, iff μ ≥ tan(α)/3; otherwise ẍ = g (sin α − μ cos α), r θ̈ = −2 μ g cos α.
    alpha, r, mass = 0.4, 0.3, 1.5
    body = cl.Multibody("cyl", coordinates=["x", "y", "theta"])
    x, y, th = body.coordinates
    body.kinetic_energy = 0.5 * mass * (body.v[0] ** 2 + body.v[1] ** 2) + 0.25 * mass * r**2 * body.v[2] ** 2
    body.potential_energy = mass * G * (math.cos(alpha) * y - math.sin(alpha) * x)
    body.contact("slope", y - r, friction=mu, tangent=x + r * th)  # ṡ: speed of the material contact point
    traj = cl.simulate_events(body, 1.0, [0.0, r, 0.0], [0.0, 0.0, 0.0], times=[1.0])
    rolls = mu >= math.tan(alpha) / 3
    acc = 2 / 3 * G * math.sin(alpha) if rolls else G * (math.sin(alpha) - mu * math.cos(alpha))
    spin = -acc / r if rolls else -2 * mu * G * math.cos(alpha) / r
    assert traj["cyl.x"][-1] == pytest.approx(0.5 * acc, abs=1e-10)
    assert traj["cyl.theta_speed"][-1] == pytest.approx(spin, abs=1e-10)
    assert traj["cyl.slope.normal_force"][-1] == pytest.approx(mass * G * math.cos(alpha), rel=1e-12)
    assert [ev["kind"] for ev in traj.metadata["events"]] == ["closed"]  # it never leaves its initial mode


def test_pendulum_landing_with_speed_stays_on_a_curved_gap():
    # a pendulum released level hits a floor 0.8 below its pivot at θ* = acos(0.8) (plastic); its gap 0.8 − cos θ has a
    # drift Ẇv = cos θ θ̇², which before the impact is 12.6 and after it 0: the acceleration LCP must use the latter,
    # or the contact opens and the pendulum passes through the floor
    body = cl.Multibody("pendulum", coordinates=["theta"])
    th = body.coordinates[0]
    body.kinetic_energy = 0.5 * body.v[0] ** 2
    body.potential_energy = -9.81 * ca.cos(th)
    body.contact("floor", 0.8 - ca.cos(th))
    sim = cl.simulate_events(body, 1.0, [math.pi / 2], [0.0], times=np.linspace(0, 1, 11))
    assert [e["kind"] for e in sim.metadata["events"]] == ["impact", "closed"]
    after = sim.time > sim.metadata["events"][0]["time"]
    assert np.allclose(sim["pendulum.theta"][after], math.acos(0.8), atol=1e-9)
    assert np.allclose(sim["pendulum.floor.normal_force"][after], 9.81, atol=1e-6)  # W_nᵀF = sin θ* F balances g sin θ*


def test_a_simulation_that_stops_hands_back_the_motion_up_to_the_stop():
    # the bouncing mass (e = 0.8, from 1 m) stopped after 3 events: the 4th impact at t₁(1 + 2(e + e² + e³)) is where
    # it stops, and the motion it hands back reaches it with the free fall's speed of that impact, −e³ √(2 g h₀)
    e, h0 = 0.8, 1.0
    t1 = math.sqrt(2 * h0 / G)
    with pytest.raises(SimulationError, match="More than 3 events") as info:
        cl.simulate_events(bouncing_mass(e), 5.0, [h0], [0.0], times=np.linspace(0, 5, 11), max_events=3)
    partial = info.value.partial
    assert partial.time[-1] == pytest.approx(t1 * (1 + 2 * (e + e**2 + e**3)), abs=1e-9)
    assert partial["mass.y_speed"][-1] == pytest.approx(-e**3 * math.sqrt(2 * G * h0), abs=1e-9)
    assert len([ev for ev in partial.metadata["events"] if ev["kind"] == "impact"]) == 3


def test_an_integrator_failure_names_the_largest_contact_force():
    # a block on a frictionless floor driven along it by 10 ẋ²: ẋ = 1/(1 − 10t) grows without bound as t → 0.1,
    # where the integrator's step collapses; the floor carries its weight, m g = 9.81
    body = cl.Multibody("block", coordinates=["x", "y"])
    body.kinetic_energy = 0.5 * ca.sumsqr(body.v)
    body.potential_energy = G * body.q[1]
    body.generalized_force = ca.vertcat(10 * body.v[0] ** 2, 0)
    body.contact("floor", body.q[1])
    with pytest.raises(SimulationError, match=r"The integrator failed after t = .* \(at t = .* the largest normal force, 9\.81, "
                                              r"is `block\.floor`'s, which is closed"):
        cl.simulate_events(body, 0.2, [0, 0], [1, 0])
