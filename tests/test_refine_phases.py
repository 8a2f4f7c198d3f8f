"""Mesh refinement of multi-phase problems: each phase judged by its own error and refined on its own.

References nobody here wrote: Garcia et al. 1998's fixed point of the simplest walker (θ* =
0.20031090049483 at γ = 0.009, PROBLEMS.md E1) and the closed-form two-phase rocket apex
(problems/two_phase_rocket.py, Tsiolkovsky with gravity loss).  IPOPT ``tol`` is 1e-12.
"""
from __future__ import annotations

import importlib

import pytest

import colloc as cl

TIGHT = {"tol": 1e-12}


def load(stem):
    return importlib.import_module(f"problems.{stem}")


def test_walker_refined_from_six_intervals_reaches_garcias_fixed_point():
    walker = load("simplest_walker")
    theta_star = -walker.REFERENCE["value"]
    coarse = cl.solve(walker.build(), scheme="hermite-simpson", intervals=6, ipopt=TIGHT)
    assert abs(coarse.trajectory["walker.theta"][-1] + theta_star) > 1e-6  # six intervals are not enough
    res = cl.solve(walker.build(), scheme="hermite-simpson", intervals=6, refine=dict(tolerance=1e-7), ipopt=TIGHT)
    assert res.success and res.refinement[-1]["max_error"] <= 1e-7
    assert res.refinement[-1]["intervals"] > 6 and set(res.refinement[-1]["phase_errors"]) == {"step"}
    # Garcia et al. 1998: the pre-impact stance angle is −θ*
    assert res.trajectory["walker.theta"][-1] == pytest.approx(-theta_star, abs=1e-8)
    assert res.interval_errors.size == res.refinement[-1]["intervals"]


def test_rocket_refines_only_the_phase_whose_error_is_large():
    """The coast phase is ballistic (a polynomial the scheme integrates exactly): its mesh stays."""
    rocket = load("two_phase_rocket")
    res = cl.solve(rocket.build(), intervals=4, refine=dict(tolerance=1e-9), ipopt=TIGHT)
    first, last = res.refinement[0], res.refinement[-1]
    assert first["phase_errors"]["burn"] > 1e-9 >= first["phase_errors"]["coast"]
    burn, coast = (p.metadata["intervals"] for p in res.phases)
    assert coast == 4 and burn > 4 and last["max_error"] <= 1e-9
    coarse = cl.solve(rocket.build(), intervals=4, ipopt=TIGHT)
    exact = rocket.REFERENCE["value"]
    assert abs(coarse.objective - exact) > 1e-6
    assert res.objective == pytest.approx(exact, abs=1e-7)


@pytest.mark.slow
def test_biped_refined_hermite_simpson_agrees_with_radau():
    """No published cost (PROBLEMS.md C2): refined Hermite–Simpson against Radau-3 on 40 intervals."""
    biped = load("five_link_biped")
    radau = cl.solve(biped.build(), scheme="radau-3", intervals=40, ipopt={"tol": 1e-10})
    coarse = cl.solve(biped.build(), scheme="hermite-simpson", intervals=10, ipopt={"tol": 1e-10})
    res = cl.solve(biped.build(), scheme="hermite-simpson", intervals=10, refine=dict(tolerance=1e-4), ipopt={"tol": 1e-10})
    assert res.success and res.refinement[-1]["max_error"] <= 1e-4
    assert abs(coarse.objective - radau.objective) > 3 * abs(res.objective - radau.objective)
    assert res.objective == pytest.approx(radau.objective, rel=1e-4)


def test_per_phase_meshes_must_match_the_phases():
    with pytest.raises(cl.OptionError, match="`mesh` gives 3 per-phase meshes but `.*` has 2 phases"):
        cl.build_nlp(load("two_phase_rocket").build(), mesh=[[0, 1], [0, 1], [0, 0.5, 1]])
