"""A warm start of a 3-D frictional contact-implicit solve starts where its file ended: the sliding speeds.

A result's file holds states, controls and forces, not the cone's sliding-speed variables γ; they are guessed
from the speeds the file's states give (``γ = max_j −d_jᵀṡ`` on a polyhedral cone), so every slip row
``γ + d_jᵀṡ ≥ 0`` holds at the first point of the warm start, as it did at the solution.
"""
from __future__ import annotations

import math

import numpy as np

import colloc as cl
from colloc.pipeline.driver import build_nlp

from test_contact3d import IPOPT, pushed
from test_contact_vi import rows_at


def test_warm_start_from_a_sliding_file_meets_every_slip_row(tmp_path):
    alpha = math.pi / 4
    options = dict(intervals=6, contact="implicit", impacts=False, free_steps=False)
    res = cl.solve(pushed("polyhedral", alpha), ipopt=IPOPT, **options)
    assert res.success
    path = tmp_path / "box.npz"
    res.trajectory.write(path)
    nlp = build_nlp(pushed("polyhedral", alpha), guess=cl.Trajectory.read(path), **options)
    rows = rows_at(nlp, {name: b.guess for name, b in nlp.layout.blocks.items()})
    slip = {k: v for k, v in rows.items() if ".slip_" in k and "*" not in k}
    assert slip and min(slip.values()) > -1e-9
    # the oracle: facets d_j at 0°, 90°, 180°, 270°; sliding at 45° with speed |v|, the largest −d_jᵀṡ is
    # |v| cos 45° (against the facets at 180° and 270°), at every grid point (the file's states are the grid's)
    tr = res.trajectory
    speed = np.hypot(tr["box.x_speed"], tr["box.y_speed"])
    assert np.max(speed) > 0.1  # it slides
    assert np.allclose(nlp.layout["cg3"].guess[0], speed * math.cos(alpha), atol=1e-9)


def test_a_radau_file_read_back_onto_its_own_grid_is_the_point_its_solve_ended_on(tmp_path):
    # Radau's derivative and force columns at a mesh point belong to the interval that ends there; the next
    # interval's polynomial extrapolated to its start is another value (an acceleration of 1.5e3 instead of the
    # file's in the Solo12 jump): read back onto the same grid, the guess takes each row's own values, so every
    # row holds at the first point of the warm start as at the solution (IPOPT's tolerance 1e-10 and ε = 1e-8)
    import casadi as ca

    options = dict(scheme="radau-3", contact_forces="collocation", intervals=6, contact="implicit", impacts=False,
                   free_steps=False)
    res = cl.solve(pushed("polyhedral", math.pi / 4), ipopt=IPOPT, **options)
    assert res.success
    path = tmp_path / "box.npz"
    res.trajectory.write(path)
    nlp = build_nlp(pushed("polyhedral", math.pi / 4), guess=cl.Trajectory.read(path), relaxation=1e-8, **options)
    w0 = nlp.layout.vector("guess")
    g = np.asarray(ca.Function("g", [nlp.w], [nlp.rows.g])(w0)).ravel()
    worst = nlp.rows.worst(g, 1)
    assert not worst or worst[0][2] <= 1e-7, worst
