"""colloc against a hand-written CasADi NLP of the same scheme and formulation.

Both sides solve the same NLP: same variables and bounds, same rows (in their own
order), same cost quadrature, same initial guess, same IPOPT options (colloc's
``DEFAULT_IPOPT``).  The hand-written side is what a careful CasADi user writes:
one SX ``Function`` per grid point, ``map``-ped over the grid, an MX decision
vector reshaped into one column per grid point (interleaved ordering), defects
as whole-matrix MX arithmetic, exact Hessian, no expansion of the whole NLP (colloc's default,
``expand=False``; ``--options`` measures ``expand=True`` on both sides).

Problems
    ``cartpole``  Kelly 2017 cart-pole swing-up (problems/cartpole.py), explicit
                  ``ẋ = f`` (colloc ``mode="explicit"``) or derivative variables
                  plus residual rows ``z − f = 0`` (``mode="implicit"``).
    ``pendulum``  Betts 10.103 Cartesian pendulum with a holonomic rod
                  (problems/pendulum_cartesian.py) in colloc's default mode
                  (accelerations as variables, inverse-dynamics residual,
                  multiplier) and its default constraint method bordalba2023
                  (projection states and slacks).  The hand-written side reads
                  bounds, endpoint values and the guess table from the Problem
                  object (data only; every equation is written out below).

Measured per configuration (median over ``--reps``): build seconds (colloc:
``SolveResult.build_seconds`` = transcription + ``nlpsol``; hand-written: symbolic
model + NLP + bounds/guess arrays + ``nlpsol``), solve seconds (the solver call),
IPOPT iterations, objective, peak memory; ratios colloc / hand-written, in wall
seconds and in process CPU seconds (the CPU ratios move less when other work
shares the machine).  Every row also carries the seconds IPOPT spent in NLP
function evaluations and, for colloc, in its iteration callback.  The run warns
when the two objectives differ by more than 1e-8 relative: then the two sides
no longer solve the same NLP and the hand-written one must follow colloc.

Peak memory: ``tracemalloc`` misses CasADi's C++ allocations, so every
configuration runs in a fresh ``spawn`` subprocess that imports everything,
warms up (one tiny solve of each side, so plugin loading is in nobody's time),
records ``ru_maxrss`` as its baseline, runs the repetitions and records
``ru_maxrss`` again.  ``peak`` is the process high-water mark (MiB) and
``delta`` = peak − baseline is what the build and solve added.  With
``--no-isolate`` everything runs in this process and memory is not reported.

Targets (printed, not asserted): build ≤ 1.5×, solve ≤ 1.2× with iterations
within ±10 %, a 10,000-interval Hermite–Simpson cart-pole solves with time per
iteration growing no faster than N^1.15.

Option study (``--options``, Hermite–Simpson, both sides): MX ``map`` without
expansion vs ``expand=True``; ``map(..., "thread", 2)``; MUMPS orderings and
scalings; IPOPT's NLP scaling; other linear solvers if they load; FATROP on a
stage-wise copy of the cart-pole NLP (hand-written only: colloc's block layout
is not stage-wise); and the nonzeros of both NLPs' Jacobian and Hessian.

Usage::

    python scripts/benchmark.py --quick                         # < 1 minute
    python scripts/benchmark.py --problem all --reps 3 --out    # writes results/benchmark.csv
    python scripts/benchmark.py --options --problem all --sizes 100 400 1600
    python scripts/benchmark.py --large --large-hand
    python scripts/benchmark.py --profile --problem pendulum --sizes 400
    python scripts/benchmark.py --fatrop [--sizes 100 400 1600 6400]   # FATROP backend vs IPOPT
    python scripts/benchmark.py --fatrop-shooting                      # FATROP's best case, hand-written
    python scripts/benchmark.py --end-to-end --problem all --sizes 25 100 400 1600 10000
    python scripts/benchmark.py --robots --sizes 100
    python scripts/benchmark.py --fixed-cost --problem all --sizes 25 50 100   # colloc's CPU outside IPOPT by stage
    python scripts/benchmark.py --compiled [--cases panda-50 ur5-40]   # compiled point functions, first/second run
    CROCODDYL_PYTHON=... python scripts/benchmark.py --crocoddyl [--sizes 50 100]   # Panda reach: colloc and crocoddyl
    python scripts/benchmark.py --osim [--sizes 100]   # .osim models: residual and Hessian beside OpenSim's own cost

``--end-to-end`` (scripts/end_to_end.py) times what a user runs, build() and colloc.solve() with every
default, against the faster of two MUMPS orderings of the hand-written NLP without whole-NLP expansion.
    python scripts/benchmark.py --contact [--sizes 20]            # contact-implicit problems, then robots (contact_robots.py)
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import csv
import gc
import importlib
import importlib.util
import math
import multiprocessing as mp
import os
import resource
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field, replace

import casadi as ca
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:  # problems/ is a folder of scripts next to the package
    sys.path.insert(0, ROOT)

SCHEMES = ("trapezoidal", "hermite-simpson", "radau-3")
SIZES = (25, 50, 100, 200, 400, 800, 1600)
TARGETS = dict(build=1.5, solve=1.2, iterations=0.10, slope=1.15)
OBJECTIVE_RTOL = 1e-8


@dataclass(frozen=True)
class Case:
    """One configuration of one side (``colloc`` or ``hand``)."""

    problem: str = "cartpole"
    scheme: str = "hermite-simpson"
    n: int = 25
    mode: str = "explicit"
    side: str = "colloc"
    expand: bool = False
    threads: int = 0          # > 0: map(..., "thread", threads)
    ipopt: tuple = ()         # extra IPOPT options as (key, value) pairs
    solver: str = "ipopt"     # hand side only: "ipopt", "fatrop" (stage-wise NLP)
    label: str = "default"    # option-study variant name


def ipopt_options(extra=()):
    """colloc's own IPOPT defaults (so both sides always run the same options) plus ``extra``."""
    try:
        opts = dict(importlib.import_module("colloc.solvers.ipopt").DEFAULT_IPOPT)
    except (ImportError, AttributeError):
        opts = {"tol": 1e-8, "max_iter": 3000, "print_level": 0, "sb": "yes"}
    opts.update(dict(extra))
    return opts


# ======================================================================== hand-written
@dataclass
class Tables:
    """Nodes on [0, 1] (both interval ends), quadrature weights, defect rows."""

    name: str
    nodes: np.ndarray
    weights: np.ndarray
    D: np.ndarray = None

    @property
    def stride(self):
        return self.nodes.size - 1

    def defects(self, X, F, h):
        """Defect matrices (one column per interval) from node matrices ``X[j]``, ``F[j]``."""
        if self.name == "trapezoidal":
            return [X[1] - X[0] - 0.5 * h * (F[0] + F[1])]
        if self.name == "hermite-simpson":
            return [X[1] - 0.5 * (X[0] + X[2]) - (h / 8) * (F[0] - F[2]),
                    X[2] - X[0] - (h / 6) * (F[0] + 4 * F[1] + F[2])]
        rows = []  # Radau: h f_k − Σ_j D_kj x_j, k = 1..d
        for k in range(1, self.nodes.size):
            acc = h * F[k]
            for j in range(self.nodes.size):
                acc = acc - self.D[k, j] * X[j]
            rows.append(acc)
        return rows


def tables(scheme):
    if scheme == "trapezoidal":
        return Tables(scheme, np.array([0.0, 1.0]), np.array([0.5, 0.5]))
    if scheme == "hermite-simpson":
        return Tables(scheme, np.array([0.0, 0.5, 1.0]), np.array([1, 4, 1]) / 6)
    if scheme.startswith("radau-"):
        d = int(scheme.split("-")[1])
        roots = np.array(ca.collocation_points(d, "radau"))
        nodes = np.concatenate([[0.0], roots])
        D = np.zeros((d + 1, d + 1))
        for j in range(d + 1):  # ℓ_j' at every node
            others = np.delete(nodes, j)
            p = np.poly1d(others, r=True) / np.prod(nodes[j] - others)
            D[:, j] = np.polyder(p)(nodes)
        weights = np.zeros(d + 1)
        for j in range(d):      # Radau quadrature on the d roots
            others = np.delete(roots, j)
            p = np.polyint(np.poly1d(others, r=True) / np.prod(roots[j] - others))
            weights[j + 1] = p(1.0) - p(0.0)
        return Tables(scheme, nodes, weights, D)
    raise ValueError(f"unknown scheme {scheme}")


def grid(tab, n):
    """Normalised time of every grid point (uniform mesh)."""
    inner = (np.arange(n)[:, None] + tab.nodes[None, :-1]).ravel() / n
    return np.concatenate([inner, [1.0]])


def node_matrices(M, tab, n):
    """Columns of ``M`` (one per grid point) at node j of every interval, j = 0..m."""
    m = tab.stride
    return [M[:, j:n * m:m] for j in range(m)] + [M[:, m::m]]


def quadrature(tab, n, h):
    """Weights on the grid with ``∫ L dt ≈ Σ_k W_k L_k`` (uniform mesh, interval length ``h``)."""
    W = np.concatenate([np.tile(tab.weights[:-1], n), [0.0]])
    W[tab.stride::tab.stride] += tab.weights[-1]
    return h * W


def fmap(f, count, threads):
    return f.map(count, "thread", threads) if threads else f.map(count)


def solver_options(case):
    return {"ipopt": ipopt_options(case.ipopt), "expand": case.expand, "print_time": False, "error_on_fail": False}


# ------------------------------------------------------------------- cart-pole (Kelly 2017)
CARTPOLE = dict(T=2.0, d=1.0, m1=1.0, m2=0.3, ell=0.5, g=9.81, umax=20.0, dmax=2.0)


def cartpole_point(mode):
    """Per-point SX Function: explicit ``(x, u) -> (f, L)``, implicit ``(x, z, u) -> (z − f, L)``."""
    c = CARTPOLE
    x, u = ca.SX.sym("x", 4), ca.SX.sym("u")
    q2, dq1, dq2 = x[1], x[2], x[3]
    s, co = ca.sin(q2), ca.cos(q2)
    ddq1 = (c["ell"] * c["m2"] * s * dq2**2 + u + c["m2"] * c["g"] * co * s) / (c["m1"] + c["m2"] * (1 - co**2))
    ddq2 = -(c["ell"] * c["m2"] * co * s * dq2**2 + u * co + (c["m1"] + c["m2"]) * c["g"] * s) / (c["ell"] * c["m1"] + c["ell"] * c["m2"] * (1 - co**2))
    f = ca.vertcat(dq1, dq2, ddq1, ddq2)
    if mode == "explicit":
        return ca.Function("point", [x, u], [f, u**2])
    z = ca.SX.sym("z", 4)
    return ca.Function("point", [x, z, u], [z - f, u**2])


def cartpole_arrays(tab, n, mode):
    """Bounds and guess, one column per grid point, rows (x, z, u); colloc's default guess."""
    c = CARTPOLE
    nz = 4 if mode == "implicit" else 0
    tau = grid(tab, n)
    times = c["T"] * tau
    inf = np.inf
    lo = np.tile(np.array([-c["dmax"], -inf, -inf, -inf] + [-inf] * nz + [-c["umax"]])[:, None], tau.size)
    hi = -lo
    lo[:4, 0] = hi[:4, 0] = 0.0
    lo[:4, -1] = hi[:4, -1] = [c["d"], np.pi, 0.0, 0.0]
    s = (times - times[0]) / (times[-1] - times[0])
    w0 = np.zeros_like(lo)
    w0[0], w0[1] = c["d"] * s, np.pi * s         # states linear between the boundary values, force 0
    if nz:
        w0[4:8] = np.gradient(w0[:4], times, axis=1)
    return lo, hi, np.clip(w0, lo, hi)


def build_cartpole(case):
    c = CARTPOLE
    tab = tables(case.scheme)
    n, m = case.n, tab.stride
    ngrid = n * m + 1
    nz = 4 if case.mode == "implicit" else 0
    nw = 4 + nz + 1
    point = cartpole_point(case.mode)
    w = ca.MX.sym("w", nw * ngrid)
    W = ca.reshape(w, nw, ngrid)
    X, U = W[:4, :], W[4 + nz:, :]
    if nz:
        Z = W[4:8, :]
        RES, L = fmap(point, ngrid, case.threads)(X, Z, U)
        XD = Z
    else:
        XD, L = fmap(point, ngrid, case.threads)(X, U)
    h = c["T"] / n
    g = [ca.vec(d) for d in tab.defects(node_matrices(X, tab, n), node_matrices(XD, tab, n), h)]
    if nz:
        g.append(ca.vec(RES))
    f = ca.mtimes(L, ca.DM(quadrature(tab, n, h)))
    g = ca.vertcat(*g)
    lo, hi, w0 = cartpole_arrays(tab, n, case.mode)
    args = dict(x0=w0.ravel("F"), lbx=lo.ravel("F"), ubx=hi.ravel("F"), lbg=np.zeros(g.numel()), ubg=np.zeros(g.numel()))
    return {"x": w, "f": f, "g": g}, args


# ------------------------------------------------------- Cartesian pendulum (Betts 10.103)
PEND_STATES = ("pend.x", "pend.y", "pend.vx", "pend.vy")
GRAVITY = 9.81


@dataclass
class PendulumData:
    """Bounds, endpoint ranges and guess specs of the pendulum Problem (data only)."""

    T: float
    bounds: dict
    initial: dict
    final: dict
    guesses: dict
    projection_weight: float = 1e-6
    slack_bound: float = 1e-3

    @classmethod
    def from_problem(cls, problem):
        return cls(problem.tf_bounds[0], dict(problem.bounds), dict(problem.initial_bounds),
                   dict(problem.final_bounds), dict(problem.guesses))

    def sample(self, name, times):
        """Guess of ``name`` on ``times``: the user's spec or the middle of the bounds (colloc's rules)."""
        spec = self.guesses.get(name)
        if spec is None:
            lo, hi = self.bounds[name]
            mid = 0.5 * (lo + hi) if math.isfinite(lo) and math.isfinite(hi) else (lo if math.isfinite(lo) else hi if math.isfinite(hi) else 0.0)
            return np.full(times.size, mid)
        kind, data = spec
        if kind == "constant":
            return np.full(times.size, data)
        if kind == "linear":
            return data[0] + (times - times[0]) / (times[-1] - times[0]) * (data[1] - data[0])
        return np.interp(times, *data)


def pendulum_functions():
    """Per-point dynamics and the mesh-point constraint levels, written out by hand.

    Residual ``M a + c − τ − Gᵀλ`` with M = I, c = (0, g), τ = (u y, −u x),
    G = (2x, 2y); φ = x² + y² − 1, φ̇ = 2(x ẋ + y ẏ), φ̈ = 2(x a_x + y a_y + ẋ² + ẏ²).
    """
    x, z, u, lam = ca.SX.sym("x", 4), ca.SX.sym("z", 2), ca.SX.sym("u"), ca.SX.sym("lam")
    px, py, vx, vy = x[0], x[1], x[2], x[3]
    xdot = ca.vertcat(vx, vy, z[0], z[1])
    res = ca.vertcat(z[0] - u * py - 2 * lam * px, z[1] + GRAVITY + u * px - 2 * lam * py)
    acc = 2 * (px * z[0] + py * z[1] + vx**2 + vy**2)
    point = ca.Function("point", [x, z, u, lam], [xdot, res, acc, u**2])
    F = ca.vertcat(px**2 + py**2 - 1, 2 * (px * vx + py * vy))
    mu = ca.SX.sym("mu", 2)
    levels = ca.Function("levels", [x], [F])
    xp = ca.SX.sym("xp", 4)
    projection = ca.Function("projection", [x, xp, mu], [x - xp - ca.mtimes(ca.jacobian(F, x).T, mu)])
    return point, levels, projection


def pendulum_guess(data, times):
    """colloc's guess: the user's table, clipped; q projected on φ = 0 and v on φ̇ = 0 moving only the
    entries not fixed at that point; a = v̇ projected on φ̈ = 0; λ by least squares on the residual."""
    lo, hi = pendulum_bounds(data, times.size)
    W = np.vstack([np.array([data.sample(s, times) for s in PEND_STATES]), np.zeros((2, times.size)),
                   data.sample("pend.u", times)[None], data.sample("pend.rod.lambda", times)[None]])
    W = np.clip(W, lo, hi)
    free = lo[:4] < hi[:4]
    p, v = W[:2], W[2:4]  # views: the steps below update W
    for _ in range(8):  # Gauss–Newton, minimum-norm steps in the free coordinates along ∂φ/∂q = 2q
        r = (p**2).sum(0) - 1
        J = 2 * p * free[:2]
        nJ = (J**2).sum(0)
        p -= np.where((np.abs(r) < 1e-12) | (nJ == 0), 0.0, J * r / np.where(nJ == 0, 1.0, nJ))
    W[:4] = np.clip(W[:4], lo[:4], hi[:4])
    for _ in range(2):  # speeds onto φ̇ = 2 q·v = 0 (∂φ̇/∂v = 2q), free speeds only
        J = 2 * p * free[2:]
        nJ = (J**2).sum(0)
        v -= np.where(nJ == 0, 0.0, J * (2 * (p * v).sum(0)) / np.where(nJ == 0, 1.0, nJ))
        W[:4] = np.clip(W[:4], lo[:4], hi[:4])
    Z = np.gradient(v, times, axis=1)
    Z -= p * ((p * Z).sum(0) + (v**2).sum(0)) / (p**2).sum(0)  # onto φ̈ = 0
    U, LAM = W[6:7], W[7:8]
    res = np.vstack([Z[0] - U[0] * p[1], Z[1] + GRAVITY + U[0] * p[0]]) - 2 * LAM * p
    W[4:6] = Z
    W[7] += (p * res).sum(0) / (2 * (p**2).sum(0))
    return np.clip(W, lo, hi)


def pendulum_bounds(data, ngrid):
    rows = [data.bounds[s] for s in PEND_STATES] + [(-np.inf, np.inf)] * 2 + [data.bounds["pend.u"], data.bounds["pend.rod.lambda"]]
    lo = np.tile(np.array([r[0] for r in rows])[:, None], ngrid)
    hi = np.tile(np.array([r[1] for r in rows])[:, None], ngrid)
    for col, ends in ((0, data.initial), (-1, data.final)):
        for i, s in enumerate(PEND_STATES):
            if s in ends:
                lo[i, col], hi[i, col] = max(lo[i, col], ends[s][0]), min(hi[i, col], ends[s][1])
    return lo, hi


def _kept_levels(data, ends):
    """φ, φ̇ rows left at an end point: a row whose states are all fixed there is redundant."""
    fixed = {s for s in PEND_STATES if s in ends and ends[s][0] == ends[s][1]}
    return [i for i, deps in enumerate((PEND_STATES[:2], PEND_STATES)) if not set(deps) <= fixed]


def build_pendulum(case, data):
    tab = tables(case.scheme)
    n, m = case.n, tab.stride
    ngrid = n * m + 1
    point, levels, projection = pendulum_functions()
    npt, nint = 8, 6  # per grid point (x, z, u, λ); per interval (x', μ)
    w = ca.MX.sym("w", npt * ngrid + nint * n)
    W = ca.reshape(w[:npt * ngrid], npt, ngrid)
    E = ca.reshape(w[npt * ngrid:], nint, n)
    X, Z, U, LAM, Xp, MU = W[:4, :], W[4:6, :], W[6:7, :], W[7:8, :], E[:4, :], E[4:6, :]
    XD, RES, ACC, L = fmap(point, ngrid, case.threads)(X, Z, U, LAM)
    ends = list(range(m, ngrid, m))
    XDp, RESp, ACCp, _ = fmap(point, n, case.threads)(Xp, Z[:, ends], U[:, ends], LAM[:, ends])
    inner = [k for k in range(ngrid) if k == 0 or k % m]
    Xn = node_matrices(X, tab, n)[:-1] + [Xp]
    Fn = node_matrices(XD, tab, n)[:-1] + [XDp]
    h = data.T / n
    g = [ca.vec(d) for d in tab.defects(Xn, Fn, h)]
    g += [ca.vec(RES[:, inner]), ca.vec(RESp), ca.vec(ACC[:, inner]), ca.vec(ACCp)]
    Fm = fmap(levels, n + 1, case.threads)(X[:, 0::m])
    g += [Fm[_kept_levels(data, data.initial), 0], ca.vec(Fm[:, 1:n]), Fm[_kept_levels(data, data.final), n]]
    g.append(ca.vec(fmap(projection, n, case.threads)(X[:, ends], Xp, MU)))
    f = ca.mtimes(L, ca.DM(quadrature(tab, n, h))) + data.projection_weight * ca.sumsqr(X[:, ends] - Xp)
    g = ca.vertcat(*g)

    times = data.T * grid(tab, n)
    lo, hi = pendulum_bounds(data, ngrid)
    w0 = pendulum_guess(data, times)
    sb = data.slack_bound
    path = np.array([data.bounds[s] for s in PEND_STATES])  # x' keeps the path bounds, also at the final point
    elo = np.vstack([np.tile(path[:, :1], n), np.full((2, n), -sb)])
    ehi = np.vstack([np.tile(path[:, 1:], n), np.full((2, n), sb)])
    e0 = np.vstack([w0[:4, ends], np.zeros((2, n))])
    cat = lambda a, b: np.concatenate([a.ravel("F"), b.ravel("F")])
    args = dict(x0=cat(w0, e0), lbx=cat(lo, elo), ubx=cat(hi, ehi), lbg=np.zeros(g.numel()), ubg=np.zeros(g.numel()))
    return {"x": w, "f": f, "g": g}, args


# ---------------------------------------------- FATROP: the cart-pole HS NLP, stage by stage
def build_cartpole_stagewise(case):
    """HS cart-pole as an OCP FATROP's structure detection accepts.

    Stage k: state s_k = (x_k, u_k), controls (x_m, u_m, x_e, u_e); gap closing
    s_{k+1} = (x_e, u_e) keeps the defects explicit in the stage's own variables.
    Same optimum as the separated HS NLP (the copies are equal at every feasible point).
    """
    n, h = case.n, CARTPOLE["T"] / case.n
    point = cartpole_point("explicit")
    s0, ctl = ca.SX.sym("s", 5), ca.SX.sym("c", 10)
    x0, u0, xm, um, xe, ue = s0[:4], s0[4], ctl[:4], ctl[4], ctl[5:9], ctl[9]
    f0, L0 = point(x0, u0)
    fm, Lm = point(xm, um)
    fe, Le = point(xe, ue)
    defects = ca.vertcat(xm - 0.5 * (x0 + xe) - h / 8 * (f0 - fe), xe - x0 - h / 6 * (f0 + 4 * fm + fe))
    stage = ca.Function("stage", [s0, ctl], [ca.vertcat(xe, ue), defects, h / 6 * (L0 + 4 * Lm + Le)])
    w = ca.MX.sym("w", 15 * n + 5)  # s_0, c_0, s_1, c_1, …, s_N
    W = ca.reshape(w[:15 * n], 15, n)
    S, C = W[:5, :], W[5:, :]
    nxt, dfc, cost = fmap(stage, n, case.threads)(S, C)
    g = ca.vec(ca.vertcat(ca.horzcat(S[:, 1:], w[15 * n:]) - nxt, dfc))  # stage by stage: gap, then path rows
    f = ca.sum2(cost)
    lo_pt, hi_pt, w0_pt = cartpole_arrays(tables("hermite-simpson"), n, "explicit")  # columns: mesh, mid, mesh, ...
    lbx, ubx, x0g = [], [], []
    for k in range(n + 1):
        # the copy (x_e, u_e) takes the path bounds: fixed final values on both it and s_N
        # would make the gap-closing rows redundant (FATROP keeps bounds as inequalities)
        for arr, out in ((lo_pt, lbx), (hi_pt, ubx), (w0_pt, x0g)):
            out.append(arr[:, 2 * k])
            if k < n:
                out += [arr[:, 2 * k + 1], arr[:, 1] if arr is not w0_pt else arr[:, 2 * k + 2]]
    args = dict(x0=np.concatenate(x0g), lbx=np.concatenate(lbx), ubx=np.concatenate(ubx),
                lbg=np.zeros(g.numel()), ubg=np.zeros(g.numel()))
    return {"x": w, "f": f, "g": g}, args


def hand_solver(case, problem_data=None):
    if case.solver == "fatrop":
        nlp, args = build_cartpole_stagewise(case)
        opts = {"structure_detection": "auto", "expand": case.expand, "print_time": False, "error_on_fail": False,
                "equality": [True] * nlp["g"].numel(), "fatrop": {"print_level": 0, "tol": 1e-8}}
        return ca.nlpsol("hand", "fatrop", nlp, opts), args
    nlp, args = build_pendulum(case, problem_data) if case.problem == "pendulum" else build_cartpole(case)
    return ca.nlpsol("hand", "ipopt", nlp, solver_options(case)), args


# ======================================================================== the two sides
def load_problem(name):
    module = importlib.import_module({"cartpole": "problems.cartpole", "pendulum": "problems.pendulum_cartesian"}[name])
    return module.build()


def run_colloc(case):
    import colloc as cl
    start = time.perf_counter()
    problem = load_problem(case.problem)
    model_s = time.perf_counter() - start
    kw = dict(scheme=case.scheme, intervals=case.n, expand=case.expand, ipopt=dict(case.ipopt) or None)
    if case.mode != "default":
        kw["mode"] = case.mode
    if case.threads:
        kw.update(parallelization="thread", threads=case.threads)
    # the driver notes when the build starts, the backend when it ends and when the solve starts and ends
    clock = _Clock()
    modules = [m for m in (sys.modules.get(name) for name in ("colloc.pipeline.driver", "colloc.solvers.ipopt", "colloc.pipeline.solve"))
               if m is not None and hasattr(m, "_time")]
    saved = [m._time for m in modules]
    for m in modules:
        m._time = clock
    try:
        start = time.perf_counter()
        res = cl.solve(problem, **kw)
        wall = time.perf_counter() - start
    finally:
        for m, original in zip(modules, saved):
            m._time = original
    cpu = clock.cpu if len(clock.cpu) == 4 else [math.nan] * 4  # start/end of build, start/end of solve
    return dict(build_s=res.build_seconds, solve_s=res.solve_seconds, build_cpu=cpu[1] - cpu[0], solve_cpu=cpu[3] - cpu[2],
                model_s=model_s, other_s=wall - res.build_seconds - res.solve_seconds, iterations=res.iterations,
                objective=res.objective, status=str(res.status.value), variables=res.nlp_size.get("variables"),
                constraints=res.nlp_size.get("constraints"), **_eval_times(res.stats))


class _Clock:
    """Stand-in for the ``time`` module of colloc's driver and IPOPT backend that also notes the process CPU time at every
    ``perf_counter()`` call, so colloc's own build/solve split gets CPU seconds too (robust to a busy machine)."""

    def __init__(self):
        self.cpu = []

    def perf_counter(self):
        self.cpu.append(time.process_time())
        return time.perf_counter()

    def __getattr__(self, name):
        return getattr(time, name)


def run_hand(case):
    data = PendulumData.from_problem(load_problem("pendulum")) if case.problem == "pendulum" else None
    start = time.perf_counter()
    out = _run_hand(case, data)  # the solver and its graph are released when _run_hand returns
    out["other_s"] = time.perf_counter() - start - out["build_s"] - out["solve_s"]
    return out


def _run_hand(case, data):
    start, cpu = time.perf_counter(), time.process_time()
    solver, args = hand_solver(case, data)
    build, build_cpu = time.perf_counter() - start, time.process_time() - cpu
    start, cpu = time.perf_counter(), time.process_time()
    sol = solver(**args)
    solve, solve_cpu = time.perf_counter() - start, time.process_time() - cpu
    stats = solver.stats()
    return dict(build_s=build, solve_s=solve, build_cpu=build_cpu, solve_cpu=solve_cpu, model_s=0.0, iterations=int(stats.get("iter_count", -1)),
                objective=float(sol["f"]), status=_status(stats),
                variables=int(args["x0"].size), constraints=int(args["lbg"].size), **_eval_times(stats))


def _eval_times(stats):
    """Seconds in NLP function evaluations and in the iteration callback (CasADi's wall-clock stats)."""
    return dict(feval_s=sum(v for k, v in stats.items() if k.startswith("t_wall_nlp")),
                callback_s=stats.get("t_wall_callback_fun", 0.0))


def _status(stats):
    ret = stats.get("return_status")
    return ret if isinstance(ret, str) else str(stats.get("unified_return_status", stats.get("success")))


def _rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def run_case(case, reps, warmup=True):
    """All repetitions of one case; rows of timings plus the memory high-water marks."""
    if warmup:  # plugin loading and first-call costs belong to nobody's time
        for side in ("colloc", "hand"):
            run_one(replace(case, n=4, side=side, threads=0, solver="ipopt", ipopt=()))
        run_one(replace(case, n=4))
    gc.collect()
    base = _rss_mib()
    rows = []
    for rep in range(reps):
        row = run_one(case)
        row["rep"] = rep
        rows.append(row)
        gc.collect()
    return dict(rows=rows, base_mib=base, peak_mib=_rss_mib())


def run_one(case):
    try:
        return run_colloc(case) if case.side == "colloc" else run_hand(case)
    except Exception as exc:  # a failing variant is a result of the study, not a crash
        return dict(build_s=math.nan, solve_s=math.nan, build_cpu=math.nan, solve_cpu=math.nan, model_s=math.nan, other_s=math.nan, iterations=-1,
                    objective=math.nan, status=f"error: {type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[-1][:160]}",
                    variables=0, constraints=0, feval_s=math.nan, callback_s=math.nan)


def measure(case, reps, isolate=True, timeout=3600):
    """``run_case`` in a fresh spawned process (memory per configuration) or in this one."""
    if not isolate:
        out = run_case(case, reps, warmup=False)
        out["base_mib"] = out["peak_mib"] = math.nan
        return out
    with cf.ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as pool:
        return pool.submit(run_case, case, reps).result(timeout=timeout)


# ======================================================================== summaries
@dataclass
class Summary:
    case: Case
    build_s: float
    solve_s: float
    iterations: int
    objective: float
    status: str
    peak_mib: float
    delta_mib: float
    other_s: float = 0.0
    callback_s: float = 0.0
    build_cpu: float = math.nan
    solve_cpu: float = math.nan
    variables: int = 0
    constraints: int = 0
    rows: list = field(default_factory=list)

    @property
    def per_iter(self):
        return self.solve_s / max(self.iterations, 1)


def summarize(case, out):
    rows = out["rows"]
    med = lambda k: statistics.median(r[k] for r in rows)
    first = rows[0]
    return Summary(case, med("build_s"), med("solve_s"), first["iterations"], first["objective"], first["status"],
                   out["peak_mib"], out["peak_mib"] - out["base_mib"], med("other_s"), med("callback_s"), med("build_cpu"), med("solve_cpu"),
                   first["variables"], first["constraints"], [dict(asdict(case), **r, peak_mib=out["peak_mib"], base_mib=out["base_mib"]) for r in rows])


def compare(problem="cartpole", scheme="hermite-simpson", n=10, mode=None, reps=1, isolate=False, **variant):
    """Both sides of one configuration: ``(colloc Summary, hand Summary)``."""
    mode = mode or ("default" if problem == "pendulum" else "explicit")
    out = []
    for side in ("colloc", "hand"):
        case = Case(problem, scheme, n, mode, side, **variant)
        out.append(summarize(case, measure(case, reps, isolate)))
    return tuple(out)


def solved(status):
    return status in ("solved", "acceptable", "Solve_Succeeded", "Solved_To_Acceptable_Level", "SOLVER_RET_SUCCESS")


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-300)


def fmt(v, spec=".3f"):
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def _ratio(a, b):
    return a / b if b and b > 0 and math.isfinite(b) else math.nan


def print_pairs(pairs, title):
    print(f"\n## {title}\n")
    head = (f"{'problem':8} {'scheme':15} {'mode':8} {'N':>5} | {'c.build':>7} {'c.solve':>7} {'c.it':>4} {'c.other':>7} {'cb%':>3} {'c.MiB':>5} |"
            f" {'h.build':>7} {'h.solve':>7} {'h.it':>4} {'h.MiB':>5} | {'build×':>6} {'solve×':>6} {'iter×':>5} {'s/it×':>5} {'mem×':>5} |"
            f" {'bld×cpu':>7} {'slv×cpu':>7} | {'objective':>15} {'rel.diff':>7} tgt")
    print(head)
    print("-" * len(head))
    for c, h in pairs:
        k = c.case
        rb, rs, ri = _ratio(c.build_s, h.build_s), _ratio(c.solve_s, h.solve_s), _ratio(c.iterations, h.iterations)
        d = rel(c.objective, h.objective)
        marks = ("B" if rb <= TARGETS["build"] else "b") + ("S" if rs <= TARGETS["solve"] else "s") + ("I" if abs(ri - 1) <= TARGETS["iterations"] else "i")
        print(f"{k.problem:8} {k.scheme:15} {k.mode:8} {k.n:5d} | {fmt(c.build_s):>7} {fmt(c.solve_s):>7} {c.iterations:4d} {fmt(c.other_s):>7}"
              f" {fmt(100 * _ratio(c.callback_s, c.solve_s), '.0f'):>3} {fmt(c.delta_mib, '.0f'):>5} | {fmt(h.build_s):>7} {fmt(h.solve_s):>7} {h.iterations:4d}"
              f" {fmt(h.delta_mib, '.0f'):>5} | {fmt(rb, '.2f'):>6} {fmt(rs, '.2f'):>6} {fmt(ri, '.2f'):>5} {fmt(_ratio(c.per_iter, h.per_iter), '.2f'):>5}"
              f" {fmt(_ratio(c.delta_mib, h.delta_mib), '.2f'):>5} | {fmt(_ratio(c.build_cpu, h.build_cpu), '.2f'):>7} {fmt(_ratio(c.solve_cpu, h.solve_cpu), '.2f'):>7} |"
              f" {c.objective:15.10f} {d:7.0e} {marks}")
        if not d <= OBJECTIVE_RTOL:
            print(f"   WARNING: objectives differ (colloc {c.objective!r}, hand-written {h.objective!r}, rel {d:.2e} > {OBJECTIVE_RTOL:g}); "
                  f"status colloc={c.status}, hand={h.status}: the two NLPs are not the same problem")
    print("\nc.* colloc, h.* hand-written: medians, wall seconds; c.other = colloc.solve() wall time outside build and solve (validation,"
          "\nresult, trajectory, releasing the graph); cb% = share of colloc's solve spent in its IPOPT iteration callback;"
          "\nMiB = peak RSS − baseline of the fresh process; ×cpu = the same ratios in process CPU seconds (less sensitive to a busy machine);"
          "\ntgt: B/b build ≤ 1.5×, S/s solve ≤ 1.2×, I/i iterations within ±10 % (upper case = met)")


def slope(ns, ys):
    """Least-squares slope of log y against log N."""
    ns, ys = np.log(np.asarray(ns, float)), np.log(np.asarray(ys, float))
    return float(np.polyfit(ns, ys, 1)[0]) if ns.size >= 2 else math.nan


def print_scaling(pairs, min_n=100):
    groups = {}
    for c, h in pairs:
        if c.case.n >= min_n:
            groups.setdefault((c.case.problem, c.case.scheme, c.case.mode), []).append((c, h))
    groups = {k: v for k, v in groups.items() if len(v) >= 2}
    if not groups:
        return
    print(f"\n## Growth with N (log-log slope over N ≥ {min_n}; target for time per iteration ≤ {TARGETS['slope']})\n")
    for key, items in groups.items():
        ns = [c.case.n for c, _ in items]
        s = {name: (slope(ns, [get(c) for c, _ in items]), slope(ns, [get(h) for _, h in items]))
             for name, get in (("solve/iter", lambda x: x.per_iter), ("build", lambda x: x.build_s), ("memory", lambda x: max(x.delta_mib, 1e-3)))}
        print(f"{' '.join(key):36} " + "   ".join(f"{name}: colloc N^{a:.2f}, hand N^{b:.2f}" for name, (a, b) in s.items()))


def write_csv(path, summaries):
    rows = [r for s in summaries for r in s.rows]
    if not rows:
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    keys = list(rows[0])
    for r in rows:
        keys += [k for k in r if k not in keys]
    with open(path, "w", newline="") as fh:
        wr = csv.DictWriter(fh, fieldnames=keys)
        wr.writeheader()
        for r in rows:
            wr.writerow({k: (repr(v) if isinstance(v, tuple) else v) for k, v in r.items()})
    print(f"\nwrote {len(rows)} rows to {path}")


# ======================================================================== option study
def option_variants():
    """(label, side-independent Case fields) of the option study."""
    mumps = [("mumps_pivot_order", k) for k in (0, 2, 4, 5, 6)]
    return [
        ("expand=False (default, MX map)", dict()),
        ("expand=True", dict(expand=True)),
        ("expand=False, thread×2", dict(threads=2)),
        ("expand=True, thread×2", dict(expand=True, threads=2)),
        *[(f"{k}={v}", dict(ipopt=((k, v),))) for k, v in mumps],
        ("mumps_scaling=0", dict(ipopt=(("mumps_scaling", 0),))),
        ("mumps_permuting_scaling=0", dict(ipopt=(("mumps_permuting_scaling", 0),))),
        ("nlp_scaling_method=none", dict(ipopt=(("nlp_scaling_method", "none"),))),
        ("linear_solver=ma27", dict(ipopt=(("linear_solver", "ma27"),))),
        ("linear_solver=spral", dict(ipopt=(("linear_solver", "spral"),))),
    ]


def structure(case):
    """nnz of the constraint Jacobian and the Lagrangian Hessian of one side's NLP."""
    if case.side == "hand":
        data = PendulumData.from_problem(load_problem("pendulum")) if case.problem == "pendulum" else None
        nlp, _ = build_pendulum(case, data) if case.problem == "pendulum" else build_cartpole(case)
        x, f, g = nlp["x"], nlp["f"], nlp["g"]
    else:
        import colloc.transcription as tr
        from colloc.discretization.mesh import make_mesh
        from colloc.discretization.schemes import get_scheme
        opts = tr.make_options(**({} if case.mode == "default" else {"mode": case.mode}))
        nlp = tr.transcribe(load_problem(case.problem), make_mesh(case.n), get_scheme(case.scheme), opts)
        x, f, g = nlp.w, nlp.f, nlp.g
    lam = ca.MX.sym("lam", g.numel())
    jac = ca.jacobian(g, x).sparsity()
    hess = ca.jacobian(ca.gradient(f + ca.dot(lam, g), x), x).sparsity()
    return dict(nx=x.numel(), ng=g.numel(), jac_nnz=jac.nnz(), hess_nnz=ca.triu(hess).nnz())


def run_options(args):
    sizes = args.sizes or [100, 400, 1600]
    problems = ["cartpole"] if args.problem == "cartpole" else ["pendulum"] if args.problem == "pendulum" else ["cartpole", "pendulum"]
    summaries, blocks = [], []
    for prob in problems:
        mode = "default" if prob == "pendulum" else "explicit"
        for n in sizes:
            block = []
            for label, fields in option_variants():
                pair = []
                for side in ("colloc", "hand"):
                    case = Case(prob, "hermite-simpson", n, mode, side, label=label, **fields)
                    pair.append(summarize(case, measure(case, args.reps, not args.no_isolate)))
                block.append(pair)
                summaries += pair
            if prob == "cartpole":
                for label, fields in (("FATROP (stage-wise NLP)", dict(solver="fatrop")),
                                      ("FATROP, expand=True", dict(solver="fatrop", expand=True))):
                    case = Case(prob, "hermite-simpson", n, mode, "hand", label=label, **fields)
                    s = summarize(case, measure(case, args.reps, not args.no_isolate))
                    block.append((None, s))
                    summaries.append(s)
            blocks.append((prob, n, block))
    for prob, n, block in blocks:
        print(f"\n## Option study: {prob}, hermite-simpson, N = {n} (medians of {args.reps})\n")
        print(f"{'variant':30} | {'c.build':>8} {'c.solve':>8} {'c.it':>5} {'c.ms/it':>8} {'c.MiB':>6} | {'h.build':>8} {'h.solve':>8} {'h.it':>5} {'h.ms/it':>8} {'h.MiB':>6} | status")
        cell = lambda s: (f"{fmt(s.build_s):>8} {fmt(s.solve_s):>8} {s.iterations:5d} {fmt(1e3 * s.per_iter, '.2f'):>8} {fmt(s.delta_mib, '.0f'):>6}"
                          if solved(s.status) else f"{'—':>8} {'—':>8} {'—':>5} {'—':>8} {'—':>6}")
        for c, h in block:
            cs, hs = cell(c) if c else " " * 40, cell(h)
            st = (c.status + " / " if c else "") + h.status
            obj = "" if c is None or not math.isfinite(c.objective) or rel(c.objective, h.objective) <= 1e-6 else f"  (objectives differ: {c.objective:.10g} vs {h.objective:.10g})"
            print(f"{h.case.label:30} | {cs} | {hs} | {st}{obj}")
    print("\n## NLP structure (nonzeros; Hessian upper triangle)\n")
    print(f"{'problem':9} {'N':>6} | {'c.vars':>7} {'c.rows':>7} {'c.jac':>8} {'c.hess':>8} | {'h.vars':>7} {'h.rows':>7} {'h.jac':>8} {'h.hess':>8}")
    for prob in problems:
        mode = "default" if prob == "pendulum" else "explicit"
        for n in sizes:
            c = structure(Case(prob, "hermite-simpson", n, mode, "colloc"))
            h = structure(Case(prob, "hermite-simpson", n, mode, "hand"))
            print(f"{prob:9} {n:6d} | {c['nx']:7d} {c['ng']:7d} {c['jac_nnz']:8d} {c['hess_nnz']:8d} | {h['nx']:7d} {h['ng']:7d} {h['jac_nnz']:8d} {h['hess_nnz']:8d}")
    return summaries


# ======================================================================== large run
def run_large(args):
    """The 10,000-interval HS cart-pole (colloc, defaults), the growth of its cost from N = 200, and variants at N = 10,000."""
    n = 10000
    runs = [(f"colloc N={k}", Case("cartpole", "hermite-simpson", k, "explicit", "colloc", label="large")) for k in (200, 800, 3200, n)]
    runs += [(f"colloc {label}", Case("cartpole", "hermite-simpson", n, "explicit", "colloc", label=label, **fields))
             for label, fields in (("expand=True", dict(expand=True)),
                                   ("mumps_pivot_order=0", dict(ipopt=(("mumps_pivot_order", 0),))),
                                   ("mumps_pivot_order=6", dict(ipopt=(("mumps_pivot_order", 6),))))]
    if args.large_hand:
        runs.append(("hand-written", Case("cartpole", "hermite-simpson", n, "explicit", "hand", label="large")))
    print(f"\n## Large: Hermite–Simpson cart-pole ({args.large_reps} rep each, fresh process each)\n")
    print(f"{'run':28} {'N':>6} | {'build s':>8} {'solve s':>8} {'iter':>5} {'ms/iter':>8} {'other s':>8} {'cb %':>5} {'peak MiB':>9} {'Δ MiB':>7} | {'objective':>15} status")
    out = []
    for name, case in runs:
        s = summarize(case, measure(case, args.large_reps, not args.no_isolate))
        out.append(s)
        print(f"{name:28} {case.n:6d} | {fmt(s.build_s):>8} {fmt(s.solve_s):>8} {s.iterations:5d} {fmt(1e3 * s.per_iter, '.2f'):>8} {fmt(s.other_s):>8}"
              f" {fmt(100 * _ratio(s.callback_s, s.solve_s), '.1f'):>5} {fmt(s.peak_mib, '.0f'):>9} {fmt(s.delta_mib, '.0f'):>7} | {s.objective:15.10f} {s.status}", flush=True)
    base = [s for s in out if s.case.label == "large" and s.case.side == "colloc"]
    ns = [s.case.n for s in base]
    print(f"\ncolloc from N = {ns[0]} to {ns[-1]}: time per iteration ∝ N^{slope(ns, [s.per_iter for s in base]):.2f} (target ≤ {TARGETS['slope']}), "
          f"build ∝ N^{slope(ns, [s.build_s for s in base]):.2f}, memory ∝ N^{slope(ns, [max(s.delta_mib, 1e-3) for s in base]):.2f}")
    return out


# ======================================================================== profile
def run_profile(args):
    """cProfile of one colloc solve (after a warm-up), sorted by cumulative time."""
    import cProfile
    import pstats

    import colloc as cl
    prob = "pendulum" if args.problem == "pendulum" else "cartpole"
    scheme, n = (args.schemes or ["hermite-simpson"])[0], (args.sizes or [400])[0]
    kw = {} if prob == "pendulum" else {"mode": args.modes[0]}
    cl.solve(load_problem(prob), scheme=scheme, intervals=4, **kw)
    problem = load_problem(prob)
    prof = cProfile.Profile()
    prof.enable()
    res = cl.solve(problem, scheme=scheme, intervals=n, **kw)
    prof.disable()
    print(f"\n## cProfile of colloc.solve: {prob}, {scheme}, N = {n}: build {res.build_seconds:.3f} s, solve {res.solve_seconds:.3f} s, "
          f"{res.iterations} iterations, callback {res.stats.get('t_wall_callback_fun', 0.0):.3f} s\n")
    pstats.Stats(prof).sort_stats("cumulative").print_stats(30)


# ======================================================================== main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small subset (< 1 minute)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions per configuration (medians are reported)")
    ap.add_argument("--sizes", type=int, nargs="+", help=f"numbers of intervals (default {' '.join(map(str, SIZES))})")
    ap.add_argument("--schemes", nargs="+", choices=SCHEMES, help="schemes (default all three)")
    ap.add_argument("--problem", choices=("cartpole", "pendulum", "all"), default="cartpole")
    ap.add_argument("--modes", nargs="+", choices=("explicit", "implicit"), default=["explicit"], help="cart-pole formulations")
    ap.add_argument("--options", action="store_true", help="run the option study instead of the main tables")
    ap.add_argument("--large", action="store_true", help="10,000-interval Hermite–Simpson cart-pole (colloc)")
    ap.add_argument("--large-hand", action="store_true", help="with --large: the hand-written 10,000-interval solve too")
    ap.add_argument("--large-reps", type=int, default=1)
    ap.add_argument("--profile", action="store_true", help="cProfile one colloc solve (first of --problem/--schemes/--sizes)")
    ap.add_argument("--no-isolate", action="store_true", help="run in this process (faster; no memory figures)")
    ap.add_argument("--end-to-end", action="store_true",
                    help="colloc's defaults end to end against the best hand-written MX-map NLP (scripts/end_to_end.py)")
    ap.add_argument("--fixed-cost", action="store_true",
                    help="colloc's CPU outside IPOPT by stage at small N (scripts/fixed_cost.py; --reps defaults to 15 here)")
    ap.add_argument("--robots", action="store_true", help="URDF dynamics: colloc's RNEA/CRBA vs adam-robotics (see the last section)")
    ap.add_argument("--fatrop", action="store_true", help="FATROP vs IPOPT+MUMPS on colloc's NLP (cart-pole and Cartesian pendulum, "
                                                          "--sizes default 100 400 1600 6400)")
    ap.add_argument("--fatrop-timeout", type=float, default=1800.0, help="time limit of one --fatrop case in seconds")
    ap.add_argument("--fatrop-shooting", action="store_true", help="FATROP's best case: RK4 multiple-shooting cart-pole, "
                                                                   "IPOPT vs FATROP (--sizes default 400 1600)")
    ap.add_argument("--fatrop-case", nargs=3, metavar=("PROBLEM", "N", "BACKEND"), help=argparse.SUPPRESS)
    ap.add_argument("--contact", action="store_true",
                    help="contact-implicit problems: iterations and seconds per problem (scripts/contact_starts.py)")
    ap.add_argument("--contact-scaling", action="store_true", help="contact-implicit solves at 20, 50, 100, 200 intervals: "
                    "iterations and CPU seconds (scripts/contact_scaling.py; --sizes to choose)")
    ap.add_argument("--compiled", action="store_true", help="compiled point functions vs the SX virtual machine, first and second "
                    "run (scripts/compiled.py; --cases to choose)")
    ap.add_argument("--cases", nargs="+", help="with --compiled: cases of scripts/compiled.py CASES (default all)")
    ap.add_argument("--compiled-case", nargs=3, metavar=("CASE", "SETTING", "CACHE"), help=argparse.SUPPRESS)
    ap.add_argument("--crocoddyl", action="store_true", help="the Panda reach by colloc and by crocoddyl's FDDP, side by side "
                    "(scripts/crocoddyl_reach.py)")
    ap.add_argument("--osim", action="store_true", help="OpenSim models of models/opensim/: build seconds, SX instructions and µs "
                    "per grid point of the residual and its Lagrangian Hessian, with forces and of the skeleton alone, beside "
                    "OpenSim's own calls at one state in a subprocess (scripts/osim_forces_benchmark.py, scripts/osim_benchmark.py; "
                    "--sizes: grid points per evaluation, default 100)")
    ap.add_argument("--moco", action="store_true", help="colloc and OpenSim Moco on the 2-D walking tracking, prediction and "
                    "inverse problems, side by side (scripts/moco_benchmark.py; with --quick: coarser meshes)")
    ap.add_argument("--moco-problems", nargs="+", help="with --moco: a subset of tracking, predictive, inverse")
    ap.add_argument("--moco-max-iterations", type=int, help="with --moco: the prediction's Moco iteration limit from the "
                    "tracking guess (default: the example's 1000)")
    ap.add_argument("--out", nargs="?", const=os.path.join("results", "benchmark.csv"),
                    help="write every measured row to this CSV (default path results/benchmark.csv)")
    args = ap.parse_args(argv)

    print(f"casadi {ca.__version__}, python {sys.version.split()[0]}, {os.cpu_count()} CPUs; IPOPT options {ipopt_options()}")
    summaries = []
    if args.compiled_case:
        import json

        import compiled
        print(json.dumps(compiled.case(*args.compiled_case)))
        return None
    if args.osim:
        return run_osim(args.sizes[0] if args.sizes else 100)
    if args.moco:
        import moco_benchmark
        return moco_benchmark.main(["--quick"] * args.quick + ["--out", args.out or "moco_benchmark"]
                                   + (["--problems", *args.moco_problems] if args.moco_problems else [])
                                   + (["--moco-max-iterations", str(args.moco_max_iterations)]
                                      if args.moco_max_iterations else []))
    if args.contact_scaling:
        import contact_scaling
        return contact_scaling.table(args.sizes or contact_scaling.SIZES)
    if args.compiled:
        import compiled
        return compiled.table(args.cases)
    if args.crocoddyl:
        import crocoddyl_reach
        return crocoddyl_reach.compare(args.sizes or [50])
    if args.fatrop_case:
        import json
        problem, n, backend = args.fatrop_case
        print(json.dumps(fatrop_case(problem, int(n), backend)))
        return None
    if args.fatrop:
        return run_fatrop(args.sizes or FATROP_SIZES, args.fatrop_timeout)
    if args.fatrop_shooting:
        for n in args.sizes or (400, 1600):
            fatrop_shooting(n)
        return None
    if args.contact:
        spec = importlib.util.spec_from_file_location("contact_starts", os.path.join(os.path.dirname(os.path.abspath(__file__)), "contact_starts.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        rows = module.timings(args.sizes[0] if args.sizes else 20)
        spec = importlib.util.spec_from_file_location("contact_robots", os.path.join(os.path.dirname(os.path.abspath(__file__)), "contact_robots.py"))
        robots = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(robots)
        return rows + robots.table(robots.SIZES)
    if args.profile:
        return run_profile(args)
    if args.robots:
        return run_robots(args.sizes or [50, 100])
    if args.fixed_cost:
        import fixed_cost
        return fixed_cost.with_sizes(args)
    if args.end_to_end:
        import end_to_end
        return end_to_end.with_sizes(args)
    if args.options:
        summaries += run_options(args)
    elif not args.large:
        if args.quick:
            configs = [("cartpole", s, n, "explicit") for s in SCHEMES for n in (args.sizes or [25, 100])]
            configs += [("pendulum", "hermite-simpson", 25, "default")]
        else:
            problems = ["cartpole", "pendulum"] if args.problem == "all" else [args.problem]
            configs = [(p, s, n, m) for p in problems for m in (["default"] if p == "pendulum" else args.modes)
                       for s in (args.schemes or SCHEMES) for n in (args.sizes or SIZES)]
        pairs = []
        for prob, scheme, n, mode in configs:
            pair = compare(prob, scheme, n, mode, reps=args.reps, isolate=not args.no_isolate)
            pairs.append(pair)
            print(f"  done {prob} {scheme} {mode} N={n}: colloc {pair[0].build_s:.3f}+{pair[0].solve_s:.3f} s, hand {pair[1].build_s:.3f}+{pair[1].solve_s:.3f} s", flush=True)
            summaries += list(pair)
        print_pairs(pairs, f"colloc vs hand-written (medians of {args.reps})")
        print_scaling(pairs)
    if args.large:
        summaries += run_large(args)
    if args.out:
        write_csv(args.out, summaries)



# ======================================================================== OpenSim models (--osim)
# The models of models/opensim/ that colloc reads with their forces (2D_gait with its contact spheres, its
# FunctionBasedPath version, leg6dof9musc, gait10dof18musc, gait2354, Rajagopal's right leg with fitted paths):
# the whole residual (skeleton, muscles, contacts) and the applied forces alone, then the skeletons alone
# (every model, Rajagopal's original file included) with OpenSim's calcM and inverse dynamics beside them.
def run_osim(points):
    import osim_benchmark
    import osim_forces_benchmark

    print(f"\nwith forces: CasADi SX virtual machine, {points} grid points per evaluation; OpenSim at one state")
    rows = osim_forces_benchmark.table(points=points)
    print(f"\nskeletons alone (forces off), {points} grid points per evaluation")
    osim_benchmark.table(points=points)
    return rows


# ======================================================================== FATROP vs IPOPT (--fatrop)
# colloc's own NLP (Hermite–Simpson, colloc's layout and defaults) solved by IPOPT+MUMPS and by the FATROP
# backend (colloc/backends/fatrop.py: the same NLP in stage-wise order), side by side, each case in a fresh
# subprocess with a time limit.  Per iteration = solve seconds / iterations (wall and process CPU); end to
# end = build + solve.  Where the time goes: FATROP's own split (initialisation, search direction = its
# Riccati factorisation and solve, function evaluations incl. CasADi's packing into stage blocks) and IPOPT's
# (function evaluations; the rest is MUMPS and IPOPT's vector work).
FATROP_PROBLEMS = {"cartpole": "problems.cartpole", "pendulum": "problems.pendulum_cartesian"}
FATROP_SIZES = (100, 400, 1600, 6400)


def fatrop_case(problem, n, backend):
    """One colloc solve in this process; a dict of what the --fatrop table prints."""
    import colloc as cl
    prob = importlib.import_module(FATROP_PROBLEMS[problem]).build()
    t0 = time.perf_counter()
    res = cl.solve(prob, scheme="hermite-simpson", intervals=n, backend=backend)
    row = dict(problem=problem, n=n, backend=backend, status=res.status.value, iterations=res.iterations, objective=res.objective,
               build_s=res.build_seconds, solve_s=res.solve_seconds, total_s=time.perf_counter() - t0,
               solve_cpu_s=res.stats.get("solve_cpu_seconds", math.nan), variables=res.nlp_size["variables"])
    st = res.stats
    if backend == "fatrop":
        f = st["fatrop"]
        row.update(init_s=f["initialization_time"], linalg_s=f["compute_sd_time"],
                   evals_s=sum(f[k] for k in ("eval_hess_time", "eval_jac_time", "eval_cv_time", "eval_grad_time", "eval_obj_time")),
                   inside_s=f["time_total"], stages=f"nx={st['nx'][1]} nu={st['nu'][1]} ng={st['ng'][1]}")
    else:
        evals = sum(v for k, v in st.items() if k.startswith("t_wall_nlp_"))
        row.update(init_s=math.nan, linalg_s=res.solve_seconds - evals - st.get("t_wall_callback_fun", 0.0), evals_s=evals,
                   inside_s=res.solve_seconds, stages="")
    return row


def run_fatrop(sizes, timeout):
    """The --fatrop table: IPOPT and FATROP on the explicit cart-pole and the Cartesian pendulum."""
    import json
    import subprocess
    rows = []
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    for problem in FATROP_PROBLEMS:
        for n in sizes:
            for backend in ("ipopt", "fatrop"):
                cmd = [sys.executable, os.path.abspath(__file__), "--fatrop-case", problem, str(n), backend]
                try:
                    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
                    line = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
                    row = json.loads(line) if line.startswith("{") else dict(problem=problem, n=n, backend=backend,
                                                                             status="error: " + out.stderr.strip()[-200:])
                except subprocess.TimeoutExpired:
                    row = dict(problem=problem, n=n, backend=backend, status=f"timeout > {timeout:.0f} s")
                rows.append(row)
                print("  " + _fatrop_line(row), flush=True)
    print("\nFATROP vs IPOPT+MUMPS, Hermite–Simpson, colloc's NLP (per iteration: solve wall ms; CPU ms in brackets)")
    print(f"{'problem':9} {'N':>5} {'backend':7} {'status':>16} {'it':>4} {'build s':>8} {'solve s':>8} {'ms/it':>13} "
          f"{'linalg s':>8} {'evals s':>8} {'objective':>14}")
    for r in rows:
        print(_fatrop_line(r))
    print("\nratios IPOPT / FATROP (> 1: FATROP faster)")
    for problem in FATROP_PROBLEMS:
        for n in sizes:
            a, b = ({r["backend"]: r for r in rows if r["problem"] == problem and r["n"] == n}.get(k) for k in ("ipopt", "fatrop"))
            if a and b and "iterations" in a and "iterations" in b and a["iterations"] and b["iterations"]:
                per = (a["solve_s"] / a["iterations"]) / (b["solve_s"] / b["iterations"])
                cpu = (a["solve_cpu_s"] / a["iterations"]) / (b["solve_cpu_s"] / b["iterations"])
                end = (a["build_s"] + a["solve_s"]) / (b["build_s"] + b["solve_s"])
                same = abs(a["objective"] - b["objective"]) / abs(a["objective"])
                print(f"  {problem:9} N={n:<5} per iteration {per:5.2f} (CPU {cpu:5.2f})  end to end {end:5.2f}  "
                      f"objectives differ by {same:.1e} (relative)")
    return rows


def fatrop_shooting(n):
    """FATROP's best case for comparison: RK4 multiple shooting of the cart-pole (one step per interval; stages of
    4 states and 1 control, no stage equality rows), hand-written, solved by IPOPT and by FATROP (CPU per iteration)."""
    c = CARTPOLE
    point, h = cartpole_point("explicit"), c["T"] / n
    x, u = ca.SX.sym("x", 4), ca.SX.sym("u")
    f = lambda x: point(x, u)[0]  # noqa: E731
    k1 = f(x)
    k2 = f(x + h / 2 * k1)
    k3 = f(x + h / 2 * k2)
    k4 = f(x + h * k3)
    step = ca.Function("step", [x, u], [x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4), h * u**2])
    X, U = [ca.MX.sym(f"x{k}", 4) for k in range(n + 1)], [ca.MX.sym(f"u{k}") for k in range(n)]
    w, g, J, lbw, ubw, w0 = [], [], 0, [], [], []
    for k in range(n + 1):
        lo, hi = [-c["dmax"], -np.inf, -np.inf, -np.inf], [c["dmax"], np.inf, np.inf, np.inf]
        if k in (0, n):
            lo = hi = [0.0] * 4 if k == 0 else [c["d"], np.pi, 0.0, 0.0]
        w.append(X[k]), lbw.extend(lo), ubw.extend(hi), w0.extend([c["d"] * k / n, np.pi * k / n, 0.0, 0.0])
        if k < n:
            xn, cost = step(X[k], U[k])
            w.append(U[k]), lbw.append(-c["umax"]), ubw.append(c["umax"]), w0.append(0.0), g.append(X[k + 1] - xn)
            J += cost
    nlp = {"x": ca.vertcat(*w), "f": J, "g": ca.vertcat(*g)}
    for solver in ("ipopt", "fatrop"):
        opts = {"expand": True, "print_time": False}
        if solver == "fatrop":
            opts.update(structure_detection="manual", N=n, nx=[4] * (n + 1), nu=[1] * n + [0], ng=[0] * (n + 1), fatrop={"print_level": 0})
        else:
            opts["ipopt"] = ipopt_options()
        S = ca.nlpsol("s", solver, nlp, opts)
        cpu = time.process_time()
        sol = S(x0=w0, lbx=lbw, ubx=ubw, lbg=0, ubg=0)
        cpu, it = time.process_time() - cpu, S.stats()["iter_count"]
        print(f"  RK4 shooting N={n:<5} {solver:6} {it:3d} it  {1e3 * cpu / it:7.2f} ms/it CPU  objective {float(sol['f']):.9f}", flush=True)


def _fatrop_line(r):
    if "iterations" not in r:
        return f"{r['problem']:9} {r['n']:>5} {r['backend']:7} {r['status']}"
    it = max(r["iterations"], 1)
    return (f"{r['problem']:9} {r['n']:>5} {r['backend']:7} {r['status']:>16} {r['iterations']:>4} {r['build_s']:8.2f} "
            f"{r['solve_s']:8.2f} {1e3 * r['solve_s'] / it:6.1f} ({1e3 * r['solve_cpu_s'] / it:5.1f}) {r['linalg_s']:8.2f} "
            f"{r['evals_s']:8.2f} {r['objective']:14.9f} {r.get('stages', '')}")



# ======================================================================== robots from URDF
# colloc's own recursive Newton–Euler / composite-rigid-body dynamics (colloc/rigidbody.py) against
# adam-robotics 0.5.0 (adam.casadi.KinDynComputations, needs liecasadi), both as CasADi SX from the same
# URDF: agreement with Pinocchio (pin) at 20 random states, expression size of the inverse-dynamics
# residual and of its Lagrangian Hessian, evaluation time per grid point, and the Panda reach
# (problems/panda_reach.py) built and solved at 50 and 100 Hermite–Simpson intervals with each.
#
# adam 0.5.0 fails on example-robot-data's panda.urdf in its CRBA: a prismatic joint's motion
# subspace is stacked from 3-vectors where scalars are meant (12 rows, not 6), and every joint of
# the tree enters, locked or not.  `_adam_patch` corrects that one method; with it adam's Panda
# agrees with Pinocchio.  adam's gravity defaults to 9.80665; it is set to Pinocchio's 9.81 here.

ROBOT_CASES = {
    "ur5": ("ur_description/urdf/ur5_robot.urdf", None, "world"),
    "panda": ("panda_description/urdf/panda.urdf", [f"panda_joint{i}" for i in range(1, 8)], "panda_link0"),
}


def _adam_patch():
    from adam.model.std_factories.std_joint import StdJoint

    if getattr(StdJoint, "_colloc_patched", False):
        return
    original = StdJoint.motion_subspace

    def motion_subspace(self):
        if self.type == "prismatic":
            z = self.math.zeros(1)
            return self.math.vertcat(self.axis[0], self.axis[1], self.axis[2], z, z, z)
        return original(self)

    StdJoint.motion_subspace = motion_subspace
    StdJoint._colloc_patched = True


def adam_terms(path, joints, root, q, v):
    """``M(q)`` and bias ``c(q, v)`` of a fixed-base robot from adam, as SX in colloc's q, v."""
    _adam_patch()
    from adam.casadi import KinDynComputations

    kd = KinDynComputations(path, joints, root)
    kd.g = np.array([0.0, 0.0, -9.81, 0.0, 0.0, 0.0])
    H = ca.DM.eye(4)
    M = kd.mass_matrix_fun()(H, q)[6:, 6:]
    c = kd.bias_force_fun()(H, q, ca.DM.zeros(6), v)[6:]
    return ca.SX(M), ca.SX(c)


def robot_body(key, dynamics, name=None):
    """A fixed-base URDF body with colloc's dynamics or adam's (``dynamics`` = "colloc" | "adam")."""
    import colloc as cl
    from colloc.model.urdf import example_robot

    rel, joints, root = ROBOT_CASES[key]
    path = example_robot(rel)
    body = cl.Multibody.from_urdf(path, name=name or key, joints=joints)
    if dynamics == "adam":
        M, c = adam_terms(path, body.joint_names, root, body.q, body.v)
        body.mass_matrix, body.bias_force = M, c
        body._inverse_dynamics = ca.mtimes(M, body.a) + c  # adam has no RNEA with accelerations
    return body


def _pinocchio_error(key, body):
    import pinocchio as pin

    from colloc.model.urdf import example_robot

    rel, joints, _ = ROBOT_CASES[key]
    model = pin.buildModelFromUrdf(example_robot(rel))
    if joints is not None:
        locked = [model.getJointId(n) for n in model.names[1:] if n not in joints]
        model = pin.buildReducedModel(model, locked, pin.neutral(model))
    data, rng = model.createData(), np.random.default_rng(1)
    fM = ca.Function("M", [body.q], [body.mass_matrix])
    fid = ca.Function("id", [body.q, body.v, body.a], [body._inverse_dynamics])
    err_M = err_tau = 0.0
    for _ in range(20):
        q = pin.randomConfiguration(model, -3.0 * np.ones(model.nq), 3.0 * np.ones(model.nq))
        v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
        Mp = pin.crba(model, data, q)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        err_M = max(err_M, float(np.abs(np.array(fM(q)) - Mp).max()))
        err_tau = max(err_tau, float(np.abs(np.array(fid(q, v, a)).ravel() - pin.rnea(model, data, q, v, a)).max()))
    return err_M, err_tau


def _per_point(body, reps=2000):
    """Instructions and seconds per evaluation of the residual and of its Lagrangian Hessian."""
    syms = ca.vertcat(body.q, body.v, body.a, *[v.symbol for v in body.variables if v.kind == "control"])
    r = body._inverse_dynamics - body.generalized_force
    lam = ca.SX.sym("lam", r.numel())
    f = ca.Function("r", [syms], [r])
    h = ca.Function("h", [syms, lam], [ca.hessian(ca.dot(lam, r), syms)[0]])
    rng = np.random.default_rng(0)
    X, L = rng.normal(size=(syms.numel(), reps)), rng.normal(size=(r.numel(), reps))
    out = {}
    for label, fun, args in (("residual", f.map(reps), [X]), ("hessian", h.map(reps), [X, L])):
        start = time.perf_counter()
        fun(*args)
        out[label] = ((f if label == "residual" else h).n_instructions(), (time.perf_counter() - start) / reps)
    return out


def run_robots(sizes=(50, 100)):
    """Print the URDF-dynamics comparison and the Panda reach timings (see the section comment)."""
    sys.path.insert(0, os.path.join(ROOT, "problems"))
    import panda_reach

    import colloc as cl

    sides = ["colloc"]
    try:
        import adam.casadi  # noqa: F401
        sides.append("adam")
    except ImportError as err:
        print(f"adam-robotics is not importable ({err}); measuring colloc's dynamics only")
    print(f"{'robot':6s} {'dynamics':8s} {'build s':>8s} {'|M-pin|':>9s} {'|tau-pin|':>9s} {'res instr':>9s} {'res us/pt':>9s} {'hess instr':>10s} {'hess us/pt':>10s}")
    for key in ROBOT_CASES:
        for side in sides:
            start = time.perf_counter()
            body = robot_body(key, side)
            built = time.perf_counter() - start
            try:
                eM, et = _pinocchio_error(key, body)
            except ImportError:
                eM = et = float("nan")
            pp = _per_point(body)
            print(f"{key:6s} {side:8s} {built:8.3f} {eM:9.1e} {et:9.1e} {pp['residual'][0]:9d} {pp['residual'][1] * 1e6:9.2f} "
                  f"{pp['hessian'][0]:10d} {pp['hessian'][1] * 1e6:10.2f}", flush=True)
    print(f"\nPanda reach (problems/panda_reach.py), Hermite–Simpson, IPOPT defaults of colloc")
    print(f"{'dynamics':8s} {'N':>5s} {'build s':>8s} {'solve s':>8s} {'total s':>8s} {'CPU s':>8s} {'iter':>5s} {'objective':>12s} {'status'}")
    runs = [(side, {}) for side in sides] + [("colloc", {"expand": True})]  # expand: the whole NLP as SX
    for n in sizes:
        for side, extra in runs:
            start, cpu = time.perf_counter(), time.process_time()
            prob = panda_reach.problem(robot_body("panda", side, name="panda"))
            res = cl.solve(prob, scheme="hermite-simpson", intervals=n, **extra)
            total, cpu = time.perf_counter() - start, time.process_time() - cpu
            label = "expand" if extra else side
            print(f"{label:8s} {n:5d} {res.build_seconds:8.2f} {res.solve_seconds:8.2f} {total:8.2f} {cpu:8.2f} {res.iterations:5d} "
                  f"{res.objective:12.6f} {res.status.name}", flush=True)


# ======================================================================== muscles (separate study)
# The muscle-redundancy problem (problems/muscle_redundancy.py): a prescribed elbow motion reproduced by
# M DeGroote–Fregly 2016 muscles with implicit tendons, minimum Σ∫a² plus the script's small regularization of
# the excitations and tendon-force rates (``--regularization 0``: Σ∫a² alone), Hermite–Simpson.  colloc solves
# the script as written: muscles on the prescribed motion θ_ref(t) (``prescribed_motion``), the torque balance
# Σ r_m F_T,m = ID(t) as a path constraint, started from the script's static-optimization guess.  The
# hand-written NLP is what a CasADi user writes for the paper's formulation: per grid point the states
# (a, F̃_T) of every muscle, the excitations and dF̃_T/dt, the equilibrium residuals and one torque row, with
# θ_ref(t) substituted analytically; its guess is the same static-optimization guess sampled on its grid (its
# time excludes computing it) and ``expand`` selects SX expansion of the whole NLP or the mapped point function.
# Both sides run the script's IPOPT options (SOLVE["ipopt"]); times are CPU seconds (time.process_time).
#
#     python scripts/benchmark.py muscles [--muscles 6 40] [--intervals 100] [--reps 1] [--regularization W]


def muscle_problem_module():
    return importlib.import_module("problems.muscle_redundancy")


def muscle_hand_nlp(num_muscles, n, duration=1.0, regularization=None):
    """The hand-written NLP of the redundancy problem: ``(nlp, args)`` for ``ca.nlpsol`` (constant guess 0.05)."""
    from colloc.model import muscle as mus

    red = muscle_problem_module()
    weight = red.REGULARIZATION if regularization is None else regularization
    tab = tables("hermite-simpson")
    rows = red.muscle_table(num_muscles)
    M, ngrid = num_muscles, 2 * n + 1
    t, theta = ca.SX.sym("t"), ca.SX.sym("theta")
    a, F, e, Fdot = (ca.SX.sym(s, M) for s in ("a", "F", "e", "Fdot"))
    q, qd, qdd = red.motion(t, duration)
    arm = red.ARM
    L = arm["forearm_length"]
    inertia = arm["forearm_mass"] * L**2 / 3.0 + arm["load"] * L**2
    inverse_dynamics = inertia * qdd + (arm["forearm_mass"] * arm["com_distance"] + arm["load"] * L) * red.GRAVITY * ca.sin(q)
    adot, res, torque = [], [], 0
    kT = mus.tendon_stiffness_factor()
    for k, (_, kind, o, i, fmax, share) in enumerate(rows):
        ref = red.path_length(kind, o, i, red.REFERENCE_ANGLE)
        lopt, lslack = share * ref, (1.0 - share) * ref
        lmt = red.path_length(kind, o, i, theta)
        dl = ca.jacobian(lmt, theta)
        lmt, dl = ca.substitute(lmt, theta, q), ca.substitute(dl, theta, q)
        adot.append(mus.activation_rate(e[k], a[k]))
        lt = lslack * mus.tendon_force_length_inverse(F[k])
        lm = lmt - lt                                     # zero pennation
        vm = (dl * qd - lslack * Fdot[k] / (kT * (F[k] + 0.2))) / (10.0 * lopt)
        lm_n = lm / lopt
        res.append(F[k] - (a[k] * mus.active_force_length(lm_n) * mus.force_velocity(vm) + mus.passive_force_length(lm_n)))
        torque = torque - dl * fmax * F[k]
    cost = ca.sumsqr(a) + weight * (ca.sumsqr(e) + ca.sumsqr(Fdot / red.RATE_SCALE))  # the script's objective
    point = ca.Function("point", [t, ca.vertcat(a, F), e, Fdot],
                        [ca.vertcat(*adot, Fdot), ca.vertcat(*res, torque - inverse_dynamics), cost])
    nw = 4 * M
    w = ca.MX.sym("w", nw * ngrid)
    W = ca.reshape(w, nw, ngrid)
    X, U, Z = W[:2 * M, :], W[2 * M:3 * M, :], W[3 * M:, :]
    times = duration * grid(tab, n)
    XD, RES, LAG = point.map(ngrid)(ca.DM(times).T, X, U, Z)
    h = duration / n
    g = [ca.vec(d) for d in tab.defects(node_matrices(X, tab, n), node_matrices(XD, tab, n), h)] + [ca.vec(RES)]
    g = ca.vertcat(*g)
    f = ca.mtimes(LAG, ca.DM(quadrature(tab, n, h)))
    lo = np.concatenate([np.full(M, 0.01), np.zeros(M), np.zeros(M), np.full(M, -np.inf)])
    hi = np.concatenate([np.ones(M), np.full(M, 5.0), np.ones(M), np.full(M, np.inf)])
    w0 = np.concatenate([np.full(3 * M, 0.05), np.zeros(M)])
    args = dict(x0=np.tile(w0, ngrid), lbx=np.tile(lo, ngrid), ubx=np.tile(hi, ngrid),
                lbg=np.zeros(g.numel()), ubg=np.zeros(g.numel()))
    return {"x": w, "f": f, "g": g}, args


def muscle_hand_guess(problem, num_muscles, n, duration=1.0):
    """The problem's guess (``problem.guesses``) on the hand-written grid, in its layout (a, F̃_T, e, dF̃_T/dt per point).

    As colloc fills it: each column interpolated linearly and clipped to its bounds, dF̃_T/dt = np.gradient of F̃_T.
    """
    times = duration * grid(tables("hermite-simpson"), n)
    names = [f"m{k:02d}" for k in range(num_muscles)]

    def column(name, lo, hi):
        kind, data = problem.guesses[name]       # ("constant", value) or ("table", (times, values))
        vals = np.full(times.size, float(data)) if kind == "constant" else np.interp(times, *data)
        return np.clip(vals, lo, hi)

    a = [column(f"{m}.activation", 0.01, 1.0) for m in names]
    force = [column(f"{m}.normalized_tendon_force", 0.0, 5.0) for m in names]
    e = [column(f"{m}.excitation", 0.0, 1.0) for m in names]
    rate = [np.gradient(x, times) for x in force]  # derivative variables are unbounded, as in colloc
    return np.vstack(a + force + e + rate).T.ravel()


def muscle_compare(num_muscles, n=100, regularization=None, expand_hand=(False, True)):
    """One colloc solve and the hand-written solves of the redundancy problem: a dict per side (CPU seconds)."""
    import colloc as cl

    red = muscle_problem_module()
    weight = red.REGULARIZATION if regularization is None else regularization
    options = {k: v for k, v in red.SOLVE.items() if k != "intervals"}
    ipopt = ipopt_options(options.pop("ipopt", {}))
    out = {}
    cpu = time.process_time()
    prob = red.build(num_muscles, regularization=weight)
    res = cl.solve(prob, intervals=n, ipopt=ipopt, **options)
    total = time.process_time() - cpu
    solve = res.stats.get("solve_cpu_seconds", res.solve_seconds)
    out["colloc"] = dict(build_s=total - solve, solve_s=solve, iterations=res.iterations, objective=res.objective,
                         status=res.status.value, variables=res.nlp_size.get("variables"), constraints=res.nlp_size.get("constraints"))
    x0 = muscle_hand_guess(prob, num_muscles, n)
    for expand in expand_hand:
        cpu = time.process_time()
        nlp, args = muscle_hand_nlp(num_muscles, n, regularization=weight)
        args["x0"] = x0
        solver = ca.nlpsol("hand", "ipopt", nlp, {"ipopt": ipopt, "expand": expand, "print_time": False, "error_on_fail": False})
        build = time.process_time() - cpu
        cpu = time.process_time()
        sol = solver(**args)
        solve = time.process_time() - cpu
        stats = solver.stats()
        out["hand-sx" if expand else "hand-map"] = dict(
            build_s=build, solve_s=solve, iterations=int(stats.get("iter_count", -1)), objective=float(sol["f"]),
            status=_status(stats), variables=int(args["x0"].size), constraints=int(args["lbg"].size))
    return out


def muscle_main(argv=None):
    ap = argparse.ArgumentParser(description="Muscle-redundancy problem: colloc vs a hand-written CasADi NLP.")
    ap.add_argument("--muscles", type=int, nargs="+", default=[6, 40])
    ap.add_argument("--intervals", type=int, default=100)
    ap.add_argument("--reps", type=int, default=1, help="repetitions (medians are reported)")
    ap.add_argument("--regularization", type=float, default=None, help="weight of the regularization (default: the script's)")
    args = ap.parse_args(argv)
    red = muscle_problem_module()
    print(f"casadi {ca.__version__}; Hermite–Simpson, implicit tendons, {args.intervals} intervals; IPOPT {red.SOLVE.get('ipopt', {})}; "
          f"regularization {red.REGULARIZATION if args.regularization is None else args.regularization}; CPU seconds, medians of {args.reps}")
    print(f"{'muscles':>7} {'side':>8} | {'build':>7} {'solve':>7} {'total':>7} {'iter':>5} {'vars':>6} {'cons':>6} | {'objective':>16} {'status'}")
    for m in args.muscles:
        runs = [muscle_compare(m, args.intervals, args.regularization) for _ in range(args.reps)]
        sides = list(runs[0])
        med = {side: {k: (statistics.median(r[side][k] for r in runs) if isinstance(runs[0][side][k], float) else runs[0][side][k])
                      for k in runs[0][side]} for side in sides}
        for side in sides:
            r = med[side]
            print(f"{m:>7} {side:>8} | {r['build_s']:7.2f} {r['solve_s']:7.2f} {r['build_s'] + r['solve_s']:7.2f} {r['iterations']:>5} "
                  f"{r['variables']:>6} {r['constraints']:>6} | {r['objective']:16.12f} {r['status']}")
        c = med["colloc"]
        for side in sides[1:]:
            h = med[side]
            print(f"{m:>7} {'÷ ' + side:>8} | build× {_ratio(c['build_s'], h['build_s']):.2f}  solve× {_ratio(c['solve_s'], h['solve_s']):.2f}  "
                  f"total× {_ratio(c['build_s'] + c['solve_s'], h['build_s'] + h['solve_s']):.2f}  "
                  f"s/it× {_ratio(c['solve_s'] / max(c['iterations'], 1), h['solve_s'] / max(h['iterations'], 1)):.2f}  "
                  f"objective rel.diff {rel(c['objective'], h['objective']):.1e}", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["muscles"]:
        muscle_main(sys.argv[2:])
    else:
        main()
