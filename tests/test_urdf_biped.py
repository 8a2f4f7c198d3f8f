"""The five-link biped from a URDF (problems/urdf_biped.py) against two oracles, and its step's physics.

* the URDF's model against Kelly's Lagrangian of the same robot (problems/five_link_biped.py's ``free_model``,
  written independently in absolute angles with the stance foot's position): the kinetic energy is invariant,
  so ``M_urdf = Jᵀ M_kelly J`` and ``g_urdf = Jᵀ g_kelly`` with ``J = ∂q_kelly/∂q_urdf``;
* the URDF's model against Pinocchio (``crba``, ``rnea``) loading the same file;
* Kelly's two-phase step admissible for the schedule-free problem (ground force and heel-strike impulse in the
  cone of μ = 0.8), so the two costs compare the same motions;
* the solved schedule-free step: no penetration, forces in the friction cone, the mirror periodicity, Newton's
  law at each foot strike, the standing foot at rest at t0, ``colloc verify``'s checks, and a copy with the
  strike's impulse cut by a tenth failing them.
"""
import os

import casadi as ca
import numpy as np
import pytest

import colloc as cl

from test_problems import load

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pytest.importorskip("urdf_parser_py")


@pytest.fixture(scope="module")
def biped():
    return load("urdf_biped")


def _poses(seed, count=5):
    rng = np.random.default_rng(seed)
    return [(rng.uniform(-1.2, 1.2, 7), rng.normal(size=7), rng.normal(size=7)) for _ in range(count)]


def test_urdf_model_equals_kellys_lagrangian(biped):
    kelly = load("five_link_biped")
    free = kelly.free_model()
    eq_k = free.equations()
    kelly_f = ca.Function("kelly", [free.q], [eq_k.mass_matrix, ca.gradient(free.potential_energy, free.q)])
    body = cl.Multibody.from_urdf(biped.URDF, name="biped", actuated=[])
    q = body.q
    angles = biped.absolute_angles(q)
    up = [ca.vertcat(-ca.sin(a), ca.cos(a)) for a in angles[:2]]
    foot = ca.vertcat(q[0], q[1]) - 0.4 * up[0] - 0.4 * up[1]  # the left foot: Kelly's stance foot (x, y)
    to_kelly = ca.vertcat(foot, *angles)
    mapping = ca.Function("map", [q], [to_kelly, ca.jacobian(to_kelly, q)])
    eq = body.equations()
    urdf_f = ca.Function("urdf", [q, body.v, body.a], [body.mass_matrix, eq.residual])
    for qu, _, _ in _poses(0):
        qk, J = (np.array(a) for a in mapping(qu))
        Mk, gk = (np.array(a) for a in kelly_f(qk))
        M, gravity = (np.array(a) for a in urdf_f(qu, np.zeros(7), np.zeros(7)))
        assert np.allclose(M, J.T @ Mk @ J, rtol=0, atol=1e-10)
        assert np.allclose(gravity.ravel(), (J.T @ gk).ravel(), rtol=0, atol=1e-9)  # |g| ≈ 392 N
    # the pose conversion puts the left foot where Kelly's stance foot is
    q0 = biped.from_kelly(kelly.START_POSE, (0.3, 0.0))
    assert np.allclose(np.array(mapping(q0)[0]).ravel(), [0.3, 0.0, *kelly.START_POSE], atol=1e-14)


def test_urdf_model_equals_pinocchio(biped):
    pin = pytest.importorskip("pinocchio")
    model = pin.buildModelFromUrdf(biped.URDF)
    data = model.createData()
    body = cl.Multibody.from_urdf(biped.URDF, name="biped", actuated=[])
    names = [s.name().split(".", 1)[1] for s in body.coordinates]
    order = np.array([model.joints[model.getJointId(n)].idx_q for n in names])  # colloc's order in Pinocchio's
    assert model.nq == model.nv == 7
    eq = body.equations()
    urdf_f = ca.Function("urdf", [body.q, body.v, body.a], [body.mass_matrix, eq.residual])
    for qu, vu, au in _poses(1):
        qp, vp, ap = np.zeros(7), np.zeros(7), np.zeros(7)
        qp[order], vp[order], ap[order] = qu, vu, au
        M, tau = (np.array(a) for a in urdf_f(qu, vu, au))
        Mp = pin.crba(model, data, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        assert np.allclose(M, Mp[np.ix_(order, order)], rtol=0, atol=1e-10)
        assert np.allclose(tau.ravel(), pin.rnea(model, data, qp, vp, ap)[order], rtol=0, atol=1e-9)
    # the feet: the tibia frame's origin 0.4 m above each foot, where Pinocchio puts the knee
    pin.framesForwardKinematics(model, data, qp)
    for side in ("left", "right"):
        p, _ = body.frame(f"{side}_tibia")
        assert np.allclose(np.array(ca.Function("p", [body.q], [p])(qu)).ravel(),
                           data.oMf[model.getFrameId(f"{side}_tibia")].translation, atol=1e-12)



def test_feet_are_contact_points_of_the_tibias_in_the_plane(biped):
    """The planar feet have ``contact_point``'s gap, normal and first tangent Jacobians; its second tangent (y) has
    an all-zero Jacobian in this planar model, which is why the script declares planar contacts."""
    body = biped.robot()
    for side, planar in zip(("left", "right"), body.contacts):
        other = cl.Multibody.from_urdf(biped.URDF, name="biped", actuated=[])
        point = other.contact_point(f"{side}_tibia", offset=(0.0, 0.0, -biped.SHIN), name=f"{side}_foot", friction=0.8)
        mine = ca.Function("a", [body.q], [planar.gap, planar.normal_jacobian, planar.tangent_jacobian])
        theirs = ca.Function("b", [other.q], [point.gap, point.normal_jacobian, point.tangent_jacobian])
        for q, _, _ in _poses(2, 3):
            g, wn, wt = (np.array(a) for a in mine(q))
            g2, wn2, wt2 = (np.array(a) for a in theirs(q))
            assert g == pytest.approx(g2, abs=1e-14) and np.allclose(wn, wn2, atol=1e-14)
            assert np.allclose(wt, wt2[:1], atol=1e-14) and not wt2[1].any()



def test_kellys_step_is_admissible_for_the_schedule_free_problem(biped):
    """The two-phase step pins its stance foot and lets its heel strike stick: with μ = 0.8 the ground can do
    both, so the schedule-free problem admits Kelly's gait (the basis of comparing the two costs).  The ground
    force is the free robot's inverse dynamics on the stance foot's coordinates (M a + c, its first two rows,
    with a from the stance model's dynamics)."""
    kelly = load("five_link_biped")
    res = cl.solve(biped.build_two_phase(), scheme="hermite-simpson", intervals=12, ipopt={"tol": 1e-8})
    assert res.success, res.message
    tr = res.trajectory.phase(0)
    stance, u = kelly.stance_model()
    free = kelly.free_model()
    eq, eqf = stance.equations(), free.equations()
    acc = ca.Function("a", [stance.q, stance.v] + u, [ca.solve(eq.mass_matrix, eq.generalized_force - eq.bias)])
    ground = ca.Function("F", [free.q, free.v, free.a], [(ca.mtimes(eqf.mass_matrix, free.a) + eqf.bias)[:2]])
    s = tr.sample(np.linspace(0.0, tr.time[-1], 71))
    for k in range(71):
        q = [s[f"biped.q{i}"][k] for i in range(1, 6)]
        v = [s[f"biped.dq{i}"][k] for i in range(1, 6)]
        a = np.array(acc(q, v, *[s[f"biped.u{i}"][k] for i in range(2, 6)])).ravel()
        fx, fz = np.array(ground(np.r_[0, 0, q], np.r_[0, 0, v], np.r_[0, 0, a])).ravel()
        assert fz > 100.0 and abs(fx) <= biped.FRICTION * fz  # measured: 172–466 N, |F_x|/F_z ≤ 0.351
    impact, _, _ = kelly.heel_strike(stance)
    q = [tr[f"biped.q{i}"][-1] for i in range(1, 6)]
    v = [tr[f"biped.dq{i}"][-1] for i in range(1, 6)]
    _, P = impact.velocity_after(np.r_[0, 0, q], np.r_[0, 0, v])
    assert P[1] > 0 and abs(P[0]) <= biped.FRICTION * P[1]  # measured: (−13.65, 26.41) N s, ratio 0.517


# -- the solved step -------------------------------------------------------------------------------------------
def _mirror(biped, body, tr, row):
    """The state at ``row`` with left and right swapped, as the names of ``body``'s states."""
    names = [s.name() for s in body.coordinates + body.speeds]
    swap = dict(biped.mirror_pairs(body))
    return np.array([tr[swap.get(n, n)][row] for n in names])


@pytest.fixture(scope="module")
def step(biped):
    res = cl.solve(biped.build(), ipopt={"tol": 1e-8}, **biped.SOLVE)
    return res


@pytest.mark.slow
def test_schedule_free_step_is_physical(biped, step):
    assert step.success, step.message
    tr = step.trajectory
    body = biped.robot()
    feet = ca.Function("feet", [body.q], [ca.vertcat(*[c.gap for c in body.contacts])])
    Q = np.array([tr[s.name()] for s in body.coordinates])
    gaps = np.array(feet(Q))
    assert gaps.min() >= -1e-7  # no foot below the ground at any grid point
    dense = tr.sample(np.linspace(0.0, tr.time[-1], 701))  # nor between them, to the scheme's interpolation error
    assert np.array(feet(np.array([dense[s.name()] for s in body.coordinates]))).min() >= -2e-3
    for side in ("left", "right"):
        lam, f = tr[f"biped.{side}_foot.normal_force"], tr[f"biped.{side}_foot.friction_force"]
        P, Pt = tr[f"biped.{side}_foot.impulse"], tr[f"biped.{side}_foot.friction_impulse"]
        assert lam.min() >= -1e-8 and P.min() >= -1e-8
        assert np.all(np.abs(f) <= biped.FRICTION * lam + 1e-6) and np.all(np.abs(Pt) <= biped.FRICTION * P + 1e-6)
    # the step: every state at T is the mirror of the state at 0, the hip D = 0.5 m further on
    names = [s.name() for s in body.coordinates + body.speeds]
    end = np.array([tr[n][-1] for n in names])
    start = _mirror(biped, body, tr, 0)
    start[0] += 0.5
    assert np.allclose(end, start, atol=1e-6)
    # each foot carries the robot while it stands alone: over the step the normal forces and impulses average to
    # the weight, since the vertical momentum at T equals the one at 0 (m = 40 kg)
    from colloc.discretization.interpolant import Interpolant

    grid = Interpolant(tr).grid
    h = np.diff(tr.time[grid.mesh_points])
    starts = grid.interval_starts
    support = sum(h @ tr[f"biped.{s}_foot.normal_force"][starts] + tr[f"biped.{s}_foot.impulse"].sum() for s in ("left", "right"))
    assert support / tr.time[-1] == pytest.approx(40.0 * 9.81, rel=2e-2)


def _interval_forces(tr, contacts, grid, k):
    """The normal and friction forces on interval ``k`` as functions of time, as the file's transcription holds them
    (``contact_forces``: constant, or the polynomial through the collocation points)."""
    from colloc.discretization.interpolant import collocation_nodes, polynomial
    from colloc.transcription.force_points import interval_forces

    names = [f"{c.name}.{what}" for what in ("normal_force", "friction_force") for c in contacts]
    W = np.array([tr[n] for n in names])
    W_end = np.array([tr[n + ".interval_end"] if n + ".interval_end" in tr.names else tr[n] for n in names])
    placement = tr.metadata.get("contact_forces", "interval")
    inputs = interval_forces(placement, grid, W, W_end)[0][:, k]
    t0, t1 = tr.time[grid.interval_starts[k]], tr.time[grid.interval_ends[k]]
    if placement != "collocation":
        return lambda t: (inputs[:2], inputs[2:])
    nodes = grid.scheme.nodes[collocation_nodes(grid.scheme)]
    V = inputs.reshape(nodes.size, len(names)).T  # stacked point by point

    def at(t):
        w = polynomial(V, nodes, np.array([(t - t0) / (t1 - t0)]))[:, 0]
        return w[:2], w[2:]
    return at


def _before_strike(biped, tr):
    """The strike (largest impulse) and the interval before it integrated alone (scipy, the file's torques and contact
    forces as its transcription holds them): ``(body, contact index, row, q, v⁻, forces of that interval)``."""
    from scipy.integrate import solve_ivp

    from colloc.discretization.interpolant import Interpolant
    from colloc.model.contact import generalized_force

    body = biped.robot()
    contacts = body.contacts
    impulses = np.array([tr[f"{c.name}.impulse"] for c in contacts])
    i, row = np.unravel_index(np.argmax(impulses), impulses.shape)
    itp = Interpolant(tr)
    ends = itp.grid.interval_ends
    k = int(np.flatnonzero(ends == row)[0])
    a = itp.grid.interval_starts[k]
    tau = [u.symbol for u in body.variables if u.kind == "control"]
    controls = [itp.control(u.name(), tr[u.name() + ".interval_end"][ends]) for u in tau]
    lam, fric = ca.SX.sym("lam", 2), ca.SX.sym("f", 2)
    eq = body.equations()
    gen = generalized_force(body, contacts, [lam[0], lam[1]], {0: fric[0], 1: fric[1]})
    acc = ca.Function("acc", [body.q, body.v, ca.vertcat(*tau), lam, fric],
                      [ca.solve(eq.mass_matrix, -ca.substitute(eq.residual, body.a, ca.DM.zeros(7)) + gen)])
    forces = _interval_forces(tr, contacts, itp.grid, k)

    def rhs(t, x):
        return np.r_[x[7:], np.array(acc(x[:7], x[7:], [c(t) for c in controls], *forces(t))).ravel()]

    names = [s.name() for s in body.coordinates + body.speeds]
    sol = solve_ivp(rhs, (tr.time[a], tr.time[row]), np.array([tr[n][a] for n in names]), rtol=1e-11, atol=1e-11)
    return body, int(i), int(row), sol.y[:7, -1], sol.y[7:, -1], forces


@pytest.mark.slow
def test_heel_strike_obeys_newtons_law(biped, step):
    """Newton's law at the strike, M(q)(v⁺ − v⁻) = W_nᵀP_n + W_tᵀP_t, with v⁻ from the interval before it
    integrated alone; the striking foot stops (e = 0) inside the friction cone."""
    tr = step.trajectory
    body, i, row, q, v_minus, _ = _before_strike(biped, tr)
    contacts = body.contacts
    assert tr[f"{contacts[i].name}.impulse"][row] > 5.0  # a real strike, not a relaxation's residue
    names = [s.name() for s in body.coordinates + body.speeds]
    v_plus = np.array([tr[n][row] for n in names[7:]])
    assert np.allclose(q, [tr[n][row] for n in names[:7]], atol=2e-3)  # the interval's own error
    q = np.array([tr[n][row] for n in names[:7]])  # the impact's configuration
    eq = body.equations()
    M, Wn, Wt = (np.array(f) for f in ca.Function("w", [body.q], [eq.mass_matrix, ca.vertcat(*[c.normal_jacobian for c in contacts]),
                                                                   ca.vertcat(*[c.tangent_jacobian for c in contacts])])(q))
    P = np.array([tr[f"{c.name}.impulse"][row] for c in contacts])
    Pt = np.array([tr[f"{c.name}.friction_impulse"][row] for c in contacts])
    momentum = M @ (v_plus - v_minus)
    assert np.allclose(momentum, Wn.T @ P + Wt.T @ Pt, atol=2e-2 * np.abs(momentum).max())
    assert (Wn @ v_minus)[i] < -0.1  # it strikes
    assert (Wn @ v_plus)[i] == pytest.approx(0.0, abs=1e-7)  # and stops: e = 0
    assert abs(Pt[i]) <= biped.FRICTION * P[i] + 1e-9
    # Kelly's heel strike (plastic, no slip, the robot with both feet free) maps the same v⁻ to the same v⁺
    kelly = load("five_link_biped")
    impact, _, _ = kelly.heel_strike(kelly.stance_model()[0])
    stance = contacts[1 - i].name.split(".")[1]
    angles = biped.absolute_angles(body.q)  # Kelly's labels: the standing leg's tibia first
    to_kelly = ca.vertcat(body.points[stance], *(angles if i == 1 else angles[::-1]))
    f = ca.Function("k", [body.q, body.v], [to_kelly, ca.jtimes(to_kelly, body.q, body.v)])
    kq, kv_minus = (np.array(a).ravel() for a in f(q, v_minus))
    kv_plus = impact.velocity_after(kq, kv_minus)[0]
    assert np.allclose(kv_plus, np.array(f(q, v_plus)[1]).ravel(), atol=2e-2)


@pytest.mark.slow
def test_stance_foot_sticks_up_to_the_strike(biped, step):
    # with its friction inside the cone the standing foot sticks at its pre-impact speed: with the friction rows on
    # the mesh point's post-impact speeds it slid at +0.15 m/s into the strike, 14 % below Kelly's cost (docs/urdf.md)
    tr = step.trajectory
    body, i, row, q, v_minus, forces = _before_strike(biped, tr)
    other = 1 - i
    lam, f = forces(tr.time[row])  # just before the strike
    assert lam[other] > 0 and abs(f[other]) < biped.FRICTION * lam[other]  # inside the cone: sticks
    slide = ca.Function("s", [body.q, body.v], [ca.mtimes(body.contacts[other].tangent_jacobian, body.v)])(q, v_minus)
    assert abs(float(slide)) < 1e-3


@pytest.mark.slow
def test_colloc_verify_passes_on_the_schedule_free_step_and_fails_it_tampered(biped, step, tmp_path):
    """``colloc verify`` of the schedule-free file (contact checks, event-driven re-simulation, Newton's law at the
    strike, its time found again); the same file with the strike's impulse cut by a tenth fails the state checks,
    cut by half Newton's law (whose limit there, about 4 N s, is the interval's local error on 12 intervals)."""
    from colloc.cli.commands import main
    from colloc.simulate.contact_checks import check_contact_file

    tr = step.trajectory
    body = biped.robot()
    # the foot on the ground at t0 rests there (REST_RATE): a foot leaving or closing at 1e-4 m/s there was an
    # impact at t = 2.7e-5 s for the simulator that the file lacked
    rest = ca.Function("r", [body.q, body.v], [ca.vertcat(*[c.gap for c in body.contacts]),
                                               ca.vertcat(*[ca.mtimes(c.normal_jacobian, body.v) for c in body.contacts])])
    gap, speed = (np.array(a).ravel() for a in rest([tr[s.name()][0] for s in body.coordinates], [tr[s.name()][0] for s in body.speeds]))
    standing = int(np.argmin(gap))
    assert gap[standing] < 1e-8 and abs(speed[standing]) < 1e-6
    free = tr.write(str(tmp_path / "free.npz"))
    assert main(["verify", free, os.path.join(ROOT, "problems", "urdf_biped.py")]) == 0
    bad = cl.Trajectory(tr.time.copy(), {n: tr[n].copy() for n in tr.names}, dict(tr.kinds), dict(tr.parameters), dict(tr.metadata))
    _, i, row, _, _, _ = _before_strike(biped, tr)
    bad[f"{body.contacts[i].name}.impulse"][row] *= 0.9
    checks, _ = check_contact_file(biped.build(), bad, 1e-6, 1e-2)
    assert "defects" in {c.name for c in checks if not c.passed}
    bad[f"{body.contacts[i].name}.impulse"][row] *= 0.5 / 0.9
    checks, _ = check_contact_file(biped.build(), bad, 1e-6, 1e-2)
    assert "newton" in {c.name for c in checks if not c.passed}


@pytest.mark.slow
def test_colloc_verify_passes_on_kellys_step(biped, tmp_path):
    """``colloc verify`` of Kelly's heel-strike step (phase by phase, the guard found again)."""
    from colloc.cli.commands import main

    two = cl.solve(biped.build_two_phase(), scheme="hermite-simpson", intervals=16, ipopt={"tol": 1e-8})
    assert two.success, two.message
    path = two.trajectory.write(str(tmp_path / "two.npz"))
    assert main(["verify", path, os.path.join(ROOT, "problems", "five_link_biped.py")]) == 0
