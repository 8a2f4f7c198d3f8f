"""Meshes on normalised time ``tau ∈ [0, 1]`` (numpy only)."""
from __future__ import annotations

import numpy as np

from ..errors import OptionError

#: The most mesh intervals colloc builds: a million intervals is already a multi-gigabyte NLP (about 4 kB of
#: CasADi graph and IPOPT storage per grid point of a small model); more is a typo, refused before the
#: build instead of ending in a MemoryError.
MAX_INTERVALS = 1_000_000


#: Intervals of a uniform mesh when a solve gives neither ``intervals`` nor ``mesh`` (every pipeline's one default).
DEFAULT_INTERVALS = 50


def make_mesh(intervals=None, mesh=None) -> np.ndarray:
    """A uniform mesh of ``intervals`` intervals, or a checked user mesh.

    Parameters
    ----------
    intervals : int, optional
        Number of uniform intervals (≥ 1; default :data:`DEFAULT_INTERVALS`, 50).
    mesh : sequence of float, optional
        Normalised mesh points, strictly increasing from 0 to 1.  Give either
        ``intervals`` or ``mesh``, not both.
    """
    if mesh is not None and intervals is not None:
        raise OptionError(f"Give either `intervals` ({intervals!r}) or `mesh` (a mesh of its own intervals), not both.")
    if mesh is not None:
        try:
            m = np.asarray(mesh, dtype=float).ravel()
        except (TypeError, ValueError):
            raise OptionError(f"A mesh must be a sequence of numbers from 0 to 1; got {mesh!r}.") from None
        if m.size < 2:
            raise OptionError(f"A mesh needs at least two points (0 and 1); got {m.size}.")
        if not np.isfinite(m).all():
            raise OptionError("The mesh contains NaN or inf.")
        if m[0] != 0.0 or m[-1] != 1.0:
            raise OptionError(f"A mesh is normalised: it must start at 0 and end at 1; got {m[0]} … {m[-1]}.")
        if (np.diff(m) <= 0).any():
            k = int(np.argmax(np.diff(m) <= 0))
            raise OptionError(f"Mesh points must be strictly increasing; point {k + 1} ({m[k + 1]}) is not after point {k} ({m[k]}).")
        if m.size - 1 > MAX_INTERVALS:
            raise OptionError(f"The mesh has {m.size - 1} intervals; colloc builds at most {MAX_INTERVALS:,}.")
        return m
    if intervals is None:
        intervals = DEFAULT_INTERVALS
    if isinstance(intervals, bool) or not isinstance(intervals, (int, np.integer)):
        raise OptionError(f"`intervals` must be a whole number ≥ 1; got {intervals!r}.")
    if intervals < 1:
        raise OptionError(f"`intervals` must be at least 1; got {intervals}.")
    if intervals > MAX_INTERVALS:
        raise OptionError(f"`intervals` is {intervals:,}; colloc builds at most {MAX_INTERVALS:,} mesh intervals "
                          "(refine where it matters instead: refine={'tolerance': ...}).")
    return np.linspace(0.0, 1.0, int(intervals) + 1)
