"""The transcription protocol: what the driver asks of every kind of transcription.

A transcription is made for one problem and its settings (scheme, mesh,
options), all checked when it is made, so that nothing malformed reaches the
build.  The driver (:mod:`colloc.pipeline.driver`) then calls, in order,

1. :meth:`Transcription.warm_start` — the user's ``guess`` in the form ``build`` takes;
2. :meth:`Transcription.build` — the :class:`~colloc.transcription.nlp.NLP` (typed fields, labelled rows);
3. a backend runs the NLP;
4. :meth:`Transcription.trajectory` — the Trajectory of any decision vector
   (the optimum, the last iterate of a failed solve, a checkpoint);
5. :meth:`Transcription.slacks` — the largest slack of each block;
6. :meth:`Transcription.result` — the (immutable) :class:`~colloc.results.trajectory.SolveResult`.

Single-phase collocation (:mod:`.collocation`), multi-phase problems
(:mod:`.phases`) and the midpoint variational integrator (:mod:`.midpoint_vi`)
implement it.
"""
from __future__ import annotations

import os
from abc import ABC, abstractmethod

from ..errors import OptionError
from .nlp import NLP
from ..results.trajectory import SolveResult, Trajectory


def as_trajectory(guess):
    """A warm start as a Trajectory: given as one, as a SolveResult or as a file path (read), or ``None``."""
    if guess is None or isinstance(guess, Trajectory):
        return guess
    if isinstance(guess, SolveResult):
        return guess.trajectory
    if isinstance(guess, (str, os.PathLike)):
        return Trajectory.read(guess)
    raise OptionError(f"`guess` must be a Trajectory, a SolveResult or a file path; got {type(guess).__name__}.")


def with_columns(traj, columns, kind):
    """A new Trajectory: ``traj`` with ``columns`` ``{name: values on its times}`` added as columns of ``kind``."""
    cols = {n: traj[n] for n in traj.names}
    cols.update(columns)
    kinds = dict(traj.kinds, **{n: kind for n in columns})
    return Trajectory(traj.time, cols, kinds, traj.parameters, traj.metadata)


def slack_warnings(slacks) -> list:
    """One warning per slack block that reached its bound (±1e-3)."""
    return [f"the largest constraint slack `{k}` is {v:.2e} (at its bound); refine the mesh" for k, v in slacks.items() if v > 1e-3 * (1 - 1e-9)]


class Transcription(ABC):
    """One problem with its settings, turned into an NLP and read back; see the module docstring."""

    #: Whether the NLP's layout says which mesh point or interval every variable belongs to (``Block.per``), so
    #: that a stage-wise backend (FATROP) can order it; only single-phase collocation does.
    stagewise = False
    #: The ratio r of free interval lengths within [h/r, r h] of the mesh given, or None for a fixed mesh (only
    #: contact-implicit collocation frees them).
    free_steps = None

    def warm_start(self, guess):
        """The user's ``guess`` (Trajectory, SolveResult, path or None) as :meth:`build` takes it."""
        return as_trajectory(guess)

    @abstractmethod
    def build(self, guess=None) -> NLP:
        """The NLP, its variables' guesses filled from ``guess`` (from :meth:`warm_start`) or the problem's rules."""

    @abstractmethod
    def trajectory(self, nlp, w, meta=None) -> Trajectory:
        """The Trajectory of a numeric decision vector ``w`` of ``nlp``; ``meta`` is added to its metadata."""

    def result_metadata(self) -> dict:
        """Metadata the result's trajectory records besides status, success, objective and iterations."""
        return {}

    def slacks(self, nlp, w) -> dict:
        """Largest magnitude of each slack block in ``w`` (none by default)."""
        return {}

    def cost_parts(self, nlp, w) -> list:
        """Sentences naming each cost term's non-finite parts at ``w`` (none by default: where it cannot tell)."""
        return []

    def result(self, nlp, w, trajectory, **fields) -> SolveResult:
        """The SolveResult of a finished run; ``fields`` are the common SolveResult fields."""
        return SolveResult(trajectory=trajectory, **fields)
