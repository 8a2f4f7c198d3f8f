"""OpenSim's own values of its functions at given points (run with a Python that has `opensim`).

    python tests/oracle/osim_functions.py [ANY] OUT.npz

Knots and evaluation points are fixed here (points inside, on and outside the knots); the test builds the
same functions with colloc.opensim.functions.
"""
import sys

import numpy as np
import opensim as osim

X = np.array([-0.3, 0.0, 0.2, 0.45, 0.5, 1.1, 1.3, 2.0])
Y = np.array([0.1, -0.2, 0.35, 0.3, 0.0, 0.8, 0.5, 0.45])
S = np.linspace(-1.5, 3.5, 41)
POLY = np.array([0.3, -1.2, 0.5, 2.0])


def spline(cls, n, x, y):
    f = cls()
    for xi, yi in zip(x[:n], y[:n]):
        f.addPoint(float(xi), float(yi))
    return f


def values(f):
    return np.array([f.calcValue(osim.Vector(1, float(s))) for s in S])


def main(out):
    res = {"x": X, "y": Y, "s": S, "poly": POLY}
    for n in (2, 3, 4, 8):
        res[f"simm{n}"] = values(spline(osim.SimmSpline, n, X, Y))
        res[f"linear{n}"] = values(spline(osim.PiecewiseLinearFunction, n, X, Y))
    res["polynomial"] = values(osim.PolynomialFunction(osim.Vector.createFromMat(POLY)))
    res["linearfunction"] = values(osim.LinearFunction(1.7, -0.4))
    np.savez(out, **res)


if __name__ == "__main__":
    main(sys.argv[-1])
