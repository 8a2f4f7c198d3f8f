"""Point functions compiled to C with the system's compiler, cached on disk.

A robot's per-point functions (the inverse dynamics, its Jacobian, its Lagrangian Hessian) are SX graphs of
10⁴–10⁵ instructions that CasADi's SX virtual machine runs at every grid point in every IPOPT iteration.
The same graph written as C by CasADi's code generator and compiled runs about 10× faster at -O0 and 20× at
-O1 (the Panda's point Hessian: 4.9, 0.50 and 0.22 ns per instruction and point).  Compiling costs
seconds, so each library is kept in a cache folder under the SHA-256 of the function's serialized graph,
CasADi's version, the compiler and its flags: a second build of the same expression loads it in
milliseconds.  Writes are atomic (compiled under a temporary name, then renamed), so processes that
compile the same function at once each end with a whole library.

Settings (the transcription option ``compile``)
    ``False``   the SX virtual machine (no compiler is looked for).
    ``True``    every point function is compiled.
    ``"auto"``  (default) a function is compiled when a typical solve would save more time than compiling
                it costs (:func:`pays`; docs/performance.md has the measurement); a library already in the
                cache is loaded whenever it pays even without its compile time.

Environment
    ``COLLOC_CC``         the C compiler (default ``$CC``, else ``gcc``, ``cc`` or ``clang`` on the ``PATH``).
    ``COLLOC_CFLAGS``     the optimization flags (default ``-O0``, :data:`OPTIMIZATION`).
    ``COLLOC_CACHE_DIR``  the cache folder (default ``$XDG_CACHE_HOME/colloc``, else ``~/.cache/colloc``).

Without a compiler (or when it fails) a one-line warning says so, once per process, and the point
functions run in the SX virtual machine as with ``compile=False``.
"""
from __future__ import annotations

import hashlib
import math
import os
import shutil
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import casadi as ca
import numpy as np

SETTINGS = ("auto", True, False)

#: Optimization and code flags.  ``-O0``: on the Panda's point Hessian (24,000 instructions, 301 points) the SX
#: virtual machine takes 4.9 ns per instruction and point; -O0 code 0.50 ns after 0.58 s of compiling, -O1
#: code 0.22 ns after 4.0 s (-O2 and -O3 compile longer still and run no faster).  A single solve of 50–100
#: iterations gains more from the faster compile; set ``COLLOC_CFLAGS=-O1`` for libraries reused many times.
#: Floating-point contraction stays off so that the compiled code rounds exactly as the SX virtual machine.
OPTIMIZATION = "-O0"
FLAGS = ("-fPIC", "-shared", "-ffp-contract=off")

#: What ``"auto"`` assumes: a solve takes about this many IPOPT iterations …
AUTO_EVALUATIONS = 50
#: … and compiled code takes at least this long per instruction and point (-O0: 0.5 ns on the Panda's
#: Hessian, 1.1 ns on the 40-muscle Hessian, whose sines, exponentials and divisions cost the same either way) …
AUTO_COMPILED = 1.2e-9
#: … while the SX virtual machine takes at most this long (Panda, UR5: 4.9 ns; muscles 1.8 ns; cart-pole 2 ns) …
AUTO_VIRTUAL_MAX = 6e-9
#: … against starting the compiler and compiling each instruction (CPU seconds: 0.04 s; 24–27 µs per instruction
#: for 10⁴–10⁵ instructions, 46 µs at 10³).
AUTO_START, AUTO_PER_INSTRUCTION = 0.05, 25e-6
#: Loading a cached library (taken as this many seconds; a few milliseconds measured).
LOAD_SECONDS = 0.01

_warned: set = set()


def cache_dir() -> Path:
    """The folder of compiled libraries: ``$COLLOC_CACHE_DIR``, ``$XDG_CACHE_HOME/colloc`` or ``~/.cache/colloc``."""
    given = os.environ.get("COLLOC_CACHE_DIR")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "colloc"


def compiler() -> str | None:
    """The C compiler's path (``$COLLOC_CC``, ``$CC``, else the first of gcc, cc, clang found), or ``None``."""
    for variable in ("COLLOC_CC", "CC"):
        name = os.environ.get(variable)
        if name:
            return shutil.which(name)
    for name in ("gcc", "cc", "clang"):
        found = shutil.which(name)
        if found:
            return found
    return None


def compiled(functions, setting="auto", counts=None) -> list:
    """``functions`` (SX ``casadi.Function``s), each replaced by its compiled library where ``setting`` says so.

    ``counts``: how many points each is evaluated at per IPOPT iteration (for ``"auto"``; default 1).  Libraries missing from the
    cache are compiled concurrently, one compiler process per function.  A function that is not compiled
    (by the setting, for want of a compiler, or because compiling failed) is returned as it is.
    """
    functions = list(functions)
    counts = [1] * len(functions) if counts is None else list(counts)
    if setting is False or not functions:
        return functions
    cc = compiler()
    if cc is None:
        _warn_once("no-compiler", f"No C compiler found (looked for {_wanted()}); point functions run in CasADi's SX "
                                  "virtual machine (set COLLOC_CC to a compiler, or compile=False to silence this).")
        return functions
    folder, flags = cache_dir(), _flags()
    present = _cached_names(folder)
    jobs, out = [], list(functions)
    for i, (f, count) in enumerate(zip(functions, counts)):
        saved = saving(f, count) if setting == "auto" else math.inf
        worth_compiling = saved >= compile_seconds(f)
        if saved < LOAD_SECONDS or (not worth_compiling and f.name() not in present):
            continue  # would not pay even when cached, or nothing of its name is: not hashed (0.05 s for a 10⁵-instruction Hessian)
        library = folder / f"{f.name()}-{_digest(f, cc, flags)}.so"
        if library.exists():
            out[i] = _load(f, library)
        elif worth_compiling:
            jobs.append((i, library))
    if jobs:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            running = [(i, library, *_start(cc, flags, _source(functions[i]), library)) for i, library in jobs]
        except OSError as e:  # a cache folder that cannot be written, a compiler that cannot be started
            _warn_once("cannot-compile", f"Cannot compile point functions in `{folder}` ({e}); they run in CasADi's SX virtual "
                                         "machine (set COLLOC_CACHE_DIR to a writable folder).")
            return out
        for i, library, process, tmp, c_file in running:
            if _finish(process, tmp, c_file, library):
                out[i] = _load(functions[i], library)
    return out


def _cached_names(folder) -> set:
    """The names of the functions that have a library in ``folder`` (``NAME-DIGEST.so``)."""
    try:
        return {entry.name.rsplit("-", 1)[0] for entry in os.scandir(folder) if entry.name.endswith(".so")}
    except OSError:  # no cache folder yet
        return set()


def pays(f, count, cached=False) -> bool:
    """Whether compiling ``f`` (evaluated at ``count`` points) saves time over a typical solve: :func:`saving`
    against :func:`compile_seconds`, or against :data:`LOAD_SECONDS` when its library is ``cached``."""
    return saving(f, count) >= (LOAD_SECONDS if cached else compile_seconds(f))


def saving(f, count) -> float:
    """Seconds a typical solve would save with ``f`` compiled: :data:`AUTO_EVALUATIONS` iterations, each
    evaluating it at ``count`` points, of the SX virtual machine's time per point, measured here on random inputs, less
    :data:`AUTO_COMPILED` per instruction.  The virtual machine's speed per instruction varies threefold with
    the graph (its work vector's size; sines and exponentials cost compiled code as much), hence the
    measurement; a function that could not pay even at :data:`AUTO_VIRTUAL_MAX` is not timed (the bound is
    returned)."""
    n = f.n_instructions()
    bound = AUTO_EVALUATIONS * count * n * (AUTO_VIRTUAL_MAX - AUTO_COMPILED)
    if bound < min(LOAD_SECONDS, compile_seconds(f)):
        return bound
    return AUTO_EVALUATIONS * count * max(0.0, seconds_per_point(f) - n * AUTO_COMPILED)


def compile_seconds(f) -> float:
    """The CPU seconds compiling ``f`` is expected to take (:data:`AUTO_START`, :data:`AUTO_PER_INSTRUCTION`)."""
    return AUTO_START + f.n_instructions() * AUTO_PER_INSTRUCTION


def seconds_per_point(f) -> float:
    """The SX virtual machine's CPU seconds per evaluation of ``f`` (best of three, on a batch of random inputs)."""
    columns = int(min(max(2e5 / max(f.n_instructions(), 1), 16), 256))
    mapped = f.map(columns)
    rng = np.random.default_rng(0)
    args = [ca.DM(rng.uniform(0.1, 1.0, (f.size1_in(i), f.size2_in(i) * columns))) for i in range(f.n_in())]
    best = math.inf
    for _ in range(3):  # CPU seconds: wall seconds on a busy machine counted the other processes' turns
        start = time.process_time()
        mapped.call(args)
        best = min(best, time.process_time() - start)
    return best / columns


def _flags() -> tuple:
    return (*os.environ.get("COLLOC_CFLAGS", OPTIMIZATION).split(), *FLAGS)


def _wanted() -> str:
    given = os.environ.get("COLLOC_CC") or os.environ.get("CC")
    return f"`{given}`" if given else "gcc, cc, clang"


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, stacklevel=4)


def _source(f) -> str:
    """The C source of ``f`` alone (no header, no main), as CasADi's code generator writes it."""
    cg = ca.CodeGenerator(f"{f.name()}.c", {"with_header": False, "verbose": False})
    cg.add(f)
    return cg.dump()


def _digest(f, cc, flags) -> str:
    """The library's key: the SHA-256 of ``f``'s serialized expression graph (it fixes the C source; twice as
    fast to make), CasADi's version, the compiler and the flags."""
    text = "\0".join([f.serialize(), ca.__version__, os.path.basename(cc), *flags])
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _start(cc, flags, source, library):
    """Start compiling ``source`` into a temporary library beside ``library``: ``(process, tmp, c_file)``."""
    fd, c_file = tempfile.mkstemp(suffix=".c", prefix=f".{library.stem}-", dir=library.parent)
    with os.fdopen(fd, "w") as handle:
        handle.write(source)
    tmp = c_file[:-2] + ".so"
    return run_compiler([cc, *flags, c_file, "-o", tmp, "-lm"]), tmp, c_file


def run_compiler(command) -> subprocess.Popen:
    """Start the compiler (the one place a compiler process is made: tests count calls here)."""
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _finish(process, tmp, c_file, library) -> bool:
    """Wait for ``process``; on success move its library into place atomically.  ``False`` (with a warning)
    when the compiler failed."""
    output, _ = process.communicate()
    try:
        if process.returncode != 0 or not os.path.exists(tmp):
            first = (output or "").strip().splitlines()[:1]
            _warn_once(f"failed-{library.stem}", f"Compiling `{library.stem}` failed ({first[0] if first else 'no output'}); "
                                                 "it runs in CasADi's SX virtual machine.")
            return False
        os.replace(tmp, library)  # atomic: a concurrent process loads either no library or a whole one
        return True
    finally:
        for path in (c_file, tmp):
            if os.path.exists(path):
                os.remove(path)


def _load(f, library) -> ca.Function:
    """The compiled ``f`` from ``library`` (same name, inputs and outputs)."""
    return ca.external(f.name(), str(library))
