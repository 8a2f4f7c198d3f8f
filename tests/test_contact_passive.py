"""Passive contacts found contact-implicitly: forces at the collocation points, free steps, bounded pushes.

References: the bead in a circular bowl is a pendulum (half period ``2√(R/g) K(sin²(θ₀/2))``,
``problems/bead_in_bowl.py``); the block sliding to rest stops at ``v₀/(μg)`` (``problems/block_to_rest.py``);
the least-time push is bang-bang, ``T* = √(2d(1/a₁ + 1/a₂))`` (``problems/least_time_block.py``); the
event-driven simulator (:func:`colloc.simulate_events`, accurate to 1e-11) is the oracle where no closed form
exists.  Tolerances follow the schemes' orders: Radau IIA with s = 3 on a closed contact (an index-3 system)
converges at order 2s − 1 = 5 in positions and s = 3 in speeds (Hairer, Lubich & Roche 1989); a constant
deceleration and a bang-bang push are integrated exactly by Hermite–Simpson once the switch is on a mesh point,
so only the solver's and the relaxation's tolerances remain there.
"""
from __future__ import annotations

import numpy as np
import pytest

import colloc as cl
from colloc.errors import OptionError
from colloc.transcription.force_points import bernstein_matrix

from test_problems import load

IPOPT = {"tol": 1e-10, "print_level": 0}


def _simulated_error(traj, body, names, q0, v0):
    """Largest error of the columns ``names`` of ``traj`` against the event-driven simulation from ``q0, v0``, on
    its grid."""
    sim = cl.simulate_events(body, float(traj.time[-1]), q0, v0, times=traj.time)
    return max(float(np.max(np.abs(np.interp(traj.time, sim.time, sim[n]) - traj[n]))) for n in names)


def _strikes(res):
    """(time, contact, impulse) of each impact of a solve whose impulse exceeds 0.1 N s (a landing, not the
    relaxation's residue)."""
    return [(i["time"], i["contact"], i["impulse"]) for i in res.contact["impacts"] if i["impulse"] > 0.1]


@pytest.fixture(scope="module")
def bowl():
    return load("bead_in_bowl")


def test_bead_in_a_bowl_swings_as_the_pendulum_at_radau_order(bowl):
    names = ["bead.x", "bead.y", "bead.x_speed", "bead.y_speed"]
    pos, sim = [], []
    for n in (10, 20):
        res = cl.solve(bowl.build(), ipopt=IPOPT, **dict(bowl.SOLVE, intervals=n))
        assert res.success
        pos.append(abs(res.trajectory.final("bead.x") + bowl.position(0.5)[0]))
        sim.append(_simulated_error(res.trajectory, bowl.bead(), names, bowl.position(0.5), [0.0, 0.0]))
    # measured: final x error 2.9e-6 / 9.7e-8 (order 4.9), state error against the simulation 1.3e-3 / 1.6e-4
    assert pos[0] < 1e-5 and np.log2(pos[0] / pos[1]) > 4.0
    assert sim[1] < 5e-4 and np.log2(sim[0] / sim[1]) > 2.5
    # the normal force follows m g (3 cos θ − 2 cos θ₀) (no force at Radau's first point, which no defect uses)
    traj = res.trajectory
    theta = np.arctan2(traj["bead.x"], 1.0 - traj["bead.y"])
    exact = 9.81 * (3 * np.cos(theta) - 2 * np.cos(0.5))
    assert np.max(np.abs(traj["bead.bowl.normal_force"][1:] - exact[1:])) < 0.05


def test_bead_sliding_with_friction_follows_the_event_driven_simulation(bowl):
    # μ = 0.1 < tan θ₀: it slides down one way over 0.5 s (no reversal); measured 9.5e-5 at 10 intervals
    body = bowl.bead(friction=0.1)
    res = cl.solve(bowl.build(friction=0.1, duration=0.5), ipopt=IPOPT, **bowl.SOLVE)
    assert res.success
    names = ["bead.x", "bead.y", "bead.x_speed", "bead.y_speed"]
    assert _simulated_error(res.trajectory, body, names, bowl.position(0.5), [0.0, 0.0]) < 5e-4


@pytest.mark.parametrize("forces", ["interval", "collocation"])
def test_block_slides_to_rest_at_the_coulomb_stop(forces):
    br = load("block_to_rest")
    res = cl.solve(br.build(), ipopt=IPOPT, **dict(br.SOLVE, contact_forces=forces))
    assert res.success
    traj = res.trajectory
    ts, xs = br.stop()
    # free steps put the stop on a mesh point, where the scheme is exact for the constant deceleration:
    # measured stop-time errors 2.4e-9 (interval) and 3.5e-8 (collocation)
    stopped = traj.time[np.argmax(np.abs(traj["block.x_speed"]) < 1e-6)]
    assert stopped == pytest.approx(ts, abs=1e-6)
    assert traj.final("block.x") == pytest.approx(xs, abs=1e-6)
    assert _simulated_error(traj, br.block(), ["block.x", "block.x_speed"], [0.0, 0.0], [2.0, 0.0]) < 1e-6


def test_least_time_push_is_never_below_the_bang_bang_minimum():
    lt = load("least_time_block")
    best = lt.least_time()
    res = cl.solve(lt.build(), ipopt=IPOPT, **lt.SOLVE)
    assert res.success
    T = res.trajectory.duration
    # before the control-hull rows: 1.1026403 at 20 intervals, 0.34 % below T* (one interval 4× longer hid a
    # push from +5 to −5 in a quadratic overshooting its bound); now 1.1063832 (relaxation error −3e-8)
    assert best - 1e-6 <= T <= best + 1e-3
    push = res.trajectory["block.push"]
    assert np.max(np.abs(push)) <= 5.0 + 1e-6


def test_bernstein_coefficients_bound_the_polynomial():
    rng = np.random.default_rng(0)
    s = np.array([0.0, 0.5, 1.0])
    C = np.linalg.inv(bernstein_matrix(2, s))
    fine = np.linspace(0, 1, 201)
    for _ in range(50):
        values = rng.uniform(-5, 5, 3)
        coef = C @ values
        poly = bernstein_matrix(2, fine) @ coef
        assert coef.min() - 1e-12 <= poly.min() and poly.max() <= coef.max() + 1e-12
        assert np.allclose(bernstein_matrix(2, s) @ coef, values)
    assert np.allclose(bernstein_matrix(3, fine).sum(axis=1), 1.0)


def test_unknown_force_placement_is_one_sentence():
    with pytest.raises(OptionError, match="contact_forces"):
        cl.solve(load("block_to_rest").build(), intervals=4, contact="implicit", contact_forces="knots")


def test_rimless_wheel_simulated_from_mid_stance_keeps_the_steady_gait():
    # McGeer 1990 / Coleman et al. 1997: each landing multiplies the rate by η = (I + ml² cos 2α)/(I + ml²); the
    # steady gait lands at ω₋ and leaves at ηω₋, a step apart by ∫ dθ/ω(θ) over [γ − α, γ + α]
    from scipy.integrate import quad

    rw = load("rimless_wheel")
    alpha, eta, w_minus, w_plus = rw.constants()
    q0, v0 = rw.initial_state()
    sim = cl.simulate_events(rw.wheel(), 1.0, q0, v0)
    landings = [e["time"] for e in sim.metadata["events"] if e["kind"] == "impact"]
    assert len(landings) == 2
    for t in landings:
        before, after = sim["wheel.theta_speed"][sim.time == t]
        assert before == pytest.approx(w_minus, rel=1e-9) and after == pytest.approx(w_plus, rel=1e-9)
    g, J, slope = 9.81, 1.1, 0.08
    step, _ = quad(lambda th: 1.0 / np.sqrt(w_plus**2 + 2 * g / J * (np.cos(slope - alpha) - np.cos(th))), slope - alpha, slope + alpha,
                   epsabs=1e-13, epsrel=1e-13)
    assert landings[1] - landings[0] == pytest.approx(step, rel=1e-8)


def test_contact_hooks_are_registered_with_their_declarations():
    from colloc.transcription.registry import CONTACT_HOOKS
    from colloc.transcription.contact_vi import ContactVIRows
    from colloc.transcription.contacts import ContactRows

    assert CONTACT_HOOKS == {"collocation": ContactRows, "midpoint-vi": ContactVIRows}
    ball = cl.Multibody("ball", coordinates=["y"])
    bouncy = ball.contact("floor", ball.coordinates[0], restitution=0.5)
    ContactRows.check([bouncy], "collocation")
    with pytest.raises(OptionError, match="plastic"):
        ContactVIRows.check([bouncy], "node")
    with pytest.raises(OptionError, match="does not apply to the midpoint-vi"):
        ContactVIRows.check([], "collocation")



#: Mesh sizes of the rimless wheel's solves (problems/rimless_wheel.py: 0.6 s, the landing at 0.293229 s).
WHEEL_MESHES = (6, 10)


def solved_at(stem, meshes):
    """``problems/<stem>.py`` and its ``build()`` solved with its ``SOLVE`` at each number of intervals."""
    module = load(stem)
    return module, {n: cl.solve(module.build(), ipopt=IPOPT, **dict(module.SOLVE, intervals=n)) for n in meshes}


@pytest.fixture(scope="module")
def wheel_walks():
    return solved_at("rimless_wheel", WHEEL_MESHES)


@pytest.mark.slow
def test_rimless_wheel_lands_and_stands_as_the_closed_form_without_a_schedule(wheel_walks):
    # McGeer 1990 / Coleman et al. 1997: the landing at ∫ dθ/ω(θ) from mid-stance leaves at ω₊ = η ω₋; the stances
    # are the inverted pendulum the event-driven simulation integrates (1e-11).  Measured at 6 / 10 intervals:
    # landing time 2.6e-8 / 2.8e-9, post-impact rate 2.3e-4 / 6.9e-5, positions 7.8e-5 / 2.4e-5
    rw, solved = wheel_walks
    _, _, _, w_plus = rw.constants()
    (landing,) = rw.landings(1)
    q0, v0 = rw.initial_state()
    timing, rate, state = [], [], []
    for n, res in solved.items():
        assert res.success, (n, res.status)
        traj = res.trajectory
        found = _strikes(res)
        assert [c for _, c, _ in found] == ["wheel.spoke1"], (n, found)
        at = traj.time == found[0][0]
        timing.append(abs(found[0][0] - landing))
        rate.append(abs(traj["wheel.theta_speed"][at][0] - w_plus))
        state.append(_simulated_error(traj, rw.wheel(), ["wheel.x", "wheel.y", "wheel.theta"], q0, v0))
    assert timing[1] < 1e-6 and rate[1] < 2e-4 and state[1] < 1e-4, (timing, rate, state)
    assert rate[1] < rate[0] / 2 and state[1] < state[0] / 2, (rate, state)


@pytest.mark.slow
def test_rimless_wheel_solution_follows_the_model_in_verify_and_a_tampered_stance_fails(wheel_walks):
    from colloc.simulate.contact_checks import check_contact_file

    rw, solved = wheel_walks
    traj = solved[WHEEL_MESHES[-1]].trajectory
    checks, _ = check_contact_file(rw.build(), traj, 1e-6, 1e-2)
    failed = {c.name for c in checks if not c.passed}
    # every check passes: the impulses the relaxation leaves at the stance's mesh points (8e-6 N s at ε = 1e-8),
    # where Newton's law gives none, lie within the interval's force error gathered at a point
    assert not failed, [c.line() for c in checks if not c.passed]
    assert {"defects", "dynamics:wheel.theta_speed", "resimulation", "newton", "impact times"} <= {c.name for c in checks}
    bad = cl.Trajectory(traj.time.copy(), {n: traj[n].copy() for n in traj.names}, dict(traj.kinds), dict(traj.parameters),
                        dict(traj.metadata))
    after = traj.time > rw.landings(1)[0] + 1e-6
    bad["wheel.theta_speed"][after] *= 1.01  # the stance after the landing 1 % faster
    checks, _ = check_contact_file(rw.build(), bad, 1e-6, 1e-2)
    assert {"defects"} <= {c.name for c in checks if not c.passed}


@pytest.fixture(scope="module")
def wheel_strides(wheel_walks):
    """The finer of ``wheel_walks``' solves one step longer: two landings (the mesh convergence is
    :func:`test_rimless_wheel_lands_and_stands_as_the_closed_form_without_a_schedule`'s; a third landing, 26
    intervals, takes another 310 CPU s)."""
    rw, solved = wheel_walks
    return rw, rw.solve_next_landing(solved[WHEEL_MESHES[-1]], IPOPT)


def _gait_errors(rw, res, count):
    """Largest landing-time, post-impact-rate and position errors of a walk over ``count`` landings against the
    closed form and the event-driven simulation."""
    _, _, _, w_plus = rw.constants()
    traj = res.trajectory
    found = _strikes(res)
    assert res.success and [c for _, c, _ in found] == [f"wheel.spoke{k}" for k in range(1, count + 1)], (res.status, found)
    timing = max(abs(t - t_closed) for (t, _, _), t_closed in zip(found, rw.landings(count)))
    rate = max(abs(traj["wheel.theta_speed"][traj.time == t][0] - w_plus) for t, _, _ in found)
    q0, v0 = rw.initial_state()
    state = _simulated_error(traj, rw.wheel(landing=count + 1), ["wheel.x", "wheel.y", "wheel.theta"], q0, v0)
    return timing, rate, state


@pytest.mark.slow
def test_rimless_wheel_lands_twice_as_the_closed_form_without_a_schedule(wheel_strides):
    # McGeer 1990 / Coleman et al. 1997: every landing of the steady gait leaves at ω₊ = η ω₋ (η = cos 2α for a point
    # hub), a step apart; the longer walk starts from the shorter one's solution moved one step on (next_step_guess),
    # every landing still free.  Measured at 10 intervals per 0.6 s, two landings (18 intervals in all): landing
    # times 2.7e-5, post-impact rates 1.2e-4, positions 7.5e-5 against the simulation (6 intervals: 8.7e-5, 3.7e-4,
    # 2.4e-4); three landings (26 intervals): 7.3e-5, 1.5e-4, 1.4e-4
    rw, two = wheel_strides
    timing, rate, state = _gait_errors(rw, two, 2)
    assert timing < 1e-4 and rate < 3e-4 and state < 2e-4, (timing, rate, state)


@pytest.mark.slow
def test_rimless_wheel_over_two_landings_passes_verify(wheel_strides):
    from colloc.simulate.contact_checks import check_contact_file

    rw, two = wheel_strides
    traj = two.trajectory
    checks, _ = check_contact_file(rw.build(float(traj.time[-1]), landing=3), traj, 1e-6, 1e-2)
    assert not [c.line() for c in checks if not c.passed]
    assert {"defects", "resimulation", "newton", "impact times"} <= {c.name for c in checks}


def test_compass_gait_simulated_from_its_fixed_point_keeps_the_period_one_gait():
    # Goswami, Thuilot & Espiau 1998: the compass gait's equations (stance foot pinned) and impact map, integrated by
    # scipy (rtol 1e-12) to their period-one fixed point, against colloc's event-driven simulation of the floating
    # walker with both feet as contacts: the strike found at the fixed point's step time, the post-impact state the
    # fixed point again with the legs' roles swapped (measured: 5e-12 in angles and rates)
    cg = load("compass_gait")
    start, duration, reduced = cg.horizon()
    q0, v0 = cg.floating_state(reduced)
    times = np.linspace(0.0, duration, 101)
    sim = cl.simulate_events(cg.walker(), duration, q0, v0, times=times)
    strikes = [e for e in sim.metadata["events"] if e["kind"] == "impact"]
    assert [e["contact"] for e in strikes] == ["walker.foot2"]
    assert strikes[0]["time"] == pytest.approx(cg.STEP_TIME - start, abs=1e-8)
    ref = cg.reference(start + times)
    for k, name in enumerate(("theta1", "theta2", "theta1_speed", "theta2_speed")):
        got = np.interp(times, sim.time, sim[f"walker.{name}"])
        assert np.max(np.abs(got - ref[:, k])) < 1e-8, name
    after = sim.time == strikes[0]["time"]
    post = [sim[f"walker.{n}"][after][-1] for n in ("theta2", "theta1", "theta2_speed", "theta1_speed")]
    assert np.allclose(post, cg.FIXED_POINT, atol=1e-8)


#: Mesh sizes of the compass gait's solves (problems/compass_gait.py: 0.58 s between two mid-stances, the strike at 0.40 s);
#: one mesh, as each solve takes about 50 CPU s (8 / 10 intervals: 53.5 / 52.2 CPU s, 2,903 / 3,017 iterations).
GAIT_MESHES = (10,)


@pytest.fixture(scope="module")
def compass_steps():
    return solved_at("compass_gait", GAIT_MESHES)


@pytest.mark.slow
def test_compass_gait_strikes_and_swaps_legs_as_the_simulation_without_a_schedule(compass_steps):
    # Goswami et al. 1998's period-one gait (the reduced model's fixed point, problems/compass_gait.py) and the
    # event-driven simulation of the same floating walker (1e-8 from it, test above) as references.  Measured at
    # 8 / 10 intervals: strike time 2.5e-6 / 3.3e-7 s, impulse 0.042 / 0.019 of 13.58 N s, leg angles 8.5e-4 / 3.8e-4 rad
    cg, solved = compass_steps
    start, duration, reduced = cg.horizon()
    q0, v0 = cg.floating_state(reduced)
    sim = cl.simulate_events(cg.walker(), duration, q0, v0, times=np.linspace(0.0, duration, 201))
    (strike,) = [e for e in sim.metadata["events"] if e["kind"] == "impact"]
    timing, impulse, state = [], [], []
    for n, res in solved.items():
        assert res.success, (n, res.status)
        traj = res.trajectory
        found = _strikes(res)
        assert [c for _, c, _ in found] == ["walker.foot2"], (n, found)
        timing.append(abs(found[0][0] - (cg.STEP_TIME - start)))
        impulse.append(abs(found[0][2] - strike["impulse"]))
        state.append(_simulated_error(traj, cg.walker(), ["walker.x", "walker.y", "walker.theta1", "walker.theta2"], q0, v0))
    assert timing[-1] < 1e-5 and impulse[-1] < 0.02 * strike["impulse"] and state[-1] < 1e-3, (timing, impulse, state)


@pytest.mark.slow
def test_compass_gait_step_follows_the_model_in_verify_and_a_dropped_strike_fails(compass_steps):
    from colloc.simulate.contact_checks import check_contact_file

    cg, solved = compass_steps
    traj = solved[GAIT_MESHES[-1]].trajectory
    checks, _ = check_contact_file(cg.build(), traj, 1e-6, 1e-2)
    failed = {c.name for c in checks if not c.passed}
    # every check passes: the strike obeys Newton's law and is found again; the 2.5e-5–3.9e-5 N s impulses the
    # relaxation leaves at the new stance's mesh points, where the law gives none, lie within that interval's force error
    assert not failed, [c.line() for c in checks if not c.passed]
    assert {"defects", "dynamics:walker.theta2_speed", "resimulation", "contact", "newton", "impact times"} <= {c.name for c in checks}
    copy = lambda: cl.Trajectory(traj.time.copy(), {n: traj[n].copy() for n in traj.names}, dict(traj.kinds),  # noqa: E731
                                 dict(traj.parameters), dict(traj.metadata))
    stray = copy()
    impulse = stray["walker.foot2.impulse"]
    rows = np.flatnonzero((impulse > 0) & (impulse < 1e-3))
    assert rows.size
    impulse[rows[-1]] = 1e-2  # a stance impulse raised 250-fold: Newton's limit there holds the force error (about
    # 0.1 N s), so the states it no longer matches catch it
    checks, _ = check_contact_file(cg.build(), stray, 1e-6, 1e-2)
    assert "defects" in {c.name for c in checks if not c.passed}
    bad = copy()
    bad["walker.foot2.impulse"][:] = 0.0  # the strike's impulse dropped
    checks, _ = check_contact_file(cg.build(), bad, 1e-6, 1e-2)
    # the interval that ends on the strike no longer reaches its pre-impact speeds, and the friction impulse is left alone
    assert {"contact", "defects", "dynamics:walker.theta2_speed"} <= {c.name for c in checks if not c.passed}
