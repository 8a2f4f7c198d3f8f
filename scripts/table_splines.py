"""Which spline turns a data column into a function of time: CasADi's B-spline interpolant, or a natural
cubic or quintic spline written as SX pieces.  Prints, for each, the largest jump of the first and second derivative
across the knots (relative to the derivative's range: both should be at rounding level for a C² spline),
the largest difference from the data at the knots, the time to evaluate value, first and second derivative
at 1001 points (one mapped call, best of 5), and the instructions of that SX function (a B-spline is one call).

Usage: ``python scripts/table_splines.py [rows ...]`` (default 50 200 1000 rows of a noisy signal, and
the 2-D walking reference's ``/jointset/knee_r/knee_angle_r/value``).
"""
import sys
import time as clock
from pathlib import Path

import casadi as ca
import numpy as np

from colloc.goals import read_table
from colloc.goals.splines import spline_function

DATA = Path(__file__).resolve().parents[1] / "problems" / "data" / "gait2d" / "referenceCoordinates.sto"


def measure(time, values, method):
    f = spline_function(time, values, method)
    t = ca.SX.sym("t")
    s = f(t)
    ds = ca.jacobian(s, t)
    d2s = ca.jacobian(ds, t)
    g = ca.Function("g", [t], [s, ds, d2s])
    knots = time[1:-1]
    eps = 1e-9 * (time[-1] - time[0])
    left, right = [np.array(g(knots - eps)[k]).ravel() for k in range(3)], [np.array(g(knots + eps)[k]).ravel() for k in range(3)]
    dense = np.linspace(time[0], time[-1], 1001)
    values_dense = [np.array(v).ravel() for v in g.map(dense.size)(dense.reshape(1, -1))]
    jump1 = np.max(np.abs(left[1] - right[1])) / np.ptp(values_dense[1])
    jump2 = np.max(np.abs(left[2] - right[2])) / np.ptp(values_dense[2])
    fit = np.max(np.abs(np.array(g(time)[0]).ravel() - values))
    mapped = g.map(dense.size)
    best = min(_timed(mapped, dense) for _ in range(5))
    return jump1, jump2, fit, best, g.n_instructions()


def _timed(fn, x):
    start = clock.perf_counter()
    fn(x.reshape(1, -1))
    return clock.perf_counter() - start


def main(argv):
    rng = np.random.default_rng(0)
    cases = []
    for rows in [int(a) for a in argv] or [50, 200, 1000]:
        t = np.linspace(0.0, 1.0, rows)
        cases.append((f"sin + noise, {rows} rows", t, np.sin(2 * np.pi * t) + 0.01 * rng.standard_normal(rows)))
    table = read_table(DATA)
    cases.append(("knee_angle_r reference, 50 rows", table.time, table["/jointset/knee_r/knee_angle_r/value"]))
    print(f"{'data':34s} {'method':8s} {'jump dS':>9s} {'jump d2S':>9s} {'|s - data|':>10s} {'eval ms':>8s} {'instr':>7s}")
    for label, t, y in cases:
        for method in ("bspline", "natural", "quintic"):
            j1, j2, fit, seconds, instr = measure(t, y, method)
            print(f"{label:34s} {method:8s} {j1:9.1e} {j2:9.1e} {fit:10.1e} {1e3 * seconds:8.2f} {instr:7d}")


if __name__ == "__main__":
    main(sys.argv[1:])
