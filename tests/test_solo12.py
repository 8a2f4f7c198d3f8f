"""Solo12's forward jump (problems/solo12_jump.py) checked with Pinocchio, the independent oracle.

One solve at the script's settings (Hermite–Simpson, 6 intervals per phase), then:

* flight: Pinocchio's centre-of-mass acceleration (``pin.centerOfMass(q, v, a)``, from the solution's
  states and the speeds' derivative variables) is g at every grid point — the unactuated base rows of
  the dynamics hold there to the NLP's tolerance — and the second difference of the centre of mass
  along the grid is g to the discretisation error of the collocation polynomial;
* stance and landing: every foot (Pinocchio's frame placement) is at its ground point at every mesh
  point, where the projection method imposes it; the forces λ are the ground's pushes in world axes:
  their sum is m(a_com − g) by Pinocchio, normal forces ≥ 0, tangential ones inside the friction cone;
* ``colloc verify``'s checks of the result file (each phase's conditions, bounds, path constraints, every
  interval simulated alone, the junctions); its whole-horizon simulation is not judged (see the test).

Conventions: Pinocchio orders the free flyer (x, y, z, qx, qy, qz, qw), colloc (x, y, z, qw, qx, qy,
qz), both with the base speeds (v, ω) in the base frame; joints are matched by name.
"""
import importlib.util
import os

import numpy as np
import pytest

import colloc as cl

from solo12_setup import solo12  # noqa: E402

pin, URDF = solo12()

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "problems", "solo12_jump.py")
G = np.array([0.0, 0.0, -9.81])
NLP_TOL = 1e-8


def _script():
    spec = importlib.util.spec_from_file_location("solo12_jump", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def jump():
    module = _script()
    problem = module.build()
    res = cl.solve(problem, ipopt={"tol": NLP_TOL}, **module.SOLVE)
    assert res.success, res.message
    model = pin.buildModelFromUrdf(URDF, pin.JointModelFreeFlyer())
    return module, problem, res, model


def _pinocchio_states(model, traj, prefix="solo12."):
    """Pinocchio's (q, v, a) at every point of a phase's trajectory, columns of the solution."""
    base_q = [f"base_{c}" for c in ("x", "y", "z", "qx", "qy", "qz", "qw")]
    base_v = [f"base_{c}" for c in ("vx", "vy", "vz", "wx", "wy", "wz")]
    n = traj.time.size
    q, v, a = np.zeros((n, model.nq)), np.zeros((n, model.nv)), np.zeros((n, model.nv))
    for i, c in enumerate(base_q):
        q[:, i] = traj[prefix + c]
    for i, c in enumerate(base_v):
        v[:, i], a[:, i] = traj[prefix + c], traj[prefix + c + ".dot"]
    for name in model.names[2:]:  # after the universe and the free flyer
        joint = model.joints[model.getJointId(name)]
        q[:, joint.idx_q] = traj[prefix + name]
        v[:, joint.idx_v] = traj[prefix + name + "_speed"]
        a[:, joint.idx_v] = traj[prefix + name + "_speed.dot"]
    return q, v, a


def _com(model, q, v, a):
    data = model.createData()
    out = []
    for qk, vk, ak in zip(q, v, a):
        pin.centerOfMass(model, data, qk, vk, ak)
        out.append((data.com[0].copy(), data.acom[0].copy()))
    return np.array([c for c, _ in out]), np.array([acc for _, acc in out])


def _phases(problem, res):
    return dict(zip([p.name for p in problem.phases], res.phases))


@pytest.mark.slow
def test_flight_centre_of_mass_falls_with_gravity(jump):
    module, problem, res, model = jump
    flight = _phases(problem, res)["flight"]
    q, v, a = _pinocchio_states(model, flight)
    com, acom = _com(model, q, v, a)
    # the dynamics hold at every Hermite–Simpson grid point (mesh points and midpoints) to the NLP tolerance
    assert np.abs(acom - G).max() <= 1e-6, np.abs(acom - G).max()
    # the grid is uniform (mesh points and midpoints, spacing h/2); the centre of mass is a nonlinear function
    # of the states, whose collocation polynomials are cubic, so its second difference is g only to O(h²):
    # measured 0.03 m/s² at 6 intervals of 42 ms
    t = flight.time
    h = np.diff(t)
    assert np.allclose(h, h[0], rtol=1e-9)
    second = (com[2:] - 2 * com[1:-1] + com[:-2]) / h[0] ** 2
    assert np.abs(second - G).max() <= 0.01 * 9.81, second
    assert com[-1, 0] - com[0, 0] > 0.0  # it flies forward


@pytest.mark.slow
def test_feet_stay_on_their_ground_points_and_forces_are_ground_pushes_inside_the_cone(jump):
    module, problem, res, model = jump
    data = model.createData()
    mass = pin.computeTotalMass(model)
    phases = _phases(problem, res)
    q0, _ = _pinocchio_states(model, phases["stance"])[:2]
    pin.framesForwardKinematics(model, data, q0[0])
    ground = np.array([data.oMf[model.getFrameId(f)].translation.copy() for f in module.FEET])
    assert np.abs(ground[:, 2]).max() <= 1e-9  # the standing pose puts every foot on z = 0
    mu = 0.8
    for name, shift in (("stance", 0.0), ("landing", 0.2)):
        traj = phases[name]
        q, v, a = _pinocchio_states(model, traj)
        mesh = np.arange(0, traj.time.size, 2)  # Hermite–Simpson: mesh points are every other grid point
        for k in mesh:
            pin.framesForwardKinematics(model, data, q[k])
            feet = np.array([data.oMf[model.getFrameId(f)].translation for f in module.FEET])
            assert np.abs(feet - ground - [shift, 0.0, 0.0]).max() <= 1e-7, (name, k, feet)
        lam = np.stack([np.column_stack([traj[f"solo12.{f}.lambda_{i}"] for i in range(3)]) for f in module.FEET])
        _, acom = _com(model, q, v, a)
        # Newton for the whole robot: the ground's forces are all the external force besides gravity. The
        # dynamics hold exactly at the midpoints and the first point; at later mesh points the projection
        # method imposes them on the projected state, a hair away from the one in the file (its cost is 1e-11)
        balance = np.abs(lam.sum(axis=0) - mass * (acom - G)).max(axis=1)
        exact = np.r_[0, np.arange(1, traj.time.size, 2)]
        assert balance[exact].max() <= 1e-5 * mass * 9.81, balance
        assert balance.max() <= 1e-3 * mass * 9.81, balance
        normal, tangential = lam[..., 2], np.hypot(lam[..., 0], lam[..., 1])
        assert normal.min() >= -NLP_TOL
        assert (tangential - mu * normal).max() <= NLP_TOL
    assert phases["landing"]["solo12.base_x"][-1] == pytest.approx(0.2, abs=1e-9)


@pytest.mark.slow
def test_colloc_verify_passes_on_the_result_file(jump, tmp_path):
    # Every check `colloc verify` judges passes, and its phase-by-phase simulation integrates every phase.
    # Open loop the robot drifts (about 0.2 by take-off, 0.3 by touch-down, in the largest state), so the
    # simulated landing would start with its feet off their ground points, where IDAS cannot integrate the
    # constrained landing (IDA_TOO_MUCH_WORK): the landing restarts from the file's own state, and the report
    # says by how much the simulated start broke its constraints (measured 2.3e-3 m).
    from colloc.simulate.verify import interval_errors
    from colloc.simulate.multiphase_checks import check_phases, verify_file, verify_phases

    module, problem, res, model = jump
    path = tmp_path / "solo12_jump.csv"
    res.trajectory.write(path)
    traj = cl.Trajectory.read(path)
    checks = check_phases(problem, traj, interval_errors=interval_errors)
    assert len(checks) > 100
    failed = [f"{c.name}: {c.message}" for c in checks if not c.passed]
    assert not failed, failed
    sim = verify_phases(problem, traj)
    assert sim["success"], sim["message"]
    assert list(sim["restarts"]) == ["landing"] and sim["restarts"]["landing"] > 1e-4
    ok, report = verify_file(problem, traj)
    assert ok, report
    assert "landing restarted from the file's state" in report
