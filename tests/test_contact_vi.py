"""Contact-implicit midpoint-vi (``scheme="midpoint-vi", contact="implicit"``): DEL rows, analytic optima, drops, errors.

References: the pushed block's optimum is derived in ``problems/pushed_block.py``
(J(T') = 12 m²d²/T'³ + (μmg)² T'); a ball dropped from rest at height h lands at
t* = √(2h/g) with speed g t* (free fall, y = h − g t²/2); the dropped bar is
compared with the event-driven simulator (``colloc.simulate_events``,
``problems/falling_bar.py``), which knows nothing of the transcription.
"""
from __future__ import annotations

import math

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.cli import commands as cli
from colloc.pipeline.driver import build_nlp
from colloc.errors import OptionError

from test_problems import load

IPOPT = {"tol": 1e-10}
G = 9.81


def rows_at(nlp, vals):
    """The NLP's constraint rows by label at the point whose blocks ``vals`` gives ({block name: array}, zero
    elsewhere)."""
    lay = nlp.layout
    w = np.zeros(lay.size)
    for name, v in vals.items():
        b = lay[name]
        w[b.offset:b.offset + b.size] = v.ravel(order="F")
    g = np.asarray(ca.Function("g", [nlp.w], [nlp.rows.g])(w)).ravel()
    return dict(zip(nlp.rows.labels(), g))


def ball(height=1.0, speed=0.5, duration=1.0, restitution=0.0):
    """A point mass released at rest in height over a frictionless floor, with a horizontal speed; no controls."""
    body = cl.Multibody("ball", coordinates=["x", "y"])
    x, y = body.coordinates
    body.kinetic_energy = 0.5 * ca.sumsqr(body.v)
    body.potential_energy = G * y
    body.contact("ground", y, restitution=restitution)
    prob = cl.Problem([body], t0=0.0, tf=duration, name="ball_drop")
    prob.initial({x: 0.0, y: height, body.speeds[0]: speed, body.speeds[1]: 0.0})
    return prob


def bar(duration=1.0):
    """The bar of ``problems/falling_bar.py`` with plastic ends, released at rest (no path rows: the contacts keep it up)."""
    body = load("falling_bar").model(restitution=0.0)
    x, y, th = body.coordinates
    prob = cl.Problem([body], t0=0.0, tf=duration, name="bar_drop")
    prob.initial({x: 0.0, y: 1.0, th: 0.4, **{v: 0.0 for v in body.speeds}})
    return prob


@pytest.fixture(scope="module")
def block():
    return load("pushed_block")


@pytest.fixture(scope="module")
def block_results(block):
    return {n: cl.solve(block.build(duration=2.0), scheme="midpoint-vi", intervals=n, contact="implicit", ipopt=IPOPT)
            for n in (10, 20, 40)}


def test_del_rows_carry_the_impulse_at_the_next_configuration():
    # hand-derived for L = ½|v|² − g y, h = 1/2: (P⁺₀ − P⁻₁)/w₁ + W_n(q₂)ᵀλ₁ with P⁺₀ = (y₁ − y₀)/h − h g/2,
    # P⁻₁ = (y₂ − y₁)/h + h g/2, w₁ = h, W_n = [0, 1]; the complementarity row is y₂ λ₁ and the last node's is
    # (y₂ + h v₂) λ₂ along the end speed v₂ = (y₂ − y₁)/h − h g/2 + h λ₂/2
    nlp = build_nlp(ball(), scheme="midpoint-vi", intervals=2, contact="implicit")
    vals = {"q": np.array([[0.0, 0.1, 0.3], [1.0, 0.7, 0.2]]), "cn": np.array([[0.5, 2.0, 3.0]]), "cq": np.array([[0.5], [0.4]])}
    row = rows_at(nlp, vals)
    h, (y0, y1, y2), lam = 0.5, vals["q"][1], vals["cn"][0]
    assert row["del:ball.y@k=1"] == pytest.approx(((y1 - y0) / h - h * G / 2 - (y2 - y1) / h - h * G / 2) / h + lam[1], abs=1e-12)
    assert row["del:ball.x@k=1"] == pytest.approx((0.1 - 0.0 - (0.3 - 0.1)) / h**2, abs=1e-12)
    assert row["complementarity:ball.ground.next_gap*normal_force@k=1"] == pytest.approx(y2 * lam[1], abs=1e-12)
    assert row["complementarity:ball.ground.next_gap*normal_force@k=2"] == pytest.approx(0.4 * lam[2], abs=1e-12)
    v2 = (y2 - y1) / h - h * G / 2 + h * lam[2] / 2
    assert row["contact:ball.y.next@k=2"] == pytest.approx(0.4 - y2 - h * v2, abs=1e-12)
    assert row["gap:ball.ground.gap@k=3"] == pytest.approx(0.4)


def test_block_converges_to_the_analytic_optimum_at_second_order(block, block_results):
    # T = 2 < T* = 2.473: J* = 3.424722, slides throughout (derived). Measured errors 1.515e-2, 3.759e-3,
    # 9.375e-4 (and 2.338e-4 at 80 intervals): the midpoint rule's second order, unchanged by the contact rows
    errors = []
    for n, res in block_results.items():
        assert res.success, (n, res.message)
        errors.append(res.objective - block.optimum(2.0))
    assert all(e > 0 for e in errors) and errors[-1] < 2e-3
    slope = -np.polyfit(np.log([10, 20, 40]), np.log(errors), 1)[0]
    assert slope >= 2.0 - 0.3


def test_block_reports_complementarity_schedule_and_friction(block_results):
    res = block_results[20]
    info = res.contact
    assert info["complementarity"]["block.floor"] <= 1e-7
    spans = info["schedule"]["block.floor"]
    slides = [(a, b) for a, b, m in spans if m == "slide"]
    assert len(slides) == 1 and slides[0][0] <= 0.1 + 1e-9 and slides[0][1] >= 1.9 - 1e-9  # slides throughout
    assert info["impacts"] == []
    traj = res.trajectory
    assert traj.metadata["contact"] == "implicit" and traj.metadata["scheme"] == "midpoint-vi"
    assert np.allclose(traj["block.floor.friction_force"][:-1], -0.1 * G, atol=1e-6)  # μmg against every step's motion
    assert np.allclose(traj["block.floor.normal_force"], G, atol=1e-6)
    assert "complementarity" in res.summary() and "slide" in res.summary()


def test_block_with_a_long_horizon_finds_a_stick_phase(block):
    # T = 4 > T*: J* = 3.173349 with a stick phase of 1.53; measured 3.5825/3.3735/3.2711 at 10/20/40 steps (a local
    # optimum that sticks first and last, error halving with the step as on collocation)
    res = cl.solve(block.build(duration=4.0), scheme="midpoint-vi", intervals=20, contact="implicit", ipopt=IPOPT)
    stick = sum(b - a for a, b, m in res.contact["schedule"]["block.floor"] if m == "stick")
    assert res.success and block.optimum(4.0) < res.objective < 12 / 4**3 + 0.981**2 * 4 - 0.5
    assert stick >= 0.8  # node spans: [0, 0.6] and [3.6, 4] at 20 steps


def test_verify_resimulates_a_midpoint_vi_contact_file(block, block_results, tmp_path, capsys):
    path = block_results[20].trajectory.write(tmp_path / "block.csv")
    code = cli.main(["verify", str(path), str(block.__file__)])
    out = capsys.readouterr().out
    assert code == 0 and "event-driven re-simulation" in out, out
    sim = cl.pipeline.contact_implicit.verify_contact(block.build(), cl.Trajectory.read(path))
    assert sim["max_error"] < 1e-2  # measured 2.0e-7: the simulator integrates the held pushes exactly


def test_dropped_ball_falls_exactly_lands_plastically_and_rests():
    # the midpoint VI is exact for a constant force at its nodes, so until the landing step y_k = 1 − g t_k²/2;
    # the step that reaches the floor and the next stop it (plastic), then the floor carries the weight
    n, h = 20, 0.05
    res = cl.solve(ball(), scheme="midpoint-vi", intervals=n, contact="implicit", ipopt=IPOPT)
    assert res.success
    traj = res.trajectory
    t, y = traj.time, traj["ball.y"]
    land = math.sqrt(2 / G)
    free = t < land - h
    assert np.abs(y[free] - (1 - G * t[free] ** 2 / 2)).max() < 1e-7
    assert np.abs(traj["ball.y_speed"][free] + G * t[free]).max() < 1e-6
    rest = t > land + h
    assert np.abs(y[rest]).max() < 1e-7 and np.abs(traj["ball.y_speed"][rest]).max() < 1e-6
    assert np.allclose(traj["ball.ground.normal_force"][rest], G, atol=1e-5)
    assert np.allclose(traj["ball.x"], 0.5 * t, atol=1e-9)  # frictionless: the horizontal motion goes on
    assert res.contact["complementarity"]["ball.ground"] <= 1e-7
    (impact,) = res.contact["impacts"]
    # the impulse of the two landing steps: m g t* plus at most the weight over them (measured 5.15 against 4.43)
    assert land <= impact["time"] < land + h
    assert G * land <= impact["impulse"] <= G * land + 2 * h * G
    sim = cl.pipeline.contact_implicit.verify_contact(ball(), traj)  # the event-driven simulator from the same start
    assert sim["events"][0]["kind"] == "impact" and sim["events"][0]["time"] == pytest.approx(land, abs=1e-9)
    assert max(sim["errors"][n].max() for n in ("ball.x", "ball.y")) < 1e-7 and sim["final_error"] < 1e-6


def test_dropped_bar_matches_the_event_driven_simulator():
    # plastic ends: the left one lands (t = 0.405), the bar turns about it, the right one lands (t = 0.468) and it
    # rests flat. Measured at 25 steps: largest coordinate error 3.8e-3 over time (impacts resolved to a step; the
    # speeds differ by their jump within the impact steps), final state error 3e-9
    prob = bar()
    res = cl.solve(prob, scheme="midpoint-vi", intervals=25, contact="implicit", ipopt=IPOPT)
    assert res.success
    assert [i["contact"] for i in res.contact["impacts"]] == ["bar.left", "bar.right"]
    sim = cl.pipeline.contact_implicit.verify_contact(prob, res.trajectory)
    assert [e["contact"] for e in sim["events"] if e["kind"] == "impact"][:1] == ["bar.left"]
    assert max(sim["errors"][n].max() for n in ("bar.x", "bar.y", "bar.theta")) < 1e-2 and sim["final_error"] < 1e-6
    events = {e["contact"]: e["time"] for e in sim["events"] if e["kind"] == "impact"}
    for i in res.contact["impacts"]:  # each impact within a step of the simulator's
        assert abs(i["time"] - events[i["contact"]]) <= 1.0 / 25 + 1e-9


@pytest.mark.parametrize("make, kwargs, match", [
    (lambda: ball(restitution=0.5), {}, "plastic"),
    (lambda: ball(), dict(mode="implicit"), "does not apply"),
    (lambda: ball(), dict(relaxation=-1.0), "relaxation"),
    (lambda: ball(), dict(impacts="yes"), "impacts"),
    (lambda: ball(), dict(contact="explicit"), "only one is contact='implicit'"),
])
def test_bad_contact_vi_input_is_one_sentence(make, kwargs, match):
    kwargs.setdefault("contact", "implicit")
    with pytest.raises(OptionError, match=match):
        cl.solve(make(), scheme="midpoint-vi", intervals=4, **kwargs)


def test_bar_landing_finds_the_passive_landing():
    # problems/bar_landing.py: left alone the bar lands and rests flat, J* = 0 (derived there). Collocation puts the
    # impacts on mesh points and ends at a local optimum (J = 31.97, 20 intervals); the steps' impulses land within
    # a step, and from the same default guess the homotopy finds u ≡ 0 (measured J = 3e-19 at 20 steps)
    bar_landing = load("bar_landing")
    res = cl.solve(bar_landing.build(), scheme="midpoint-vi", intervals=20, contact="implicit", ipopt={"tol": 1e-9})
    assert res.success and res.objective < 1e-8
    assert [i["contact"] for i in res.contact["impacts"]] == ["bar.left", "bar.right"]
    sim = cl.pipeline.contact_implicit.verify_contact(bar_landing.build(), res.trajectory)
    assert sim["final_error"] < 1e-6  # measured 7e-14
    assert max(sim["errors"][n].max() for n in ("bar.x", "bar.y", "bar.theta")) < 1e-2  # measured 3.1e-3


def test_pendulum_with_a_rod_lands_on_the_floor_and_rests():
    # a bob on a rod (holonomic, Cartesian coordinates) anchored 0.8 above the floor, released level: it swings as
    # the minimal-coordinate pendulum does (its event-driven simulation) and stops plastically where the rod's
    # circle meets the floor, θ* = acos(0.8), the floor carrying the weight and the rod slack
    a, n = 0.8, 20
    body = cl.Multibody("bob", coordinates=["x", "y"])
    x, y = body.coordinates
    body.kinetic_energy = 0.5 * ca.sumsqr(body.v)
    body.potential_energy = G * y
    body.holonomic("rod", x**2 + (y - a) ** 2 - 1)
    body.contact("floor", y)
    prob = cl.Problem([body], t0=0.0, tf=1.0, name="pendulum_floor")
    prob.initial({x: 1.0, y: a, **{v: 0.0 for v in body.speeds}})
    res = cl.solve(prob, scheme="midpoint-vi", intervals=n, contact="implicit", ipopt=IPOPT)
    assert res.success
    traj = res.trajectory
    t, theta = traj.time, np.arctan2(traj["bob.x"], a - traj["bob.y"])
    minimal = cl.Multibody("pendulum", coordinates=["theta"])
    minimal.kinetic_energy = 0.5 * minimal.v[0] ** 2
    minimal.potential_energy = -G * ca.cos(minimal.coordinates[0])
    minimal.contact("floor", a - ca.cos(minimal.coordinates[0]))
    sim = cl.simulate_events(minimal, 1.0, [math.pi / 2], [0.0], times=t)
    land = sim.metadata["events"][0]["time"]  # 0.44127
    _, last = np.unique(sim.time[::-1], return_index=True)  # the row after each event
    expected = np.interp(t, sim.time[::-1][last], sim["pendulum.theta"][::-1][last])
    outside = np.abs(t - land) > 1.0 / n  # the landing step is resolved to a step
    assert np.abs(theta - expected)[outside].max() < 5e-3  # measured 2.8e-3 (the midpoint rule's error at h = 0.05)
    rest = t > land + 1.0 / n
    assert np.abs(theta[rest] - math.acos(a)).max() < 1e-7 and np.abs(expected[rest] - math.acos(a)).max() < 1e-7
    assert np.allclose(traj["bob.floor.normal_force"][rest], G, atol=1e-5)
    assert np.abs(traj["bob.rod.lambda"][rest]).max() < 1e-5
    assert land <= res.contact["impacts"][0]["time"] < land + 1.0 / n
