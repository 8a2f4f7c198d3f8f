"""The skeleton of OpenSim models read by colloc.opensim equals OpenSim's own at random states.

OpenSim (PyPI `opensim`) is the oracle; it runs in a subprocess (tests/oracle/osim_skeleton.py) because
its wheel carries its own libcasadi. At 20 random states per model (coordinates within their ranges):
the mass matrix (SimbodyMatterSubsystem::calcM), the inverse dynamics with gravity and no forces
(InverseDynamicsSolver::solve) and the pose in ground of every body and PhysicalOffsetFrame agree to
1e-9, relative to the largest entry where that is above 1.
"""
from __future__ import annotations

import hashlib
import os
import pathlib
import subprocess
import sys
import tempfile

import casadi as ca
import numpy as np
import pytest

import colloc.opensim as co

ROOT = pathlib.Path(__file__).resolve().parents[1]
MODELS = ROOT / "models" / "opensim"
ORACLE = ROOT / "tests" / "oracle" / "osim_skeleton.py"
FILES = ["2D_gait.osim", "gait10dof18musc_subject01.osim", "leg6dof9musc.osim", "gait2354_simbody.osim",
         "Rajagopal2015_right_leg_9musc.osim"]
NUM_STATES = 20


def _opensim_available():
    try:
        return subprocess.run([sys.executable, "-c", "import opensim"], capture_output=True, timeout=120).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def oracle(model, script=ORACLE, extra=()):
    """OpenSim's numbers for ``model`` (an .npz), computed once per file and script version in the temp dir."""
    key = hashlib.sha1((model.read_bytes() + script.read_bytes() + repr(extra).encode())).hexdigest()[:16]
    out = pathlib.Path(tempfile.gettempdir()) / f"colloc_osim_{model.stem}_{key}.npz"
    if not out.exists():
        if not _opensim_available():
            pytest.skip("the `opensim` package is not importable (pip install colloc[opensim])")
        tmp = out.with_suffix(f".{os.getpid()}.npz")
        subprocess.run([sys.executable, str(script), str(model), str(tmp), *map(str, extra)], check=True,
                       capture_output=True, timeout=600, cwd=tempfile.gettempdir())  # OpenSim writes opensim.log there
        os.replace(tmp, out)
    return np.load(out)


def _close(ours, theirs, tol=1e-9):
    scale = max(1.0, float(np.max(np.abs(theirs))))
    return float(np.max(np.abs(np.asarray(ours) - np.asarray(theirs)))) <= tol * scale


@pytest.fixture(scope="module", params=FILES)
def case(request):
    path = MODELS / request.param
    ref = oracle(path, extra=(NUM_STATES, 0))
    model = co.load(path, forces=False)
    return model, ref


def test_coordinates_are_openSims_in_file_order(case):
    model, ref = case
    assert model.skeleton.coordinates == list(ref["coordinates"])


def test_mass_matrix_and_inverse_dynamics_equal_openSims(case):
    model, ref = case
    body = model.body
    eq = body.equations()
    f = ca.Function("f", [body.q, body.v, body.a], [eq.mass_matrix, body._inverse_dynamics])
    for k in range(NUM_STATES):
        M, tau = (np.array(x) for x in f(ref["q"][k], ref["v"][k], ref["a"][k]))
        assert _close(M, ref["M"][k]), (k, np.max(np.abs(M - ref["M"][k])))
        assert _close(tau.ravel(), ref["tau"][k]), (k, np.max(np.abs(tau.ravel() - ref["tau"][k])))


def test_every_frame_pose_equals_openSims(case):
    model, ref = case
    sk = model.skeleton
    frames = list(ref["frames"])
    outs = [x for name in frames for x in sk.frame_pose(name)]
    f = ca.Function("poses", [sk.q], outs)
    for k in range(NUM_STATES):
        vals = f(ref["q"][k])
        for i, name in enumerate(frames):
            assert _close(vals[2 * i], ref["R"][k, i]), (name, k)
            assert _close(np.array(vals[2 * i + 1]).ravel(), ref["p"][k, i]), (name, k)


def test_functions_equal_openSims_inside_and_outside_the_knots():
    """SimmSpline (2, 3, 4 and 8 knots), PiecewiseLinearFunction, PolynomialFunction, LinearFunction
    against OpenSim's calcValue at 41 points from well left of the knots to well right of them."""
    from colloc.opensim import functions as fn

    ref = oracle(ROOT / "tests" / "oracle" / "osim_functions.py", ROOT / "tests" / "oracle" / "osim_functions.py")
    s = ca.SX.sym("s")
    x, y = ref["x"], ref["y"]
    cases = {f"simm{n}": fn.simm_spline(x[:n], y[:n]) for n in (2, 3, 4, 8)}
    cases.update({f"linear{n}": fn.piecewise_linear(x[:n], y[:n]) for n in (2, 3, 4, 8)})
    cases["polynomial"] = fn.polynomial(ref["poly"])
    cases["linearfunction"] = lambda z: 1.7 * z - 0.4
    for key, f in cases.items():
        F = ca.Function("f", [s], [f(s)])
        ours = np.array([float(F(v)) for v in ref["s"]])
        assert _close(ours, ref[key], 1e-12), (key, np.max(np.abs(ours - ref[key])))


def _lagrangian_bias(model):
    """``c(q, v)`` of the tree from its own M(q) and potential by Lagrange: ``Ṁv − ½ ∂(vᵀMv)/∂q + ∂V/∂q``."""
    body, tree = model.body, model.skeleton.tree
    q, v = body.q, body.v
    M = body.mass_matrix
    g = ca.DM(model.skeleton.spec.gravity)
    V = 0
    for b, (R, p) in zip(tree.bodies, tree.world_poses(q)):
        V = V - b.mass * ca.dot(g, p + ca.mtimes(R, ca.DM(b.com)))
    Mv = ca.mtimes(M, v)
    return ca.jtimes(Mv, q, v) - 0.5 * ca.gradient(ca.dot(v, Mv), q) + ca.gradient(V, q)


@pytest.mark.parametrize("exact", [True, False])
def test_exact_velocity_product_is_lagranges_and_simbodys_differs_only_where_stated(exact):
    """With ``exact=True`` the RNEA bias of the Rajagopal knee (three rotations, one coordinate) is the
    Lagrangian one; Simbody's FunctionBased Hdot (the default, OpenSim's numbers) is not, by a small amount."""
    model = co.load(MODELS / "Rajagopal2015_right_leg_9musc.osim", forces=False, exact=exact)
    body = model.body
    f = ca.Function("f", [body.q, body.v], [body.bias_force, _lagrangian_bias(model)])
    rng = np.random.default_rng(1)
    gap = 0.0
    for _ in range(5):
        q = rng.uniform(-0.5, 0.5, body.q.numel()) + np.where(np.array(model.skeleton.coordinates) == "knee_angle_r", 1.0, 0.0)
        c, c_lag = (np.array(x).ravel() for x in f(q, rng.normal(size=body.v.numel())))
        gap = max(gap, np.max(np.abs(c - c_lag)) / max(1.0, np.max(np.abs(c_lag))))
    if exact:
        assert gap < 1e-10
    else:
        assert 1e-7 < gap < 1e-2


def _quaternion(R):
    """Unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method, w ≥ 0)."""
    K = np.array([[R[0, 0] - R[1, 1] - R[2, 2], R[1, 0] + R[0, 1], R[2, 0] + R[0, 2], R[1, 2] - R[2, 1]],
                  [R[1, 0] + R[0, 1], R[1, 1] - R[0, 0] - R[2, 2], R[2, 1] + R[1, 2], R[2, 0] - R[0, 2]],
                  [R[2, 0] + R[0, 2], R[2, 1] + R[1, 2], R[2, 2] - R[0, 0] - R[1, 1], R[0, 1] - R[1, 0]],
                  [R[1, 2] - R[2, 1], R[2, 0] - R[0, 2], R[0, 1] - R[1, 0], R[0, 0] + R[1, 1] + R[2, 2]]]) / 3
    x, y, z, w = np.linalg.eigh(K)[1][:, -1]
    x, y, z = -x, -y, -z  # K is Bar-Itzhack's for Rᵀ
    return np.array([w, x, y, z]) * (1 if w >= 0 else -1)


def _zoo_state(model, ref, k):
    """colloc's (q, v, a) for OpenSim's state k of the joint zoo, and J with OpenSim's u = J v.

    A BallJoint's or FreeJoint's quaternion and translation come from OpenSim's own poses of the joint's
    two frames; Simbody's ball and free speeds are the angular velocity (and the velocity of M's origin)
    in the parent frame F, colloc's in the body, so ``u = R_FM v`` blockwise and, for the free joint's
    linear part, ``a = R_FMᵀ u̇ − ω × v``.
    """
    sk = model.skeleton
    frames = list(ref["frames"])
    names = list(ref["coordinates"])
    q, v, a = [], [], []
    J = np.zeros((len(names), len(sk.speeds)))
    for j in sk.spec.joints:
        idx = [names.index(c.name) for c in j.coordinates]
        if j.kind in ("BallJoint", "FreeJoint"):
            F, M = frames.index(j.parent), frames.index(j.child)
            RF = ref["R"][k, F]
            R = RF.T @ ref["R"][k, M]
            rot, lin = idx[:3], idx[3:]
            w_m = R.T @ ref["v"][k, rot]
            if lin:
                q += list(RF.T @ (ref["p"][k, M] - ref["p"][k, F]))
                v_m = R.T @ ref["v"][k, lin]
                v += list(v_m) + list(w_m)
                a += list(R.T @ ref["a"][k, lin] - np.cross(w_m, v_m)) + list(R.T @ ref["a"][k, rot])
            else:
                v += list(w_m)
                a += list(R.T @ ref["a"][k, rot])
            q += list(_quaternion(R))
            col = len(v) - len(idx)
            for block, rows in ((0, lin), (len(lin), rot)):
                if rows:
                    J[np.ix_(rows, range(col + block, col + block + 3))] = R
        else:
            q += list(ref["q"][k, idx])
            v += list(ref["v"][k, idx])
            a += list(ref["a"][k, idx])
            for r in idx:
                J[r, len(v) - len(idx) + idx.index(r)] = 1.0
    return np.array(q), np.array(v), np.array(a), J


def test_every_joint_type_equals_openSim():
    """A chain of Free, Ball, Universal, Gimbal, Planar, Slider, Pin, Weld and Custom joints (splines,
    polynomial, multiplier, piecewise-linear and constant functions, oblique axes, coordinates used out of
    order) with random offsets: poses, frame velocities (Skeleton.frame_velocity), M and inverse dynamics equal
    OpenSim's."""
    path = ROOT / "tests" / "data" / "joint_zoo.osim"
    ref = oracle(path, extra=(NUM_STATES, 3))
    model = co.load(path, forces=False)
    sk, body = model.skeleton, model.body
    frames = list(ref["frames"])
    poses = [x for name in frames for x in sk.frame_pose(name)]
    twists = [x for name in frames for x in sk.frame_velocity(name)]
    f = ca.Function("f", [body.q, body.v, body.a], [body.mass_matrix, body._inverse_dynamics] + poses + twists)
    n = len(frames)
    for k in range(NUM_STATES):
        q, v, a, J = _zoo_state(model, ref, k)
        out = [np.array(x) for x in f(q, v, a)]
        M, tau, poses_k, twists_k = out[0], out[1].ravel(), out[2:2 + 2 * n], out[2 + 2 * n:]
        for i in range(n):
            assert _close(poses_k[2 * i], ref["R"][k, i]) and _close(poses_k[2 * i + 1].ravel(), ref["p"][k, i]), (frames[i], k)
            assert _close(twists_k[2 * i].ravel(), ref["w"][k, i]) and _close(twists_k[2 * i + 1].ravel(), ref["pdot"][k, i]), (frames[i], k)
        assert _close(M, J.T @ ref["M"][k] @ J), k
        assert _close(tau, J.T @ ref["tau"][k]), k


@pytest.mark.parametrize("file", ["leg6dof9musc.osim", "Rajagopal2015_right_leg_9musc.osim"])
def test_coordinate_coupler_is_openSims_function(file):
    """The holonomic constraint φ = s f(q_ind) − q_dep of each CoordinateCouplerConstraint, with OpenSim's
    own s f(q_ind) (the spline of leg6dof9musc's patella, Rajagopal's identity)."""
    path = MODELS / file
    ref = oracle(path, extra=(NUM_STATES, 0))
    model = co.load(path, forces=False)
    body, names = model.body, list(ref["coordinates"])
    cons = {k.name.split(".")[-1]: k for k in body.constraints}
    assert len(ref["couplers"]) == 1
    con = cons[str(ref["couplers"][0])]
    f = ca.Function("phi", [body.q], [con.position])
    dep = next(n for n in names if n in ("knee_angle_pat_r", "knee_angle_r_beta"))
    for k in range(NUM_STATES):
        phi = float(f(ref["q"][k]))
        assert abs(phi - (ref["coupling"][k, 0] - ref["q"][k, names.index(dep)])) < 1e-12


def test_sto_with_openSims_names_is_read_by_openSim_as_states_and_controls(tmp_path):
    """A trajectory of 2D_gait written by colloc.opensim.write_sto: OpenSim reads it as a TimeSeriesTable, a
    MocoTrajectory whose states and controls are the model's, and a StatesTrajectory of the model (which
    refuses unknown state columns) whose coordinate values and speeds are colloc's; the control is named by
    the actuator's path in the model, as Moco names it."""
    from colloc import Trajectory

    path = MODELS / "2D_gait.osim"
    model = co.load(path, forces=["lumbarAct"])
    body = model.body
    rng = np.random.default_rng(3)
    t = np.linspace(0.0, 0.5, 6)
    columns, kinds = {}, {}
    for v in body.variables:
        columns[v.name] = rng.uniform(-0.3, 0.3, t.size)
        kinds[v.name] = v.kind
    traj = Trajectory(t, columns, kinds, metadata={"problem": "two_d_gait"})
    sto = co.write_sto(traj, model, tmp_path / "gait.sto")
    back = co.from_opensim(Trajectory.read(sto), model)
    assert back.names == traj.names
    if not _opensim_available():
        pytest.skip("the `opensim` package is not importable")
    out = tmp_path / "read.npz"
    subprocess.run([sys.executable, str(ROOT / "tests" / "oracle" / "osim_sto.py"), str(path), str(sto), str(out)],
                   check=True, capture_output=True, timeout=300, cwd=str(tmp_path))
    ref = np.load(out)
    names = model.skeleton.opensim_names
    assert set(ref["state_names"]) == {names[v.name] for v in body.variables if v.kind == "state"}
    assert list(ref["control_names"]) == ["/lumbarAct"]  # 2D_gait keeps lumbarAct among its <components>
    assert "/lumbarAct" in set(ref["actuators"])  # the path Moco names its control by
    np.testing.assert_allclose(ref["time"], t)
    for i, c in enumerate(ref["coordinates"]):
        np.testing.assert_allclose(ref["values"][:, i], traj[f"model.{c}"], rtol=0, atol=1e-15)
        np.testing.assert_allclose(ref["speeds"][:, i], traj[f"model.{c}_speed"], rtol=0, atol=1e-15)
    np.testing.assert_allclose(ref["controls"][:, 0], traj["model.lumbarAct"], rtol=0, atol=1e-15)
