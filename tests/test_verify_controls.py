"""The controls a contact file's re-simulation reads: all at once, the same numbers as each control's own interpolant."""
from __future__ import annotations

import numpy as np

import colloc as cl
from colloc.discretization.interpolant import Interpolant
from colloc.pipeline.script import import_script
from colloc.simulate.control_signals import solution_controls

from di_script import di_script


def test_a_solutions_controls_at_once_are_each_controls_own_numbers(tmp_path):
    """The simulator's control signal of a solution (one interval search for all controls) gives, to the last bit,
    what each control's own interpolant gives, including the values free steps end intervals on."""
    path = tmp_path / "di.py"
    path.write_text(di_script())
    module = import_script(path)
    traj = cl.solve(module.build(distance=2.0), scheme="radau-3", intervals=6).trajectory
    itp = Interpolant(traj)
    ends = {"mass.u": np.linspace(-1.0, 1.0, itp.num_intervals)}  # as a free-step file's `interval_end` column
    u = solution_controls(itp, ["mass.u"], ends)
    one = itp.control("mass.u", ends["mass.u"])
    times = np.concatenate([np.linspace(0.0, 1.0, 97), itp.mesh_times])
    assert all(u(t)[0] == one(t) for t in times)
    assert u.breakpoints == list(itp.mesh_times[1:-1])
    assert solution_controls(itp, []).breakpoints == []  # no control, nothing that jumps: no restart
