"""Numeric inputs given in order or by name (initial states, parameters of a simulation), checked once.

Used by the simulators (:func:`colloc.simulate`, :func:`colloc.simulate_events`);
every mistake is an :class:`colloc.OptionError` naming the input.
"""
from __future__ import annotations

import numpy as np

from ..errors import OptionError, did_you_mean


def vector(x, n, what) -> np.ndarray:
    """``x`` as a finite float vector of ``n`` entries, or an error naming ``what``."""
    a = np.asarray(x, dtype=float).ravel()
    if a.size != n:
        raise OptionError(f"`{what}` must have {n} entries; got {a.size}.")
    if not np.isfinite(a).all():
        raise OptionError(f"`{what}` contains NaN or inf.")
    return a


def named_vector(x, names, what) -> np.ndarray:
    """Values of ``names`` in order, from a sequence or a dict keyed by name or by symbol."""
    if not isinstance(x, dict):
        return vector(x, len(names), what)
    vals = {}
    for k, val in x.items():
        name = k if isinstance(k, str) else k.name()
        if name not in names:
            raise OptionError(f"`{name}` in `{what}` is not one of {', '.join(names)}.{did_you_mean(name, names)}")
        vals[name] = float(val)
    missing = [n for n in names if n not in vals]
    if missing:
        raise OptionError(f"`{what}` needs a value for `{missing[0]}`.")
    return vector([vals[n] for n in names], len(names), what)
