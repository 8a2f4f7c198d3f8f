"""MUMPS's settings chosen for the NLP at hand: its ordering and the threads of its BLAS.

IPOPT factorizes the KKT system with MUMPS once or more per iteration; on the 2-D walking tracking problem
that was 4.3 of 21 CPU s.  Two settings depend on the problem and the machine rather than on the user's
wishes, so colloc chooses them when the user gives none: the fill-reducing ordering (:func:`pivot_order`)
and the threads of the OpenBLAS CasADi bundles for MUMPS (:func:`single_threaded_blas`).
"""
from __future__ import annotations

import os
from functools import lru_cache

import casadi as ca

#: MUMPS's METIS ordering (``mumps_pivot_order=5``) instead of AMD when the NLP's grid points are coupled densely:
#: a mapped call of at least :data:`DENSE_POINTS` points whose point Jacobian has at least :data:`DENSE_JACOBIAN`
#: nonzeros.  The 2-D walking tracking problem (493 nonzeros, 57 variables per point; an explicit skeleton couples
#: every state and control through M⁻¹) spent 12.6 CPU s in MUMPS with AMD and 4.0 with METIS, same iterates; the
#: Panda reach (205 nonzeros) 0.46 s with AMD against 0.71 with METIS, and the small problems' blocks are
#: sparser still.  Below 20 points the ordering costs nothing either way (and a different pivot sequence would
#: only move the iterates).
AMD, METIS, DENSE_JACOBIAN, DENSE_POINTS = 0, 5, 300, 20


def pivot_order(nlp) -> int:
    """MUMPS's ordering for ``nlp``: :data:`METIS` when its grid points are coupled densely (see there), else
    AMD (:data:`AMD`, colloc's default order in ``DEFAULT_IPOPT``)."""
    maps = getattr(nlp, "mapped", None)
    maps = [maps] if maps is not None and not isinstance(maps, (list, tuple)) else list(maps or [])
    for m in maps:
        if m is None or m.count < DENSE_POINTS or m.symbols is None:
            continue
        ins, outs = m.symbols
        ins = ins[:-1] if m.hoisted else ins  # the hoisted values are numbers
        if sum(i.numel() for i in ins) * sum(o.numel() for o in outs) < DENSE_JACOBIAN:
            continue  # too few to be dense: no sparsity to propagate (a small problem's solve takes milliseconds)
        y, v = ca.vertcat(*[ca.vec(o) for o in outs]), ca.vertcat(*[ca.vec(i) for i in ins])
        if ca.jacobian_sparsity(y, v).nnz() >= DENSE_JACOBIAN:
            return METIS
    return AMD


#: Environment variables by which a user sets OpenBLAS's threads himself (then colloc leaves them alone).
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "GOTO_NUM_THREADS")


@lru_cache(maxsize=None)
def single_threaded_blas() -> bool:
    """Run the OpenBLAS that CasADi's wheel bundles for MUMPS on one thread (once per process); whether it
    was set.

    MUMPS factorizes collocation KKT systems in fronts too small for a second BLAS thread to pay, and
    OpenBLAS's idle threads spin: on the 2-D walking tracking problem (dense 58-variable blocks at every
    grid point) the factorizations took 3.5 CPU s on one thread against 4.3 on two, no faster in wall
    time (docs/performance.md); the small problems of ``problems/`` do not engage it either way.  An
    ``OPENBLAS_NUM_THREADS`` (or ``OMP_NUM_THREADS``) the user set is respected.  Only CasADi's private
    library is touched, never NumPy's.
    """
    if any(os.environ.get(v) for v in BLAS_THREAD_VARIABLES):
        return False
    import ctypes
    import glob

    for path in sorted(glob.glob(os.path.join(os.path.dirname(ca.__file__), "*casadi-tp-openblas*"))):
        try:
            library = ctypes.CDLL(path)  # loaded already by IPOPT's plugin: the same handle
            library.openblas_set_num_threads(1)
            return True
        except (OSError, AttributeError):
            continue
    return False


__all__ = ["pivot_order", "single_threaded_blas", "AMD", "METIS", "DENSE_JACOBIAN", "DENSE_POINTS"]
