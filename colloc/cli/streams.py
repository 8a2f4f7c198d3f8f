"""The process around a command: standard output that cannot cost a result, and SIGTERM taken as Ctrl-C.

``colloc solve … | head -1`` closes the pipe after one line; ``>&-`` starts the
command with no stdout at all; ``> /dev/full`` fails every write.  Printing is
not the work: progress lines and summaries are dropped from then on, the run
goes on and writes its files, and :func:`guarded_stdout` says once on stderr
what was lost.  The exit code stays the run's own (0, 1, 2, 130), so a
pipeline's ``$?`` still tells whether the solve converged.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading


class GuardedStream:
    """A text stream that passes writes to ``stream`` until one fails, then drops them.

    ``lost`` is None while writes go through, else the reason of the first failure
    (``"the reader closed the pipe"``, ``"no space left on the device"``, …).
    """

    def __init__(self, stream):
        self._stream, self.lost = stream, None if stream is not None else "there is no standard output"

    def _guard(self, call, *args):
        if self.lost is not None:
            return None
        try:
            return call(*args)
        except BrokenPipeError:
            self.lost = "the reader closed the pipe"
        except (OSError, ValueError) as e:  # ValueError: a closed file object
            self.lost = os.strerror(e.errno).lower() if getattr(e, "errno", None) else str(e) or type(e).__name__
        return None

    def write(self, text):
        self._guard(self._stream.write if self._stream is not None else None, text)
        return len(text)

    def flush(self):
        if self._stream is not None:
            self._guard(self._stream.flush)

    def isatty(self):
        return self.lost is None and bool(getattr(self._stream, "isatty", lambda: False)())

    def __getattr__(self, name):  # encoding, fileno, … of the stream underneath
        if self._stream is None:
            raise AttributeError(name)
        return getattr(self._stream, name)


@contextlib.contextmanager
def guarded_stdout():
    """Run the body with ``sys.stdout`` guarded (:class:`GuardedStream`); yield the guard.

    When output was lost, one line on stderr says so, and file descriptor 1 is pointed at
    ``/dev/null`` so that the interpreter's last flush at exit cannot fail either.
    """
    original = sys.stdout
    guard = GuardedStream(original)
    sys.stdout = guard
    try:
        yield guard
    finally:
        if sys.stdout is guard:
            sys.stdout = original
        if guard.lost is not None and original is not None:
            with contextlib.suppress(OSError, ValueError):
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, original.fileno())
                os.close(devnull)
        if guard.lost is not None:
            _say(f"colloc: note: standard output was dropped ({guard.lost}); every file was still written.")


def _say(line):
    with contextlib.suppress(OSError, ValueError, AttributeError):
        print(line, file=sys.stderr, flush=True)


@contextlib.contextmanager
def sigterm_interrupts():
    """SIGTERM stops any command as Ctrl-C does (exit 130, what was done is written), not only a running solve:
    the build, ``info``, ``plot``, ``verify`` and a sweep's start-up too.  Main thread only; the solve and the
    sweep install their own handlers for their duration and put this one back."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
__all__ = ["GuardedStream", "guarded_stdout", "sigterm_interrupts"]


def crash_report(error, argv) -> str:
    """Write the traceback of ``error`` with the command line and versions to a new file; return its path."""
    import platform

    from .. import __version__ as version
    import tempfile
    import time
    import traceback

    text = (f"colloc {version}, Python {platform.python_version()}, {platform.platform()}\n"
            f"time: {time.strftime('%Y-%m-%d %H:%M:%S')}\ncommand: colloc {' '.join(sys.argv[1:] if argv is None else argv)}\n"
            f"working folder: {os.getcwd()}\n\n" + "".join(traceback.format_exception(error)))
    try:
        fd, path = tempfile.mkstemp(prefix=f"colloc-crash-{time.strftime('%Y%m%d-%H%M%S')}-", suffix=".txt")
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
    except OSError:  # not even a temporary file: the traceback goes to stderr after all
        print(text, file=sys.stderr)
        return "(none: it was printed above)"
    return path
