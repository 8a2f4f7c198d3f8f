"""MocoInverse's problem on hand-written models: a closed form with reserves only, and a held posture whose
optimum is a static optimization solved here with scipy."""
import math

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc import goals
from colloc.model import muscle as mus
from colloc.errors import ProblemError
from colloc.goals import TimeTable

INERTIA, WEIGHT_ARM = 0.3, 2.0     # kg m², m g d (N m)
COLUMN = "/jointset/elbow/flexion/value"


def pendulum():
    body = cl.Multibody("arm", coordinates=["flexion"])
    q, = body.coordinates
    v, = body.speeds
    body.kinetic_energy = 0.5 * INERTIA * v**2
    body.potential_energy = -WEIGHT_ARM * ca.cos(q)
    return body


def test_muscle_and_reserve_carry_the_closed_form_inverse_dynamics():
    """At every grid point r(q) F_T + F_opt u = ID(t) = I q̈ + m g d sin q with q(t) a cubic, which the B-spline
    of its table reproduces exactly, and r = −dl/dq of the muscle's path.  [DERIVED]"""
    q = lambda t: 0.8 + 0.3 * t**2 - 0.5 * t**3  # noqa: E731
    qdd = lambda t: 0.6 - 3.0 * t  # noqa: E731
    rows = np.linspace(0.0, 1.0, 11)
    body = pendulum()
    motion = goals.prescribed_motion(body, TimeTable(rows, {COLUMN: q(rows)}), {"arm.flexion": COLUMN})
    theta, = body.coordinates
    kind, o, i, force = MUSCLES[0]
    muscle = cl.DeGrooteFregly2016Muscle("m0", body=body, length=_length(kind, o, i, theta),
                                         prescribed_motion=motion.q, **_params(kind, o, i, force))
    problem = goals.inverse_problem(motion, [muscle], reserves=2.0)
    res = cl.solve(problem, intervals=goals.inverse_intervals(1.0, 0.04), ipopt={"tol": 1e-10})
    assert res.success
    t = res.trajectory.time
    arm = lambda t: o * i * np.sin(q(t)) / _length(kind, o, i, q(t))  # noqa: E731  (−dl/dθ of the flexor's path)
    torque = arm(t) * res.trajectory["m0.tension"] + 2.0 * res.trajectory["reserves.reserve_flexion"]
    np.testing.assert_allclose(torque, INERTIA * qdd(t) + WEIGHT_ARM * np.sin(q(t)), atol=1e-8)
    assert np.ptp(res.trajectory["m0.tension"]) > 1.0  # the muscle shares the load: the check has teeth


MUSCLES = (("flexor", 0.30, 0.045, 300.0), ("extensor", 0.25, 0.025, 400.0))
ANGLE = 0.9


def _length(kind, origin, insertion, theta):
    sign = 1.0 if kind == "flexor" else -1.0
    lib = ca if isinstance(theta, ca.SX) else np
    return lib.sqrt(origin**2 + insertion**2 + 2.0 * sign * origin * insertion * lib.cos(theta))


def _params(kind, o, i, force):
    rest = _length(kind, o, i, ANGLE)
    return dict(max_isometric_force=force, optimal_fiber_length=0.55 * rest, tendon_slack_length=0.45 * rest)


def _static_tendon_force(activation, length, p):
    """F̃_T of a muscle at rest (ṽ = 0) at constant length: the root in l_M of (a f_L + f_PE) cos α = f_T(l_T/l_s)."""
    from scipy.optimize import brentq

    def gap(fiber):
        l = fiber / p["optimal_fiber_length"]
        return activation * mus.active_force_length(l) + mus.passive_force_length(l) - \
            mus.tendon_force_length((length - fiber) / p["tendon_slack_length"])

    fiber = brentq(gap, 0.3 * p["optimal_fiber_length"], length - p["tendon_slack_length"], xtol=1e-15, rtol=1e-15)
    l = fiber / p["optimal_fiber_length"]
    return activation * mus.active_force_length(l) + mus.passive_force_length(l)


def _static_optimum():
    """min Σ a² + u² subject to Σ r_m F_max F̃_T,m(a_m) + u = m g d sin θ (reserve F_opt = 1), by scipy."""
    from scipy.optimize import minimize

    theta = ca.SX.sym("theta")
    arms = [float(ca.Function("r", [theta], [-ca.jacobian(_length(k, o, i, theta), theta)])(ANGLE)) for k, o, i, _ in MUSCLES]
    need = WEIGHT_ARM * math.sin(ANGLE)

    def reserve(a):
        return need - sum(r * p[3] * _static_tendon_force(x, _length(p[0], p[1], p[2], ANGLE), _params(*p))
                          for r, x, p in zip(arms, a, MUSCLES))

    best = minimize(lambda a: np.sum(a**2) + reserve(a) ** 2, x0=[0.1, 0.1], bounds=[(0.01, 1.0)] * 2,
                    method="L-BFGS-B", options=dict(ftol=1e-15, gtol=1e-12))
    return best.x, reserve(best.x)


def test_held_posture_matches_static_optimization():
    """A posture held still, with the muscle states periodic: the optimum is the steady one (every state
    constant, e = a, dF̃_T/dt = 0), so MocoInverse's objective per second is the static optimization's
    Σ a² + u².  (With free initial states the optimum is not steady: it starts from a stored tendon force
    and lets it relax, 0.3 % cheaper here.)"""
    rows = np.linspace(0.0, 0.4, 9)
    body = pendulum()
    motion = goals.prescribed_motion(body, TimeTable(rows, {COLUMN: 0 * rows + ANGLE}), {"arm.flexion": COLUMN})
    theta, = body.coordinates
    muscles = [cl.DeGrooteFregly2016Muscle(f"m{k}", body=body, length=_length(kind, o, i, theta),
                                           prescribed_motion=motion.q, **_params(kind, o, i, force))
               for k, (kind, o, i, force) in enumerate(MUSCLES)]
    with_activations = goals.inverse_problem(motion, muscles, minimize_sum_squared_activations=True, guess=False)
    assert [c.name for c in with_activations.costs] == ["excitation_effort", "auxiliary_derivatives", "activation_effort"]
    a = ca.vertcat(*[m.activation for m in muscles])
    assert float(ca.Function("f", [a], [with_activations.costs[-1].integral])([0.3, 0.4])) == pytest.approx(0.25)
    problem = goals.inverse_problem(motion, muscles)
    goals.periodicity(problem, [(v.name, v.name) for v in problem.model.states])
    assert [c.name for c in problem.costs] == ["excitation_effort", "auxiliary_derivatives"]
    res = cl.solve(problem, intervals=goals.inverse_intervals(0.4), ipopt={"tol": 1e-12})
    assert res.success
    activations, reserve = _static_optimum()
    for k, a in enumerate(activations):
        np.testing.assert_allclose(res.trajectory[f"m{k}.excitation"], a, atol=1e-6)
        np.testing.assert_allclose(res.trajectory[f"m{k}.activation"], a, atol=1e-6)
    np.testing.assert_allclose(res.trajectory["reserves.reserve_flexion"], reserve, atol=1e-6)
    assert res.objective == pytest.approx(0.4 * (np.sum(activations**2) + reserve**2), rel=1e-6)


def test_inverse_input_is_checked():
    body = pendulum()
    rows = np.linspace(0.0, 1.0, 5)
    table = TimeTable(rows, {COLUMN: rows})
    with pytest.raises(ProblemError, match="Coordinate `arm.flexion` of `arm` has no column"):
        goals.prescribed_motion(body, table, {})
    with pytest.raises(ProblemError, match="`arm.elbow` is not a coordinate of `arm`"):
        goals.prescribed_motion(body, table, {"arm.elbow": COLUMN})
    motion = goals.prescribed_motion(body, table, {"arm.flexion": COLUMN})
    with pytest.raises(ProblemError, match="needs at least one muscle"):
        goals.inverse_problem(motion, [])
    theta, = body.coordinates
    stray = cl.DeGrooteFregly2016Muscle("m", body=body, length=_length("flexor", 0.3, 0.045, theta),
                                        prescribed_motion=0.5 + 0 * cl.TIME, **_params("flexor", 0.3, 0.045, 300.0))
    with pytest.raises(ProblemError, match="Muscle `m` must be .* with prescribed_motion=motion.q"):
        goals.inverse_problem(motion, [stray])
    with pytest.raises(ProblemError, match="mesh_interval"):
        goals.inverse_intervals(1.0, 0.0)


# -- against MocoInverse itself ----------------------------------------------------------------------
ARM = dict(mass=1.5, com=0.17, inertia_com=0.01)
ARM_MUSCLES = (dict(name="flexor", origin=(0.0, 0.30), insertion=0.05, max_isometric_force=400.0),
               dict(name="extensor", origin=(0.0, -0.25), insertion=0.04, max_isometric_force=300.0))


def _arm_length(spec, q):
    """|p_insertion(q) − p_origin| for an origin on the ground and an insertion on the forearm's x axis."""
    (ox, oy), i = spec["origin"], spec["insertion"]
    lib = ca if isinstance(q, ca.SX) else np
    return lib.sqrt((i * lib.cos(q) - ox) ** 2 + (i * lib.sin(q) - oy) ** 2)


def _moco_solution_as_trajectory(theirs, specs):
    """Moco's solution in colloc's names: activations, tendon forces and their derivatives, excitations, reserve."""
    cols, kinds = {}, {}
    for name in (s["name"] for s in specs):
        for local, kind, values in (
                ("activation", "state", theirs["states"][f"/forceset/{name}/activation"]),
                ("normalized_tendon_force", "state", theirs["states"][f"/forceset/{name}/normalized_tendon_force"]),
                ("normalized_tendon_force.dot", "derivative",
                 theirs["derivatives"][f"/forceset/{name}/implicitderiv_normalized_tendon_force"]),
                ("excitation", "control", theirs["controls"][f"/forceset/{name}"])):
            cols[f"{name}.{local}"], kinds[f"{name}.{local}"] = np.array(values), kind
    cols["reserves.reserve_flexion"] = np.array(theirs["controls"]["/forceset/reserve_jointset_elbow_flexion"])
    kinds["reserves.reserve_flexion"] = "control"
    return cl.Trajectory(np.array(theirs["time"]), cols, kinds)


@pytest.mark.slow
def test_inverse_is_moco_inverses_nlp(tmp_path):
    """The same arm, motion, muscles and mesh in MocoInverse (run here, tolerance 1e-8) and in colloc (quintic
    splines of the motion, as Moco's PositionMotion).  Moco bounds each activation by its excitation's bounds,
    [0, 1] (``bound_activation_from_excitation``), so the colloc muscles get ``minimum_activation=0``.

    Same NLP: colloc's objective at Moco's solution is Moco's objective (to 1e-10) and Moco's solution
    satisfies colloc's constraints (to 1e-7).  colloc's optimum is lower (measured 0.0325555 against Moco's
    0.0325683, 4e-4 relative): IPOPT with colloc's exact Hessian, started from Moco's solution, leaves it for
    the same lower optimum it finds from static optimization."""
    import warnings

    from goal_oracle import moco

    duration, mesh_interval = 0.5, 0.02
    rows = np.linspace(0.0, duration, 26)
    motion_q = 0.3 + 0.4 * np.sin(2 * np.pi * rows / duration) + 0.1 * rows
    specs = []
    for spec in ARM_MUSCLES:
        rest = float(_arm_length(spec, 0.3))
        specs.append(dict(spec, optimal_fiber_length=0.55 * rest, tendon_slack_length=0.45 * rest))
    column = "/jointset/elbow/flexion/value"
    theirs = moco({"kind": "inverse", "arm": ARM, "muscles": specs, "reserves": 1.0, "time": rows.tolist(),
                   "kinematics": {column: motion_q.tolist()}, "mesh_interval": mesh_interval, "tolerance": 1e-8},
                  tmp_path)
    assert theirs["success"]
    body = cl.Multibody("arm", coordinates=["flexion"])
    q, = body.coordinates
    v, = body.speeds
    g, m, d = 9.80665, ARM["mass"], ARM["com"]
    body.kinetic_energy = 0.5 * (ARM["inertia_com"] + m * d**2) * v**2
    body.potential_energy = m * g * d * ca.sin(q)
    motion = goals.prescribed_motion(body, TimeTable(rows, {column: motion_q}), {"arm.flexion": column}, method="quintic")
    muscles = [cl.DeGrooteFregly2016Muscle(s["name"], body=body, length=_arm_length(s, q), prescribed_motion=motion.q,
                                           max_isometric_force=s["max_isometric_force"],
                                           optimal_fiber_length=s["optimal_fiber_length"],
                                           tendon_slack_length=s["tendon_slack_length"], minimum_activation=0.0)
               for s in specs]
    problem = goals.inverse_problem(motion, muscles, reserves=1.0)
    intervals = goals.inverse_intervals(duration, mesh_interval)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Moco's file names no colloc scheme: it is read at its own rows
        nlp = cl.build_nlp(problem, intervals=intervals, guess=_moco_solution_as_trajectory(theirs, specs))
    f, g_rows = (np.array(x).ravel() for x in ca.Function("fg", [nlp.w], [nlp.f, nlp.g])(nlp.layout.vector("guess")))
    assert f[0] == pytest.approx(theirs["objective"], rel=1e-10)
    assert np.max(np.maximum(nlp.rows.lower - g_rows, 0) + np.maximum(g_rows - nlp.rows.upper, 0)) < 1e-7
    res = cl.solve(problem, intervals=intervals, ipopt={"tol": 1e-10})
    assert res.success
    assert theirs["objective"] * (1 - 1e-3) < res.objective <= theirs["objective"] * (1 + 1e-8)
