"""``solve()``: the public entry point — one run of the pipeline (:mod:`colloc.pipeline.driver`) or adaptive refinement.

A solve never raises because IPOPT did not converge: the result is flagged,
its message says what to try, and the last iterate is a full Trajectory.
Malformed problems and options raise before anything is built.
"""
from __future__ import annotations

from ..solvers.ipopt import DEFAULT_IPOPT, ipopt_options  # noqa: F401 - colloc's IPOPT defaults, re-exported
from .contact_implicit import solve_contact
from .driver import build_nlp, run  # noqa: F401 - build_nlp re-exported
from .options import SolveOptions
from .refine import solve_adaptive
from .script import recordable
from ..results.trajectory import SolveResult


def solve(problem, scheme="hermite-simpson", intervals=None, mesh=None, guess=None, ipopt=None,
          verbose=False, expand=False, progress=None, checkpoint=None, refine=None, backend="ipopt", fatrop=None,
          starts=None, seed=0, scheduler=None, workers=None, **options) -> SolveResult:
    """Solve ``problem`` by direct collocation with IPOPT (or FATROP).

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
        ``False`` (default): the NLP is an MX graph that calls one SX function
        per grid point through ``map``, as a careful hand-written CasADi NLP
        is; IPOPT's set-up stays cheap at every size.  ``True``: expand the
        whole NLP to SX first; each iteration's derivatives are then 2–4×
        cheaper, but the set-up grows by more than the whole solve of a short
        problem; it pays only for long solves whose iterations are mostly
        derivative evaluation (about 60 iterations for the cart-pole at 1600
        intervals and for a 7-joint arm; docs/performance.md).
    progress : bool or callable, optional
        ``True`` prints one compact line per IPOPT iteration (IPOPT's own
        iteration number, ``r`` after it for a restoration step as in IPOPT's
        log, objective, primal infeasibility = largest constraint violation, dual
        infeasibility = largest entry of the Lagrangian gradient, step = largest
        change of a variable); a callable receives a dict with those keys
        (``iteration``, ``restoration``, ``objective``, ``violation``, ``dual``, ``step``).  With
        ``starts``, a callable instead receives ``(start, result)`` as each start
        finishes (``result`` a SolveResult or :class:`colloc.pipeline.multistart.Failed`).
    refine : dict, optional
        Adaptive mesh refinement (:func:`colloc.pipeline.refine.solve_adaptive`):
        ``tolerance`` (relative local error, default 1e-6), ``max_iterations``,
        ``max_intervals``, ``max_pieces``, ``objective_tolerance`` (relative
        change of the objective between the last two meshes that ends it,
        default 1e-4).  The result then records every
        mesh iteration in ``result.refinement``.
    checkpoint : (path, every), optional
        Write the current iterate as a Trajectory to ``path`` every ``every``
        iterations (atomically).
    backend : str
        Solver backend by name (:data:`colloc.solvers.BACKENDS`): ``"ipopt"``
        (default; options in ``ipopt=``) or ``"fatrop"`` (a Riccati-based
        interior-point solver on the stage-wise form of single-phase
        collocation NLPs with a fixed final time and no parameters; options in
        ``fatrop=``, e.g. ``{"max_iter": 500}``; see :mod:`colloc.solvers.fatrop`).
    fatrop : dict, optional
        FATROP options (with ``backend="fatrop"``).

    starts : int, optional
        Multi-start (:mod:`colloc.pipeline.multistart`): solve from ``starts`` guesses,
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

    **options
        ``accuracy`` (float or False): the relative objective error the result's accuracy record accepts
        (default 1e-4, :mod:`colloc.pipeline.accuracy`); False: no estimate.
        Transcription options: ``mode`` (``"default"``, ``"implicit"``,
        ``"explicit"``), ``constraint_method`` (``"bordalba2023"``,
        ``"posa2016"``), ``control_interpolation`` (``"free"``, ``"linear"``),
        ``derivative_bounds``, ``multiplier_bounds`` …
        ``compile`` (``"auto"`` default, ``True``, ``False``): run the per-point functions of the
        derivatives compiled to C by the system's compiler, cached on disk (:mod:`colloc.transcription.compilation`;
        ``"auto"`` compiles where a typical solve saves more than compiling costs, docs/performance.md).
        ``contact="implicit"``: contact-implicit collocation of the contacts the model declares
        (:mod:`colloc.pipeline.contact_implicit`; options ``relaxation``, ``complementarity_tolerance``,
        ``relaxation_factor``, ``impacts``, and ``free_steps``: by default (or True, or a ratio r > 1)
        the interval lengths are variables within [h/r, r h] of the mesh given, default r = 4, so that
        switches and impacts fall on mesh points — collocation schemes with two intervals or more;
        ``free_steps=False`` keeps the mesh given; ``own_ends=True`` closes the intervals ending where an impulse
        may fall on their own end accelerations on a fixed mesh too, as free steps do; ``contact_forces``
        ``"interval"`` (one force per interval) or ``"collocation"`` (at every collocation point, for passive
        contacts whose force follows the motion)); with
        ``scheme="midpoint-vi"`` the contact-implicit discrete Euler–Lagrange equations
        (:mod:`colloc.transcription.contact_vi`, plastic impacts).

    Returns
    -------
    SolveResult

    Notes
    -----
    The keywords are gathered once into a :class:`colloc.pipeline.options.SolveOptions` (each option's one
    default; combinations no pipeline can honour refused by name) and handed to the pipeline they select
    (:func:`run_pipeline`).

    Ctrl-C (SIGINT) or SIGTERM during the solve stops IPOPT after the current
    iteration; the result is flagged ``Status.INTERRUPTED`` and holds the last
    iterate.
    """
    return run_pipeline(problem, SolveOptions.of(
        scheme=scheme, intervals=intervals, mesh=mesh, guess=guess, ipopt=ipopt, verbose=verbose, expand=expand,
        progress=progress, checkpoint=checkpoint, refine=refine, backend=backend, fatrop=fatrop, starts=starts, seed=seed,
        scheduler=scheduler, workers=workers, **options))


def run_pipeline(problem, options: SolveOptions) -> SolveResult:
    """The pipeline ``options`` select, given ``options`` by keyword: multi-start, the contact homotopy, adaptive
    refinement or one run (each refuses by name what it cannot take)."""
    if options.starts is not None:
        from .multistart import solve_starts

        result = solve_starts(problem, options=options)
    elif options.contact is not None:
        result = solve_contact(problem, options=options)
    elif options.refine is not None:
        result = solve_adaptive(problem, options=options)
    else:
        result = run(problem, options=options)
    params = build_params(problem)
    metadata = getattr(getattr(result, "trajectory", None), "metadata", None)
    if params and isinstance(metadata, dict):  # what `colloc verify` re-builds the problem with
        metadata.setdefault("params", params)
    return result


def build_params(problem) -> dict:
    """The keyword arguments of the script's ``build()`` that made ``problem``, where they are known: those the
    loader passed (``problem.source``, :func:`colloc.pipeline.script.build_problem`) and those the build function
    records itself in ``problem.build_params`` (a function that calls ``build(**kw)`` for its caller); a written
    file records them as its ``params``, so that ``colloc verify`` re-builds the same problem."""
    source = getattr(problem, "source", None)
    given = dict(source[1]) if isinstance(source, tuple) and len(source) == 2 and isinstance(source[1], dict) else {}
    own = getattr(problem, "build_params", None)
    merged = {**given, **(own if isinstance(own, dict) else {})}
    return recordable(merged)
