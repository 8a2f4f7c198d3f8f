"""``colloc verify`` of contact-implicit files with 3-D friction: a correct file passes, each tampering is caught.

Files: a point mass released sliding on the floor (4-facet cone, ``tests/test_contact3d.py``'s, stopping where the
event-driven simulator does), a point mass pushed obliquely (circular cone), and a ball with a vertical lift that
must bounce once, with friction, on its way to a target off its launch plane (the 3-D ``bounce_to_target``: a
friction impulse at the bounce).  The oracles are independent of the files: the event-driven simulator with its
3-D cones and Newton's impact law with Coulomb's friction impulse.
"""
from __future__ import annotations

import math

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.cli import commands as cli
from colloc.simulate.contact_checks import check_contact_file

from test_contact3d import G, IPOPT, pushed, released
from test_verify_contact import copy, failed  # a file copied to tamper with; the checks it fails


@pytest.fixture(scope="module")
def sliding():
    res = cl.solve(released("polyhedral", 0.3)[1], scheme="hermite-simpson", intervals=6, contact="implicit", impacts=False,
                   ipopt=IPOPT)
    assert res.success
    return (lambda: released("polyhedral", 0.3)[1]), res.trajectory


def test_sliding_box_with_a_polyhedral_cone_passes_every_check(sliding):
    build, traj = sliding
    checks, info = check_contact_file(build(), traj, 1e-6, 1e-2)
    assert all(c.passed for c in checks), [c.line() for c in checks if not c.passed]
    assert {"contact", "resimulation", "newton", "impact times", "defects"} <= {c.name for c in checks}
    assert any(e["kind"] == "stick" for e in info["simulation"]["events"])  # the simulator stops the box too


def test_pushed_box_with_a_circular_cone_passes_every_check():
    # the circular cone's relaxation μλ|ṡ| + fᵀṡ ≤ ε turns the friction by √(2ε/(μλ|ṡ|)) (1.2e-4 N across the
    # motion at ε = 1e-8): the budget counts that force error, which the contact check bounds
    res = cl.solve(pushed("circular", 0.5), intervals=10, contact="implicit", impacts=False, free_steps=False, ipopt=IPOPT)
    assert res.success
    checks, _ = check_contact_file(pushed("circular", 0.5), res.trajectory, 1e-6, 1e-2)
    assert all(c.passed for c in checks), [c.line() for c in checks if not c.passed]
    # the force term (the contact law's force varies inside an interval where the file's is constant) makes the
    # whole-horizon estimate exceed what the box's coordinates span after a while (simulation 7e-7 off, estimate
    # 0.27): the check says where it stops binding instead of passing silently
    (resim,) = [c for c in checks if c.name == "resimulation"]
    assert "does not bind" in resim.message, resim.message


def _sliding_rows(traj):
    lam = traj["box.floor.normal_force"]
    return np.flatnonzero((lam > 0.5) & (np.hypot(traj["box.x_speed"], traj["box.y_speed"]) > 0.1))


def test_friction_rotated_inside_its_cone_is_caught(sliding):
    # a quarter turn keeps the force inside the square cone (its polygon is symmetric under it) but no longer
    # against the sliding: maximal dissipation fails, and the motion it would cause is not the file's
    build, traj = sliding
    bad = copy(traj)
    rows = _sliding_rows(traj)
    f1, f2 = traj["box.floor.friction_force_1"][rows], traj["box.floor.friction_force_2"][rows]
    bad["box.floor.friction_force_1"][rows], bad["box.floor.friction_force_2"][rows] = -f2, f1
    assert "contact" in failed(build(), bad)


def test_friction_inflated_beyond_its_cone_is_caught(sliding):
    build, traj = sliding
    bad = copy(traj)
    rows = _sliding_rows(traj)
    for n in ("box.floor.friction_force_1", "box.floor.friction_force_2"):
        bad[n][rows] *= 1.2
    bad_checks = failed(build(), bad)
    assert "contact" in bad_checks and {"dynamics:box.x_speed", "dynamics:box.y_speed"} & bad_checks


def test_a_state_segment_replaced_is_caught(sliding):
    # a third of box.y replaced by a straight line between its ends: the re-simulation and the intervals catch it
    build, traj = sliding
    bad = copy(traj)
    n = traj.time.size
    a, b = n // 3, 2 * n // 3
    bad["box.y"][a:b] = np.linspace(traj["box.y"][a], traj["box.y"][b], b - a) + 1e-3
    assert {"resimulation", "dynamics:box.y"} & failed(build(), bad)


def bounce3d(cone="polyhedral", friction=0.1, duration=0.8, target=(2.0, 0.5, 1.0), restitution=0.9):
    """A unit ball with a vertical lift from (0, 0, 1) to ``target`` rising, on a floor with 3-D friction: it must
    bounce; least ``½|v(0)|² + ∫u² dt`` (``problems/bounce_to_target.py`` turned out of its plane)."""
    body = cl.Multibody("ball", coordinates=["x", "y", "z"])
    body.kinetic_energy = 0.5 * ca.sumsqr(body.v)
    body.potential_energy = G * body.q[2]
    u = body.control("lift", bounds=(-30.0, 30.0))
    body.generalized_force = ca.vertcat(0, 0, u)
    body.point_contact("floor", body.q, friction=friction, restitution=restitution, cone=cone, facets=4)
    x, y, z = body.coordinates
    vx, vy, vz = body.speeds
    prob = cl.Problem([body], t0=0.0, tf=duration, name="bounce3d")
    prob.initial({x: 0.0, y: 0.0, z: 1.0})
    prob.final({x: target[0], y: target[1], z: target[2], vz: (0.0, math.inf)})
    prob.minimize(integral=u**2, final=prob.at_t0(0.5 * (vx**2 + vy**2 + vz**2)))
    prob.guess({z: ([0.0, 0.5 * duration, duration], [1.0, 0.0, 1.0]), vx: target[0] / duration, vy: target[1] / duration,
                vz: ([0.0, 0.4999 * duration, 0.5 * duration, duration], [-2 / duration, -2 / duration, 2 / duration, 2 / duration])})
    return prob


@pytest.fixture(scope="module")
def bounce():
    # measured: one impact at t = 0.39309, impulse 8.8912, friction impulse (−0.88912, 0) = μ P on the cone's
    # vertex against the slip (the slip's angle, 13°, is inside that vertex's 90° sector); 16 intervals, free steps
    # (at 10 and 12 an earlier version's homotopy ended in a restoration failure; on 27 Nov both solved, J 5.4379469)
    res = cl.solve(bounce3d(), intervals=16, contact="implicit", free_steps=True, ipopt=IPOPT)
    assert res.success, res.message
    return res.trajectory


@pytest.mark.slow
def test_bounce_with_a_friction_impulse(bounce, tmp_path, capsys):
    traj = bounce
    checks, info = check_contact_file(bounce3d(), traj, 1e-6, 1e-2)
    assert all(c.passed for c in checks), [c.line() for c in checks if not c.passed]
    (it, event), = info["simulation"]["matched"]
    assert it["impulse"] == pytest.approx(event["impulse"], rel=1e-4)
    k = it["row"]
    friction = np.hypot(traj["ball.floor.friction_impulse_1"][k], traj["ball.floor.friction_impulse_2"][k])
    assert friction == pytest.approx(0.1 * it["impulse"], rel=1e-6)  # sliding through the impact: on the cone
    # impulses zeroed: Newton's law, the interval before and the re-simulation all disagree
    bad = copy(traj)
    for n in ("ball.floor.impulse", "ball.floor.friction_impulse_1", "ball.floor.friction_impulse_2"):
        bad[n][:] = 0.0
    assert {"dynamics:ball.z_speed", "impact times"} <= failed(bounce3d(), bad)
    # the friction impulse rotated by a quarter turn (inside the square cone): maximal dissipation fails
    bad = copy(traj)
    p1, p2 = traj["ball.floor.friction_impulse_1"][k], traj["ball.floor.friction_impulse_2"][k]
    bad["ball.floor.friction_impulse_1"][k], bad["ball.floor.friction_impulse_2"][k] = -p2, p1
    assert {"dynamics:ball.x_speed", "dynamics:ball.y_speed"} & failed(bounce3d(), bad)
    # inflated beyond the cone
    bad = copy(traj)
    bad["ball.floor.friction_impulse_1"][k] *= 1.5
    assert "contact" in failed(bounce3d(), bad)


# -- every kind of tampering on the 3-D bounce, and the constraints a single-phase file gets checked ------------
def bounce3d_constrained():
    """``bounce3d`` with a path constraint (the ball stays on the target's side of y = 0.5) and a boundary row (the
    speed across the throw, which the bounce's friction impulse on the cone's −x vertex leaves alone, ends as it
    starts): the solved file satisfies both, so it must pass them, and fail them once edited."""
    prob = bounce3d()
    body = prob.model.components[0]
    y, vy = body.coordinates[1], body.speeds[1]
    prob.path(y, upper=0.5, name="corridor")
    prob.boundary(prob.at_tf(vy) - prob.at_t0(vy), name="across")
    return prob


@pytest.mark.slow
def test_the_correct_bounce_passes_its_path_and_boundary_constraints(bounce):
    checks, _ = check_contact_file(bounce3d_constrained(), bounce, 1e-6, 1e-2)
    assert all(c.passed for c in checks), [c.line() for c in checks if not c.passed]
    assert {"bounds", "corridor", "across"} <= {c.name.split(":")[-1] for c in checks}, [c.name for c in checks]


@pytest.mark.slow
def test_edits_of_bounds_path_and_boundary_are_caught(bounce):
    k = int(np.argmax(bounce["ball.floor.impulse"]))
    bad = copy(bounce)
    bad["ball.lift"][3] = 31.0  # bounds (−30, 30)
    assert "bounds" in failed(bounce3d_constrained(), bad)
    bad = copy(bounce)
    bad["ball.y"][k + 2:] += 0.05  # past the corridor after the bounce
    assert any("corridor" in name for name in failed(bounce3d_constrained(), bad))
    bad = copy(bounce)
    bad["ball.y_speed"][-1] += 1e-3
    assert any("across" in name for name in failed(bounce3d_constrained(), bad))


@pytest.mark.slow
def test_an_impact_shifted_half_an_interval_in_3d_is_caught(bounce):
    bad = copy(bounce)
    t, j = bad.time, int(np.argmax(bounce["ball.floor.impulse"]))
    t[j] += 0.5 * (t[j + 2] - t[j])
    t[j - 1], t[j + 1] = 0.5 * (t[j - 2] + t[j]), 0.5 * (t[j] + t[j + 2])
    assert {"impact times", "newton", "resimulation"} <= failed(bounce3d(), bad)


@pytest.mark.slow
@pytest.mark.parametrize("state", ["ball.x", "ball.z", "ball.z_speed"])
def test_a_third_of_a_state_replaced_in_3d_is_caught(bounce, state):
    bad = copy(bounce)
    n = bad.time.size
    a, b = n // 3, 2 * n // 3
    bad[state][a:b] = np.interp(bad.time[a:b], bad.time[[a, b]], bad[state][[a, b]])
    assert f"dynamics:{state}" in failed(bounce3d(), bad)


@pytest.mark.slow
def test_a_3d_throw_that_misses_its_target_is_caught(bounce):
    bad = copy(bounce)
    bad["ball.y"][:] *= 0.99
    assert "final" in failed(bounce3d(), bad)


@pytest.mark.slow
@pytest.mark.parametrize("speed", ["ball.x_speed", "ball.y_speed", "ball.z_speed"])
def test_a_3d_launch_speed_changed_by_1e_3_is_caught_over_the_whole_horizon(bounce, speed):
    bad = copy(bounce)
    bad[speed][0] += 1e-3
    assert "resimulation" in failed(bounce3d(), bad)


def landing(cone="polyhedral"):
    """A unit ball from (0, 0, 1) to the floor at (1, 0.5) at t_f = 0.5, with least launch energy and vertical lift."""
    body = cl.Multibody("ball", coordinates=["x", "y", "z"])
    body.kinetic_energy = 0.5 * ca.sumsqr(body.v)
    body.potential_energy = G * body.q[2]
    u = body.control("lift", bounds=(-30.0, 30.0))
    body.generalized_force = ca.vertcat(0, 0, u)
    body.point_contact("floor", body.q, friction=0.3, cone=cone)
    x, y, z = body.coordinates
    vx, vy, vz = body.speeds
    prob = cl.Problem([body], t0=0.0, tf=0.5, name="landing3d")
    prob.initial({x: 0.0, y: 0.0, z: 1.0})
    prob.final({x: 1.0, y: 0.5, z: 0.0})
    prob.minimize(integral=u**2, final=prob.at_t0(0.5 * (vx**2 + vy**2 + vz**2)))
    prob.guess({z: (1.0, 0.0), vx: 2.0, vy: 1.0})
    return prob


@pytest.mark.slow
def test_a_3d_throw_landing_exactly_at_the_final_time_passes():
    # square cone: it arrives falling at 4.4 m/s, so the simulator's impact falls at t_f to round-off (measured: every
    # check passes)
    prob = landing()
    res = cl.solve(prob, intervals=10, contact="implicit", ipopt=IPOPT)
    assert res.success and res.trajectory["ball.z_speed"][-1] < -4
    checks, _ = check_contact_file(prob, res.trajectory, 1e-6, 1e-2)
    assert all(c.passed for c in checks), [c.line() for c in checks if not c.passed]


@pytest.mark.slow
def test_a_3d_impulse_changed_by_one_per_mille_breaks_newtons_law(bounce):
    bad = copy(bounce)
    k = int(np.argmax(bounce["ball.floor.impulse"]))
    bad["ball.floor.impulse"][k] *= 1.001
    assert "newton" in failed(bounce3d(), bad)
