"""Batch solves of one problem script over a grid of ``build`` parameters, on Dask.

Each grid point is one task: a worker process imports the problem script by
path, calls ``build(**params)``, solves, writes ``OUT/NAME_<i>.csv`` and sends
back a small summary row; the client collects the rows into
``OUT/NAME_sweep.csv``.  The cluster is a
``dask.distributed.LocalCluster(n_workers=N, threads_per_worker=1,
processes=True)`` (IPOPT and CasADi hold the GIL, so one process per solve),
or a running scheduler when an address is given.  On a multi-machine cluster
the script and the output folder must be at the same absolute path on every
worker (a shared file system).

With ``continuation`` the points run one after another as chained futures,
each warm-started from the previous point's trajectory (the last *successful*
one, so a failure does not spoil the rest), in serpentine grid order so that
consecutive points differ in one parameter by one step.

Dask is an optional dependency (``python -m pip install "colloc[sweep]"``);
it is imported only when a sweep runs, never by ``import colloc``.
"""
from __future__ import annotations

import contextlib
import csv
import io
import itertools
import json
import math
import os
import re
import time as _time
from pathlib import Path

import numpy as np

from ..pipeline.cluster import MissingDependencyError, check_cluster, connect, dask_client_class
from ..errors import CollocError, FileFormatError, OptionError
from ..results.files import remove_orphans, writable_folder
from .outputs import result_name, write_or_rescue
from ..pipeline.sweep_runner import COLUMNS, Record, Runner, SweepInterrupted, close_quietly, sigterm_as_interrupt, write_summary  # noqa: F401

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_RANGE = re.compile(rf"^\s*({_NUMBER})\s*:\s*({_NUMBER})\s*(?::\s*(.*?)\s*)?$")


# -- grid -------------------------------------------------------------------------------------
def parse_range(text):
    """``"START:STOP:COUNT"`` -> ``COUNT`` evenly spaced values (``numpy.linspace``), else ``None``.

    Values are ints when START and STOP are written as integers and every
    value is whole (``1:5:5`` -> 1, 2, 3, 4, 5), floats otherwise.
    """
    m = _RANGE.match(text)
    if not m:
        return None
    start_text, stop_text, count_text = m.groups()
    if count_text is None:
        raise OptionError(f"Range `{text}` needs a count: START:STOP:COUNT (e.g. {start_text}:{stop_text}:5).")
    try:
        count = int(count_text)
    except ValueError:
        raise OptionError(f"Range `{text}` needs a whole number of values after the second colon (START:STOP:COUNT); got `{count_text}`.") from None
    if count < 1:
        raise OptionError(f"Range `{text}` must have at least one value; got COUNT={count}.")
    values = [float(v) for v in np.linspace(float(start_text), float(stop_text), count)]
    integral = all(re.fullmatch(r"[-+]?\d+", s) for s in (start_text, stop_text))
    if integral and all(float(v).is_integer() for v in values):
        return [int(v) for v in values]
    return values


def grid_points(grid: dict) -> list:
    """Every combination of the grid values (``itertools.product``; the last name varies fastest)."""
    names = list(grid)
    return [dict(zip(names, combo)) for combo in itertools.product(*(grid[n] for n in names))]


def serpentine(grid: dict) -> list:
    """Indices of :func:`grid_points` in an order where consecutive points are grid neighbours.

    The fastest name runs forward, then backward, and so on (boustrophedon),
    recursively for every level, so each step changes one parameter by one step.
    """
    sizes = [len(v) for v in grid.values()]

    def walk(level):
        if level == len(sizes):
            return [()]
        inner = walk(level + 1)
        out = []
        for k in range(sizes[level]):
            seq = inner if k % 2 == 0 else inner[::-1]
            out += [(k,) + rest for rest in seq]
        return out

    strides = [math.prod(sizes[i + 1:]) for i in range(len(sizes))]
    return [sum(k * s for k, s in zip(combo, strides)) for combo in walk(0)]


# -- worker side ------------------------------------------------------------------------------
def solve_point(script, params, index=0, path=None, options=None, guess=None) -> dict:
    """Solve one grid point; runs in a worker process (module-level, so Dask can pickle it by name).

    Imports ``script`` by path, calls ``build(**params)``, solves with
    ``options`` (keyword arguments of :func:`colloc.solve`), writes the
    trajectory to ``path`` when it is given (``OUT/NAME_<index>.csv``, with
    ``params`` and the constraint violations in its metadata), and returns a
    small row: ``index``, ``params``, ``status``, ``success``, ``objective``,
    ``iterations``, ``seconds`` (build + solve), ``file``, ``message``.  A point
    whose build or solve raises is a row with status ``"error"`` and the
    message, so one bad point does not stop the sweep.
    """
    row, _ = _solve(script, params, index, path, options, guess)
    return row


def solve_chained(previous, script, params, index=0, path=None, options=None) -> tuple:
    """:func:`solve_point` warm-started from ``previous`` (the output of the previous link, or ``None``).

    Returns ``(row, (source_index, trajectory))``: the trajectory the next
    point should start from — this point's if it solved, else the one it
    started from — and the index of the point that produced it.
    """
    source, guess = previous[1] if previous is not None else (None, None)
    row, traj = _solve(script, params, index, path, options, guess)
    row["warm_start"] = source
    if row["success"]:
        return row, (index, traj)
    return row, (source, guess)


def _solve(script, params, index, path, options, guess):
    from ..pipeline.options import SolveOptions
    from ..pipeline.script import load_problem
    from ..pipeline.solve import run_pipeline

    row = dict(index=index, params=dict(params), status="error", success=False, objective=math.nan,
               iterations=0, seconds=math.nan, warm_start=None, file="", message="")
    kwargs = dict(options or {})
    stop = kwargs.pop(STOP_OPTION, None)
    try:
        if guess is not None:  # the neighbour's trajectory replaces a guess the script's SOLVE may give
            kwargs["guess"] = guess
        options = SolveOptions.of(**kwargs)
        _, problem = load_problem(script, params)
        result = run_pipeline(problem, options)
    except Exception as e:  # a bad point is a row, not the end of the sweep
        row["message"] = str(e) if isinstance(e, CollocError) else f"{type(e).__name__}: {e}"
        return row, None
    traj = result.trajectory
    traj.metadata["params"] = _jsonable(params)
    traj.metadata["violations"] = dict(result.violations)
    row.update(status=result.status.value, success=bool(result.success), objective=float(result.objective),
               iterations=int(result.iterations), seconds=result.build_seconds + result.solve_seconds,
               message=result.message)
    if path is not None:
        if stop is not None and os.path.exists(stop):  # the sweep was stopped while this point ran: its summary row says interrupted
            row.update(status="interrupted", success=False, message="the sweep was interrupted before this point finished; its result was not written")
            return row, None
        row["file"], lost = write_or_rescue(traj, path)  # a full disk must not cost the point's result
        if lost is not None:
            row["message"] = f"{row['message']}; {lost}" if row["message"] else lost
    return row, traj


#: Key of the sweep's stop file among the options a point receives (taken out before the solve).
STOP_OPTION = "_colloc_stop_file"
_STOP_PREFIX = ".colloc-stop-"


def _host():
    from ..results.files import _host as host

    return host()


def _remove_stale_stops(folder):
    """Stop files of sweeps on this host whose client no longer runs."""
    from ..results.files import process_alive

    prefix = f"{_STOP_PREFIX}{_host()}-"
    for entry in folder.glob(f"{prefix}*"):
        pid = entry.name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and not process_alive(int(pid)):
            try:
                entry.unlink()
            except OSError:
                pass


def point_file(name, index, count) -> str:
    """``NAME_<index>.csv``, the index zero-padded to the width of ``count - 1`` (files sort by index)."""
    return f"{name}_{index:0{len(str(max(count - 1, 0)))}d}.csv"


def _jsonable(params):
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in params.items()}


# -- client side ------------------------------------------------------------------------------
def sweep(script_path, grid: dict, fixed: dict | None = None, workers=None, scheduler=None, continuation=False,
          out=None, options=None, progress=True, name=None, point_timeout=None) -> list:
    """Solve ``script_path`` at every point of a parameter grid, on Dask.

    Parameters
    ----------
    script_path : str or path-like
        Problem script with ``build(**params) -> Problem`` (and optionally ``SOLVE``).
    grid : dict of str -> sequence
        Values of each swept ``build`` parameter; the points are their
        product (:func:`grid_points`: index ``i`` in that order, last name fastest).
    fixed : dict, optional
        ``build`` parameters held at one value.
    workers : int, optional
        Worker processes of the local cluster (default 2); not allowed with ``scheduler``.
    scheduler : str or dask.distributed.Client, optional
        Address of a running scheduler (``tcp://host:8786``) or a connected
        client; default: start a LocalCluster for this sweep.
    continuation : bool
        Run the points in sequence (serpentine order, :func:`serpentine`), each
        warm-started from the last successful trajectory before it.
    out : str or path-like, optional
        Folder for ``NAME_<i>.csv`` (one per point) and ``NAME_sweep.csv``
        (the summary); default: write nothing, return the rows only.
    options : dict, optional
        Keyword arguments of :func:`colloc.solve`; they update the script's
        ``SOLVE`` (an ``ipopt`` dict updates SOLVE's ``ipopt`` key by key).
    progress : bool or callable
        ``True`` draws a text progress bar on stderr; a callable receives each row as it completes.
    name : str, optional
        File stem (default: the script's stem).
    point_timeout : float, optional
        Seconds a point may run (from when a worker starts it); a point past it is a
        ``timed-out`` row and the worker running it is restarted (when this sweep owns the cluster).

    Returns
    -------
    list of dict
        One row per point, by index: ``index``, then each parameter, then
        :data:`COLUMNS` (``warm_start`` is the index whose trajectory was the
        guess, or ``None``).  A parameter named like a column appears as ``set:NAME``.
        ``status`` is the solve's status, ``error`` (build or solve raised), ``crashed`` (the
        worker process died), ``timed-out`` or ``interrupted``.

    Raises
    ------
    SweepInterrupted
        (a ``KeyboardInterrupt``) on Ctrl-C or SIGTERM, after the summary is written; its ``rows``
        list every point.
    """
    from ..pipeline.script import build_function, check_parameters, import_script, solve_defaults

    Client = dask_client_class()  # before any work: a missing Dask is a clear error at once
    grid, fixed = _check_grid(grid, fixed or {})
    workers = check_cluster(workers, scheduler)
    point_timeout = _check_timeout(point_timeout)
    folder, created = _output_folder(out)  # before the script runs: a bad folder costs nothing
    try:
        script = Path(script_path).resolve()
        module = import_script(script_path)
        kwargs = _solve_options(solve_defaults(module, script_path), options or {}, script_path)
        check_solve_options(kwargs)
        points = [{**p, **fixed} for p in grid_points(grid)]
        # names and required parameters are checked here, once; a value `build` refuses is that point's error row
        check_parameters(build_function(module, script_path), points[0], script_path)
    except BaseException:
        if created:
            _remove_empty(folder)  # no empty folder left by a sweep that never ran
        raise
    # fixed values are part of the name, as for a solve: a sweep at other fixed values never replaces this one's files
    name = _unshared(folder, name or result_name(script.stem, fixed), points)
    name, claim = _claim(folder, name)
    summary = None if folder is None else folder / f"{name}_sweep.csv"
    record = Record(points, list(grid) + list(fixed), summary)
    runner, owned, stop = Runner(record, progress, list(grid), point_timeout), [], None
    with sigterm_as_interrupt(), claim:
        try:
            try:
                runner.client, owned = connect(Client, workers, scheduler)
            except BaseException as e:
                if created and not isinstance(e, KeyboardInterrupt):
                    getattr(claim, "release", lambda: None)()  # its lock file is all the folder holds
                    _remove_empty(folder)
                raise
            runner.restart = bool(owned)
            if folder is not None:
                remove_orphans(folder)
                _remove_stale_stops(folder)
            paths = [None if folder is None else str(folder / point_file(name, i, len(points))) for i in range(len(points))]
            tag = f"{name}-{os.getpid()}-{_time.time_ns()}"
            if folder is not None:  # created on Ctrl-C or SIGTERM: a point still running then writes no file
                stop = folder / f"{_STOP_PREFIX}{_host()}-{os.getpid()}-{_time.time_ns()}"
                runner.on_interrupt = lambda: stop.touch()
                kwargs = {**kwargs, STOP_OPTION: str(stop)}
            if continuation:
                runner.chain(solve_chained, serpentine(grid), str(script), paths, kwargs, tag)
            else:
                runner.parallel(solve_point, str(script), paths, kwargs, tag)
        except KeyboardInterrupt:
            runner.interrupted()
        finally:
            if runner.client is not None or runner.was_interrupted:  # not for a scheduler that could not be reached
                table = record.finish()  # before closing the cluster: closing a stuck one may take a while
            for c in owned:
                close_quietly(c)
            if owned and stop is not None:  # its workers are gone; a remote scheduler's may still run and need it
                with contextlib.suppress(OSError):
                    stop.unlink(missing_ok=True)
    if runner.was_interrupted:
        raise SweepInterrupted(table, summary)
    return SweepTable(table, summary)


class SweepTable(list):
    """The summary rows of a sweep (a list of dicts), and ``summary``: the summary file written (or None)."""

    def __init__(self, rows, summary=None):
        super().__init__(rows)
        self.summary = summary


def _claim(folder, name):
    """Claim ``OUT/NAME_sweep.csv`` for this sweep; a concurrent sweep of the same name gets ``NAME-2`` (…).

    Two sweeps of one script into one folder at the same time would write the same point files
    and summary, and one sweep's results would be lost.  Returns the name to use and the claim
    (a context manager that releases it).
    """
    import contextlib
    import warnings

    from .outputs import ResultSlot

    if folder is None:
        return name, contextlib.nullcontext()
    slot = ResultSlot(folder, f"{name}_sweep")
    if slot.stem != f"{name}_sweep":
        taken, name = name, f"{name}-{slot.stem.rsplit('-', 1)[1]}"
        warnings.warn(f"`{folder / (taken + '_sweep.csv')}` is being written by another colloc sweep; this sweep writes "
                      f"`{folder / (name + '_sweep.csv')}` and `{name}_<i>.csv` instead.", stacklevel=3)
    return name, slot


def _unshared(folder, name, points) -> str:
    """``name``, or ``name-2`` (…) when ``OUT/NAME_<i>.csv`` or ``OUT/NAME_sweep.csv`` holds another run's result.

    A point file that records other build parameters than its point (another script's result, a sweep at
    other values), or a summary that is a trajectory, is not this sweep's to replace.
    """
    import warnings

    if folder is None:
        return name
    for k in range(1, 10000):
        candidate = name if k == 1 else f"{name}-{k}"
        if not _foreign(folder, candidate, points):
            if k > 1:
                warnings.warn(f"`{folder}` holds results of another run named like this sweep's (`{name}_…`); "
                              f"this sweep writes `{candidate}_sweep.csv` and `{candidate}_<i>.csv` instead.", stacklevel=3)
            return candidate
    return name


def _foreign(folder, name, points) -> bool:
    from ..results.files import read_trajectory

    summary = folder / f"{name}_sweep.csv"
    try:
        if summary.is_file() and summary.read_bytes()[:64].lstrip(b"\xef\xbb\xbf").startswith(b"# colloc trajectory"):
            return True
    except OSError:
        return True
    for i, point in enumerate(points):
        path = folder / point_file(name, i, len(points))
        if not path.exists():
            continue
        try:
            recorded = read_trajectory(path)[4].get("params")
        except FileFormatError:
            return True  # not a result colloc wrote: not this sweep's to replace
        if json.loads(json.dumps(recorded)) != json.loads(json.dumps(_jsonable(point))):
            return True
    return False


def _solve_options(defaults, options, path):
    """``SOLVE`` updated by ``options``; an ``ipopt`` dict updates SOLVE's ``ipopt`` key by key."""
    merged = {**defaults, **options}
    if isinstance(options.get("ipopt"), dict) and "ipopt" in defaults:
        if not isinstance(defaults["ipopt"], dict):
            raise OptionError(f"`ipopt` in SOLVE of `{path}` must be a dict of IPOPT options; got {type(defaults['ipopt']).__name__}.")
        merged["ipopt"] = {**defaults["ipopt"], **options["ipopt"]}
    return merged


def _check_grid(grid, fixed):
    if not isinstance(grid, dict) or not grid:
        raise OptionError("A sweep needs at least one swept parameter (`grid` = {name: values}); use colloc.solve for one point.")
    checked = {}
    for key, values in grid.items():
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise OptionError(f"Grid values of `{key}` must be a sequence; got {type(values).__name__}.")
        values = list(values)
        if not values:
            raise OptionError(f"Grid parameter `{key}` has no values.")
        checked[key] = [v.item() if hasattr(v, "item") else v for v in values]  # numpy scalars -> Python
    both = sorted(set(checked) & set(fixed))
    if both:
        raise OptionError(f"Parameter `{both[0]}` is both swept and fixed; give it once.")
    return checked, dict(fixed)


def _output_folder(out):
    """``(folder, created)``: the output folder, made and checked writable; ``(None, False)`` for no output."""
    if out is None:
        return None, False
    path, created = writable_folder(out, "`out`")
    return Path(path).resolve(), created


def _remove_empty(folder):
    try:
        if folder is not None and not any(folder.iterdir()):
            folder.rmdir()
    except OSError:
        pass


def _check_timeout(timeout):
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) or timeout <= 0:
        raise OptionError(f"The point time limit must be a positive number of seconds; got {timeout!r}.")
    return float(timeout)


def check_solve_options(kwargs):
    """Check the solve() arguments every point shares, as solve() would, before any point runs."""
    from ..discretization.mesh import make_mesh
    from ..discretization.schemes import get_scheme
    from ..pipeline.options import SolveOptions
    from ..solvers import get_backend
    from ..transcription import make_options
    from ..transcription.registry import by_scheme

    options = SolveOptions.of(**kwargs)
    if not by_scheme(options.scheme).variational and options.contact is None:
        get_scheme(options.scheme)
        make_options(**options.transcription)
    if options.intervals is not None or options.mesh is not None:
        make_mesh(options.intervals, options.mesh)
    get_backend(options.backend).options(options.solver_options(), options.verbose)


def read_summary(path) -> list:
    """The rows of a summary CSV, with numbers, booleans and empty cells (``None``) parsed."""
    from ..errors import FileFormatError
    from ..results.files import decode_text, read_bytes
    from ..pipeline.script import literal

    path = os.fspath(path)
    text = decode_text(read_bytes(path, "Sweep summary"), path)
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        rows = list(reader)
    except csv.Error as e:
        raise FileFormatError(f"`{path}` is not a readable CSV summary: {e}.") from None
    names = reader.fieldnames or []
    if "index" not in names or "status" not in names:
        raise FileFormatError(f"`{path}` is not a sweep summary: its header has no `index` and `status` columns.")
    if len(set(names)) != len(names):
        raise FileFormatError(f"`{path}` has two columns named `{next(n for n in names if names.count(n) > 1)}`.")
    parsed = []
    for r in rows:
        if None in r or any(v is None for v in r.values()):
            raise FileFormatError(f"Row {reader.line_num} of `{path}` does not have one value per column.")
        out = {}
        for k, v in r.items():
            if k in ("file", "message", "status"):
                out[k] = v
            else:
                out[k] = None if v == "" else literal(v)
        parsed.append(out)
    return parsed


__all__ = ["sweep", "SweepTable", "SweepInterrupted", "check_solve_options", "solve_point", "solve_chained", "parse_range", "grid_points", "serpentine",
           "point_file", "write_summary", "read_summary", "MissingDependencyError", "COLUMNS"]
