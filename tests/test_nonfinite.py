"""NaN and inf are reported as such — where they appeared (constraint row, cost term, time) — whether at the
guess or at a trial point in the middle of the solve, instead of as IPOPT's restoration or step failure."""
from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.transcription.nonfinite import Evaluation, EvaluationWatch, describe


def _mover(final=0.001):
    c = cl.Component("m")
    x = c.state("x", bounds=(-10, 10))
    u = c.control("u", bounds=(-50, 50))
    c.derivative(x, u)
    p = cl.Problem([c], t0=0, tf=1, name="nan")
    p.initial({x: 1.0})
    p.final({x: final})
    p.guess({x: 1.0})
    return p, x, u


def test_a_nan_objective_at_trial_points_names_the_cost_term_and_the_time(capsys):
    """log x with x driven to 0.001: IPOPT's steps cross x = 0, log x is NaN there and IPOPT fails by step computation."""
    p, x, u = _mover()
    p.minimize(integral=u**2 + ca.log(x), name="effort")
    res = cl.solve(p, intervals=5)
    assert not res.success and res.status != cl.Status.INVALID_NUMBER  # IPOPT's own verdict says nothing of a NaN
    assert res.message.startswith("NaN or inf appeared in iteration")
    assert "in the objective (NaN" in res.message and "the integrand of cost `effort` is NaN at t = " in res.message
    assert "IPOPT stopped with: " in res.message and "non-trivial guess" not in res.message
    assert res.summary().splitlines()[0].endswith(res.message)
    assert "CasADi" not in capsys.readouterr().err  # CasADi's warnings are turned into the message, not printed


def test_a_constraint_row_going_nan_mid_solve_is_named_with_its_time(capsys):
    p, x, u = _mover()
    p.path(ca.sqrt(x), lower=0, name="root")
    p.minimize(integral=u**2 + ca.log(x), name="effort")
    res = cl.solve(p, intervals=5)
    assert not res.success
    assert "at points IPOPT tried, in constraint row" in res.message and "path:root@k=" in res.message
    t = float(res.message.split("path:root@k=")[1].split("(t = ")[1].split(")")[0])
    assert 0 < t <= 1


def test_a_non_finite_objective_at_the_guess_names_each_term_and_where():
    """The guess runs x linearly from 1 to −1: log x is inf at t = 0.5 and NaN after; 1/(x + 1) is inf at the end."""
    p, x, u = _mover(final=-1.0)
    p.guess({x: (1.0, -1.0)})
    p.minimize(integral=u**2 + ca.log(x), name="effort")
    p.minimize(final=1 / (x + 1), name="end")
    p.minimize(integral=u**2, name="smooth")
    res = cl.solve(p, intervals=5)
    assert res.status == cl.Status.INVALID_NUMBER
    assert "The objective is not finite at the guess" in res.message
    assert "the integrand of cost `effort` is inf at t = 0.5 (grid point 5) (and at 5 more grid points)" in res.message
    assert "the final (Mayer) part of cost `end` is inf" in res.message
    assert "`smooth`" not in res.message
    assert np.isnan(res.objective) and np.isnan(res.terms["effort"]) and res.terms["smooth"] == 0.0  # u guessed ≡ 0


def test_the_watch_turns_casadi_warnings_into_rows_and_passes_other_text_through(capsys):
    import sys

    x = ca.SX.sym("x")
    solver = ca.nlpsol("s", "ipopt", {"x": x, "f": ca.log(x) + x**2, "g": ca.sqrt(x)},
                       {"ipopt": {"print_level": 0, "sb": "yes"}, "print_time": False, "error_on_fail": False})
    with EvaluationWatch(lambda: 7) as watch:
        print("kept", file=sys.stderr)
        solver(x0=1.0, lbg=-1, ubg=1)
    assert watch.events and {e.function for e in watch.events} >= {"nlp_g"}
    assert all(e.iteration == 7 and e.row == 0 for e in watch.events if e.function == "nlp_g")
    assert capsys.readouterr().err == "kept\n"
    text = describe([Evaluation("nlp_jac_g", "Inf", "jac_g_x", 3, 1, 4)], lambda i: f"row{i}", lambda j: f"var{j}")
    assert text == "NaN or inf appeared in iteration 4 at points IPOPT tried, in the derivative of row3 with respect to var1."


def test_a_non_finite_multi_phase_guess_names_the_rows_and_terms_of_each_phase():
    from colloc.pipeline.multiphase_problem import MultiPhaseProblem, Phase

    def phase(name):
        c = cl.Component("m")
        x = c.state("x", bounds=(-10, 10))
        u = c.control("u", bounds=(-5, 5))
        c.derivative(x, ca.sqrt(x - 1) + u)
        p = cl.Problem([c], t0=0, tf=1, name=name)
        p.minimize(integral=u**2 + ca.log(x))
        return p, x

    (a, xa), (b, _) = phase("a"), phase("b")
    a.initial({xa: 0.0})
    mp = MultiPhaseProblem([Phase(a), Phase(b)], name="two")
    mp.connect(0, 1)
    res = cl.solve(mp, intervals=4)
    assert res.status == cl.Status.INVALID_NUMBER
    assert "defect.hermite:a/m.x@k=0" in res.message and "The objective is not finite at the guess: cost `a/cost0`" in res.message
