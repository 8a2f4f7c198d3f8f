"""``colloc verify`` of contact-implicit files whose forces act at the collocation points (``contact_forces="collocation"``).

The files are solved here: the frictionless bead in a bowl (``problems/bead_in_bowl.py``, Radau IIA s = 3, 10
intervals; its half swing ends at rest at ``−θ₀``, the pendulum's closed form) and the block sliding to rest
(``problems/block_to_rest.py``, Hermite–Simpson with free steps; it stops at ``v₀/(μg)``).  Their normal force
varies inside an interval, so each interval must be integrated with the polynomial of the forces at the
collocation points, as the transcription holds them.  The oracles are the model integrated interval by interval
(CVODES at 1e-10) and the event-driven simulator (matched closed forms to 1e-11, docs/contacts.md).
"""
from __future__ import annotations

import numpy as np
import pytest

import colloc as cl
from colloc.cli import commands as cli
from colloc.discretization.grid import Grid
from colloc.discretization.schemes import get_scheme
from colloc.simulate.contact_checks import check_contact_file
from colloc.transcription.force_points import interval_forces

from test_problems import load
from test_verify_contact import copy, failed  # a file copied to tamper with; the checks it fails

IPOPT = {"tol": 1e-10, "print_level": 0}


@pytest.fixture(scope="module")
def bead():
    bowl = load("bead_in_bowl")
    res = cl.solve(bowl.build(), ipopt=IPOPT, **bowl.SOLVE)
    assert res.success and res.trajectory.final("bead.x") == pytest.approx(bowl.REFERENCE["value"], abs=bowl.REFERENCE["tolerance"])
    return bowl.build(), res.trajectory


@pytest.mark.parametrize("scheme", ["radau-3", "hermite-simpson"])
def test_interval_forces_reproduce_a_polynomial_of_the_schemes_degree(scheme):
    # a quadratic in time at the grid points: the polynomial through the collocation points is that quadratic,
    # so the forces at every interval's ends are its values there (Radau's first point, which no defect uses, is
    # left out: a wrong value there changes nothing)
    grid = Grid(np.array([0.0, 0.2, 0.5, 0.6, 1.0]), get_scheme(scheme))
    f = lambda t: 1.0 + 2.0 * t - 3.0 * t**2  # noqa: E731
    W = np.vstack([f(grid.tau), -f(grid.tau)])
    if scheme == "radau-3":
        W[:, 0] = 99.0
    inputs, first, last = interval_forces("collocation", grid, W)
    assert inputs.shape == (2 * len(grid.scheme.collocation_indices), 4)
    np.testing.assert_allclose(first, [f(grid.mesh[:-1]), -f(grid.mesh[:-1])], atol=1e-12)
    np.testing.assert_allclose(last, [f(grid.mesh[1:]), -f(grid.mesh[1:])], atol=1e-12)
    # each interval ends on its own force where the end columns say so (free steps)
    W_end = W.copy()
    W_end[:, grid.interval_ends[:-1]] += 1.0
    _, first_end, last_end = interval_forces("collocation", grid, W, W_end)
    np.testing.assert_allclose(last_end[:, -1], last[:, -1], atol=1e-12)
    assert np.all(np.abs(last_end[:, :-1] - last[:, :-1]) > 0.5)
    # one force per interval: each interval's first value, constant
    one = interval_forces("interval", grid, W)
    assert all(np.array_equal(a, W[:, grid.interval_starts]) for a in one)


def test_bead_with_forces_at_the_collocation_points_passes_every_check(bead):
    # measured: interval-end errors ≤ 1.2e-6 (the solve's own error estimate 4e-5), resimulation at 0.0024 of its tolerance
    problem, traj = bead
    assert traj.metadata["contact_forces"] == "collocation"
    checks, info = check_contact_file(problem, traj, 1e-6, 1e-2)
    assert all(c.passed for c in checks), [c.line() for c in checks if not c.passed]
    assert max(float(np.nanmax(e)) for e in info["local_errors"].values()) < 1e-5


def test_read_as_one_force_per_interval_the_bead_fails(bead):
    # the same numbers taken as constant on each interval (the placement of files that do not say) do not
    # follow the model: the interval-end errors are 0.02 to 0.8 (measured), so the file's record is what verify reads
    problem, traj = bead
    bad = copy(traj)
    del bad.metadata["contact_forces"]
    assert {f"dynamics:{s}" for s in ("bead.x", "bead.y", "bead.x_speed", "bead.y_speed")} <= failed(problem, bad)


def test_a_scaled_force_segment_is_caught(bead):
    problem, traj = bead
    bad = copy(traj)
    n = bad.time.size
    bad["bead.bowl.normal_force"][n // 3:2 * n // 3] *= 1.1  # measured: y_speed interval-end error 0.12
    assert {"derivatives", "dynamics:bead.x_speed", "dynamics:bead.y_speed"} <= failed(problem, bad)


def test_a_replaced_state_segment_is_caught(bead):
    problem, traj = bead
    bad = copy(traj)
    n = bad.time.size
    a, b = n // 3, 2 * n // 3
    col = bad["bead.x_speed"]
    col[a:b] = np.interp(bad.time[a:b], bad.time[[a, b]], col[[a, b]])  # measured: interval-end error 0.2
    assert {"defects", "dynamics:bead.x_speed"} <= failed(problem, bad)


def test_cli_verify_reads_the_placement_from_the_file(bead, tmp_path, capsys):
    problem, traj = bead
    good, bad = tmp_path / "bead.npz", tmp_path / "pushed.npz"
    traj.write(good)
    tampered = copy(traj)
    tampered["bead.bowl.normal_force"][traj.time.size // 2] *= 1.1
    tampered.write(bad)
    script = str(load("bead_in_bowl").__file__)
    assert cli.main(["verify", str(good), script]) == 0
    assert "pass  dynamics:bead.y_speed" in capsys.readouterr().out
    assert cli.main(["verify", str(bad), script]) != 0
    assert "verification failed" in capsys.readouterr().out


@pytest.mark.slow
def test_block_sliding_to_rest_with_forces_at_the_collocation_points():
    # free steps: each interval ends on its own force (NAME.interval_end), the stop at v₀/(μg) on a mesh point
    br = load("block_to_rest")
    res = cl.solve(br.build(), ipopt=IPOPT, **dict(br.SOLVE, contact_forces="collocation"))
    assert res.success and res.trajectory.final("block.x") == pytest.approx(br.stop()[1], abs=1e-6)
    traj = res.trajectory
    assert "block.floor.friction_force.interval_end" in traj.names
    checks, info = check_contact_file(br.build(), traj, 1e-6, 1e-2)
    assert all(c.passed for c in checks), [c.line() for c in checks if not c.passed]
    assert any(e["kind"] == "stick" for e in info["simulation"]["events"])
    bad = copy(traj)
    bad["block.floor.friction_force.interval_end"][:] *= 1.1  # the force each interval ends on, 10 % more
    assert {"dynamics:block.x_speed"} <= failed(br.build(), bad)


def test_a_radau_mesh_points_force_belongs_to_the_interval_it_ends(bead):
    # Radau IIA collocates an interval's end, not its start, so the force at a mesh point is the one of the interval
    # it ends (colloc.transcription.force_points): the bead lifted off the wall inside one interval, whose own forces
    # are zero, passes the contact rows although the mesh point it starts from carries the previous interval's force;
    # a force at one of its lifted points fails them
    from colloc.discretization.interpolant import Interpolant
    from colloc.simulate.contact_checks import _contact_rows_check, interval_contact

    problem, traj = bead
    nodes = Interpolant(traj).grid.nodes_of_intervals[4]
    lifted = copy(traj)
    lifted["bead.y"][nodes[1:-1]] += 0.01  # into the bowl, away from its wall: the gap opens
    lifted["bead.bowl.normal_force"][nodes[1:]] = 0.0
    assert lifted["bead.bowl.normal_force"][nodes[0]] > 1.0
    rows = interval_contact(problem, lifted)["rows"]
    assert _contact_rows_check(rows, problem, lifted, 1e-6).passed
    pushed = copy(lifted)
    pushed["bead.bowl.normal_force"][nodes[2]] = 1.0
    check = _contact_rows_check(rows, problem, pushed, 1e-6)
    assert not check.passed and "pushes while its gap is open" in check.line(), check.line()
