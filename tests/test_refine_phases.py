"""Mesh refinement of multi-phase problems: each phase judged by its own error and refined on its own.

References nobody here wrote: Garcia et al. 1998's fixed point of the simplest walker (θ* =
0.20031090049483 at γ = 0.009, docs/problems.md E1) and the closed-form two-phase rocket apex
(problems/two_phase_rocket.py, Tsiolkovsky with gravity loss).  IPOPT ``tol`` is 1e-12.
"""
from __future__ import annotations

import importlib
import math

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
    """No published cost (docs/problems.md C2): refined Hermite–Simpson against Radau-3 on 40 intervals."""
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


# -- verification phase by phase ---------------------------------------------------------------
def test_walker_and_rocket_verification_errors_fall_at_fourth_order():
    """Hermite–Simpson is fourth order: forward-simulation error (jump maps applied) shrinks ~16× per halving."""
    from colloc.simulate.multiphase_checks import verify_phases

    for stem, key in (("simplest_walker", "periodic"), ("two_phase_rocket", "burn>coast")):
        module = load(stem)
        runs = [verify_phases(module.build(), cl.solve(module.build(), scheme="hermite-simpson", intervals=n, ipopt=TIGHT))
                for n in (10, 20)]
        assert all(r["success"] for r in runs)
        assert math.log2(runs[0]["max_error"] / runs[1]["max_error"]) > 3.5, stem
        assert math.log2(runs[0]["jump_errors"][key] / runs[1]["jump_errors"][key]) > 3.5, stem
        assert runs[1]["max_error"] < 3e-6


def test_bouncing_ball_impacts_are_reproduced_by_newtons_law():
    """Free fall is a quadratic that Hermite–Simpson integrates exactly, so every jump error is round-off."""
    from colloc.simulate.multiphase_checks import verify_phases

    ball = load("bouncing_ball")
    res = cl.solve(ball.build(), intervals=10, ipopt=TIGHT)
    out = verify_phases(ball.build(), res)
    assert len(out["jump_errors"]) == len(res.phases) - 1 and out["periodic_error"] is None
    assert max(out["jump_errors"].values()) < 1e-8 and out["max_error"] < 1e-8


def test_colloc_verify_checks_a_multi_phase_file(tmp_path, capsys):
    from colloc.cli import commands as cli

    path = cl.solve(load("simplest_walker").build(), scheme="hermite-simpson", intervals=20, ipopt=TIGHT).trajectory.write(tmp_path / "w.csv")
    code = cli.main(["verify", str(path), "problems/simplest_walker.py"])
    out = capsys.readouterr().out
    assert code == 0 and "phase step:" in out and "jump periodic" in out
    error = float(out.split("jump periodic")[1].split()[2])
    assert 0 < error < 3e-6


def test_colloc_verify_refuses_plot_for_a_multi_phase_file(tmp_path, capsys):
    from colloc.cli import commands as cli

    path = cl.solve(load("two_phase_rocket").build(), intervals=4).trajectory.write(tmp_path / "r.csv")
    code = cli.main(["verify", str(path), "problems/two_phase_rocket.py", "--plot", str(tmp_path / "f.png")])
    assert code == 2 and "`--plot` draws single-phase simulations only" in capsys.readouterr().err
