"""Error types raised for malformed models, problems and options.

Every error is one sentence that names the offending thing; unknown names come
with the closest valid one ("Did you mean ...?").
"""
from __future__ import annotations

import difflib


class CollocError(Exception):
    """Base class of every error colloc raises on purpose."""


class ModelError(CollocError, ValueError):
    """A component or model is malformed (missing residual, undeclared symbol, ...)."""


class ProblemError(CollocError, ValueError):
    """A problem definition is malformed (bad bounds, unknown variable, ...)."""


class OptionError(CollocError, ValueError):
    """An option passed to ``solve`` or the CLI is unknown or has a bad value."""


class FileFormatError(CollocError, ValueError):
    """A trajectory file cannot be read or does not match the problem."""


class SimulationError(CollocError, RuntimeError):
    """The event-driven simulation cannot go on (too many events, integrator failure)."""


class LCPError(CollocError, RuntimeError):
    """An LCP has no solution that the method can find (Lemke ended on a ray)."""


class MissingDependencyError(CollocError, ImportError):
    """An optional dependency (Dask for sweeps) is not installed."""


class UserCodeError(ProblemError):
    """An exception raised by the user's own problem script; ``frames`` are its traceback lines in user files."""

    def __init__(self, message, frames=()):
        super().__init__(message)
        self.frames = list(frames)


class ConvergenceError(CollocError, RuntimeError):
    """Newton's method did not solve a DEL equation of a simulation step."""


class ContactParadoxError(SimulationError):
    """No contact force satisfies Signorini's and Coulomb's laws at a state (Painlevé's paradox)."""


def did_you_mean(name: str, choices) -> str:
    """Return `` Did you mean `x`?`` for the closest choice, or ``""``."""
    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1, cutoff=0.5)
    return f" Did you mean `{close[0]}`?" if close else ""
