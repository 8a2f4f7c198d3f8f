"""The IPOPT backend: option checks, running, status mapping, the iteration callback and interrupts.

A backend turns a built :class:`~colloc.transcription.nlp.NLP` into an :class:`Outcome`; it
knows nothing of problems, schemes or trajectories (an iterate becomes a
Trajectory only through the ``to_trajectory`` callable the driver hands it,
for checkpoints).  The FATROP backend (:mod:`.fatrop`) implements the same
functions: ``options``, ``check``, ``run`` and ``outcome``.
"""
from __future__ import annotations

import os
import re
import signal
import sys
import threading
import time as _time
import warnings
from contextlib import contextmanager
from functools import lru_cache
from typing import NamedTuple

import casadi as ca
import numpy as np

from ..transcription.derivatives import structured
from .mumps import pivot_order, single_threaded_blas
from ..errors import FileFormatError, OptionError, did_you_mean
from ..transcription.nonfinite import EvaluationWatch
from ..results.trajectory import Status

_STATUS = {
    "Solve_Succeeded": (Status.SOLVED, "Optimal solution found."),
    "Solved_To_Acceptable_Level": (Status.ACCEPTABLE, "Solved to IPOPT's acceptable tolerance only; tighten nothing, but check the violations or refine the mesh."),
    "Maximum_Iterations_Exceeded": (Status.MAX_ITERATIONS, "IPOPT hit its iteration limit; raise ipopt={'max_iter': ...}, give a better guess, or solve a coarser mesh and warm-start from it."),
    "Infeasible_Problem_Detected": (Status.INFEASIBLE, "IPOPT converged to a point of local infeasibility; check bounds, initial/final values and path constraints for contradictions (see the worst violated rows)."),
    "Restoration_Failed": (Status.RESTORATION_FAILED, "IPOPT's restoration phase failed; improve the guess, loosen tight bounds, or scale the problem."),
    "Error_In_Step_Computation": (Status.RESTORATION_FAILED, "IPOPT could not compute a step; the constraints may be redundant (e.g. a constraint given at two levels) or badly scaled."),
    "Invalid_Number_Detected": (Status.INVALID_NUMBER, "A function returned NaN or inf; bound the variables away from singularities (division by zero, log/sqrt of negatives) or improve the guess."),
    "Maximum_CpuTime_Exceeded": (Status.TIME_LIMIT, "IPOPT hit its CPU-time limit; raise ipopt={'max_cpu_time': ...} or use a coarser mesh."),
    "Maximum_WallTime_Exceeded": (Status.TIME_LIMIT, "IPOPT hit its wall-time limit; raise ipopt={'max_wall_time': ...} or use a coarser mesh."),
    "Diverging_Iterates": (Status.UNBOUNDED, "IPOPT's iterates diverged; the problem may have no minimum (a variable free to grow that lowers the objective)."),
    "User_Requested_Stop": (Status.INTERRUPTED, "The solve was interrupted; the last iterate is kept and can warm-start the next solve."),
    "Search_Direction_Becomes_Too_Small": (Status.FAILED, "IPOPT's search direction became too small; the problem may be nearly converged; check the violations."),
}

#: ``mumps_pivot_order=0`` (AMD) orders collocation KKT systems faster than IPOPT's choice (unless their grid
#: points are coupled densely: :func:`colloc.solvers.mumps.pivot_order` then chooses METIS when the user gives
#: no order).  MUMPS's scaling
#: stays automatic: turning it off (``mumps_scaling=0``) saves 11 % of the 10,000-interval cart-pole's solve
#: (4.68 against 5.24 CPU s) and nothing below 1,600 intervals, but costs iterations on badly conditioned
#: problems — the Solo12 jump 556 instead of 81 (stuck at a constraint violation of 2e-8 for 480 of them),
#: UR5 minimum time 85 instead of 78, bar landing 634 instead of 617.  MUMPS's permuting scaling (MC64)
#: is off (``mumps_permuting_scaling=0``): it cost 12–20 % of large solves (cart-pole 10,000 intervals 4.5
#: against 5.1 s wall, Cartesian pendulum 1,600 1.5 against 1.85 s) and changed no iteration count on the
#: problems of ``problems/`` but the contact-implicit ones (Solo12 jump 75 instead of 93); the contact
#: homotopy keeps it (:data:`colloc.pipeline.contact_implicit.CONTACT_IPOPT`).
DEFAULT_IPOPT = {"tol": 1e-8, "max_iter": 3000, "print_level": 0, "sb": "yes", "mumps_pivot_order": 0, "mumps_permuting_scaling": 0}


def ipopt_options(ipopt=None, verbose=False) -> dict:
    """colloc's IPOPT defaults updated with the user's ``ipopt`` dict (checked to be a dict).

    ``mumps_pivot_order`` is left out unless the user gives it: :func:`run_ipopt` chooses it for the NLP
    (:func:`colloc.solvers.mumps.pivot_order`)."""
    opts = merged_options(DEFAULT_IPOPT, ipopt, 5 if verbose else None, "ipopt", "IPOPT")
    _check_ipopt_options(opts)
    if not (isinstance(ipopt, dict) and "mumps_pivot_order" in ipopt):
        del opts["mumps_pivot_order"]
    return opts


def merged_options(defaults, given, print_level, name, solver) -> dict:
    """A backend's ``defaults`` updated with the user's dict ``given`` (the option ``name``, refused if not a
    dict), with ``print_level`` unless it is None (verbose solves)."""
    opts = dict(defaults)
    if print_level is not None:
        opts["print_level"] = print_level
    if given is not None:
        if not isinstance(given, dict):
            raise OptionError(f"`{name}` must be a dict of {solver} options; got {type(given).__name__}.")
        opts.update(given)
    return opts


def refuse_options_one_by_one(opts, probe, solver, unknown, known, hint="") -> None:
    """Raise the :class:`OptionError` naming the first option of ``opts`` that ``probe`` (the solver's complaint
    about an option set, or None) refuses alone: an unknown name (its complaint contains ``unknown``) with the
    nearest of ``known``, else the value with the complaint's last line.  Returns if none is refused alone."""
    for key, value in opts.items():
        complaint = probe({key: value})
        if complaint is None:
            continue
        if unknown in complaint:
            raise OptionError(f"Unknown {solver} option `{key}`.{did_you_mean(key, known)}{hint}")
        raise OptionError(f"{solver} refused option `{key}` = {value!r}: {complaint.strip().splitlines()[-1]}")


#: Frequently used IPOPT options, for "did you mean" hints (IPOPT itself knows them all).
COMMON_IPOPT = ("tol", "max_iter", "max_cpu_time", "max_wall_time", "print_level", "linear_solver", "mu_init", "mu_strategy",
                "acceptable_tol", "acceptable_iter", "constr_viol_tol", "dual_inf_tol", "compl_inf_tol", "hessian_approximation",
                "nlp_scaling_method", "bound_push", "bound_frac", "warm_start_init_point", "mumps_pivot_order",
                "print_frequency_iter", "output_file", "derivative_test", "sb")


def _probe(opts):
    """Create IPOPT for a one-variable NLP with ``opts``; the text of IPOPT's complaint, or ``None``."""
    x = ca.SX.sym("x")
    try:
        ca.nlpsol("probe", "ipopt", {"x": x, "f": x**2}, {"ipopt": {**opts, "sb": "yes"}, "print_time": False})
    except RuntimeError as e:
        return str(e)
    return None


#: Every value IPOPT's ``linear_solver`` option names; which of them a build can load varies.
LINEAR_SOLVERS = ("mumps", "ma27", "ma57", "ma77", "ma86", "ma97", "pardiso", "pardisomkl", "spral", "wsmp", "custom")


#: Solves ``min (x − 1)²`` with each linear solver named in argv, printing ``NAME 1`` or ``NAME 0`` as it goes.
_LINEAR_SOLVER_PROBE = """import sys, casadi as ca
x = ca.SX.sym("x")
for name in sys.argv[1:]:
    print(name, flush=True)
    try:
        s = ca.nlpsol("p", "ipopt", {"x": x, "f": (x - 1) ** 2}, {"ipopt": {"linear_solver": name, "print_level": 0, "sb": "yes"},
                      "print_time": False, "error_on_fail": False})
        s(x0=0.0)
        ok = s.stats()["return_status"] == "Solve_Succeeded"
    except RuntimeError:
        ok = False
    print(name, int(ok), flush=True)
"""


def _loadable(names) -> dict:
    """``{name: bool}``: whether IPOPT can solve with each linear solver, probed in a child process.

    IPOPT accepts the name of a solver it cannot load (HSL's ``ma57`` without
    ``libhsl``) and then reports ``Invalid_Option`` with a garbage iteration
    count, so solving is the only reliable test.  A failed HSL load can crash
    the process that tries the next one, so the probe runs in a child; if the
    child dies, the solver it was trying counts as unavailable and a new child
    goes on with the rest.
    """
    import subprocess
    import sys

    env = dict(os.environ, OMP_NUM_THREADS="1")
    found, todo = {}, list(names)
    while todo:
        before = len(found)
        out = subprocess.run([sys.executable, "-c", _LINEAR_SOLVER_PROBE, *todo], capture_output=True, text=True, env=env).stdout
        trying = None
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 1 and parts[0] in todo:
                trying = parts[0]
            elif len(parts) == 2 and parts[0] in todo:
                found[parts[0]], trying = parts[1] == "1", None
        if trying is not None:
            found[trying] = False  # the child died trying it
        if len(found) == before:
            found.update({n: False for n in todo})  # the child could not start at all
        todo = [n for n in names if n not in found]
    return found


@lru_cache(maxsize=None)
def _linear_solver_loads(name) -> bool:
    return name == "mumps" or _loadable([name])[name]


@lru_cache(maxsize=None)
def available_linear_solvers() -> tuple:
    """The names of IPOPT's linear solvers this CasADi build can load (probed once per process)."""
    return tuple(n for n, ok in _loadable(LINEAR_SOLVERS).items() if ok)


def _check_linear_solver(opts):
    name = opts.get("linear_solver")
    if not isinstance(name, str):
        return
    if name.lower() in LINEAR_SOLVERS and _linear_solver_loads(name.lower()):
        return
    available = available_linear_solvers()
    if name.lower() not in available:
        raise OptionError(f"IPOPT's linear solver `{name}` is not available in this CasADi build; "
                          f"choose one of: {', '.join(available)}.")


def _check_ipopt_options(opts):
    """Refuse unknown or ill-typed IPOPT options by name before anything is built (a tiny probe solver)."""
    key = _hashable(opts)
    if key is not None and key in _ACCEPTED:  # creating the probe solver costs more than a small solve's own set-up
        return
    _check_linear_solver(opts)
    text = _probe(opts)
    if text is None and key is not None:
        _ACCEPTED.add(key)
    if text is None:
        return
    refuse_options_one_by_one(opts, _probe, "IPOPT", "No such IPOPT option", COMMON_IPOPT, " See IPOPT's options reference.")
    raise _ipopt_option_error(text, opts)


#: Option sets IPOPT has already accepted in this process (as sorted ``(key, value)`` tuples).
_ACCEPTED: set = set()


def _hashable(opts):
    """``opts`` as a sorted tuple of items, or ``None`` when a value cannot be hashed (then it is probed every time)."""
    try:
        key = tuple(sorted(opts.items()))
        hash(key)
    except TypeError:
        return None
    return key


def run_ipopt(nlp, ipopt_opts, expand, progress, checkpoint, to_trajectory, start, monitored=None, multipliers=None, reuse=False):
    """Create the IPOPT solver of ``nlp`` and run it from its guess, interruptibly.

    ``start`` is when building began (``perf_counter``); returns ``(solution,
    stats, build_seconds, solve_seconds)``.  ``to_trajectory(w)`` turns an
    iterate into a Trajectory for checkpoints.

    The iteration callback (:class:`_Monitor`) runs only when progress lines or checkpoints are asked
    for (``monitored``, by default): a Python call per iteration costs 5 % of a 25-interval solve.
    Without it, Ctrl-C still stops IPOPT at its next iteration (CasADi checks Python's signals there,
    and the handler raises only while IPOPT runs), with the iterate kept.  A solve that meets a NaN or
    inf is run once more with the callback, which numbers the iterations and keeps the iterate before
    the last, so that the report can say where the non-finite value came from.

    With ``reuse``, a solve of an NLP that ran before with the same options reuses its solver (a homotopy
    changes only the row bounds between solves; creating the solver, with its derivatives, is a large part
    of a small robot's solve).  ``multipliers`` ``(lam_x, lam_g)`` start IPOPT's multipliers there (with
    ``warm_start_init_point``).
    """
    if monitored is None:
        monitored = bool(progress or checkpoint)
    monitor = _Monitor(nlp, progress, checkpoint, to_trajectory) if monitored else _Unmonitored()
    log = _IpoptLog(monitor, hidden=bool(progress) and ipopt_opts.get("print_level") == 0)
    if log.hidden:  # IPOPT's table gives its own iteration numbers to the progress lines; the log itself is not shown
        ipopt_opts = {**ipopt_opts, "print_level": 5}
    mapped = getattr(nlp, "mapped", None)  # collocation NLPs; phased and midpoint-vi ones are left to CasADi
    if "mumps_pivot_order" not in ipopt_opts:
        ipopt_opts = {**ipopt_opts, "mumps_pivot_order": pivot_order(nlp)}
    callback = {"iteration_callback": monitor} if monitored else {}
    key = _hashable({**ipopt_opts, " expand": bool(expand)}) if reuse and not monitored else None
    cache = nlp.__dict__.setdefault("_ipopt_solvers", {}) if key is not None else {}
    solver = cache.get(key)
    if solver is None:
        derivatives = structured(nlp, mapped) if mapped is not None and not expand else None
        try:
            solver = ca.nlpsol("colloc", "ipopt", {"x": nlp.w, "f": nlp.f, "g": nlp.g},
                               {"ipopt": ipopt_opts, "expand": bool(expand), "print_time": False, "error_on_fail": False,
                                **callback, **(derivatives or {})})
        except RuntimeError as e:
            raise _ipopt_option_error(str(e), ipopt_opts) from None
        cache[key] = solver
    single_threaded_blas()
    build_seconds = _time.perf_counter() - start
    lay = nlp.layout
    start, cpu = _time.perf_counter(), _time.process_time()
    warm = dict(lam_x0=multipliers[0], lam_g0=multipliers[1]) if multipliers is not None else {}
    # CasADi reports each NaN/inf evaluation at a trial point as a warning on stderr: collect them instead
    with _interruptible(monitor, raising=not monitored) as guard, EvaluationWatch(lambda: monitor.iteration) as watch, log:
        with guard.armed():
            sol = solver(x0=lay.vector("guess"), lbx=lay.vector("lower"), ubx=lay.vector("upper"), lbg=nlp.rows.lower,
                         ubg=nlp.rows.upper, **warm)
    solve_seconds = _time.perf_counter() - start
    stats = solver.stats()
    if not monitored and not monitor.interrupted and (watch.events or stats.get("return_status") == "Invalid_Number_Detected"):
        return run_ipopt(nlp, ipopt_opts, expand, progress, checkpoint, to_trajectory, _time.perf_counter() - build_seconds, True,
                         multipliers)
    stats["solve_cpu_seconds"] = _time.process_time() - cpu  # moves less than wall time when the machine is shared
    stats["nonfinite_evaluations"] = watch.events
    stats["previous_iterate"] = monitor.before_last
    if monitor.interrupted:
        stats["return_status"] = "User_Requested_Stop"
    return sol, stats, build_seconds, solve_seconds


class _Unmonitored:
    """What :func:`run_ipopt` reads of a :class:`_Monitor` when no iteration callback runs."""

    iteration, interrupted, before_last, in_eval, log = 0, False, None, False, None


class Outcome(NamedTuple):
    """What IPOPT returned, read once: the iterate, constraint values, status and objective terms."""

    w: np.ndarray
    g: np.ndarray
    status: Status
    message: str
    success: bool
    objective: float
    terms: dict
    iterations: int


def outcome(nlp, sol, stats, terms) -> Outcome:
    """Map IPOPT's return status to a :class:`Status` with its hint and evaluate each cost term at the iterate.

    ``terms`` maps cost-term names to MX expressions in ``nlp.w``.  Shared by every kind of solve.
    """
    w = np.asarray(sol["x"]).ravel()
    g = np.asarray(sol["g"]).ravel()
    ret = stats.get("return_status", "unknown")
    status, message = _STATUS.get(ret, (Status.FAILED, f"IPOPT stopped with `{ret}`; inspect the worst violated rows and try a better guess."))
    objective = float(sol["f"])
    if status in (Status.INVALID_NUMBER, Status.INTERRUPTED):
        # IPOPT hands back no constraint values when it stops on a non-finite one, nor when an interrupt lands
        # inside an evaluation (CasADi then returns the iterate with a zero objective and zero rows): evaluate
        # both at the iterate, so the violations and the objective a file records are the iterate's own
        g = np.asarray(ca.Function("g", [nlp.w], [nlp.g])(w), dtype=float).ravel()
        objective = float(ca.Function("f", [nlp.w], [nlp.f])(w))
    return Outcome(w, g, status, message, status in (Status.SOLVED, Status.ACCEPTABLE), objective, outcome_terms(nlp, w, terms, objective),
                   int(stats.get("iter_count", 0)))


def outcome_terms(nlp, w, terms, objective=None) -> dict:
    """Each cost term (an expression in ``nlp.w``) evaluated at ``w``; a single term is the ``objective``
    when that is given (the NLP's objective is the sum of its terms)."""
    if not terms:
        return {}
    if len(terms) == 1 and objective is not None and np.isfinite(objective):
        return {next(iter(terms)): float(objective)}  # creating the evaluating function costs 0.25 ms
    out = ca.Function("terms", [nlp.w], list(terms.values()))(w)
    return {k: float(v) for k, v in zip(terms, out if isinstance(out, (list, tuple)) else [out])}


def _ipopt_option_error(text, given):
    """Turn IPOPT's complaint about an option into one sentence naming it."""
    m = re.search(r"No such IPOPT option: (\S+)", text)
    if m:
        return OptionError(f"Unknown IPOPT option `{m.group(1)}`; see IPOPT's options reference (e.g. tol, max_iter, linear_solver).")
    m = re.search(r"option[^:]*:?\s*(\w+)", text)
    bad = [k for k in given if k in text]
    name = bad[0] if bad else (m.group(1) if m else "?")
    return OptionError(f"IPOPT refused option `{name}`: {text.strip().splitlines()[-1]}")


class _Monitor(ca.Callback):
    """IPOPT iteration callback: progress lines, checkpoints, and stop requests."""

    def __init__(self, nlp, progress, checkpoint, to_trajectory):
        ca.Callback.__init__(self)
        self.nx, self.ng = nlp.layout.size, nlp.rows.size
        self.lower, self.upper = nlp.rows.lower, nlp.rows.upper
        self.progress, self.to_trajectory = progress, to_trajectory
        if checkpoint is not None:
            try:
                path, every = checkpoint
                every = int(every)
            except (TypeError, ValueError):
                raise OptionError(f"`checkpoint` must be a (path, every) pair; got {checkpoint!r}.") from None
            if every < 1:
                raise OptionError(f"`checkpoint` interval must be at least 1; got {every}.")
            checkpoint = (os.fspath(path), every)
        self.checkpoint = checkpoint
        self.iteration, self.previous, self.interrupted = 0, None, False
        self.log, self.in_eval, self._pending = None, False, None  # IPOPT's log (its iteration numbers); an unreported iterate
        self.last = self.before_last = None  # the last two iterates: where a non-finite objective is looked for
        self._nlp, self._grad = nlp, None
        self.construct("colloc_monitor", {})

    def _dual_infeasibility(self, w, lam_g, lam_x):
        """max |∇f + Jᵀλ_g + λ_x| at the iterate (unscaled; IPOPT's own figure is scaled)."""
        if self._grad is None:
            nlp = self._nlp
            lg = ca.MX.sym("lam_g", self.ng)
            lag = nlp.f + (ca.dot(lg, nlp.g) if self.ng else 0)
            self._grad = ca.Function("grad_lag", [nlp.w, lg], [ca.gradient(lag, nlp.w)]).expand()
        grad = np.asarray(self._grad(w, lam_g)).ravel() + lam_x
        return float(np.abs(grad).max(initial=0.0))

    def get_n_in(self):
        return ca.nlpsol_n_out()

    def get_n_out(self):
        return 1

    def get_name_in(self, i):
        return ca.nlpsol_out(i)

    def get_name_out(self, i):
        return "stop"

    def get_sparsity_in(self, i):
        name = ca.nlpsol_out(i)
        if name == "x":  # kept always (a copy per iteration): the last step tells where a NaN came from
            return ca.Sparsity.dense(self.nx)
        if not self.progress and not self.checkpoint:  # only a stop flag and the iterate
            return ca.Sparsity(0, 0)
        if name == "f":
            return ca.Sparsity.scalar()
        if name == "lam_x":
            return ca.Sparsity.dense(self.nx)
        if name in ("g", "lam_g"):
            return ca.Sparsity.dense(self.ng)
        return ca.Sparsity(0, 0)

    def eval(self, arg):
        w = np.asarray(arg[0]).ravel()
        if w.size == self.nx:
            self.last, self.before_last = w.copy(), self.last
        if not self.progress and not self.checkpoint:  # only watching for a stop request: keep it cheap
            self.iteration += 1
            return [1 if self.interrupted else 0]
        arg = [np.array(a, dtype=float).ravel() for a in arg]  # CasADi's buffers are valid during this call only
        if self.log is not None and self.log.active:
            # IPOPT prints this iteration's row right after this call: report it then, with IPOPT's number
            self._pending = (w, arg)
            return [1 if self.interrupted else 0]
        self._emit(w, arg, self.iteration, False)
        return [1 if self.interrupted else 0]

    def row(self, number, restoration):
        """IPOPT printed the row of iteration ``number``: report the iterate the callback just received.

        A callback that no row follows (IPOPT calls it once more at the end of a restoration phase
        without counting an iteration) is never reported.
        """
        if self._pending is not None:
            (w, arg), self._pending = self._pending, None
            self._emit(w, arg, number, restoration)
        else:
            self.iteration = number + 1

    def _emit(self, w, arg, number, restoration):
        self.iteration, self.in_eval = number, True
        try:
            self._report(w, arg, restoration)
        finally:
            self.in_eval = False
        self.previous = w
        self.iteration = number + 1

    def _report(self, w, arg, restoration):
        """One progress line (or a call of the progress function) and the checkpoint, for iteration ``self.iteration``."""
        g = np.asarray(arg[2]).ravel()
        viol = float(np.max(np.maximum(np.maximum(self.lower - g, g - self.upper), 0.0), initial=0.0))
        step = float(np.abs(w - self.previous).max()) if self.previous is not None and w.size else 0.0
        info = dict(iteration=self.iteration, objective=float(np.ravel(arg[1])[0]), violation=viol, step=step)
        if self.progress:
            info["dual"] = self._dual_infeasibility(w, np.asarray(arg[4]).ravel(), np.asarray(arg[3]).ravel())
        info["restoration"] = restoration
        if self.progress is True:
            if self.previous is None:
                print(f"{'iter':>5} {'objective':>16} {'primal':>9} {'dual':>9} {'step':>9}", flush=True)
            mark = "r" if restoration else " "  # as IPOPT marks its restoration steps
            print(f"{self.iteration:4d}{mark} {info['objective']:16.9g} {viol:9.2e} {info['dual']:9.2e} {step:9.2e}", flush=True)
        elif callable(self.progress):
            self.progress(info)
        if self.checkpoint and self.iteration and self.iteration % self.checkpoint[1] == 0:
            try:
                self.to_trajectory(w).write(self.checkpoint[0])
            except (OSError, FileFormatError) as e:  # a full disk must not cost the solve: its result is written after it
                if not getattr(self, "_checkpoint_failed", False):
                    warnings.warn(f"Could not write a checkpoint ({e}); the solve goes on without checkpoints.", stacklevel=2)
                self._checkpoint_failed = True


class _IpoptLog:
    """Read IPOPT's iteration numbers from its log while a solve runs (CasADi writes it to ``sys.stdout``).

    IPOPT calls the iteration callback once more than it counts iterations at the end of a restoration
    phase, so counting callbacks drifts from IPOPT's own count; its log's table (``  40r -6.06e+00 …``)
    gives the number and whether the iteration is a restoration step.  Active only with ``hidden``:
    colloc raised the print level to read the table, so the log itself is not shown; the progress
    lines (written while the monitor reports) pass through.
    """

    _ROW = re.compile(r"^\s*(\d+)(r?)\s*[-+]?\d\.\d+e[-+]\d+")

    def __init__(self, monitor, hidden):
        self.monitor, self.hidden, self.active = monitor, hidden, False
        self._buffer, self._stream, self.error = "", None, None
        monitor.log = self

    def __enter__(self):
        self.active = self.hidden
        if self.active:
            self._stream, sys.stdout = sys.stdout, self
        return self

    def __exit__(self, *exc):
        if self.active:
            if sys.stdout is self:
                sys.stdout = self._stream
        self.active, self._buffer = False, ""
        if self.error is not None and exc[0] is None:  # a progress function that raised, or a failed checkpoint
            raise self.error
        return False

    def write(self, text):
        if self.monitor.in_eval:  # the progress lines themselves, or a progress function that prints
            return self._stream.write(text)
        self._buffer += text
        while "\n" in self._buffer:
            line, self._buffer = self._buffer.split("\n", 1)
            m = self._ROW.match(line)
            if m and self.error is None:
                try:
                    self.monitor.row(int(m[1]), m[2] == "r")
                except Exception as e:  # noqa: BLE001  CasADi would swallow it here: raised after the solve
                    self.error = e
        return len(text)

    def flush(self):
        self._stream.flush()

    def __getattr__(self, name):
        return getattr(self._stream, name)


class _interruptible:
    """Route SIGINT/SIGTERM to a stop request for the duration of a solve (main thread only).

    With ``raising`` (no iteration callback to return the request to IPOPT), the handler also raises
    ``KeyboardInterrupt`` while :meth:`armed`: CasADi checks Python's signals at every IPOPT iteration
    and stops the solve on it, returning the iterate.
    """

    def __init__(self, monitor, raising=False):
        self.monitor, self.raising, self.saved, self._armed = monitor, raising, {}, False

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.saved[sig] = signal.signal(sig, self._handle)
        return self

    @contextmanager
    def armed(self):
        self._armed = True
        try:
            yield
        finally:
            self._armed = False

    def _handle(self, signum, frame):
        self.monitor.interrupted = True
        if self.raising and self._armed:
            raise KeyboardInterrupt

    def __exit__(self, *exc):
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)
        return False


class IpoptBackend:
    """IPOPT through CasADi (MUMPS by default): the default backend, ``backend="ipopt"``."""

    name = "ipopt"
    #: IPOPT takes every NLP colloc builds (:data:`colloc.solvers.CAPABILITIES`).
    capabilities = frozenset({"coupled", "iterations"})
    options = staticmethod(ipopt_options)
    refusal = staticmethod(lambda transcription: None)
    run = staticmethod(run_ipopt)
    outcome = staticmethod(outcome)


@contextmanager
def sigint_as(handler):
    """Within the block, SIGINT is handled by ``handler`` (``signal.SIG_IGN``, ``signal.SIG_DFL`` or a function),
    then restored; in a thread other than the main one (where signals cannot be set) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
