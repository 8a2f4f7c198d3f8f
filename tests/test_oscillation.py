"""Chattering controls: detected in a solution, reported with the fix, and refined away.

Reference: catalyst mixing, COPS 3.0 problem 14 (Dolan, Moré, Munson 2004), J* = −0.0480556
(six digits, relative tolerance 1e-5); Hermite–Simpson with free midpoint controls at 100
intervals chatters on the singular arc and reports J ≈ −0.048083, 5.7e-4 (relative) below it.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import colloc as cl
from colloc.results.oscillation import oscillating_points
from colloc.pipeline.refine import estimate_errors

PROBLEMS = Path(__file__).resolve().parents[1] / "problems"
IPOPT = {"tol": 1e-10, "print_level": 0}


def load(stem):
    spec = importlib.util.spec_from_file_location(f"problems.{stem}", PROBLEMS / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- the detector on sampled controls (numpy only) -------------------------------------------------
t = np.linspace(0.0, 1.0, 201)
SMOOTH = [np.sin(2 * np.pi * t), t**3, np.full_like(t, 0.3) + 1e-10 * np.cos(977 * t)]
STEP = np.where(t < 0.4, 1.0, 0.0)
SPIKE = np.where(np.abs(t - 0.5) < 0.003, 1.0, 0.0)
BANG_BANG = np.where((t < 0.3) | (t > 0.7), 1.0, -1.0)  # two switches, far apart


@pytest.mark.parametrize("u", SMOOTH + [STEP, SPIKE, BANG_BANG], ids=["sine", "cubic", "noisy-constant", "step", "spike", "bang-bang"])
def test_smooth_controls_and_switches_are_not_oscillations(u):
    assert not oscillating_points(u).any()


def test_point_to_point_sawtooth_is_flagged_where_it_is():
    u = np.sin(np.pi * t)
    u[80:120:2] += 0.5  # mesh point to midpoint zig-zag on t ∈ [0.4, 0.6)
    flags = oscillating_points(u)
    assert flags[80:119].all() and not flags[:79].any() and not flags[121:].any()


def test_pulses_between_rests_on_a_bound_are_flagged():
    u = np.zeros(201)
    u[40:160:7] = 1.0  # a one-point pulse every 7 points, the control resting on 0 in between
    flags = oscillating_points(u)
    assert flags[40:155].all() and not flags[:38].any() and not flags[162:].any()


# -- in a solution ---------------------------------------------------------------------------------
def test_catalyst_mixing_with_free_midpoint_controls_is_flagged():
    cm = load("catalyst_mixing")
    result = cl.solve(cm.build(), scheme="hermite-simpson", intervals=100, control_interpolation="free", ipopt=IPOPT)
    assert result.success
    # the chattering solution lies beyond the continuous optimum, by more than the reference's tolerance
    assert result.objective < cm.REFERENCE["value"] * (1 + 10 * cm.REFERENCE["tolerance"])
    [warning] = [w for w in result.warnings if "oscillates" in w]
    # radau-3 is not proposed: it removes the chattering here but not on Goddard's rocket (colloc.oscillation)
    assert "`reactor.u`" in warning and "control_interpolation='linear'" in warning and "radau" not in warning
    assert "warning: control `reactor.u` oscillates" in result.summary()
    errors = estimate_errors(cm.build(), result.trajectory)
    assert errors.max() > 0.1  # the error estimate sees the chattering, so refinement cannot stop on it


@pytest.mark.parametrize("options", [dict(control_interpolation="linear"), dict(scheme="radau-3")], ids=["linear", "radau-3"])
def test_catalyst_mixing_fixes_are_not_flagged_and_reach_the_reference(options):
    cm = load("catalyst_mixing")
    result = cl.solve(cm.build(), **{"intervals": 100, **options}, ipopt=IPOPT)
    assert not any("oscillates" in w for w in result.warnings)
    assert result.objective == pytest.approx(cm.REFERENCE["value"], rel=cm.REFERENCE["tolerance"])


def test_smooth_cartpole_is_not_flagged():
    cp = load("cartpole")
    result = cl.solve(cp.build(), **cp.SOLVE, ipopt=IPOPT)
    assert result.success and not any("oscillat" in w for w in result.warnings)


def test_refinement_from_20_intervals_reaches_catalyst_mixing_reference():
    cm = load("catalyst_mixing")
    result = cl.solve(cm.build(), intervals=20, refine={"tolerance": 1e-6}, ipopt=IPOPT)
    assert result.refinement[0]["max_error"] > 0.1  # the chattering first mesh is not accepted
    assert result.refinement[-1]["max_error"] <= 1e-6
    assert any("control_interpolation='linear'" in w for w in result.warnings)
    assert result.objective == pytest.approx(cm.REFERENCE["value"], rel=cm.REFERENCE["tolerance"])


def test_refinement_with_free_midpoints_kept_refines_the_chattering_intervals():
    cm = load("catalyst_mixing")
    result = cl.solve(cm.build(), intervals=20, control_interpolation="free", refine={"tolerance": 1e-6, "max_iterations": 2},
                      ipopt=IPOPT)
    first, second = result.refinement
    assert first["max_error"] > 0.1 and second["intervals"] > 2 * first["intervals"]
    assert not any("following meshes tie" in w for w in result.warnings)
    assert any("mesh refinement stopped" in w for w in result.warnings)
