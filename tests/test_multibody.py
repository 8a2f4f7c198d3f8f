"""Multibody equations of motion and derived constraint levels at fixed numbers (no IPOPT)."""
import math

import casadi as ca
import numpy as np
import pytest

import colloc
from colloc.errors import ModelError
from colloc.model.multibody import MULTIPLIER_BOUNDS, Multibody

M_BOB, G, L_ROD = 2.0, 9.81, 1.5


def _constraint_levels(model, t, x, xdot, lam=(), u=(), p=()):
    """Every level of every constraint at one point, keyed by label."""
    out = {}
    for level in ("position", "velocity", "acceleration"):
        f, labels = model.constraint_function(level)
        err = np.array(f(t, x, xdot, u, lam, p)).ravel()
        out.update(zip(labels, err))
    return out


# -- planar pendulum in Cartesian coordinates ---------------------------------------------------
def cartesian_pendulum(name="pend", **kw):
    body = Multibody(name, coordinates=["x", "y"], **kw)
    x, y = body.coordinates
    force = body.control("force")
    body.kinetic_energy = 0.5 * M_BOB * ca.sumsqr(body.v)
    body.potential_energy = M_BOB * G * y
    body.generalized_force = ca.vertcat(force, 0)
    body.holonomic("rod", x**2 + y**2 - L_ROD**2)
    return body, force


def test_pendulum_names_and_multiplier():
    body, _ = cartesian_pendulum()
    model = colloc.Model([body])
    assert model.names == ["pend.x", "pend.y", "pend.x_speed", "pend.y_speed", "pend.force", "pend.rod.lambda"]
    (lam,) = model.multipliers
    assert lam.bounds == MULTIPLIER_BOUNDS == (-1000.0, 1000.0)
    assert [k.name for k in model.constraints] == ["pend.rod"]
    assert model.residual_labels() == ["residual:pend.x_speed", "residual:pend.y_speed"]


def test_pendulum_mass_matrix_and_residual():
    body, force = cartesian_pendulum()
    colloc.Model([body])
    q, v, a, lam, u = [0.3, -1.2], [0.5, 0.1], [1.0, 2.0], 0.7, 3.0
    M = np.array(body.mass_matrix_function()(q=q)["M"])
    np.testing.assert_allclose(M, M_BOB * np.eye(2))
    # m a + [0, m g] − [F, 0] − Gᵀλ with G = [2x, 2y]
    expected = [M_BOB * a[0] - 2 * q[0] * lam - u, M_BOB * a[1] + M_BOB * G - 2 * q[1] * lam]
    res = body.inverse_dynamics(q, v, a, [lam], inputs={force: u})
    np.testing.assert_allclose(res, expected, rtol=1e-14)
    res = body.inverse_dynamics(q, v, a, [lam], inputs={"pend.force": u})
    np.testing.assert_allclose(res, expected, rtol=1e-14)


def test_pendulum_whole_model_residual():
    body, _ = cartesian_pendulum()
    model = colloc.Model([body])
    x = [0.3, -1.2, 0.5, 0.1]
    z = [1.0, 2.0]
    xdot, res = model.dynamics()(0.0, x, z, [3.0], [0.7], [])
    np.testing.assert_allclose(np.array(xdot).ravel(), [0.5, 0.1, 1.0, 2.0])
    np.testing.assert_allclose(np.array(res).ravel(), [2.0 - 0.42 - 3.0, 4.0 + 2 * G + 1.68], rtol=1e-14)


def test_pendulum_rod_levels():
    body, _ = cartesian_pendulum()
    model = colloc.Model([body])
    px, py, vx, vy, ax, ay = 0.3, -1.2, 0.5, 0.1, 1.0, 2.0
    levels = _constraint_levels(model, 0.0, [px, py, vx, vy], [vx, vy, ax, ay], [0.7], [3.0])
    assert levels == pytest.approx({
        "holonomic:pend.rod": px**2 + py**2 - L_ROD**2,
        "holonomic:pend.rod.dot": 2 * px * vx + 2 * py * vy,
        "holonomic:pend.rod.ddot": 2 * (vx**2 + vy**2) + 2 * (px * ax + py * ay),
    }, rel=1e-14)


def test_vector_constraint_multipliers_and_bounds():
    body = Multibody("pin", coordinates=["x", "y", "theta"])
    x, y, th = body.coordinates
    body.kinetic_energy = 0.5 * ca.sumsqr(body.v)
    k = body.holonomic("joint", ca.vertcat(x - ca.cos(th), y - ca.sin(th)), multiplier_bounds=(-50, 50))
    assert [m.name for m in k.multipliers] == ["pin.joint.lambda_0", "pin.joint.lambda_1"]
    assert all(m.bounds == (-50.0, 50.0) for m in k.multipliers)
    model = colloc.Model([body])
    _, labels = model.constraint_function("velocity")
    assert labels == ["holonomic:pin.joint.dot[0]", "holonomic:pin.joint.dot[1]"]
    prob = colloc.Problem([body], t0=0.0, tf=1.0)  # a second Model from the same component
    prob.bound("pin.joint.lambda_1", -5, 5)
    assert prob.bounds["pin.joint.lambda_1"] == (-5.0, 5.0)


def test_time_dependent_holonomic():
    body = Multibody("slider", coordinates=["x"])
    (x,) = body.coordinates
    body.mass_matrix = ca.SX(3.0)
    body.holonomic("drive", x - ca.sin(2 * body.time))
    model = colloc.Model([body])
    t, px, vx, ax = 0.4, 0.2, -0.3, 1.1
    levels = _constraint_levels(model, t, [px, vx], [vx, ax], [0.0])
    assert levels == pytest.approx({
        "holonomic:slider.drive": px - math.sin(2 * t),
        "holonomic:slider.drive.dot": vx - 2 * math.cos(2 * t),
        "holonomic:slider.drive.ddot": ax + 4 * math.sin(2 * t),
    }, rel=1e-14)


# -- cart-pole via the Lagrangian against Kelly's explicit formulas -------------------------------
def test_cartpole_lagrangian_matches_kelly():
    m1, m2, ell, g = 1.0, 0.3, 0.5, 9.81
    body = Multibody("cartpole", coordinates=["x", "theta"])
    x, theta = body.coordinates
    tip = ca.vertcat(x + ell * ca.sin(theta), -ell * ca.cos(theta))
    body.kinetic_energy = 0.5 * m1 * body.speeds[0] ** 2 + 0.5 * m2 * ca.sumsqr(ca.jtimes(tip, body.q, body.qdot))
    body.potential_energy = m2 * g * tip[1]
    force = body.control("force", bounds=(-20, 20))
    body.generalized_force = ca.vertcat(force, 0)
    body.point("tip", tip)
    colloc.Model([body])

    mass = body.mass_matrix_function()
    rng = np.random.default_rng(7)
    for _ in range(5):
        q, v, u = rng.uniform(-3, 3, 2), rng.uniform(-3, 3, 2), rng.uniform(-20, 20)
        M = np.array(mass(q=q)["M"])
        bias_minus_tau = body.inverse_dynamics(q, v, np.zeros(2), inputs={force: u})
        acc = np.linalg.solve(M, -bias_minus_tau)
        s, c, w = math.sin(q[1]), math.cos(q[1]), v[1]
        kelly = [
            (ell * m2 * s * w**2 + u + m2 * g * c * s) / (m1 + m2 * (1 - c**2)),
            -(ell * m2 * c * s * w**2 + u * c + (m1 + m2) * g * s) / (ell * m1 + ell * m2 * (1 - c**2)),
        ]
        np.testing.assert_allclose(acc, kelly, rtol=1e-12, atol=1e-12)
    assert set(body.points) == {"tip"}


def test_inverse_dynamics_symbolic():
    body, force = cartesian_pendulum()
    q, v, a = ca.SX.sym("q", 2), ca.SX.sym("v", 2), ca.SX.sym("a", 2)
    res = body.inverse_dynamics(q, v, a, [0.0], inputs={force: 0.0})
    assert isinstance(res, ca.SX) and res.shape == (2, 1)
    with pytest.raises(ModelError, match="needs a value for `pend.force`"):
        body.inverse_dynamics([0, 0], [0, 0], [0, 0])
    with pytest.raises(ModelError, match="`pend.forc` in `inputs` is not used.*Did you mean `pend.force`"):
        body.inverse_dynamics([0, 0], [0, 0], [0, 0], inputs={"pend.forc": 1.0})


# -- knife edge: nonholonomic ----------------------------------------------------------------------
def test_knife_edge_levels_and_force():
    body = Multibody("knife", coordinates=["x", "y", "theta"], speeds=["vx", "vy", "omega"])
    x, y, th = body.coordinates
    vx, vy, om = body.speeds
    body.mass_matrix = ca.diag(ca.vertcat(2.0, 2.0, 0.5))
    k = body.nonholonomic("blade", ca.sin(th) * vx - ca.cos(th) * vy)
    assert k.position is None and [m.name for m in k.multipliers] == ["knife.blade.lambda"]
    model = colloc.Model([body])
    pth, pvx, pvy, pom, ax, ay, aw, lam = 0.7, 0.4, -0.2, 1.3, 0.5, -1.1, 0.3, 0.9
    s, c = math.sin(pth), math.cos(pth)
    x_ = [0.1, 0.2, pth, pvx, pvy, pom]
    xdot = [pvx, pvy, pom, ax, ay, aw]
    levels = _constraint_levels(model, 0.0, x_, xdot, [lam])
    assert levels == pytest.approx({
        "nonholonomic:knife.blade": s * pvx - c * pvy,
        "nonholonomic:knife.blade.dot": c * pom * pvx + s * pom * pvy + s * ax - c * ay,
    }, rel=1e-14)
    _, res = model.dynamics()(0.0, x_, [ax, ay, aw], [], [lam], [])
    np.testing.assert_allclose(np.array(res).ravel(), [2 * ax - s * lam, 2 * ay + c * lam, 0.5 * aw], rtol=1e-14)


def test_acceleration_constraint():
    body = Multibody("cart", coordinates=["x", "y"])
    x, y = body.coordinates
    vx, vy = body.speeds
    ax, ay = ca.vertsplit(body.a)
    body.mass_matrix = ca.SX.eye(2)
    k = body.acceleration("servo", ax + vx * ay - y)
    assert k.position is None and k.velocity is None
    model = colloc.Model([body])
    f, labels = model.constraint_function("acceleration")
    assert labels == ["acceleration:cart.servo"]
    err = float(f(0, [0.1, 0.2, 0.3, 0.4], [0.3, 0.4, 1.5, -2.0], [], [0.6], []))
    assert err == pytest.approx(1.5 + 0.3 * -2.0 - 0.2)
    _, res = model.dynamics()(0.0, [0.1, 0.2, 0.3, 0.4], [1.5, -2.0], [], [0.6], [])
    np.testing.assert_allclose(np.array(res).ravel(), [1.5 - 0.6, -2.0 - 0.3 * 0.6])  # G = [1, vx]


# -- quaternion rigid body: N(q) with nq = 4, nv = 3 ------------------------------------------------
def quaternion_matrix(q):
    w, x, y, z = ca.vertsplit(q)
    return 0.5 * ca.vertcat(ca.horzcat(-x, -y, -z), ca.horzcat(w, -z, y), ca.horzcat(z, w, -x), ca.horzcat(-y, x, w))


def quaternion_body():
    body = Multibody("body", coordinates=["qw", "qx", "qy", "qz"], speeds=["wx", "wy", "wz"],
                     kinematics=quaternion_matrix, coordinate_bounds={"qw": (-1, 1)})
    J = ca.DM([1.0, 2.0, 3.0])
    w = body.v
    torque = ca.vertcat(*[body.control(f"torque_{i}") for i in "xyz"])
    body.mass_matrix = ca.diag(J)
    body.bias_force = ca.cross(w, J * w)
    body.generalized_force = torque
    return body


def test_quaternion_body_builds():
    body = quaternion_body()
    model = colloc.Model([body])
    assert body.num_coordinates == 4 and body.num_speeds == 3
    assert model.residual_labels() == ["residual:body.wx", "residual:body.wy", "residual:body.wz"]
    quat = np.array([0.9, 0.1, -0.3, 0.2])
    quat /= np.linalg.norm(quat)
    w, wdot, tau = np.array([0.4, -0.5, 0.6]), np.array([0.1, 0.2, 0.3]), np.array([1.0, -1.0, 0.5])
    xdot, res = model.dynamics()(0.0, np.r_[quat, w], wdot, tau, [], [])
    qw, qx, qy, qz = quat
    expected_qdot = 0.5 * np.array([
        -qx * w[0] - qy * w[1] - qz * w[2],
        qw * w[0] - qz * w[1] + qy * w[2],
        qz * w[0] + qw * w[1] - qx * w[2],
        -qy * w[0] + qx * w[1] + qw * w[2],
    ])
    np.testing.assert_allclose(np.array(xdot).ravel()[:4], expected_qdot, rtol=1e-14)
    J = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(np.array(res).ravel(), J * wdot + np.cross(w, J * w) - tau, rtol=1e-14)


# -- refusals ------------------------------------------------------------------------------------
def test_refuses_nonholonomic_nonlinear_in_v():
    body = Multibody("car", coordinates=["x", "y"])
    vx, vy = body.speeds
    with pytest.raises(ModelError, match=r"Nonholonomic constraint `car.skid` is not linear in the speeds"):
        body.nonholonomic("skid", vx**2 + vy - 1)
    assert body.constraints == []  # nothing half-declared
    assert [v.kind for v in body.variables] == ["state"] * 4


def test_refuses_nonholonomic_without_speeds():
    body = Multibody("car", coordinates=["x", "y"])
    x, y = body.coordinates
    with pytest.raises(ModelError, match=r"`car.circle` does not depend on the speeds; declare it with `holonomic`"):
        body.nonholonomic("circle", x**2 + y**2 - 1)


def test_refuses_holonomic_using_speed():
    body = Multibody("pend", coordinates=["x", "y"])
    x, _ = body.coordinates
    vx, _ = body.speeds
    with pytest.raises(ModelError, match=r"Holonomic constraint `pend.rod` uses the speed `pend.x_speed`.*nonholonomic"):
        body.holonomic("rod", x * vx)


def test_refuses_holonomic_using_acceleration_or_control():
    body = Multibody("pend", coordinates=["x", "y"])
    x, _ = body.coordinates
    u = body.control("u")
    with pytest.raises(ModelError, match=r"`pend.rod` uses the acceleration `pend.x_speed.dot`"):
        body.holonomic("rod", x + body.a[0])
    with pytest.raises(ModelError, match=r"`pend.rod` uses the control `pend.u`"):
        body.holonomic("rod", x - u)
    with pytest.raises(ModelError, match=r"`pend.rod` does not depend on the coordinates"):
        body.holonomic("rod", body.time - 1)


def test_refuses_acceleration_nonlinear_in_a():
    body = Multibody("cart", coordinates=["x"])
    (a,) = ca.vertsplit(body.a)
    with pytest.raises(ModelError, match=r"Acceleration constraint `cart.servo` is not linear in the accelerations"):
        body.acceleration("servo", a**2 - 1)
    with pytest.raises(ModelError, match=r"`cart.servo` does not depend on the accelerations; declare it with `nonholonomic`"):
        body.acceleration("servo", body.speeds[0] - 1)


def test_refuses_redundant_hand_derived_constraint():
    body = Multibody("pend", coordinates=["x", "y"])
    x, y = body.coordinates
    vx, vy = body.speeds
    body.holonomic("rod", x**2 + y**2 - 1)
    with pytest.raises(ModelError, match=r"Constraint `pend.rod_rate` repeats constraint `pend.rod`"):
        body.nonholonomic("rod_rate", x * vx + y * vy)
    ax, ay = ca.vertsplit(body.a)
    with pytest.raises(ModelError, match=r"Constraint `pend.rod_acc` repeats constraint `pend.rod`"):
        body.acceleration("rod_acc", x * ax + y * ay + vx**2 + vy**2)
    assert [k.name for k in body.constraints] == ["pend.rod"]


def test_independent_constraints_are_accepted():
    body = Multibody("pend", coordinates=["x", "y", "z"])
    x, y, z = body.coordinates
    vx, vy, vz = body.speeds
    body.holonomic("sphere", x**2 + y**2 + z**2 - 1)
    body.nonholonomic("track", vz - x * vx)
    assert len(body.constraints) == 2


def test_constraint_the_kinematics_already_keep_is_a_position_invariant():
    # Φ_q N ≡ 0 and φ̇ ≡ 0: kept at position level only, without a multiplier (no force)
    body = quaternion_body()
    unit = body.holonomic("unit", ca.sumsqr(body.q) - 1)
    assert (unit.velocity, unit.acceleration, unit.multipliers, unit.num_rows) == (None, None, [], 1)
    with pytest.raises(ModelError, match=r"`body.unit_again` repeats constraint `body.unit`"):
        body.holonomic("unit_again", 2 * ca.sumsqr(body.q) - 2)
    with pytest.raises(ModelError, match=r"`body.mixed` mixes rows the kinematics keep by themselves"):
        body.holonomic("mixed", ca.vertcat(ca.sumsqr(body.q) - 1, body.q[1]))


def test_refuses_lagrangian_with_nonidentity_kinematics():
    body = Multibody("body", coordinates=["qw", "qx", "qy", "qz"], speeds=["wx", "wy", "wz"], kinematics=quaternion_matrix)
    with pytest.raises(ModelError, match=r"Multibody `body` has kinematics .* N ≠ I; .*mass_matrix"):
        body.kinetic_energy = 0.5 * ca.sumsqr(body.v)


@pytest.mark.parametrize("build, match", [
    (lambda: Multibody("b", coordinates=["x", "y"], speeds=["v"]), r"`b` has 2 coordinates and 1 speeds"),
    (lambda: Multibody("b", coordinates="x"), r"Coordinates of multibody `b` must be a list of names"),
    (lambda: Multibody("b", coordinates=["x"], kinematics=np.eye(1)), r"declares `kinematics`; name its speeds"),
    (lambda: Multibody("b", coordinates=["x"], speeds=["v"], kinematics=np.eye(2)), r"has shape \(2, 2\); expected \(nq, nv\) = \(1, 1\)"),
    (lambda: Multibody("b", coordinates=["x", "y"], coordinate_bounds={"z": (0, 1)}), r"Unknown coordinate `z` in `coordinate_bounds`"),
    (lambda: Multibody("b", coordinates=["x"], speed_bounds={"x_sped": (0, 1)}), r"Did you mean `x_speed`"),
])
def test_construction_errors(build, match):
    with pytest.raises(ModelError, match=match):
        build()


def test_refuses_missing_or_conflicting_equations():
    body = Multibody("b", coordinates=["x"])
    with pytest.raises(ModelError, match=r"Multibody `b` has no equations of motion"):
        colloc.Model([body])
    body.kinetic_energy = 0.5 * body.speeds[0] ** 2
    with pytest.raises(ModelError, match=r"already has a `kinetic_energy`"):
        body.mass_matrix = ca.SX(1.0)
    with pytest.raises(ModelError, match=r"`generalized_force` of multibody `b` has shape \(2, 1\); expected \(1, 1\)"):
        body.generalized_force = ca.vertcat(1, 2)
    with pytest.raises(ModelError, match=r"uses the derivative `b.x_speed.dot`"):
        body.generalized_force = body.a


def test_refuses_user_rows_and_late_changes():
    body, _ = cartesian_pendulum()
    body.derivative(body.coordinates[0], body.speeds[0])
    with pytest.raises(ModelError, match=r"writes the rows of its coordinates and speeds itself; .*`pend.x`"):
        colloc.Model([body])

    body, _ = cartesian_pendulum()
    colloc.Model([body])
    with pytest.raises(ModelError, match=r"`pend` is already part of a Model; set `potential_energy`"):
        body.potential_energy = 0
    with pytest.raises(ModelError, match=r"already part of a Model; declare `k`"):
        body.parameter("k")
    with pytest.raises(ModelError, match=r"already part of a Model; declare constraint `rod2`"):
        body.holonomic("rod2", body.coordinates[0])


def test_refuses_duplicate_constraint_and_point():
    body, _ = cartesian_pendulum()
    with pytest.raises(ModelError, match=r"Constraint `pend.rod` is declared twice"):
        body.holonomic("rod", body.coordinates[0] - 1)
    body.point("bob", body.q)
    with pytest.raises(ModelError, match=r"declares point `bob` twice"):
        body.point("bob", body.q)
    with pytest.raises(ModelError, match=r"Point `pend.fast` depends on speeds"):
        body.point("fast", body.v)
    with pytest.raises(ModelError, match=r"2-D or 3-D position"):
        body.point("line", body.coordinates[0])
