"""Malformed models, problems and options: each raises one sentence naming the offending thing."""
import math

import casadi as ca
import pytest

import colloc as cl


def base():
    c = cl.Component("cart")
    x = c.state("x", bounds=(-2, 2))
    v = c.state("v")
    u = c.control("force", bounds=(-1, 1))
    return c, x, v, u


def ok_problem():
    c, x, v, u = base()
    c.derivative(x, v)
    c.derivative(v, u)
    p = cl.Problem([c], tf=1.0)
    return p, c, x, v, u


def case_no_residual():
    c, x, v, u = base()
    c.derivative(x, v)
    cl.Problem([c])


def case_two_rows():
    c, x, v, u = base()
    c.derivative(x, v)
    c.derivative(v, u)
    c.residual(v, c.dot(v) - u)


def case_rows_mismatch():
    c, x, v, u = base()
    c.residual([x, v], ca.vertcat(c.dot(x) - v, c.dot(v) - u, u))


def case_undeclared_symbol():
    c, x, v, u = base()
    w = ca.SX.sym("cart.w")
    c.derivative(x, v)
    c.derivative(v, u + w)
    cl.Problem([c])


def case_singular():
    c, x, v, u = base()
    c.derivative(x, v)
    c.residual(v, v - u)  # no derivative at all
    cl.Problem([c])


def case_dynamics_for_control():
    c, x, v, u = base()
    c.derivative(u, x)


def case_bad_bounds():
    c = cl.Component("c")
    c.state("x", bounds=(1, 0))


def case_nan_bounds():
    c = cl.Component("c")
    c.state("x", bounds=(math.nan, 0))


def case_bad_name():
    cl.Component("my cart")


def case_duplicate_variable():
    c = cl.Component("c")
    c.state("x")
    c.control("x")


def case_duplicate_component():
    a, b = cl.Component("c"), cl.Component("c")
    cl.Problem([a, b])


def case_t0_after_tf():
    p, c, *_ = ok_problem()
    cl.Problem([c], t0=2.0, tf=1.0)


def case_tf_range_reversed():
    p, c, *_ = ok_problem()
    cl.Problem([c], tf=(3.0, 1.0))


def case_unknown_variable_initial():
    p, *_ = ok_problem()
    p.initial({"cart.xx": 0.0})


def case_nan_initial():
    p, c, x, v, u = ok_problem()
    p.initial({x: math.nan})


def case_inf_guess():
    p, c, x, v, u = ok_problem()
    p.guess({x: math.inf})


def case_initial_outside_bounds():
    p, c, x, v, u = ok_problem()
    p.initial({x: 5.0})
    p.validate()


def case_boundary_without_at():
    p, c, x, v, u = ok_problem()
    p.boundary(x - 1.0)


def case_path_with_foreign_symbol():
    p, c, x, v, u = ok_problem()
    p.path(x + ca.SX.sym("other"), upper=1)


def case_cost_nonscalar():
    p, c, x, v, u = ok_problem()
    p.minimize(integral=ca.vertcat(x, v))


def case_unknown_scheme():
    p, *_ = ok_problem()
    cl.solve(p, scheme="hermite-simson")


def case_zero_intervals():
    p, *_ = ok_problem()
    cl.solve(p, intervals=0)


def case_bad_mesh():
    p, *_ = ok_problem()
    cl.solve(p, mesh=[0, 0.5, 0.4, 1])


def case_unknown_option():
    p, *_ = ok_problem()
    cl.solve(p, constraint_metod="posa2016")


def case_unknown_mode():
    p, *_ = ok_problem()
    cl.solve(p, mode="implict")


def case_guess_table_shape():
    p, c, x, v, u = ok_problem()
    p.guess({x: ([0, 1, 2], [0, 1])})


def case_bound_unknown():
    p, *_ = ok_problem()
    p.bound("cart.forse", -1, 1)


def case_minimize_nothing():
    p, *_ = ok_problem()
    p.minimize()


def case_guess_tf_fixed():
    p, *_ = ok_problem()
    p.guess({"tf": 2.0})


CASES = [
    (case_no_residual, cl.ModelError, "State `cart.v` has no residual"),
    (case_two_rows, cl.ModelError, "`cart.v` has more than one residual row"),
    (case_rows_mismatch, cl.ModelError, "has 3 rows but it is tied to 2 state"),
    (case_undeclared_symbol, cl.ModelError, "Symbol `cart.w` .* not declared"),
    (case_singular, cl.ModelError, "residual of state `cart.v` does not depend on any state derivative"),
    (case_dynamics_for_control, cl.ModelError, "`cart.force`, which is a control"),
    (case_bad_bounds, cl.ModelError, "Lower bound 1.0 of `c.x`"),
    (case_nan_bounds, cl.ModelError, "Bounds of `c.x` contain NaN"),
    (case_bad_name, cl.ModelError, "'my cart' is not a valid identifier"),
    (case_duplicate_variable, cl.ModelError, "declares `x` twice"),
    (case_duplicate_component, cl.ModelError, "Two components are named `c`"),
    (case_t0_after_tf, cl.ProblemError, "must be greater than t0"),
    (case_tf_range_reversed, cl.ProblemError, "Final time tf: lower value 3.0"),
    (case_unknown_variable_initial, cl.ProblemError, "Unknown variable `cart.xx` in `initial`. Did you mean `cart.x`"),
    (case_nan_initial, cl.ProblemError, "Initial value of `cart.x` is NaN"),
    (case_inf_guess, cl.ProblemError, "Guess of `cart.x` is inf"),
    (case_initial_outside_bounds, cl.ProblemError, "initial range .* of `cart.x` lies outside its bounds"),
    (case_boundary_without_at, cl.ProblemError, "uses `cart.x` directly; wrap it"),
    (case_path_with_foreign_symbol, cl.ProblemError, "Symbol `other` used in path constraint"),
    (case_cost_nonscalar, cl.ProblemError, "must be a scalar"),
    (case_unknown_scheme, cl.OptionError, "Unknown scheme `hermite-simson`. Did you mean `hermite-simpson`"),
    (case_zero_intervals, cl.OptionError, "`intervals` must be at least 1"),
    (case_bad_mesh, cl.OptionError, "strictly increasing"),
    (case_unknown_option, cl.OptionError, "Unknown transcription option `constraint_metod`. Did you mean `constraint_method`"),
    (case_unknown_mode, cl.OptionError, "Unknown mode `implict`. Did you mean `implicit`"),
    (case_guess_table_shape, cl.ProblemError, "Guess of `cart.x` as \\(times, values\\)"),
    (case_bound_unknown, cl.ProblemError, "Did you mean `cart.force`"),
    (case_minimize_nothing, cl.ProblemError, "needs an `integral` or a `final` term"),
    (case_guess_tf_fixed, cl.ProblemError, "final time is fixed"),
]


@pytest.mark.parametrize("case, error, match", CASES, ids=[c[0].__name__ for c in CASES])
def test_malformed_input_raises_a_clear_error(case, error, match):
    with pytest.raises(error, match=match) as info:
        case()
    assert isinstance(info.value, (ValueError, TypeError))
    assert "\n" not in str(info.value)


def test_valid_problem_passes():
    p, *_ = ok_problem()
    assert p.validate() is p


def test_unknown_ipopt_option_is_an_option_error():
    p, *_ = ok_problem()
    with pytest.raises(cl.OptionError, match="Unknown IPOPT option `bogus_opt`"):
        cl.solve(p, ipopt={"bogus_opt": 3})


def test_guess_file_with_foreign_columns_is_refused(tmp_path):
    p, c, x, v, u = ok_problem()
    traj = cl.Trajectory([0.0, 1.0], {"cart.xx": [0.0, 1.0]}, {"cart.xx": "state"}, {}, {"problem": "other"})
    path = traj.write(tmp_path / "g.csv")
    with pytest.raises(cl.FileFormatError, match="Guess column `cart.xx` .* Did you mean `cart.x`"):
        cl.solve(p, guess=str(path))


def test_missing_guess_file_is_refused(tmp_path):
    p, *_ = ok_problem()
    with pytest.raises(cl.FileFormatError, match="does not exist"):
        cl.solve(p, guess=str(tmp_path / "none.csv"))


def test_guess_of_wrong_type_is_refused():
    p, *_ = ok_problem()
    with pytest.raises(cl.OptionError, match="`guess` must be a Trajectory"):
        cl.solve(p, guess=42)


def test_posa_with_other_scheme_cannot_be_placed():
    import casadi as ca

    b = cl.Multibody("pend", coordinates=["x", "y"])
    x, y = b.coordinates
    b.kinetic_energy = 0.5 * ca.sumsqr(ca.vertcat(*b.speeds))
    b.holonomic("rod", x**2 + y**2 - 1)
    p = cl.Problem([b], tf=1.0)
    with pytest.raises(cl.OptionError, match="posa2016.*hermite-simpson"):
        cl.solve(p, scheme="trapezoidal", constraint_method="posa2016")


MX_SENTENCE = r"CasADi MX .*colloc expressions are CasADi SX.*component\.state.*ca\.SX\.sym"


def test_mx_residual_is_refused_with_how_to_declare():
    c, x, v, u = base()
    with pytest.raises(cl.ModelError, match=r"dynamics of `cart\.x` is a " + MX_SENTENCE):
        c.residual(x, ca.MX.sym("w"))


def test_mx_where_a_state_is_expected_is_refused():
    c, x, v, u = base()
    with pytest.raises(cl.ModelError, match=r"`w` is a " + MX_SENTENCE):
        c.derivative(ca.MX.sym("w"), v)
    p, c, x, v, u = ok_problem()
    with pytest.raises(cl.ProblemError, match=r"`w` in `initial` is a " + MX_SENTENCE):
        p.initial({ca.MX.sym("w"): 0.0})


def test_mx_cost_and_path_constraint_are_refused():
    p, c, x, v, u = ok_problem()
    w = ca.MX.sym("w")
    with pytest.raises(cl.ProblemError, match=r"integral of cost `effort` is a " + MX_SENTENCE):
        p.minimize(integral=w**2, name="effort")
    with pytest.raises(cl.ProblemError, match=r"Path constraint `reach` is a " + MX_SENTENCE):
        p.path(w, upper=1.0, name="reach")
    with pytest.raises(cl.ProblemError, match=r"Boundary constraint `gap` contains a " + MX_SENTENCE):
        p.boundary([w, p.at_tf(x)], name="gap")


def test_a_component_method_instead_of_components_is_refused_by_name():
    c, x, v, u = base()
    c.derivative(x, v)
    c.derivative(v, u)
    with pytest.raises(cl.ModelError, match=r"callable `Component\.state`.*pass the component itself"):
        cl.Problem(c.state)
