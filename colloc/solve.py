"""``solve()``: validate, transcribe, run IPOPT, and wrap the outcome as a :class:`SolveResult`.

A solve never raises because IPOPT did not converge: the result is flagged,
its message says what to try, and the last iterate is a full Trajectory.
Malformed problems and options raise before anything is built.
"""
from __future__ import annotations

import os
import signal
import threading
import time as _time

from typing import NamedTuple

import casadi as ca
import numpy as np

from .errors import OptionError, ProblemError, did_you_mean
from .mesh import make_mesh
from .problem import Problem
from .schemes import get_scheme
from .trajectory import SolveResult, Status, Trajectory
from .transcription import make_options, transcribe

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


def _as_guess(guess):
    if guess is None or isinstance(guess, Trajectory):
        return guess
    if isinstance(guess, SolveResult):
        return guess.trajectory
    if isinstance(guess, (str, os.PathLike)):
        return Trajectory.read(guess)
    raise OptionError(f"`guess` must be a Trajectory, a SolveResult or a file path; got {type(guess).__name__}.")


def solve(problem: Problem, scheme="hermite-simpson", intervals=None, mesh=None, guess=None, ipopt=None,
          verbose=False, expand=True, progress=None, checkpoint=None, refine=None, **options) -> SolveResult:
    """Solve ``problem`` by direct collocation with IPOPT.

    Parameters
    ----------
    problem : Problem
    scheme : str
        ``"trapezoidal"``, ``"hermite-simpson"`` (default) or ``"radau-d"``.
    intervals : int, optional
        Number of uniform mesh intervals (default 50).
    mesh : sequence of float, optional
        Normalised mesh points ``0 = τ₀ < … < τ_n = 1`` (non-uniform meshes).
    guess : Trajectory, SolveResult or path, optional
        Warm start, resampled onto the new grid with its own interpolant.
    ipopt : dict, optional
        IPOPT options, e.g. ``{"tol": 1e-10, "max_iter": 500}``.
    verbose : bool
        Print IPOPT's own log.
    expand : bool
        Expand the NLP to CasADi SX before solving (faster iterations).
    progress : bool or callable, optional
        ``True`` prints one compact line per IPOPT iteration (iteration,
        objective, primal infeasibility = largest constraint violation, dual
        infeasibility = largest entry of the Lagrangian gradient, step = largest
        change of a variable); a callable receives a dict with those keys.
    refine : dict, optional
        Adaptive mesh refinement (:func:`colloc.refine.solve_adaptive`):
        ``tolerance`` (relative local error, default 1e-6), ``max_iterations``,
        ``max_intervals``, ``max_pieces``.  The result then records every
        mesh iteration in ``result.refinement``.
    checkpoint : (path, every), optional
        Write the current iterate as a Trajectory to ``path`` every ``every``
        iterations (atomically).

    Ctrl-C (SIGINT) or SIGTERM during the solve stops IPOPT after the current
    iteration; the result is flagged ``Status.INTERRUPTED`` and holds the last
    iterate.
    **options
        Transcription options: ``mode`` (``"default"``, ``"implicit"``,
        ``"explicit"``), ``constraint_method`` (``"bordalba2023"``,
        ``"posa2016"``), ``control_interpolation`` (``"free"``, ``"linear"``),
        ``derivative_bounds``, ``multiplier_bounds`` …

    Returns
    -------
    SolveResult
    """
    from .phases import MultiPhaseProblem, solve_phases

    if isinstance(problem, MultiPhaseProblem):
        if refine is not None:
            raise OptionError("`refine` is not available for multi-phase problems; give each Phase its own `intervals` or `mesh`.")
        return solve_phases(problem, scheme=scheme, intervals=intervals, mesh=mesh, guess=guess, ipopt=ipopt, verbose=verbose,
                            expand=expand, progress=progress, checkpoint=checkpoint, **options)
    if not isinstance(problem, Problem):
        raise ProblemError(f"solve() takes a colloc.Problem or MultiPhaseProblem; got {type(problem).__name__}.")
    if scheme == "midpoint-vi":
        if refine is not None:
            raise OptionError("`refine` is not available for scheme='midpoint-vi'; give a finer `intervals` or `mesh`.")
        from .variational import solve_midpoint_vi

        return solve_midpoint_vi(problem, intervals=intervals, mesh=mesh, guess=guess, ipopt=ipopt, verbose=verbose,
                                 expand=expand, progress=progress, checkpoint=checkpoint, **options)
    if refine is not None:
        from .refine import solve_adaptive

        if not isinstance(refine, dict):
            raise OptionError(f"`refine` must be a dict such as {{'tolerance': 1e-6}}; got {type(refine).__name__}.")
        allowed = ("tolerance", "max_iterations", "max_intervals", "max_pieces")
        for key in refine:
            if key not in allowed:
                raise OptionError(f"Unknown refinement option `{key}`.{did_you_mean(key, allowed)} Known: {', '.join(allowed)}.")
        return solve_adaptive(problem, scheme, 50 if intervals is None and mesh is None else intervals, mesh=mesh, guess=guess,
                              ipopt=ipopt, verbose=verbose, expand=expand, progress=progress, checkpoint=checkpoint,
                              **options, **refine)
    problem.validate()
    sch = get_scheme(scheme)
    mesh_points = make_mesh(intervals, mesh)
    opts = make_options(**options)
    warm = _as_guess(guess)
    ipopt_opts = ipopt_options(ipopt, verbose)

    start = _time.perf_counter()
    nlp = transcribe(problem, mesh_points, sch, opts, warm)
    to_trajectory = lambda w: reconstruct(problem, nlp, nlp.layout.unpack(w), sch, meta=dict(status="checkpoint", success=False))  # noqa: E731
    sol, stats, build_seconds, solve_seconds = run_ipopt(nlp, ipopt_opts, expand, progress, checkpoint, to_trajectory, start)
    return _result(problem, nlp, sch, sol, stats, build_seconds, solve_seconds, opts)


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


def _check_ipopt_options(opts):
    """Refuse unknown or ill-typed IPOPT options by name before anything is built (a tiny probe solver)."""
    text = _probe(opts)
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
    values = {}
    if terms:
        out = ca.Function("terms", [nlp.w], list(terms.values()))(w)
        values = {k: float(v) for k, v in zip(terms, out if isinstance(out, (list, tuple)) else [out])}
    return Outcome(w, g, status, message, status in (Status.SOLVED, Status.ACCEPTABLE), float(sol["f"]), values,
                   int(stats.get("iter_count", 0)))


def slack_warnings(slacks) -> list:
    """One warning per slack block that reached its bound (±1e-3)."""
    return [f"the largest constraint slack `{k}` is {v:.2e} (at its bound); refine the mesh" for k, v in slacks.items() if v > 1e-3 * (1 - 1e-9)]


def _result(problem, nlp, scheme, sol, stats, build_seconds, solve_seconds, opts):
    o = outcome(nlp, sol, stats, nlp.info["terms"])
    values = nlp.layout.unpack(o.w)
    slacks = nlp.info["method"].slacks(values)
    traj = reconstruct(problem, nlp, values, scheme, meta=dict(
        status=o.status.value, success=o.success, objective=o.objective, iterations=o.iterations,
        constraint_method=opts.constraint_method if problem.model.constraints else None,
    ))
    size = dict(variables=int(nlp.layout.size), constraints=int(nlp.rows.size))
    return SolveResult(traj, o.success, o.status, o.message, o.objective, o.terms, o.iterations, build_seconds, solve_seconds,
                       nlp.rows.violations(o.g), nlp.rows.worst(o.g, 10), slacks, slack_warnings(slacks), dict(stats), size)


def _ipopt_option_error(text, given):
    """Turn IPOPT's complaint about an option into one sentence naming it."""
    import re


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


def reconstruct(problem, nlp, values, scheme, meta=None) -> Trajectory:
    """The Trajectory of a (possibly unconverged) decision vector, unpacked by block."""
    info = nlp.info
    t0 = problem.t0_value
    tf = float(values["tf"][0, 0]) if "tf" in values else problem.tf_bounds[0]
    times = t0 + info["tau"] * (tf - t0)
    X, Z, U, LAM, P = values["x"], values["z"], values["u"], values["lam"], values["p"]
    XD = np.asarray(info["point"].map(times.size)(times[None, :], X, Z, U, LAM, P)[0]).reshape(X.shape)
    model = problem.model
    cols, kinds = {}, {}
    for i, v in enumerate(model.states):
        cols[v.name], kinds[v.name] = X[i], "state"
    for i, v in enumerate(model.controls):
        cols[v.name], kinds[v.name] = U[i], "control"
    for i, v in enumerate(model.multipliers):
        cols[v.name], kinds[v.name] = LAM[i], "multiplier"
    for i, v in enumerate(model.states):
        cols[v.name + ".dot"], kinds[v.name + ".dot"] = XD[i], "derivative"
    params = {v.name: float(P[i, 0]) for i, v in enumerate(model.parameters)}
    metadata = dict(problem=problem.name, scheme=scheme.name, intervals=int(info["n"]), mesh=[float(x) for x in info["mesh"]])
    metadata.update(meta or {})
    return Trajectory(times, cols, kinds, params, metadata)


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
