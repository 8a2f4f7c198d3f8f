"""Kinematic constraints solved end to end: levels, convergence order, twins, multipliers, guesses, errors.

Every constrained problem script in ``problems/`` names its minimal-coordinate (or reduced) twin in
``TWIN``.  Checked here, for each scheme (trapezoidal, hermite-simpson, radau-3) and constraint method
(bordalba2023 everywhere; posa2016 on hermite-simpson for holonomic-only models):

* the NLP solves and every enforced level (φ, φ̇, φ̈, ψ, ψ̇, α, projection, defects, residuals) is
  satisfied to 1e-8 (IPOPT ``tol`` 1e-10, 100× tighter);
* the constraint error *between* mesh points, read from the scheme's own interpolant at the interval
  midpoints, falls at about the interpolant's order as the mesh is refined (least-squares slope);
* each formulation reaches its twin's optimum (relative gap < 1e-6 at 100 Hermite–Simpson intervals,
  shrinking with the mesh);
* multipliers match their analytic values (the point mass on a line: Moco's ``testMocoConstraints.cpp``
  "Multipliers are correct", checked there to 1e-5; the Cartesian pendulum: docs/problems.md D1);
* from its default guess, each constrained problem needs at most 3× its twin's IPOPT iterations;
* declaring a constraint and its hand-written derivative is a ModelError.

Sign convention (docs/design.md §2): ``M a + c − τ − Gᵀλ = 0``, so ``+Gᵀλ`` is the constraint force; Simbody
and Moco write ``M u̇ + Gᵀλ = f`` and their multipliers have the opposite sign.
"""
from __future__ import annotations

import importlib
import math

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.errors import ModelError
from colloc.discretization.schemes import get_scheme

IPOPT = {"tol": 1e-10}
LEVEL_TOL = 1e-8  # every enforced row, with IPOPT tol 100× tighter
SLACK_BOUND = 1e-3  # default projection_slack_bounds (Moco's projection_slack_variable_bounds)

#: Constrained problem scripts, the kinds of constraint they declare, and their twins.
CONSTRAINED = {
    "pendulum_cartesian": "holonomic",
    "double_pendulum_line": "holonomic",
    "point_mass_line": "holonomic",
    "cartpole_cartesian": "holonomic",
    "quaternion_slew": "holonomic",  # a position-level invariant (no multiplier)
    "skate": "nonholonomic",
    "constant_acceleration": "acceleration",
}

#: Intervals per scheme for the level checks.  Bordalba's slacks are bounded by ±1e-3; on coarse
#: trapezoidal meshes the projection needs more than that (Moco's tests use 50 trapezoidal intervals
#: against 25 for the others for the same reason), so the trapezoid gets a finer mesh.
INTERVALS = {"trapezoidal": 100, "hermite-simpson": 30, "radau-3": 15}


def load(stem):
    return importlib.import_module(f"problems.{stem}")


def solve(stem, scheme="hermite-simpson", intervals=None, method="bordalba2023", problem=None, ipopt=None):
    """Solve ``problems/<stem>.py`` (or ``problem``, built from it) with IPOPT tol 1e-10."""
    module = load(stem)
    problem = problem or module.build()
    kwargs = dict(scheme=scheme, intervals=intervals or module.SOLVE["intervals"], ipopt={**IPOPT, **(ipopt or {})})
    if problem.model.constraints:
        kwargs["constraint_method"] = method
    return cl.solve(problem, **kwargs)


def cases():
    out = []
    for stem, kind in CONSTRAINED.items():
        for scheme in INTERVALS:
            out.append(pytest.param(stem, scheme, "bordalba2023", id=f"{stem}-{scheme}-bordalba2023"))
        if kind == "holonomic":
            out.append(pytest.param(stem, "hermite-simpson", "posa2016", id=f"{stem}-hermite-simpson-posa2016"))
    return out


def describe(result):
    """One line for assertion messages: status, objective, iterations, slacks, worst rows."""
    worst = ", ".join(f"{lab} {vio:.1e}" for lab, _, vio in result.worst[:3])
    return (f"{result.status.value}, J={result.objective:.10g}, {result.iterations} it, slacks {result.slacks}, "
            f"worst: {worst or 'none'}")


# -- 1. every scheme × method solves and meets every enforced level ---------------------------------
@pytest.mark.parametrize("stem, scheme, method", cases())
def test_solves_and_every_level_holds(stem, scheme, method):
    result = solve(stem, scheme, INTERVALS[scheme], method)
    # "solved", not IPOPT's "acceptable": a stall near the solution is a defect of the NLP (e.g. a
    # rank-deficient constraint Jacobian), even when the violations happen to be small
    assert result.status == cl.Status.SOLVED, f"{stem} {scheme} {method}: {describe(result)}"
    kinds = result.violation_by_kind()
    assert CONSTRAINED[stem] in kinds, f"no {CONSTRAINED[stem]} rows were enforced: {sorted(kinds)}"
    bad = {k: v for k, v in result.violations.items() if v > LEVEL_TOL}
    assert not bad, f"{stem} {scheme} {method}: rows above {LEVEL_TOL}: {bad}; {describe(result)}"
    for name, value in result.slacks.items():
        bound = SLACK_BOUND if name == "mu" else 0.1  # posa's velocity correction γ: ±0.1
        assert value < bound * (1 - 1e-6), f"slack `{name}` saturates its bound {bound} ({value:.2e}): refine the mesh"


def test_levels_enforced_per_kind():
    """Labels say which levels are imposed: holonomic φ, φ̇, φ̈; an invariant φ only; ψ, ψ̇; α."""
    expected = {
        "pendulum_cartesian": {"holonomic:pend.rod", "holonomic:pend.rod.dot", "holonomic:pend.rod.ddot"},
        "quaternion_slew": {"holonomic:body.unit"},
        "skate": {"nonholonomic:skate.blade", "nonholonomic:skate.blade.dot"},
        "constant_acceleration": {"acceleration:cart.servo"},
    }
    for stem, labels in expected.items():
        problem = load(stem).build()
        got = {lab for level in ("position", "velocity", "acceleration")
               for lab in problem.model.constraint_function(level)[1]}
        assert got == labels, stem


# -- 2. the constraint error between mesh points falls at the interpolant's order --------------------
def _rod(v):
    return v["pend.x"] ** 2 + v["pend.y"] ** 2 - 1


def _cartpole_rod(v):
    return (v["cartpole.px"] - v["cartpole.xc"]) ** 2 + v["cartpole.py"] ** 2 - 0.5**2


def _unit(v):
    return v["body.qw"] ** 2 + v["body.qx"] ** 2 + v["body.qy"] ** 2 + v["body.qz"] ** 2 - 1


def _blade(v):
    return np.sin(v["skate.theta"]) * v["skate.vx"] - np.cos(v["skate.theta"]) * v["skate.vy"]


#: Lowest enforced level of each problem whose constraint is not preserved exactly by the schemes
#: (the line, coupler and constant-acceleration constraints are linear on their solution branch and are
#: met between mesh points to round-off; see their scripts).
BETWEEN = {"pendulum_cartesian": _rod, "cartpole_cartesian": _cartpole_rod, "quaternion_slew": _unit, "skate": _blade}

#: Expected slope of the midpoint error: the order of the scheme's interpolant between its nodes.  The
#: trapezoid claims 2 (its quadratic interpolant gives ~3 here); Hermite–Simpson's cubic 4; Radau-3's
#: cubic through 4 nodes gives h⁴ (stage order 3 + 1) between nodes, below its mesh-point order 5.
MIDPOINT_ORDER = {"trapezoidal": 2, "hermite-simpson": 4, "radau-3": 4}
MESHES = {"trapezoidal": (50, 100, 200), "hermite-simpson": (20, 40, 80), "radau-3": (10, 20, 40)}


def midpoint_error(result, phi):
    """max |φ| at the midpoints of the mesh intervals, from the scheme's own interpolant."""
    traj = result.trajectory
    mesh_times = traj.time[:: get_scheme(traj.metadata["scheme"]).stride]
    return float(np.abs(phi(traj(0.5 * (mesh_times[1:] + mesh_times[:-1])))).max())


def slope(intervals, errors):
    return float(np.polyfit(np.log(1.0 / np.asarray(intervals, float)), np.log(errors), 1)[0])


def order_cases():
    out = []
    for stem in BETWEEN:
        for scheme in MESHES:
            methods = ["bordalba2023"] + (["posa2016"] if scheme == "hermite-simpson" and CONSTRAINED[stem] == "holonomic" else [])
            for method in methods:
                cheap = (stem, scheme, method) == ("pendulum_cartesian", "hermite-simpson", "bordalba2023")
                out.append(pytest.param(stem, scheme, method, marks=[] if cheap else [pytest.mark.slow],
                                        id=f"{stem}-{scheme}-{method}"))
    return out


@pytest.mark.parametrize("stem, scheme, method", order_cases())
def test_error_between_mesh_points_converges_at_order(stem, scheme, method):
    errors = []
    for n in MESHES[scheme]:
        result = solve(stem, scheme, n, method)
        assert result.success, f"{stem} {scheme} N={n}: {describe(result)}"
        errors.append(midpoint_error(result, BETWEEN[stem]))
    fitted = slope(MESHES[scheme], errors)
    assert errors[-1] < errors[0]
    assert fitted >= MIDPOINT_ORDER[scheme] - 0.3, f"midpoint errors {errors} on {MESHES[scheme]}: slope {fitted:.2f}"


# -- 3. each formulation reaches its twin's optimum ------------------------------------------------------
def gap(stem, intervals, method="bordalba2023", scheme="hermite-simpson"):
    """Relative gap between the constrained optimum and its twin's on the same mesh, and both results."""
    twin = solve(load(stem).TWIN, scheme, intervals)
    if stem == "cartpole_cartesian":
        # neighbouring local optima (58.8077, 57.9448): start from the twin's solution, with a small
        # initial barrier (with the default mu_init = 0.1 IPOPT leaves for 57.9448 at N = 200 even from it)
        problem = load(stem).guess_from_twin(load(stem).build(), twin.trajectory)
        result = solve(stem, scheme, intervals, method, problem=problem, ipopt={"mu_init": 1e-6})
    else:
        result = solve(stem, scheme, intervals, method)
    assert result.success and twin.success, f"{stem} N={intervals}: {describe(result)} / twin {describe(twin)}"
    return abs(result.objective / twin.objective - 1), result, twin


#: Constraints the schemes preserve exactly (linear in q on the solution branch, or in a): the two
#: formulations have the same discrete optimum on every mesh.
EXACT_TWINS = ("double_pendulum_line", "point_mass_line", "constant_acceleration")


@pytest.mark.parametrize("stem", EXACT_TWINS)
def test_linear_constraints_match_their_twin_on_every_mesh(stem):
    for n in (20, 100):
        g, result, twin = gap(stem, n)
        assert g < 1e-10, f"{stem} N={n}: {result.objective!r} vs twin {twin.objective!r}"


def twin_cases():
    out = []
    for stem in ("pendulum_cartesian", "skate", "quaternion_slew", "cartpole_cartesian"):
        for method in ("bordalba2023", "posa2016") if CONSTRAINED[stem] == "holonomic" else ("bordalba2023",):
            marks = []
            if stem == "cartpole_cartesian":
                # order-4 convergence with a larger constant: gap 9.6e-4, 5.3e-5, 2.7e-6 at N = 25, 50, 100
                # (posa2016: 2.1e-6 at 100); the Cartesian form's own error against J* is 2.7e-6 where the
                # angle form's is 2.3e-8 (scripts/twin_gap_study.py); below 1e-6 from ~125 intervals
                marks = [pytest.mark.xfail(strict=True, reason="cart-pole gap at 100 HS intervals is 2-3e-6")]
            elif (stem, method) == ("pendulum_cartesian", "posa2016"):
                # Posa's velocity correction γ perturbs the Simpson defect: gap 1.26e-6 at N=100
                # (bordalba2023: 7.3e-7)
                marks = [pytest.mark.xfail(strict=True, reason="posa2016 D1 gap at 100 HS intervals is 1.26e-6")]
            out.append(pytest.param(stem, method, marks=marks, id=f"{stem}-{method}"))
    return out


@pytest.mark.parametrize("stem, method", twin_cases())
def test_reaches_the_twin_optimum(stem, method):
    coarse, _, _ = gap(stem, 25, method)
    fine, result, twin = gap(stem, 100, method)
    assert fine < coarse, f"{stem}: gap {coarse:.2e} at N=25 did not shrink (N=100: {fine:.2e})"
    assert fine < 1e-6, f"{stem} {method}: J={result.objective!r}, twin {twin.objective!r}, gap {fine:.2e} at N=100"


#: The cases above that miss 1e-6 at 100 intervals meet it once the mesh is fine enough for their larger
#: error constant (scripts/twin_gap_study.py: cart-pole 6.4e-7 / 5.6e-7, D1 posa2016 3.3e-7 at N = 140).
FINER_MESH = 140


@pytest.mark.parametrize("stem, method", [("cartpole_cartesian", "bordalba2023"), ("cartpole_cartesian", "posa2016"),
                                          ("pendulum_cartesian", "posa2016")])
def test_gap_below_1e6_on_a_finer_mesh(stem, method):
    fine, result, twin = gap(stem, FINER_MESH, method)
    assert fine < 1e-6, f"{stem} {method}: J={result.objective!r}, twin {twin.objective!r}, gap {fine:.2e} at N={FINER_MESH}"


@pytest.mark.slow
@pytest.mark.parametrize("stem", ["pendulum_cartesian", "skate", "quaternion_slew", "cartpole_cartesian"])
def test_twin_gap_converges_at_order(stem):
    # Hermite–Simpson: both optima carry O(h⁴) errors; the pendulum's gap is pre-asymptotic below 50
    # intervals (8.1e-5, 9.5e-6, 7.3e-7, 5.0e-8 at N = 25, 50, 100, 200)
    meshes = (50, 100, 200)
    gaps = [gap(stem, n)[0] for n in meshes]
    assert slope(meshes, gaps) >= 4 - 0.3, f"{stem}: gaps {gaps} on {meshes}"


# -- 4. multipliers ------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["bordalba2023", "posa2016"])
def test_point_mass_on_a_line_multiplier(method):
    # Moco testMocoConstraints.cpp "Multipliers are correct": λ = ½(Fx − Fy) to 1e-5 relative, HS, N=10.
    # colloc's +Gᵀλ convention flips the sign: λ = ½(Fy − Fx); tolerance 1e-6 (10× tighter than Moco).
    module = load("point_mass_line")
    result = solve("point_mass_line", "hermite-simpson", 10, method)
    traj = result.trajectory
    lam = traj["mass.line.lambda"]
    from_forces = 0.5 * (traj["mass.fy"] - traj["mass.fx"])
    exact = module.exact_multiplier(traj.time)
    scale = np.abs(exact).max()
    np.testing.assert_allclose(lam, from_forces, rtol=0, atol=1e-6 * scale)
    np.testing.assert_allclose(lam, exact, rtol=0, atol=1e-6 * scale)
    assert result.objective == pytest.approx(module.exact_objective(), rel=1e-9)
    assert np.all(np.sign(lam[:3]) == 1) and np.all(np.sign(0.5 * (traj["mass.fx"] - traj["mass.fy"])[:3]) == -1)


def _pendulum_multiplier_errors(method, meshes=(25, 50, 100)):
    """Rod multiplier of the Cartesian D1 against the value implied by the minimal solution.

    φ̈ = 2(x ẍ + y ÿ + ẋ² + ẏ²) = 0 with ẍ = u y + 2λx, ÿ = −g − u x + 2λy and x² + y² = 1 gives
    λ = (g y − ẋ² − ẏ²)/2 = −y₄ (Betts's algebraic state, docs/problems.md D1), i.e. with x = cos φ,
    y = sin φ: λ = (g sin φ − φ̇²)/2 from the twin's states.
    """
    errors = []
    for n in meshes:
        result = solve("pendulum_cartesian", "hermite-simpson", n, method)
        twin = solve("pendulum_minimal", "hermite-simpson", n).trajectory
        lam = result.trajectory["pend.rod.lambda"]
        implied = 0.5 * (9.81 * np.sin(twin["pend.phi"]) - twin["pend.omega"] ** 2)
        errors.append(float(np.abs(lam - implied).max() / np.abs(implied).max()))
    return errors


@pytest.mark.parametrize("method", ["bordalba2023", "posa2016"])
def test_pendulum_rod_multiplier_matches_the_minimal_solution(method):
    meshes = (25, 50, 100)
    errors = _pendulum_multiplier_errors(method, meshes)
    # discretisation-limited: Hermite–Simpson order 4 (observed 3.1e-4, 2.3e-5, 1.6e-6 with bordalba2023)
    assert errors[-1] < 1e-5, errors
    assert slope(meshes, errors) >= 4 - 0.3, errors


def test_pendulum_rod_multiplier_matches_its_own_states_at_mesh_points():
    # posa2016 imposes φ̈ = 0 on the true states at mesh points, so λ = (g y − |v|²)/2 holds there exactly
    module = load("pendulum_cartesian")
    traj = solve("pendulum_cartesian", "hermite-simpson", 40, "posa2016").trajectory
    mesh = slice(None, None, 2)
    implied = module.multiplier_from_states(traj["pend.x"], traj["pend.y"], traj["pend.vx"], traj["pend.vy"])
    np.testing.assert_allclose(traj["pend.rod.lambda"][mesh], implied[mesh], rtol=0, atol=1e-8 * np.abs(implied).max())


def test_skate_blade_force_matches_the_reduced_solution():
    # λ = −m s ω (skate.py): exactly from the skate's own states (ψ̇ = 0 at every grid point), and from
    # the reduced twin's s, ω up to the discretisation (observed 6.6e-5, 3.9e-6, 2.4e-7 at N = 25, 50, 100)
    traj = solve("skate", "hermite-simpson", 100).trajectory
    twin = solve("skate_minimal", "hermite-simpson", 100).trajectory
    implied = -twin["skate.s"] * twin["skate.omega"]
    own = load("skate").multiplier_from_states(traj["skate.theta"], traj["skate.vx"], traj["skate.vy"], traj["skate.omega"])
    scale = np.abs(implied).max()
    np.testing.assert_allclose(traj["skate.blade.lambda"], own, rtol=0, atol=1e-8 * scale)
    np.testing.assert_allclose(traj["skate.blade.lambda"], implied, rtol=0, atol=1e-6 * scale)


def test_constant_acceleration_force_matches_the_prescribed_motion():
    module = load("constant_acceleration")
    traj = solve("constant_acceleration", "hermite-simpson", 40).trajectory
    twin = solve("constant_acceleration_minimal", "hermite-simpson", 40).trajectory
    implied = module.multiplier_from_states(twin["cart.theta"], twin["cart.omega"], twin["cart.omega.dot"])
    np.testing.assert_allclose(traj["cart.servo.lambda"], implied, rtol=1e-9)
    t = traj.time
    np.testing.assert_allclose(traj["cart.x"], 0.5 * 2.0 * t**2, atol=1e-10)  # x = a₀t²/2 follows, unimposed


def test_quaternion_invariant_has_no_multiplier_and_stays_unit():
    result = solve("quaternion_slew", "hermite-simpson", 60, "posa2016")
    traj = result.trajectory
    assert not traj.of_kind("multiplier")
    assert set(k for k in result.violations if k.startswith("holonomic")) == {"holonomic:body.unit"}
    norm = traj["body.qw"] ** 2 + traj["body.qx"] ** 2 + traj["body.qy"] ** 2 + traj["body.qz"] ** 2
    np.testing.assert_allclose(norm[::2], 1.0, atol=LEVEL_TOL)
    tau = load("quaternion_slew_minimal").exact_control(traj.time)
    np.testing.assert_allclose(traj["body.tau_z"], tau, atol=1e-4 * np.abs(tau).max())
    np.testing.assert_allclose(traj["body.tau_x"], 0.0, atol=1e-8)


# -- 5. default guesses converge about as fast as the twin ------------------------------------------
@pytest.mark.parametrize("n", [25, 100])
@pytest.mark.parametrize("stem", list(CONSTRAINED))
def test_converges_from_default_guess_within_3x_twin_iterations(stem, n):
    module = load(stem)
    result = solve(stem, "hermite-simpson", n)
    twin = solve(module.TWIN, "hermite-simpson", n)
    assert result.success and twin.success, f"{describe(result)} / twin {describe(twin)}"
    assert result.iterations <= 3 * twin.iterations, (
        f"{stem} (HS, N={n}) took {result.iterations} IPOPT iterations from its default guess, its twin "
        f"{module.TWIN} {twin.iterations}: more than 3×. The guess is projected onto the constraint "
        f"manifolds before solving (transcription/consistent.py); see whether it is consistent at t0/tf.")


# -- 6. a constraint and its hand-written derivative ---------------------------------------------------
def _cartesian_pendulum():
    body = cl.Multibody("pend", coordinates=["x", "y"], speeds=["vx", "vy"])
    body.kinetic_energy = 0.5 * ca.sumsqr(body.v)
    body.potential_energy = 9.81 * body.coordinates[1]
    return body


def _declare_rate(body):
    (x, y), (vx, vy) = body.coordinates, body.speeds
    body.nonholonomic("rod_rate", 2 * x * vx + 2 * y * vy)


def _declare_acceleration(body):
    (x, y), (vx, vy), (ax, ay) = body.coordinates, body.speeds, ca.vertsplit(body.a)
    body.acceleration("rod_acc", x * ax + y * ay + vx**2 + vy**2)


def _declare_rate_of_line(body):
    vx, vy = body.speeds
    body.nonholonomic("line_rate", vx - vy)


@pytest.mark.parametrize("declare, holonomic, match", [
    (_declare_rate, lambda b: b.holonomic("rod", ca.sumsqr(b.q) - 1), r"Constraint `pend.rod_rate` repeats constraint `pend.rod`.*hand-written derivative"),
    (_declare_acceleration, lambda b: b.holonomic("rod", ca.sumsqr(b.q) - 1), r"Constraint `pend.rod_acc` repeats constraint `pend.rod`"),
    (_declare_rate_of_line, lambda b: b.holonomic("line", b.q[0] - b.q[1]), r"Constraint `pend.line_rate` repeats constraint `pend.line`"),
])
def test_hand_written_derivative_of_a_constraint_is_refused(declare, holonomic, match):
    body = _cartesian_pendulum()
    holonomic(body)
    with pytest.raises(ModelError, match=match):
        declare(body)
    assert len(body.constraints) == 1  # nothing half-declared


def test_invariant_declared_twice_is_refused():
    from problems.quaternion_slew import quaternion_matrix

    body = cl.Multibody("body", coordinates=["qw", "qx", "qy", "qz"], speeds=["wx", "wy", "wz"],
                        kinematics=lambda q: 0.5 * quaternion_matrix(q))
    unit = body.holonomic("unit", ca.sumsqr(body.q) - 1)
    assert unit.multipliers == [] and unit.velocity is None and unit.acceleration is None
    with pytest.raises(ModelError, match=r"`body.unit2` repeats constraint `body.unit`"):
        body.holonomic("unit2", 0.5 * (ca.sumsqr(body.q) - 1))


def test_problem_scripts_name_existing_twins():
    for stem in CONSTRAINED:
        module = load(stem)
        twin = load(module.TWIN)
        assert not twin.build().model.constraints, f"{module.TWIN} should be unconstrained"
        assert math.isfinite(module.REFERENCE["value"])
        assert module.REFERENCE["value"] == pytest.approx(twin.REFERENCE["value"], rel=1e-9), stem
