"""3-D friction in contact-implicit solves: a box pushed or sliding across a floor, two tangents per contact.

References (derived here, extending ``problems/pushed_block.py``'s): a point mass ``m`` pushed from rest to rest
over a distance ``d`` along a straight line in time ``T'`` while sliding costs ``∫|u|² = m²∫|a|² + ∫|F_t|²``
(the cross term ``−2m∫a·F_t`` vanishes: ``F_t`` is constant along a straight slide and ``∫a = 0``), so

* circular cone, any direction: ``|F_t| = μmg``, ``J(T') = 12 m²d²/T'³ + (μmg)² T'``;
* polyhedral cone with ``k`` facets ``d_j = (cos 2πj/k, sin 2πj/k)``, pushed along an edge's normal
  (angle ``π/k``): maximal dissipation puts ``F_t`` on that edge, whose component against the motion is
  ``μmg cos(π/k)`` wherever on it; the least cost puts it at the edge's middle, so
  ``J(T') = 12 m²d²/T'³ + (μ cos(π/k) m g)² T'``.

A mass released on the floor with speed ``v₀`` stops at ``t* = v₀/(μg)`` after ``v₀²/(2μg)`` with the circular
cone; with the 4-facet cone at an angle ``α ∈ (0, π/4)`` the friction is ``−μmg e₁`` until ``v_x = v_y``, then
slides along the diagonal at ``μmg/√2`` per axis, stopping at ``t* = v₀ (cos α + sin α)/(μg)`` — the event-driven
simulator is the oracle for the place.
"""
from __future__ import annotations

import math

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.errors import OptionError
from colloc.pipeline.driver import build_nlp

from test_contact_vi import rows_at

G = 9.81
IPOPT = {"tol": 1e-10}


def box(cone, facets=4, mu=0.1, pushed=True):
    """A unit point mass on the floor z ≥ 0 (``point_contact``), pushed horizontally if ``pushed``."""
    body = cl.Multibody("box", coordinates=["x", "y", "z"])
    body.kinetic_energy = 0.5 * ca.sumsqr(body.v)
    body.potential_energy = G * body.q[2]
    if pushed:
        body.push = ca.vertcat(body.control("push_x", bounds=(-20, 20)), body.control("push_y", bounds=(-20, 20)))
        body.generalized_force = ca.vertcat(body.push, 0)
    body.point_contact("floor", body.q, friction=mu, cone=cone, facets=facets)
    return body


def pushed(cone, alpha, duration=2.0, distance=1.0):
    body = box(cone)
    x, y, z = body.coordinates
    end = (distance * math.cos(alpha), distance * math.sin(alpha))
    prob = cl.Problem([body], t0=0.0, tf=duration, name="pushed_box")
    prob.bound(z, 0.0, 1.0)
    prob.initial({x: 0.0, y: 0.0, z: 0.0, **{v: 0.0 for v in body.speeds}})
    prob.final({x: end[0], y: end[1], z: 0.0, **{v: 0.0 for v in body.speeds}})
    prob.guess({x: (0.0, end[0]), y: (0.0, end[1])})
    prob.minimize(integral=ca.sumsqr(body.push))
    return prob


def least_effort(mu_effective, duration=2.0, distance=1.0):
    return 12 * distance**2 / duration**3 + (mu_effective * G) ** 2 * duration


def test_circular_cone_pushed_obliquely_costs_the_planar_optimum():
    # T = 2 < T* = 2.473 slides throughout: J* = 3.424722; measured 3.4247219 (10 intervals, mesh given)
    alpha = 0.5
    res = cl.solve(pushed("circular", alpha), intervals=10, contact="implicit", impacts=False, free_steps=False, ipopt=IPOPT)
    assert res.success
    assert res.objective == pytest.approx(least_effort(0.1), abs=1e-5)
    tr = res.trajectory
    # friction μmg straight against the motion, the push along it
    f = np.array([tr["box.floor.friction_force_1"], tr["box.floor.friction_force_2"]])
    assert np.allclose(f.T @ [math.cos(alpha), math.sin(alpha)], -0.1 * G, atol=1e-5)
    # across it only the relaxation's angle, √(2ε/(μmg|ṡ|)) ~ 1e-4 rad at ε = 1e-8 (measured 1.2e-4 N)
    assert np.allclose(f.T @ [-math.sin(alpha), math.cos(alpha)], 0.0, atol=5e-4)
    assert np.allclose(tr["box.push_x"] * math.sin(alpha) - tr["box.push_y"] * math.cos(alpha), 0.0, atol=5e-4)
    # `colloc verify` of this file: tests/test_verify_contact3d.py


def test_polyhedral_cone_pushed_along_an_edge_normal_feels_mu_cos_pi_over_k():
    # 4 facets, pushed at 45°: J* = 12/8 + (0.1 cos(π/4) g)²·2 = 2.462361; measured 2.4623606 (free steps)
    k, alpha = 4, math.pi / 4
    res = cl.solve(pushed("polyhedral", alpha), intervals=10, contact="implicit", impacts=False, ipopt=IPOPT)
    assert res.success
    assert res.objective == pytest.approx(least_effort(0.1 * math.cos(math.pi / k)), abs=1e-5)
    assert res.objective < least_effort(0.1) - 0.9  # the inscribed polygon is weaker than the circle there
    tr = res.trajectory
    mid = -0.1 * G * math.cos(math.pi / k) * np.array([math.cos(alpha), math.sin(alpha)])
    assert np.allclose(tr["box.floor.friction_force_1"], mid[0], atol=1e-5)
    assert np.allclose(tr["box.floor.friction_force_2"], mid[1], atol=1e-5)


def released(cone, alpha, speed=1.0, duration=0.8):
    body = box(cone, mu=0.2, pushed=False)
    x, y, z = body.coordinates
    v0 = [speed * math.cos(alpha), speed * math.sin(alpha), 0.0]
    prob = cl.Problem([body], t0=0.0, tf=duration, name="sliding_box")
    prob.bound(z, 0.0, 1.0)
    prob.initial({x: 0.0, y: 0.0, z: 0.0, **dict(zip(body.speeds, v0))})
    prob.guess({x: (0.0, 0.2), y: (0.0, 0.1)})
    return body, prob, v0


def _stop(res):
    return [b for a, b, mode in res.contact["schedule"]["box.floor"] if mode == "stick"]


@pytest.mark.parametrize("cone, alpha, intervals", [pytest.param("circular", 0.5, 8, marks=pytest.mark.slow), ("polyhedral", 0.3, 6)])
def test_released_box_stops_where_the_event_driven_simulation_does(cone, alpha, intervals):
    # measured: circular stop 0.5096347 (t* = 1/(0.2 g) = 0.50968400), place to 1e-5 (15 s: the product
    # μλγ + fᵀṡ ≤ ε leaves the friction short by ε/|ṡ| as the box slows down); polyhedral stop 0.6375416
    # (t* = (cos .3 + sin .3)/(0.2 g) = 0.637542), place to 2e-9 of simulate_events
    body, prob, v0 = released(cone, alpha)
    sim = cl.simulate_events(box(cone, mu=0.2, pushed=False), 0.8, [0.0, 0.0, 0.0], v0)
    t_stop = [e["time"] for e in sim.metadata["events"] if e["kind"] == "stick"][0]
    closed_form = (math.cos(alpha) + math.sin(alpha) if cone == "polyhedral" else 1.0) / (0.2 * G)
    assert t_stop == pytest.approx(closed_form, abs=1e-8)
    res = cl.solve(prob, scheme="hermite-simpson", intervals=intervals, contact="implicit", impacts=False, ipopt=IPOPT)
    assert res.success
    tr = res.trajectory
    stick = [a for a, b, mode in res.contact["schedule"]["box.floor"] if mode == "stick"]
    tol = 1e-4 if cone == "circular" else 1e-7
    assert stick and stick[0] == pytest.approx(t_stop, abs=tol)
    for name in ("box.x", "box.y"):
        assert tr[name][-1] == pytest.approx(sim[name][-1], abs=tol)
    if cone == "circular":
        assert math.hypot(tr["box.x"][-1], tr["box.y"][-1]) == pytest.approx(1.0 / (2 * 0.2 * G), abs=tol)


def test_rows_of_a_polyhedral_contact_are_labelled_per_facet():
    nlp = build_nlp(pushed("polyhedral", 0.3), intervals=2, contact="implicit", impacts=False, free_steps=False)
    labels = nlp.rows.labels()
    assert any(lab.startswith("friction:box.floor.slip_4@0") for lab in labels)
    assert any(lab.startswith("complementarity:box.floor.slip_1@2*facet_1") for lab in labels)
    assert "cf3" in nlp.layout and nlp.layout["cf3"].row_names[-1] == "box.floor.friction_facet_4"


@pytest.mark.parametrize("cone, alpha, mu_effective", [pytest.param("circular", 0.5, 0.1, marks=pytest.mark.slow), ("polyhedral", math.pi / 4, 0.1 * math.cos(math.pi / 4))])
def test_midpoint_vi_pushed_box_converges_at_second_order(cone, alpha, mu_effective):
    # measured: errors 3.759e-3/9.375e-4 at 20/40 steps for both cones (the planar block's 3.8e-3/9.4e-4)
    errors = []
    for n in (20, 40):
        res = cl.solve(pushed(cone, alpha), scheme="midpoint-vi", intervals=n, contact="implicit", ipopt=IPOPT)
        assert res.success
        errors.append(res.objective - least_effort(mu_effective))
    assert errors[1] > 0 and math.log2(errors[0] / errors[1]) >= 1.7


def test_midpoint_vi_refuses_friction_on_a_curved_surface():
    body = cl.Multibody("ball", coordinates=["x", "y", "z"])
    body.kinetic_energy = 0.5 * ca.sumsqr(body.v)
    body.potential_energy = G * body.q[2]
    body.point_contact("bowl", body.q, surface=lambda p: p[2] - 0.5 * (p[0] ** 2 + p[1] ** 2), friction=0.3)
    prob = cl.Problem([body], t0=0.0, tf=1.0, name="bowl")
    prob.initial({s: 0.0 for s in body.coordinates + body.speeds})
    with pytest.raises(OptionError, match="curved surface"):
        cl.solve(prob, scheme="midpoint-vi", intervals=4, contact="implicit")


def test_contact_point_of_a_urdf_foot_on_a_tilted_plane_matches_pinocchio():
    # gap n̂ᵀ(p + R·offset − x₀) and normal speed W_n v = n̂ᵀ(v_o + ω × R·offset), with Pinocchio's frame placement
    # and LOCAL_WORLD_ALIGNED velocity as the oracle (Solo12, 5 random states)
    pin = pytest.importorskip("pinocchio")
    pytest.importorskip("urdf_parser_py")
    from colloc.model.urdf import example_robot
    try:
        path = example_robot("solo_description/robots/solo12.urdf")
    except cl.FileFormatError:
        pytest.skip("example-robot-data is not installed")
    from test_urdf import to_colloc

    solo = cl.Multibody.from_urdf(path, name="solo", base="floating")
    offset, x0, normal = np.array([0.01, -0.02, 0.03]), np.array([0.0, 0.0, -0.1]), np.array([0.1, 0.2, 1.0])
    c = solo.contact_point("FL_FOOT", offset=offset, plane=(x0, normal), friction=0.8, cone="circular")
    assert c.name == "solo.FL_FOOT" and c.num_tangents == 2 and c.tangent is not None
    f = ca.Function("f", [solo.q, solo.v], [c.gap, ca.mtimes(c.normal_jacobian, solo.v), c.tangent_jacobian])
    model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    data, fid, n = model.createData(), model.getFrameId("FL_FOOT"), normal / np.linalg.norm(normal)
    rng = np.random.default_rng(3)
    for _ in range(5):
        qp = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
        vp = rng.normal(size=model.nv)
        q, order = to_colloc(solo, model, qp)
        pin.forwardKinematics(model, data, qp, vp)
        pin.updateFramePlacements(model, data)
        M = data.oMf[fid]
        twist = pin.getFrameVelocity(model, data, fid, pin.LOCAL_WORLD_ALIGNED)
        arm = M.rotation @ offset
        gap, speed, Wt = (np.array(a) for a in f(q, vp[order]))
        v_point = twist.linear + np.cross(twist.angular, arm)
        assert gap.item() == pytest.approx(n @ (M.translation + arm - x0), abs=1e-10)
        assert speed.item() == pytest.approx(n @ v_point, abs=1e-10)
        # the tangent rows are two orthonormal directions of the plane: with the normal they give the whole speed
        assert np.sum((Wt @ vp[order]) ** 2) + speed.item() ** 2 == pytest.approx(v_point @ v_point, rel=1e-10)
        assert np.abs(Wt @ vp[order]).min() > 1e-3


@pytest.mark.parametrize("kwargs, match", [
    (dict(offset=(0, 0)), "`offset` of contact_point `FL_FOOT` must be three finite numbers"),
    (dict(plane=((0, 0, 0), (0, 0, 0))), "The plane's normal of a contact_point of `solo` must not be zero"),
    (dict(plane=(0, 0, 1)), r"`plane` of a contact_point of `solo` must be \(point, normal\)"),
])
def test_contact_point_bad_input_is_one_sentence(kwargs, match):
    pytest.importorskip("urdf_parser_py")
    from colloc.model.urdf import example_robot
    try:
        path = example_robot("solo_description/robots/solo12.urdf")
    except cl.FileFormatError:
        pytest.skip("example-robot-data is not installed")
    solo = cl.Multibody.from_urdf(path, name="solo", base="floating")
    with pytest.raises(cl.ModelError, match=match):
        solo.contact_point("FL_FOOT", **kwargs)


@pytest.mark.parametrize("cone", ["polyhedral", "circular"])
def test_cone_rows_at_fixed_numbers(cone):
    # hand-derived (module friction3d): at the impact point (grid index 2 of 2 Hermite–Simpson intervals) and on the
    # intervals, with the speeds ṡ = (vx, vy) and the normal force λ, facets β or components f, sliding speed γ
    prob = pushed(cone, 0.3)
    nlp = build_nlp(prob, intervals=2, contact="implicit", free_steps=False)
    lay = nlp.layout
    names = [s.name for s in prob.model.states]
    x = np.zeros((len(names), lay["x"].num_cols))
    x[names.index("box.x_speed")], x[names.index("box.y_speed")] = 0.3, -0.4
    lam, gam, mu = 2.0, 0.7, 0.1
    force = np.array([0.05, 0.02, 0.01, 0.03]) if cone == "polyhedral" else np.array([-0.1, 0.12])
    vals = {"x": x, "cn": np.full((1, 2), lam), "cf3": np.tile(force[:, None], (1, 2)), "cg3": np.full((1, lay["cg3"].num_cols), gam),
            "pn": np.full((1, 1), lam), "pf3": force[:, None], "pg3": np.full((1, 1), gam)}
    row = rows_at(nlp, vals)
    sd = np.array([0.3, -0.4])
    for tag, k in (("", 1), ("impulse_", 2)):
        at = "@1" if not tag else ""
        if cone == "polyhedral":
            assert row[f"friction:box.floor.{tag}cone@k={k - 1 if not tag else k}"] == pytest.approx(mu * lam - force.sum(), abs=1e-12)
            D = np.array([[1, 0], [0, 1], [-1, 0], [0, -1]], float)
            for j in range(4):
                slip = gam + D[j] @ sd
                assert row[f"friction:box.floor.{tag}slip_{j + 1}{at}@k={k}"] == pytest.approx(slip, abs=1e-12)
                assert row[f"complementarity:box.floor.{tag}slip_{j + 1}{at}*facet_{j + 1}@k={k}"] == pytest.approx(slip * force[j], abs=1e-12)
        else:
            smooth = lambda v, d: v @ v / math.sqrt(v @ v + d * d)  # noqa: E731 (|v|²/√(|v|² + δ²))
            assert row[f"friction:box.floor.{tag}cone@k={k - 1 if not tag else k}"] == pytest.approx(
                mu * lam - smooth(force, 1e-4), abs=1e-12)
            assert row[f"friction:box.floor.{tag}slip{at}@k={k}"] == pytest.approx(gam - smooth(sd, 1e-4), abs=1e-12)
            assert row[f"complementarity:box.floor.{tag}sliding_speed{at}*cone+speed{at}*friction@k={k}"] == pytest.approx(
                mu * lam * gam + force @ sd, abs=1e-12)


BOX_URDF = """<robot name="box"><link name="box"><inertial><origin xyz="0 0 0"/><mass value="2.0"/>
<inertia ixx="0.02" iyy="0.03" izz="0.04" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>"""


@pytest.mark.slow
def test_floating_box_resting_on_four_corners_carries_its_weight_at_every_point(tmp_path):
    # A free-floating box (URDF, unit-quaternion base: a position-level invariant of the kinematics) at rest on
    # four corner contacts: the normal forces add up to m g = 19.62 N on every interval, at the mesh points
    # too, where the projection method's own residual replaces the grid's (measured 19.62 ± 5e-6, 3 intervals)
    pytest.importorskip("urdf_parser_py")
    from colloc.simulate.contact_checks import check_contact_file

    path = tmp_path / "box.urdf"
    path.write_text(BOX_URDF)

    def build():
        body = cl.Multibody.from_urdf(str(path), name="box", base="floating")
        for i, (sx, sy) in enumerate([(1, 1), (1, -1), (-1, 1), (-1, -1)]):
            body.contact_point("box", offset=(0.1 * sx, 0.15 * sy, -0.05), name=f"c{i}")
        prob = cl.Problem([body], t0=0.0, tf=0.2, name="resting_box")
        rest = {s: 0.0 for s in body.coordinates}
        rest[body.coordinates[2]] = 0.05
        rest[body.coordinates[3]] = (0.0, 1.5)
        rest.update({s: 0.0 for s in body.speeds})
        prob.initial(rest)
        guess = dict(rest)
        guess[body.coordinates[3]] = 1.0
        prob.guess(guess)
        return prob

    res = cl.solve(build(), intervals=3, contact="implicit", impacts=False, free_steps=False, ipopt=IPOPT)
    assert res.success
    tr = res.trajectory
    lam = np.array([tr[f"box.c{i}.normal_force"] for i in range(4)])
    assert np.allclose(lam.sum(axis=0), 2.0 * G, atol=1e-4)
    assert np.allclose(tr["box.base_z"], 0.05, atol=1e-7)
    checks, _ = check_contact_file(build(), tr, 1e-6, 1e-2)
    assert all(c.passed for c in checks), [c.line() for c in checks if not c.passed]
