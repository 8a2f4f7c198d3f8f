"""The one pipeline: build_nlp, the transcription protocol, the constraint-method registry, immutable results."""
from __future__ import annotations

import dataclasses
import importlib

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.pipeline.driver import transcription
from colloc.discretization.grid import Grid
from colloc.discretization.schemes import get_scheme
from colloc.transcription import constraints as kc
from colloc.transcription import make_options
from colloc.transcription.collocation import Collocation
from colloc.transcription.midpoint_vi import MidpointVITranscription
from colloc.transcription.multiphase import MultiPhase


def double_integrator():
    """ẋ = v, v̇ = u, rest to rest in 1 s, min ∫u²: J* = 12 (u* = 6 − 12t)."""
    c = cl.Multibody("mass", coordinates=["x"], speeds=["v"])
    (x,), (v,) = c.coordinates, c.speeds
    u = c.control("u", bounds=(-100, 100))
    c.kinetic_energy = 0.5 * v**2
    c.potential_energy = 0 * x
    c.generalized_force = u
    prob = cl.Problem([c], t0=0.0, tf=1.0, name="di")
    prob.initial({x: 0.0, v: 0.0})
    prob.final({x: 1.0, v: 0.0})
    prob.minimize(integral=u**2)
    return prob


def test_one_driver_picks_the_transcription_by_problem_and_scheme():
    assert isinstance(transcription(double_integrator()), Collocation)
    assert isinstance(transcription(double_integrator(), scheme="midpoint-vi"), MidpointVITranscription)
    walker = importlib.import_module("problems.simplest_walker").build()
    assert isinstance(transcription(walker), MultiPhase)
    with pytest.raises(cl.ProblemError, match="solve\\(\\) takes a colloc.Problem or MultiPhaseProblem; got int"):
        transcription(3)


def test_build_nlp_counts_match_the_hand_count():
    """Hermite–Simpson, 4 intervals, 9 grid points: x, v, u and the implicit a = v̇ at each point."""
    nlp = cl.build_nlp(double_integrator(), intervals=4)
    assert nlp.layout.size == 4 * 9
    # 2 defect rows × 2 states × 4 intervals, one residual row per point, no other rows
    assert nlp.rows.size == 2 * 2 * 4 + 9
    assert nlp.grid.num_points == 9 and nlp.terms.keys() == {"cost0"}
    vi = cl.build_nlp(double_integrator(), scheme="midpoint-vi", intervals=4)
    assert vi.layout.size == 5 + 4  # q at mesh points, u per interval


def test_every_transcription_solves_the_double_integrator_to_its_known_optimum():
    """J* = 12 (u* = 6 − 12t): Hermite–Simpson is exact for a cubic x; the midpoint rule is second order."""
    hs = cl.solve(double_integrator(), intervals=10, ipopt={"tol": 1e-12})
    assert hs.objective == pytest.approx(12.0, abs=1e-8)
    err = [abs(cl.solve(double_integrator(), scheme="midpoint-vi", intervals=n, ipopt={"tol": 1e-12}).objective - 12.0) for n in (10, 20)]
    assert np.log2(err[0] / err[1]) > 1.7


def test_a_result_is_immutable():
    res = cl.solve(double_integrator(), intervals=4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.objective = 0.0
    again = dataclasses.replace(res, warnings=["x"])
    assert again.warnings == ["x"] and res.warnings == []


# -- constraint methods ------------------------------------------------------------------------
def cartesian_pendulum():
    body = cl.Multibody("pend", coordinates=["x", "y"])
    x, y = body.coordinates
    vx, vy = body.speeds
    u = body.control("u", bounds=(-5, 5))
    body.kinetic_energy = 0.5 * (vx**2 + vy**2)
    body.potential_energy = 9.81 * y
    body.generalized_force = ca.vertcat(u * y, -u * x)
    body.holonomic("rod", x**2 + y**2 - 1)
    prob = cl.Problem([body], t0=0.0, tf=1.0, name="pend")
    prob.initial({x: 1.0, y: 0.0, vx: 0.0, vy: 0.0})
    prob.minimize(integral=u**2)
    return prob


def test_registry_declares_what_each_method_supports():
    assert set(kc.METHODS) == {"bordalba2023", "posa2016"}
    assert kc.METHODS["bordalba2023"].schemes is None
    assert set(kc.METHODS["bordalba2023"].kinds) == {"holonomic", "nonholonomic", "acceleration"}
    assert kc.METHODS["posa2016"].schemes == ("hermite-simpson",) and kc.METHODS["posa2016"].kinds == ("holonomic",)
    for cls in kc.METHODS.values():
        assert issubclass(cls, kc.ConstraintMethod)


def test_a_registered_method_is_checked_by_its_declarations(monkeypatch):
    class RadauOnly(kc.Bordalba2023):
        schemes = ("radau-3",)

    monkeypatch.setitem(kc.METHODS, "radau-only", RadauOnly)
    prob = cartesian_pendulum()
    with pytest.raises(cl.OptionError, match="constraint_method='radau-only' works with the radau-3 scheme only, not `hermite-simpson`"):
        cl.build_nlp(prob, intervals=3, constraint_method="radau-only")
    assert cl.build_nlp(prob, scheme="radau-3", intervals=3, constraint_method="radau-only").layout.size > 0


@pytest.mark.parametrize("name", ["bordalba2023", "posa2016"])
def test_constraint_method_hooks_keep_no_state(name):
    """Every hook returns what it builds: the method object is the same after a build as before it."""
    prob = cartesian_pendulum()
    prob.validate()
    grid = Grid(np.linspace(0, 1, 4), get_scheme("hermite-simpson"))
    method = kc.make(prob, grid.scheme, make_options(constraint_method=name), grid)
    before = dict(vars(method))
    from colloc.transcription import transcribe

    original = kc.make
    try:
        kc.make = lambda *args: method  # the build uses this very object
        transcribe(prob, grid.mesh, grid.scheme, make_options(constraint_method=name))
    finally:
        kc.make = original
    assert vars(method).keys() == before.keys() and all(vars(method)[k] is v for k, v in before.items())


def test_backends_are_chosen_by_name_and_an_unknown_one_is_refused_before_the_build():
    from colloc.solvers import BACKENDS, get_backend

    assert get_backend("ipopt") is BACKENDS["ipopt"]
    for attr in ("options", "run", "outcome"):
        assert callable(getattr(BACKENDS["ipopt"], attr))
    with pytest.raises(cl.OptionError, match=r"Unknown backend `ipopt2`\. Did you mean `ipopt`"):
        get_backend("ipopt2")


def test_solve_takes_the_backend_by_name():
    p = double_integrator()
    res = cl.solve(p, intervals=5, backend="ipopt")
    assert res.success and abs(res.objective - 12.0) < 1e-6
    with pytest.raises(cl.OptionError, match="Unknown backend `fatrop_`"):
        cl.solve(p, intervals=5, backend="fatrop_")
