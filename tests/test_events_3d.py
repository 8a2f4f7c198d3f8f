"""Contacts in 3-D: two tangent directions, polygonal and circular Coulomb cones, redundant supports.

Answers nobody here wrote: statics (a table on four legs: the normal forces sum to the weight and their moments
about the centre of mass vanish, whatever their split), Coulomb's sliding (with a circular cone a body sliding
obliquely stops after |v₀|/(μg) having gone |v₀|²/(2μg) along a straight line; with a square cone the force sits
on a vertex until the speed reaches the bisector, then slides along it: stops after (|v_x| + |v_y|)/(μg)), a ball
sliding and spinning (slip speed u decays at (7/2)μg along a fixed line, rolls from t = 2|u₀|/(7μg) with
v = v₀ − (2/7)u₀; e.g. Domenech, Domenech & Cebrian, Am. J. Phys. 55 (1987) 231) and an oblique impact
(the tangential speed drops by μ(1 + e)|v_n| along itself, or to 0).
"""
from __future__ import annotations

import math

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.errors import ModelError

G = 9.81


def rotation(roll, pitch, yaw):
    c, s = ca.cos, ca.sin
    Rz = ca.vertcat(ca.horzcat(c(yaw), -s(yaw), 0), ca.horzcat(s(yaw), c(yaw), 0), ca.horzcat(0, 0, 1))
    Ry = ca.vertcat(ca.horzcat(c(pitch), 0, s(pitch)), ca.horzcat(0, 1, 0), ca.horzcat(-s(pitch), 0, c(pitch)))
    Rx = ca.vertcat(ca.horzcat(1, 0, 0), ca.horzcat(0, c(roll), -s(roll)), ca.horzcat(0, s(roll), c(roll)))
    return ca.mtimes([Rz, Ry, Rx])


def rigid_body(name, mass, inertia, extra=()):
    """A free rigid body (x, y, z, roll, pitch, yaw) and its rotation; returns (body, kinetic energy, R)."""
    b = cl.Multibody(name, coordinates=["x", "y", "z", "roll", "pitch", "yaw", *extra])
    q, v = b.q, b.v
    roll, pitch = q[3], q[4]
    w = ca.vertcat(v[3] - ca.sin(pitch) * v[5], ca.cos(roll) * v[4] + ca.sin(roll) * ca.cos(pitch) * v[5],
                   -ca.sin(roll) * v[4] + ca.cos(roll) * ca.cos(pitch) * v[5])
    T = 0.5 * mass * ca.sumsqr(v[:3]) + 0.5 * ca.mtimes([w.T, ca.diag(ca.DM(inertia)), w])
    return b, T, rotation(q[3], q[4], q[5])


def table(mu=0.5, mass=3.0, cone="polyhedral", centre=(0.1, -0.05), half=(0.4, 0.3)):
    """A table top with four legs 0.5 below it at (±half), its centre of mass off their middle by ``centre``."""
    b, T, R = rigid_body("table", mass, [0.2, 0.3, 0.4])
    b.kinetic_energy = T
    b.potential_energy = mass * G * b.q[2]
    legs = []
    for k, (sx, sy) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1))):
        r = np.array([sx * half[0] - centre[0], sy * half[1] - centre[1], -0.5])
        b.point_contact(f"leg{k}", b.q[:3] + ca.mtimes(R, ca.DM(r)), friction=mu, cone=cone)
        legs.append(r)
    return b, np.array(legs)


@pytest.mark.parametrize("cone", ["polyhedral", "circular"])
def test_table_on_four_legs_rests_with_forces_that_balance_weight_and_moments(cone):
    mass = 3.0
    body, legs = table(cone=cone, mass=mass)
    traj = cl.simulate_events(body, 1.0, [0, 0, 0.5, 0, 0, 0], [0] * 6, times=[0.5, 1.0])
    q = np.array([traj[f"table.{n}"][-1] for n in ("x", "y", "z", "roll", "pitch", "yaw")])
    assert np.abs(q - [0, 0, 0.5, 0, 0, 0]).max() <= 1e-13
    assert max(abs(traj[f"table.{n}_speed"][-1]) for n in ("x", "y", "z", "roll", "pitch", "yaw")) <= 1e-13
    F = np.array([traj[f"table.leg{k}.normal_force"][-1] for k in range(4)])
    assert F.sum() == pytest.approx(mass * G, rel=1e-13)  # statically indeterminate: sums, not each leg
    assert abs(F @ legs[:, 0]) <= 1e-12 and abs(F @ legs[:, 1]) <= 1e-12  # moments about the centre of mass
    assert (F > 0).all()
    for j in (1, 2):
        assert abs(sum(traj[f"table.leg{k}.friction_force_{j}"][-1] for k in range(4))) <= 1e-12
    assert {e["kind"] for e in traj.metadata["events"]} == {"closed"}


@pytest.mark.parametrize("cone", ["circular", "polyhedral"])
def test_table_sliding_obliquely_stops_at_coulombs_time(cone):
    mu, v0 = 0.5, np.array([1.2, 0.9])
    body, _ = table(mu=mu, cone=cone)
    traj = cl.simulate_events(body, 0.6, [0, 0, 0.5, 0, 0, 0], [v0[0], v0[1], 0, 0, 0, 0], times=np.linspace(0, 0.6, 13))
    stick = [e for e in traj.metadata["events"] if e["kind"] == "stick"]
    x, y = traj["table.x"], traj["table.y"]
    if cone == "circular":  # straight line along v₀
        t_stop, end = np.linalg.norm(v0) / (mu * G), v0 * np.linalg.norm(v0) / (2 * mu * G)
        assert np.abs(x * v0[1] - y * v0[0]).max() <= 1e-12
    else:  # square cone: −x̂ vertex until ẋ = ẏ, then along the bisector at μg/2 per axis
        t1 = (v0[0] - v0[1]) / (mu * G)
        t_stop = t1 + 2 * v0[1] / (mu * G)
        end = np.array([v0[0] * t1 - 0.5 * mu * G * t1**2 + v0[1] ** 2 / (mu * G), v0[1] * t1 + v0[1] ** 2 / (mu * G)])
    assert len(stick) == 4 and stick[0]["time"] == pytest.approx(t_stop, abs=1e-12)
    np.testing.assert_allclose([x[-1], y[-1]], end, atol=1e-12)
    assert np.abs(traj["table.yaw"]).max() <= 1e-13 and abs(traj["table.z"][-1] - 0.5) <= 1e-13


def test_table_spinning_on_four_legs_stops_at_the_friction_torques_time():
    # legs on a circle of radius R about the centre of mass, spun about z at ω₀: each leg slides along the
    # circle against μmg/4, a pure torque μmgR, so ω falls at μmgR/I_z and stops at I_z ω₀/(μmgR) having
    # turned ω₀t/2 (1.5 turns of each leg's sliding direction: the circular cone follows it)
    mu, mass, w0 = 0.5, 3.0, 12.0
    body, legs = table(mu=mu, mass=mass, cone="circular", centre=(0.0, 0.0), half=(0.3, 0.3))
    t_stop = 0.4 * w0 / (mu * mass * G * 0.3 * math.sqrt(2))
    traj = cl.simulate_events(body, 1.0, [0, 0, 0.5, 0, 0, 0], [0, 0, 0, 0, 0, w0], times=[1.0])
    stick = [e["time"] for e in traj.metadata["events"] if e["kind"] == "stick"]
    assert len(stick) == 4 and stick[0] == pytest.approx(t_stop, abs=1e-11)
    assert traj["table.yaw"][-1] == pytest.approx(w0 * t_stop / 2, abs=1e-10)
    assert max(abs(traj["table.x"][-1]), abs(traj["table.y"][-1]), abs(traj["table.yaw_speed"][-1])) <= 1e-12


@pytest.mark.slow
@pytest.mark.parametrize("cone", ["circular", "polyhedral"])
def test_table_dropped_tilted_comes_to_rest_on_its_legs(cone):
    # bounces (e = 0.3), rocks and slides on four legs, then rests: at rest its legs carry its weight.  On the square
    # cone an impact's LCP is so degenerate (redundant legs, approach speeds of 1e-21) that Lemke's method ends on
    # a ray; the regularised retry answers it.
    mass = 3.0
    body, _ = table(mass=mass, cone=cone)
    for c in body.contacts:
        c.restitution = 0.3
    traj = cl.simulate_events(body, 2.0, [0, 0, 0.8, 0.2, -0.1, 0.3], [0.5, 0.0, 0, 0.3, 0, 0], times=[2.0])
    assert max(abs(traj[n][-1]) for n in traj.names if n.endswith("_speed")) <= 1e-10
    assert abs(traj["table.roll"][-1]) <= 1e-6 and abs(traj["table.pitch"][-1]) <= 1e-6
    assert sum(traj[f"table.leg{k}.normal_force"][-1] for k in range(4)) == pytest.approx(mass * G, rel=1e-10)


def ball(mu, radius=0.1, mass=1.0):
    """A solid ball; its 'angles' integrate the angular velocity (the energy does not depend on them), so the
    contact point's material speed is the rate of (x − r a_y, y + r a_x)."""
    b = cl.Multibody("ball", coordinates=["x", "y", "z", "ax", "ay", "az"])
    x, y, z, ax, ay, az = b.coordinates
    b.kinetic_energy = 0.5 * mass * ca.sumsqr(b.v[:3]) + 0.5 * 0.4 * mass * radius**2 * ca.sumsqr(b.v[3:])
    b.potential_energy = mass * G * z
    b.contact("floor", z - radius, restitution=0.5, friction=mu, tangent=[x - radius * ay, y + radius * ax], cone="circular")
    return b


def test_ball_sliding_and_spinning_rolls_at_the_closed_form_time():
    mu, r = 0.3, 0.1
    v0, w0 = np.array([1.0, 0.5]), np.array([4.0, -6.0, 9.0])
    u0 = np.array([v0[0] - r * w0[1], v0[1] + r * w0[0]])  # slip speed of the contact point
    t_roll = 2 * np.linalg.norm(u0) / (7 * mu * G)
    traj = cl.simulate_events(ball(mu, r), 1.0, [0, 0, r, 0, 0, 0], [v0[0], v0[1], 0, *w0], times=[0.5 * t_roll, 1.0])
    stick = [e for e in traj.metadata["events"] if e["kind"] == "stick"]
    assert len(stick) == 1 and stick[0]["time"] == pytest.approx(t_roll, abs=1e-12)
    v_end = v0 - 2 / 7 * u0
    np.testing.assert_allclose([traj["ball.x_speed"][-1], traj["ball.y_speed"][-1]], v_end, atol=1e-12)
    assert traj["ball.az_speed"][-1] == pytest.approx(w0[2], abs=1e-12)  # a point contact has no spin friction
    x_end = v0 * t_roll - 0.5 * mu * G * t_roll**2 * u0 / np.linalg.norm(u0) + v_end * (1.0 - t_roll)
    np.testing.assert_allclose([traj["ball.x"][-1], traj["ball.y"][-1]], x_end, atol=1e-12)


@pytest.mark.parametrize("speed", [0.5, 4.0])
def test_oblique_impact_with_a_circular_cone(speed):
    # lands with v_n = −√(2gh) and tangential (cos 0.6, sin 0.6)·speed; spin removed by giving no radius
    mu, e, h = 0.4, 0.5, 0.2
    b = cl.Multibody("puck", coordinates=["x", "y", "z"])
    b.kinetic_energy = 0.5 * ca.sumsqr(b.v)
    b.potential_energy = G * b.q[2]
    b.point_contact("floor", b.q, restitution=e, friction=mu, cone="circular")
    d = np.array([math.cos(0.6), math.sin(0.6)])
    t1 = math.sqrt(2 * h / G)
    traj = cl.simulate_events(b, t1 + 0.01, [0, 0, h], [*(speed * d), 0], times=[t1 + 0.01])
    vn = math.sqrt(2 * G * h)
    vt = max(speed - mu * (1 + e) * vn, 0.0)
    first = traj.metadata["events"][0]
    assert first["kind"] == "impact" and first["impulse"] == pytest.approx((1 + e) * vn, rel=1e-12)
    row = np.flatnonzero(traj.time == first["time"])[-1]
    np.testing.assert_allclose([traj["puck.x_speed"][row], traj["puck.y_speed"][row]], vt * d, atol=1e-12)


def quadruped(stiffness=400.0, damping=20.0, leg=0.3):
    """A trunk (6 coordinates) with four legs on hip pitch joints held by springs, feet of 0.2 kg on the floor."""
    mass, foot = 5.0, 0.2
    b, T, R = rigid_body("dog", mass, [0.05, 0.2, 0.2], extra=[f"hip{k}" for k in range(4)])
    feet = []
    for k, (sx, sy) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1))):
        a = b.q[6 + k]
        p = b.q[:3] + ca.mtimes(R, ca.DM([0.3 * sx, 0.15 * sy, 0]) + leg * ca.vertcat(ca.sin(a), 0, -ca.cos(a)))
        feet.append(p)
        b.point_contact(f"foot{k}", p, friction=0.8)
    b.kinetic_energy = T + sum(0.5 * foot * ca.sumsqr(ca.jtimes(p, b.q, b.v)) for p in feet)
    b.potential_energy = mass * G * b.q[2] + sum(foot * G * p[2] for p in feet)
    b.generalized_force = ca.vertcat(ca.DM.zeros(6), -stiffness * b.q[6:] - damping * b.v[6:])
    return b, mass + 4 * foot


def test_quadruped_standing_on_four_feet_rests():
    body, total = quadruped()
    traj = cl.simulate_events(body, 0.5, [0, 0, 0.3] + [0] * 7, [0] * 10, times=[0.5])
    assert max(abs(traj[n][-1]) for n in traj.names if n.endswith("_speed")) <= 1e-12
    assert abs(traj["dog.z"][-1] - 0.3) <= 1e-13
    assert sum(traj[f"dog.foot{k}.normal_force"][-1] for k in range(4)) == pytest.approx(total * G, rel=1e-12)


def test_point_contact_declaration_errors():
    b = cl.Multibody("b", coordinates=["x", "y", "z"])
    with pytest.raises(ModelError, match="The point of contact `b.c` must be a column of 3 rows"):
        b.point_contact("c", b.q[:2])
    with pytest.raises(ModelError, match="The surface of contact `b.c` must map a point to one value"):
        b.point_contact("c", b.q, surface=lambda x: ca.SX(1.0))
    with pytest.raises(ModelError, match="Cone `round` of contact `b.c` is not one of polyhedral, circular"):
        b.point_contact("c", b.q, friction=0.5, cone="round")
    with pytest.raises(ModelError, match="`facets` of contact `b.c` must be an integer ≥ 3"):
        b.contact("c", b.q[2], friction=0.5, tangent=[b.q[0], b.q[1]], facets=2)


# -- Impact with 3-D friction --------------------------------------------------------------------
@pytest.mark.parametrize("cone, angle, speed", [("circular", 0.6, 4.0), ("circular", 0.6, 0.5), ("polyhedral", 0.0, 4.0),
                                                ("polyhedral", math.pi / 4, 4.0), ("polyhedral", math.pi / 4, 0.5)])
def test_impact_applies_coulombs_law_in_3d(cone, angle, speed):
    # v⁻ = (speed·d, −v_n), m = 1: P_n = (1 + e)v_n; the tangential speed drops by μP_n (circle, or a vertex of the
    # square cone when d points at it) or μP_n cos(π/4) (d on the bisector of two vertices: the side's midpoint)
    # along d, or stops where the cone holds the impulse that stops it
    from colloc.model.impact import Impact

    mu, e, vn = 0.4, 0.5, 2.0
    b = cl.Multibody("puck", coordinates=["x", "y", "z"])
    b.kinetic_energy = 0.5 * ca.sumsqr(b.v)
    imp = Impact(b, b.q, restitution=[0.0, 0.0, e], normal=[2], friction=mu, cone=cone, name="hit")
    d = np.array([math.cos(angle), math.sin(angle)])
    vplus, P = imp.velocity_after([0, 0, 0], [*(speed * d), -vn])
    reach = mu * (1 + e) * vn * (math.cos(math.pi / 4) if cone == "polyhedral" and angle else 1.0)
    np.testing.assert_allclose(vplus, [*(max(speed - reach, 0.0) * d), e * vn], atol=1e-12)
    assert P[2] == pytest.approx((1 + e) * vn, rel=1e-12)
    momentum, restitution, rows = imp.equations(ca.DM([0, 0, 0]), ca.DM([*(speed * d), -vn]), ca.DM(vplus), ca.DM(P))
    assert np.abs(np.array(ca.DM(momentum))).max() <= 1e-12 and abs(float(ca.DM(restitution)[2])) <= 1e-12
    assert np.array(ca.DM(rows)).max() <= 1e-12  # inside the cone, on it when sliding
    if speed > reach:
        assert np.array(ca.DM(rows)).max() >= -1e-12


def test_impact_cone_errors():
    from colloc.model.impact import Impact

    b = cl.Multibody("puck", coordinates=["x", "y", "z"])
    b.kinetic_energy = 0.5 * ca.sumsqr(b.v)
    with pytest.raises(ModelError, match="`cone` of impact `hit` must be None, 'polyhedral' or 'circular' and needs `friction`"):
        Impact(b, b.q, normal=[2], cone="circular", name="hit")
    with pytest.raises(ModelError, match="`facets` of impact `hit` must be an integer ≥ 3"):
        Impact(b, b.q, normal=[2], friction=0.3, cone="polyhedral", facets=2, name="hit")


def test_solo12_from_its_urdf_stands_on_four_sticking_feet():
    # Solo12 (example-robot-data) standing with knees bent, the joint torques of a static equilibrium held constant:
    # 12 sticking contact rows on 18 speeds.  It stays put, and its feet carry its weight (Pinocchio's total mass).
    pin = pytest.importorskip("pinocchio")
    pytest.importorskip("urdf_parser_py")
    from colloc.model.urdf import example_robot, from_urdf
    from colloc.simulate.contact_system import ContactSystem

    try:
        path = example_robot("solo_description/robots/solo12.urdf")
    except cl.FileFormatError:
        pytest.skip("example-robot-data is not installed")
    solo = from_urdf(path, name="solo", base="floating")
    feet = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
    for f in feet:
        solo.point_contact(f.lower(), solo.frame(f)[0], friction=0.8)
    names = [s.name() for s in ca.vertsplit(solo.q)]
    q = np.array([1.0 if n.endswith("base_qw") else 0.0 for n in names])
    for i, n in enumerate(names):  # knees bent, front and hind legs mirrored
        front = n.split(".")[1].startswith("F")
        q[i] = {"HFE": 0.8 if front else -0.8, "KFE": -1.6 if front else 1.6}.get(n[-3:], q[i])
    heights = ca.Function("z", [solo.q], [ca.horzcat(*[solo.frame(f)[0][2] for f in feet])])
    q[names.index("solo.base_z")] = -np.array(heights(q)).min()
    system = ContactSystem(solo)
    T = system.evaluate(0.0, q, np.zeros(system.nv), np.zeros(len(system.control_names)), np.zeros(0))
    W = np.vstack([T["Wn"], T["Wt"]])
    F = np.linalg.lstsq(W[:, :6].T, -T["f"][:6], rcond=None)[0]  # forces that hold the unactuated base
    torques = -(T["f"][6:] + W[:, 6:].T @ F)
    traj = cl.simulate_events(system, 0.5, q, np.zeros(system.nv), controls=dict(zip(system.control_names, torques)), times=[0.5])
    assert max(abs(traj[n][-1] - q[k]) for k, n in enumerate(names)) <= 1e-11
    assert max(abs(traj[n][-1]) for n in system.speed_names) <= 1e-9
    mass = pin.computeTotalMass(pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()))
    assert sum(traj[f"solo.{f.lower()}.normal_force"][-1] for f in feet) == pytest.approx(mass * G, rel=1e-10)
