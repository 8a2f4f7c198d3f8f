"""DeGroote–Fregly 2016 muscles: curves, errors, equilibrium, twins, redundancy, verification, files, plots.

References: the curves' constants are those of OpenSim 4's DeGrooteFregly2016Muscle
(docs/muscles.md, De Groote et al., Ann. Biomed. Eng. 44(10), 2016, corrected);
the equilibrium height is the scalar root derived in problems/hanging_mass_muscle.py; the
redundancy torque is Multibody.inverse_dynamics of the muscle-free skeleton.
"""
from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.model import muscle as mus
from colloc.results.oscillation import oscillating_points, warnings as oscillation_warnings

PROBLEMS = Path(__file__).resolve().parents[1] / "problems"
IPOPT = dict(print_level=0, tol=1e-10)


def load(stem):
    spec = importlib.util.spec_from_file_location(f"problems.{stem}", PROBLEMS / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HANG = load("hanging_mass_muscle")
ELBOW = load("elbow_reach")
REDUNDANCY = load("muscle_redundancy")


# -- curves ------------------------------------------------------------------------------------
# The published forms re-typed from docs/muscles.md / OpenSim's DeGrooteFregly2016Muscle.cpp, independently
# of colloc/muscle.py, so a typo in either shows up at many points.
def _published_fl(l):
    rows = [(0.8150671134243542, 1.055033428970575, 0.162384573599574, 0.063303448465465),
            (0.433004984392647, 0.716775413397760, -0.029947116970696, 0.200356847296188),
            (0.1, 1.0, 0.5 * math.sqrt(0.5), 0.0)]
    return sum(b1 * np.exp(-0.5 * (l - b2) ** 2 / (b3 + b4 * l) ** 2) for b1, b2, b3, b4 in rows)


def _published_fv(v):
    d1, d2, d3, d4 = -0.3211346127989808, -8.149, -0.374, 0.8825327733249912
    return d1 * np.arcsinh(d2 * v + d3) + d4


def _published_fpe(l, e0=0.6):
    offset = np.exp(4.0 * (0.2 - 1.0) / e0)
    return (np.exp(4.0 * (l - 1.0) / e0) - offset) / (np.exp(4.0) - offset)


def _published_ft(lt, eps=0.049):
    kt = np.log((1.0 + 0.2) / 0.2) / eps
    return 0.2 * np.exp(kt * (lt - 1.0)) - 0.2


def test_curves_match_the_published_forms_at_many_points():
    l = np.linspace(0.2, 1.8, 401)
    v = np.linspace(-1.0, 1.0, 401)
    lt = np.linspace(0.99, 1.06, 401)
    np.testing.assert_allclose(mus.active_force_length(l), _published_fl(l), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(mus.passive_force_length(l), _published_fpe(l), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(mus.force_velocity(v), _published_fv(v), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(mus.tendon_force_length(lt), _published_ft(lt), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(mus.passive_force_length(l, 0.4), _published_fpe(l, 0.4), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(mus.tendon_force_length(lt, 0.1), _published_ft(lt, 0.1), rtol=1e-12, atol=1e-14)


def test_curves_pass_through_the_defining_points():
    # OpenSim's constants make these exact (the supplement's rounded ones miss f_V(0) = 1 and f_V(-1) = 0).
    assert mus.active_force_length(1.0) == pytest.approx(1.0, abs=1e-14)
    assert mus.force_velocity(0.0) == pytest.approx(1.0, abs=1e-14)
    assert mus.force_velocity(-1.0) == pytest.approx(0.0, abs=1e-14)
    assert mus.tendon_force_length(1.0) == pytest.approx(0.0, abs=1e-15)
    assert mus.tendon_force_length(1.049) == pytest.approx(1.0, abs=1e-13)
    assert mus.passive_force_length(1.6) == pytest.approx(1.0, abs=1e-13)
    assert mus.passive_force_length(0.2) == pytest.approx(0.0, abs=1e-15)
    assert mus.tendon_stiffness_factor() == pytest.approx(math.log(6.0) / 0.049, rel=1e-15)  # ≈ 36.57
    # the active curve peaks near l̃ = 1 and falls on both limbs
    l = np.linspace(0.4, 1.6, 1201)
    assert abs(l[np.argmax(mus.active_force_length(l))] - 1.0) < 0.02


def test_inverse_curves_round_trip():
    v = np.linspace(-1.0, 1.0, 201)
    np.testing.assert_allclose(mus.force_velocity_inverse(mus.force_velocity(v)), v, atol=1e-12)
    f = np.linspace(0.0, 2.0, 201)
    np.testing.assert_allclose(mus.tendon_force_length(mus.tendon_force_length_inverse(f)), f, atol=1e-12)


def test_curves_give_the_same_numbers_on_casadi_expressions():
    x = ca.SX.sym("x")
    for curve, points in ((mus.active_force_length, np.linspace(0.3, 1.7, 15)), (mus.passive_force_length, np.linspace(0.3, 1.7, 15)),
                          (mus.force_velocity, np.linspace(-1, 1, 15)), (mus.force_velocity_inverse, np.linspace(0, 1.7, 15)),
                          (mus.tendon_force_length, np.linspace(1, 1.05, 15)), (mus.tendon_force_length_inverse, np.linspace(0, 1, 15))):
        f = ca.Function("f", [x], [curve(x)])
        np.testing.assert_allclose([float(f(p)) for p in points], curve(points), rtol=1e-14, atol=1e-15)


def test_activation_rate_is_the_published_smoothed_switch():
    e, a, b = 1.0, 0.2, 0.1
    f = 0.5 + 0.5 * math.tanh(b * (e - a))
    expected = (e - a) * (f / (0.015 * (0.5 + 1.5 * a)) + (1 - f) * (0.5 + 1.5 * a) / 0.060)
    assert mus.activation_rate(e, a) == pytest.approx(expected, rel=1e-14)
    assert mus.activation_rate(0.3, 0.3) == 0.0
    # b = 10 and |e − a| = 0.5: the switch is nearly sharp, rising with τ_a (0.5 + 1.5a), falling with τ_d/(0.5 + 1.5a)
    up, down = mus.activation_rate(1.0, 0.5, smoothing=10.0), mus.activation_rate(0.0, 0.5, smoothing=10.0)
    assert up == pytest.approx(0.5 / (0.015 * 1.25), rel=1e-4)
    assert down == pytest.approx(-0.5 * 1.25 / 0.060, rel=1e-4)


# -- the component and its errors --------------------------------------------------------------
def _body():
    body = cl.Multibody("b", coordinates=["y"])
    y, = body.coordinates
    vy, = body.speeds
    body.kinetic_energy = 0.5 * vy**2
    return body, y


GOOD = dict(max_isometric_force=30.0, optimal_fiber_length=0.1, tendon_slack_length=0.05)


@pytest.mark.parametrize("change, match", [
    (dict(max_isometric_force=-1.0), "`max_isometric_force` of muscle `m` must be positive"),
    (dict(max_isometric_force=0.0), "`max_isometric_force` of muscle `m` must be positive"),
    (dict(optimal_fiber_length=0.0), "`optimal_fiber_length` of muscle `m` must be positive"),
    (dict(tendon_slack_length=-0.05), "`tendon_slack_length` of muscle `m` must be positive"),
    (dict(max_contraction_velocity=0.0), "`max_contraction_velocity` of muscle `m` must be positive"),
    (dict(activation_time_constant=-0.01), "`activation_time_constant` of muscle `m` must be positive"),
    (dict(tendon_strain_at_one_norm_force=0.0), "`tendon_strain_at_one_norm_force` of muscle `m` must be positive"),
    (dict(pennation_angle_at_optimal=math.pi / 2), r"`pennation_angle_at_optimal` of muscle `m` must be in \[0, π/2\)"),
    (dict(pennation_angle_at_optimal=-0.1), r"`pennation_angle_at_optimal` of muscle `m` must be in \[0, π/2\)"),
    (dict(fiber_damping=-0.1), "`fiber_damping` of muscle `m` must not be negative"),
    (dict(fiber_damping=0.1, tendon_compliance="explicit"), "fiber_damping > 0, which the explicit tendon form"),
    (dict(tendon_compliance="elastic"), "Unknown tendon_compliance 'elastic' of muscle `m`"),
    (dict(max_isometric_force=float("nan")), "`max_isometric_force` of muscle `m` must be a finite number"),
    (dict(max_isometric_force=None), "Muscle `m` needs `max_isometric_force`"),
    (dict(minimum_activation=1.0), r"`minimum_activation` of muscle `m` must be in \[0, 1\)"),
])
def test_bad_parameters_get_one_sentence(change, match):
    body, y = _body()
    with pytest.raises(cl.ModelError, match=match):
        cl.DeGrooteFregly2016Muscle("m", body=body, length=-y, **dict(GOOD, **change))


def test_bad_paths_get_one_sentence():
    body, y = _body()
    other = cl.Multibody("c", coordinates=["z"])
    with pytest.raises(cl.ModelError, match="`length` of muscle `m` does not depend on the coordinates of `b`"):
        cl.DeGrooteFregly2016Muscle("m", body=body, length=other.coordinates[0] + 0.2, **GOOD)
    with pytest.raises(cl.ModelError, match="`length` of muscle `m` does not depend on the coordinates of `b`"):
        cl.DeGrooteFregly2016Muscle("m", body=body, length=0.2, **GOOD)
    with pytest.raises(cl.ModelError, match="`length` of muscle `m` depends on the speeds of `b`"):
        cl.DeGrooteFregly2016Muscle("m", body=body, length=y + body.speeds[0], **GOOD)
    with pytest.raises(cl.ModelError, match="`length` of muscle `m` must be a scalar"):
        cl.DeGrooteFregly2016Muscle("m", body=body, length=ca.vertcat(y, y), **GOOD)
    with pytest.raises(cl.ModelError, match="`body` of muscle `m` must be a colloc.Multibody"):
        cl.DeGrooteFregly2016Muscle("m", body=cl.Component("x"), length=y, **GOOD)


def test_muscle_applies_minus_path_jacobian_times_tension_to_its_body():
    body, y = _body()
    m = cl.DeGrooteFregly2016Muscle("m", body=body, length=-y, **GOOD)
    eq = body.equations()
    # M a − τ = 0 with τ = −(∂l/∂y) F_T = +F_max F̃_T
    expected = body.a - 30.0 * m.normalized_tendon_force
    assert float(ca.evalf(ca.substitute(eq.residual - expected, ca.vertcat(body.a, m.normalized_tendon_force), ca.DM([0.7, 0.3])))) == 0.0
    with pytest.raises(cl.ModelError, match="`m` already applies a generalised force to multibody `b`"):
        body.apply_generalized_force("m", ca.SX(1))
    with pytest.raises(cl.ModelError, match=r"has shape \(2, 1\); expected \(1, 1\)"):
        body.apply_generalized_force("n", ca.SX.zeros(2, 1))
    assert [v.name for v in m.variables] == ["m.excitation", "m.activation", "m.normalized_tendon_force"]
    rigid = cl.DeGrooteFregly2016Muscle("r", body=body, length=-y, tendon_compliance="rigid", **GOOD)
    assert rigid.normalized_tendon_force is None and [v.name for v in rigid.variables] == ["r.excitation", "r.activation"]


def test_elbow_moment_arms_by_automatic_differentiation_match_the_closed_form():
    body = ELBOW.skeleton()
    muscles = ELBOW.add_muscles(body)
    for m in muscles:
        kind, o, i, *_ = ELBOW.MUSCLES[m.name]
        r = ca.Function("r", [body.q], [m.moment_arms[0]])
        for theta in (0.3, 0.9, 1.7, 2.4):
            assert float(r(theta)) == pytest.approx(ELBOW.moment_arm(kind, o, i, theta), rel=1e-13)
        assert (float(r(1.0)) > 0) == (kind == "flexor")


# -- hanging mass ------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["rigid", "explicit", "implicit"])
@pytest.mark.parametrize("excitation", [0.2, 0.6])
def test_static_equilibrium_height_is_the_scalar_root(mode, excitation):
    """The mass held by a constant excitation sits at y* of the scalar root to 1e-6 m (measured ≤ 4e-10)."""
    res = cl.solve(HANG.build_equilibrium(excitation, mode), intervals=4, ipopt=dict(print_level=0, tol=1e-12))
    assert res.success
    y = res.trajectory["mass.height"]
    assert np.max(np.abs(y - HANG.equilibrium_height(excitation, mode))) < 1e-6


def test_explicit_and_implicit_tendons_are_twins_on_every_mesh():
    """Same optimum and states on each mesh (measured gap ≤ 5e-15 in J at 10–160 intervals).

    Both forms impose the same equations at the same collocation points — the implicit residual
    solved for dF̃_T/dt is the explicit right-hand side — so the discrete optima coincide to the
    solver's tolerance; the gap does not wait for the mesh to refine.
    """
    objectives = {}
    for n in (10, 20):
        res = {mode: cl.solve(HANG.build(mode), intervals=n, ipopt=IPOPT) for mode in ("explicit", "implicit")}
        assert all(r.success for r in res.values())
        a, b = res["explicit"], res["implicit"]
        assert abs(a.objective - b.objective) < 1e-8 * a.objective
        for name in ("mass.height", "muscle.normalized_tendon_force", "muscle.excitation"):
            np.testing.assert_allclose(a.trajectory[name], b.trajectory[name], atol=1e-6)
        objectives[n] = a.objective
    # the compliant lift costs more than the rigid one (the tendon must be stretched first) and converges
    rigid = cl.solve(HANG.build("rigid"), intervals=20, ipopt=IPOPT).objective
    assert rigid < objectives[20] < objectives[10]


def test_verify_integrates_the_explicit_tendon_form_and_agrees():
    """colloc verify (CVODES) on the explicit form: state error falls with the mesh (measured 3.8e-3 → 1.3e-3;
    height 1.4e-5 → 1.5e-6); the implicit solution verifies against its explicit twin (same names) and against
    its own problem, whose implicit tendon row carries the explicit form as its equivalent."""
    errors = []
    for n in (20, 40):
        prob = HANG.build("explicit")
        res = cl.solve(prob, intervals=n, ipopt=IPOPT)
        sim = cl.verify(prob, res.trajectory)
        assert sim["success"] and sim["integrator"] == "cvodes"
        errors.append((sim["max_error"], float(np.max(sim["errors"]["mass.height"]))))
    assert errors[1][0] < 5e-3 and errors[1][1] < 5e-6
    assert errors[0][1] / errors[1][1] > 4.0  # at least second order in the height
    implicit = cl.solve(HANG.build("implicit"), intervals=40, ipopt=IPOPT)
    twin = cl.verify(HANG.build("explicit"), implicit.trajectory)
    assert twin["success"] and twin["max_error"] == pytest.approx(errors[1][0], rel=1e-3)
    # the implicit problem itself integrates its residual's explicit equivalent (an ODE, not IDAS)
    own = cl.verify(HANG.build("implicit"), implicit.trajectory)
    assert own["verified"] and own["integrator"] == "cvodes"
    assert own["max_error"] == pytest.approx(errors[1][0], rel=1e-3)


# -- elbow -------------------------------------------------------------------------------------
def test_elbow_reach_balances_gravity_at_both_ends():
    """Static ends: Σ r F_T equals the skeleton's inverse dynamics (the gravity torque) to 1e-7 N·m."""
    prob = ELBOW.build()
    res = cl.solve(prob, intervals=20, ipopt=IPOPT)
    assert res.success
    traj = res.trajectory
    torque = REDUNDANCY.muscle_torque(traj, prob)
    skeleton = ELBOW.skeleton()
    for k in (0, -1):
        gravity = skeleton.inverse_dynamics([traj["arm.flexion"][k]], [0.0], [0.0])[0]
        assert torque[k] == pytest.approx(gravity, abs=1e-7)
    assert traj["arm.flexion"][-1] == pytest.approx(1.4)
    # the flexors do the lifting: their mean activation exceeds the extensor's
    flexors = np.mean([traj[f"{m}.activation"].mean() for m, row in ELBOW.MUSCLES.items() if row[0] == "flexor"])
    assert flexors > 2 * traj["triceps.activation"].mean()


# -- muscle redundancy ---------------------------------------------------------------------------
@pytest.mark.parametrize("prescribe", ["time", "constraint"])
def test_redundancy_muscle_torque_equals_inverse_dynamics_at_every_mesh_point(prescribe):
    """Σ_m r_m F_T,m = ID(θ_ref, θ̇_ref, θ̈_ref) of the skeleton at every mesh point (measured 3e-15 N·m); with the
    motion prescribed as a function of time, at every grid point (the balance is a path constraint there; 2e-15)."""
    prob = REDUNDANCY.build(6, prescribe=prescribe)
    res = cl.solve(prob, intervals=20, constraint_method="posa2016", ipopt=dict(print_level=0, tol=1e-10))
    assert res.success
    traj = res.trajectory
    points = slice(None) if prescribe == "time" else slice(None, None, 2)  # Hermite–Simpson mesh points: every other
    torque = REDUNDANCY.muscle_torque(traj, prob)[points]
    skeleton = REDUNDANCY.skeleton()
    inverse = np.array([skeleton.inverse_dynamics(*[[x] for x in REDUNDANCY.motion(t)])[0] for t in traj.time[points]])
    assert np.max(np.abs(inverse)) > 5.0
    np.testing.assert_allclose(torque, inverse, rtol=0, atol=1e-8)
    if prescribe == "constraint":
        assert np.max(np.abs(traj["arm.prescribed.lambda"])) == 0.0


def test_redundancy_optimum_does_not_depend_on_the_guess():
    """From the static-optimization guess (barrier started at 1e-6) and from the constant one (IPOPT's default
    start) the same J: measured equal to 1e-11 at 20 intervals (tol 1e-10; at tol 1e-8 they differ by the
    barrier's bias, 1e-5)."""
    options = {k: v for k, v in REDUNDANCY.SOLVE.items() if k not in ("intervals", "ipopt")}
    values = []
    for guess, start in (("static", dict(mu_init=1e-6)), ("constant", {})):
        res = cl.solve(REDUNDANCY.build(6, guess=guess), intervals=20, ipopt=dict(print_level=0, tol=1e-10, **start), **options)
        assert res.success
        values.append(res.objective)
    assert values[0] == pytest.approx(values[1], rel=1e-9)


def test_prescribed_and_held_motion_are_the_same_continuous_problem():
    """The motion as a function of time (the paper's NLP) and as states held by a holonomic constraint (whose
    midpoint angles follow the collocation polynomial, not θ_ref) differ only by the discretisation: measured
    3.5e-4 relative at 20 intervals and 2.2e-5 at 40, fourth order."""
    gaps = []
    for n in (20, 40):
        values = [cl.solve(REDUNDANCY.build(6, prescribe=p), intervals=n, constraint_method="posa2016", ipopt=IPOPT).objective
                  for p in ("time", "constraint")]
        gaps.append(abs(values[0] - values[1]) / values[0])
    assert gaps[0] < 1e-3 and gaps[1] < gaps[0] / 4, gaps


def _closed_form_rigid_share(t):
    """Static optimization of the 6-muscle arm at time t from the closed forms (independent of colloc):
    minimize Σa² subject to Σ_m c_m a_m = d, a ∈ [0.01, 1], solved by its KKT conditions a_m = clip(ν c_m / 2)
    with the scalar ν found by bisection (Σ c_m a_m(ν) increases with ν)."""
    theta, speed, _ = REDUNDANCY.motion(t)
    c, passive = [], 0.0
    for _, kind, o, i, force, share in REDUNDANCY.muscle_table(6):
        rest = REDUNDANCY.path_length(kind, o, i, REDUNDANCY.REFERENCE_ANGLE)
        sign = 1.0 if kind == "flexor" else -1.0
        length = REDUNDANCY.path_length(kind, o, i, theta)
        arm = sign * o * i * math.sin(theta) / length                  # r = −∂l/∂θ
        fiber = (length - (1.0 - share) * rest) / (share * rest)
        velocity = -arm * speed / (10.0 * share * rest)
        c.append(arm * force * _published_fl(fiber) * _published_fv(velocity))
        passive += arm * force * _published_fpe(fiber)
    c = np.array(c)
    d = REDUNDANCY.skeleton().inverse_dynamics([theta], [speed], [REDUNDANCY.motion(t)[2]])[0] - passive
    lo, hi = -1e6, 1e6                                               # ν < 0 when the extensors must pull
    for _ in range(200):
        nu = 0.5 * (lo + hi)
        lo, hi = (nu, hi) if c @ np.clip(nu * c / 2, 0.01, 1.0) < d else (lo, nu)
    return np.clip(nu * c / 2, 0.01, 1.0)


def test_static_optimization_shares_the_torque_by_minimum_sum_of_squares():
    from colloc.model.muscle import muscles_of
    from colloc.model.muscle_guess import static_optimization

    prob = REDUNDANCY.build(6, guess="constant")
    muscles = muscles_of(prob)
    times = np.linspace(0.0, 1.0, 11)
    guess = static_optimization(muscles, times, REDUNDANCY.inverse_dynamics(cl.Component("x").time), reserve_weight=1e9)
    activations = np.array([guess[m.activation][1] for m in muscles]).T
    expected = np.array([_closed_form_rigid_share(t) for t in times])
    assert expected.max() > 0.1
    np.testing.assert_allclose(activations, expected, atol=1e-6)
    # the excitations reproduce the activations' rates through the activation dynamics
    for m, a in zip(muscles, activations.T):
        e = guess[m.excitation][1]
        np.testing.assert_allclose(mus.activation_rate(e, a), np.gradient(a, times), atol=1e-9)
    # the same forces as a table give the same guess
    table = np.array([REDUNDANCY.skeleton().inverse_dynamics(*[[x] for x in REDUNDANCY.motion(t)]) for t in times])
    again = static_optimization(muscles, times, table, reserve_weight=1e9)
    np.testing.assert_allclose(np.array([again[m.activation][1] for m in muscles]).T, activations, atol=1e-9)
    with pytest.raises(cl.ModelError, match="muscle `biceps` has no `prescribed_motion`"):
        static_optimization(ELBOW.add_muscles(ELBOW.skeleton())[:1], times, np.zeros((11, 1)))
    with pytest.raises(cl.ModelError, match=r"needs 11×1 values \(one row per time\); got shape \(3,\)"):
        static_optimization(muscles, times, np.zeros(3))
    with pytest.raises(cl.ModelError, match=r"must be an \(1, 1\) expression of time alone; got shape \(1, 1\) using `m00.activation`"):
        static_optimization(muscles, times, muscles[0].activation)


def test_prescribed_motion_makes_path_speed_and_moment_arm_functions_of_time():
    body = REDUNDANCY.skeleton()
    t = body.time
    theta_ref, speed_ref, _ = REDUNDANCY.motion(t)
    m = cl.DeGrooteFregly2016Muscle("m", body=body, length=REDUNDANCY.path_length("flexor", 0.3, 0.045, body.coordinates[0]),
                                    max_isometric_force=600, optimal_fiber_length=0.15, tendon_slack_length=0.18,
                                    prescribed_motion=theta_ref)
    f = ca.Function("f", [t], [m.length, m.lengthening_speed, m.moment_arms[0]])
    for time in (0.0, 0.3, 0.77):
        theta, speed, _ = REDUNDANCY.motion(time)
        length, rate, arm = (float(x) for x in f(time))
        closed = REDUNDANCY.path_length("flexor", 0.3, 0.045, theta)
        assert length == pytest.approx(closed, rel=1e-14)
        assert arm == pytest.approx(0.3 * 0.045 * math.sin(theta) / closed, rel=1e-13)
        assert rate == pytest.approx(-arm * speed, rel=1e-13)
    assert body.generalized_force is None  # the muscle applies nothing to the body, which stays out of the problem
    bad = dict(max_isometric_force=600, optimal_fiber_length=0.15, tendon_slack_length=0.18)
    length = REDUNDANCY.path_length("flexor", 0.3, 0.045, body.coordinates[0])
    with pytest.raises(cl.ModelError, match="`prescribed_motion` of muscle `n` must be a function of time alone; it uses `arm.flexion`"):
        cl.DeGrooteFregly2016Muscle("n", body=body, length=length, prescribed_motion=body.coordinates[0] * t, **bad)
    with pytest.raises(cl.ModelError, match=r"`prescribed_motion` of muscle `n` needs one row per coordinate of `arm` \(1\); got 2"):
        cl.DeGrooteFregly2016Muscle("n", body=body, length=length, prescribed_motion=ca.vertcat(t, t), **bad)


# -- files, plots, chattering ------------------------------------------------------------------
def _hanging_solution(mode="implicit", n=10):
    prob = HANG.build(mode)
    return prob, cl.solve(prob, intervals=n, ipopt=IPOPT).trajectory


def test_muscle_outputs_are_columns_of_every_solution_and_its_files(tmp_path):
    prob, traj = _hanging_solution()
    for key in ("muscle.fiber_length", "muscle.tension", "muscle.normalized_fiber_length", "muscle.normalized_fiber_velocity"):
        assert traj.kinds[key] == "output"
    # tension is F_max F̃_T; the fiber length closes the pennated geometry with the tendon
    np.testing.assert_allclose(traj["muscle.tension"], 30.0 * traj["muscle.normalized_tendon_force"], rtol=1e-14)
    tendon = 0.05 * mus.tendon_force_length_inverse(traj["muscle.normalized_tendon_force"])
    width = 0.1 * math.sin(0.1)
    np.testing.assert_allclose(np.sqrt(traj["muscle.fiber_length"] ** 2 - width**2) + tendon, -traj["mass.height"], rtol=1e-12)
    for suffix in (".sto", ".csv", ".npz"):
        back = cl.Trajectory.read(traj.write(tmp_path / f"hang{suffix}"))
        assert back.kinds["muscle.tension"] == "output"
        np.testing.assert_array_equal(back["muscle.fiber_length"], traj["muscle.fiber_length"])
        np.testing.assert_array_equal(back["muscle.excitation"], traj["muscle.excitation"])
    # a file written without them gets them back from the model; without the derivatives it cannot
    bare = cl.Trajectory(traj.time, {k: traj[k] for k in traj.names if traj.kinds[k] != "output"}, traj.kinds)
    np.testing.assert_array_equal(mus.add_muscle_outputs(bare, prob)["muscle.tension"], traj["muscle.tension"])
    nodots = cl.Trajectory(traj.time, {k: traj[k] for k in traj.names if not k.endswith(".dot")})
    with pytest.raises(cl.FileFormatError, match="The trajectory has no column `mass.height.dot`, which the outputs of the model need"):
        mus.add_muscle_outputs(nodots, prob)


def test_a_result_with_output_columns_warm_starts_its_problem(tmp_path):
    """Output columns (fibre length, tension …) are recomputed, never read: a result and its file are guesses."""
    prob, traj = _hanging_solution()
    # a warm start from an optimum starts IPOPT's barrier small: from its default (0.1) the first steps push the
    # excitation off its active bound, and at 10 intervals this NLP has a lower, oscillating local optimum there
    again = cl.solve(prob, intervals=traj.metadata["intervals"], guess=traj, ipopt=dict(IPOPT, mu_init=1e-6))
    assert again.success and abs(again.objective - traj.metadata["objective"]) < 1e-7 * max(1.0, abs(traj.metadata["objective"]))
    from_file = cl.Trajectory.read(traj.write(tmp_path / "hang.sto"))
    assert cl.solve(prob, intervals=traj.metadata["intervals"], guess=from_file, ipopt=IPOPT).success


def test_colloc_solve_writes_muscle_outputs_that_colloc_plot_groups(tmp_path, capsys):
    from colloc.cli import commands as cli

    script = PROBLEMS / "hanging_mass_muscle.py"
    assert cli.main(["solve", str(script), "--intervals", "10", "--quiet", "--out", str(tmp_path)]) == 0
    sto = tmp_path / "hanging_mass_muscle.sto"
    written = cl.Trajectory.read(tmp_path / "hanging_mass_muscle.csv")
    written.write(sto)
    header = sto.read_text().split("endheader")[1].splitlines()[1].split("\t")
    for key in ("muscle.fiber_length", "muscle.tension", "muscle.normalized_fiber_velocity"):
        assert key in header and written.kinds[key] == "output"
    png = tmp_path / "hang.png"
    assert cli.main(["plot", str(sto), "--out", str(png)]) == 0 and png.stat().st_size > 0
    import matplotlib.pyplot as plt

    fig = cl.plot.plot_trajectory(cl.Trajectory.read(sto))
    titles = {ax.get_title(): ax for ax in fig.axes}
    assert {round(titles[f"muscle.{s}"].get_position().y0, 6) for s in ("excitation", "fiber_length", "tension")} == \
        {round(titles["muscle.excitation"].get_position().y0, 6)}
    plt.close(fig)


def test_component_outputs_are_evaluated_on_every_solution():
    """A generic output (not a muscle): y = x² + u on ẋ = u, x(0) = 0, x(1) = 1, min ∫u² (x = t, u = 1)."""
    c = cl.Component("c")
    x, u = c.state("x"), c.control("u")
    c.derivative(x, u)
    assert c.output("energy", x**2 + c.dot(x)) is not None
    prob = cl.Problem([c], t0=0.0, tf=1.0)
    prob.initial({x: 0.0})
    prob.final({x: 1.0})
    prob.minimize(integral=u**2)
    traj = cl.solve(prob, intervals=5, ipopt=IPOPT).trajectory
    assert traj.kinds["c.energy"] == "output"
    np.testing.assert_allclose(traj["c.energy"], traj.time**2 + 1.0, atol=1e-8)


@pytest.mark.parametrize("make, match", [
    (lambda c, x: c.output("x", x), "Component `c` declares `x` twice"),
    (lambda c, x: c.output("y", ca.vertcat(x, x)), "Output `c.y` must be a scalar expression; got shape"),
    (lambda c, x: c.output("2y", x), "Output name '2y' is not a valid identifier"),
    (lambda c, x: c.residual(x, c.dot(x) ** 3 - 1, explicit=ca.vertcat(1, 1)), "explicit equivalent of `c.x` must have one row per state"),
])
def test_bad_outputs_and_equivalents_get_one_sentence(make, match):
    c = cl.Component("c")
    x = c.state("x")
    with pytest.raises(cl.ModelError, match=match):
        make(c, x)


def test_output_of_an_undeclared_symbol_is_refused_when_the_model_is_built():
    c = cl.Component("c")
    x = c.state("x")
    c.derivative(x, 1.0)
    c.output("y", x + ca.SX.sym("stray"))
    with pytest.raises(cl.ModelError, match="Symbol `stray` used in output `c.y` was not declared"):
        cl.Problem([c], t0=0.0, tf=1.0)


def test_plot_groups_a_muscle_on_one_row(tmp_path):
    prob, traj = _hanging_solution()
    fig = cl.plot.plot_trajectory(traj)
    titles = {ax.get_title(): ax for ax in fig.axes}
    group = [f"muscle.{s}" for s in ("excitation", "activation", "normalized_tendon_force", "fiber_length", "tension")]
    assert all(g in titles for g in group)
    rows = {round(titles[g].get_position().y0, 6) for g in group}
    assert len(rows) == 1  # one row
    xs = [titles[g].get_position().x0 for g in group]
    assert xs == sorted(xs)  # in the documented order
    assert titles["mass.height"].get_position().y0 > titles["muscle.excitation"].get_position().y0
    import matplotlib.pyplot as plt

    plt.close(fig)


def _span(flags):
    k = np.flatnonzero(flags)
    return (int(k[0]), int(k[-1])) if k.size else None


def test_excitation_zigzag_is_detected_like_a_singular_arc_oscillation():
    t = np.linspace(0.0, 1.0, 41)
    smooth = np.sin(3 * t)
    assert not oscillating_points(smooth).any()
    alternating = smooth + 0.2 * (-1.0) ** np.arange(t.size) * (t > 0.5)
    first, last = _span(oscillating_points(alternating))
    assert t[first] == pytest.approx(0.5, abs=0.05) and last == t.size - 1
    # a longer period (high, middle, low, low — as trapezoidal solutions with a sharp switch show)
    period4 = np.where(t < 0.5, np.tile([0.25, 0.04, 0.015, 0.005], 11)[: t.size], 0.1)
    assert oscillating_points(period4).any() and t[_span(oscillating_points(period4))[1]] <= 0.55
    # the lift's excitation on 20 intervals (measured): a zig-zag riding on a falling trend, where two falls
    # follow each other around a small rise, so the moves do not alternate but the second differences do
    lift = np.concatenate([np.linspace(0.1, 0.1931, 30), [0.1983, 0.197, 0.2013, 0.19, 0.1911, 0.1627, 0.1598, 0.1224, 0.1298, 0.1897, 0.1541]])
    first, last = _span(oscillating_points(lift))
    assert first >= 30 and last == lift.size - 2
    # a bang–bang switch and round-off wiggles are not chattering
    assert not oscillating_points(np.where(t < 0.4, 1.0, -1.0)).any()
    assert not oscillating_points(smooth + 1e-9 * (-1.0) ** np.arange(t.size)).any()
    traj = cl.Trajectory(t, {"m.excitation": alternating, "n.excitation": smooth}, {"m.excitation": "control", "n.excitation": "control"})
    notes = oscillation_warnings(traj)
    assert len(notes) == 1 and "control `m.excitation` oscillates from grid point to grid point" in notes[0]
    assert "activation_dynamics_smoothing" not in notes[0]  # not a muscle's excitation as far as the warning knows
    [muscle] = oscillation_warnings(traj, sources={"m.excitation": "muscle"})
    assert "activation_dynamics_smoothing 0.1" in muscle


def test_sharp_activation_switch_makes_the_elbow_excitation_chatter():
    """With smoothing 10 the Hermite–Simpson optimum alternates between mesh and midpoints and undercuts the
    published-smoothing optimum (measured J 0.0163 vs 0.0241 at 30 intervals); the solution warns of it."""
    sharp = cl.solve(ELBOW.build(smoothing=10.0), intervals=30, ipopt=IPOPT)
    assert any("control `biceps.excitation` oscillates" in w and "activation_dynamics_smoothing 0.1" in w for w in sharp.warnings)
    smooth = cl.solve(ELBOW.build(), intervals=30, ipopt=IPOPT)
    assert not any("biceps.excitation" in w for w in smooth.warnings)
    assert sharp.objective < 0.8 * smooth.objective


def test_lift_alternation_is_a_coarse_mesh_boundary_layer():
    """With the published smoothing the lift's excitation zig-zags only in the last fifth on 20 intervals
    (the fixed final activation is a boundary layer the mesh does not resolve) and not at all on 40."""
    _, coarse = _hanging_solution("implicit", 20)
    flags = oscillating_points(coarse["muscle.excitation"])
    assert flags.any() and coarse.time[_span(flags)[0]] >= 0.8 * coarse.time[-1]
    _, fine = _hanging_solution("implicit", 40)
    assert not oscillating_points(fine["muscle.excitation"]).any()


@pytest.mark.parametrize("mode", ["explicit", "implicit"])
def test_colloc_verify_command_agrees_on_a_muscle_driven_solution(tmp_path, capsys, mode):
    """`colloc solve … --set tendon_compliance=MODE` then `colloc verify`: exit 0, CVODES, errors small
    (measured at 30 intervals, both modes: final 2.6e-4, height 3.5e-6)."""
    from colloc.cli import commands as cli

    script = PROBLEMS / "hanging_mass_muscle.py"
    out = tmp_path / mode
    assert cli.main(["solve", str(script), "--set", f"tendon_compliance={mode}", "--intervals", "30", "--quiet", "--out", str(out)]) == 0
    capsys.readouterr()
    assert cli.main(["verify", str(out / f"hanging_mass_muscle_tendon_compliance={mode}.csv"), str(script)]) == 0
    text = capsys.readouterr().out
    assert "cvodes" in text
    final = float(next(line for line in text.splitlines() if "final state error" in line).split()[3])
    height = float(next(line for line in text.splitlines() if line.strip().startswith("mass.height ")).split()[-1])
    assert final < 1e-3 and height < 1e-5, text


def test_benchmark_redundancy_sides_solve_the_same_nlp():
    """scripts/benchmark.py muscles: the hand-written NLP (θ_ref substituted, equations written out) and colloc's
    (muscles on a prescribed motion, the torque balance as a path constraint) have the same size and, from the same
    static-optimization guess, reach the same J: measured equal to 1e-16 relative at 20 intervals, with and without
    the regularization (the bare problem is not convex: from different guesses the two could stop in different
    local minima, so both start from the one guess)."""
    import sys

    path = Path(__file__).resolve().parents[1] / "scripts" / "benchmark.py"
    spec = importlib.util.spec_from_file_location("colloc_benchmark_muscles", path)
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # dataclasses look their module up
    spec.loader.exec_module(bench)
    count, n = 6, 20
    for weight in (REDUNDANCY.REGULARIZATION, 0.0):
        prob = REDUNDANCY.build(count, regularization=weight)
        res = cl.solve(prob, intervals=n, ipopt=dict(REDUNDANCY.SOLVE["ipopt"], print_level=0))
        nlp, args = bench.muscle_hand_nlp(count, n, regularization=weight)
        args["x0"] = bench.muscle_hand_guess(prob, count, n)
        solver = ca.nlpsol("hand", "ipopt", nlp, {"ipopt": bench.ipopt_options(REDUNDANCY.SOLVE["ipopt"]), "print_time": False})
        hand = float(solver(**args)["f"])
        assert res.success and solver.stats()["success"]
        assert (res.nlp_size["variables"], res.nlp_size["constraints"]) == (args["x0"].size, args["lbg"].size)
        assert res.objective == pytest.approx(hand, rel=1e-9)


# -- costs on state rates (the redundancy problem's regularization) ------------------------------
@pytest.mark.parametrize("form", ["explicit", "implicit"])
def test_an_integral_cost_may_weigh_state_derivatives(form):
    """min ∫ ẋ² with x(0) = 0, x(1) = 1 has ẋ ≡ 1 and J = 1 (Euler–Lagrange: ẍ = 0), whichever form gives ẋ."""
    c = cl.Component("c")
    x, u = c.state("x"), c.control("u", bounds=(-5, 5))
    if form == "explicit":
        c.derivative(x, u)
    else:
        c.residual(x, c.dot(x) - u)
    prob = cl.Problem([c], t0=0.0, tf=1.0)
    prob.initial({x: 0.0})
    prob.final({x: 1.0})
    prob.minimize(integral=c.dot(x) ** 2)
    res = cl.solve(prob, intervals=4, ipopt=IPOPT)
    assert res.success and res.objective == pytest.approx(1.0, abs=1e-8)
    np.testing.assert_allclose(res.trajectory["c.u"], 1.0, atol=1e-6)


def test_midpoint_vi_refuses_a_cost_on_state_derivatives():
    body = cl.Multibody("pend", coordinates=["phi"], speeds=["omega"])
    (phi,), (omega,) = body.coordinates, body.speeds
    u = body.control("u")
    body.kinetic_energy = 0.5 * omega**2
    body.generalized_force = -u
    prob = cl.Problem([body], t0=0.0, tf=1.0)
    prob.minimize(integral=u**2 + body.dot(omega) ** 2)
    with pytest.raises(cl.OptionError, match="Cost `cost0` weighs state derivatives, which scheme `midpoint-vi` has no variables for"):
        cl.solve(prob, scheme="midpoint-vi", intervals=5)


def test_static_optimization_produces_the_requested_forces_on_two_coordinates():
    """Five pennate muscles on a point moving in a plane (two coordinates): the guess's rigid-tendon forces,
    mapped through the moment arms, give the requested generalized forces (measured 8e-6 N of 20)."""
    from colloc.model.muscle_guess import static_optimization

    body = cl.Multibody("b", coordinates=["x", "y"])
    x, y = body.coordinates
    t = body.time
    motion = ca.vertcat(0.3 + 0.05 * ca.sin(2 * t), 0.2 + 0.04 * ca.cos(3 * t))
    anchors = [(-0.05, 0.2), (0.65, 0.2), (0.3, -0.15), (0.3, 0.55), (0.05, -0.05)]
    muscles = [cl.DeGrooteFregly2016Muscle(f"m{k}", body=body, length=ca.sqrt((x - ax) ** 2 + (y - ay) ** 2),
                                           max_isometric_force=500, optimal_fiber_length=0.2, tendon_slack_length=0.15,
                                           pennation_angle_at_optimal=0.2, prescribed_motion=motion)
               for k, (ax, ay) in enumerate(anchors)]
    times = np.linspace(0.0, 1.0, 7)
    wanted = np.column_stack([20 * np.sin(times), 10 + 5 * np.cos(times)])
    guess = static_optimization(muscles, times, wanted, reserve_weight=1e9)
    produced = np.zeros_like(wanted)
    for m in muscles:
        arm = ca.Function("r", [t], [m.moment_arms * m.params["max_isometric_force"]])
        produced += np.array([np.asarray(arm(s)).ravel() for s in times]) * guess[m.normalized_tendon_force][1][:, None]
    np.testing.assert_allclose(produced, wanted, atol=1e-4)
    assert max(guess[m.activation][1].max() for m in muscles) > 0.2
