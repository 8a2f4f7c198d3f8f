"""Free steps of contact-implicit collocation: the interval fractions as variables (Posa et al. 2014's variable steps).

With ``free_steps`` the interval fractions ``σ_i`` are variables (layout block ``STEPS``, ``Σσ = 1``), each within
``[σ̄_i/r, r σ̄_i]`` of the mesh given (:func:`step_ratio` checks ``r``), pulled weakly towards it (``STEP_PULL``);
:func:`solved_grid` is the grid a solution's fractions make (:mod:`colloc.transcription.contacts`).
"""
from __future__ import annotations

import numpy as np

from ..discretization.grid import Grid
from ..errors import OptionError

#: Layout block of the interval fractions when the steps are free.
STEPS = "steps"
#: Default ratio bounding free steps: each interval stays within [h̄/4, 4h̄] of its length on the mesh given.
STEP_RATIO = 4.0
#: Weight of the pull of free steps towards the mesh given, Σ (σ_i/σ̄_i − 1)² (cost term ``steps``): without it
#: the lengths of intervals in flight or at rest are left free and the ball's homotopy ended in restoration failure
#: at ε = 1e-6; with 1e-6 four of 20 random starts of the block (T = 2, 20 intervals) still did at ε = 1e-5.
STEP_PULL = 1e-5


def step_ratio(free_steps):
    """``free_steps`` checked: None for a fixed mesh, else the ratio ``r > 1`` bounding each interval to ``[h̄/r, r h̄]``."""
    if free_steps is False or free_steps is None:
        return None
    if free_steps is True:
        return STEP_RATIO
    if isinstance(free_steps, (int, float)) and not isinstance(free_steps, bool) and 1 < free_steps < np.inf:
        return float(free_steps)
    raise OptionError(f"`free_steps` must be True, False or a ratio r > 1 bounding each interval to [h/r, r h]; got {free_steps!r}.")


def solved_grid(nlp, values):
    """The grid of a decision vector: the NLP's, or with free steps the mesh its interval fractions make."""
    if STEPS not in values:
        return nlp.grid
    fractions = np.asarray(values[STEPS], dtype=float).ravel()
    mesh = np.concatenate([[0.0], np.cumsum(fractions)])
    return Grid(mesh / mesh[-1], nlp.grid.scheme)
