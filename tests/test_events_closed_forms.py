"""The event-driven simulator on resting, sliding and spinning bodies in 3-D, against closed forms derived here.

* Coulomb's sliding on a polyhedral cone of ``k`` facets (vertices ``d_j`` at angles ``2πj/k``): a body sliding
  with speed ``s`` whose direction ``−v̂`` is ``θ`` (``|θ| ≤ π/k``) from the nearest vertex is braked by ``μg d_j``
  until its speed reaches the bisector of two vertices (the normal of the polygon's side), then along it at
  ``μg cos(π/k)``: it stops after ``t* = s cos(|θ| − π/k) / (μg cos(π/k))``, between ``s/(μg)`` (along a vertex)
  and ``s/(μg cos(π/k))`` (along a side's normal); the circular cone stops every direction at ``s/(μg)``, on a
  straight line, after ``s²/(2μg)``.  That is how the polygon's direction dependence shows: in the stopping time
  and a path that bends onto the side's normal.
* A ball (``I = (2/5) m r²``) with contact slip ``u₀`` slides until ``u`` vanishes; the friction impulse is then
  ``−(2/7) m u₀`` whatever the cone (it changes ``u`` by ``(7/2)/m`` times itself), so the rolling speed is
  ``v₀ − (2/7) u₀`` (``5/7 v₀`` from pure sliding); ``u`` decays like the sliding body's speed above at
  ``(7/2)μg``, so it rolls from ``t = 2|u₀|/(7μg)`` on a circle and ``2|u₀| cos(|θ| − π/k)/(7μg cos(π/k))`` on a
  polygon (Domenech, Domenech & Cebrian, Am. J. Phys. 55 (1987) 231, for the circle).
* A flat disk spinning on its face under uniform pressure feels the torque ``(2/3) μ m g R``; carried by points at
  the centroid radii of equal-area rings (each ring's mean radius ``(2/3)(b³ − a³)/(b² − a²)``, whose average is
  ``(2/3)R``) it stops after ``t* = I ω₀ / ((2/3) μ m g R)`` having turned ``ω₀ t*/2``.
* Statics: a symmetric table's legs each carry ``mg/4`` (by symmetry); a box on a slope ``α`` with ``μ ≥ tan α``
  rests with ``N₁ + N₂ = mg cos α``, ``N_low − N_high = mg sin α · h/w`` (moments about the centre: the friction
  ``mg sin α`` acts ``h/2`` below it), and with ``μ < tan α`` slides at ``g(sin α − μ cos α)`` with
  ``N_low − N_high = μ mg cos α · h/w``.
* A short push: a unit mass (μ = 0.5) pushed by 8 N for 50 ms slides at ``a = 8 − μg`` while pushed, then
  brakes at ``μg``: ``x = ½ a L² + (aL)²/(2μg) = 6.3099e-3``.
* An oblique impact of a spinning ball (plastic, ``e = 0``): the normal impulse is ``m v_n``; the friction impulse
  that stops the slip ``u`` is ``(2/7) m u``; within ``μ m v_n`` it sticks, else it is ``μ m v_n`` against ``u``.
"""
from __future__ import annotations

import math

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from test_events_3d import rigid_body, table

G = 9.81


def polygon_angle(direction, k):
    """``θ``: the angle from the vertex of the ``k``-gon nearest to ``direction`` (radians) to it."""
    return math.remainder(direction, 2 * math.pi / k)


def polygon_slide(speed, direction, mu, k):
    """Stop time and end point of a point sliding on the floor from the origin at ``speed`` along ``direction``."""
    th = polygon_angle(direction + math.pi, k)
    vertex = direction + math.pi - th  # the friction's direction until the speed reaches the side's normal
    d = np.array([math.cos(vertex), math.sin(vertex)])
    n = np.array([-d[1], d[0]]) * math.copysign(1.0, th)
    along, across = speed * math.cos(th), speed * abs(math.sin(th))  # along −d and along −n
    t1 = (along - across / math.tan(math.pi / k)) / (mu * G)
    side = -(d * math.cos(math.pi / k) + n * math.sin(math.pi / k))  # the speed's direction on the side's normal
    s1 = across / math.sin(math.pi / k)
    a2 = mu * G * math.cos(math.pi / k)
    end = -d * (along * t1 - 0.5 * mu * G * t1**2) - n * across * t1 + side * s1**2 / (2 * a2)
    return t1 + s1 / a2, end


def puck(mu, cone, facets=4):
    b = cl.Multibody("puck", coordinates=["x", "y", "z"])
    b.kinetic_energy = 0.5 * ca.sumsqr(b.v)
    b.potential_energy = G * b.q[2]
    b.point_contact("floor", b.q, friction=mu, cone=cone, facets=facets)
    return b


def stick_times(traj):
    return [e["time"] for e in traj.metadata["events"] if e["kind"] == "stick"]


@pytest.mark.parametrize("k, direction", [(3, 0.37), (4, 1.9), (6, -2.6), (8, 2.3), (6, math.pi / 6)])
def test_sliding_on_a_polygon_stops_at_its_direction_dependent_time(k, direction):
    mu, speed = 0.5, 2.0
    t_stop, end = polygon_slide(speed, direction, mu, k)
    bounds = speed / (mu * G), speed / (mu * G * math.cos(math.pi / k))
    assert bounds[0] - 1e-15 <= t_stop <= bounds[1] + 1e-15
    v0 = speed * np.array([math.cos(direction), math.sin(direction)])
    traj = cl.simulate_events(puck(mu, "polyhedral", k), 1.0, [0, 0, 0], [*v0, 0], times=[1.0])
    assert stick_times(traj) == pytest.approx([t_stop], abs=1e-12)
    np.testing.assert_allclose([traj["puck.x"][-1], traj["puck.y"][-1]], end, atol=1e-12)


@pytest.mark.parametrize("direction", [0.37, 1.9, -2.6])
def test_sliding_on_the_circular_cone_stops_alike_in_every_direction(direction):
    mu, speed = 0.5, 2.0
    d = np.array([math.cos(direction), math.sin(direction)])
    traj = cl.simulate_events(puck(mu, "circular"), 1.0, [0, 0, 0], [*(speed * d), 0], times=np.linspace(0, 1, 11))
    assert stick_times(traj) == pytest.approx([speed / (mu * G)], abs=1e-12)
    np.testing.assert_allclose([traj["puck.x"][-1], traj["puck.y"][-1]], d * speed**2 / (2 * mu * G), atol=1e-12)
    assert np.abs(traj["puck.x"] * d[1] - traj["puck.y"] * d[0]).max() <= 1e-12  # a straight line


def test_table_sliding_on_six_facet_cones_stops_as_one_point():
    # four redundant legs, each sliding at a vertex, then on a side's normal (an edge multiplier per leg, all equal)
    mu, speed, direction, k = 0.5, 1.5, 2.3, 6
    b, T, R = rigid_body("table", 3.0, [0.2, 0.3, 0.4])
    b.kinetic_energy, b.potential_energy = T, 3.0 * G * b.q[2]
    for j, (sx, sy) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1))):
        b.point_contact(f"leg{j}", b.q[:3] + ca.mtimes(R, ca.DM([0.4 * sx, 0.3 * sy, -0.5])), friction=mu, facets=k)
    t_stop, end = polygon_slide(speed, direction, mu, k)
    v0 = speed * np.array([math.cos(direction), math.sin(direction)])
    traj = cl.simulate_events(b, 1.0, [0, 0, 0.5, 0, 0, 0], [*v0, 0, 0, 0, 0], times=[1.0])
    assert stick_times(traj) == pytest.approx([t_stop] * 4, abs=1e-12)
    np.testing.assert_allclose([traj["table.x"][-1], traj["table.y"][-1]], end, atol=1e-12)
    assert max(abs(traj[f"table.{n}"][-1]) for n in ("roll", "pitch", "yaw")) <= 1e-13


@pytest.mark.parametrize("cone", ["polyhedral", "circular"])
def test_symmetric_table_rests_ten_seconds_with_a_quarter_of_its_weight_on_each_leg(cone):
    mass = 3.0
    body, _ = table(cone=cone, mass=mass, centre=(0.0, 0.0))
    traj = cl.simulate_events(body, 10.0, [0, 0, 0.5, 0, 0, 0], [0] * 6, times=[5.0, 10.0])
    for k in range(4):
        assert traj[f"table.leg{k}.normal_force"][-1] == pytest.approx(mass * G / 4, rel=1e-11)
        assert math.hypot(traj[f"table.leg{k}.friction_force_1"][-1], traj[f"table.leg{k}.friction_force_2"][-1]) <= 1e-12
    q = [traj[f"table.{n}"][-1] for n in ("x", "y", "z", "roll", "pitch", "yaw")]
    assert np.abs(np.array(q) - [0, 0, 0.5, 0, 0, 0]).max() <= 1e-12  # no drift over 10 s
    assert {e["kind"] for e in traj.metadata["events"]} == {"closed"}


def slope_box(mu, alpha, mass=2.0, width=1.0, height=0.5):
    """A box (x, y, θ) on a slope of angle α, both lower corners in frictional contact with it."""
    b = cl.Multibody("box", coordinates=["x", "y", "theta"])
    x, y, th = b.coordinates
    b.kinetic_energy = 0.5 * mass * (b.v[0] ** 2 + b.v[1] ** 2) + 0.5 * mass * (width**2 + height**2) / 12 * b.v[2] ** 2
    b.potential_energy = mass * G * y
    normal, along = ca.DM([-math.sin(alpha), math.cos(alpha)]), ca.DM([math.cos(alpha), math.sin(alpha)])
    for name, side in (("low", -1), ("high", 1)):
        p = ca.vertcat(x + side * width / 2 * ca.cos(th) + height / 2 * ca.sin(th), y + side * width / 2 * ca.sin(th) - height / 2 * ca.cos(th))
        b.contact(name, ca.dot(normal, p), friction=mu, tangent=ca.dot(along, p))
    return b


@pytest.mark.parametrize("mu", [0.5, 0.3])
def test_box_on_a_slope_rests_or_slides_with_the_statics_split(mu):
    alpha, mass, w, h = 0.35, 2.0, 1.0, 0.5  # tan α = 0.365
    centre = np.array([-math.sin(alpha), math.cos(alpha)]) * h / 2
    traj = cl.simulate_events(slope_box(mu, alpha, mass, w, h), 1.0, [*centre, alpha], [0, 0, 0], times=[0.5, 1.0])
    low, high = traj["box.low.normal_force"][-1], traj["box.high.normal_force"][-1]
    assert low + high == pytest.approx(mass * G * math.cos(alpha), rel=1e-12)
    s = (traj["box.x"][-1] - centre[0]) * math.cos(alpha) + (traj["box.y"][-1] - centre[1]) * math.sin(alpha)
    if mu > math.tan(alpha):
        assert low - high == pytest.approx(mass * G * math.sin(alpha) * h / w, rel=1e-11)
        assert traj["box.low.friction_force"][-1] + traj["box.high.friction_force"][-1] == pytest.approx(mass * G * math.sin(alpha), rel=1e-12)
        assert abs(s) <= 1e-13
    else:
        assert low - high == pytest.approx(mu * mass * G * math.cos(alpha) * h / w, rel=1e-11)
        assert s == pytest.approx(-0.5 * G * (math.sin(alpha) - mu * math.cos(alpha)), abs=1e-12)
    assert traj["box.theta"][-1] == pytest.approx(alpha, abs=1e-13)


def spinning_disk(mu, mass, radius, rings=3, per_ring=6):
    """A flat disk (its centre of mass in the plane of its contact points) on equal-area rings' centroid radii."""
    b, T, R = rigid_body("disk", mass, [0.25 * mass * radius**2, 0.25 * mass * radius**2, 0.5 * mass * radius**2])
    b.kinetic_energy, b.potential_energy = T, mass * G * b.q[2]
    k = 0
    for i in range(rings):
        a, c = radius * math.sqrt(i / rings), radius * math.sqrt((i + 1) / rings)
        r = 2 / 3 * (c**3 - a**3) / (c**2 - a**2)
        for j in range(per_ring):
            angle = 2 * math.pi * (j + 0.5 * i) / per_ring
            b.point_contact(f"p{k}", b.q[:3] + ca.mtimes(R, ca.DM([r * math.cos(angle), r * math.sin(angle), 0.0])), friction=mu, cone="circular")
            k += 1
    return b


def test_disk_spinning_on_its_face_stops_under_the_torque_two_thirds_mu_m_g_r():
    mu, mass, radius, w0 = 0.4, 2.0, 0.2, 10.0
    t_stop = 0.5 * mass * radius**2 * w0 / (2 / 3 * mu * mass * G * radius)
    traj = cl.simulate_events(spinning_disk(mu, mass, radius, rings=2), 0.5, [0] * 6, [0, 0, 0, 0, 0, w0], times=[0.5])
    assert stick_times(traj)[0] == pytest.approx(t_stop, abs=1e-11)
    assert traj["disk.yaw"][-1] == pytest.approx(w0 * t_stop / 2, abs=1e-10)
    assert max(abs(traj[f"disk.{n}"][-1]) for n in ("x", "y", "z", "roll", "pitch", "yaw_speed")) <= 1e-12


def ball(mu, cone, radius=0.1, facets=4, restitution=0.0):
    """A solid unit ball whose 'angles' integrate its angular velocity (as in test_events_3d)."""
    b = cl.Multibody("ball", coordinates=["x", "y", "z", "ax", "ay", "az"])
    x, y, z, ax, ay, az = b.coordinates
    b.kinetic_energy = 0.5 * ca.sumsqr(b.v[:3]) + 0.5 * 0.4 * radius**2 * ca.sumsqr(b.v[3:])
    b.potential_energy = G * z
    b.contact("floor", z - radius, restitution=restitution, friction=mu, tangent=[x - radius * ay, y + radius * ax],
              cone=cone, facets=facets)
    return b


@pytest.mark.parametrize("cone, k", [("circular", 4), ("polyhedral", 4), ("polyhedral", 6)])
def test_ball_rolls_at_five_sevenths_whatever_the_cone(cone, k):
    mu, r = 0.3, 0.1
    for v0, w0 in ((np.array([1.5, -0.8]), np.zeros(3)), (np.array([0.4, 1.1]), np.array([-5.0, 3.0, 2.0]))):
        u0 = np.array([v0[0] - r * w0[1], v0[1] + r * w0[0]])
        t_roll = 2 * np.linalg.norm(u0) / (7 * mu * G)
        if cone == "polyhedral":
            t_roll *= math.cos(abs(polygon_angle(math.atan2(-u0[1], -u0[0]), k)) - math.pi / k) / math.cos(math.pi / k)
        traj = cl.simulate_events(ball(mu, cone, r, k), 1.0, [0, 0, r, 0, 0, 0], [*v0, 0, *w0], times=[1.0])
        assert stick_times(traj) == pytest.approx([t_roll], abs=1e-12)
        np.testing.assert_allclose([traj["ball.x_speed"][-1], traj["ball.y_speed"][-1]], v0 - 2 / 7 * u0, atol=1e-12)
        if not w0.any():
            assert np.linalg.norm([traj["ball.x_speed"][-1], traj["ball.y_speed"][-1]]) == pytest.approx(5 / 7 * np.linalg.norm(v0), rel=1e-12)


def pushed_block(mu):
    """A unit block on a floor with friction ``mu``, pushed along it by the control ``box.push``."""
    body = cl.Multibody("box", coordinates=["x", "y"])
    push = body.control("push")
    body.kinetic_energy = 0.5 * ca.sumsqr(body.v)
    body.potential_energy = G * body.q[1]
    body.generalized_force = ca.vertcat(push, 0)
    body.contact("floor", body.q[1], friction=mu, tangent=body.q[0])
    return body


@pytest.mark.parametrize("final, start", [(1.0, 0.3), (10.0, 7.123), (60.0, 31.31), (60.0, 0.013)])
def test_a_50_ms_push_during_a_stick_moves_the_block_6_31e_3(final, start):
    # x = ½aL² + (aL)²/(2μg), a = F/m − μg = 3.095: 6.3099e-3.  Over 60 s the default 1000
    # samples of the controls are 60 ms apart: the push of 50 ms covers one sample at most
    mu, force, length = 0.5, 8.0, 0.05
    a = force - mu * G
    x = 0.5 * a * length**2 + (a * length) ** 2 / (2 * mu * G)
    assert x == pytest.approx(6.31e-3, abs=5e-6)
    body = pushed_block(mu)
    traj = cl.simulate_events(body, final, [0, 0], [0, 0], controls={"box.push": lambda t: force if start <= t < start + length else 0.0},
                              times=[final])
    assert traj["box.x"][-1] == pytest.approx(x, abs=1e-12)


@pytest.mark.parametrize("spin", [0.0, 30.0])
def test_oblique_impact_of_a_spinning_ball_sticks_or_slides_within_the_cone(spin):
    # falls 0.2 with horizontal speed 0.5 along x and spin about y (u = v_x − r ω_y); plastic: P_n = v_n
    mu, r = 0.4, 0.1
    vn, vx = math.sqrt(2 * G * 0.2), 0.5
    u = vx - r * spin
    P_t = -2 / 7 * u if 2 / 7 * abs(u) <= mu * vn else -math.copysign(mu * vn, u)
    t1 = math.sqrt(2 * 0.2 / G)
    traj = cl.simulate_events(ball(mu, "circular", r), t1 + 1e-3, [0, 0, r + 0.2, 0, 0, 0], [vx, 0, 0, 0, spin, 0], times=[t1 + 1e-3])
    first = traj.metadata["events"][0]
    assert first["kind"] == "impact" and first["impulse"] == pytest.approx(vn, rel=1e-12)
    before, after = np.flatnonzero(traj.time == first["time"])[[0, -1]]
    assert traj["ball.x_speed"][after] - traj["ball.x_speed"][before] == pytest.approx(P_t, abs=1e-12)
    assert abs(P_t) <= mu * vn + 1e-15 and P_t * u < 0  # within μP_n, against the slip
    assert abs(traj["ball.y_speed"][after]) <= 1e-14


def test_a_short_smooth_push_in_a_long_run_moves_the_block_as_in_a_short_one():
    # a Gaussian push of 10 ms, above μmg for 14 ms only: in a 10 s run the scan's samples are 10 ms apart, and
    # steps of twice that spacing stepped over it (x = 0); the same push in a 0.3 s run is sampled every 0.3 ms
    mu, force = 0.5, 8.0
    body = pushed_block(mu)
    controls = {"box.push": lambda t: force * math.exp(-(((t - 3.0) / 0.01) ** 2))}
    short = cl.simulate_events(body, 3.2, [0, 0], [0, 0], controls=controls, t0=2.9, times=[3.2])
    long = cl.simulate_events(body, 10.0, [0, 0], [0, 0], controls=controls, times=[10.0])
    assert short["box.x"][-1] > 3e-4
    assert long["box.x"][-1] == pytest.approx(short["box.x"][-1], abs=1e-12)


def triangle(mu, masses=(1.0, 2.0, 3.0)):
    """Three point masses held in a rigid triangle by three distance constraints (a closed chain), each a contact."""
    b = cl.Multibody("tri", coordinates=[f"{c}{i}" for i in range(3) for c in "xyz"])
    P = [b.q[3 * i:3 * i + 3] for i in range(3)]
    b.kinetic_energy = sum(0.5 * m * ca.sumsqr(b.v[3 * i:3 * i + 3]) for i, m in enumerate(masses))
    b.potential_energy = sum(m * G * P[i][2] for i, m in enumerate(masses))
    corners = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.3, 0.8, 0.0]])
    for i, j in ((0, 1), (1, 2), (0, 2)):
        b.holonomic(f"rod{i}{j}", ca.sumsqr(P[i] - P[j]) - float(np.sum((corners[i] - corners[j]) ** 2)))
    for i in range(3):
        b.point_contact(f"c{i}", P[i], friction=mu, cone="circular")
    return b, corners


def test_closed_chain_triangle_rests_on_its_corners_and_slides_to_coulombs_stop():
    # each corner carries its own mass's weight (the rods carry nothing at rest); sliding without turning, every
    # corner brakes at μg: stops at s/(μg) after s²/(2μg)
    mu, masses = 0.5, (1.0, 2.0, 3.0)
    body, corners = triangle(mu, masses)
    traj = cl.simulate_events(body, 2.0, corners.ravel(), np.zeros(9), times=[2.0])
    np.testing.assert_allclose([traj[f"tri.c{i}.normal_force"][-1] for i in range(3)], np.array(masses) * G, rtol=1e-12)
    np.testing.assert_allclose([traj[f"tri.{c}{i}"][-1] for i in range(3) for c in "xyz"], corners.ravel(), atol=1e-13)
    v = np.array([0.8, -0.6, 0.0])
    body, corners = triangle(mu, masses)
    traj = cl.simulate_events(body, 1.0, corners.ravel(), np.tile(v, 3), times=[1.0])
    assert stick_times(traj) == pytest.approx([1.0 / (mu * G)] * 3, abs=1e-12)
    np.testing.assert_allclose([traj["tri.x0"][-1], traj["tri.y0"][-1]], v[:2] / (2 * mu * G), atol=1e-12)
    lengths = [math.dist([traj[f"tri.{c}{i}"][-1] for c in "xyz"], [traj[f"tri.{c}{j}"][-1] for c in "xyz"]) for i, j in ((0, 1), (1, 2))]
    np.testing.assert_allclose(lengths, [1.0, math.hypot(0.7, 0.8)], atol=1e-12)


@pytest.mark.parametrize("cone", ["circular", "polyhedral"])
def test_painleves_rod_in_3d_is_one_sentence_naming_the_contact(cone):
    # the planar rod of test_events_rest on a 3-D floor, its tip sliding along −x (a vertex of the square cone):
    # the same threshold μ* = (1 + 3cos²θ)/(3 sinθ cosθ) = 5/3 at θ = π/4
    def rod(mu):
        b = cl.Multibody("rod", coordinates=["x", "y", "z", "theta"])
        x, y, z, th = b.coordinates
        b.kinetic_energy = 0.5 * ca.sumsqr(b.v[:3]) + 0.5 / 3 * b.v[3] ** 2
        b.potential_energy = G * z
        b.point_contact("tip", ca.vertcat(x - ca.cos(th), y, z - ca.sin(th)), friction=mu, cone=cone)
        return b

    th = math.pi / 4
    q0, v0 = [math.cos(th), 0.0, math.sin(th), th], [-1.0, 0.0, 0.0, 0.0]
    assert cl.simulate_events(rod(1.6), 0.05, q0, v0).metadata["events"][0]["kind"] == "closed"
    with pytest.raises(cl.ContactParadoxError, match=r"^Contact `rod.tip` slides with friction μ = 1.7 at t = 0 [^\n]*Painlevé's paradox[^\n]*\.$"):
        cl.simulate_events(rod(1.7), 0.05, q0, v0)


@pytest.mark.parametrize("cone, speed, direction", [("circular", 1.0, 0.7), ("circular", 4.0, 0.7), ("polyhedral", 4.0, 0.0),
                                                    ("polyhedral", 4.0, math.pi / 4)])
def test_table_landing_flat_on_four_legs_with_3d_friction(cone, speed, direction):
    # dropped flat from 0.3 with horizontal speed s: four plastic impacts at once carry m v_n; the floor's friction
    # impulse μ m v_n (μ m v_n cos(π/4) on the square cone's side normal) stops the sliding or leaves s − that,
    # which μg (μg cos(π/4)) then brakes: x = s t_land + v_t²/(2 a)
    mu, mass, h = 0.5, 3.0, 0.3
    t_land, vn = math.sqrt(2 * h / G), math.sqrt(2 * G * h)
    side = math.cos(math.pi / 4) if cone == "polyhedral" and direction else 1.0
    vt = max(speed - mu * vn * side, 0.0)
    body, _ = table(mu=mu, mass=mass, cone=cone)
    d = np.array([math.cos(direction), math.sin(direction)])
    traj = cl.simulate_events(body, 1.5, [0, 0, 0.5 + h, 0, 0, 0], [*(speed * d), 0, 0, 0, 0], times=[1.5])
    impacts = [e for e in traj.metadata["events"] if e["kind"] == "impact"]
    assert len(impacts) == 4 and impacts[0]["time"] == pytest.approx(t_land, abs=1e-12)
    assert sum(e["impulse"] for e in impacts) == pytest.approx(mass * vn, rel=1e-12)
    end = (speed * t_land + vt**2 / (2 * mu * G * side)) * d
    np.testing.assert_allclose([traj["table.x"][-1], traj["table.y"][-1]], end, atol=1e-12)
    assert max(abs(traj[f"table.{n}"][-1]) for n in ("roll", "pitch", "yaw")) <= 1e-13



def test_table_with_its_centre_beyond_two_legs_tips_about_them():
    # centre of mass 0.05 beyond the legs at x = +0.4 (0.5 above the floor): the other two legs leave at once and
    # the table turns about the sticking pair with α = m g d / (I_yy + m(d² + h²)) at first
    mass, d, h = 3.0, 0.05, 0.5
    body, _ = table(mass=mass, cone="circular", centre=(0.4 + d, 0.0))
    traj = cl.simulate_events(body, 2e-3, [0, 0, 0.5, 0, 0, 0], [0] * 6, times=[1e-3, 2e-3])
    alpha = mass * G * d / (0.3 + mass * (d**2 + h**2))
    k = int(np.flatnonzero(traj.time == 1e-3)[-1])
    assert traj["table.pitch_speed"][k] == pytest.approx(alpha * 1e-3, rel=1e-5)
    assert [e["contact"] for e in traj.metadata["events"]] == ["table.leg0", "table.leg1"]  # closed: only the pair


def test_a_singular_mass_matrix_is_one_sentence_naming_the_speeds():
    # tipped over to 90° pitch, that table's Euler angles are singular (it reaches them at t = 0.96, after 40 s of
    # ever smaller steps); here a coordinate whose inertia x² vanishes at x = 0 is singular from the start: numpy's
    # LinAlgError was raised raw
    b = cl.Multibody("puck", coordinates=["x", "y", "z"])
    b.kinetic_energy = 0.5 * (b.v[0] ** 2 + (b.q[0] * b.v[1]) ** 2 + b.v[2] ** 2)
    b.potential_energy = G * b.q[2]
    b.point_contact("floor", b.q, friction=0.5)
    with pytest.raises(cl.SimulationError, match=r"^The mass matrix is singular at t = 0 along `puck.y_speed` .*Euler angles "
                                                 r"at ±90° pitch[^\n]*\.$"):
        cl.simulate_events(b, 1.0, [0, 0, 0.1], [0, 0, 0])


@pytest.mark.parametrize("cone", ["polyhedral", "circular"])
def test_two_coincident_contacts_slide_and_stop_as_one(cone):
    # fully redundant rows: the forces split is free, the motion is the single contact's.  On the square cone the
    # speed reaches the side's normal at 0.102 s: each contact then needs its share of the edge force, which the
    # contact Lemke's answer left unloaded could not hold, and it turned back and forth there (10000 events)
    mu, v0 = 0.5, np.array([1.0, 0.5])
    b = cl.Multibody("puck", coordinates=["x", "y", "z"])
    b.kinetic_energy = 0.5 * ca.sumsqr(b.v)
    b.potential_energy = G * b.q[2]
    for name in ("a", "b"):
        b.point_contact(name, b.q, friction=mu, cone=cone)
    traj = cl.simulate_events(b, 1.0, [0, 0, 0], [*v0, 0], times=[1.0])
    if cone == "polyhedral":
        t_stop, end = polygon_slide(np.linalg.norm(v0), math.atan2(v0[1], v0[0]), mu, 4)
    else:
        t_stop, end = np.linalg.norm(v0) / (mu * G), v0 * np.linalg.norm(v0) / (2 * mu * G)
    assert stick_times(traj) == pytest.approx([t_stop] * 2, abs=1e-12)
    np.testing.assert_allclose([traj["puck.x"][-1], traj["puck.y"][-1]], end, atol=1e-12)
    assert traj["puck.a.normal_force"][-1] + traj["puck.b.normal_force"][-1] == pytest.approx(G, rel=1e-12)


def slope_table(mu, alpha, cone, mass=3.0):
    """The table's four legs on a plane tilted by α about y (its normal (−sin α, 0, cos α))."""
    b, T, R = rigid_body("table", mass, [0.2, 0.3, 0.4])
    b.kinetic_energy, b.potential_energy = T, mass * G * b.q[2]
    normal = ca.DM([-math.sin(alpha), 0.0, math.cos(alpha)])
    for j, (sx, sy) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1))):
        b.point_contact(f"leg{j}", b.q[:3] + ca.mtimes(R, ca.DM([0.4 * sx, 0.3 * sy, -0.5])), surface=lambda p: ca.dot(normal, p),
                        friction=mu, cone=cone)
    return b


@pytest.mark.parametrize("cone", ["circular", "polyhedral"])
@pytest.mark.parametrize("mu", [0.5, 0.2])
def test_table_on_a_slope_rests_ten_seconds_or_slides(cone, mu):
    # tan α = 0.309.  At rest the legs carry m g cos α and m g sin α along the slope, however they share it; the
    # minimum-norm share gave the lightly loaded uphill legs too much friction for the circular cone, whose slip
    # and stick then alternated 10000 times at t = 0.  Sliding: g(sin α − μ cos α) down the slope
    alpha, mass = 0.3, 3.0
    centre = 0.5 * np.array([-math.sin(alpha), 0.0, math.cos(alpha)])
    final = 10.0 if mu > math.tan(alpha) else 0.5
    traj = cl.simulate_events(slope_table(mu, alpha, cone, mass), final, [*centre, 0, -alpha, 0], [0] * 6, times=[0.5, final])
    N = [traj[f"table.leg{k}.normal_force"][-1] for k in range(4)]
    F = np.array([[traj[f"table.leg{k}.friction_force_{j}"][-1] for j in (1, 2)] for k in range(4)])
    assert sum(N) == pytest.approx(mass * G * math.cos(alpha), rel=1e-12)
    s = (traj["table.x"][-1] - centre[0]) * math.cos(alpha) + (traj["table.z"][-1] - centre[2]) * math.sin(alpha)
    if mu > math.tan(alpha):
        assert abs(s) <= 1e-12 and {e["kind"] for e in traj.metadata["events"]} == {"closed"}
        assert abs(F[:, 0].sum()) == pytest.approx(mass * G * math.sin(alpha), rel=1e-12)
        assert all(np.linalg.norm(f) < mu * n for f, n in zip(F, N))  # each leg inside its cone
    else:
        assert s == pytest.approx(-0.5 * G * (math.sin(alpha) - mu * math.cos(alpha)) * final**2, abs=1e-12)
    assert abs(traj["table.pitch"][-1] + alpha) <= 1e-12


def slope_ball(mu, alpha, cone, radius=0.1):
    """A solid unit ball on a plane tilted by α about y; its 'angles' integrate its angular velocity ω (world axes), so
    the contact point's material speed v − r ω × n is the rate of (t₁·c − r a_y, y + r(a_z sin α + a_x cos α))."""
    b = cl.Multibody("ball", coordinates=["x", "y", "z", "ax", "ay", "az"])
    x, y, z, ax, ay, az = b.coordinates
    b.kinetic_energy = 0.5 * ca.sumsqr(b.v[:3]) + 0.5 * 0.4 * radius**2 * ca.sumsqr(b.v[3:])
    b.potential_energy = G * z
    s, c = math.sin(alpha), math.cos(alpha)
    b.contact("slope", -s * x + c * z - radius, friction=mu, cone=cone,
              tangent=[c * x + s * z - radius * ay, y + radius * (az * s + ax * c)])
    return b


@pytest.mark.parametrize("cone", ["circular", "polyhedral"])
@pytest.mark.parametrize("mu", [0.3, 0.1])
def test_ball_on_a_slope_rolls_at_five_sevenths_g_sin_alpha_or_slides(cone, mu):
    # rolling needs friction (2/7) m g sin α ≤ μ m g cos α (μ ≥ 0.156 at α = 0.5): then the centre accelerates at
    # (5/7) g sin α down the slope, else at g (sin α − μ cos α); rolling across the slope at 0.7 m/s goes on
    alpha, r, vy = 0.5, 0.1, 0.7
    centre = r * np.array([-math.sin(alpha), 0.0, math.cos(alpha)])
    traj = cl.simulate_events(slope_ball(mu, alpha, cone, r), 1.0, [*centre, 0, 0, 0], [0, vy, 0, -vy / (r * math.cos(alpha)), 0, 0],
                              times=[1.0])
    down = -((traj["ball.x"][-1] - centre[0]) * math.cos(alpha) + (traj["ball.z"][-1] - centre[2]) * math.sin(alpha))
    a = 5 / 7 * G * math.sin(alpha) if mu >= 2 / 7 * math.tan(alpha) else G * (math.sin(alpha) - mu * math.cos(alpha))
    assert down == pytest.approx(0.5 * a, abs=1e-12)
    assert traj["ball.y"][-1] == pytest.approx(vy, abs=1e-12)
    assert [e["kind"] for e in traj.metadata["events"]] == ["closed"]
