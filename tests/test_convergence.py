"""Convergence order as the mesh refines, on Kirk's problem (docs/problems.md A8).

The error is the largest state error at the mesh points against the analytic
solution (Kirk 1998 eqs. 5.1-69/70); the slope of log(error) against log(h) is
fitted by least squares over at least four meshes.  Orders claimed: trapezoidal
2, Hermite–Simpson 4 (thresholds from the issue: ≥ 1.7 and ≥ 3.5); Radau with d
roots 2d − 1 (≥ 2d − 1.5).
"""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import colloc as cl

_spec = importlib.util.spec_from_file_location("kirk", Path(__file__).resolve().parents[1] / "problems" / "kirk.py")
kirk = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kirk)


def state_error(scheme, n):
    res = cl.solve(kirk.build(), scheme=scheme, intervals=n, ipopt={"tol": 1e-13, "acceptable_tol": 1e-13})
    assert res.success, res.message
    traj = res.trajectory
    m = cl.get_scheme(scheme).stride
    t = traj.time[::m]
    x1, x2 = kirk.exact_states(t)
    return max(np.abs(traj["plant.x1"][::m] - x1).max(), np.abs(traj["plant.x2"][::m] - x2).max())


def fitted_order(scheme, meshes):
    errors = np.array([state_error(scheme, n) for n in meshes])
    h = 2.0 / np.asarray(meshes, float)
    slope = np.polyfit(np.log(h), np.log(errors), 1)[0]
    return slope, errors


@pytest.mark.parametrize("scheme, meshes, minimum", [
    ("trapezoidal", [20, 40, 80, 160], 1.7),
    ("hermite-simpson", [4, 8, 16, 32], 3.5),
    ("radau-2", [4, 8, 16, 32], 2 * 2 - 1.5),
    ("legendre-gauss-2", [4, 8, 16, 32], 2 * 2 - 0.3),
])
def test_convergence_order_on_kirk(scheme, meshes, minimum):
    slope, errors = fitted_order(scheme, meshes)
    assert (np.diff(errors) < 0).all(), errors
    assert slope >= minimum, f"{scheme}: fitted order {slope:.2f} < {minimum} (errors {errors})"


@pytest.mark.slow
def test_radau_3_order():
    slope, errors = fitted_order("radau-3", [2, 4, 8, 16])
    assert slope >= 2 * 3 - 1.5, errors


def test_objective_converges_to_the_analytic_value():
    # J* = 16.7507233968 [DERIVED], docs/problems.md A8
    gaps = [abs(cl.solve(kirk.build(), intervals=n, ipopt={"tol": 1e-12}).objective - 16.7507233968) for n in (5, 10, 20, 40)]
    assert (np.diff(gaps) < 0).all() and gaps[-1] < 1e-6, gaps
