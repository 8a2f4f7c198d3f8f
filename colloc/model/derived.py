"""Outputs on a trajectory: the named expressions components declare, evaluated as columns.

A component declares an output with :meth:`colloc.Component.output` (a muscle's
fiber length and tension, for instance): a scalar expression ``y(t, x, ẋ, u, λ, p)``
that is not a decision variable.  Every collocation solution gets one column of
kind ``"output"`` per declared output, evaluated at its grid points with the
state derivatives the defects used (the ``NAME.dot`` columns), so ``.csv``,
``.sto`` and ``.npz`` files carry them and plots can draw them.

Legend: ``t`` time, ``x`` states, ``ẋ`` their derivatives, ``u`` controls,
``λ`` multipliers, ``p`` parameters.
"""
from __future__ import annotations

import numpy as np

from ..errors import FileFormatError
from ..numeric import call
from ..results.trajectory import Trajectory


def add_outputs(trajectory, problem) -> Trajectory:
    """A copy of ``trajectory`` with a column per output its model declares.

    Parameters
    ----------
    trajectory : Trajectory
        A solution of ``problem``: it needs every state, ``NAME.dot``, control and
        multiplier column, and every parameter.
    problem : Problem or Model

    Returns
    -------
    Trajectory
        ``trajectory`` itself when the model declares no output; existing output
        columns are recomputed.

    Raises
    ------
    FileFormatError
        A column the outputs need is missing (e.g. a file written without ``.dot`` columns).
    """
    model = getattr(problem, "model", problem)
    if not model.outputs:
        return trajectory
    groups = [[v.name for v in model.states], [v.name + ".dot" for v in model.states],
              [v.name for v in model.controls], [v.name for v in model.multipliers]]
    for name in (k for g in groups for k in g):
        if name not in trajectory:
            raise FileFormatError(f"The trajectory has no column `{name}`, which the outputs of the model need.")
    for v in model.parameters:
        if v.name not in trajectory.parameters:
            raise FileFormatError(f"The trajectory has no value of parameter `{v.name}`, which the outputs of the model need.")
    n = trajectory.time.size
    rows = [np.array([trajectory[k] for k in g], dtype=float).reshape(len(g), n) for g in groups]
    params = np.array([[trajectory.parameters[v.name]] for v in model.parameters], dtype=float).reshape(-1, 1)
    values = call(model.output_function().map(n), trajectory.time[None, :], *rows, params)[0]
    cols = {k: trajectory[k] for k in trajectory.names}
    kinds = dict(trajectory.kinds)
    for i, key in enumerate(model.outputs):
        cols[key], kinds[key] = values[i], "output"
    return Trajectory(trajectory.time, cols, kinds, trajectory.parameters, trajectory.metadata)


__all__ = ["add_outputs"]
