"""Multi-start: one problem solved from several perturbed guesses, its distinct local optima reported.

A non-convex optimal control problem can have several local optima, and IPOPT
finds the one its guess leads to: the tutorial's pendulum swing-up reaches
J = 68.13 from the straight-line guess, and 65.48 when the pendulum first swings
back.  :func:`solve_starts` solves the problem from ``starts`` guesses — start 0
is the problem's own guess, start ``k ≥ 1`` that guess perturbed with the random
generator ``numpy.random.default_rng([seed, k])`` (so a start does not depend on
how many others there are) — and groups the converged results into distinct
local optima.

Perturbation of each state, control and static parameter ``y`` with guess
``ȳ(τ)`` on the grid ``τ ∈ [0, 1]``::

    y(τ) = clip(ȳ(τ) + S · σ · (a₀ + Σ_{j=1..3} a_j sin(jπτ) / j),  lower, upper),   a_j ~ N(0, 1)

with ``σ = SPREAD`` and ``S`` the variable's scale: the width of its bounds when
both are finite, else ``max(1, max|ȳ|, max ȳ − min ȳ)``.  States get no constant
term ``a₀`` (the sines vanish at both ends, where states are usually fixed); a
free final time is multiplied by ``exp(σ a)``, clipped to its bounds.

Two converged results are the same optimum when their objectives agree to
``OBJECTIVE_RTOL`` (relative) **and** their states agree at every grid point to
``STATE_RTOL`` times ``max(1, max |state|)``: mirror-image motions with equal
cost are two optima.

The starts run as tasks on Dask (the local cluster sweeps use, :mod:`colloc.pipeline.cluster`, or a
running scheduler) when the problem was loaded from a script
(:func:`colloc.pipeline.script.load_problem`, as ``colloc solve`` does): each worker
rebuilds it from the script (so changes made to the Problem after loading it
are not seen there).  A problem built in the caller's process, or a
machine without Dask, solves them one after another in this process.
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
import time as _time
import warnings
from typing import NamedTuple

import numpy as np

from ..errors import OptionError
from .options import SolveOptions

#: Perturbation amplitude, as a fraction of each variable's scale.
SPREAD = 0.3
#: Relative tolerance on objectives for two results to be one optimum.
OBJECTIVE_RTOL = 1e-6
#: Tolerance on states (times max(1, max |state|)) for two results to be one optimum.
STATE_RTOL = 1e-3

_said_serial = False


def perturbed_guesses(problem, starts, seed=0, options: SolveOptions | None = None, **keywords):
    """``starts`` guess trajectories: the problem's own guess, then ``starts − 1`` perturbations of it.

    Parameters
    ----------
    problem : Problem
        A single-phase problem.
    starts : int
    seed : int
        Start ``k`` uses ``numpy.random.default_rng([seed, k])``.
    options : SolveOptions, optional
        As :func:`colloc.solve` (its keywords update them); the guesses live on that grid, around ``guess``.

    Returns
    -------
    list of Trajectory
        On the solve's grid, states and controls within their bounds.
    """
    from .driver import transcription

    o = SolveOptions.of(options, **keywords)
    tr = transcription(problem, o)
    nlp = tr.build(tr.warm_start(o.guess))
    layout = nlp.layout
    tau = nlp.grid.tau if nlp.grid is not None else np.asarray(nlp.mesh, dtype=float)  # midpoint-vi: mesh points only
    base = layout.unpack(layout.vector("guess"))
    out = [tr.trajectory(nlp, layout.pack(base), dict(status="guess", success=False))]
    for k in range(1, starts):
        rng = np.random.default_rng([seed, k])
        values = dict(base)
        for name in ("x", "u", "p"):
            if name in layout:
                values[name] = _perturb(layout[name], base[name], tau if layout[name].num_cols == tau.size else np.zeros(1),
                                        rng, constant=name != "x")
        if "tf" in layout:
            b = layout["tf"]
            values["tf"] = np.clip(base["tf"] * math.exp(SPREAD * rng.standard_normal()), b.lower, b.upper)
        out.append(tr.trajectory(nlp, layout.pack(values), dict(status="guess", success=False)))
    return out


def _perturb(block, guess, tau, rng, constant):
    """The block's guess plus one smooth random curve per row (module docstring), clipped into its bounds."""
    out = np.array(guess, dtype=float)
    for i in range(out.shape[0]):
        lo, hi = block.lower[i], block.upper[i]
        width = np.max(hi - lo) if np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) else math.inf
        scale = width if math.isfinite(width) and width > 0 else max(1.0, np.max(np.abs(out[i])), np.ptp(out[i]))
        a = rng.standard_normal(4)
        curve = (a[0] if constant else 0.0) + sum(a[j] * np.sin(j * np.pi * tau) / j for j in (1, 2, 3))
        out[i] = np.clip(out[i] + SPREAD * scale * curve, lo, hi)
    return out


def distinct_optima(results, objective_rtol=OBJECTIVE_RTOL, state_rtol=STATE_RTOL):
    """Group converged results into local optima, best first.

    Parameters
    ----------
    results : list of (int, SolveResult)
        Start index and its result; unconverged ones are left out.

    Returns
    -------
    list of dict
        ``objective``, ``count`` (starts that reached it), ``starts`` (their
        indices), ``result`` (the first start's SolveResult).
    """
    groups = []
    for k, res in sorted(((k, r) for k, r in results if r.success), key=lambda kr: (kr[1].objective, kr[0])):
        for g in groups:
            if _same(g["result"], res, objective_rtol, state_rtol):
                g["count"] += 1
                g["starts"].append(k)
                break
        else:
            groups.append(dict(objective=float(res.objective), count=1, starts=[k], result=res))
    return groups


def _same(a, b, objective_rtol, state_rtol) -> bool:
    if abs(a.objective - b.objective) > objective_rtol * max(1.0, abs(a.objective), abs(b.objective)):
        return False
    ta, tb = a.trajectory, b.trajectory
    if ta.time.shape != tb.time.shape or np.max(np.abs(ta.time - tb.time)) > state_rtol * max(1.0, abs(ta.time[-1])):
        return False
    for name in ta.of_kind("state"):
        x, y = ta[name], tb[name]
        if np.max(np.abs(x - y)) > state_rtol * max(1.0, np.max(np.abs(x)), np.max(np.abs(y))):
            return False
    return True


def solve_starts(problem, options: SolveOptions | None = None, **keywords):
    """Solve ``problem`` from ``options.starts`` guesses; the best converged result, with every optimum found.

    Parameters
    ----------
    problem : Problem
    options : SolveOptions, optional
        As :func:`colloc.solve` (its keywords update them): ``starts`` guesses (at least 1; start 0 is the
        unperturbed guess), ``seed`` of the perturbations (module docstring; the same seed gives the same
        guesses), ``scheduler`` (a running Dask scheduler, or a ``dask.distributed.Client``; default: a local
        cluster of ``workers`` processes, 2), ``progress`` (a callable, called with ``(start,
        result_or_message)`` as each start finishes); the rest is shared by every start.

    Returns
    -------
    SolveResult
        The best converged start (the lowest objective; start 0's result if none
        converged), with ``optima`` listing each distinct local optimum
        (``objective``, ``count``, ``starts``, ``trajectory``) and ``starts`` the
        outcome of every start.
    """
    from .multiphase_problem import MultiPhaseProblem

    o = SolveOptions.of(options, **keywords)
    if o.starts is None:
        o = o.replace(starts=1)
    if isinstance(problem, MultiPhaseProblem):
        raise OptionError("`starts` takes a single-phase colloc.Problem; give a multi-phase problem its guesses phase by phase.")
    source = getattr(problem, "source", None)  # (script, params) of a problem loaded from a script
    cluster = "scheduler" if o.scheduler is not None else "workers" if o.workers is not None else None
    if cluster and source is None:
        raise OptionError(f"Dask workers rebuild the problem from its script: load it with colloc.pipeline.script.load_problem(path, params) "
                          f"to use `{cluster}`, or leave `{cluster}` out to solve the starts in this process.")
    began = _time.perf_counter()
    guesses = perturbed_guesses(problem, o.starts, o.seed, o)
    progress = o.progress or None
    shared = o.replace(starts=None, seed=0, scheduler=None, workers=None, progress=None, guess=None)
    if source is not None and o.starts > 1 and (_dask_available() or cluster):  # a cluster asked for without Dask: say so
        outcomes = _on_dask(source, guesses, shared, o.scheduler, o.workers, progress)
    else:
        if source is not None and o.starts > 1:
            _say_serial("Dask is not installed, so the starts run one after another in this process "
                        '(python -m pip install "colloc[sweep]" runs them in parallel).')
        outcomes = _in_process(problem, guesses, shared, progress)
    return _combine(outcomes, o.seed, _time.perf_counter() - began)


def _dask_available() -> bool:
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        return False
    return True


def _say_serial(message):
    global _said_serial
    if not _said_serial:
        warnings.warn(message, stacklevel=4)
        _said_serial = True


class Failed(NamedTuple):
    """A start without a result: ``status`` is ``error`` (its build or solve raised), ``lost`` (its worker
    process died: killed, out of memory, a crash) or ``interrupted`` (Ctrl-C or SIGTERM before it finished)."""

    status: str
    message: str


def _in_process(problem, guesses, shared, progress):
    from .driver import run
    from ..results.trajectory import Status

    outcomes = []
    for k, g in enumerate(guesses):
        res = run(problem, shared, guess=g)  # Ctrl-C ends this start's IPOPT run with its iterate
        outcomes.append((k, res))
        if progress is not None:
            progress(k, res)
        if res.status is Status.INTERRUPTED:  # and the starts after it are not begun
            outcomes += [(j, Failed("interrupted", "not started: the multi-start was interrupted")) for j in range(k + 1, len(guesses))]
            break
    return outcomes


def solve_start(script, params, guess, options: SolveOptions) -> object:
    """One start on a Dask worker: rebuild the problem from ``script`` and solve it from ``guess``.

    Returns the SolveResult (without IPOPT's statistics), or :class:`Failed`
    with the error message of a start whose build or solve raised.
    """
    from .driver import run
    from ..errors import CollocError
    from .script import load_problem

    try:
        _, problem = load_problem(script, params)
        res = run(problem, options, guess=guess)
    except Exception as e:  # noqa: BLE001  one bad start is an outcome, not the end of the others
        return Failed("error", str(e) if isinstance(e, CollocError) else f"{type(e).__name__}: {e}")
    return dataclasses.replace(res, stats={})


def _on_dask(source, guesses, shared, scheduler, workers, progress):
    """Every start as one task on the sweep's cluster (:mod:`colloc.pipeline.cluster`)."""
    from dask.distributed import as_completed

    from .cluster import check_cluster, connect, dask_client_class
    from .sweep_runner import close_quietly, sigterm_as_interrupt

    script, params = source
    Client = dask_client_class()
    workers = check_cluster(workers, scheduler)
    outcomes, owned, client, futures = [], [], None, {}
    with sigterm_as_interrupt():
        try:
            client, owned = connect(Client, workers, scheduler)
            for k, g in enumerate(guesses):  # one by one: a Ctrl-C while submitting knows what was submitted
                futures[client.submit(solve_start, script, params, g, shared, pure=False)] = k
            for f in as_completed(list(futures)):
                k = futures.pop(f)
                try:
                    res = f.result()
                except Exception as e:  # noqa: BLE001  the worker died (KilledWorker) or the task failed
                    res = _lost(e)
                outcomes.append((k, res))
                if progress is not None:
                    progress(k, res)
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: keep what finished, the rest is interrupted
            if client is None:  # nothing was started
                raise
            if futures:
                with contextlib.suppress(Exception):  # stop the workers' solves rather than let them finish unseen
                    client.cancel(list(futures))
            done = {k for k, _ in outcomes}
            outcomes += [(k, Failed("interrupted", "the multi-start was interrupted before this start finished"))
                         for k in range(len(guesses)) if k not in done]
        finally:
            for c in owned:
                close_quietly(c)
    return sorted(outcomes, key=lambda kr: kr[0])


def _lost(error) -> Failed:
    """The outcome of a start whose task raised on the cluster: ``lost`` when its worker process died
    (killed, out of memory, a crash in native code), ``error`` otherwise."""
    name = type(error).__name__
    if name in ("KilledWorker", "CommClosedError", "CancelledError", "FutureCancelledError"):
        return Failed("lost", f"its worker process died before it finished (killed, out of memory or a crash; {name})")
    return Failed("error", f"the worker solving this start failed: {name}: {error}")


def _combine(outcomes, seed, seconds):
    """The best converged result, carrying every optimum and every start's outcome."""
    solved = [(k, r) for k, r in outcomes if not isinstance(r, Failed)]
    if not solved:
        if not outcomes or any(r.status == "interrupted" for _, r in outcomes):
            raise KeyboardInterrupt
        raise OptionError(f"No start could be solved; the first said: {outcomes[0][1].message}")
    optima = distinct_optima(solved)
    for o in optima:
        o["starts"].sort()
    best = optima[0]["result"] if optima else solved[0][1]
    record = [dict(start=k, status=r.status, objective=math.nan, message=r.message) if isinstance(r, Failed)
              else dict(start=k, status=r.status.value, objective=float(r.objective), message=r.message) for k, r in outcomes]
    traj = best.trajectory
    traj.metadata["multistart"] = dict(starts=len(outcomes), seed=seed, seconds=round(seconds, 3),
                                       optima=[dict(objective=o["objective"], count=o["count"], starts=o["starts"]) for o in optima])
    public = [dict(objective=o["objective"], count=o["count"], starts=o["starts"], trajectory=o["result"].trajectory) for o in optima]
    return dataclasses.replace(best, optima=public, starts=record)


__all__ = ["solve_starts", "perturbed_guesses", "distinct_optima", "solve_start", "Failed", "SPREAD", "OBJECTIVE_RTOL", "STATE_RTOL"]
