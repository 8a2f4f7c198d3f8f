"""The ``colloc`` command: argument parsing and dispatch.

::

    colloc solve PROBLEM.py [--set k=v ...] [--scheme S] [--intervals N] [--guess FILE] [--force]
                 [--out DIR] [--plot] [--animate] [--quiet | --verbose] [--ipopt key=value ...]
                 [--backend ipopt|fatrop] [--fatrop key=value ...]
                 [--starts N [--seed S] [--workers N | --scheduler ADDRESS]]
    colloc plot FILE... [--out PNG] [--violations [--by-kind] | --refinement]
    colloc verify FILE PROBLEM.py [--set k=v ...] [--tolerance TOL] [--dynamics-tolerance TOL] [--plot PNG]
    colloc info PROBLEM.py [--set k=v ...] [--scheme S] [--intervals N]   (or MODEL.osim: what colloc reads from it)
    colloc sweep PROBLEM.py --set k=START:STOP:COUNT [--set ...] [--workers N | --scheduler ADDRESS]
                 [--continuation] [--point-timeout SECONDS] [--out DIR] [--scheme S] [--intervals N] [--ipopt key=value ...] [--quiet]

A problem script exposes ``build(**params) -> Problem`` and may give solve
defaults in a module-level ``SOLVE = dict(scheme=..., intervals=..., ...)``;
command-line flags override them.  ``solve`` writes ``OUT/NAME.csv`` with NAME
the script's stem and the ``--set`` values (:func:`colloc.batch.outputs.result_name`).  Exit codes are a contract (:data:`EXIT_CODES`):
0 solved or verified, 1 not converged or verification failed (files are still
written), 2 bad input (one sentence on stderr; for an error in the user's script
also its frames, never colloc's), 130 interrupted, 70 an internal error (one line
naming a file that holds the traceback).
"""
from __future__ import annotations

import argparse
import math
import os
import re
import sys
import warnings
from pathlib import Path

from .. import __version__, opensim
from ..simulate.checks import DYNAMICS_TOLERANCE, TOLERANCE
from ..errors import CollocError, OptionError
from ..results.files import writable_folder
from ..transcription.nlp import BLOCK_LEGEND, TERM_LEGEND, bound_note
from ..batch.outputs import ResultSlot, result_name, write_optima, write_or_rescue
from ..viz.plot import animate, bounds_to_record, model_points, plot_refinement, plot_trajectory, plot_violations, save_figure
from ..discretization.mesh import DEFAULT_INTERVALS
from ..discretization.schemes import get_scheme
from ..solvers import BACKENDS
from .streams import crash_report, guarded_stdout, sigterm_interrupts
from ..pipeline.cluster import check_cluster
from ..pipeline.script import literal, load_problem, parse_assignments, overridden_params, recordable, recorded_params, solve_defaults, split_assignments
from ..pipeline.options import SolveOptions
from ..pipeline.solve import build_nlp, run_pipeline
from ..results.trajectory import Trajectory
from ..transcription.guess import check_times
from ..transcription.registry import by_scheme, of_trajectory

#: The exit-code contract (docs/cli.md "Exit codes", docs/reliability.md).
EXIT_SOLVED, EXIT_NOT_CONVERGED, EXIT_ERROR, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 70, 130
EXIT_CODES = ("Exit codes: 0 solved (verify: passed); 1 not converged, files still written (verify: failed; sweep: some "
              "point did not solve); 2 bad input: problem script, file or option, one sentence on stderr; 130 interrupted "
              "(Ctrl-C or SIGTERM; what was done is written); 70 internal error in colloc: one line on stderr naming a file "
              "that holds the full traceback.")
DEFAULT_SCHEME = SolveOptions.scheme  # the field's default


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
        with warnings.catch_warnings(), guarded_stdout(), sigterm_interrupts():  # a closed or full stdout drops text, never a result
            warnings.formatwarning = _format_warning  # (recording warnings, as tests do, still works)
            return args.run(args)
    except CollocError as e:
        frames = getattr(e, "frames", None)  # an error in the user's script: where in it, on the same line
        print(f"colloc: error: {e}" + (f"  [{' → '.join(frames)}]" if frames else ""), file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("colloc: interrupted.", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `colloc solve ... | head`: the reader left; files are already written
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, as a shell reports a process killed by a closed pipe
    except Exception as e:  # noqa: BLE001  a fault of colloc itself: one line here, the traceback in a file
        report = crash_report(e, argv)
        print(f"colloc: internal error ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else 'no message'}); "
              f"this is a fault in colloc, not in your input. Full traceback: {report}", file=sys.stderr)
        return EXIT_INTERNAL


def _format_warning(message, category, filename, lineno, line=None):
    """A warning as one line, ``colloc: warning: ...``, without the source line Python would add."""
    return f"colloc: warning: {message}\n"


# -- parser -----------------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    """argparse with usage errors as one line (the documented contract) instead of the usage block."""

    def error(self, message):
        self.exit(EXIT_ERROR, f"colloc: error: {self.prog}: {message} (see `{self.prog} --help`).\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="colloc", description="Trajectory optimization by direct collocation.",
        epilog=EXIT_CODES)
    parser.add_argument("--version", action="version", version=f"colloc {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("solve", epilog=EXIT_CODES, help="solve a problem script and write its trajectory",
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
    p.add_argument("--checkpoint-every", metavar="K", type=int, help="write the current iterate to OUT/NAME.csv every K IPOPT iterations "
                                                                    "(to OUT/NAME.unconverged.csv when OUT/NAME.csv holds a converged result)")
    p.add_argument("--force", action="store_true", help="let an unconverged or interrupted result replace a converged OUT/NAME.csv "
                                                         "(by default it is written to OUT/NAME.unconverged.csv)")
    _ipopt_argument(p)
    p.add_argument("--backend", choices=tuple(BACKENDS), help="NLP solver (default: SOLVE or ipopt); fatrop takes single-phase "
                                                                  "collocation with a fixed final time and no parameters")
    p.add_argument("--fatrop", metavar="KEY=VALUE", action="append", default=[], help="FATROP option, e.g. max_iter=500 (repeatable; "
                                                                                     "with --backend fatrop)")
    _starts_arguments(p)
    p.set_defaults(run=_run_solve)

    _verify_parser(sub)
    p = sub.add_parser("plot", epilog=EXIT_CODES, help="overlay trajectory files in one figure",
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

    p = sub.add_parser("info", epilog=EXIT_CODES, help="show a problem's variables, constraints and NLP size",
                       description="Print the variables, residual labels, constraints and NLP size of PROBLEM.py without solving it (of an OpenSim MODEL.osim, what colloc reads from it).")
    _problem_arguments(p)
    p.set_defaults(run=_run_info)

    _sweep_parser(sub)
    return parser


def _starts_arguments(p):
    p.add_argument("--starts", metavar="N", type=int, help="multi-start: solve from the script's guess and N-1 seeded perturbations of it "
                                                           "(on a local Dask cluster), keep the best and write each distinct local optimum")
    p.add_argument("--seed", metavar="S", type=int, default=0, help="seed of the --starts perturbations (default 0)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", metavar="N", type=int, help="with --starts: processes of the local Dask cluster (default: 2)")
    where.add_argument("--scheduler", metavar="ADDRESS", help="with --starts: a running Dask scheduler, e.g. tcp://127.0.0.1:8786")


def _verify_parser(sub):
    p = sub.add_parser("verify", epilog=EXIT_CODES, help="check that a file solves a problem; forward-simulate it and report the state error",
                       description="Check that FILE solves PROBLEM.py (time, horizon, finite values, boundary conditions, bounds, path "
                                   "and endpoint constraints, the scheme's defects and the derivative columns at every grid point, the recorded objective, each mesh interval simulated alone) and print a verdict per check with its "
                                   "tolerance; then integrate the model with the controls of FILE (CasADi CVODES, or IDAS for implicit "
                                   "and constrained models) and compare with FILE's states. Any failed check exits 1.")
    p.add_argument("file", metavar="FILE", help="trajectory file written by colloc solve (.csv, .sto, .npz)")
    p.add_argument("problem", metavar="PROBLEM.py", help="the problem script FILE solves")
    p.add_argument("--set", metavar="NAME=VALUE", action="append", default=[], dest="params",
                   help="keyword argument of build() (default: the values FILE records from `colloc solve --set`)")
    p.add_argument("--plot", metavar="PNG", help="also save the error over time as a figure")
    p.add_argument("--tolerance", metavar="TOL", type=float, default=TOLERANCE,
                   help=f"of the boundary-condition, bound and path checks, times max(1, |bound|) (default {TOLERANCE:g})")
    p.add_argument("--dynamics-tolerance", metavar="TOL", type=float, default=None,
                   help="of each state's error at the end of every mesh interval simulated alone from the file's state at its start, "
                        "times max(1, median |state| over the interval and its neighbours) (default: the local error the file's "
                        f"solve estimated, propagated over one interval, when the file records it; else {DYNAMICS_TOLERANCE:g})")
    p.set_defaults(run=_run_verify)


def _sweep_parser(sub):
    p = sub.add_parser("sweep", epilog=EXIT_CODES, help="solve a problem script over a grid of parameters on Dask",
                       description="Solve PROBLEM.py at every point of a parameter grid, one Dask task per solve; write OUT/NAME_<i>.csv "
                                   "per point and the summary OUT/NAME_sweep.csv. Needs Dask: python -m pip install \"colloc[sweep]\".")
    _problem_arguments(p, set_help="NAME=START:STOP:COUNT sweeps COUNT evenly spaced values (several ranges form a grid); "
                                   "NAME=VALUE holds a build() argument fixed (repeatable)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", metavar="N", type=int, help="worker processes of the local Dask cluster (default: 2)")
    where.add_argument("--scheduler", metavar="ADDRESS", help="address of a running Dask scheduler, e.g. tcp://127.0.0.1:8786")
    p.add_argument("--continuation", action="store_true", help="solve the points in sequence, each warm-started from the previous one")
    p.add_argument("--point-timeout", metavar="SECONDS", type=float,
                   help="time limit of one point; a point past it is listed as timed-out and its worker restarted")
    p.add_argument("--out", metavar="DIR", default="results", help="output folder (default: results/)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    _ipopt_argument(p)
    p.set_defaults(run=_run_sweep)


def _problem_arguments(p, set_help="keyword argument of build(), parsed as a Python literal (repeatable)"):
    p.add_argument("problem", metavar="PROBLEM.py", help="problem script defining build(**params)")
    p.add_argument("--set", metavar="NAME=VALUE", action="append", default=[], dest="params", help=set_help)
    p.add_argument("--scheme", metavar="S", help=f"collocation scheme: trapezoidal, hermite-simpson, radau-1..9, legendre-gauss-1..9, midpoint-vi (default: SOLVE or {DEFAULT_SCHEME})")
    p.add_argument("--intervals", metavar="N", type=int, help=f"number of mesh intervals (default: SOLVE or {DEFAULT_INTERVALS})")


def _ipopt_argument(p):
    p.add_argument("--ipopt", metavar="KEY=VALUE", action="append", default=[], help="IPOPT option, e.g. max_iter=500 (repeatable)")


# -- commands ---------------------------------------------------------------------------------
def _run_solve(args) -> int:
    params = parse_assignments(args.params, "--set")
    _check_solve_flags(args)
    # everything the user gave is checked before `build` runs: a bad --out or --guess must not cost a build
    folder, created = writable_folder(args.out)
    out = Path(folder).resolve()  # absolute: a build() that changes the working folder must not move the result
    # the result's name is claimed before `build` runs: a run started while another builds or solves writes
    # NAME-2.csv, however soon the other finishes, instead of replacing its result
    slot = ResultSlot(out, result_name(Path(args.problem).stem, params), force=args.force)
    try:
        slot.check_targets()
        guess = _read_guess(args.guess)
        module, problem = load_problem(args.problem, params)
        options = _options(module, args, guess, slot)
        if args.animate:
            model_points(problem)  # no points: say so before the solve, not after
    except BaseException:
        slot.release()
        if created:
            _remove_empty(folder)
        raise
    with slot:
        for note in slot.notes:
            print(f"note: {note}", file=sys.stderr)
        slot.notes.clear()
        try:
            result = run_pipeline(problem, options)
        except BaseException:
            slot.release()
            if created:
                _remove_empty(out)
            raise
        traj = result.trajectory
        given = recordable(params)
        traj.metadata["params"] = {**(traj.metadata.get("params") or {}), **given}  # with those build() records itself
        traj.metadata["violations"] = dict(result.violations)  # for `colloc plot --violations`
        traj.metadata["bounds"] = bounds_to_record(getattr(problem, "bounds", None))  # `colloc plot` draws them
        target = slot.result_path(result.success)
        written, lost = write_or_rescue(traj, target)  # before any printing: a closed pipe must not lose the result
        optima = []
        if lost is None:
            slot.finish(result.success)
            optima = write_optima(result, out, slot, traj, target)
    print(result.summary())
    if lost is not None:  # the result is safe elsewhere; the exit says the asked-for file is not there
        print(f"colloc: error: {lost}", file=sys.stderr)
        return EXIT_ERROR
    print(f"wrote {written}")
    for path in optima:
        print(f"wrote {path}")
    for note in slot.notes:
        print(f"note: {note}")
    stem = Path(written).stem
    if args.plot:
        fig = plot_trajectory(traj, bounds=problem.bounds)
        print(f"wrote {save_figure(fig, out / f'{stem}.png', close=True)}")
    if args.animate:
        print(f"wrote {animate(traj, problem, out / f'{stem}.gif')}")
    if result.status.value == "interrupted" or any(s["status"] == "interrupted" for s in result.starts or []):
        return EXIT_INTERRUPTED  # Ctrl-C or SIGTERM: the iterate (or the best start) is written, the exit says why
    return EXIT_SOLVED if result.success else EXIT_NOT_CONVERGED


def _options(module, args, guess, slot) -> SolveOptions:
    """The script's ``SOLVE`` with the flags of ``colloc solve`` applied, every option checked once (before the
    transcription is built)."""
    kwargs = _solve_arguments(module, args)
    _backend_options(kwargs, args)
    _reporting_arguments(kwargs, args, guess)
    if args.checkpoint_every is not None:
        kwargs["checkpoint"] = (slot.unconverged_path, args.checkpoint_every)
    return SolveOptions.of(**kwargs)


def _reporting_arguments(kwargs, args, guess):
    """The guess, multi-start and progress arguments of ``colloc solve`` into ``kwargs``."""
    if guess is not None:
        kwargs["guess"] = guess
    if args.starts is not None:
        kwargs.update(starts=args.starts, seed=args.seed, scheduler=args.scheduler, workers=args.workers,
                      progress=None if args.quiet else _print_start)
    elif args.verbose:
        kwargs["verbose"] = True
    elif not args.quiet:
        kwargs["progress"] = True


def _read_guess(path):
    """The ``--guess`` file, its times checked (what can be judged without the problem, before `build` runs)."""
    if not path:
        return None
    guess = Trajectory.read(path)
    check_times(guess)
    return guess


def _check_solve_flags(args):
    if args.checkpoint_every is not None and args.checkpoint_every < 1:
        raise OptionError(f"--checkpoint-every must be at least 1; got {args.checkpoint_every}.")
    if args.starts is None:
        for flag, value in (("--workers", args.workers), ("--scheduler", args.scheduler)):
            if value is not None:
                raise OptionError(f"{flag} goes with --starts (multi-start); a single solve runs in this process.")
    elif args.starts < 1:
        raise OptionError(f"--starts must be at least 1; got {args.starts}.")
    elif args.checkpoint_every is not None:
        raise OptionError("--checkpoint-every cannot be combined with --starts; solve the best start again to checkpoint it.")
    elif args.starts > 1:
        check_cluster(args.workers, args.scheduler)  # e.g. more workers than cores: said before the build


def _print_start(k, res):
    """One line per finished multi-start start."""
    if not hasattr(res, "objective"):  # colloc.pipeline.multistart.Failed
        print(f"start {k}: {res.status}: {res.message}", flush=True)
    else:
        print(f"start {k}: {res.status.value}, objective {res.objective:.10g}, {res.iterations} iterations", flush=True)


def _run_verify(args) -> int:
    from ..simulate.checks import basic_checks, check_columns
    from ..simulate.checks import report as checks_report
    from ..simulate.verify import report, verify

    from ..pipeline.multiphase_problem import MultiPhaseProblem
    from ..results.trajectory import Trajectory

    for flag, value in (("--tolerance", args.tolerance), ("--dynamics-tolerance", args.dynamics_tolerance)):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise OptionError(f"{flag} must be a positive number; got {value:g}.")
    traj = Trajectory.read(args.file)
    recorded = traj.metadata.get("params") or {}  # a dict: the reader checks the type
    given = parse_assignments(args.params, "--set")
    for note in overridden_params(args.file, recorded, given):
        print(f"note: {note}", file=sys.stderr)
    _, problem = load_problem(args.problem, {**recorded_params(args.problem, args.file, recorded), **given})
    if recorded and not given:
        print("build parameters from the file: " + ", ".join(f"{k}={v!r}" for k, v in recorded.items()))
    relative = DYNAMICS_TOLERANCE if args.dynamics_tolerance is None else args.dynamics_tolerance  # phases, contact-implicit
    if isinstance(problem, MultiPhaseProblem):
        if args.plot:
            raise OptionError("`--plot` draws single-phase simulations only; `colloc verify` of a multi-phase file prints each phase's errors.")
        from ..simulate.multiphase_checks import verify_file

        return _verdict(*verify_file(problem, traj, args.tolerance, relative))
    if traj.metadata.get("contact") == "implicit":
        from ..pipeline.contact_implicit import verify_file as verify_contact_file

        return _verdict(*verify_contact_file(problem, traj, args.tolerance, relative))
    made_by = of_trajectory(traj)
    if made_by is not None and made_by.variational:
        raise OptionError(f"`{args.file}` is a {made_by.name} solution; verify integrates collocation interpolants. "
                          "Re-simulate it with colloc.simulate instead.")
    if traj.metadata.get("success") is False:
        print(f"note: `{args.file}` holds an unconverged iterate (status {traj.metadata.get('status')}).")
    tolerances = dict(tolerance=args.tolerance, dynamics_tolerance=args.dynamics_tolerance)
    check_columns(problem, traj)
    basic = basic_checks(problem, traj, args.tolerance)
    if not all(c.passed for c in basic):  # nothing more can be judged (and a simulation would say nothing)
        print(checks_report(basic, **tolerances))
        print(f"verification failed: {next(c for c in basic if not c.passed).message}.")
        return EXIT_NOT_CONVERGED
    sim = verify(problem, traj, figure=args.plot, **tolerances)
    print(checks_report(sim["checks"], **tolerances))
    print(report(sim))
    if sim.get("figure"):
        print(f"wrote {sim['figure']}")
    failed = [c for c in sim["checks"] if not c.passed]
    if failed:
        print(f"verification failed: {failed[0].name}: {failed[0].message}" + (f" (and {len(failed) - 1} more)." if len(failed) > 1 else "."))
    elif not sim["success"]:
        print(f"verification failed: {sim['message']}.")
    else:
        print("verified: every check passed.")
    return EXIT_SOLVED if sim["verified"] else EXIT_NOT_CONVERGED


def _verdict(passed, report) -> int:
    """Print a verification's report; its exit code."""
    print(report)
    return EXIT_SOLVED if passed else EXIT_NOT_CONVERGED


def _run_info(args) -> int:
    from ..pipeline.multiphase_problem import MultiPhaseProblem
    if str(args.problem).lower().endswith(".osim"):
        print(opensim.info(args.problem))
        return EXIT_SOLVED
    module, problem = load_problem(args.problem, parse_assignments(args.params, "--set"))
    options = SolveOptions.of(**_solve_arguments(module, args))
    nlp = build_nlp(problem, options.replace(guess=None))
    scheme, variational = options.scheme, by_scheme(options.scheme).variational
    if isinstance(problem, MultiPhaseProblem):
        print(problem.summary())
        intervals = sum(sub.grid.num_intervals for sub in nlp.nlps)
        print(f"NLP ({len(nlp.nlps)} phases, {intervals} intervals): {nlp.layout.size} variables, {nlp.rows.size} constraints")
        return EXIT_SOLVED
    print(problem.summary())
    if not variational:
        _print_rows(problem, options.transcription.get("mode", "default"))
    print(f"NLP ({scheme if variational else get_scheme(scheme).name}, {nlp.mesh.size - 1} intervals): "
          f"{nlp.layout.size} variables, {nlp.rows.size} constraints")
    if variational:
        return EXIT_SOLVED
    blocks = [b for b in nlp.layout.blocks.values() if b.size]
    print(_listing("  variables by block", [f"{b.name} {b.size}" for b in blocks], "none"))
    for b in blocks:
        print(f"    {b.name:5s} {BLOCK_LEGEND.get(b.name, '')}{bound_note(b)}".rstrip())
    added = [k for k in nlp.terms if k not in {c.name for c in problem.costs}]
    for k in added:
        print(f"  cost term added by the transcription: {k}: {TERM_LEGEND.get(k, '')}".rstrip(": "))
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
    for t in trajs:
        check_times(t, "trajectory")  # the interpolant of a file whose time runs backwards draws nonsense
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
    from ..batch import sweep as sweeping

    grid, fixed = {}, {}
    if args.intervals is not None and args.intervals < 1:
        raise OptionError(f"--intervals must be at least 1; got {args.intervals}.")
    for key, text in split_assignments(args.params, "--set"):
        values = sweeping.parse_range(text)
        if values is None and re.fullmatch(r"[^:'\"]+:[^:]+:[^:'\"]+", text):
            raise OptionError(f"--set {key}={text} looks like a range but is not one: a range is START:STOP:COUNT with "
                              f"numbers (e.g. {key}=0.5:1.5:5); quote a fixed text value that holds colons ({key}='{text}').")
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
    name = Path(args.problem).stem
    try:
        rows = sweeping.sweep(args.problem, grid, fixed, workers=args.workers, scheduler=args.scheduler,
                              continuation=args.continuation, out=args.out, options=options, progress=not args.quiet,
                              point_timeout=args.point_timeout)
    except sweeping.SweepInterrupted as e:
        print(_table(e.rows, list(grid)))
        print(f"wrote {sum(1 for r in e.rows if r['file'])} trajectories and {e.summary}")
        print(f"colloc: interrupted; the summary lists every point, unfinished ones as interrupted.", file=sys.stderr)
        return EXIT_INTERRUPTED
    print(_table(rows, list(grid)))
    counts = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print(f"wrote {sum(1 for r in rows if r['file'])} trajectories and {getattr(rows, 'summary', None) or Path(args.out) / f'{name}_sweep.csv'} "
          f"({', '.join(f'{n} {s}' for s, n in counts.items())})")
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
        if r["status"] in ("error", "crashed", "timed-out", "interrupted"):
            lines.append(f"point {r['index']}: " + ("" if r["status"] == "error" else f"{r['status']}: ") + r["message"])
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


def _backend_options(kwargs, args):
    """Merge --backend, --ipopt and --fatrop into the script's SOLVE defaults (in ``kwargs``)."""
    if args.backend:
        kwargs["backend"] = args.backend
    if kwargs.get("backend", SolveOptions.backend) != "ipopt" and kwargs.get("ipopt") and not args.ipopt:
        print(f"note: the script's SOLVE ipopt options do not apply to --backend {kwargs['backend']}", file=sys.stderr)
        kwargs.pop("ipopt")
    kwargs["ipopt"] = _ipopt_options(kwargs.get("ipopt"), args.ipopt)
    fatrop = dict(kwargs.get("fatrop") or {})
    fatrop.update(parse_assignments(args.fatrop, "--fatrop"))
    kwargs["fatrop"] = fatrop or None


def _remove_empty(folder):
    """Remove a folder this run created if nothing was written into it."""
    try:
        os.rmdir(folder)  # refuses a folder with anything in it
    except OSError:
        pass


if __name__ == "__main__":
    sys.exit(main())
