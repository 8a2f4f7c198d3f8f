"""The five-link biped from a URDF (problems/urdf_biped.py) against two oracles, and its step's physics.

* the URDF's model against Kelly's Lagrangian of the same robot (problems/five_link_biped.py's ``free_model``,
  written independently in absolute angles with the stance foot's position): the kinetic energy is invariant,
  so ``M_urdf = Jᵀ M_kelly J`` and ``g_urdf = Jᵀ g_kelly`` with ``J = ∂q_kelly/∂q_urdf``;
* the URDF's model against Pinocchio (``crba``, ``rnea``) loading the same file;
* the solved schedule-free step: no penetration, forces in the friction cone, the mirror periodicity, Newton's
  law at each foot strike, and ``colloc verify``'s checks.
"""
import importlib.util
import os

import casadi as ca
import numpy as np
import pytest

import colloc as cl

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pytest.importorskip("urdf_parser_py")


def _script(stem):
    spec = importlib.util.spec_from_file_location(stem, os.path.join(ROOT, "problems", f"{stem}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def biped():
    return _script("urdf_biped")


def _poses(seed, count=5):
    rng = np.random.default_rng(seed)
    return [(rng.uniform(-1.2, 1.2, 7), rng.normal(size=7), rng.normal(size=7)) for _ in range(count)]


def test_urdf_model_equals_kellys_lagrangian(biped):
    kelly = _script("five_link_biped")
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
