"""``solve()``: the public entry point — one run of the pipeline (:mod:`colloc.driver`) or adaptive refinement.

A solve never raises because IPOPT did not converge: the result is flagged,
its message says what to try, and the last iterate is a full Trajectory.
Malformed problems and options raise before anything is built.
"""
from __future__ import annotations

from .backends.ipopt import DEFAULT_IPOPT, ipopt_options  # noqa: F401 - colloc's IPOPT defaults, re-exported
from .contact_implicit import solve_contact
from .driver import build_nlp, run  # noqa: F401 - build_nlp re-exported
from .errors import OptionError, did_you_mean
from .refine import solve_adaptive
from .trajectory import SolveResult


def solve(problem, scheme="hermite-simpson", intervals=None, mesh=None, guess=None, ipopt=None,
          verbose=False, expand=True, progress=None, checkpoint=None, refine=None, starts=None, seed=0, scheduler=None,
          workers=None, **options) -> SolveResult:
    """Solve ``problem`` by direct collocation with IPOPT.

    Parameters
    ----------
    problem : Problem or MultiPhaseProblem
    scheme : str
        ``"trapezoidal"``, ``"hermite-simpson"`` (default), ``"radau-d"``,
        ``"legendre-gauss-d"`` or ``"midpoint-vi"`` (a multi-phase problem:
        the default of phases that set none).
    intervals : int, optional
        Number of uniform mesh intervals (default 50).
    mesh : sequence of float, optional
        Normalised mesh points ``0 = τ₀ < … < τ_n = 1`` (non-uniform meshes).
    guess : Trajectory, SolveResult or path, optional
        Warm start, resampled onto the new grid with its own interpolant.
    ipopt : dict, optional
        IPOPT options, e.g. ``{"tol": 1e-10, "max_iter": 500}``.
    verbose : bool
        Print IPOPT's own log.
    expand : bool
        Expand the NLP to CasADi SX before solving (faster iterations).
    progress : bool or callable, optional
        ``True`` prints one compact line per IPOPT iteration (iteration,
        objective, primal infeasibility = largest constraint violation, dual
        infeasibility = largest entry of the Lagrangian gradient, step = largest
        change of a variable); a callable receives a dict with those keys.  With
        ``starts``, a callable instead receives ``(start, result)`` as each start
        finishes (``result`` a SolveResult or :class:`colloc.multistart.Failed`).
    refine : dict, optional
        Adaptive mesh refinement (:func:`colloc.refine.solve_adaptive`):
        ``tolerance`` (relative local error, default 1e-6), ``max_iterations``,
        ``max_intervals``, ``max_pieces``.  The result then records every
        mesh iteration in ``result.refinement``.
    checkpoint : (path, every), optional
        Write the current iterate as a Trajectory to ``path`` every ``every``
        iterations (atomically).
    backend : str
        Solver backend by name, ``"ipopt"`` (default; see
        :data:`colloc.backends.BACKENDS`).  ``ipopt=`` holds its options.

    starts : int, optional
        Multi-start (:mod:`colloc.multistart`): solve from ``starts`` guesses,
        the problem's own and ``starts − 1`` seeded perturbations of it, and
        return the best converged result; ``result.optima`` lists each distinct
        local optimum found (objective, how many starts reached it, its
        trajectory).  Runs on Dask for a problem loaded from a script.
    seed : int
        Seed of the multi-start perturbations (default 0: the same guesses every run).
    scheduler : str, optional
        Multi-start on a running Dask scheduler (``tcp://host:8786``) instead of a local cluster.
    workers : int, optional
        Multi-start: processes of the local Dask cluster (default 2).

    Ctrl-C (SIGINT) or SIGTERM during the solve stops IPOPT after the current
    iteration; the result is flagged ``Status.INTERRUPTED`` and holds the last
    iterate.
    **options
        Transcription options: ``mode`` (``"default"``, ``"implicit"``,
        ``"explicit"``), ``constraint_method`` (``"bordalba2023"``,
        ``"posa2016"``), ``control_interpolation`` (``"free"``, ``"linear"``),
        ``derivative_bounds``, ``multiplier_bounds`` …
        ``contact="implicit"``: contact-implicit collocation of the contacts the model declares
        (:mod:`colloc.contact_implicit`; options ``relaxation``, ``complementarity_tolerance``,
        ``relaxation_factor``).

    Returns
    -------
    SolveResult
    """
    if starts is not None:
        from .multistart import solve_starts

        return solve_starts(problem, starts, seed, scheduler, workers, progress=progress if callable(progress) else None,
                            scheme=scheme, intervals=intervals, mesh=mesh, guess=guess, ipopt=ipopt, verbose=verbose,
                            expand=expand, checkpoint=checkpoint, refine=refine, **options)
    if scheduler is not None or workers is not None:
        raise OptionError("`scheduler` and `workers` go with `starts` (multi-start); a single solve runs in this process.")
    if options.get("contact") is not None:
        if refine is not None:
            raise OptionError("`refine` does not combine with contact='implicit' yet; solve on a finer mesh (intervals=...) instead.")
        return solve_contact(problem, scheme, intervals, mesh, guess, ipopt, verbose, expand, progress, checkpoint, **options)
    if refine is not None:
        if not isinstance(refine, dict):
            raise OptionError(f"`refine` must be a dict such as {{'tolerance': 1e-6}}; got {type(refine).__name__}.")
        allowed = ("tolerance", "max_iterations", "max_intervals", "max_pieces")
        for key in refine:
            if key not in allowed:
                raise OptionError(f"Unknown refinement option `{key}`.{did_you_mean(key, allowed)} Known: {', '.join(allowed)}.")
        return solve_adaptive(problem, scheme, 50 if intervals is None and mesh is None else intervals, mesh=mesh, guess=guess,
                              ipopt=ipopt, verbose=verbose, expand=expand, progress=progress, checkpoint=checkpoint,
                              **options, **refine)
    return run(problem, scheme, intervals, mesh, guess, ipopt, verbose, expand, progress, checkpoint, **options)
