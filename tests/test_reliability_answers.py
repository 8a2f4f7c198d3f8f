"""Answers that are right or refused: inputs that used to give a wrong optimum with exit 0, or to end as
colloc's own fault (exit 70), each either solved right or refused in one sentence before anything is built."""
from __future__ import annotations

import math

import casadi as ca
import pytest

import colloc as cl
from colloc import cli
from di_script import di_script

IPOPT = dict(tol=1e-10)




def script(folder, solve="dict(intervals=10)", name="di.py"):
    path = folder / name
    path.write_text(di_script(solve=solve))
    return path


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code, err, *words):
    assert code == 2, err
    assert err.startswith("colloc: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, (w, err)


def integrator(distance=1.0, implicit=True, tf=1.0):
    """Rest-to-rest double integrator ẍ = u moved ``distance`` in ``tf``, min ∫u²: J* = 12 d²/T³ (u linear in t)."""
    c = cl.Component("mass")
    x, v, u = c.state("x"), c.state("v"), c.control("u")
    c.derivative(x, v)
    if implicit:
        c.residual(v, c.dot(v) - u)
    else:
        c.derivative(v, u)
    prob = cl.Problem([c], t0=0.0, tf=tf, name="di")
    prob.initial({x: 0.0, v: 0.0})
    prob.final({x: distance, v: 0.0})
    prob.minimize(integral=u**2)
    return prob, (x, v, u)


# -- cost terms -------------------------------------------------------------------------------------------
def _constant_control(name_a="a", name_b="a"):
    c = cl.Component("m")
    x, u = c.state("x"), c.control("u")
    c.derivative(x, u)
    prob = cl.Problem([c], t0=0.0, tf=1.0)
    prob.initial({x: 0.0})
    prob.bound(u, 2.0, 2.0)
    prob.minimize(integral=3 * u**2, name=name_a)
    prob.minimize(integral=3 * u**2, name=name_b)
    return prob


def test_two_cost_terms_of_one_name_are_refused_and_distinct_names_both_count():
    with pytest.raises(cl.ProblemError, match="has a cost term named `a` already; give this one another name"):
        _constant_control("a", "a")
    # u ≡ 2: each term is ∫ 3 u² dt = 12, the objective 24
    res = cl.solve(_constant_control("a", "b"), intervals=4, ipopt=IPOPT)
    assert res.objective == pytest.approx(24.0, rel=1e-9)
    assert res.terms == pytest.approx({"a": 12.0, "b": 12.0}, rel=1e-9)


def test_an_automatic_cost_name_never_collides_with_a_given_one():
    c = cl.Component("m")
    x, u = c.state("x"), c.control("u")
    c.derivative(x, u)
    prob = cl.Problem([c], t0=0.0, tf=1.0)
    prob.initial({x: 0.0})
    prob.bound(u, 2.0, 2.0)
    prob.minimize(integral=3 * u**2, name="cost1")
    prob.minimize(integral=3 * u**2)  # would be `cost1` by count
    assert [t.name for t in prob.costs] == ["cost1", "cost2"]
    res = cl.solve(prob, intervals=4, ipopt=IPOPT)
    assert res.objective == pytest.approx(24.0, rel=1e-9) and len(res.terms) == 2


def test_a_cost_named_like_a_transcription_term_is_refused():
    from colloc.transcription.nlp import TERM_LEGEND
    from colloc.model.problem import RESERVED_COST_NAMES

    assert set(TERM_LEGEND) == set(RESERVED_COST_NAMES)
    for name in RESERVED_COST_NAMES:
        with pytest.raises(cl.ProblemError, match=f"The cost name `{name}` is that of a term colloc's transcription adds"):
            _constant_control("a", name)


def test_a_multi_phase_cost_of_a_taken_name_is_refused():
    from colloc.pipeline.multiphase_problem import MultiPhaseProblem, Phase

    phases = [Phase(integrator()[0], name=n) for n in ("one", "two")]
    mp = MultiPhaseProblem(phases)
    mp.minimize(phases[0].duration, name="time")
    for name, words in (("time", "has a cost term of that name already"), ("one/cost0", "without '/'")):
        with pytest.raises(cl.ProblemError, match=words):
            mp.minimize(phases[1].duration, name=name)


# -- options ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("options, words", [
    (dict(derivative_bounds=-1), "`derivative_bounds` must be a number > 0"),
    (dict(derivative_bounds=0), "`derivative_bounds` must be a number > 0"),
    (dict(derivative_bounds="big"), "`derivative_bounds` must be a number > 0"),
    (dict(multiplier_bounds=float("nan")), "`multiplier_bounds` must be a number > 0"),
    (dict(projection_weight=-1e-6), "`projection_weight` must be a number ≥ 0"),
    (dict(threads=0), "`threads` must be a whole number ≥ 1; got 0"),
    (dict(threads=2.5), "`threads` must be a whole number ≥ 1; got 2.5"),
    (dict(intervals=99999999999), "`intervals` is 99,999,999,999; colloc builds at most 1,000,000"),
    (dict(intervals=10, mesh=[0.0, 0.5, 1.0]), "Give either `intervals` (10) or `mesh`"),
])
def test_bad_options_are_refused_in_one_sentence_before_the_build(options, words):
    prob, _ = integrator()
    with pytest.raises(cl.OptionError, match=words.replace("(", r"\(").replace(")", r"\)")):
        cl.build_nlp(prob, **options)


@pytest.mark.parametrize("argv, solve, words", [
    (["--intervals", "99999999999"], "dict(intervals=10)", "`intervals` is 99,999,999,999"),
    ([], "dict(intervals=10, derivative_bounds=-1)", "`derivative_bounds` must be a number > 0 (math.inf for none); got -1"),
    ([], "dict(intervals=10, threads=0)", "`threads` must be a whole number ≥ 1; got 0"),
    ([], "dict(intervals=10, mesh=[0, 0.5, 1])", "Give either `intervals` (10) or `mesh`"),
])
def test_bad_options_on_the_command_line_exit_2_naming_them(tmp_path, capsys, argv, solve, words):
    path = script(tmp_path, solve)
    for command in (["solve", path, "--quiet", "--out", tmp_path / "o"], ["info", path]):
        one_line_error(*run(capsys, *command, *argv)[::2], words)
    assert not (tmp_path / "o").exists()


# -- derivative variables ------------------------------------------------------------------------------------
@pytest.mark.parametrize("distance", [200.0, 300.0])
def test_an_implicit_double_integrator_far_from_the_old_derivative_bound_reaches_the_optimum(distance):
    """min ∫u² rest to rest over d in T = 1: u = 6d(1 − 2t), J* = 12 d² (|u(0)| = 6d > 1000 here); u is linear, x cubic,
    so Hermite–Simpson is exact and the discrete optimum is J*.  The derivative variable v̇ = u is unbounded."""
    prob, _ = integrator(distance)
    res = cl.solve(prob, intervals=10, ipopt=IPOPT)
    assert res.success and res.objective == pytest.approx(12 * distance**2, rel=1e-8)
    assert not any("derivative_bounds" in w for w in res.warnings)


def test_a_derivative_bound_that_is_reached_is_said_in_the_summary():
    prob, _ = integrator(200.0)
    res = cl.solve(prob, intervals=10, ipopt=IPOPT, derivative_bounds=1000)
    assert res.objective > 12 * 200.0**2 * (1 + 1e-4)  # the bound cuts the optimum off: the summary must say so
    text = res.summary()
    assert "the derivative variable `mass.v.dot` is at its bound ±1000 (derivative_bounds)" in text, text
    assert not any("derivative_bounds" in w for w in cl.solve(prob, intervals=10, ipopt=IPOPT, derivative_bounds=1e4).warnings)


def test_colloc_info_states_what_bounds_the_derivative_variables(tmp_path, capsys):
    code, out, err = run(capsys, "info", script(tmp_path))
    assert code == 0, err
    assert "z     derivative variables" in out and "; unbounded" in out, out
    code, out, err = run(capsys, "info", script(tmp_path, "dict(intervals=10, derivative_bounds=1000)", "b.py"))
    assert code == 0 and "bounded to ±1000 (derivative_bounds)" in out, out


def _hanging_bob(gravity, multiplier_bounds=None):
    """A unit point mass hanging at rest on a unit rod: M a + ∂V/∂q − Gᵀλ = 0 with G = (2x, 2y) gives g = 2λy, so at
    y = −1, λ = −g/2 (colloc's φ = x² + y² − 1)."""
    body = cl.Multibody("pend", coordinates=["x", "y"], speeds=["vx", "vy"])
    x, y = body.coordinates
    vx, vy = body.speeds
    body.kinetic_energy = 0.5 * (vx**2 + vy**2)
    body.potential_energy = gravity * y
    body.holonomic("rod", x**2 + y**2 - 1, **({} if multiplier_bounds is None else dict(multiplier_bounds=multiplier_bounds)))
    prob = cl.Problem([body], t0=0.0, tf=1.0)
    prob.initial({x: 0.0, y: -1.0, vx: 0.0, vy: 0.0})
    prob.guess({y: -1.0})
    prob.minimize(integral=vx**2)
    return prob


def test_a_multiplier_at_its_default_bound_is_said_in_the_summary():
    """g = 3000 needs |λ| = 1500 beyond the default ±1000 of `holonomic`: the summary names the multiplier; with the
    bound widened the rest is solved with λ = −g/2 exactly, and at g = 9.81 nothing is said."""
    res = cl.solve(_hanging_bob(3000.0), intervals=4)
    assert any("the multiplier `pend.rod.lambda` is at its default bound ±1000" in w for w in res.warnings), res.summary()
    res = cl.solve(_hanging_bob(3000.0, (-math.inf, math.inf)), intervals=4, ipopt=IPOPT)
    assert res.success and res.trajectory["pend.rod.lambda"] == pytest.approx(-1500.0, rel=1e-8)
    assert not any("multiplier" in w for w in res.warnings + cl.solve(_hanging_bob(9.81), intervals=4).warnings)


# -- URDF files ---------------------------------------------------------------------------------------------------
def _urdf(links=("a", "b", "c"), joints=(("j1", "a", "b"), ("j2", "b", "c")), mass="1", inertia=("0.1", "0.1", "0.1"),
          inertial_xyz="0 0 -0.5", origin="0 0 -1", limit='lower="-1" upper="1" effort="5" velocity="3"'):
    ixx, iyy, izz = inertia
    body = (f'<inertial><origin xyz="{inertial_xyz}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="0" ixz="0" iyz="0"/></inertial>')
    text = ['<robot name="r">'] + [f'<link name="{n}">{body if n != "a" else ""}</link>' for n in links]
    text += [f'<joint name="{j}" type="revolute"><parent link="{p}"/><child link="{c}"/><origin xyz="{origin}"/>'
             f'<axis xyz="0 1 0"/><limit {limit}/></joint>' for j, p, c in joints]
    return "\n".join(text + ["</robot>"])


URDF_CASES = [
    (dict(links=("a", "b", "b", "c")), "The link `b` is declared twice"),
    (dict(joints=(("j1", "a", "b"), ("j1", "b", "c"))), "The joint `j1` is declared twice"),
    (dict(joints=(("j1", "a", "b"), ("j2", "ghost", "c"))), "Joint `j2` of `{path}` names the parent link `ghost`, which the file does not declare"),
    (dict(joints=(("j1", "a", "b"), ("j2", "b", "c"), ("j3", "c", "b"))), "Link `b` of `{path}` is the child of two joints, `j1` and `j3`: a kinematic loop"),
    (dict(joints=(("j2", "b", "c"), ("j3", "c", "b"))), "The joints `j3`, `j2` of `{path}` form a kinematic loop"),
    (dict(joints=(("j1", "a", "b"), ("j2", "c", "c"))), "Joint `j2` of `{path}` joins link `c` to itself"),
    (dict(mass="-1"), "The mass of link `b` of `{path}` is -1.0; a mass is a finite number ≥ 0"),
    (dict(inertia=("1", "1", "-0.5")), "The inertia of link `b` of `{path}` is not positive semi-definite (principal moments -0.5, 1, 1)"),
    (dict(inertia=("nan", "0.1", "0.1")), "The inertia of link `b` of `{path}` is not finite"),
    (dict(origin="0 nan -1"), "The origin xyz of joint `j1` of `{path}` is not finite: [0.0, nan, -1.0]"),
    (dict(inertial_xyz="0 0 inf"), "The inertial origin xyz of link `b` of `{path}` is not finite"),
    (dict(limit='lower="1" upper="-1" effort="5" velocity="3"'), "The limits of joint `j1` of `{path}` are reversed: lower 1.0 > upper -1.0"),
    (dict(limit='lower="-1" upper="1" effort="-5" velocity="3"'), "The effort limit of joint `j1` of `{path}` is negative (-5.0)"),
    (dict(limit='lower="-1" upper="1" effort="0" velocity="3"'), "Joint `j1` of `{path}` has effort=\"0\", so its torque would be unbounded"),
    (dict(limit='lower="-1" upper="1" effort="5" velocity="0"'), "Joint `j1` of `{path}` has velocity=\"0\", so it could not move"),
]


@pytest.mark.parametrize("kw, words", URDF_CASES)
def test_a_urdf_that_is_not_one_tree_of_physical_bodies_is_refused_naming_the_link_or_joint(tmp_path, kw, words):
    pytest.importorskip("urdf_parser_py")
    path = tmp_path / "r.urdf"
    path.write_text(_urdf(**kw))
    with pytest.raises(cl.ModelError) as info:
        cl.Multibody.from_urdf(path)
    assert words.format(path=path) in str(info.value), str(info.value)


def test_a_urdf_refusal_has_its_way_out_and_a_good_file_still_loads(tmp_path):
    pytest.importorskip("urdf_parser_py")
    path = tmp_path / "r.urdf"
    path.write_text(_urdf(limit='lower="-1" upper="1" effort="0" velocity="3"'))
    body = cl.Multibody.from_urdf(path, efforts={"j1": 7.0, "j2": math.inf})
    bounds = {v.name: v.bounds for v in body.variables if v.kind == "control"}
    assert bounds == {"robot.tau_j1": (-7.0, 7.0), "robot.tau_j2": (-math.inf, math.inf)}
    assert [v.kind for v in cl.Multibody.from_urdf(path, actuated=[]).variables].count("control") == 0
    path.write_text(_urdf(inertia=("1", "1", "-0.5")))
    assert cl.Multibody.from_urdf(path, check_inertia=False).joint_names == ["j1", "j2"]


def test_an_inertia_breaking_the_triangle_inequality_is_used_with_a_warning_naming_the_link(tmp_path):
    """Positive definite, so the dynamics are well posed; popular robot files (anymal, go1) break it slightly."""
    pytest.importorskip("urdf_parser_py")
    path = tmp_path / "r.urdf"
    path.write_text(_urdf(inertia=("0.1", "0.1", "0.3")))
    with pytest.warns(UserWarning, match=r"The inertia of link `b` of .* breaks the triangle inequality A \+ B ≥ C"):
        body = cl.Multibody.from_urdf(path)
    assert body.joint_names == ["j1", "j2"]
    path.write_text(_urdf().replace('type="revolute"', 'type="continuous"').replace(
        '<limit lower="-1" upper="1" effort="5" velocity="3"/>', ""))  # the format's own "no limit" for continuous joints
    assert [v.bounds for v in cl.Multibody.from_urdf(path).variables if v.kind == "control"] == [(-math.inf, math.inf)] * 2
    path.write_text(_urdf(inertia=("0", "0.1", "0.1")))  # a thin rod: A + B = C, physical
    body = cl.Multibody.from_urdf(path)
    assert [v.bounds for v in body.variables if v.name == "robot.j1"] == [(-1.0, 1.0)]


# -- problems without a minimum ------------------------------------------------------------------------------
def _free_control(integrand, guess=None):
    c = cl.Component("m")
    x, u = c.state("x"), c.control("u")
    c.derivative(x, u)
    prob = cl.Problem([c], t0=0.0, tf=1.0)
    prob.initial({x: 0.0})
    if guess is not None:
        prob.guess({u: guess})
    prob.minimize(integral=integrand(u))
    return prob


@pytest.mark.parametrize("guess", [None, 1.0])
def test_an_unbounded_problem_is_not_solved_and_names_the_variable(guess):
    """min −∫u² with u free has no minimum: from u ≡ 0 (a stationary point IPOPT accepts without a step) and from u ≡ 1
    (IPOPT's iterates diverge) alike the status is `unbounded` and the message names `m.u`."""
    res = cl.solve(_free_control(lambda u: -u**2, guess), intervals=10)
    assert not res.success and res.status == cl.Status.UNBOUNDED, res.message
    assert res.message.startswith("The problem") and "unbounded" in res.message and "`m.u` at grid point" in res.message
    assert "bound `m.u`" in res.message
    assert res.trajectory.metadata["status"] == "unbounded" and res.trajectory.metadata["success"] is False


def test_a_guess_on_a_bounded_saddle_is_not_called_a_minimum_and_a_minimum_at_the_guess_stays_solved():
    """∫(u² − 1)² is bounded below but u ≡ 0 is a maximum of each integrand; ∫u² from u ≡ 0 is the minimum itself."""
    res = cl.solve(_free_control(lambda u: (u**2 - 1) ** 2), intervals=10)
    assert res.status == cl.Status.FAILED and res.message.startswith("IPOPT stopped at the guess, which is not a minimum"), res.message
    assert "`m.u` at grid point" in res.message
    res = cl.solve(_free_control(lambda u: u**2), intervals=10)
    assert res.success and res.iterations == 0 and res.objective == 0.0


UNBOUNDED = '''
import colloc as cl


def build():
    c = cl.Component("m")
    x, u = c.state("x"), c.control("u")
    c.derivative(x, u)
    prob = cl.Problem([c], t0=0.0, tf=1.0, name="unbounded")
    prob.initial({x: 0.0})
    prob.minimize(integral=-u**2)
    return prob
'''


def test_colloc_solve_of_an_unbounded_problem_exits_1_naming_the_variable(tmp_path, capsys):
    path = tmp_path / "unbounded.py"
    path.write_text(UNBOUNDED)
    code, out, err = run(capsys, "solve", path, "--quiet", "--out", tmp_path / "o", "--intervals", "8")
    assert code == 1, err
    assert "unbounded — The problem is unbounded" in out and "`m.u`" in out, out


# -- scale ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("distance, tf, words", [
    (1e30, 1.0, "The final value of `mass.x` is 1e+30; a double resolves it only to 2.2e+14, coarser than IPOPT's constraint tolerance"),
    (1.0, 1e-12, "`mass.x` must change by 1 within the horizon of 1e-12, a rate of at least 1e+12 per unit time"),
    (1e-12, 1e-12, "The final value of `mass.x` is 1e-12, below what IPOPT's tolerance (about 1e-8) resolves"),
    (1.0, 1e13, "The final time tf is 1e+13"),
    (None, 1.0, "The change of `mass.x` from its initial to its final value is 1e-09, below what IPOPT's tolerance"),
])
def test_a_badly_scaled_problem_is_refused_naming_the_quantity_before_the_build(distance, tf, words):
    """Before, x(T) = 1e30 ended in 'try a better guess', and x(T) = 1e-12 in T = 1e-12 was 'solved' with J = 0 (x ≡ 0
    meets x(T) = 1e-12 to IPOPT's tolerance; J* = 12 d²/T³ = 1.2e13)."""
    prob, (x, _, _) = integrator(distance or 1.0, tf=tf)
    if distance is None:  # from 1 to 1 + 1e-9: x ≡ 1 meets both to IPOPT's tolerance
        prob.initial({x: 1.0})
        prob.final({x: 1.0 + 1e-9})
    with pytest.raises(cl.ProblemError) as info:
        cl.build_nlp(prob, intervals=4)
    assert words in str(info.value) and "in other units" in str(info.value), str(info.value)


@pytest.mark.parametrize("distance, tf", [(1e-6, 1e-6), (1.0, 1e-5)])
def test_short_horizons_within_the_resolved_scale_keep_their_analytic_optimum(distance, tf):
    """J* = 12 d²/T³, exact for Hermite–Simpson (u linear): 1.2e7 and 1.2e16 (u(0) = 6e10, still resolved)."""
    prob, _ = integrator(distance, tf=tf)
    res = cl.solve(prob, intervals=10)
    assert res.success and res.objective == pytest.approx(12 * distance**2 / tf**3, rel=1e-7)
    assert not res.warnings


def test_values_grown_too_large_during_a_solve_are_named_in_the_result():
    """min ∫(u − 1e13)² has u ≡ 1e13 at its optimum, where x = ∫u reaches 1e13 too: a double resolves the defects only to
    ~1e-3, so IPOPT never converges (3000 iterations measured); the result names the cause, not just the iteration limit."""
    res = cl.solve(_free_control(lambda u: (u - 1e13) ** 2), intervals=4, ipopt=dict(max_iter=30))
    assert not res.success
    text = res.summary()
    assert "`m.u` at grid point" in text and "is 1e+13, too large for IPOPT to resolve the rows it enters" in text, text


def test_a_horizon_too_short_for_its_change_is_named_when_the_solve_fails():
    """A move of 1 in T: u(0) = 6/T².  T = 1e-9 ends 'infeasible' from the straight-line guess and T = 1e-11, guessed
    v = 1/T, with iterates past IPOPT's divergence limit 1e20 while J = 12/T³ rises: both name the horizon and
    `mass.x`, neither blames the guess or calls the problem unbounded.  At T = 1e-6 (u = 6e12) it solves to J*."""
    prob, (x, v, u) = integrator(1.0, implicit=False, tf=1e-9)
    res = cl.solve(prob, intervals=10)
    assert not res.success and "The horizon 1e-09 is short for the change of `mass.x` (1)" in res.message, res.message
    assert "non-trivial guess" not in res.message
    prob, (x, v, u) = integrator(1.0, implicit=False, tf=1e-11)
    prob.guess({x: (0.0, 1.0), v: 1e11, u: 0.0})
    res = cl.solve(prob, intervals=10)
    assert res.status == cl.Status.FAILED and "passed 1e20" in res.message and "unbounded" not in res.message, res.message
    assert "`mass.u` at grid point" in res.message and "The horizon 1e-11 is short" in res.message
    prob, _ = integrator(1.0, implicit=False, tf=1e-6)
    res = cl.solve(prob, intervals=10)
    assert res.success and res.objective == pytest.approx(12e18, rel=1e-7) and not res.warnings


def test_colloc_solve_of_a_badly_scaled_problem_exits_2_before_the_build(tmp_path, capsys):
    path = script(tmp_path)
    one_line_error(*run(capsys, "solve", path, "--set", "distance=1e30", "--quiet", "--out", tmp_path / "o")[::2],
                   "The final value of `mass.x` is 1e+30")
    assert not (tmp_path / "o").exists()
