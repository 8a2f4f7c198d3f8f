"""``SolveOptions``: every option of a solve in one frozen object, each with its one default.

:func:`colloc.solve` and ``colloc solve`` build one (:meth:`SolveOptions.of`, from the keywords of
:func:`colloc.solve`) and hand it by keyword to the pipeline it selects
(:func:`colloc.pipeline.solve.run_pipeline`): one run (:func:`colloc.pipeline.driver.run`), the contact
homotopy, adaptive refinement or multi-start; sweep points rebuild it from the keywords they are sent.  A pipeline reads
each option where it is used.  Combinations no pipeline can honour are refused when the object is made
(``__post_init__``), before anything is built, one sentence naming the option; a pipeline refuses by name the
options it cannot take (:meth:`SolveOptions.refuse`).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import OptionError, did_you_mean
from ..solvers import BACKENDS, get_backend

#: The contact homotopy's defaults (:mod:`colloc.pipeline.contact_implicit`): first ε, last ε, factor between solves.
RELAXATION, TOLERANCE, FACTOR = 1e-1, 1e-8, 0.1
#: Mesh refinement's options (``refine=`` of :func:`colloc.solve`) and their defaults
#: (:func:`colloc.pipeline.refine.solve_adaptive`).
REFINEMENT = dict(tolerance=1e-6, max_iterations=10, max_intervals=2000, max_pieces=8, objective_tolerance=1e-4)


@dataclass(frozen=True)
class SolveOptions:
    """The options of one call of :func:`colloc.solve` (its docstring says what each means).

    ``transcription`` holds the transcription's own options (``mode``, ``constraint_method``, ``contact``,
    ``free_steps``, ``forcing`` …), which the transcription checks and refuses by name when it is made.
    ``relaxation``, ``complementarity_tolerance`` and ``relaxation_factor`` are the contact homotopy's
    (None: :data:`RELAXATION`, :data:`TOLERANCE`, :data:`FACTOR`).
    """

    scheme: str = "hermite-simpson"
    intervals: int | None = None  # None: the mesh given, or make_mesh's default (discretization.mesh.DEFAULT_INTERVALS)
    mesh: object = None
    guess: object = None
    backend: str = "ipopt"
    ipopt: dict | None = None
    fatrop: dict | None = None
    verbose: bool = False
    expand: bool = False
    progress: object = None
    checkpoint: tuple | None = None
    accuracy: object = None
    refine: dict | None = None
    starts: int | None = None
    seed: int = 0
    scheduler: object = None
    workers: int | None = None
    relaxation: float | None = None
    complementarity_tolerance: float | None = None
    relaxation_factor: float | None = None
    transcription: dict = field(default_factory=dict)

    @classmethod
    def of(cls, options=None, **keywords) -> "SolveOptions":
        """``options`` (default: every default) with the keywords of :func:`colloc.solve` applied; keywords that
        are no field of this class are transcription options."""
        names = {f.name for f in dataclasses.fields(cls)} - {"transcription"}
        own = {k: v for k, v in keywords.items() if k in names}
        extra = {k: v for k, v in keywords.items() if k not in names}
        base = options if options is not None else cls()
        if not own and not extra:
            return base
        return dataclasses.replace(base, **own, transcription={**base.transcription, **extra})

    def __post_init__(self):
        solver = get_backend(self.backend)
        if self.contact is not None:
            self._check_contact(solver)
        for other in BACKENDS:
            if other != solver.name and getattr(self, other) is not None:
                raise OptionError(f"`{other}=` options do not apply to backend='{solver.name}'; pass them as {solver.name}={{...}}.")
        self._check_starts()
        if self.refine is not None:
            self.refinement()
        given = [n for n in ("relaxation", "complementarity_tolerance", "relaxation_factor") if getattr(self, n) is not None]
        if given and self.contact is None:
            raise OptionError(f"`{given[0]}` is an option of the contact homotopy; it goes with contact='implicit'.")

    def _check_contact(self, solver):
        if self.refine is not None:
            raise OptionError("`refine` does not combine with contact='implicit' yet; solve on a finer mesh (intervals=...) instead.")
        if self.starts is not None:
            raise OptionError("`starts` does not combine with contact='implicit' yet: each start would need its own homotopy.")
        if self.accuracy is not None:
            raise OptionError("`accuracy` does not apply to contact='implicit': its accuracy record bounds the smooth "
                              "intervals only and estimates no objective error.")
        if solver.name != "ipopt" or self.fatrop is not None:
            # the homotopy warm-starts IPOPT between relaxations (its bound push and barrier are set for it), and free
            # steps couple every stage through the horizon, which FATROP's stage-wise form cannot hold
            raise OptionError("contact='implicit' is solved with backend='ipopt' only (its relaxation homotopy warm-starts "
                              f"IPOPT between solves); got backend='{solver.name}'" + (" and `fatrop=` options." if self.fatrop is not None else "."))

    def _check_starts(self):
        if self.starts is None:
            if self.scheduler is not None or self.workers is not None:
                raise OptionError("`scheduler` and `workers` go with `starts` (multi-start); a single solve runs in this process.")
            if self.given("seed"):
                raise OptionError(f"`seed` ({self.seed!r}) seeds the perturbed guesses of `starts` (multi-start); a single solve has none.")
            return
        if isinstance(self.starts, bool) or not isinstance(self.starts, (int, np.integer)) or self.starts < 1:
            raise OptionError(f"`starts` must be a positive whole number; got {self.starts!r}.")
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise OptionError(f"`seed` must be a whole number ≥ 0; got {self.seed!r}.")
        for key in ("checkpoint", "refine"):
            if getattr(self, key) is not None:
                raise OptionError(f"`{key}` cannot be combined with `starts`; solve the best start again with it.")
        if self.progress is not None and self.progress is not False and not callable(self.progress):
            raise OptionError("With `starts`, `progress` is a callable receiving (start, result) as each start finishes; "
                              f"got {self.progress!r}.")

    @property
    def contact(self):
        """The ``contact`` transcription option (``"implicit"``) or None."""
        return self.transcription.get("contact")

    def replace(self, **changes) -> "SolveOptions":
        """A copy with ``changes`` (keywords of :func:`colloc.solve`) applied."""
        return SolveOptions.of(self, **changes)

    def given(self, name) -> bool:
        """Whether option ``name`` (a field, or a transcription option) differs from its default."""
        if name not in _DEFAULTS:
            return self.transcription.get(name) is not None
        value, default = getattr(self, name), _DEFAULTS[name]
        return value is not default and (default is None or type(value) is not type(default) or value != default)

    def refuse(self, names, why):
        """Refuse the first option of ``names`` that was given: ``why``, a sentence with ``{name}`` in it."""
        for name in names:
            if self.given(name):
                raise OptionError(why.format(name=name))

    def solver_options(self):
        """The chosen backend's own options (``ipopt=`` or ``fatrop=``)."""
        return getattr(self, self.backend)

    def homotopy(self) -> tuple:
        """The contact homotopy's first ε, last ε and factor."""
        return (RELAXATION if self.relaxation is None else self.relaxation,
                TOLERANCE if self.complementarity_tolerance is None else self.complementarity_tolerance,
                FACTOR if self.relaxation_factor is None else self.relaxation_factor)

    def refinement(self) -> dict:
        """Mesh refinement's options, :data:`REFINEMENT` updated by ``refine``, every one checked."""
        if not isinstance(self.refine, dict):
            raise OptionError(f"`refine` must be a dict such as {{'tolerance': 1e-6}}; got {type(self.refine).__name__}.")
        for key in self.refine:
            if key not in REFINEMENT:
                raise OptionError(f"Unknown refinement option `{key}`.{did_you_mean(key, REFINEMENT)} Known: {', '.join(REFINEMENT)}.")
        out = {**REFINEMENT, **self.refine}
        for name in ("tolerance", "objective_tolerance"):
            value = out[name]
            if isinstance(value, bool) or not (isinstance(value, (int, float)) and 0 < value < math.inf):
                raise OptionError(f"Refinement `{name}` must be a positive number; got {value!r}.")
        for name, low in (("max_iterations", 1), ("max_intervals", 1), ("max_pieces", 2)):
            value = out[name]
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise OptionError(f"Refinement `{name}` must be a whole number ≥ {low}; got {value!r}.")
        return out


_DEFAULTS = {f.name: f.default for f in dataclasses.fields(SolveOptions) if f.name != "transcription"}

__all__ = ["SolveOptions", "RELAXATION", "TOLERANCE", "FACTOR", "REFINEMENT"]
