"""Solver backends: each turns a built NLP into an outcome (running, option checks, status mapping, interrupts).

A backend is a class with three static methods, registered by name in
:data:`BACKENDS`:

* ``options(given, verbose) -> dict`` checks the user's solver options (raising
  :class:`colloc.OptionError` before anything is built) and merges defaults;
* ``check(transcription, progress, checkpoint)`` refuses, before anything is
  built, a problem or a request the solver cannot take
  (:class:`colloc.OptionError`, one sentence);
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


def get_backend(name):
    """The backend class registered as ``name``; an unknown name raises :class:`colloc.OptionError`."""
    if not isinstance(name, str) or name not in BACKENDS:
        raise OptionError(f"Unknown backend `{name}`.{did_you_mean(str(name), BACKENDS)} Known: {', '.join(BACKENDS)}.")
    return BACKENDS[name]
