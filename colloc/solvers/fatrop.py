"""The FATROP backend: a structure-exploiting interior-point solver on the stage-wise form of the NLP.

FATROP (Vanroye, Sathya, De Schutter, Decré, "FATROP: A Fast Constrained
Optimal Control Problem Solver for Robot Trajectory Optimization and Control",
IROS 2023) ships in the CasADi wheel as the ``fatrop`` nlpsol plugin.  It
factorises the KKT system by a Riccati recursion over stages, O(K n³) for K
stages of n variables, instead of a general sparse LDLᵀ.  It needs the NLP in
optimal-control form; :mod:`colloc.solvers.stages` derives that form from
colloc's NLP (a permutation of variables and rows plus copies of the mesh
points that two intervals share) and this module declares it to CasADi
(``structure_detection="manual"`` with the stage sizes), runs FATROP and maps
the solution back to colloc's layout, so results look exactly like IPOPT's.

What FATROP cannot take is refused with one sentence before anything is built
(its `capabilities` and :func:`refusal`, read by :func:`colloc.solvers.check`): multi-phase problems and midpoint-vi, a free final time and
parameters (variables of the whole problem: FATROP's CasADi interface has no
global variables), the Legendre–Gauss schemes (their control penalty couples
two intervals) and endpoint constraints linking t0 and tf.

FATROP reports no iterations while it runs, so there are no progress lines,
checkpoints or stop requests between iterations: ``progress=True`` prints
FATROP's own log, and Ctrl-C is honoured when FATROP returns (the result is
then flagged ``Status.INTERRUPTED``).
"""
from __future__ import annotations

import signal
import warnings
import time as _time

import casadi as ca
import numpy as np

from ..errors import OptionError
from ..results.trajectory import Status
from .ipopt import Outcome, _interruptible, merged_options, outcome_terms, refuse_options_one_by_one, sigint_as
from .stages import stage_structure, stagewise

#: FATROP's return flags (fatrop/ip_algorithm/ip_algorithm.hpp, IpSolverReturnFlag) with colloc's status and hint.
_STATUS = {
    0: (Status.SOLVED, "Optimal solution found."),
    1: (Status.MAX_ITERATIONS, "FATROP hit its iteration limit; raise fatrop={'max_iter': ...}, give a better guess, or solve with backend='ipopt'."),
}
#: FATROP 1.1 (the CasADi 3.8 wheel) returns 1 for every other failure too (a stalled line search, restoration).
_STALLED = (Status.FAILED, "FATROP stopped before converging, short of its iteration limit (a stalled line search or a failed "
                           "restoration); loosen fatrop={'tol': ...}, give a better guess, or solve with backend='ipopt'.")

DEFAULT_FATROP = {"tol": 1e-8, "max_iter": 3000, "print_level": 0}

#: FATROP's options (its OptionRegistry), for "did you mean" hints.
FATROP_OPTIONS = ("tol", "acceptable_tol", "acceptable_iter", "max_iter", "print_level", "mu_init", "bound_push", "bound_frac",
                  "constr_viol_tol", "compl_inf_tol", "kappa_eta", "kappa_mu", "theta_mu", "tau_min", "max_soc", "lam_max",
                  "linsol_it_ref", "linsol_perturbed_mode", "linsol_perturbed_mode_param", "linsol_lu_fact_tol",
                  "linsol_diagnostic", "linsol_increased_accuracy", "mu_linear_decrease_factor", "mu_superlinear_decrease_power",
                  "tiny_step_tol", "tiny_step_y_tol", "warm_start_init_point", "warm_start_mult_bound_push", "iterative_refinement")


def _probe(opts):
    """Solve a one-stage toy OCP with ``opts``; FATROP's complaint (last line), or ``None``."""
    x = ca.SX.sym("x", 2)
    try:
        s = ca.nlpsol("probe", "fatrop", {"x": x, "f": (x[0] - 1) ** 2 + x[1] ** 2, "g": x[1] - x[0]},
                      {"structure_detection": "manual", "N": 1, "nx": [1, 1], "nu": [0, 0], "ng": [0, 0], "print_time": False,
                       "error_on_fail": False, "fatrop": {**opts, "print_level": 0}})
        s(x0=[1, 1], lbg=0, ubg=0)
    except RuntimeError as e:
        return str(e).strip().splitlines()[-1]
    return None


def fatrop_options(given=None, verbose=False) -> dict:
    """colloc's FATROP defaults updated with the user's ``fatrop`` dict, each option checked by FATROP itself."""
    opts = merged_options(DEFAULT_FATROP, given, 10 if verbose else None, "fatrop", "FATROP")
    if _probe(opts) is None:
        return opts
    refuse_options_one_by_one(opts, _probe, "FATROP", "not supported", FATROP_OPTIONS)
    raise OptionError(f"FATROP refused the options {opts}: {_probe(opts)}")


def refusal(tr):
    """Why FATROP cannot take the stage-wise transcription ``tr`` (its problem and scheme), or None; what its
    capabilities do not say already (:func:`colloc.solvers.check`)."""
    problem, scheme = tr.problem, tr.scheme
    if problem.free_final_time:
        return ("its final time is free, a variable of the whole problem that would couple every stage "
                "(FATROP's CasADi interface has no global variables)")
    if problem.model.parameters:
        names = ", ".join(v.name for v in problem.model.parameters)
        return f"it has parameters ({names}), variables of the whole problem that would couple every stage"
    if not scheme.stagewise:
        return f"scheme `{scheme.name}` ties each mesh point's control to both neighbouring intervals; use radau or hermite-simpson"
    for bc in problem.boundaries:
        ends = [problem.endpoint_symbols(w).values() for w in ("t0", "tf")]
        if all(any(ca.depends_on(bc.expr, s) for s in syms) for syms in ends):
            return f"endpoint constraint `{bc.name}` links the initial and the final point, which are N stages apart"
    return None


def run_fatrop(nlp, opts, expand, progress, checkpoint, to_trajectory, start):
    """Derive the stage form of ``nlp``, solve it with FATROP and map the solution back; as :func:`~.ipopt.run_ipopt`."""
    st = stage_structure(nlp)
    W, f, g, x0, lbx, ubx, lbg, ubg = stagewise(nlp, st)
    if progress is True and opts.get("print_level", 0) == 0:
        opts = {**opts, "print_level": 10}
    with _ctrl_c_ends_the_process():
        solver = ca.nlpsol("colloc_fatrop", "fatrop", {"x": W, "f": f, "g": g},
                           {"expand": bool(expand), "structure_detection": "manual", "N": st.num_intervals, "nx": st.nx,
                            "nu": st.nu, "ng": st.ng, "fatrop": opts, "print_time": False, "error_on_fail": False})
    build_seconds = _time.perf_counter() - start
    monitor = _StopRequest()
    start, cpu = _time.perf_counter(), _time.process_time()
    with _interruptible(monitor):
        sol = solver(x0=x0, lbx=lbx, ubx=ubx, lbg=lbg, ubg=ubg)
    solve_seconds = _time.perf_counter() - start
    stats = dict(solver.stats())
    stats["solve_cpu_seconds"] = _time.process_time() - cpu  # moves less than wall time when the machine is shared
    stats["max_iter"] = opts.get("max_iter")
    if monitor.interrupted:
        stats["return_status"] = "interrupted"
    return _unpermute(nlp, st, sol), stats, build_seconds, solve_seconds


def _ctrl_c_ends_the_process():
    """Ctrl-C during FATROP's build (one C++ call that can take minutes and never returns to Python in between)
    ends the process at once with the signal's own status (a shell reports 130), instead of waiting for the build.

    Nothing is solved yet, so nothing is lost: the result's claim (its lock file) is taken over by the next run.
    """
    return sigint_as(signal.SIG_DFL)


class _StopRequest:
    """What :class:`~.ipopt._interruptible` sets on Ctrl-C; FATROP cannot be stopped between iterations, so say so."""

    def __init__(self):
        self._interrupted = False

    @property
    def interrupted(self):
        return self._interrupted

    @interrupted.setter
    def interrupted(self, value):
        if value and not self._interrupted:
            warnings.warn("stopping when FATROP returns (it cannot be stopped between iterations; max_iter bounds it)", stacklevel=2)
        self._interrupted = bool(value)


def _unpermute(nlp, st, sol):
    """FATROP's solution in colloc's layout: variables from their home entries, rows in the NLP's order."""
    W = np.asarray(sol["x"]).ravel()
    gW = np.asarray(sol["g"]).ravel()
    lam_gW = np.asarray(sol["lam_g"]).ravel()
    mine = st.rows >= 0
    g = np.empty(nlp.rows.size)
    lam_g = np.empty(nlp.rows.size)
    g[st.rows[mine]] = gW[mine]
    lam_g[st.rows[mine]] = lam_gW[mine]
    return {"x": W[st.home], "f": sol["f"], "g": g, "lam_g": lam_g, "lam_x": np.asarray(sol["lam_x"]).ravel()[st.home]}


def outcome(nlp, sol, stats, terms) -> Outcome:
    """Map FATROP's return flag to a :class:`Status` with its hint; evaluate each cost term at the solution."""
    w, g = np.asarray(sol["x"]).ravel(), np.asarray(sol["g"]).ravel()
    ret = stats.get("return_status")
    if ret == "interrupted":
        status, message = Status.INTERRUPTED, ("The solve was interrupted; FATROP finished its run first (it cannot stop between "
                                               "iterations) and its last iterate is kept.")
    elif ret == 1 and stats.get("max_iter") is not None and stats.get("iter_count", 0) < stats["max_iter"]:
        status, message = _STALLED
    else:
        status, message = _STATUS.get(ret, (Status.FAILED, f"FATROP stopped with return flag {ret}; inspect the worst violated "
                                                          f"rows, try a better guess or backend='ipopt'."))
    if not np.isfinite(w).all() or not np.isfinite(g).all():
        status, message = Status.INVALID_NUMBER, "FATROP met NaN or inf; bound the variables away from singularities or improve the guess."
    return Outcome(w, g, status, message, status in (Status.SOLVED, Status.ACCEPTABLE), float(sol["f"]), outcome_terms(nlp, w, terms),
                   int(stats.get("iter_count", 0)))


class FatropBackend:
    """FATROP through CasADi on the stage-wise form of the NLP: ``backend="fatrop"``, options in ``fatrop={...}``."""

    name = "fatrop"
    #: What it takes beyond stage-wise single-phase collocation (:data:`colloc.solvers.CAPABILITIES`): nothing.
    capabilities = frozenset()
    options = staticmethod(fatrop_options)
    refusal = staticmethod(refusal)
    run = staticmethod(run_fatrop)
    outcome = staticmethod(outcome)
