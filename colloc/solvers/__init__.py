"""Solver backends: each turns a built NLP into an outcome (running, option checks, status mapping, interrupts).

A backend is a class registered by name in :data:`BACKENDS` with ``name``,
``capabilities`` (a set of :data:`CAPABILITIES`: what it takes beyond a
stage-wise single-phase collocation NLP solved without looking at its
iterations) and four static methods:

* ``options(given, verbose) -> dict`` checks the user's solver options (raising
  :class:`colloc.OptionError` before anything is built) and merges defaults;
* ``refusal(transcription) -> str or None``: why the solver cannot take a
  problem its capabilities admit (e.g. FATROP and a free final time), or None;
  :func:`check` reads the capabilities and this, in one place, before anything
  is built (:class:`colloc.OptionError`, one sentence);
* ``run(nlp, options, expand, progress, checkpoint, to_trajectory, start)``
  solves, interruptibly, and returns ``(solution, stats, build_seconds,
  solve_seconds)``;
* ``outcome(nlp, solution, stats, terms)`` maps the solver's status to a
  :class:`colloc.Status` with its hint.

``ipopt`` is the default; ``fatrop`` solves the stage-wise form of a
single-phase collocation NLP (:mod:`.stages`).  Nothing in a backend imports
the driver or a transcription back.
"""
from __future__ import annotations

from ..errors import OptionError, did_you_mean
from .fatrop import FatropBackend
from .ipopt import IpoptBackend

BACKENDS = {IpoptBackend.name: IpoptBackend, FatropBackend.name: FatropBackend}
#: What a backend may declare it takes: NLPs without a stage structure (multi-phase, midpoint-vi, contact-implicit:
#: ``Transcription.stagewise`` false), and a look at every iteration (a progress callable, checkpoints).
CAPABILITIES = {"coupled": "single-phase collocation only (not multi-phase problems or midpoint-vi)",
                "iterations": "reports no iterations while it runs, so it takes no `checkpoint` or progress callable"}


def check(solver, transcription, progress=None, checkpoint=None) -> None:
    """Refuse, before anything is built, what backend ``solver`` does not declare it takes, or its
    ``refusal`` of the problem: one sentence naming the reason."""
    if (checkpoint is not None or callable(progress)) and "iterations" not in solver.capabilities:
        raise OptionError(f"backend='{solver.name}' {CAPABILITIES['iterations']}; use backend='ipopt' for those.")
    why = f"it takes {CAPABILITIES['coupled']}" if not transcription.stagewise and "coupled" not in solver.capabilities else None
    why = why or solver.refusal(transcription)
    if why:
        raise OptionError(f"backend='{solver.name}' cannot solve this problem: {why}; use backend='ipopt' (the default).")


def get_backend(name):
    """The backend class registered as ``name``; an unknown name raises :class:`colloc.OptionError`."""
    if not isinstance(name, str) or name not in BACKENDS:
        raise OptionError(f"Unknown backend `{name}`.{did_you_mean(str(name), BACKENDS)} Known: {', '.join(BACKENDS)}.")
    return BACKENDS[name]
