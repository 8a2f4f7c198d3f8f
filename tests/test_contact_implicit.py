"""Contact-implicit collocation (``contact="implicit"``): analytic optima, rows, schedule, verification, errors.

References: the pushed block's optimum is derived in ``problems/pushed_block.py``
(J(T') = 12 m²d²/T'³ + (μmg)² T'); the bouncing ball's in ``problems/bounce_to_target.py``.
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


@pytest.fixture(scope="module")
def block():
    return load("pushed_block")


@pytest.fixture(scope="module")
def block_result(block):
    return cl.solve(block.build(duration=2.0), intervals=10, contact="implicit", impacts=False, ipopt=IPOPT)


def test_block_sliding_throughout_reaches_the_analytic_optimum(block, block_result):
    # T = 2 < T* = 2.473: J* = 12/8 + 0.981²·2 = 3.424722 (derived); measured 3.4247216 (error 3e-7)
    res = block_result
    assert res.success
    assert res.objective == pytest.approx(block.optimum(2.0), abs=1e-5)
    assert block.optimum(2.0) == pytest.approx(3.42472, abs=1e-5)


def test_block_reports_complementarity_and_the_schedule(block_result):
    info = block_result.contact
    assert info["complementarity"]["block.floor"] <= 1e-7
    spans = info["schedule"]["block.floor"]
    slides = [(a, b) for a, b, m in spans if m == "slide"]
    # slides throughout (the free steps move the first and last mesh points by 4e-4 from 0.1 and 1.9)
    assert len(slides) == 1 and slides[0][0] <= 0.1 + 1e-3 and slides[0][1] >= 1.9 - 1e-3
    assert block_result.trajectory.metadata["contact"] == "implicit"
    text = block_result.summary()
    assert "complementarity" in text and "slide" in text
    friction = block_result.trajectory["block.floor.friction_force"]
    assert np.allclose(friction, -0.1 * 9.81, atol=1e-6)  # μmg against the motion


@pytest.mark.parametrize("scheme", ["radau-3"])
def test_block_optimum_with_other_schemes(block, scheme):
    res = cl.solve(block.build(duration=2.0), scheme=scheme, intervals=10, contact="implicit", impacts=False, ipopt=IPOPT)
    assert res.objective == pytest.approx(block.optimum(2.0), abs=1e-5)


@pytest.mark.slow
def test_block_with_a_long_horizon_finds_a_stick_phase(block):
    # T = 4 > T*: J* = 3.173349 with a stick phase of T − T* = 1.53. The homotopy from the default guess finds
    # a local optimum that sticks first and last (20 intervals: 3.2418); its error falls as O(h) (0.175, 0.068,
    # 0.058, 0.025 at 10, 20, 40, 80 intervals), far from 1e-4: the push jumps where the stick phase ends.
    res = cl.solve(block.build(duration=4.0), intervals=20, contact="implicit", impacts=False, ipopt=IPOPT)
    stick = sum(b - a for a, b, m in res.contact["schedule"]["block.floor"] if m == "stick")
    all_sliding = 12 / 4**3 + 0.981**2 * 4
    assert block.optimum(4.0) == pytest.approx(3.173349, abs=1e-6)
    assert block.optimum(4.0) - 1e-6 < res.objective < all_sliding - 0.5
    assert stick > 1.0


def test_exact_bounce_satisfies_every_contact_row():
    # the analytic bouncing ball (impact placed on mesh point 8 of 20) is feasible for the impact rows
    bt = load("bounce_to_target")
    J, v0, _ = bt.reference()
    g, N = 9.81, 20
    w = math.sqrt(v0**2 + 2 * g)
    t1 = (v0 + w) / g
    T = t1 * N / 8
    body = bt.ball()
    x, y = body.coordinates
    prob = cl.Problem([body], t0=0.0, tf=T, name="drop")
    prob.initial({x: 0.0, y: 1.0, body.speeds[1]: v0})
    nlp = build_nlp(prob, intervals=N, contact="implicit", relaxation=1e-12, free_steps=False)
    tt = nlp.grid.tau * T
    before = tt < t1 - 1e-12
    vals = nlp.layout.unpack(nlp.layout.vector("guess"))
    vals["x"][:] = 0.0
    vals["x"][1] = np.where(before, 1 + v0 * tt - g * tt**2 / 2, 0.9 * w * (tt - t1) - g * (tt - t1) ** 2 / 2)
    vals["x"][3] = np.where(before, v0 - g * tt, 0.9 * w - g * (tt - t1))
    vals["z"][:] = np.array([[0.0], [-g]])
    vals["vm"][:] = vals["x"][2:, nlp.grid.mesh_points[1:-1]]
    vals["vm"][1, 7] = -w  # pre-impact speed at mesh point 8
    vals["pn"][:] = 0.0
    vals["pn"][0, 7] = 1.9 * w / (T / N)  # m (e w + w) / h̄ (impulse variables are in force units)
    vals["cn"][:] = 0.0
    gv = np.asarray(ca.Function("g", [nlp.w], [nlp.g])(nlp.layout.pack(vals))).ravel()
    viol = np.maximum(nlp.rows.lower - gv, gv - nlp.rows.upper)
    assert viol.max() < 1e-12
    labels = nlp.rows.labels()
    assert any(lab.startswith("impact:ball.y_speed.momentum@k=16") for lab in labels)
    assert any(lab.startswith("complementarity:ball.ground.restitution*impulse@k=16") for lab in labels)


def test_two_phase_ball_matches_the_analytic_bounce():
    bt = load("bounce_to_target")
    J, _, tf = bt.reference()
    assert J == pytest.approx(6.007974, abs=1e-6)
    res = cl.solve(bt.build_two_phase(lift=False), intervals=10, ipopt={"tol": 1e-12})
    assert res.success and res.objective == pytest.approx(J, abs=1e-7)
    assert res.trajectory.time[-1] == pytest.approx(tf, abs=1e-7)


def test_verify_resimulates_a_contact_implicit_file(block_result, tmp_path, capsys):
    path = block_result.trajectory.write(tmp_path / "block.csv")
    code = cli.main(["verify", str(path), str(load("pushed_block").__file__)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "event-driven re-simulation" in out
    sim = cl.pipeline.contact_implicit.verify_contact(load("pushed_block").build(), cl.Trajectory.read(path))
    assert sim["max_error"] < 1e-5  # measured 1.4e-7: the simulator slides the block with the same controls


def test_info_lists_contact_rows(capsys):
    code = cli.main(["info", str(load("pushed_block").__file__)])
    out = capsys.readouterr().out
    assert code == 0 and "complementarity" in out and "friction" in out


@pytest.mark.parametrize("kwargs, match", [
    (dict(problem="plain"), "declares none"),
    (dict(contact="explicit"), "only one is contact='implicit'"),
    (dict(mode="explicit"), "accelerations as variables"),
    (dict(refine={"tolerance": 1e-6}), "does not combine with contact"),
    (dict(relaxation=-1.0), "relaxation"),
    (dict(relaxation_factor=2.0), "relaxation_factor"),
    (dict(impacts="yes"), "impacts"),
    (dict(free_steps="yes"), "free_steps"),
    (dict(free_steps=0.5), "ratio r > 1"),
    (dict(free_steps=True, intervals=1), "at least 2 intervals"),
    (dict(free_steps=True, scheme="midpoint-vi"), "`free_steps` does not apply"),
    (dict(free_steps=True, contact=None), "`free_steps`"),
])
def test_bad_contact_input_is_one_sentence(block, kwargs, match):
    kwargs = dict(kwargs)
    if kwargs.pop("problem", None) == "plain":
        c = cl.Component("m")
        x = c.state("x")
        c.derivative(x, 1.0)
        prob = cl.Problem([c], tf=1.0)
    else:
        prob = block.build()
    kwargs.setdefault("contact", "implicit")
    with pytest.raises(OptionError, match=match):
        cl.solve(prob, **{"intervals": 4, **kwargs})


def test_two_phase_ball_with_lift_reference():
    # the reference of the contact-implicit ball: Hermite–Simpson is exact here (40 and 80 intervals agree to 1e-15)
    res = cl.solve(load("bounce_to_target").build_two_phase(), intervals=10, ipopt={"tol": 1e-12})
    assert res.success and res.objective == pytest.approx(3.98359237, abs=1e-7)


def test_contact_refused_for_multi_phase_problems():
    with pytest.raises(OptionError, match="single-phase"):
        cl.solve(load("bounce_to_target").build_two_phase(), intervals=4, contact="implicit")


def test_contact_plot_and_ground_line(block_result, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from colloc.viz.contact_plot import plot_contacts

    fig = plot_contacts(block_result.trajectory)
    titles = [a.get_title() for a in fig.axes]
    assert titles == ["contact forces", "contact schedule"]
    assert any(p.get_facecolor()[:3] == matplotlib.colors.to_rgb("C3") for p in fig.axes[1].patches)  # a slide span
    path = cl.plot.animate(block_result.trajectory, load("pushed_block").build(), tmp_path / "b.gif", fps=5)
    assert path.endswith(".gif")
    from colloc.viz.plot import _has_contacts

    assert _has_contacts(load("pushed_block").build()) and not _has_contacts(load("cartpole").build())
    with pytest.raises(OptionError, match="contact-implicit"):
        plot_contacts(cl.Trajectory([0.0, 1.0], {"a": [0.0, 1.0]}))


@pytest.mark.slow
def test_bar_landing_is_reproduced_by_the_event_driven_simulator():
    # two contacts, plastic impacts placed on mesh points by the optimizer; the event-driven simulation with the
    # result's controls finds its own impacts and ends where the file does (measured: final 1e-15, largest 0.35
    # over time: the simulated first impact comes 0.06 s earlier than the mesh point the solve put it on)
    bar = load("bar_landing")
    res = cl.solve(bar.build(), intervals=20, contact="implicit", ipopt={"tol": 1e-9})
    assert res.success
    assert {i["contact"] for i in res.contact["impacts"]} == {"bar.left", "bar.right"}
    sim = cl.pipeline.contact_implicit.verify_contact(bar.build(), res.trajectory)
    assert sim["final_error"] < 1e-6
    assert {e["contact"] for e in sim["events"] if e["kind"] == "impact"} == {"bar.left", "bar.right"}


def test_ball_warm_started_with_its_bounce_keeps_it_at_first_order():
    # on the mesh given the contact-implicit ball does not find the bounce by itself; warm-started from the two-phase optimum with its
    # impulse (moved onto a mesh point, pre-impact speeds from M⁻¹Wᵀ P) it keeps the bounce, and the gap to the
    # two-phase optimum halves with the mesh (measured 6.2e-2, 3.0e-2: first order, the lift cannot jump there)
    bt = load("bounce_to_target")
    two = cl.solve(bt.build_two_phase(), intervals=20, ipopt={"tol": 1e-12})
    gaps = []
    for n in (10, 20):
        guess, mesh = bt.warm_start(two, n)
        res = cl.solve(bt.build(), mesh=mesh, contact="implicit", guess=guess, relaxation=1e-3, free_steps=False, ipopt=IPOPT)
        assert res.success and [i["contact"] for i in res.contact["impacts"]] == ["ball.ground"]
        gaps.append(res.objective - two.objective)
    assert 0 < gaps[1] < gaps[0] < 0.1
    assert math.log2(gaps[0] / gaps[1]) == pytest.approx(1.0, abs=0.3)


@pytest.mark.parametrize("scheme", ["trapezoidal", "hermite-simpson", "radau-3"])
def test_free_step_maps_reproduce_the_grid_at_the_given_mesh(scheme):
    from colloc.discretization.grid import Grid
    from colloc.discretization.schemes import get_scheme
    from colloc.transcription import free_step_maps

    grid = Grid(np.array([0.0, 0.1, 0.35, 0.6, 1.0]), get_scheme(scheme))
    A, B = free_step_maps(grid)
    assert np.allclose(A @ grid.fractions, grid.tau, atol=1e-15)
    assert np.allclose(B @ grid.fractions, grid.weights, atol=1e-15)
    assert np.allclose(B.sum(axis=0), 1.0)  # each interval's weights sum to one: ∫ 1 = σ_i


def test_free_steps_keep_the_sliding_block_optimum(block):
    res = cl.solve(block.build(duration=2.0), intervals=10, contact="implicit", impacts=False, free_steps=True, ipopt=IPOPT)
    assert res.success and res.objective == pytest.approx(block.optimum(2.0), abs=1e-5)  # measured error 5e-7
    assert res.trajectory.time[-1] == pytest.approx(2.0, abs=1e-12)
    assert np.all(np.diff(res.trajectory.time) > 0)


@pytest.mark.slow
@pytest.mark.parametrize("intervals", [10, 20])
def test_free_steps_find_the_block_stick_phase_to_the_analytic_optimum(block, intervals):
    # T = 4 > T* = 2.473: J* = 3.173349, sliding for T*, sticking for T − T* = 1.52690 (derived in the problem).
    # With free steps the switch moves onto a mesh point and each interval ends on its own acceleration and push:
    # measured push cost −7.1e-7 (10 intervals), −8.2e-7 (20) from J*; the objective adds the pull of the steps
    # towards the mesh given (8.8e-5, 8.9e-7). On the mesh given the error was +0.068 (20, O(h)).
    res = cl.solve(block.build(duration=4.0), intervals=intervals, contact="implicit", impacts=False, free_steps=True, ipopt=IPOPT)
    assert res.success
    assert res.objective == pytest.approx(block.optimum(4.0), abs=1e-4)
    assert res.objective - res.terms["steps"] == pytest.approx(block.optimum(4.0), abs=1e-5)
    stick = sum(b - a for a, b, m in res.contact["schedule"]["block.floor"] if m == "stick")
    assert stick == pytest.approx(4.0 - block.critical_time(), abs=1e-3)
    # the push jumps where sliding starts: the file keeps each interval's end value, and the event-driven
    # re-simulation with it ends where the result does (measured 4.4e-7 at 10 intervals; 1.0 without it)
    from colloc.pipeline.contact_implicit import verify_contact
    assert verify_contact(block.build(duration=4.0), res.trajectory)["max_error"] < 1e-4


def test_seeded_impulse_is_newtons_for_the_guessed_bounce():
    # the dipping guess turns from ẏ = −2.5 to +2.5 at t = 0.4 on the ground: Newton's law with e = 0.9 arrives
    # at −2.5/0.9, so P = m (2.5 + 2.5/0.9) = 5.2778 (m = 1), in force units P/h̄ at that mesh point
    bt = load("bounce_to_target")
    nlp = build_nlp(bt.build(), intervals=10, contact="implicit")
    k = int(np.flatnonzero(np.isclose(nlp.grid.tau[nlp.contact.impact_points] * 0.8, 0.4))[0])
    pn = nlp.layout["pn"].guess[0]
    assert pn[k] * 0.08 == pytest.approx(2.5 + 2.5 / 0.9, rel=1e-9)
    assert np.count_nonzero(pn) == 1
    assert nlp.layout["vm"].guess[1, k] == pytest.approx(-2.5 / 0.9, rel=1e-9)


def test_ball_finds_its_bounce_with_free_steps():
    # from its own dipping guess, with free steps the bounce moves to its time and the lift jumps there:
    # the two-phase optimum 3.98359237 (Hermite–Simpson exact there, test above); measured at 10 intervals: the
    # problem's cost −3.6e-8 from it, the objective +2.7e-7 with the pull of the steps towards the mesh given
    bt = load("bounce_to_target")
    res = cl.solve(bt.build(), intervals=10, contact="implicit", free_steps=True, ipopt=IPOPT)
    assert res.success
    assert res.objective == pytest.approx(3.98359237, abs=1e-5)
    assert res.objective - res.terms["steps"] == pytest.approx(3.98359237, abs=1e-6)
    (impact,) = res.contact["impacts"]
    two = cl.solve(bt.build_two_phase(), intervals=10, ipopt={"tol": 1e-12})
    assert impact["contact"] == "ball.ground"
    assert impact["time"] == pytest.approx(two.trajectory.metadata["phases"][1]["start"], abs=1e-4)
    from colloc.pipeline.contact_implicit import verify_contact
    assert verify_contact(bt.build(), res.trajectory)["final_error"] < 1e-5  # the lift's jump is kept (3.3e-2 without)


@pytest.mark.slow
def test_free_steps_converge_at_the_trapezoidal_order_on_the_ball():
    bt = load("bounce_to_target")
    errors = []
    for n in (10, 20, 40):
        res = cl.solve(bt.build(), scheme="trapezoidal", intervals=n, contact="implicit", free_steps=True, ipopt=IPOPT)
        assert res.success and len(res.contact["impacts"]) == 1
        errors.append(abs(res.objective - 3.98359237))
    slope = -np.polyfit(np.log([10, 20, 40]), np.log(errors), 1)[0]
    assert slope >= 2 - 0.3


def test_verification_sees_a_push_leave_the_friction_cone_while_the_block_sticks(block):
    """A block at rest, unpushed for 1 s, then pushed by u = c(t − 1) up to t = 1.3 and less again after, must
    start to slide at c(t₁ − 1) = μmg.  While it sticks nothing moves, and the push is below μmg again at the
    end, so an integrator whose steps grew over the still second stepped past the slip (it once did)."""
    from colloc.pipeline.contact_implicit import verify_contact

    problem = block.build(duration=2.0)
    mu_mg, c = 0.1 * 9.81, 5.0
    t1 = 1.0 + mu_mg / c
    t = np.linspace(0.0, 2.0, 41)
    push = c * np.clip(np.minimum(t - 1.0, 1.6 - t), 0.0, None)
    cols = {"block.x": 0 * t, "block.y": 0 * t, "block.x_speed": 0 * t, "block.y_speed": 0 * t, "block.push": push}
    kinds = {n: "control" if n == "block.push" else "state" for n in cols}
    out = verify_contact(problem, cl.Trajectory(t, cols, kinds, {}, {"scheme": "trapezoidal"}))
    slips = [e["time"] for e in out["events"] if e["kind"] == "slip"]
    assert slips and slips[0] == pytest.approx(t1, abs=1e-6)
    assert out["final_error"] > 1e-3  # the block moved, unlike this file says


@pytest.mark.parametrize("options", [dict(backend="fatrop"), dict(fatrop={"max_iter": 5})])
def test_a_contact_implicit_solve_refuses_fatrop_instead_of_running_ipopt(options):
    problem = load("pushed_block").build()
    with pytest.raises(cl.OptionError, match="contact='implicit' is solved with backend='ipopt' only"):
        cl.solve(problem, intervals=4, contact="implicit", **options)


def test_free_steps_lagrangian_hessian_has_the_exact_sparsity(block):
    # colloc's point-by-point Hessian is a structural superset of the exact one; with free steps the quadrature
    # weights and grid times are linear in the fractions, and a dense map there coupled every fraction with every
    # grid point (nonzeros growing as N²). The exact pattern is CasADi's own, of the SX-expanded Lagrangian.
    from colloc.transcription.derivatives import structured

    nlp = build_nlp(block.build(duration=2.0), intervals=12, contact="implicit", impacts=False, free_steps=True, relaxation=0.1)
    ours = structured(nlp, nlp.mapped)["hess_lag"].sparsity_out(0)
    expanded = ca.Function("fg", [nlp.w], [nlp.f, nlp.g]).expand()
    w = expanded.sx_in(0)
    f, g = expanded(w)
    lam = ca.SX.sym("lam", g.numel())
    exact = ca.triu(ca.hessian(f + ca.dot(lam, g), w)[0]).sparsity()
    assert ours.nnz() == exact.nnz()
    assert ours.is_subset(exact)


@pytest.mark.slow
def test_grid_sequencing_keeps_the_block_optimum(block):
    # 44 intervals: the homotopy runs on every 2nd mesh point (22 intervals) first, then ε ≤ 1e-4 on the mesh
    # itself from the subdivided coarse solution; the optima are the derived J* (measured push cost error < 1e-6)
    from colloc.pipeline.contact_implicit import SEQUENCE_ABOVE, _coarse_factor

    assert 44 > SEQUENCE_ABOVE and _coarse_factor(np.linspace(0, 1, 45)) == 2
    for duration in (2.0, 4.0):
        res = cl.solve(block.build(duration=duration), intervals=44, contact="implicit", impacts=False, ipopt=IPOPT)
        assert res.success
        assert res.objective - res.terms["steps"] == pytest.approx(block.optimum(duration), abs=1e-5)
        coarse = [s for s in res.contact["steps"] if s.get("intervals") == 22]
        assert coarse and coarse[-1]["relaxation"] == pytest.approx(1e-8)
        assert res.contact["steps"][-1]["relaxation"] == pytest.approx(1e-8) and "intervals" not in res.contact["steps"][-1]
