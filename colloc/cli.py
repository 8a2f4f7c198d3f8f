"""The ``colloc`` command: argument parsing and dispatch.

::

    colloc solve PROBLEM.py [--set k=v ...] [--scheme S] [--intervals N] [--guess FILE]
                 [--out DIR] [--plot] [--verbose] [--ipopt key=value ...]
    colloc plot FILE... [--out PNG]
    colloc info PROBLEM.py [--set k=v ...] [--scheme S] [--intervals N]

A problem script exposes ``build(**params) -> Problem`` and may give solve
defaults in a module-level ``SOLVE = dict(scheme=..., intervals=..., ...)``;
command-line flags override them.  Exit codes: 0 solved, 1 the solver did not
converge (files are still written), 2 usage or problem error (one line on
stderr, no traceback).
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import inspect
import os
import re
import sys
import traceback
from pathlib import Path

from . import __version__
from .errors import CollocError, OptionError, ProblemError, did_you_mean
from .mesh import make_mesh
from .plot import plot_trajectory, save_figure
from .problem import Problem
from .schemes import SCHEMES, get_scheme
from .solve import solve
from .trajectory import Trajectory
from .transcription import make_options, transcribe

EXIT_SOLVED, EXIT_NOT_CONVERGED, EXIT_ERROR = 0, 1, 2
DEFAULT_SCHEME, DEFAULT_INTERVALS = "hermite-simpson", 50


def main(argv=None) -> int:
    """Run the ``colloc`` command with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse: --help (0) or a usage error (2)
        return e.code if isinstance(e.code, int) else (EXIT_SOLVED if e.code is None else EXIT_ERROR)
    if args.command is None:
        parser.print_usage(sys.stderr)
        print("colloc: error: give a command: solve, plot or info.", file=sys.stderr)
        return EXIT_ERROR
    try:
        return args.run(args)
    except CollocError as e:
        print(f"colloc: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("colloc: interrupted.", file=sys.stderr)
        return 130


# -- parser -----------------------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="colloc", description="Trajectory optimization by direct collocation.",
        epilog="Exit codes: 0 solved, 1 not converged (files still written), 2 usage or problem error.")
    parser.add_argument("--version", action="version", version=f"colloc {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("solve", help="solve a problem script and write its trajectory",
                       description="Solve PROBLEM.py (a script with build(**params) -> Problem); write OUT/NAME.csv (and OUT/NAME.png with --plot).")
    _problem_arguments(p)
    p.add_argument("--guess", metavar="FILE", help="warm start from a trajectory file (.csv or .npz)")
    p.add_argument("--out", metavar="DIR", default="results", help="output folder (default: results/)")
    p.add_argument("--plot", action="store_true", help="also write OUT/NAME.png")
    p.add_argument("--verbose", action="store_true", help="print IPOPT's log")
    p.add_argument("--ipopt", metavar="KEY=VALUE", action="append", default=[], help="IPOPT option, e.g. max_iter=500 (repeatable)")
    p.set_defaults(run=_run_solve)

    p = sub.add_parser("plot", help="overlay trajectory files in one figure",
                       description="Plot one or more trajectory files (.csv or .npz), one subplot per variable, legend by file name.")
    p.add_argument("files", nargs="+", metavar="FILE", help="trajectory files")
    p.add_argument("--out", metavar="PNG", help="figure file (default: FILE.png for one file, overlay.png beside the first for several)")
    p.set_defaults(run=_run_plot)

    p = sub.add_parser("info", help="show a problem's variables, constraints and NLP size",
                       description="Print the variables, residual labels, constraints and NLP size of PROBLEM.py without solving it.")
    _problem_arguments(p)
    p.set_defaults(run=_run_info)
    return parser


def _problem_arguments(p):
    p.add_argument("problem", metavar="PROBLEM.py", help="problem script defining build(**params)")
    p.add_argument("--set", metavar="NAME=VALUE", action="append", default=[], dest="params",
                   help="keyword argument of build(), parsed as a Python literal (repeatable)")
    p.add_argument("--scheme", metavar="S", help=f"collocation scheme: {', '.join(SCHEMES)}, radau-1..9 (default: SOLVE or {DEFAULT_SCHEME})")
    p.add_argument("--intervals", metavar="N", type=int, help=f"number of mesh intervals (default: SOLVE or {DEFAULT_INTERVALS})")


# -- commands ---------------------------------------------------------------------------------
def _run_solve(args) -> int:
    module, problem = _load_problem(args.problem, args.params)
    kwargs = _solve_arguments(module, args)
    kwargs["ipopt"] = _ipopt_options(kwargs.get("ipopt"), args.ipopt)
    if args.guess:
        kwargs["guess"] = args.guess
    if args.verbose:
        kwargs["verbose"] = True
    created = not os.path.isdir(args.out)
    out = _output_folder(args.out)  # before the solve: a bad --out should not cost a long solve
    try:
        result = solve(problem, **kwargs)
    except CollocError:
        if created and not os.listdir(out):
            os.rmdir(out)
        raise
    print(result.summary())
    name = Path(args.problem).stem
    print(f"wrote {result.trajectory.write(out / f'{name}.csv')}")
    if args.plot:
        fig = plot_trajectory(result.trajectory, bounds=problem.bounds)
        print(f"wrote {save_figure(fig, out / f'{name}.png', close=True)}")
    return EXIT_SOLVED if result.success else EXIT_NOT_CONVERGED


def _run_info(args) -> int:
    module, problem = _load_problem(args.problem, args.params)
    kwargs = _solve_arguments(module, args)
    solve_names = {n for n, p in inspect.signature(solve).parameters.items() if p.kind is not p.VAR_KEYWORD}
    options = make_options(**{k: v for k, v in kwargs.items() if k not in solve_names})
    scheme = get_scheme(kwargs.get("scheme", DEFAULT_SCHEME))
    mesh = make_mesh(kwargs.get("intervals"), kwargs.get("mesh"))
    problem.validate()
    nlp = transcribe(problem, mesh, scheme, options)
    model = problem.model
    print(problem.summary())
    print(_listing("residual rows", model.residual_labels(options.mode), "none (every state is given in explicit form)"))
    kinds = {}
    for k in model.constraints:
        count, rows = kinds.get(k.kind, (0, 0))
        kinds[k.kind] = (count + 1, rows + k.num_rows)
    print(_listing("kinematic constraints", [f"{kind} {n} ({rows} row{'s' if rows != 1 else ''})" for kind, (n, rows) in kinds.items()], "none"))
    print(_listing("path constraints", [c.name for c in problem.paths], "none"))
    print(_listing("boundary constraints", [c.name for c in problem.boundaries], "none"))
    print(_listing("cost terms", [c.name for c in problem.costs], "none (feasibility problem)"))
    print(f"NLP ({scheme.name}, {mesh.size - 1} intervals): {nlp.layout.size} variables, {nlp.rows.size} constraints")
    print(_listing("  variables by block", [f"{b.name} {b.size}" for b in nlp.layout.blocks.values() if b.size], "none"))
    rows = {}
    for b in nlp.rows.blocks:
        kind = b.kind or b.names[0].split(":", 1)[0]
        rows[kind] = rows.get(kind, 0) + b.size
    print(_listing("  constraints by kind", [f"{k} {n}" for k, n in rows.items()], "none"))
    return EXIT_SOLVED


def _run_plot(args) -> int:
    trajs = [Trajectory.read(f) for f in args.files]
    out = args.out or _default_figure_path(args.files)
    labels = _file_labels(args.files) if len(args.files) > 1 else None
    fig = plot_trajectory(trajs, labels=labels)
    print(f"wrote {save_figure(fig, out, close=True)}")
    return EXIT_SOLVED


def _listing(title, items, empty):
    return f"{title}: {', '.join(items) if items else empty}"


def _default_figure_path(files):
    first = Path(files[0])
    return first.with_suffix(".png") if len(files) == 1 else first.parent / "overlay.png"


def _file_labels(files):
    stems = [Path(f).stem for f in files]
    if len(set(stems)) == len(stems):
        return stems
    return [str(Path(f).with_suffix("")) for f in files]  # same stem in several folders


# -- problem scripts --------------------------------------------------------------------------
def _load_problem(path, assignments):
    """Import the script at ``path``, check ``--set`` names against ``build`` and call it."""
    module = _import_script(path)
    build = getattr(module, "build", None)
    if not callable(build):
        raise ProblemError(f"Problem script `{path}` defines no `build` function; a problem script exposes `build(**params) -> Problem`.")
    params = _parse_assignments(assignments, "--set")
    _check_parameters(build, params, path)
    try:
        problem = build(**params)
    except CollocError:
        raise
    except (ValueError, TypeError) as e:
        raise ProblemError(f"`build` in `{path}`{_script_line(e, path)} raised {type(e).__name__}: {e}") from None
    if not isinstance(problem, Problem):
        raise ProblemError(f"`build` in `{path}` returned {type(problem).__name__}, not a colloc.Problem.")
    return module, problem


def _import_script(path):
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
        raise ProblemError(f"Problem script `{path}` has a syntax error at line {e.lineno}{where}: {e.msg}.") from None
    return module


def _script_line(error, path):
    """`` (line N)``: the deepest line of the script in the error's traceback, or ``""``."""
    target, line = Path(path).resolve(), ""
    for frame, lineno in traceback.walk_tb(error.__traceback__):
        if Path(frame.f_code.co_filename).resolve() == target:
            line = f" (line {lineno})"
    return line


def _check_parameters(build, params, path):
    signature = inspect.signature(build)
    accepted = signature.parameters.values()
    if not any(p.kind is p.VAR_KEYWORD for p in accepted):
        valid = [p.name for p in accepted if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        for name in params:
            if name not in valid:
                hint = did_you_mean(name, valid) or (f" Its parameters are: {', '.join(valid)}." if valid else " It takes no parameters.")
                raise OptionError(f"Unknown --set name `{name}`: `build` in `{path}` has no such parameter.{hint}")
    try:
        signature.bind(**params)
    except TypeError as e:
        raise OptionError(f"`build` in `{path}` cannot be called with the --set values ({e}); give required parameters with --set NAME=VALUE.") from None


def _parse_assignments(items, flag) -> dict:
    """``["k=v", ...]`` -> ``{k: value}``; values are Python literals, else floats (``inf``), else strings."""
    out = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise OptionError(f"{flag} takes NAME=VALUE; got `{item}`.")
        if key in out:
            raise OptionError(f"{flag} `{key}` is given twice.")
        out[key] = _literal(text.strip())
    return out


def _literal(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    try:
        return float(text)  # inf, -inf, nan
    except ValueError:
        return text


def _solve_arguments(module, args) -> dict:
    """``SOLVE`` of the script, overridden by ``--scheme`` and ``--intervals``."""
    defaults = getattr(module, "SOLVE", {})
    if not isinstance(defaults, dict):
        raise ProblemError(f"`SOLVE` in `{args.problem}` must be a dict of solve() arguments; got {type(defaults).__name__}.")
    kwargs = dict(defaults)
    if args.scheme is not None:
        kwargs["scheme"] = args.scheme
    if args.intervals is not None:
        kwargs["intervals"] = args.intervals
        kwargs.pop("mesh", None)  # an explicit --intervals replaces the script's mesh
    return kwargs


def _ipopt_options(defaults, assignments):
    if defaults is not None and not isinstance(defaults, dict):
        raise OptionError(f"`ipopt` in SOLVE must be a dict of IPOPT options; got {type(defaults).__name__}.")
    merged = dict(defaults or {})
    merged.update(_parse_assignments(assignments, "--ipopt"))
    return merged or None


def _output_folder(path) -> Path:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise OptionError(f"Cannot create output folder `{path}`: {e.strerror}.") from None
    return Path(path)


if __name__ == "__main__":
    sys.exit(main())
