"""`colloc verify` of a file solved with the projection method (bordalba2023) checks where the solver imposed.

The projection method ends interval k on the projection state ``x'_{k+1} = x_{k+1} − F_x(x_{k+1})ᵀ μ_k``
(Bordalba et al., IEEE T-RO 39, 2023): the defects close, and the residual rows hold, there, while the
stored ``x_{k+1}`` satisfies the mesh-point constraints.  A file records μ, so the checks rebuild ``x'``
and hold the defects and residuals to the constraint tolerance; without μ they could only compare the
stored states, which differ by up to μ's slack bound, at the loose dynamics tolerance — and the residual
of a correct closed-chain solution on a coarse mesh exceeded even that (1.05 × the limit, measured here
on problems/closed_chain.py at 10 intervals; 10 × on the squat to stand of tests/test_osim_squat.py).
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

import colloc as cl
from colloc.discretization.grid import Grid
from colloc.discretization.schemes import get_scheme
from colloc.pipeline.script import load_problem
from colloc.simulate.consistency import _point_values, consistency_checks, projected_ends

from pathlib import Path

CHAIN = Path(__file__).resolve().parents[1] / "problems" / "closed_chain.py"


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    """The three-link closed chain on 10 intervals (coarse: μ reaches its bound), written and read back."""
    _, problem = load_problem(CHAIN)
    result = cl.solve(problem, scheme="hermite-simpson", intervals=10)
    assert result.success
    path = tmp_path_factory.mktemp("chain") / "chain.csv"
    result.trajectory.write(path)
    return problem, cl.Trajectory.read(path)


def checks(problem, traj):
    return {c.name: c for c in consistency_checks(problem, traj, 1e-6, 1e-2)}


def test_the_residual_holds_at_the_projection_states_and_not_at_the_stored_ones(solved):
    problem, traj = solved
    record = traj.metadata["projection_multipliers"]
    assert np.abs(np.array(record["values"])).max() > 1e-4  # the projection is not negligible on this mesh
    grid = Grid.of_points(traj.time, get_scheme("hermite-simpson"))
    projected = projected_ends(problem, traj, grid)
    stored = _point_values(problem, traj, projected["rows"])[1]
    scale = max(1.0, float(np.abs(stored).max()))
    assert np.abs(projected["residual"]).max() < 1e-8 * scale
    assert np.abs(stored).max() > 1e-3 * scale


def test_defects_and_derivatives_pass_at_the_constraint_tolerance(solved):
    problem, traj = solved
    found = checks(problem, traj)
    for name in ("defects", "derivatives"):
        assert found[name].passed, found[name].message
        assert found[name].value < 1e-2  # ratio to 1e-6 × scale: the constraint tolerance with room to spare
    assert "within 1.0e-06" in found["defects"].message


def test_a_file_without_multipliers_is_checked_as_before_at_the_dynamics_tolerance(solved):
    problem, traj = solved
    bare = copy.deepcopy(traj)
    del bare.metadata["projection_multipliers"]
    assert "within 1.0e-02" in checks(problem, bare)["defects"].message


@pytest.mark.parametrize("edit", ["multiplier", "state"])
def test_an_edited_multiplier_or_end_state_fails(solved, edit):
    problem, traj = solved
    bad = copy.deepcopy(traj)
    if edit == "multiplier":
        values = np.array(bad.metadata["projection_multipliers"]["values"])
        values[0, 4] += 1e-4  # ten times less than the slack bound
        bad.metadata["projection_multipliers"]["values"] = values.tolist()
    else:
        name = problem.model.states[-1].name
        row = Grid.of_points(bad.time, get_scheme("hermite-simpson")).interval_ends[4]
        bad[name][row] += 1e-4
    found = checks(problem, bad)
    assert not (found["defects"].passed and found["derivatives"].passed)
