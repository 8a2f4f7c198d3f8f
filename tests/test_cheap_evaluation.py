"""Cheaper expressions and evaluation settings that must not change what is computed.

A mass matrix is solved by elimination without pivoting (smaller expressions than CasADi's QR): the
solution must equal numpy's dense solve, and a symmetric matrix that is not positive definite must still
be solved correctly (by the QR).  MUMPS's OpenBLAS runs on one thread unless the user says otherwise.
"""
import os
import subprocess
import sys

import casadi as ca
import numpy as np

from colloc.model.rigidbody import solve_affine

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _tree_mass_matrix(q):
    """M(q) = Jᵀ diag(m) J of a planar chain with a branch: coordinate 0 the root, 1–2 one limb, 3 another
    (parents first), each body's velocity the sum of its ancestors' rates weighted by cos/sin of q."""
    parents = [-1, 0, 1, 0]
    rows = []
    for body in range(4):
        chain, k = [], body
        while k >= 0:
            chain.append(k)
            k = parents[k]
        rows.append(ca.horzcat(*[(1 + 0.5 * ca.cos(q[j] - q[body])) if j in chain else ca.SX(0) for j in range(4)]))
    J = ca.vertcat(*rows)
    return ca.mtimes([J.T, ca.diag(ca.DM([2.0, 1.5, 1.0, 0.7])), J]) + 0.1 * ca.SX.eye(4)


def test_a_mass_matrix_solve_equals_numpys():
    q, b = ca.SX.sym("q", 4), ca.SX.sym("b", 4)
    M = _tree_mass_matrix(q)
    f = ca.Function("f", [q, b], [solve_affine(M, b), M])
    rng = np.random.default_rng(3)
    for _ in range(5):
        qv, bv = rng.uniform(-2, 2, 4), rng.normal(size=4)
        x, Mv = (np.array(v) for v in f(qv, bv))
        np.testing.assert_allclose(x.ravel(), np.linalg.solve(Mv, bv), rtol=1e-12, atol=1e-12)


def test_a_symmetric_indefinite_matrix_is_still_solved():
    """[[x, 1], [1, x]] at x = 0: eliminating without pivoting would divide by zero; the QR solves it."""
    x, b = ca.SX.sym("x"), ca.SX.sym("b", 2)
    J = ca.vertcat(ca.horzcat(x, 1), ca.horzcat(1, x))
    f = ca.Function("f", [x, b], [solve_affine(J, b)])
    np.testing.assert_allclose(np.array(f(0.0, [2.0, 3.0])).ravel(), [3.0, 2.0], rtol=1e-14)


_THREADS = """
import ctypes, glob, os, casadi as ca, colloc as cl
import problems.double_integrator_time as m
cl.solve(m.build(), intervals=5)
lib = ctypes.CDLL(sorted(glob.glob(os.path.join(os.path.dirname(ca.__file__), "*casadi-tp-openblas*")))[0])
print(lib.openblas_get_num_threads())
"""


def _threads_after_a_solve(**env):
    environment = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "GOTO_NUM_THREADS")}
    environment.update(env, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-c", _THREADS], capture_output=True, text=True, env=environment, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


def test_mumps_blas_runs_on_one_thread_unless_the_user_says_otherwise():
    assert _threads_after_a_solve() == 1
    assert _threads_after_a_solve(OPENBLAS_NUM_THREADS="2") == 2


def _coupled(n):
    """``n`` states driven by one control through a dense coupling: ẋ = tanh(A x) + u, A with no zero."""
    import colloc as cl

    c = cl.Component("chain")
    x = ca.vertcat(*[c.state(f"x{i}") for i in range(n)])
    u = c.control("u", bounds=(-1, 1))
    A = ca.DM(np.random.default_rng(0).uniform(0.1, 1.0, (n, n)))
    rate = ca.tanh(ca.mtimes(A, x)) + u
    for i in range(n):
        c.derivative(x[i], rate[i])
    prob = cl.Problem([c], t0=0.0, tf=1.0)
    prob.initial({x[i]: 0.1 for i in range(n)})
    prob.minimize(integral=u**2 + ca.sumsqr(x))
    return prob


def test_mumps_orders_dense_grid_points_with_metis_and_sparse_ones_with_amd():
    """METIS when a grid point's Jacobian has DENSE_JACOBIAN nonzeros or more (20 states: 20 × 21 = 420), AMD below
    (4 states) or on too few points; an order the user gives is kept."""
    import colloc as cl
    from colloc.solvers import ipopt as backend, mumps

    assert mumps.DENSE_JACOBIAN <= 20 * 21 and 4 * 5 < mumps.DENSE_JACOBIAN
    assert mumps.pivot_order(cl.build_nlp(_coupled(20), intervals=10)) == mumps.METIS
    assert mumps.pivot_order(cl.build_nlp(_coupled(20), intervals=4)) == mumps.AMD == backend.DEFAULT_IPOPT["mumps_pivot_order"]
    assert mumps.pivot_order(cl.build_nlp(_coupled(4), intervals=10)) == mumps.AMD
    assert "mumps_pivot_order" not in backend.ipopt_options({"tol": 1e-6})
    assert backend.ipopt_options({"mumps_pivot_order": 0})["mumps_pivot_order"] == 0
