"""``colloc verify`` of a muscle-driven smooth-contact gait: Moco's 2-D walking tracking problem solved by
colloc (problems/gait2d_tracking.py, 50 intervals; ``tests/data/gait2d_tracking_N50.npz``, written by
``colloc.solve`` with its accuracy record, states, controls and derivative columns kept).

The dynamics checks hold each interval simulated alone to the local error the solve estimated
(:mod:`colloc.simulate.error_bounds`): the solution passes, an activation edited over a segment fails."""
import pathlib
import sys

import numpy as np
import pytest

import colloc as cl

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "problems"))
FILE = ROOT / "tests" / "data" / "gait2d_tracking_N50.npz"


@pytest.fixture(scope="module")
def gait():
    import gait2d_tracking

    return gait2d_tracking.build(), cl.Trajectory.read(FILE)


@pytest.mark.slow
def test_gait_solution_verifies_and_an_edited_activation_does_not(gait):
    problem, traj = gait
    sim = cl.verify(problem, traj)
    assert sim["success"] and sim["verified"], [c.line() for c in sim["checks"] if not c.passed]
    states = [v.name for v in problem.model.states]
    assert sorted(sim["dynamics_limits"]) == sorted(states)
    assert sorted(sim["errors"]) == sorted(states)  # the whole-horizon drift, per state
    name = "soleus_r.activation"
    limit = sim["dynamics_limits"][name]
    assert limit < 1e-3  # the claim is the solve's, not a loose default
    cols = {n: np.array(traj[n], dtype=float) for n in traj.names}
    cols[name][40:61] += 0.01
    edited = cl.Trajectory(traj.time, cols, traj.kinds, traj.parameters, traj.metadata)
    bad = cl.verify(problem, edited)
    assert not bad["verified"]
    check = next(c for c in bad["checks"] if c.name == f"dynamics:{name}")
    assert not check.passed and check.value > 5 * check.limit
    assert bad["dynamics_limits"][name] == pytest.approx(limit, rel=1e-3)  # the edit cannot raise it
