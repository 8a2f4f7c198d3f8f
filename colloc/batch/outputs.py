"""Where a ``colloc solve`` writes its result, so that no result is ever lost.

Three promises (docs/reliability.md):

* **Concurrent runs keep both results.**  A run claims ``OUT/NAME.csv`` for
  its whole duration with a lock file ``OUT/.NAME.csv.lock`` (created with
  ``O_EXCL``, holding host and process id).  A second run that finds the name
  claimed by a live process writes ``OUT/NAME-2.csv`` (then ``-3`` …) instead
  and says so.  A lock left by a process that no longer runs (``kill -9``) is
  taken over.
* **An unconverged iterate never replaces a converged result.**  When
  ``NAME.csv`` holds a converged solution, checkpoints and an unconverged or
  interrupted final iterate go to ``NAME.unconverged.csv`` instead, unless
  the run is forced (``--force``).
* **A changed ``--set`` is a new file.**  The name is the script's stem
  followed by each ``--set`` value in name order (:func:`result_name`):
  ``--set mode=time`` writes ``swingup_mode=time.csv`` and leaves the energy
  result ``swingup.csv`` alone.
* **No temporary file outlives its writer.**  Writes are atomic
  (:func:`colloc.results.files.atomic_write`); a claim first removes temporary files
  of writers that no longer run.
"""
from __future__ import annotations

import hashlib
import os
import re
import socket
import time
from pathlib import Path

from ..errors import FileFormatError
from ..results.files import process_alive, read_trajectory, remove_orphans


#: Longest file stem :func:`result_name` writes out; longer ones end in a hash of the values.
MAX_STEM = 100


def result_name(stem, params) -> str:
    """The file stem of a solve: ``stem`` and each ``--set`` value, in name order.

    ``result_name("swingup", {"mode": "time", "duration": 1.5})`` is
    ``"swingup_duration=1.5_mode=time"``.  Characters other than letters,
    digits and ``. , + - = _`` become ``-``; when one did, or the stem is longer
    than :data:`MAX_STEM` (then cut), it ends in ``-`` and eight hex digits of
    a hash of the values, so two different settings do not share a name.
    """
    if not params:
        return stem
    raw = "_".join(f"{k}={_text(params[k])}" for k in sorted(params))
    clean = re.sub(r"[^A-Za-z0-9.,+=_-]", "-", raw)
    name = f"{stem}_{clean}"
    if clean != raw or len(name) > MAX_STEM:
        name = name[: MAX_STEM - 9] + "-" + hashlib.sha1(raw.encode()).hexdigest()[:8]
    return name


def _text(value) -> str:
    """The value as text that tells its type: ``[1,2]``, ``(1,2)`` and ``'1,2'`` differ, as do ``1`` and ``'1'``.

    A plain word stays bare (``mode=time``); a string that would read back as another value is quoted.
    """
    from ..pipeline.script import literal

    if isinstance(value, list):
        return "[" + ",".join(_text(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ",".join(_text(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, str):
        return value if literal(value) == value else repr(value)
    return repr(value) if isinstance(value, float) else str(value)


class ResultSlot:
    """The result file of one run in ``folder``, claimed until :meth:`release`.

    Parameters
    ----------
    folder : path
        Existing, writable output folder.
    name : str
        File stem (the problem script's stem).
    force : bool
        Let an unconverged iterate replace a converged ``NAME.csv``.
    """

    def __init__(self, folder, name, force=False):
        self.folder, self.name, self.force = Path(folder), name, force
        self.lock = None
        self.stem = name
        self.notes = []
        remove_orphans(self.folder)
        for lock in self.folder.glob(".*.csv.lock"):  # locks of runs that were killed
            if _stale(lock):
                try:
                    lock.unlink()
                except OSError:
                    pass
        for k in range(1, 10000):
            stem = name if k == 1 else f"{name}-{k}"
            if self._take(self.folder / f".{stem}.csv.lock"):
                self.stem = stem
                break
        if self.stem != name:
            self.notes.append(f"`{self.folder / (name + '.csv')}` is being written by another colloc run; "
                              f"this run writes `{self.path}` instead.")
        self.keep_converged = not force and _converged(self.path)
        self.wrote_unconverged = False

    @property
    def path(self) -> Path:
        """``OUT/NAME.csv`` (or ``NAME-k.csv`` when another run holds ``NAME.csv``)."""
        return self.folder / f"{self.stem}.csv"

    @property
    def unconverged_path(self) -> Path:
        """Where checkpoints and an unconverged result go: ``NAME.csv``, or ``NAME.unconverged.csv``
        when ``NAME.csv`` holds a converged result that must not be replaced."""
        return self.folder / f"{self.stem}.unconverged.csv" if self.keep_converged else self.path

    def result_path(self, success: bool) -> Path:
        """Where the final result goes, and a note when a converged result was kept."""
        if success:
            return self.path
        if self.keep_converged:
            self.notes.append(f"kept the converged result in `{self.path}`; this unconverged iterate is in "
                              f"`{self.unconverged_path}` (--force replaces the converged file).")
        return self.unconverged_path

    def finish(self, success: bool):
        """After the result is written: drop ``NAME.unconverged.csv`` when the result went to ``NAME.csv``
        (it holds an earlier iterate than the file now there, of this run or of an earlier one)."""
        stale = self.folder / f"{self.stem}.unconverged.csv"
        went_to_name_csv = success or not self.keep_converged  # (as result_path decides, without its note)
        if went_to_name_csv and stale.is_file():
            try:
                stale.unlink()
            except OSError:
                pass

    def check_targets(self):
        """Refuse, before anything is built, result paths that no file can be written to (a folder named
        ``NAME.csv``): one :class:`~colloc.errors.OptionError` naming the path."""
        from ..errors import OptionError

        for path in (self.path, self.folder / f"{self.stem}.unconverged.csv"):
            if path.exists() and not path.is_file():
                raise OptionError(f"`{path}` exists and is not a file (a folder?), so the result could not be written "
                                  f"there; move it away or choose another --out.")

    def release(self):
        if self.lock is not None:
            try:
                os.unlink(self.lock)
            except OSError:
                pass
            self.lock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()
        return False

    def _take(self, lock: Path) -> bool:
        """Create ``lock`` exclusively; take it over if its owner no longer runs."""
        for _ in range(3):
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                if not _stale(lock):
                    return False
                try:
                    os.unlink(lock)
                except OSError:
                    pass
                continue
            with os.fdopen(fd, "w") as fh:
                fh.write(f"{socket.gethostname()} {os.getpid()}\n")
            self.lock = lock
            return True
        return False


#: Metadata that must agree for two result files to be optima of one problem on one grid.
SETUP_KEYS = ("problem", "params", "scheme", "intervals", "mesh")


def merge_optima(folder, stem, optima, metadata) -> tuple:
    """Write ``STEM.optimum-<i>.csv`` for the optima of a multi-start and of earlier ones into ``folder``.

    ``optima`` are this run's (:attr:`SolveResult.optima`, best first); ``metadata`` is added to each.
    Optimum files already there with the same problem, parameters, scheme and mesh (:data:`SETUP_KEYS`)
    are earlier runs' optima: kept unless this run found the same optimum
    (:func:`colloc.pipeline.multistart.distinct_optima`'s test), so a better optimum found before is never lost.
    Files beyond the new count, and optimum files of another setup, are removed: none is left stale.

    Returns ``(paths written, best)``: ``best`` is the trajectory of the overall best optimum when it is an
    earlier run's (``NAME.csv`` should hold it), else None.
    """
    from types import SimpleNamespace

    from ..pipeline.multistart import OBJECTIVE_RTOL, STATE_RTOL, _same
    from ..results.trajectory import Trajectory

    folder = Path(folder)
    existing = sorted(folder.glob(f"{glob_escape(stem)}.optimum-*.csv"))
    new = [SimpleNamespace(objective=float(o["objective"]), trajectory=o["trajectory"], earlier=False) for o in optima or []]
    if not new:
        return [], None
    setup = {k: new[0].trajectory.metadata.get(k) for k in SETUP_KEYS}
    setup.update({k: metadata[k] for k in SETUP_KEYS if k in metadata})
    earlier = []
    for path in existing:
        if not re.fullmatch(rf"{re.escape(stem)}\.optimum-\d+\.csv", path.name):
            continue
        try:
            traj = Trajectory.read(path)
        except FileFormatError:
            continue
        objective = traj.metadata.get("objective")
        if (traj.metadata.get("success") is True and isinstance(objective, (int, float))
                and all(_json(traj.metadata.get(k)) == _json(setup[k]) for k in SETUP_KEYS)):
            earlier.append(SimpleNamespace(objective=float(objective), trajectory=traj, earlier=True))
    kept = [o for o in earlier if not any(_same(o, n, OBJECTIVE_RTOL, STATE_RTOL) for n in new)]
    merged = sorted(new + kept, key=lambda o: o.objective)
    paths = []
    for i, o in enumerate(merged, start=1):
        o.trajectory.metadata.update(metadata)
        paths.append(o.trajectory.write(folder / f"{stem}.optimum-{i}.csv"))
    for path in existing:
        if str(path) not in paths and re.fullmatch(rf"{re.escape(stem)}\.optimum-\d+\.csv", path.name):
            try:
                path.unlink()
            except OSError:
                pass
    return paths, (merged[0].trajectory if merged[0].earlier else None)


def glob_escape(text) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def _json(value):
    import json

    return json.loads(json.dumps(value))


def remove_foreign_optima(folder, stem, metadata):
    """After a single solve wrote ``STEM.csv``: remove ``STEM.optimum-<i>.csv`` files of another setup
    (:data:`SETUP_KEYS`), which no longer go with it; optima of the same setup stay (they are still optima)."""
    from ..results.trajectory import Trajectory

    for path in Path(folder).glob(f"{glob_escape(stem)}.optimum-*.csv"):
        if not re.fullmatch(rf"{re.escape(stem)}\.optimum-\d+\.csv", path.name):
            continue
        try:
            same = all(_json(Trajectory.read(path).metadata.get(k)) == _json(metadata.get(k)) for k in SETUP_KEYS)
        except FileFormatError:
            continue
        if not same:
            try:
                path.unlink()
            except OSError:
                pass


def write_optima(result, out, slot, traj, target) -> list:
    """``OUT/STEM.optimum-<i>.csv`` for each distinct local optimum of a multi-start (1 = best), merged with
    those of earlier multi-starts of the same setup (:func:`colloc.batch.outputs.merge_optima`); ``NAME.csv`` keeps
    an earlier optimum that is better than this run's best.  After a single converged solve, optimum files
    of another setup are removed (they went with the result it replaced)."""
    metadata = {k: traj.metadata[k] for k in ("params", "bounds")}
    if not result.optima:
        if result.success and Path(target) == slot.path:
            remove_foreign_optima(out, slot.stem, traj.metadata)
        return []
    paths, earlier_best = merge_optima(out, slot.stem, result.optima, metadata)
    if earlier_best is not None and Path(target) == slot.path:
        earlier_best.write(slot.path)
        slot.notes.append(f"an earlier multi-start found a better optimum (objective {earlier_best.metadata['objective']:.10g}) than "
                          f"this run's best ({result.objective:.10g}): `{slot.path}` keeps it; this run's optima are among "
                          f"the `{slot.stem}.optimum-<i>.csv` files.")
    return paths


def write_or_rescue(traj, target):
    """Write ``traj`` to ``target``; if that fails (a full disk, a folder gone), save it elsewhere.

    Returns ``(path written, None)``, or ``(rescue path, sentence)`` when ``target`` could not be
    written: the sentence names ``target``, the reason and where the result is instead (the system's
    temporary folder, else the home folder, else the working folder, as ``colloc-rescued-NAME-PID.csv``).
    Raises the original error only if no place at all takes the file.
    """
    target = Path(target)
    try:
        return traj.write(target), None
    except (OSError, FileFormatError) as e:
        first = e
    import tempfile

    reason = str(first).rstrip(".")
    name = f"colloc-rescued-{target.stem}-{os.getpid()}{target.suffix}"
    for folder in (tempfile.gettempdir(), os.path.expanduser("~"), os.getcwd()):
        try:
            path = traj.write(Path(folder) / name)
        except (OSError, FileFormatError):
            continue
        return path, f"{reason}; the result is saved in `{path}` instead."
    raise first


def _stale(lock: Path) -> bool:
    """Whether the run that wrote ``lock`` is gone (same host, process not running)."""
    try:
        host, pid = lock.read_text().split()
    except ValueError:  # empty: being written this instant, or its writer died right after creating it
        try:
            return time.time() - lock.stat().st_mtime > 60
        except OSError:
            return False
    except OSError:
        return False
    return host == socket.gethostname() and pid.isdigit() and not process_alive(int(pid))


def _converged(path: Path) -> bool:
    try:
        return read_trajectory(path)[4].get("success") is True
    except FileFormatError:
        return False


__all__ = ["ResultSlot", "result_name", "write_or_rescue", "merge_optima", "write_optima", "remove_foreign_optima", "MAX_STEM"]
