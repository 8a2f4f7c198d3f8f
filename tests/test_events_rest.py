"""The event-driven simulator where contacts are redundant, controls are short and the laws have no solution.

Answers nobody here wrote: statics (the normal forces of a body at rest sum to its weight and their moments
vanish, whatever their split), Coulomb's sliding block (it stops after v₀/(μg) having gone v₀²/(2μg)), a push
above the friction limit (ẍ = (F − μmg)/m while it lasts, then −μg), and Painlevé's rod, whose sliding end has
no contact force once μ > (1 + 3cos²θ)/(3 sinθ cosθ) (Painlevé 1895; Stewart, SIAM Review 42 (2000) 3, §3).
"""
from __future__ import annotations

import math

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.errors import OptionError

G = 9.81


def planar_box(mu=0.5, mass=2.0, width=1.0, height=0.5, e=0.0):
    """A box in the plane (x, y, θ) with its two lower corners as frictional contacts."""
    b = cl.Multibody("box", coordinates=["x", "y", "theta"])
    x, y, th = b.coordinates
    b.kinetic_energy = 0.5 * mass * (b.v[0] ** 2 + b.v[1] ** 2) + 0.5 * mass * (width**2 + height**2) / 12 * b.v[2] ** 2
    b.potential_energy = mass * G * y
    for name, side in (("left", -1), ("right", 1)):
        px = x + side * width / 2 * ca.cos(th) + height / 2 * ca.sin(th)
        py = y + side * width / 2 * ca.sin(th) - height / 2 * ca.cos(th)
        b.contact(name, py, restitution=e, friction=mu, tangent=px)
    return b


def test_box_on_two_sticking_corners_rests_and_carries_its_weight():
    mass = 2.0
    traj = cl.simulate_events(planar_box(0.5, mass), 1.0, [0.0, 0.25, 0.0], [0.0, 0.0, 0.0], times=[0.5, 1.0])
    assert max(abs(traj["box.x"][-1]), abs(traj["box.y"][-1] - 0.25), abs(traj["box.theta"][-1])) <= 1e-14
    assert max(abs(traj[f"box.{n}_speed"][-1]) for n in ("x", "y", "theta")) <= 1e-14
    normal = traj["box.left.normal_force"][-1] + traj["box.right.normal_force"][-1]
    assert normal == pytest.approx(mass * G, rel=1e-13)
    assert traj["box.left.normal_force"][-1] == pytest.approx(mass * G / 2, rel=1e-12)  # moments about the centre
    assert abs(traj["box.left.friction_force"][-1] + traj["box.right.friction_force"][-1]) <= 1e-12
    assert {e["kind"] for e in traj.metadata["events"]} == {"closed"}


def test_box_sliding_on_two_corners_stops_at_coulombs_time_and_distance():
    mu, v0 = 0.5, 2.0
    traj = cl.simulate_events(planar_box(mu), 1.0, [0.0, 0.25, 0.0], [v0, 0.0, 0.0], times=[0.2, 1.0])
    stick = [e for e in traj.metadata["events"] if e["kind"] == "stick"]
    assert len(stick) == 2 and stick[0]["time"] == pytest.approx(v0 / (mu * G), abs=1e-12)
    assert traj["box.x"][-1] == pytest.approx(v0**2 / (2 * mu * G), abs=1e-12)
    assert abs(traj["box.theta"][-1]) <= 1e-13 and abs(traj["box.x_speed"][-1]) <= 1e-13


def test_box_dropped_tilted_on_a_rough_floor_comes_to_rest_flat():
    # it rocks on its corners with friction (e = 0.3) and must end flat, at rest, carrying its weight
    mass = 2.0
    traj = cl.simulate_events(planar_box(0.5, mass, e=0.3), 2.0, [0.0, 0.6, 0.3], [0.0, 0.0, 0.0])
    energy = 0.5 * mass * (traj["box.x_speed"] ** 2 + traj["box.y_speed"] ** 2) \
        + 0.5 * mass * 1.25 / 12 * traj["box.theta_speed"] ** 2 + mass * G * traj["box.y"]
    assert np.diff(energy).max() <= 1e-9
    assert abs(traj["box.theta"][-1]) <= 1e-12 and traj["box.y"][-1] == pytest.approx(0.25, abs=1e-12)
    assert max(abs(traj[f"box.{n}_speed"][-1]) for n in ("x", "y", "theta")) <= 1e-12
    assert traj["box.left.normal_force"][-1] + traj["box.right.normal_force"][-1] == pytest.approx(mass * G, rel=1e-12)


def test_rocking_block_keeps_housners_ratio_and_comes_to_rest():
    # a block (width/height = 0.4) released tilted on a corner rocks onto the other: a plastic, sticking impact
    # there keeps the angular momentum about the new corner, so ω⁺/ω⁻ = 1 − (3/2) sin²α, α = atan(w/h)
    # (Housner, Bull. Seismol. Soc. Am. 53 (1963) 403); the impacts accumulate and it ends flat at rest
    w, h, th0 = 0.4, 1.0, 0.1
    traj = cl.simulate_events(planar_box(0.8, 1.0, w, h), 2.5, [0.0, w / 2 * math.sin(th0) + h / 2 * math.cos(th0), th0],
                              [0.0, 0.0, 0.0], times=[2.5])
    first = next(e for e in traj.metadata["events"] if e["kind"] == "impact")
    rows = np.flatnonzero(traj.time == first["time"])
    ratio = traj["box.theta_speed"][rows[-1]] / traj["box.theta_speed"][rows[0]]
    assert ratio == pytest.approx(1 - 1.5 * math.sin(math.atan(w / h)) ** 2, abs=1e-12)
    assert abs(traj["box.theta"][-1]) <= 1e-10 and abs(traj["box.theta_speed"][-1]) <= 1e-10
    assert traj["box.left.normal_force"][-1] + traj["box.right.normal_force"][-1] == pytest.approx(G, rel=1e-10)


@pytest.mark.parametrize("vx", [1.0, 3.0])
def test_bar_landing_flat_on_a_rough_floor(vx):
    # a thin bar dropped flat from 0.5 with horizontal speed v_x lands on both ends at once (plastic): the floor's
    # impulse m v_n stops the sliding if v_x ≤ μ v_n, else leaves v_x − μ v_n, which μg then brakes to rest
    mu, mass, h = 0.5, 1.0, 0.5
    t_land, vn = math.sqrt(2 * h / G), math.sqrt(2 * G * h)
    slide = max(vx - mu * vn, 0.0)
    traj = cl.simulate_events(planar_box(mu, mass, height=0.0), 1.0, [0.0, h, 0.0], [vx, 0.0, 0.0], times=[1.0])
    impacts = [e for e in traj.metadata["events"] if e["kind"] == "impact"]
    assert len(impacts) == 2 and impacts[0]["time"] == pytest.approx(t_land, abs=1e-12)
    assert impacts[0]["impulse"] + impacts[1]["impulse"] == pytest.approx(mass * vn, rel=1e-12)
    assert traj["box.x"][-1] == pytest.approx(vx * t_land + slide**2 / (2 * mu * G), abs=1e-12)
    assert abs(traj["box.theta"][-1]) <= 1e-13 and abs(traj["box.x_speed"][-1]) <= 1e-13


# -- controls during a stick -------------------------------------------------------------------
def push_box(mu=0.4, mass=2.0):
    body = cl.Multibody("box", coordinates=["x", "y"])
    push = body.control("push")
    body.kinetic_energy = 0.5 * mass * ca.sumsqr(body.v)
    body.potential_energy = mass * G * body.q[1]
    body.generalized_force = ca.vertcat(push, 0)
    body.contact("floor", body.q[1], friction=mu, tangent=body.q[0])
    return body


def pulse_answer(mu, mass, force, start, length):
    """Closed form: slides at (F − μmg)/m during the pulse, then brakes at μg."""
    a1 = (force - mu * mass * G) / mass
    v1 = a1 * length
    return 0.5 * a1 * length**2 + v1**2 / (2 * mu * G), start + length + v1 / (mu * G)


def test_a_short_push_during_a_stick_is_not_stepped_over():
    # The root cause: while the box sticks its state does not change, so the integrator's steps grow past the
    # push (no scan: x stays 0).  The push's jumps, found by the scan, restart the integration.
    mu, mass, force, start, length = 0.4, 2.0, 12.0, 0.3, 0.05
    x_end, t_stop = pulse_answer(mu, mass, force, start, length)
    push = {"box.push": lambda t: force if start <= t < start + length else 0.0}
    traj = cl.simulate_events(push_box(mu, mass), 1.0, [0.0, 0.0], [0.0, 0.0], controls=push, times=[1.0])
    assert traj["box.x"][-1] == pytest.approx(x_end, abs=1e-12)
    kinds = [(e["kind"], e["time"]) for e in traj.metadata["events"]]
    assert kinds[1][0] == "slip" and kinds[1][1] == pytest.approx(start, abs=1e-12)
    assert kinds[2][0] == "stick" and kinds[2][1] == pytest.approx(t_stop, abs=1e-12)
    missed = cl.simulate_events(push_box(mu, mass), 1.0, [0.0, 0.0], [0.0, 0.0], controls=push, times=[1.0], control_samples=0)
    assert missed["box.x"][-1] == 0.0
    declared = lambda t: [force if start <= t < start + length else 0.0]  # noqa: E731
    declared.breakpoints = [start, start + length]
    traj = cl.simulate_events(push_box(mu, mass), 1.0, [0.0, 0.0], [0.0, 0.0], controls=declared, times=[1.0], control_samples=0)
    assert traj["box.x"][-1] == pytest.approx(x_end, abs=1e-12)


def test_a_smooth_short_push_during_a_stick_is_resolved():
    # a Gaussian push of 10 ms that exceeds μmg only near its peak: the same answer as with steps of 0.5 ms
    push = {"box.push": lambda t: 12.0 * math.exp(-(((t - 0.5) / 0.01) ** 2))}
    run = dict(controls=push, t0=0.45, times=[0.6])
    traj = cl.simulate_events(push_box(), 0.6, [0.0, 0.0], [0.0, 0.0], **run)
    fine = cl.simulate_events(push_box(), 0.6, [0.0, 0.0], [0.0, 0.0], max_step=5e-4, **run)
    assert fine["box.x"][-1] > 1e-4
    assert traj["box.x"][-1] == pytest.approx(fine["box.x"][-1], abs=1e-12)


def test_an_event_on_a_breakpoint_goes_on_forwards():
    # push k t with a breakpoint declared at the slip time μmg/k: the slip event lands on it (to round-off)
    # and the next segment must not start behind it; x = k (t − t_s)³/(6m) after the slip
    mu, mass, k = 0.4, 2.0, 3.0
    t_slip = mu * mass * G / k
    push = lambda t: [k * t]  # noqa: E731
    push.breakpoints = [t_slip * (1 + 2e-16), t_slip + 0.5]
    traj = cl.simulate_events(push_box(mu, mass), t_slip + 1.0, [0.0, 0.0], [0.0, 0.0], controls=push, times=[t_slip + 1.0])
    assert [e["kind"] for e in traj.metadata["events"]] == ["closed", "slip"]
    assert traj["box.x"][-1] == pytest.approx(k / (6 * mass), abs=1e-10)


def test_controls_given_as_a_trajectory_and_bad_breakpoints():
    mu, mass, force, start, length = 0.4, 2.0, 12.0, 0.3, 0.05
    t = np.array([0.0, start, start, start + length, start + length, 1.0])
    u = np.array([0.0, 0.0, force, force, 0.0, 0.0])
    ctrl = cl.Trajectory(t, {"box.push": u}, {"box.push": "control"})
    traj = cl.simulate_events(push_box(mu, mass), 1.0, [0.0, 0.0], [0.0, 0.0], controls=ctrl, times=[1.0])
    assert traj["box.x"][-1] == pytest.approx(pulse_answer(mu, mass, force, start, length)[0], abs=1e-12)
    with pytest.raises(OptionError, match="The controls trajectory has no column `box.push`"):
        cl.simulate_events(push_box(), 1.0, [0.0, 0.0], [0.0, 0.0], controls=cl.Trajectory(t, {"box.pull": u}, {"box.pull": "control"}))
    with pytest.raises(OptionError, match="`controls` must be None, a function u\\(t\\), a Trajectory or a dict"):
        cl.simulate_events(push_box(), 1.0, [0.0, 0.0], [0.0, 0.0], controls=3.0)
    with pytest.raises(OptionError, match="`breakpoints` must be times"):
        cl.simulate_events(push_box(), 1.0, [0.0, 0.0], [0.0, 0.0], breakpoints=["soon"])
    with pytest.raises(OptionError, match="`control_samples` must be an integer"):
        cl.simulate_events(push_box(), 1.0, [0.0, 0.0], [0.0, 0.0], control_samples=-1)


# -- Painlevé ----------------------------------------------------------------------------------
def rod(mu, mass=1.0, half=1.0):
    b = cl.Multibody("rod", coordinates=["x", "y", "theta"])
    x, y, th = b.coordinates
    b.kinetic_energy = 0.5 * mass * (b.v[0] ** 2 + b.v[1] ** 2) + 0.5 * mass * half**2 / 3 * b.v[2] ** 2
    b.potential_energy = mass * G * y
    b.contact("tip", y - half * ca.sin(th), friction=mu, tangent=x - half * ca.cos(th))
    return b


def test_painleves_rod_is_one_sentence_naming_the_contact():
    # tip sliding backwards at θ = π/4: the normal force's own effect on ÿ is (1 + 3cos²θ − 3μ sinθ cosθ)/m,
    # negative beyond μ* = 5/3, while gravity pulls the tip down: no force fits
    th = math.pi / 4
    q0, v0 = [math.cos(th), math.sin(th), th], [-1.0, 0.0, 0.0]
    below = cl.simulate_events(rod(1.6), 0.05, q0, v0)
    assert below.metadata["events"][0]["kind"] == "closed"
    with pytest.raises(cl.ContactParadoxError, match=r"^Contact `rod.tip` slides with friction μ = 1.7 at t = 0 .*Painlevé's paradox[^.]*\.$"):
        cl.simulate_events(rod(1.7), 0.05, q0, v0)
    assert issubclass(cl.ContactParadoxError, cl.SimulationError)  # a simulation that cannot go on


@pytest.mark.parametrize("theta", [math.pi / 4, math.pi / 3, math.pi / 6])
def test_painleves_rod_resolved_by_an_impact_without_collision_sticks_its_tip(theta):
    # paradox="impact": the tip stops by one impulse at t = 0 (Génot & Brogliato 1999).  Stuck, the rod turns about
    # the tip with its angular momentum about the tip kept: ω⁺ = m r×v_G/(I_G + m l²) = ¾ sinθ (m = l = 1, v_G = (−1, 0)),
    # v_G⁺ = ω⁺(−sinθ, cosθ), impulse P = m(v_G⁺ − v_G) = (1 − ¾sin²θ, ¾ sinθ cosθ), whose ratio is Painlevé's μ*
    # itself: beyond μ*, where the paradox lives, the sticking impulse always lies inside the cone
    q0, v0 = [math.cos(theta), math.sin(theta), theta], [-1.0, 0.0, 0.0]
    critical = (1 + 3 * math.cos(theta) ** 2) / (3 * math.sin(theta) * math.cos(theta))
    with pytest.raises(cl.ContactParadoxError, match="paradox=\"impact\""):
        cl.simulate_events(rod(1.01 * critical), 0.02, q0, v0)
    sim = cl.simulate_events(rod(1.01 * critical), 0.02, q0, v0, paradox="impact")
    first = sim.metadata["events"][0]
    w = 0.75 * math.sin(theta)
    assert (first["time"], first["kind"]) == (0.0, "impact")
    assert first["impulse"] == pytest.approx(w * math.cos(theta), rel=1e-12)
    after = [sim[n][1] for n in ("rod.x_speed", "rod.y_speed", "rod.theta_speed")]
    assert after == pytest.approx([-w * math.sin(theta), w * math.cos(theta), w], abs=1e-12)
    assert (1 - w * math.sin(theta)) / (w * math.cos(theta)) == pytest.approx(critical, rel=1e-12)


def test_a_stopping_impulse_outside_the_cone_leaves_the_paradox_standing():
    from colloc.simulate.contact_forces import ContactRows, stopping_impulse

    # a unit point mass on the ground: sliding along it, only friction could stop it, with no normal impulse to bound it
    rows = ContactRows(np.array([[0.0, 1.0]]), [np.array([[1.0, 0.0]])], [0.5], ["polyhedral"], [4])
    assert stopping_impulse(np.eye(2), rows, np.array([1.0, 0.0])) is None
    # approaching at 1 and sliding at 0.4: P = (1, −0.4), inside μ = 0.5
    Pn, Pt, dv = stopping_impulse(np.eye(2), rows, np.array([0.4, -1.0]))
    assert Pn[0] == pytest.approx(1.0) and Pt[0] == pytest.approx([-0.4]) and dv == pytest.approx([-0.4, 1.0])
    # leaving at 1: stopping it would pull it down, so it is left to separate, and nothing else stops
    assert stopping_impulse(np.eye(2), rows, np.array([0.0, 1.0])) is None
    with pytest.raises(OptionError, match="`paradox` must be 'stop' or 'impact'"):
        cl.simulate_events(rod(1.0), 0.01, [1.0, 0.0, 0.0], [0.0, 0.0, 0.0], paradox="ignore")


# -- bilateral constraints with contacts ---------------------------------------------------------
def test_dumbbell_held_by_a_rod_constraint_matches_the_rigid_bar():
    # Two point masses (x₁, y₁, x₂, y₂) held at distance L by a holonomic constraint, both ends on a rough floor
    # (μ = 0.3, e = 0.5), against the same body as a rigid bar in minimal coordinates (x, y, θ), I = mL²/4:
    # the same impacts, Zeno accumulation, slip and stick, and the same motion.
    m, L, mu, e = 1.0, 1.0, 0.3, 0.5
    d = cl.Multibody("d", coordinates=["x1", "y1", "x2", "y2"])
    x1, y1, x2, y2 = d.coordinates
    d.kinetic_energy = 0.25 * m * ca.sumsqr(d.v)
    d.potential_energy = 0.5 * m * G * (y1 + y2)
    d.holonomic("rod", (x2 - x1) ** 2 + (y2 - y1) ** 2 - L**2)
    d.contact("a", y1, restitution=e, friction=mu, tangent=x1)
    d.contact("b", y2, restitution=e, friction=mu, tangent=x2)
    b = cl.Multibody("d", coordinates=["x", "y", "theta"])
    x, y, th = b.coordinates
    b.kinetic_energy = 0.5 * m * (b.v[0] ** 2 + b.v[1] ** 2) + 0.5 * m * L**2 / 4 * b.v[2] ** 2
    b.potential_energy = m * G * y
    b.contact("a", y - L / 2 * ca.sin(th), restitution=e, friction=mu, tangent=x - L / 2 * ca.cos(th))
    b.contact("b", y + L / 2 * ca.sin(th), restitution=e, friction=mu, tangent=x + L / 2 * ca.cos(th))
    th0, h0, vx0, w0 = 0.5, 0.8, 1.0, 2.0
    times = np.linspace(0, 1.5, 16)
    bar = cl.simulate_events(b, 1.5, [0, h0, th0], [vx0, 0, w0], times=times)
    c, s = math.cos(th0), math.sin(th0)
    dumbbell = cl.simulate_events(d, 1.5, [-L / 2 * c, h0 - L / 2 * s, L / 2 * c, h0 + L / 2 * s],
                                  [vx0 + L / 2 * s * w0, -L / 2 * c * w0, vx0 - L / 2 * s * w0, L / 2 * c * w0], times=times)
    assert [(ev["kind"], ev["contact"]) for ev in dumbbell.metadata["events"]] == [(ev["kind"], ev["contact"]) for ev in bar.metadata["events"]]
    assert {"slip", "stick"} <= {ev["kind"] for ev in bar.metadata["events"]}
    np.testing.assert_allclose([ev["time"] for ev in dumbbell.metadata["events"]], [ev["time"] for ev in bar.metadata["events"]], atol=1e-10)
    at = np.isin(bar.time, times) & np.append(np.diff(bar.time) > 0, True)
    at_d = np.isin(dumbbell.time, times) & np.append(np.diff(dumbbell.time) > 0, True)
    np.testing.assert_allclose(dumbbell["d.x1"][at_d], (bar["d.x"] - L / 2 * np.cos(bar["d.theta"]))[at], atol=1e-10)
    np.testing.assert_allclose(dumbbell["d.y2"][at_d], (bar["d.y"] + L / 2 * np.sin(bar["d.theta"]))[at], atol=1e-10)
    assert np.abs((dumbbell["d.x2"] - dumbbell["d.x1"]) ** 2 + (dumbbell["d.y2"] - dumbbell["d.y1"]) ** 2 - L**2).max() <= 1e-10


def test_acceleration_constraints_are_refused():
    b = cl.Multibody("b", coordinates=["x", "y"])
    b.kinetic_energy = 0.5 * ca.sumsqr(b.v)
    b.acceleration("hold", b.a[0])
    b.contact("floor", b.q[1])
    with pytest.raises(cl.ModelError, match="Constraint `b.hold` is an acceleration constraint"):
        cl.simulate_events(b, 1.0, [0.0, 1.0], [0.0, 0.0])


def a_frame(mu, theta, mass=1.0, length=1.0):
    """Two bars hinged at the apex (two holonomic rows close the chain), feet on a rough floor."""
    b = cl.Multibody("frame", coordinates=["x1", "y1", "a1", "x2", "y2", "a2"])
    x1, y1, a1, x2, y2, a2 = b.coordinates
    inertia = mass * length**2 / 12
    b.kinetic_energy = 0.5 * mass * (b.v[0] ** 2 + b.v[1] ** 2 + b.v[3] ** 2 + b.v[4] ** 2) + 0.5 * inertia * (b.v[2] ** 2 + b.v[5] ** 2)
    b.potential_energy = mass * G * (y1 + y2)
    half = length / 2
    b.holonomic("hinge", ca.vertcat(x1 + half * ca.sin(a1) - (x2 - half * ca.sin(a2)), y1 + half * ca.cos(a1) - (y2 + half * ca.cos(a2))))
    b.contact("left", y1 - half * ca.cos(a1), friction=mu, tangent=x1 - half * ca.sin(a1))
    b.contact("right", y2 - half * ca.cos(a2), friction=mu, tangent=x2 + half * ca.sin(a2))
    s, c = math.sin(theta), math.cos(theta)
    return b, [-half * s, half * c, theta, half * s, half * c, theta]


def test_a_frame_stands_with_the_ladder_friction_or_slides_apart():
    # statics of the hinged A-frame (legs at θ from the vertical): each foot carries mg and needs the friction
    # (mg/2) tan θ inwards, so it stands iff μ ≥ tan(θ)/2 (0.273 at θ = 0.5)
    mass, theta = 1.0, 0.5
    body, q0 = a_frame(0.28, theta, mass)
    traj = cl.simulate_events(body, 1.0, q0, [0.0] * 6, times=[1.0])
    assert max(abs(traj[f"frame.{n}"][-1] - q) for n, q in zip(("x1", "y1", "a1", "x2", "y2", "a2"), q0)) <= 1e-12
    for foot, inward in (("left", 1), ("right", -1)):
        assert traj[f"frame.{foot}.normal_force"][-1] == pytest.approx(mass * G, rel=1e-12)
        assert traj[f"frame.{foot}.friction_force"][-1] == pytest.approx(inward * mass * G / 2 * math.tan(theta), rel=1e-12)
    body, q0 = a_frame(0.27, theta, mass)
    traj = cl.simulate_events(body, 0.3, q0, [0.0] * 6, times=[0.3])
    assert [e["kind"] for e in traj.metadata["events"]] == ["closed", "closed"]  # sliding from the start
    assert traj["frame.y1"][-1] < q0[1] - 1e-3 and traj["frame.x1"][-1] == pytest.approx(-traj["frame.x2"][-1], abs=1e-12)
