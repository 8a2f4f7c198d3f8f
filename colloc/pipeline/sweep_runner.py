"""Running the points of a sweep on Dask, and turning every way a point can end into a summary row.

A point ends with its result, or ``crashed`` (its worker process died: Dask reports ``KilledWorker``),
``timed-out`` (it ran past the point time limit: the future is cancelled and the worker restarted, since
a thread cannot be stopped), or ``interrupted`` (Ctrl-C or SIGTERM reached the client).  At most one
point per worker thread is in flight, so a worker that dies or is restarted takes no other point with it,
and a point's start is when a worker takes it (``Client.processing``).  The summary file is rewritten as
rows arrive, at most once a second, so it lists every point whatever stops the sweep.
"""
from __future__ import annotations

import csv
import io
import math
import os
import sys
import time as _time

from ..results.files import atomic_write

#: Columns of the summary table after the parameters.
COLUMNS = ("status", "success", "objective", "iterations", "seconds", "warm_start", "file", "message")

class SweepInterrupted(KeyboardInterrupt):
    """A sweep stopped by Ctrl-C or SIGTERM; ``rows`` lists every point, ``summary`` is the summary file written."""

    def __init__(self, rows, summary):
        super().__init__("the sweep was interrupted")
        self.rows, self.summary = rows, summary


#: Seconds between looks at the running points (and at most between summary rewrites, once a second).
POLL = 0.1
#: Seconds a running scheduler may have no worker before the points left are given up (listed as crashed).
NO_WORKER_LIMIT = 30.0


class Record:
    """Every point's row: a result, or what stopped it.  The summary file is rewritten as rows arrive,
    so even a sweep killed outright leaves one listing every point (unfinished ones as ``pending``)."""

    def __init__(self, points, names, summary):
        self.points, self.names, self.summary = points, names, summary
        self.rows = {}
        self.written, self.dirty = 0.0, False

    def add(self, row):
        self.rows[row["index"]] = row
        self.dirty = True
        self.flush()

    def flush(self):
        """Rewrite the summary if rows arrived since the last write, at most once a second."""
        if self.summary is not None and self.dirty and _time.monotonic() - self.written > 1.0:
            self._write()

    def lost(self, index, status, message, seconds=math.nan):
        row = dict(index=index, params=dict(self.points[index]), status=status, success=False, objective=math.nan,
                   iterations=0, seconds=seconds, warm_start=None, file="", message=message)
        self.add(row)
        return row

    def table(self, missing="pending"):
        out = []
        for i in range(len(self.points)):
            row = self.rows.get(i) or dict(index=i, params=dict(self.points[i]), status=missing, success=False, objective=math.nan,
                                           iterations=0, seconds=math.nan, warm_start=None, file="", message="")
            out.append(_flatten(row, self.names))
        return out

    def _write(self):
        write_summary([{**r, "file": os.path.basename(r["file"])} for r in self.table()], self.summary)
        self.written, self.dirty = _time.monotonic(), False

    def finish(self):
        if self.summary is not None:
            self._write()
        return self.table()


def _import_colloc():
    import colloc.pipeline.driver  # noqa: F401  (CasADi and the transcription with it)


class Runner:
    """Submits points and waits for them, turning every way a point can end into a row:
    its result; ``crashed`` when its worker process died; ``timed-out`` past the time limit
    (the worker running it is restarted); ``interrupted`` when the sweep is stopped."""

    def __init__(self, record, progress, swept, timeout):
        self.client, self.record, self.timeout, self.restart = None, record, timeout, False
        self.bar = _TextBar(len(record.points), swept) if progress is True else None
        self.callback = progress if callable(progress) else None
        self.pending = {}   # future -> index
        self.started = {}   # key -> monotonic time first seen running
        self.was_interrupted = False

    def warm(self):
        """Import colloc on every worker before the first point, so that a point's time limit measures the
        point and not its worker's first import of CasADi (seconds on a loaded machine)."""
        if self.timeout is None:
            return
        try:
            self.client.run(_import_colloc)
        except Exception:  # noqa: BLE001  a worker that cannot import fails its points, with their own message
            pass

    def parallel(self, solve_point, script, paths, options, tag):
        """Every point, at most one per worker thread in flight: the scheduler then never queues a point on a
        busy worker, so a worker that dies or is restarted takes only the point it was running with it."""
        self.warm()
        queue = list(range(len(self.record.points)))[::-1]

        def feed():
            while queue and len(self.pending) < self._capacity() and not getattr(self, "orphaned", False):
                i = queue.pop()
                f = self.client.submit(solve_point, script, self.record.points[i], i, paths[i], options,
                                       pure=False, key=f"colloc-{tag}-{i}")
                self.pending[f] = i

        feed()
        self._wait(lambda f, row: None, feed)

    def _capacity(self):
        try:
            try:
                info = self.client.scheduler_info(n_workers=-1)  # every worker, not the first few
            except TypeError:  # a Dask that lists them all anyway
                info = self.client.scheduler_info()
            return max(1, sum(w.get("nthreads", 1) for w in info["workers"].values()))
        except Exception:  # noqa: BLE001  a slow scheduler: one point at a time still works
            return 1

    def chain(self, solve_chained, order, script, paths, options, tag):
        """One point at a time, each warm-started from the last finished link (crashed or timed-out links are skipped)."""
        previous = None
        self.warm()
        for i in order:
            if getattr(self, "orphaned", False):
                break
            f = self.client.submit(solve_chained, previous, script, self.record.points[i], i, paths[i], options,
                                   pure=False, key=f"colloc-{tag}-{i}")
            self.pending[f] = i
            finished = []
            self._wait(lambda f, row: finished.append(f))
            if finished:
                previous = finished[0]

    def interrupted(self):
        self.was_interrupted = True
        try:  # first: a point that finishes from now on writes no file its summary row would not list
            getattr(self, "on_interrupt", lambda: None)()
        except OSError:
            pass
        if self.pending:
            try:
                self.client.cancel(list(self.pending))
            except BaseException:  # noqa: BLE001  a second Ctrl-C, or a scheduler gone: the rows matter more
                pass
        for i in self.pending.values():
            self._emit(self.record.lost(i, "interrupted", "the sweep was interrupted before this point finished"))
        for i in range(len(self.record.points)):
            if i not in self.record.rows:
                self._emit(self.record.lost(i, "interrupted", "the sweep was interrupted before this point started"))
        self.pending = {}
        self._close_bar()

    def _wait(self, on_result, feed=lambda: None):
        from dask.distributed import wait

        while self.pending:
            try:  # returns as soon as one finishes: a result is fetched before anything can lose it
                wait(list(self.pending), timeout=POLL, return_when="FIRST_COMPLETED")
            except TimeoutError:
                pass
            for f in [f for f in self.pending if f.done()]:
                i = self.pending.pop(f)
                row = self._row(f, i)
                if row.pop("_result", False):
                    on_result(f, row)
                self.record.add(row)
                self._emit(row)
            if self.timeout is not None and self.pending:
                self._expire()
            if self.pending and self._orphaned():
                self._give_up()
                return
            feed()
            self.record.flush()
        if len(self.record.rows) == len(self.record.points):
            self._close_bar()

    def _orphaned(self) -> bool:
        """Whether the scheduler has had no worker for :data:`NO_WORKER_LIMIT` seconds (they all left or died):
        its tasks would wait forever, and a point's time limit counts only once a worker starts it."""
        try:
            workers = self.client.scheduler_info().get("workers", {})
        except Exception:  # noqa: BLE001  no answer this time: look again next poll
            return False
        if workers:
            self.no_workers_since = None
            return False
        if getattr(self, "no_workers_since", None) is None:
            self.no_workers_since = _time.monotonic()
        return _time.monotonic() - self.no_workers_since > NO_WORKER_LIMIT

    def _give_up(self):
        """Every point not finished becomes a ``crashed`` row: no worker is left to run it."""
        self.orphaned = True
        message = f"no Dask worker was left to run it (the scheduler had none for {NO_WORKER_LIMIT:g} s)"
        try:
            self.client.cancel(list(self.pending))
        except Exception:  # noqa: BLE001  the rows matter more
            pass
        for i in list(self.pending.values()) + [i for i in range(len(self.record.points)) if i not in self.record.rows
                                                 and i not in self.pending.values()]:
            row = self._lost(i, "crashed", message)
            self.record.add(row)
            self._emit(row)
        self.pending = {}
        self.record.flush()
        self._close_bar()

    def _row(self, future, index):
        if future.status == "finished":
            value = future.result()
            row = value[0] if isinstance(value, tuple) else value
            row["_result"] = True
            return row
        if future.status == "cancelled":
            return self._lost(index, "interrupted", "the point was cancelled")
        error = future.exception()
        if type(error).__name__ == "KilledWorker":
            return self._lost(index, "crashed", "the worker process solving this point died (a crash in native code, "
                                                "os._exit, or the out-of-memory killer); the other points went on")
        return self._lost(index, "error", f"the task failed on a Dask worker: {type(error).__name__}: {error}")

    def _lost(self, index, status, message, seconds=math.nan):
        return dict(index=index, params=dict(self.record.points[index]), status=status, success=False, objective=math.nan,
                    iterations=0, seconds=seconds, warm_start=None, file="", message=message)

    def _expire(self):
        now = _time.monotonic()
        try:
            running = self.client.processing()
        except Exception:  # noqa: BLE001  the scheduler did not answer this time; look again next poll
            return
        where = {}
        for worker, keys in running.items():
            for key in keys:
                self.started.setdefault(key, now)
                where[key] = worker
        for f, i in list(self.pending.items()):
            if f.key in self.started and now - self.started[f.key] > self.timeout:
                del self.pending[f]
                self.client.cancel([f])
                self._emit(self.record.lost(i, "timed-out", f"stopped after the point time limit of {self.timeout:g} s",
                                            seconds=self.timeout))
                if self.restart and f.key in where:  # free the worker: its thread cannot be stopped otherwise
                    try:
                        self.client.restart_workers([where[f.key]], raise_for_error=False)
                    except Exception:  # noqa: BLE001  the worker is gone already, or has no nanny
                        pass

    def _emit(self, row):
        if self.bar is not None:
            self.bar.update(row)
        elif self.callback is not None:
            self.callback(row)

    def _close_bar(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class sigterm_as_interrupt:
    """During the sweep, SIGTERM stops it like Ctrl-C (summary written, exit 130); main thread only."""

    def __enter__(self):
        import signal
        import threading

        self.previous = None
        if threading.current_thread() is threading.main_thread():
            def handler(signum, frame):
                raise KeyboardInterrupt

            self.previous = signal.signal(signal.SIGTERM, handler)
        return self

    def __exit__(self, *exc):
        import signal

        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)
        return False


def close_quietly(thing):
    try:
        thing.close(timeout=10) if "Cluster" in type(thing).__name__ else thing.close()
    except BaseException:  # noqa: BLE001  closing after a fault: what matters is written already
        pass


def _flatten(row, names):
    flat = {"index": row["index"]}
    for k in names:
        flat[f"set:{k}" if k in COLUMNS or k == "index" else k] = row["params"][k]
    flat.update({k: row[k] for k in COLUMNS})
    return flat


def write_summary(rows, path) -> str:
    """Write the summary rows as CSV (header from the first row), atomically; returns the path."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({k: ("" if v is None else repr(v) if isinstance(v, float) else v) for k, v in r.items()})
    atomic_write(os.fspath(path), buf.getvalue().encode())
    return os.fspath(path)


#: Without a terminal (a log file, CI), the progress bar prints a line at most this often (seconds).
LOG_PERIOD = 5.0


class _TextBar:
    """``[#####.....] 5/10  solved 4  failed 1`` on stderr, redrawn in place on a terminal; without one
    (a log file), a line when the first point finishes, then at most every :data:`LOG_PERIOD` seconds,
    and one for the last point, so a thousand-point sweep does not write a thousand lines."""

    def __init__(self, total, swept, stream=None, width=30):
        self.total, self.swept, self.width = total, swept, width
        self.stream = stream or sys.stderr
        self.done = self.failed = 0
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = _time.perf_counter()
        self.logged = -math.inf

    def update(self, row):
        self.done += 1
        self.failed += not row["success"]
        filled = round(self.width * self.done / self.total)
        bar = "#" * filled + "." * (self.width - filled)
        point = ", ".join(f"{k}={row['params'][k]:.6g}" if isinstance(row["params"][k], float) else f"{k}={row['params'][k]}" for k in self.swept)
        text = (f"sweep [{bar}] {self.done}/{self.total}  solved {self.done - self.failed}  failed {self.failed}  "
                f"{_time.perf_counter() - self.start:.1f} s  last: {point} {row['status']}")
        if self.tty:
            self.stream.write("\r" + text + "\033[K")
        elif self.done == self.total or _time.perf_counter() - self.logged >= LOG_PERIOD:
            self.stream.write(text + "\n")
            self.logged = _time.perf_counter()
        else:
            return
        self.stream.flush()

    def close(self):
        if self.tty and self.done:
            self.stream.write("\n")
            self.stream.flush()


__all__ = ["COLUMNS", "write_summary", "SweepInterrupted", "Record", "Runner", "sigterm_as_interrupt", "close_quietly", "POLL", "LOG_PERIOD"]
