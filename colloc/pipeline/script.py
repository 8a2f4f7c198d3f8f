"""Problem scripts: import one by path, check ``--set`` names against its ``build`` and call it.

A problem script exposes ``build(**params) -> Problem`` and may give solve
defaults in a module-level ``SOLVE = dict(scheme=..., intervals=..., ...)``.
Used by the command line (``colloc solve/info/sweep``) and by sweep workers,
which load the script by path in their own process.
"""
from __future__ import annotations

import ast
import importlib.util
import inspect
import re
import sys
import traceback
from pathlib import Path

from ..errors import CollocError, did_you_mean, OptionError, ProblemError, UserCodeError
from ..model.problem import Problem


def load_problem(path, params=None):
    """Import the script at ``path`` and call its ``build(**params)``; return ``(module, problem)``."""
    module = import_script(path)
    return module, build_problem(module, path, params or {})


def build_problem(module, path, params: dict) -> Problem:
    """``module.build(**params)``, with every mistake turned into a one-line colloc error."""
    build = build_function(module, path)
    check_parameters(build, params, path)
    try:
        problem = build(**params)
    except CollocError as e:
        e.frames = user_frames(e)  # the line of the script that made the mistake
        raise
    except Exception as e:  # noqa: BLE001  any error in the user's code is bad input, shown as their frames
        raise UserCodeError(f"`build` in `{path}`{_script_line(e, path)} raised {_cause(e)}", user_frames(e)) from None
    except SystemExit as e:
        raise UserCodeError(f"`build` in `{path}`{_script_line(e, path)} called exit({e.code!r}); "
                            "`build` must return a colloc.Problem.", user_frames(e)) from None
    from .multiphase_problem import MultiPhaseProblem

    if not isinstance(problem, (Problem, MultiPhaseProblem)):
        raise ProblemError(f"`build` in `{path}` returned {type(problem).__name__}, not a colloc.Problem or MultiPhaseProblem.")
    problem.source = (str(Path(path).resolve()), dict(params))  # how a Dask worker rebuilds it (multi-start)
    return problem


def build_function(module, path):
    """The script's ``build``, or a :class:`ProblemError` if it has none."""
    build = getattr(module, "build", None)
    if not callable(build):
        raise ProblemError(f"Problem script `{path}` defines no `build` function; a problem script exposes `build(**params) -> Problem`.")
    return build


def import_script(path):
    """Import a Python file by path as module ``colloc_script_<stem>`` (re-executed on every call)."""
    file = Path(path)
    if not file.is_file():
        raise ProblemError(f"Problem script `{path}` does not exist." if not file.exists() else f"Problem script `{path}` is not a file.")
    name = "colloc_script_" + re.sub(r"\W", "_", file.stem)
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ProblemError(f"Problem script `{path}` cannot be imported; give a Python file ending in .py.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        sys.modules.pop(name, None)
        where = "" if e.filename and Path(e.filename).resolve() == file.resolve() else f" (in `{e.filename}`)"
        frames = [f'File "{e.filename}", line {e.lineno}: {(e.text or "").strip()}'] if e.text else []
        raise UserCodeError(f"Problem script `{path}` has a syntax error at line {e.lineno}{where}: {e.msg}.", frames) from None
    except Exception as e:  # noqa: BLE001  NameError, ImportError ... at the script's top level
        sys.modules.pop(name, None)
        raise UserCodeError(f"Importing problem script `{path}`{_script_line(e, path)} raised {_cause(e)}", user_frames(e)) from None
    except SystemExit as e:
        sys.modules.pop(name, None)
        raise UserCodeError(f"Problem script `{path}` called exit({e.code!r}) while being imported; "
                            "a problem script only defines `build`.", user_frames(e)) from None
    return module


def _cause(error) -> str:
    """``NameError: name 'x' is not defined.``: the exception's type and message as one sentence."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    if isinstance(error, KeyError) and error.args:
        text = f"key {error.args[0]!r} is not in the mapping"
    if isinstance(error, ModuleNotFoundError) and error.name:
        text = f"no module named `{error.name}` (is it installed, or on the script's folder path?)"
    sentence = f"{type(error).__name__}: {text}" if text else type(error).__name__
    return sentence if sentence.endswith((".", "?", ")")) else sentence + "."


def _system_dirs():
    """Folders whose files are not the user's: colloc itself, the standard library and installed packages."""
    import sysconfig

    dirs = {str(Path(__file__).resolve().parent)}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        try:
            dirs.add(str(Path(sysconfig.get_paths()[key]).resolve()))
        except (KeyError, OSError):
            pass
    return tuple(d + "/" for d in dirs)


def user_frames(error) -> list:
    """The traceback of ``error`` reduced to frames in the user's files: ``File "f.py", line 3, in build: code``."""
    system = _system_dirs()
    out = []
    for summary in traceback.extract_tb(error.__traceback__):
        name = summary.filename
        if name.startswith("<") or str(Path(name).resolve()).startswith(system):
            continue
        line = f'File "{name}", line {summary.lineno}, in {summary.name}'
        out.append(line + (f": {summary.line.strip()}" if summary.line else ""))
    return _collapse(out)


def _collapse(frames, keep=3) -> list:
    """Runs of one repeated frame (a runaway recursion) as ``keep`` frames and a count of the rest."""
    out, k = [], 0
    while k < len(frames):
        j = k
        while j < len(frames) and frames[j] == frames[k]:
            j += 1
        out += frames[k:k + min(j - k, keep)]
        if j - k > keep:
            out.append(f"(the same frame {j - k - keep} more times)")
        k = j
    return out


def _script_line(error, path):
    """`` (line N)``: the deepest line of the script in the error's traceback, or ``""``."""
    target, line = Path(path).resolve(), ""
    for frame, lineno in traceback.walk_tb(error.__traceback__):
        if Path(frame.f_code.co_filename).resolve() == target:
            line = f" (line {lineno})"
    return line


def build_parameters(build) -> list | None:
    """Names ``build`` accepts as keywords, or ``None`` when it takes ``**kwargs``."""
    accepted = inspect.signature(build).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in accepted):
        return None
    return [p.name for p in accepted if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def check_parameters(build, params, path, flag="--set"):
    """Raise :class:`OptionError` for a name ``build`` does not take, a required one left out, or a value of the wrong kind.

    The expected kind of a value is read from the parameter's default (or annotation):
    a number where the default is an ``int`` or ``float``, ``True``/``False`` where it is a ``bool``.
    """
    valid = build_parameters(build)
    if valid is not None:
        for name in params:
            if name not in valid:
                hint = did_you_mean(name, valid) or (f" Its parameters are: {', '.join(valid)}." if valid else " It takes no parameters.")
                raise OptionError(f"Unknown {flag} name `{name}`: `build` in `{path}` has no such parameter.{hint}")
    try:
        inspect.signature(build).bind(**params)
    except TypeError as e:
        raise OptionError(f"`build` in `{path}` cannot be called with the {flag} values ({e}); give required parameters with {flag} NAME=VALUE.") from None
    for name, value in params.items():
        _check_type(inspect.signature(build).parameters.get(name), value, flag)


def _expected_type(parameter) -> str | None:
    """``"a number"`` or ``"True or False"`` when ``parameter``'s default or annotation says so, else ``None``."""
    default, note = parameter.default, parameter.annotation
    if isinstance(default, bool) or note in (bool, "bool"):
        return "True or False"
    if isinstance(default, (int, float)) or note in (int, float, "int", "float"):
        return "a number"
    return None


def _check_type(parameter, value, flag):
    """Refuse a value of the wrong kind before ``build`` turns it into a CasADi error."""
    expected = None if parameter is None else _expected_type(parameter)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected is None or (expected == "a number" and number) or (expected == "True or False" and isinstance(value, bool)):
        return
    got = f"the text `{value}`" if isinstance(value, str) else f"`{value!r}` ({type(value).__name__})"
    since = f"its default is {parameter.default!r}" if parameter.default is not parameter.empty else "it is annotated so"
    raise OptionError(f"{flag} `{parameter.name}` expects {expected} ({since}) but got {got}.")


def parse_assignments(items, flag) -> dict:
    """``["k=v", ...]`` -> ``{k: value}``; values are Python literals, else floats (``inf``), else strings."""
    out = {}
    for key, text in split_assignments(items, flag):
        out[key] = literal(text)
    return out


def split_assignments(items, flag):
    """``["k=v", ...]`` -> ``[(k, "v"), ...]``, refusing a missing name or ``=`` and repeated names."""
    out, seen = [], set()
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise OptionError(f"{flag} takes NAME=VALUE; got `{item}`.")
        if key in seen:
            raise OptionError(f"{flag} `{key}` is given twice.")
        seen.add(key)
        out.append((key, text.strip()))
    return out


def literal(text):
    """A Python literal, else a float (``inf``, ``nan``), else the text itself."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    try:
        return float(text)
    except ValueError:
        return text


def solve_defaults(module, path) -> dict:
    """A copy of the script's ``SOLVE`` dict (empty if it has none)."""
    defaults = getattr(module, "SOLVE", {})
    if not isinstance(defaults, dict):
        raise ProblemError(f"`SOLVE` in `{path}` must be a dict of solve() arguments; got {type(defaults).__name__}.")
    return dict(defaults)


__all__ = ["UserCodeError", "user_frames", "load_problem", "build_problem", "build_function", "import_script", "check_parameters", "build_parameters",
           "parse_assignments", "split_assignments", "literal", "solve_defaults"]


def recorded_params(path, file, recorded) -> dict:
    """A file's recorded ``--set`` values, refused by name when ``build`` in ``path`` does not take one (another problem's file)."""
    from ..errors import FileFormatError

    accepted = build_parameters(build_function(import_script(path), path))
    for key in recorded:
        if accepted is not None and key not in accepted:
            raise FileFormatError(f"`{file}` was solved with --set {key}={recorded[key]!r}, but `build` in `{path}` takes "
                                  f"no parameter `{key}`; is it a solution of another problem?")
    return recorded


def recordable(params) -> dict:
    """``params`` as a file records them: a tuple as a list (what the file's JSON gives back)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}


def overridden_params(file, recorded, given) -> list:
    """One sentence per ``--set`` value that differs from the one ``file`` records (a tuple is recorded as a list)."""
    as_recorded = recordable(given)
    return [f"`{file}` was solved with {key}={recorded[key]!r}; verifying with --set {key}={given[key]!r} instead, "
            "which builds another problem than the file's." for key in sorted(set(recorded) & set(given))
            if as_recorded[key] != recorded[key]]
