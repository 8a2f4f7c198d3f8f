"""The force scale the contact rows of ``colloc verify`` are judged against, grid point by grid point.

The rows that grow with a contact's force (its cone's excess, maximal dissipation's residual, the product of an open
gap and a force) are held to the constraint tolerance times the force's *local* scale: ``max(1, median |λ|)`` over the
interval and its neighbours (as the dynamics' scale of a state), the largest of the intervals a point belongs to.
"""
from __future__ import annotations

import numpy as np

from colloc.simulate.checks import point_scale


def nodes(intervals, per=3):
    """``nodes_of_intervals`` of a mesh whose intervals have ``per`` points each, the mesh points shared."""
    return np.array([[k * per + j for j in range(per + 1)] for k in range(intervals)])


def test_a_foot_in_the_air_most_of_the_horizon_is_judged_against_its_stance_force_in_stance():
    idx = nodes(10)
    lam = np.zeros(idx.max() + 1)
    lam[np.unique(idx[3:6])] = 10.0  # loaded with 10 N over intervals 3–5 of 10: the median over the horizon is 0
    assert max(1.0, np.median(lam)) == 1.0
    scale = point_scale(lam, idx)
    assert np.allclose(scale[idx[4]], 10.0)  # mid-stance: the force there
    assert np.allclose(scale[idx[0]], 1.0) and np.allclose(scale[idx[9]], 1.0)  # in the air: the floor of 1


def test_one_edited_force_does_not_raise_the_scale_around_it():
    idx = nodes(6)
    lam = np.full(idx.max() + 1, 2.0)
    lam[idx[3, 1]] = 1e6  # one grid point's force edited
    scale = point_scale(lam, idx)
    assert np.allclose(scale, 2.0)  # the median of at least 10 values ignores it


def test_a_mesh_point_takes_the_larger_scale_of_its_two_intervals():
    idx = nodes(6)
    lam = np.zeros(idx.max() + 1)
    lam[np.unique(idx[:3])] = 5.0  # intervals 0–2 loaded, 3–5 free: the mesh point between 2 and 3 ends the stance
    scale = point_scale(lam, idx)
    assert scale[idx[2, -1]] == scale[idx[2, 0]] >= 5.0 - 1e-12
    assert scale[idx[5, -1]] == 1.0
