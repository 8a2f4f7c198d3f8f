"""The ``colloc`` command: argument parsing and dispatch.

::

    colloc solve PROBLEM.py [--set k=v ...] [--scheme S] [--intervals N] [--guess FILE]
                 [--out DIR] [--plot] [--animate] [--quiet | --verbose] [--ipopt key=value ...]
    colloc plot FILE... [--out PNG] [--violations [--by-kind] | --refinement]
    colloc info PROBLEM.py [--set k=v ...] [--scheme S] [--intervals N]
    colloc sweep PROBLEM.py --set k=START:STOP:COUNT [--set ...] [--workers N | --scheduler ADDRESS]
                 [--continuation] [--out DIR] [--scheme S] [--intervals N] [--ipopt key=value ...] [--quiet]

A problem script exposes ``build(**params) -> Problem`` and may give solve
defaults in a module-level ``SOLVE = dict(scheme=..., intervals=..., ...)``;
command-line flags override them.  Exit codes: 0 solved, 1 the solver did not
converge (files are still written; for a sweep: some point did not), 2 usage
or problem error (one line on stderr, no traceback).
"""
from __future__ import annotations

import argparse
import inspect
import math
import os
import sys
from pathlib import Path

from . import __version__
from .errors import CollocError, OptionError
from .plot import animate, model_points, plot_refinement, plot_trajectory, plot_violations, save_figure
from .schemes import SCHEMES, get_scheme
from .script import literal, load_problem, parse_assignments, solve_defaults, split_assignments
from .solve import build_nlp, solve
from .trajectory import Trajectory

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
        print("colloc: error: give a command: solve, verify, plot, info or sweep.", file=sys.stderr)
        return EXIT_ERROR
    try:
        return args.run(args)
    except CollocError as e:
        print(f"colloc: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("colloc: interrupted.", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `colloc solve ... | head`: the reader left; files are already written
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, as a shell reports a process killed by a closed pipe


# -- parser -----------------------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="colloc", description="Trajectory optimization by direct collocation.",
        epilog="Exit codes: 0 solved, 1 not converged (files still written), 2 usage or problem error.")
    parser.add_argument("--version", action="version", version=f"colloc {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("solve", help="solve a problem script and write its trajectory",
                       description="Solve PROBLEM.py (a script with build(**params) -> Problem); write OUT/NAME.csv "
                                   "(and OUT/NAME.png with --plot, OUT/NAME.gif with --animate). One line per IPOPT "
                                   "iteration is printed unless --quiet.")
    _problem_arguments(p)
    p.add_argument("--guess", metavar="FILE", help="warm start from a trajectory file (.csv, .sto or .npz)")
    p.add_argument("--out", metavar="DIR", default="results", help="output folder (default: results/)")
    p.add_argument("--plot", action="store_true", help="also write OUT/NAME.png")
    p.add_argument("--animate", action="store_true", help="also write OUT/NAME.gif, an animation of the points of the model's Multibody components")
    loud = p.add_mutually_exclusive_group()
    loud.add_argument("--quiet", action="store_true", help="no per-iteration progress lines")
    loud.add_argument("--verbose", action="store_true", help="print IPOPT's full log instead of the progress lines")
    p.add_argument("--checkpoint-every", metavar="K", type=int, help="write the current iterate to OUT/NAME.csv every K IPOPT iterations")
    _ipopt_argument(p)
    p.set_defaults(run=_run_solve)

    p = sub.add_parser("verify", help="forward-simulate a solution with its controls and report the state error",
                       description="Integrate the model of PROBLEM.py with the controls of FILE (CasADi CVODES, or IDAS "
                                   "for implicit and constrained models) and compare with FILE's states.")
    p.add_argument("file", metavar="FILE", help="trajectory file written by colloc solve (.csv, .sto, .npz)")
    p.add_argument("problem", metavar="PROBLEM.py", help="the problem script FILE solves")
    p.add_argument("--set", metavar="NAME=VALUE", action="append", default=[], dest="params",
                   help="keyword argument of build() (default: the values FILE records from `colloc solve --set`)")
    p.add_argument("--plot", metavar="PNG", help="also save the error over time as a figure")
    p.set_defaults(run=_run_verify)

    p = sub.add_parser("plot", help="overlay trajectory files in one figure",
                       description="Plot one or more trajectory files (.csv, .sto or .npz), one subplot per variable, legend by file name; "
                                   "or the constraint violations or the mesh-refinement history the files record.")
    p.add_argument("files", nargs="+", metavar="FILE", help="trajectory files")
    p.add_argument("--out", metavar="PNG", help="figure file (default: FILE.png for one file, overlay.png beside the first for several; "
                                                 "with _violations or _refinement before the suffix for those plots)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--violations", action="store_true", help="bars of the largest violation per constraint label, as recorded by colloc solve/sweep")
    what.add_argument("--refinement", action="store_true", help="convergence of mesh refinement (error, intervals, iterations, seconds per mesh)")
    p.add_argument("--by-kind", action="store_true", help="with --violations: one bar per constraint kind instead of per label")
    p.set_defaults(run=_run_plot)

    p = sub.add_parser("info", help="show a problem's variables, constraints and NLP size",
                       description="Print the variables, residual labels, constraints and NLP size of PROBLEM.py without solving it.")
    _problem_arguments(p)
    p.set_defaults(run=_run_info)

    p = sub.add_parser("sweep", help="solve a problem script over a grid of parameters on Dask",
                       description="Solve PROBLEM.py at every point of a parameter grid, one Dask task per solve; write OUT/NAME_<i>.csv "
                                   "per point and the summary OUT/NAME_sweep.csv. Needs Dask: python -m pip install \"colloc[sweep]\".")
    _problem_arguments(p, set_help="NAME=START:STOP:COUNT sweeps COUNT evenly spaced values (several ranges form a grid); "
                                   "NAME=VALUE holds a build() argument fixed (repeatable)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", metavar="N", type=int, help="worker processes of the local Dask cluster (default: 2)")
    where.add_argument("--scheduler", metavar="ADDRESS", help="address of a running Dask scheduler, e.g. tcp://127.0.0.1:8786")
    p.add_argument("--continuation", action="store_true", help="solve the points in sequence, each warm-started from the previous one")
    p.add_argument("--out", metavar="DIR", default="results", help="output folder (default: results/)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    _ipopt_argument(p)
    p.set_defaults(run=_run_sweep)
    return parser


def _problem_arguments(p, set_help="keyword argument of build(), parsed as a Python literal (repeatable)"):
    p.add_argument("problem", metavar="PROBLEM.py", help="problem script defining build(**params)")
    p.add_argument("--set", metavar="NAME=VALUE", action="append", default=[], dest="params", help=set_help)
    p.add_argument("--scheme", metavar="S", help=f"collocation scheme: {', '.join(SCHEMES)}, radau-1..9, legendre-gauss-1..9, midpoint-vi (default: SOLVE or {DEFAULT_SCHEME})")
    p.add_argument("--intervals", metavar="N", type=int, help=f"number of mesh intervals (default: SOLVE or {DEFAULT_INTERVALS})")


def _ipopt_argument(p):
    p.add_argument("--ipopt", metavar="KEY=VALUE", action="append", default=[], help="IPOPT option, e.g. max_iter=500 (repeatable)")


# -- commands ---------------------------------------------------------------------------------
def _run_solve(args) -> int:
    params = parse_assignments(args.params, "--set")
    module, problem = load_problem(args.problem, params)
    kwargs = _solve_arguments(module, args)
    kwargs["ipopt"] = _ipopt_options(kwargs.get("ipopt"), args.ipopt)
    if args.guess:
        kwargs["guess"] = args.guess
    if args.verbose:
        kwargs["verbose"] = True
    elif not args.quiet:
        kwargs["progress"] = True
    if args.animate:
        model_points(problem)  # no points: say so before the solve, not after
    created = not os.path.isdir(args.out)
    out = _output_folder(args.out)  # before the solve: a bad --out should not cost a long solve
    if args.checkpoint_every is not None:
        kwargs["checkpoint"] = (out / f"{Path(args.problem).stem}.csv", args.checkpoint_every)
    try:
        result = solve(problem, **kwargs)
    except CollocError:
        if created and not os.listdir(out):
            os.rmdir(out)
        raise
    name = Path(args.problem).stem
    traj = result.trajectory
    traj.metadata["params"] = {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}
    traj.metadata["violations"] = dict(result.violations)  # for `colloc plot --violations`
    written = traj.write(out / f'{name}.csv')  # before any printing: a closed pipe must not lose the result
    print(result.summary())
    print(f"wrote {written}")
    if args.plot:
        fig = plot_trajectory(traj, bounds=problem.bounds)
        print(f"wrote {save_figure(fig, out / f'{name}.png', close=True)}")
    if args.animate:
        print(f"wrote {animate(traj, problem, out / f'{name}.gif')}")
    return EXIT_SOLVED if result.success else EXIT_NOT_CONVERGED


def _run_verify(args) -> int:
    from .verify import report, verify

    from .phases import MultiPhaseProblem
    from .trajectory import Trajectory

    traj = Trajectory.read(args.file)
    recorded = traj.metadata.get("params") or {}
    given = parse_assignments(args.params, "--set")
    _, problem = load_problem(args.problem, {**recorded, **given})
    if isinstance(problem, MultiPhaseProblem):
        from .verify_phases import report_phases, verify_phases

        if args.plot:
            raise OptionError("`--plot` draws single-phase simulations only; `colloc verify` of a multi-phase file prints each phase's errors.")
        sim = verify_phases(problem, traj)
        print(report_phases(sim))
        return EXIT_SOLVED if sim["success"] else EXIT_NOT_CONVERGED
    if traj.metadata.get("scheme") == "midpoint-vi":
        raise OptionError(f"`{args.file}` is a midpoint-vi solution; verify integrates collocation interpolants. "
                          "Re-simulate it with colloc.simulate instead.")
    if recorded and not given:
        print("build parameters from the file: " + ", ".join(f"{k}={v!r}" for k, v in recorded.items()))
    if traj.metadata.get("success") is False:
        print(f"note: `{args.file}` holds an unconverged iterate (status {traj.metadata.get('status')}).")
    sim = verify(problem, traj, figure=args.plot)
    print(report(sim))
    if sim.get("figure"):
        print(f"wrote {sim['figure']}")
    return EXIT_SOLVED if sim.get("success", True) else EXIT_NOT_CONVERGED


def _run_info(args) -> int:
    from .phases import MultiPhaseProblem

    module, problem = load_problem(args.problem, parse_assignments(args.params, "--set"))
    kwargs = _solve_arguments(module, args)
    solve_names = {n for n, p in inspect.signature(solve).parameters.items() if p.kind is not p.VAR_KEYWORD}
    settings = {k: v for k, v in kwargs.items() if k in ("scheme", "intervals", "mesh") or k not in solve_names}
    nlp = build_nlp(problem, **settings)
    scheme = kwargs.get("scheme", DEFAULT_SCHEME)
    if isinstance(problem, MultiPhaseProblem):
        print(problem.summary())
        intervals = sum(sub.grid.num_intervals for sub in nlp.nlps)
        print(f"NLP ({len(nlp.nlps)} phases, {intervals} intervals): {nlp.layout.size} variables, {nlp.rows.size} constraints")
        return EXIT_SOLVED
    print(problem.summary())
    if scheme != "midpoint-vi":
        _print_rows(problem, settings.get("mode", "default"))
    print(f"NLP ({get_scheme(scheme).name if scheme != 'midpoint-vi' else scheme}, {nlp.mesh.size - 1} intervals): "
          f"{nlp.layout.size} variables, {nlp.rows.size} constraints")
    if scheme == "midpoint-vi":
        return EXIT_SOLVED
    print(_listing("  variables by block", [f"{b.name} {b.size}" for b in nlp.layout.blocks.values() if b.size], "none"))
    rows = {}
    for b in nlp.rows.blocks:
        kind = b.kind or b.names[0].split(":", 1)[0]
        rows[kind] = rows.get(kind, 0) + b.size
    print(_listing("  constraints by kind", [f"{k} {n}" for k, n in rows.items()], "none"))
    return EXIT_SOLVED


def _print_rows(problem, mode):
    """Residual rows, constraints and cost terms of a single-phase problem, one listing each."""
    model = problem.model
    print(_listing("residual rows", model.residual_labels(mode), "none (every state is given in explicit form)"))
    kinds = {}
    for k in model.constraints:
        count, rows = kinds.get(k.kind, (0, 0))
        kinds[k.kind] = (count + 1, rows + k.num_rows)
    print(_listing("kinematic constraints", [f"{kind} {n} ({rows} row{'s' if rows != 1 else ''})" for kind, (n, rows) in kinds.items()], "none"))
    print(_listing("path constraints", [c.name for c in problem.paths], "none"))
    print(_listing("boundary constraints", [c.name for c in problem.boundaries], "none"))
    print(_listing("cost terms", [c.name for c in problem.costs], "none (feasibility problem)"))


def _run_plot(args) -> int:
    if args.by_kind and not args.violations:
        raise OptionError("--by-kind goes with --violations.")
    trajs = [Trajectory.read(f) for f in args.files]
    labels = _file_labels(args.files) if len(args.files) > 1 else None
    if args.violations:
        for f, t in zip(args.files, trajs):
            if "violations" not in t.metadata:
                raise OptionError(f"`{f}` records no constraint violations; files written by `colloc solve` or `colloc sweep` do.")
        fig, suffix = plot_violations(trajs, labels=labels, by="kind" if args.by_kind else "label"), "_violations"
    elif args.refinement:
        for f, t in zip(args.files, trajs):
            if "refinement" not in t.metadata:
                raise OptionError(f"`{f}` records no mesh refinement (metadata `refinement`); solve with mesh refinement to get one.")
        fig, suffix = plot_refinement(trajs, labels=labels), "_refinement"
    else:
        fig, suffix = plot_trajectory(trajs, labels=labels), ""
    out = args.out or _default_figure_path(args.files, suffix)
    print(f"wrote {save_figure(fig, out, close=True)}")
    return EXIT_SOLVED


def _run_sweep(args) -> int:
    from . import sweep as sweeping

    grid, fixed = {}, {}
    for key, text in split_assignments(args.params, "--set"):
        values = sweeping.parse_range(text)
        if values is None:
            fixed[key] = literal(text)
        else:
            grid[key] = values
    if not grid:
        raise OptionError("colloc sweep needs at least one range: --set NAME=START:STOP:COUNT (e.g. --set distance=1:2:3).")
    options = {}
    if args.scheme is not None:
        options["scheme"] = args.scheme
    if args.intervals is not None:
        options["intervals"] = args.intervals
        options["mesh"] = None  # an explicit --intervals replaces the script's mesh
    if args.ipopt:
        options["ipopt"] = parse_assignments(args.ipopt, "--ipopt")  # sweep() merges them into SOLVE's
    rows = sweeping.sweep(args.problem, grid, fixed, workers=args.workers, scheduler=args.scheduler,
                          continuation=args.continuation, out=args.out, options=options, progress=not args.quiet)
    print(_table(rows, list(grid)))
    name = Path(args.problem).stem
    print(f"wrote {len(rows)} trajectories and {Path(args.out) / f'{name}_sweep.csv'}")
    return EXIT_SOLVED if all(r["success"] for r in rows) else EXIT_NOT_CONVERGED


def _table(rows, swept):
    """The summary rows as aligned text: index, swept parameters, status, objective, iterations, seconds."""
    columns = ["index"] + [k for k in rows[0] if k in swept or k.removeprefix("set:") in swept] + ["status", "objective", "iterations", "seconds"]

    def cell(v, column):
        if isinstance(v, float):
            return "nan" if math.isnan(v) else f"{v:.3f}" if column == "seconds" else f"{v:.10g}"
        return str(v)

    cells = [[cell(r[c], c) for c in columns] for r in rows]
    widths = [max(len(c), *(len(line[i]) for line in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(columns, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(line, widths)) for line in cells]
    for r in rows:
        if r["status"] == "error":
            lines.append(f"point {r['index']}: {r['message']}")
    return "\n".join(lines)


def _listing(title, items, empty):
    return f"{title}: {', '.join(items) if items else empty}"


def _default_figure_path(files, suffix=""):
    first = Path(files[0])
    if len(files) == 1:
        return first.with_name(first.stem + suffix + ".png")
    return first.parent / f"{(suffix.lstrip('_') or 'overlay')}.png"


def _file_labels(files):
    stems = [Path(f).stem for f in files]
    if len(set(stems)) == len(stems):
        return stems
    return [str(Path(f).with_suffix("")) for f in files]  # same stem in several folders


# -- options ----------------------------------------------------------------------------------
def _solve_arguments(module, args) -> dict:
    """``SOLVE`` of the script, overridden by ``--scheme`` and ``--intervals``."""
    kwargs = solve_defaults(module, args.problem)
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
    merged.update(parse_assignments(assignments, "--ipopt"))
    return merged or None


def _output_folder(path) -> Path:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise OptionError(f"Cannot create output folder `{path}`: {e.strerror}.") from None
    return Path(path)


if __name__ == "__main__":
    sys.exit(main())
