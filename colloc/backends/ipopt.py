"""The IPOPT backend: option checks, running, status mapping, the iteration callback and interrupts.

A backend turns a built :class:`~colloc.nlp.NLP` into an :class:`Outcome`; it
knows nothing of problems, schemes or trajectories (an iterate becomes a
Trajectory only through the ``to_trajectory`` callable the driver hands it,
for checkpoints).  A second backend (e.g. FATROP, which wants the stage-wise
variable ordering) implements the same three functions: ``options``,
``run`` and ``outcome``.
"""
from __future__ import annotations

import os
import re
import signal
import threading
import time as _time
from functools import lru_cache
from typing import NamedTuple

import casadi as ca
import numpy as np

from ..errors import OptionError, did_you_mean
from ..trajectory import Status

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
    "User_Requested_Stop": (Status.INTERRUPTED, "The solve was interrupted; the last iterate is kept and can warm-start the next solve."),
    "Search_Direction_Becomes_Too_Small": (Status.FAILED, "IPOPT's search direction became too small; the problem may be nearly converged; check the violations."),
}

DEFAULT_IPOPT = {"tol": 1e-8, "max_iter": 3000, "print_level": 0, "sb": "yes", "mumps_pivot_order": 0}


def ipopt_options(ipopt=None, verbose=False) -> dict:
    """colloc's IPOPT defaults updated with the user's ``ipopt`` dict (checked to be a dict)."""
    opts = dict(DEFAULT_IPOPT)
    if verbose:
        opts["print_level"] = 5
    if ipopt is not None:
        if not isinstance(ipopt, dict):
            raise OptionError(f"`ipopt` must be a dict of IPOPT options; got {type(ipopt).__name__}.")
        opts.update(ipopt)
    _check_ipopt_options(opts)
    return opts


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
    for key, value in opts.items():
        complaint = _probe({key: value})
        if complaint is None:
            continue
        if "No such IPOPT option" in complaint:
            raise OptionError(f"Unknown IPOPT option `{key}`.{did_you_mean(key, COMMON_IPOPT)} See IPOPT's options reference.")
        raise OptionError(f"IPOPT refused option `{key}` = {value!r}: {complaint.strip().splitlines()[-1]}")
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


def run_ipopt(nlp, ipopt_opts, expand, progress, checkpoint, to_trajectory, start):
    """Create the IPOPT solver of ``nlp`` and run it from its guess, interruptibly.

    ``start`` is when building began (``perf_counter``); returns ``(solution,
    stats, build_seconds, solve_seconds)``.  ``to_trajectory(w)`` turns an
    iterate into a Trajectory for checkpoints.
    """
    monitor = _Monitor(nlp, progress, checkpoint, to_trajectory)
    try:
        solver = ca.nlpsol("colloc", "ipopt", {"x": nlp.w, "f": nlp.f, "g": nlp.g},
                           {"ipopt": ipopt_opts, "expand": bool(expand), "print_time": False, "error_on_fail": False,
                            "iteration_callback": monitor})
    except RuntimeError as e:
        raise _ipopt_option_error(str(e), ipopt_opts) from None
    build_seconds = _time.perf_counter() - start
    lay = nlp.layout
    start = _time.perf_counter()
    with _interruptible(monitor):
        sol = solver(x0=lay.vector("guess"), lbx=lay.vector("lower"), ubx=lay.vector("upper"), lbg=nlp.rows.lower, ubg=nlp.rows.upper)
    solve_seconds = _time.perf_counter() - start
    stats = solver.stats()
    if monitor.interrupted:
        stats["return_status"] = "User_Requested_Stop"
    return sol, stats, build_seconds, solve_seconds


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
    if status == Status.INVALID_NUMBER:
        message += _locate_non_finite(nlp, w)
        # IPOPT hands back no constraint values when it stops on a non-finite one: evaluate them here, so
        # the violations report the NaN/inf rows as such instead of IPOPT's placeholder zeros
        g = np.asarray(ca.Function("g", [nlp.w], [nlp.g])(w), dtype=float).ravel()
    values = {}
    if terms:
        out = ca.Function("terms", [nlp.w], list(terms.values()))(w)
        values = {k: float(v) for k, v in zip(terms, out if isinstance(out, (list, tuple)) else [out])}
    return Outcome(w, g, status, message, status in (Status.SOLVED, Status.ACCEPTABLE), float(sol["f"]), values,
                   int(stats.get("iter_count", 0)))


def _ipopt_option_error(text, given):
    """Turn IPOPT's complaint about an option into one sentence naming it."""
    m = re.search(r"No such IPOPT option: (\S+)", text)
    if m:
        return OptionError(f"Unknown IPOPT option `{m.group(1)}`; see IPOPT's options reference (e.g. tol, max_iter, linear_solver).")
    m = re.search(r"option[^:]*:?\s*(\w+)", text)
    bad = [k for k in given if k in text]
    name = bad[0] if bad else (m.group(1) if m else "?")
    return OptionError(f"IPOPT refused option `{name}`: {text.strip().splitlines()[-1]}")


def _locate_non_finite(nlp, w):
    """Name the constraint rows (label and grid point) that are NaN/inf at the last iterate or the guess."""
    gfun = ca.Function("g", [nlp.w], [nlp.g])
    for point in (w, nlp.layout.vector("guess")):
        g = np.asarray(gfun(point)).ravel()
        if not np.isfinite(g).all():
            labels = nlp.rows.labels()
            bad = [labels[i] for i in np.flatnonzero(~np.isfinite(g))[:3]]
            return f" Non-finite values first appear in: {', '.join(bad)}."
    return ""


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
        if not self.progress and not self.checkpoint:  # only a stop flag: CasADi copies nothing per iteration
            return ca.Sparsity(0, 0)
        if name == "f":
            return ca.Sparsity.scalar()
        if name in ("x", "lam_x"):
            return ca.Sparsity.dense(self.nx)
        if name in ("g", "lam_g"):
            return ca.Sparsity.dense(self.ng)
        return ca.Sparsity(0, 0)

    def eval(self, arg):
        if not self.progress and not self.checkpoint:  # only watching for a stop request: keep it cheap
            self.iteration += 1
            return [1 if self.interrupted else 0]
        w = np.asarray(arg[0]).ravel()
        g = np.asarray(arg[2]).ravel()
        viol = float(np.max(np.maximum(np.maximum(self.lower - g, g - self.upper), 0.0), initial=0.0))
        step = float(np.abs(w - self.previous).max()) if self.previous is not None and w.size else 0.0
        info = dict(iteration=self.iteration, objective=float(arg[1]), violation=viol, step=step)
        if self.progress:
            info["dual"] = self._dual_infeasibility(w, np.asarray(arg[4]).ravel(), np.asarray(arg[3]).ravel())
        if self.progress is True:
            if self.iteration == 0:
                print(f"{'iter':>5} {'objective':>16} {'primal':>9} {'dual':>9} {'step':>9}", flush=True)
            print(f"{self.iteration:5d} {info['objective']:16.9g} {viol:9.2e} {info['dual']:9.2e} {step:9.2e}", flush=True)
        elif callable(self.progress):
            self.progress(info)
        if self.checkpoint and self.iteration and self.iteration % self.checkpoint[1] == 0:
            self.to_trajectory(w).write(self.checkpoint[0])
        self.previous = w
        self.iteration += 1
        return [1 if self.interrupted else 0]


class _interruptible:
    """Route SIGINT/SIGTERM to a stop request for the duration of a solve (main thread only)."""

    def __init__(self, monitor):
        self.monitor, self.saved = monitor, {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.saved[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame):
        self.monitor.interrupted = True

    def __exit__(self, *exc):
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)
        return False


class IpoptBackend:
    """IPOPT through CasADi (MUMPS by default): the default backend, ``backend="ipopt"``."""

    name = "ipopt"
    options = staticmethod(ipopt_options)
    run = staticmethod(run_ipopt)
    outcome = staticmethod(outcome)
