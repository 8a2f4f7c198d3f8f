"""Discrete mechanics in colloc: the midpoint variational integrator as a simulator and as a transcription.

The discrete equations and the simulator live in
:mod:`colloc.transcription.discrete_mechanics` (its docstring has the math and the
references); the transcription in :mod:`colloc.transcription.midpoint_vi`;
:func:`solve_midpoint_vi` is ``colloc.solve(problem, scheme="midpoint-vi")``.
"""
from __future__ import annotations

from ..transcription.discrete_mechanics import FORCING, SCHEME, ConvergenceError, MidpointVI, simulate
from .driver import run
from .options import SolveOptions
from ..model.problem import Problem
from ..errors import ProblemError
from ..results.trajectory import SolveResult
from ..transcription.midpoint_vi import transcribe_midpoint_vi


def solve_midpoint_vi(problem, options: SolveOptions | None = None, **keywords) -> SolveResult:
    """Solve ``problem`` by discrete mechanics and optimal control (DMOC) with the midpoint rule.

    The NLP is :func:`colloc.transcription.midpoint_vi.transcribe_midpoint_vi`
    (its module docstring lists the rows).

    Parameters
    ----------
    problem : Problem
        Its model must be Lagrangian (see :class:`MidpointVI`).
    options : SolveOptions, optional
        As :func:`colloc.solve` (its keywords update them; ``scheme`` is ``"midpoint-vi"``).
    forcing : {"midpoint", "trep"}, optional
        Split of the discrete forcing (default ``"midpoint"``, second order).

    Returns
    -------
    SolveResult
        Its trajectory holds the mesh points (``metadata["scheme"] ==
        "midpoint-vi"``); speeds come from the node momenta; controls are held
        on their interval (``metadata["control_hold"] == "zero-order"``).
    """
    if not isinstance(problem, Problem):
        raise ProblemError(f"solve() takes a colloc.Problem; got {type(problem).__name__}.")
    return run(problem, SolveOptions.of(options, **keywords).replace(scheme=SCHEME))


__all__ = ["MidpointVI", "ConvergenceError", "simulate", "solve_midpoint_vi", "transcribe_midpoint_vi", "FORCING"]
