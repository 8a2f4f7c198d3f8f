"""Reading trajectory files, and writing any file atomically.

Every reader here either returns the data or raises :class:`FileFormatError`
whose one sentence names the file and what is wrong with it: a folder, a
binary or truncated file, a missing or duplicated column, a ragged row, a
header without values.  Text files may carry a UTF-8 byte-order mark (as
spreadsheets save them) and Windows line ends; both are read as if absent.

Writes go through a temporary file in the target's folder and a rename, so a
reader sees the old file or the new one, never half of one.  The temporary
file's name carries the host and process id (``.colloc-HOST-PID-XXXX.tmp``):
:func:`remove_orphans` deletes the ones whose process is gone (a ``kill -9``
mid-write) without touching a live writer's.
"""
from __future__ import annotations

import io
import json
import os
import socket
import stat
import tempfile
import zipfile

import numpy as np

from ..errors import FileFormatError

KINDS = ("state", "control", "multiplier", "derivative", "slack")
_TMP_PREFIX = ".colloc-"


# -- reading ----------------------------------------------------------------------------------
def read_trajectory(path):
    """The columns of a ``.csv``, ``.sto`` or ``.npz`` trajectory file.

    Returns
    -------
    tuple
        ``(time, columns, kinds, parameters, metadata)``: ``time`` ndarray, shape (num_points,);
        ``columns`` dict name -> ndarray, shape (num_points,), in file order; ``kinds`` dict
        name -> kind; ``parameters`` dict name -> float; ``metadata`` dict.

    Raises
    ------
    FileFormatError
        For anything that is not a well-formed trajectory file (the message names ``path``).
    """
    path = os.fspath(path)
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in (".csv", ".sto", ".npz"):
        raise FileFormatError(f"Cannot read `{path}`: unknown suffix `{suffix}`; use .csv, .sto or .npz.")
    raw = read_bytes(path, "Trajectory file")
    if suffix == ".npz":
        out = _parse_npz(raw, path)
    else:
        text = decode_text(raw, path)
        out = _parse_sto(text, path) if suffix == ".sto" else _parse_csv(text, path)
    _check_columns(path, *out)
    return out


def read_bytes(path, what="File") -> bytes:
    """The bytes of ``path``, or a :class:`FileFormatError` for a missing file, a folder or no permission."""
    if os.path.isdir(path):
        raise FileFormatError(f"{what} `{path}` is a folder, not a file.")
    if not os.path.exists(path):
        raise FileFormatError(f"{what} `{path}` does not exist.")
    try:  # a FIFO, socket or device would block the read or never end: only regular files are read
        kind = os.stat(path).st_mode
    except OSError as e:
        raise FileFormatError(f"{what} `{path}` cannot be read: {e.strerror}.") from None
    if not stat.S_ISREG(kind):
        raise FileFormatError(f"{what} `{path}` is not a regular file (a pipe, socket or device); give a file saved on disk.")
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as e:
        raise FileFormatError(f"{what} `{path}` cannot be read: {e.strerror}.") from None


def decode_text(raw: bytes, path) -> str:
    """UTF-8 text without a byte-order mark; a binary file is refused by name."""
    if b"\x00" in raw:
        raise FileFormatError(f"`{path}` is a binary file, not a text trajectory file.")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise FileFormatError(f"`{path}` is not UTF-8 text (byte {e.start} cannot be decoded); is it a binary file?") from None


def _number(text, path, lineno):
    try:
        return float(text)
    except ValueError:
        raise FileFormatError(f"Line {lineno} of `{path}` holds `{text.strip()[:40]}`, which is not a number.") from None


def _rows(lines, path, width, sep=","):
    """``[(lineno, text)]`` -> float array, shape (num_rows, width); ragged or non-numeric rows refused."""
    data = np.empty((len(lines), width))
    for r, (lineno, line) in enumerate(lines):
        cells = line.split(sep)
        if len(cells) != width:
            raise FileFormatError(f"Line {lineno} of `{path}` has {len(cells)} values; its header has {width} columns.")
        data[r] = [_number(c, path, lineno) for c in cells]
    return data


def _json(text, path, key, kind):
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise FileFormatError(f"`{key}` in `{path}` is not valid JSON.") from None
    if not isinstance(value, kind):
        raise FileFormatError(f"`{key}` in `{path}` must be a JSON {'list' if kind is list else 'object'}; got {type(value).__name__}.")
    return value


def _parse_csv(text, path):
    meta, params, kinds, header, body = {}, {}, None, None, []
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.startswith("#"):
            key, sep, value = line[1:].strip().partition(":")
            if not sep:
                continue
            key, value = key.strip(), value.strip()
            if key == "parameters":
                params = _json(value, path, "parameters", dict)
            elif key == "kinds":
                kinds = _json(value, path, "kinds", list)
            else:
                try:
                    meta[key] = json.loads(value)
                except (json.JSONDecodeError, RecursionError):
                    meta[key] = value
        elif header is None:
            if line.strip():
                header = [c.strip() for c in line.split(",")]
                header_line = lineno
        elif line.strip():
            body.append((lineno, line))
    if header is None:
        raise FileFormatError(f"`{path}` has no header row (a row of column names starting with `time`).")
    names = _header(header, path, header_line)
    if not body:
        raise FileFormatError(f"`{path}` has a header but no rows of values.")
    data = _rows(body, path, len(names))
    return _assemble(path, names, data, kinds, params, meta)


def _parse_sto(text, path):
    lines = text.splitlines()
    try:
        end = next(i for i, line in enumerate(lines) if line.strip() == "endheader")
    except StopIteration:
        raise FileFormatError(f"`{path}` has no `endheader` line; it is not a .sto file (or it was cut off in its header).") from None
    head = dict(line.split("=", 1) for line in lines[:end] if "=" in line)
    body = [(i + 1, line) for i, line in enumerate(lines[end + 1:], end + 1) if line.strip()]
    if not body:
        raise FileFormatError(f"`{path}` has no column names after `endheader`.")
    names = _header([c.strip() for c in body[0][1].split("\t")], path, body[0][0])
    if len(body) < 2:
        raise FileFormatError(f"`{path}` has a header but no rows of values.")
    data = _rows(body[1:], path, len(names), "\t")
    meta = _json(head["colloc_metadata"], path, "colloc_metadata", dict) if "colloc_metadata" in head else {}
    if "colloc_kinds" in head:
        kinds = _json(head["colloc_kinds"], path, "colloc_kinds", list)
    else:  # an OpenSim file: kinds from the counts, in MocoTrajectory order
        kinds = []
        for k in KINDS:
            try:
                kinds += [k] * int(head.get(f"num_{k}s", 0))
            except ValueError:
                raise FileFormatError(f"`num_{k}s` in `{path}` is not a whole number.") from None
    others = [n for n in names if n != "time"]
    if len(kinds) > len(others):
        raise FileFormatError(f"`{path}` lists {len(kinds)} kinds for {len(others)} columns.")
    # parameters follow the time-varying columns; a parameter's value is in the first row
    params = {n: float(data[0, names.index(n)]) for n in others[len(kinds):]}
    keep = ["time"] + others[:len(kinds)]
    return _assemble(path, keep, data[:, [names.index(n) for n in keep]], kinds, params, meta)


def _header(names, path, lineno):
    """Column names: ``time`` present once, no name empty or repeated."""
    seen = set()
    for n in names:
        if not n:
            raise FileFormatError(f"Line {lineno} of `{path}` (its header) has an empty column name.")
        if n in seen:
            raise FileFormatError(f"`{path}` has two columns named `{n}`; every column needs its own name.")
        seen.add(n)
    if "time" not in seen:
        raise FileFormatError(f"`{path}` has no `time` column (header line {lineno}: {', '.join(names[:5])}{' …' if len(names) > 5 else ''}).")
    return names


def _assemble(path, names, data, kinds, params, meta):
    """Split the ``time`` column off, pair every other column with its kind."""
    t = names.index("time")
    others = [n for n in names if n != "time"]
    cols = {n: data[:, i] for i, n in enumerate(names) if i != t}
    if kinds is None:
        kinds = ["derivative" if n.endswith(".dot") else "state" for n in others]
    if len(kinds) != len(others):
        raise FileFormatError(f"`{path}` lists {len(kinds)} kinds for {len(others)} columns.")
    if not all(isinstance(k, str) for k in kinds):
        raise FileFormatError(f"The kinds in `{path}` must be names such as \"state\" or \"control\".")
    if not all(isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool) for k, v in params.items()):
        raise FileFormatError(f"The parameters in `{path}` must map names to numbers.")
    return data[:, t], cols, dict(zip(others, kinds)), {k: float(v) for k, v in params.items()}, meta


def _parse_npz(raw, path):
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as f:
            missing = [k for k in ("time", "values", "names", "meta") if k not in f.files]
            if missing:
                raise FileFormatError(f"`{path}` is not a colloc .npz trajectory: it has no `{missing[0]}` array.")
            time, values, names, meta_text = f["time"], f["values"], f["names"], f["meta"]
    except FileFormatError:
        raise
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError, TypeError, zipfile.LargeZipFile, NotImplementedError) as e:
        raise FileFormatError(f"`{path}` is not a readable .npz file (truncated or corrupt: {type(e).__name__}).") from None
    if names.ndim != 1 or names.dtype.kind not in "US":
        raise FileFormatError(f"`names` in `{path}` must be a list of column names.")
    names = [str(n) for n in names]
    if time.ndim != 1 or time.dtype.kind not in "fiu" or values.dtype.kind not in "fiu":
        raise FileFormatError(f"`time` and `values` in `{path}` must be arrays of numbers.")
    if values.shape != (time.size, len(names)):
        raise FileFormatError(f"`values` in `{path}` has shape {values.shape}; {time.size} times and {len(names)} names need ({time.size}, {len(names)}).")
    meta = _json(str(meta_text), path, "meta", dict)
    kinds = meta.get("kinds", ["state"] * len(names))
    if not isinstance(kinds, list):
        raise FileFormatError(f"`kinds` in `{path}` must be a list.")
    params, metadata = meta.get("parameters", {}), meta.get("metadata", {})
    if not isinstance(params, dict) or not isinstance(metadata, dict):
        raise FileFormatError(f"`parameters` and `metadata` in `{path}` must be JSON objects.")
    _header(["time"] + names, path, 1)
    data = np.column_stack([time.astype(float), values.astype(float)]) if names else time.astype(float).reshape(-1, 1)
    return _assemble(path, ["time"] + names, data, kinds, params, metadata)


#: Metadata colloc reads back, and the JSON type each must have.
_METADATA_TYPES = {"scheme": str, "problem": str, "status": str, "params": dict, "violations": dict, "refinement": list,
                   "phases": list, "success": bool}


def _check_columns(path, time, columns, kinds, parameters, metadata):
    if time.size < 2:
        raise FileFormatError(f"`{path}` has {time.size} row{'s' if time.size != 1 else ''} of values; a trajectory needs at least two times.")
    for key, kind in _METADATA_TYPES.items():
        if key in metadata and metadata[key] is not None and not isinstance(metadata[key], kind):
            raise FileFormatError(f"Metadata `{key}` in `{path}` must be a JSON {kind.__name__}; got {type(metadata[key]).__name__}.")
    for value in (metadata.get("violations") or {}).values():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise FileFormatError(f"Metadata `violations` in `{path}` must map constraint labels to numbers.")


# -- writing ----------------------------------------------------------------------------------
def atomic_write(path, data: bytes):
    """Write ``data`` to ``path`` through a temporary file and a rename."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileFormatError(f"Cannot write `{path}`: folder `{folder}` does not exist.")
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f"{_TMP_PREFIX}{_host()}-{os.getpid()}-", suffix=".tmp")
    except OSError as e:
        raise FileFormatError(f"Cannot write `{path}`: {e.strerror}.") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give the file the usual permissions
        os.replace(tmp, path)
    except BaseException as e:  # also KeyboardInterrupt: leave no temporary file behind
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise FileFormatError(f"Cannot write `{path}`: {e.strerror}.") from None
        raise


def remove_orphans(folder) -> list:
    """Delete the temporary files of writers on this host that no longer run; return their paths."""
    removed = []
    try:
        entries = os.listdir(folder)
    except OSError:
        return removed
    prefix = f"{_TMP_PREFIX}{_host()}-"
    for entry in entries:
        if not (entry.startswith(prefix) and entry.endswith(".tmp")):
            continue
        pid = entry[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and not process_alive(int(pid)):
            try:
                os.unlink(os.path.join(folder, entry))
                removed.append(os.path.join(folder, entry))
            except OSError:
                pass
    return removed


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this host (a zombie counts as gone)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _host():
    return "".join(c if c.isalnum() else "_" for c in socket.gethostname())[:40] or "host"


def writable_folder(path, flag="--out"):
    """Create folder ``path`` if needed and make sure files can be written in it.

    Returns ``(folder, created)``; raises :class:`~colloc.errors.OptionError` in one sentence otherwise.
    """
    from ..errors import OptionError

    path = os.fspath(path)
    if os.path.exists(path) and not os.path.isdir(path):
        raise OptionError(f"{flag} `{path}` is a file, not a folder.")
    created = not os.path.isdir(path)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise OptionError(f"Cannot create output folder `{path}` ({flag}): {e.strerror}.") from None
    try:
        fd, probe = tempfile.mkstemp(dir=path, prefix=f"{_TMP_PREFIX}{_host()}-{os.getpid()}-", suffix=".tmp")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        if created:
            _remove_empty(path)
        raise OptionError(f"Output folder `{path}` ({flag}) is not writable: {e.strerror}.") from None
    return path, created


def _remove_empty(path):
    try:
        os.rmdir(path)
    except OSError:
        pass


__all__ = ["read_trajectory", "read_bytes", "decode_text", "atomic_write", "remove_orphans", "process_alive", "writable_folder"]
