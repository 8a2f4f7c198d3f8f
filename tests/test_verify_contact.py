"""``colloc verify`` of contact-implicit files: a correct file passes, each kind of tampering is caught.

The files are written by solving two small problems contact-implicitly (10 intervals): the ball of
``problems/bounce_to_target.py`` that bounces once on its way to the target (reference optimum 3.98359237 from the
two-phase solve), and a ball thrown so that it lands exactly at ``t_f``.  The oracle of every check is
independent of the file: the event-driven simulator (matched closed forms to 1e-11, docs/contacts.md) and
Newton's restitution law.
"""
from __future__ import annotations

import numpy as np
import pytest

import colloc as cl
from colloc.cli import commands as cli
from colloc.simulate.contact_checks import check_contact_file, robust_local_errors

from test_problems import load

IPOPT = {"tol": 1e-10}


def landing_problem():
    """From (0, 1) to the ground at (1, 0) at t_f = 0.5 with the least launch energy and lift: lands at t_f."""
    bt = load("bounce_to_target")
    body = bt.ball(lift=True)
    x, y = body.coordinates
    vx, vy = body.speeds
    u = body.variable("ball.lift").symbol
    prob = cl.Problem([body], t0=0.0, tf=0.5, name="landing")
    prob.initial({x: 0.0, y: 1.0})
    prob.final({x: 1.0, y: 0.0})
    prob.minimize(integral=u**2, final=prob.at_t0(0.5 * (vx**2 + vy**2)))
    prob.guess({y: (1.0, 0.0), vx: 2.0})
    return prob


@pytest.fixture(scope="module")
def ball():
    bt = load("bounce_to_target")
    res = cl.solve(bt.build(), **bt.SOLVE, ipopt=IPOPT)
    assert res.success and res.objective == pytest.approx(bt.REFERENCE["value"], abs=bt.REFERENCE["tolerance"])
    return bt.build(), res.trajectory


def copy(traj):
    return cl.Trajectory(traj.time.copy(), {n: traj[n].copy() for n in traj.names}, dict(traj.kinds), dict(traj.parameters),
                         dict(traj.metadata))


def failed(problem, traj):
    checks, _ = check_contact_file(problem, traj, 1e-6, 1e-2)
    return {c.name for c in checks if not c.passed}


def impact_row(traj):
    return int(np.argmax(traj["ball.ground.impulse"]))


def test_correct_bouncing_ball_passes_every_check(ball):
    # measured: resimulation at 0.03 of its tolerance, Newton 3e-6, impact time 3e-3 (difference 2.6e-10 s)
    problem, traj = ball
    checks, info = check_contact_file(problem, traj, 1e-6, 1e-2)
    assert all(c.passed for c in checks), [c.line() for c in checks if not c.passed]
    names = {c.name for c in checks}
    assert {"initial", "final", "bounds", "contact", "resimulation", "newton", "impact times"} <= names
    assert {f"dynamics:{s}" for s in ("ball.x", "ball.y", "ball.x_speed", "ball.y_speed")} <= names
    assert "does not bind" not in {c.name: c for c in checks}["resimulation"].message  # binding over the whole horizon
    (it,) = info["budget"]["impacts"]
    assert it["newton"] == pytest.approx(it["impulse"], rel=1e-6)
    assert it["time_error"] < 1e-8


def test_ball_landing_exactly_at_the_final_time_passes():
    problem = landing_problem()
    res = cl.solve(problem, intervals=10, contact="implicit", ipopt=IPOPT)
    assert res.success and res.trajectory["ball.y"][-1] == pytest.approx(0.0, abs=1e-9)
    assert res.trajectory["ball.y_speed"][-1] < -4  # it arrives falling: the simulator impacts at t_f
    checks, info = check_contact_file(problem, res.trajectory, 1e-6, 1e-2)
    assert all(c.passed for c in checks), [c.line() for c in checks if not c.passed]
    landing = info["simulation"]["landing"]
    assert landing is not None and landing["time"] == pytest.approx(0.5, abs=1e-8)


def test_zeroed_impulses_are_caught(ball):
    problem, traj = ball
    bad = copy(traj)
    bad["ball.ground.impulse"][:] = 0.0
    assert {"dynamics:ball.y_speed", "resimulation", "impact times"} <= failed(problem, bad)


def test_an_impact_shifted_by_half_an_interval_is_caught(ball):
    # the impact's mesh point moved half an interval later, the midpoints on either side kept in the middle
    problem, traj = ball
    bad = copy(traj)
    t, j = bad.time, impact_row(traj)
    t[j] += 0.5 * (t[j + 2] - t[j])
    t[j - 1], t[j + 1] = 0.5 * (t[j - 2] + t[j]), 0.5 * (t[j] + t[j + 2])
    assert {"impact times", "newton", "resimulation"} <= failed(problem, bad)


def test_a_third_of_a_state_replaced_is_caught(ball):
    problem, traj = ball
    bad = copy(traj)
    n = bad.time.size
    a, b = n // 3, 2 * n // 3
    col = bad["ball.y"]
    col[a:b] = np.interp(bad.time[a:b], bad.time[[a, b]], col[[a, b]])
    assert "dynamics:ball.y" in failed(problem, bad)


def test_a_throw_that_misses_its_target_is_caught(ball):
    problem, traj = ball
    bad = copy(traj)
    bad["ball.x"][:] *= 0.99  # lands 2 cm short
    assert "final" in failed(problem, bad)


def test_a_launch_speed_changed_by_1e_3_is_caught_over_the_whole_horizon(ball):
    # each interval alone is within the dynamics tolerance (1e-2); the whole-horizon comparison sees it (as do
    # the defects and derivative columns, which read the stored x.dot)
    problem, traj = ball
    bad = copy(traj)
    bad["ball.x_speed"][0] += 1e-3
    checks, info = check_contact_file(problem, bad, 1e-6, 1e-2)
    # (and the objective: its launch energy ½|v(0)|² is recomputed from the file)
    assert {c.name for c in checks if not c.passed} == {"resimulation", "defects", "derivatives", "objective"}
    # the edit inflates its own interval's local error (7.6e-5 in x): counted at most 1000x the median, the
    # tolerance at t_f stays far below the 8e-4 by which the throw now misses
    _, correct = check_contact_file(problem, traj, 1e-6, 1e-2)
    tol, ok = info["budget"]["tolerance"][:, -1], correct["budget"]["tolerance"][:, -1]
    assert tol.max() < 1e-5 and np.all(tol < 10 * ok)


def test_an_impulse_changed_by_one_per_mille_breaks_newtons_law(ball):
    problem, traj = ball
    bad = copy(traj)
    bad["ball.ground.impulse"][impact_row(traj)] *= 1.001
    # each interval's defects close on the pre-impact state the impulse implies, so they see it too
    assert failed(problem, bad) == {"newton", "defects"}


def test_robust_local_errors_ignore_edited_intervals():
    e = np.full(20, 1e-9)
    e[[0, 7, 8, 9, 10, 11, 12, 13]] = 1e-3  # fewer than half the intervals edited: counted as 1000x the median
    assert robust_local_errors(e).max() == pytest.approx(1e-6)
    assert robust_local_errors(e)[1] == 1e-9


def test_cli_verify_of_contact_files(ball, tmp_path, capsys):
    problem, traj = ball
    good, bad = tmp_path / "ball.csv", tmp_path / "short.csv"
    traj.write(good)
    tampered = copy(traj)
    tampered["ball.x_speed"][0] += 1e-3
    tampered.write(bad)
    script = str(load("bounce_to_target").__file__)
    assert cli.main(["verify", str(good), script]) == 0
    out = capsys.readouterr().out
    assert "pass  resimulation" in out and "pass  newton" in out and "verified" in out
    assert cli.main(["verify", str(bad), script]) != 0
    out = capsys.readouterr().out
    assert "FAIL  resimulation" in out and "verification failed" in out


@pytest.fixture(scope="module")
def stuck_block():
    """pushed_block, T = 4 > T* = 2.473: sticks for T − T* = 1.527 then slides (derived in the problem)."""
    block = load("pushed_block")
    res = cl.solve(block.build(duration=4.0), intervals=10, contact="implicit", impacts=False, free_steps=True, ipopt=IPOPT)
    assert res.objective == pytest.approx(block.optimum(4.0), abs=1e-4)
    return block.build(duration=4.0), res


def test_block_that_sticks_then_slides_passes(stuck_block):
    # the simulator must find the same slip with the file's push (measured: resimulation at 0.05 of its tolerance)
    problem, res = stuck_block
    checks, info = check_contact_file(problem, res.trajectory, 1e-6, 1e-2)
    assert all(c.passed for c in checks), [c.line() for c in checks if not c.passed]
    assert any(e["kind"] == "slip" for e in info["simulation"]["events"])


def test_a_re_simulation_that_stops_is_a_failed_check(ball, monkeypatch):
    # a robot's open-loop re-simulation may stop (the integrator's step underflows, as for Solo12's trot at
    # 8 intervals); verify reports it as its `resimulation` check with the other checks, it does not raise
    import importlib

    contact_checks = importlib.import_module("colloc.simulate.contact_checks")

    def stops(problem, traj):
        raise cl.SimulationError("The integrator failed after t = 0.1: Required step size is less than spacing between numbers.")

    monkeypatch.setattr(contact_checks, "simulate_file", stops)
    problem, traj = ball
    checks, info = check_contact_file(problem, traj, 1e-6, 1e-2)
    judged = {c.name: c for c in checks}
    assert not judged["resimulation"].passed and "stopped" in judged["resimulation"].message
    assert judged["defects"].passed and judged["contact"].passed and info == {}


def with_a_fake_impact(monkeypatch, impulse, speed, local=True):
    """The event-driven re-simulation of every check made to report an impact of the ball at its second row; with
    ``local`` the simulation from the file's state an interval before finds it too (else it is the whole-horizon
    simulation's alone, as its drift would be)."""
    import importlib

    checks = importlib.import_module("colloc.simulate.contact_checks")
    real, real_local = checks.simulate_file, checks.local_impacts
    fake = dict(kind="impact", contact="ball.ground", impulse=impulse, speed=speed)

    def simulate(problem, traj, **options):
        sim, system = real(problem, traj, **options)
        fake["time"] = float(sim.time[1])
        sim.metadata["events"] = [fake] + list(sim.metadata.get("events", []))
        return sim, system

    def simulate_locally(problem, traj, start, stop):
        sim, system, found = real_local(problem, traj, start, stop)
        return sim, system, found + ([dict(fake)] if local and traj.time[start] <= fake["time"] <= stop else [])

    monkeypatch.setattr(checks, "simulate_file", simulate)
    monkeypatch.setattr(checks, "local_impacts", simulate_locally)


def test_a_slow_extra_impact_early_on_is_not_taken_for_a_landing_at_the_final_time(ball, monkeypatch):
    # a simulated impact the file lacks, near t0 and with a closing speed of 1e-14: |t - t_f| |speed| is tiny, but an
    # impact a whole horizon before t_f is no landing there; the final state must stay compared with the simulation's
    problem, traj = ball
    with_a_fake_impact(monkeypatch, 1.0, -1e-14)
    _, info = check_contact_file(problem, traj, 1e-6, 1e-2)
    assert info["simulation"]["landing"] is None
    assert any(e["time"] == pytest.approx(traj.time[0], abs=1e-3) for e in info["simulation"]["extra"])


def test_an_edited_objective_of_a_contact_file_is_caught(ball):
    # the bounce's objective (3.98359237, the two-phase solve's) is recomputed from the file with each interval's
    # end controls (free steps), to within the steps' pull towards the given mesh (≤ 1e-5 · 9 per interval)
    problem, traj = ball
    checks, _ = check_contact_file(problem, traj, 1e-6, 1e-2)
    (objective,) = [c for c in checks if c.name == "objective"]
    assert objective.passed and float(objective.message.split("recomputed ")[1]) == pytest.approx(3.98359237, abs=1e-4)
    bad = copy(traj)
    bad.metadata["objective"] = 0.99 * traj.metadata["objective"]
    assert failed(problem, bad) == {"objective"}


@pytest.mark.parametrize("edit", ["normal force doubled", "friction inside the cone", "a push below the friction limit"])
def test_a_stance_whose_forces_the_contact_law_overrides_still_fails_on_its_forces(stuck_block, edit):
    # On the intervals where every loaded contact sticks, the per-interval dynamics pass if EITHER the file's forces
    # or the contact law (the event-driven simulation of the interval alone) end on the file's state.  Edit the
    # stance's forces or its push (still below μmg = 0.981, so the block truly stays put): the contact law ends on
    # the file's state, so the dynamics pass, and the edit must be caught where the forces are judged, at every
    # collocation point against the model (`derivatives`) and by the scheme's defects.
    problem, res = stuck_block
    traj = res.trajectory
    stance = np.flatnonzero(traj.time < 1.5)  # the stick ends at 1.527
    bad = copy(traj)
    if edit == "normal force doubled":
        bad["block.floor.normal_force"][stance] *= 2
    elif edit == "friction inside the cone":
        bad["block.floor.friction_force"][stance] = 0.5
    else:
        bad["block.push"][stance] = bad["block.push.interval_end"][stance] = 0.5
    failing = failed(problem, bad)
    assert not any(name.startswith("dynamics:") for name in failing), failing
    assert {"derivatives", "defects"} <= failing


def test_an_edited_initial_state_is_caught(ball):
    problem, traj = ball
    bad = copy(traj)
    bad["ball.y"][0] += 1e-3  # launched from (0, 1.001): the problem fixes (0, 1)
    assert "initial" in failed(problem, bad)


def test_an_impulse_newtons_law_cannot_tell_from_zero_need_not_be_found_again():
    # a planted foot's stray impulse (the biped's 1e-4 N s just after its strike, the relaxation's residue) is within
    # the impulse the speeds' error allows (`newton_limit`): the simulator, whose foot stays planted, has no impact there
    from colloc.simulate.contact_checks import _impact_time_check

    traj = cl.Trajectory(np.linspace(0.0, 1.0, 5), {}, {}, {}, {})
    stray = dict(contact="foot", time=0.5, row=2, impulse=1e-4, newton=2e-5, newton_limit=2e-3, time_tolerance=1e-3)
    sim = dict(matched=[(stray, None)], extra=[], landing=None)
    judged = _impact_time_check(traj, sim, {})
    assert judged.passed and "(1 within Newton's limit of zero)" in judged.message
    stray.update(impulse=5e-3)  # beyond what Newton's law allows from zero: an impact the simulator must find
    assert not _impact_time_check(traj, sim, {}).passed


def test_a_stopped_resimulation_says_how_far_it_had_left_the_file():
    # a file and a simulation that differ by 0.25 in `b.v` at t = 0.5 and stop at 0.7, before the last mesh point 1
    from colloc.simulate.checks import departure

    t = np.linspace(0.0, 1.0, 5)
    traj = cl.Trajectory(t, {"b.x": t.copy(), "b.v": np.ones(5)})
    ts = np.array([0.0, 0.25, 0.5, 0.5, 0.7])
    partial = cl.Trajectory(ts, {"b.x": ts.copy(), "b.v": np.array([1.0, 1.0, 1.0, 1.25, 1.5])})
    text = departure(traj, partial, ["b.x", "b.v"], np.arange(5))
    assert text == "; by t = 0.5, the last mesh point it reached, it had left the file by 2.500e-01 in `b.v`"
    assert departure(traj, None, ["b.x", "b.v"], np.arange(5)) == ""  # nothing recorded
    assert departure(traj, partial, ["b.x", "b.v"], np.array([0, 4])) == ""  # no mesh point after the start reached


@pytest.mark.parametrize("local, excused", [(1e-4, True), (1e-6, False)])
def test_a_simulated_impact_the_file_lacks_is_excused_only_within_the_scheme_error(ball, local, excused):
    # a contact the scheme leaves approaching at the level of its own error is struck by the simulator with an
    # impulse of that size (a Solo12 foot at 7e-5 m/s in stance).  An impulse of 5e-4 on the unit-mass ball changes its
    # normal speed by 5e-4: within 10 × a local speed error of 1e-4 in its interval (+ 1e-6 × the speed's scale), not
    # within 10 × 1e-6; the whole-horizon estimate, which may be far larger, does not excuse it
    from colloc.simulate.contact_checks import _within_tolerance, simulate_file

    problem, traj = ball
    _, info = check_contact_file(problem, traj, 1e-6, 1e-2)
    sim, system = simulate_file(problem, traj)
    budget = dict(info["budget"], robust=np.full_like(info["budget"]["robust"], local),
                  estimate=np.full_like(info["budget"]["estimate"], 1e3), tolerance=np.full_like(info["budget"]["tolerance"], 1e4))
    event = dict(kind="impact", contact="ball.ground", time=float(sim.time[1]), impulse=5e-4, speed=-5e-4)
    assert _within_tolerance(event, sim, system, traj, budget) is excused


def test_a_simulated_impact_beyond_the_scheme_error_is_one_the_file_lacks(ball, monkeypatch):
    problem, traj = ball
    with_a_fake_impact(monkeypatch, 1e-2, -1e-2)
    found, info = check_contact_file(problem, traj, 1e-6, 1e-2)
    assert not {c.name: c for c in found}["impact times"].passed and not info["simulation"]["slight"]


def test_an_impact_only_the_whole_horizon_simulation_finds_is_its_drift(ball, monkeypatch):
    # an unstable body drifts open-loop (a Solo12 foot landing 17 ms early at 0.5 m/s in the whole-horizon simulation,
    # at the file's time from the file's state an interval before): the impact the simulation from the file's own state
    # an interval before does not find is not one the file lacks
    problem, traj = ball
    with_a_fake_impact(monkeypatch, 1e-2, -1e-2, local=False)
    found, info = check_contact_file(problem, traj, 1e-6, 1e-2)
    times = {c.name: c for c in found}["impact times"]
    assert times.passed and "its drift" in times.message and len(info["simulation"]["drift"]) == 1


def test_failed_checks_say_where_and_split_where_refines_only_there(ball):
    from colloc.pipeline.refine import split_where

    problem, traj = ball
    checks, _ = check_contact_file(problem, traj, 1e-6, 1e-2)
    mesh = np.asarray(traj.metadata["mesh"])
    assert all(c.where == () for c in checks) and np.array_equal(split_where(traj, checks), mesh)

    bad = copy(traj)  # a third of ball.y replaced by a straight line: its intervals, and only those, fail
    n = bad.time.size
    a, b = n // 3, 2 * n // 3
    bad["ball.y"][a:b] = np.interp(bad.time[a:b], bad.time[[a, b]], bad["ball.y"][[a, b]])
    checks, _ = check_contact_file(problem, bad, 1e-6, 1e-2)
    dynamics = {c.name: c for c in checks}["dynamics:ball.y"]
    assert not dynamics.passed and dynamics.where
    assert all(bad.time[a] - 0.11 <= s < e <= bad.time[b] + 0.11 for s, e in dynamics.where)  # within an interval (0.1 s) of the edit
    assert any(f"t = {s:.6g} to {e:.6g}" in dynamics.message for s, e in dynamics.where)  # the worst one named in words
    assert all(c.where == () for c in checks if c.passed)

    refined = split_where(bad, checks, pieces=3)
    named = np.zeros(mesh.size - 1, bool)
    for c in checks:
        for s, e in c.where:
            s, e = (s - bad.time[0]) / bad.duration, (e - bad.time[0]) / bad.duration
            named |= ((mesh[:-1] < e) & (mesh[1:] > s)) if e > s else ((mesh[:-1] <= s) & (mesh[1:] >= s))
    assert 0 < named.sum() < named.size
    assert np.isin(mesh, refined).all() and refined.size == mesh.size + 2 * named.sum()
    for k in range(mesh.size - 1):  # each named interval in three equal pieces, every other kept
        inside = refined[(refined > mesh[k]) & (refined < mesh[k + 1])]
        expected = np.linspace(mesh[k], mesh[k + 1], 4)[1:-1] if named[k] else np.empty(0)
        assert np.allclose(inside, expected, rtol=0, atol=1e-14)


def test_split_where_refuses_fewer_than_two_pieces(ball):
    from colloc.errors import OptionError
    from colloc.pipeline.refine import split_where

    with pytest.raises(OptionError, match="pieces must be an integer ≥ 2"):
        split_where(ball[1], [], pieces=1)


def test_a_broken_path_row_and_bound_say_where(ball):
    # the ball's lift (a control) pushed beyond its bound at one grid point: `bounds` names that time
    problem, traj = ball
    bad = copy(traj)
    k = bad.time.size // 2
    lo, hi = problem.bounds["ball.lift"]
    bad["ball.lift"][k] = hi + 1.0 if np.isfinite(hi) else lo - 1.0
    checks, _ = check_contact_file(problem, bad, 1e-6, 1e-2)
    bounds = {c.name: c for c in checks}["bounds"]
    assert not bounds.passed and bounds.where == ((bad.time[k], bad.time[k]),)


def test_a_path_row_broken_names_every_collocation_point_where(ball):
    _, traj = ball
    problem = load("bounce_to_target").build()
    y = next(v.symbol for v in problem.model.states if v.name == "ball.y")
    top = float(traj["ball.y"].max())
    problem.path(y, upper=top - 0.01, name="ceiling")  # broken near the throw's start, where the ball is highest
    checks, _ = check_contact_file(problem, traj, 1e-6, 1e-2)
    ceiling = {c.name: c for c in checks}["path:ceiling"]
    high = traj.time[traj["ball.y"] > top - 0.01 + 1e-6 * top]
    assert not ceiling.passed and {s for s, _ in ceiling.where} <= set(high) and ceiling.where
    assert all(s == e for s, e in ceiling.where)
