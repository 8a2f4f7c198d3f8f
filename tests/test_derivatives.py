"""The point-by-point constraint Jacobian and Lagrangian Hessian (colloc.transcription.derivatives) equal CasADi's own
differentiation of the whole NLP, entry by entry, at random points, on every kind of collocation NLP."""
import importlib

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.transcription.derivatives import structured

CASES = [
    ("cartpole", {}, "hermite-simpson", {}),
    ("cartpole", {}, "trapezoidal", {"mode": "implicit"}),
    ("cartpole", {}, "hermite-simpson", {"control_interpolation": "linear"}),
    ("pendulum_cartesian", {}, "hermite-simpson", {}),
    ("pendulum_cartesian", {}, "hermite-simpson", {"constraint_method": "posa2016"}),
    ("pendulum_cartesian", {}, "radau-3", {}),
    ("pendulum_cartesian", {}, "legendre-gauss-3", {}),
    ("double_integrator_time", {}, "hermite-simpson", {}),          # free final time
    ("goddard", {}, "radau-2", {}),                                  # free final time, path constraint
    ("quaternion_slew", {}, "hermite-simpson", {}),                  # unit quaternion, N(q)
    ("hanging_mass_muscle", {"tendon_compliance": "implicit"}, "hermite-simpson", {}),
    ("closed_chain", {}, "hermite-simpson", {}),
    ("alp_rider", {}, "hermite-simpson", {}),                        # path constraint in t: hoisted
]


def _nlp(name, args, scheme, opts):
    mod = importlib.import_module(f"problems.{name}")
    return cl.build_nlp(mod.build(**args), scheme=scheme, intervals=5, **opts)


def _reference(nlp):
    w, g, f = nlp.w, nlp.g, nlp.f
    lam, sigma = ca.MX.sym("lam", g.numel()), ca.MX.sym("sigma")
    J = ca.Function("J", [w], [ca.jacobian(g, w)])
    H = ca.Function("H", [w, sigma, lam], [ca.hessian(sigma * f + ca.dot(lam, g), w)[0]])
    return J, H


@pytest.mark.parametrize("name,args,scheme,opts", CASES, ids=[f"{c[0]}-{c[2]}-{'-'.join(c[3].values()) or 'default'}" for c in CASES])
def test_structured_derivatives_equal_casadi(name, args, scheme, opts):
    nlp = _nlp(name, args, scheme, opts)
    d = structured(nlp, nlp.mapped)
    assert d is not None
    J, H = _reference(nlp)
    rng = np.random.default_rng(7)
    guess = nlp.layout.vector("guess")
    for _ in range(3):
        w = guess + rng.normal(scale=0.1, size=guess.size) * (1 + np.abs(guess))
        lam, sigma = rng.normal(size=nlp.g.numel()), rng.uniform(0.5, 2)
        g_ref = np.asarray(ca.Function("g", [nlp.w], [nlp.g])(w)).ravel()
        g, jac = d["jac_g"](w, [])
        np.testing.assert_allclose(np.asarray(g).ravel(), g_ref, rtol=1e-12, atol=1e-12)
        jac_ref = np.asarray(ca.densify(J(w)))
        scale = 1 + np.abs(jac_ref).max()
        np.testing.assert_allclose(np.asarray(ca.densify(jac)), jac_ref, rtol=0, atol=1e-10 * scale)
        f, grad = d["grad_f"](w, [])
        grad_ref = np.asarray(ca.Function("grad", [nlp.w], [ca.gradient(nlp.f, nlp.w)])(w)).ravel()
        assert float(f) == pytest.approx(float(ca.Function("f", [nlp.w], [nlp.f])(w)), rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(np.asarray(grad).ravel(), grad_ref, rtol=0, atol=1e-10 * (1 + np.abs(grad_ref).max()))
        hess = np.asarray(ca.densify(d["hess_lag"](w, [], sigma, lam)))
        hess_ref = np.triu(np.asarray(ca.densify(H(w, sigma, lam))))
        scale = 1 + np.abs(hess_ref).max()
        np.testing.assert_allclose(hess, hess_ref, rtol=0, atol=1e-9 * scale)


@pytest.mark.parametrize("name", ["alp_rider", "muscle_redundancy"])
def test_time_alone_is_evaluated_once(name):
    """On a fixed horizon what the point function computes from the time alone becomes numbers: the mapped
    function no longer reads t, and its outputs at the grid equal the point function's own."""
    problem = importlib.import_module(f"problems.{name}").build()
    nlp = cl.build_nlp(problem, scheme="hermite-simpson", intervals=5)
    call = nlp.mapped[0]
    assert call.hoisted and "t" not in call.function.name_in() and call.function.name_in()[-1] == "fixed"
    w = nlp.layout.vector("guess") + np.random.default_rng(5).normal(scale=0.1, size=nlp.layout.size)
    read = [a for a in call.inputs if isinstance(a, ca.MX) and ca.symvar(a)]
    args = dict(zip(call.function.name_in(), ca.Function("v", [nlp.w], read).call([w])))
    t0, tf = problem.t0_value, problem.tf_bounds[0]
    times = t0 + nlp.grid.tau * (tf - t0)
    point = nlp.point
    full = [args.get(point.name_in(i), np.zeros((point.size1_in(i), times.size))) for i in range(point.n_in())]
    full[0] = times[None, :]
    own = dict(zip(point.name_out(), point.map(times.size).call(full)))
    lifted = ca.Function("y", [nlp.w], list(call.outputs)).call([w])
    for name_out, value in zip(call.function.name_out(), lifted):
        np.testing.assert_allclose(np.asarray(value), np.asarray(own[name_out]), rtol=1e-12, atol=1e-12)


def test_multi_phase_derivatives_equal_casadi():
    """Every phase's mapped point function is lifted at once; a multi-phase NLP with an impact still agrees."""
    mod = importlib.import_module("problems.five_link_biped")
    mp = mod.build()
    nlp = cl.build_nlp(mp, intervals=4)
    assert len(nlp.mapped) >= 1
    d = structured(nlp, nlp.mapped)
    J, H = _reference(nlp)
    rng = np.random.default_rng(3)
    guess = nlp.layout.vector("guess")
    w = guess + rng.normal(scale=0.05, size=guess.size) * (1 + np.abs(guess))
    lam = rng.normal(size=nlp.g.numel())
    jac_ref = np.asarray(ca.densify(J(w)))
    np.testing.assert_allclose(np.asarray(ca.densify(d["jac_g"](w, [])[1])), jac_ref, atol=1e-10 * (1 + np.abs(jac_ref).max()))
    hess_ref = np.triu(np.asarray(ca.densify(H(w, 1.3, lam))))
    np.testing.assert_allclose(np.asarray(ca.densify(d["hess_lag"](w, [], 1.3, lam))), hess_ref, atol=1e-9 * (1 + np.abs(hess_ref).max()))


def test_same_optimum_as_casadis_differentiation():
    """Solved with the point-by-point derivatives or with CasADi's (expanded), the cart-pole reaches the same optimum."""
    prob = importlib.import_module("problems.cartpole").build()
    a = cl.solve(prob, intervals=30)
    b = cl.solve(prob, intervals=30, expand=True)
    assert a.success and b.success
    assert abs(a.objective - b.objective) <= 1e-9 * abs(b.objective)
    for name, kind in b.trajectory.kinds.items():
        if kind in ("state", "control"):
            np.testing.assert_allclose(a.trajectory[name], b.trajectory[name], atol=1e-6, err_msg=name)


@pytest.mark.parametrize("method, own", [("bordalba2023", {"projection"}), ("posa2016", {"velocity_correction"})])
def test_constraint_methods_calls_are_lifted_too(method, own):
    """The constraint method's mapped calls (the dynamics at projected states, the levels at mesh points,
    the projection or velocity correction) are differentiated point by point like the point function:
    a robot's kinematic constraints are as costly to differentiate through the whole graph as its dynamics."""
    nlp = _nlp("pendulum_cartesian", {}, "hermite-simpson", {"constraint_method": method})
    names = [m.function.name() for m in nlp.mapped]
    assert names[0] == "point" and own <= set(names)
    assert len(names) == (4 if method == "bordalba2023" else 3)


@pytest.mark.parametrize("name,args,scheme,opts", CASES[:7], ids=[f"{c[0]}-{c[2]}-{'-'.join(c[3].values()) or 'default'}" for c in CASES[:7]])
def test_inputs_read_off_the_graph_equal_their_jacobian(name, args, scheme, opts):
    """The mapped calls' inputs are slices of the layout's blocks: the selection matrix read off the MX graph
    is CasADi's Jacobian of the stacked inputs, entry by entry, and is found for every call of these NLPs."""
    from colloc.transcription.derivatives import _selection_matrix
    nlp = _nlp(name, args, scheme, opts)
    for m in nlp.mapped:
        n = m.count
        V = ca.vertcat(*[a if a.size2() == n else ca.repmat(a, 1, n) for a in m.inputs])
        S = _selection_matrix(m.inputs, n, nlp.w)
        assert S is not None, m.function.name()
        np.testing.assert_array_equal(np.asarray(ca.densify(S)), np.asarray(ca.densify(ca.evalf(ca.jacobian(ca.vec(V), nlp.w)))))


def test_inputs_that_are_not_selections_are_differentiated():
    """An input computed from w (a time scaled by a free step, a sum) is left to CasADi's Jacobian."""
    from colloc.transcription.derivatives import _selection_matrix
    w = ca.MX.sym("w", 6)
    X = ca.reshape(w[:4], 2, 2)
    assert _selection_matrix([X, ca.DM([[0.0, 1.0]])], 2, w) is not None
    assert _selection_matrix([X, w[4] * ca.DM([[0.0, 1.0]])], 2, w) is None
    assert _selection_matrix([X[0, :] + X[1, :]], 2, w) is None
