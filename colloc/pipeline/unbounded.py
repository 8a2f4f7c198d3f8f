"""Problems without a minimum: IPOPT's iterates diverging, or a guess accepted where the objective still falls.

Minimizing ``−∫u² dt`` with ``u`` free has no minimum.  From a guess with ``u ≠ 0`` IPOPT's iterates
grow until it stops with ``Diverging_Iterates``; from ``u ≡ 0`` the gradient vanishes, IPOPT accepts
the guess without a step and calls it optimal.  Both are reported here by the variable along which
the objective falls, so that the fix (a bound on it, or a cost that grows with it) is in the message.
"""
from __future__ import annotations

import math

import casadi as ca
import numpy as np

#: Largest NLP whose curvature is checked when IPOPT accepts the guess without a step (a dense
#: eigenvalue problem of the free directions: about 0.3 s at this size).
MAX_CHECKED_VARIABLES = 2000

#: Relative size below which a curvature counts as zero, and a row or bound within which it is active.
CURVATURE_TOLERANCE = 1e-8
ACTIVE_TOLERANCE = 1e-8

HINT = "bound it, or give the objective a term that grows with it"


def diverged(nlp, w, variable_label, objective) -> str:
    """The sentence for IPOPT's ``Diverging_Iterates``: the variables grown largest and the objective."""
    w = np.asarray(w, dtype=float).ravel()
    names = _names(nlp)
    size = np.where(np.isfinite(w), np.abs(w), np.inf)
    # name a state, control or parameter rather than a derivative variable that only follows one (ż = u)
    own = np.array([not label.startswith("z:") for label in nlp.layout.labels()])
    j = int(np.argmax(np.where(own & (size >= 0.5 * size.max()), size, -1.0))) if own.any() else int(np.argmax(size))
    return (f"The problem looks unbounded: IPOPT's iterates diverged, {variable_label(j)} reaching {w[j]:.3g} while the "
            f"objective fell to {objective:.3g}; {HINT.replace('it', f'`{names[j]}`', 1)}.")


def not_a_minimum(nlp, sol, w, g, variable_label) -> tuple | None:
    """At a point IPOPT accepted without a step: ``None`` if no feasible direction lowers the objective to
    second order, else ``(endless, sentence)``: whether it falls without end along that straight line (which
    stays feasible: the problem is unbounded), and the sentence naming the variable along which it falls."""
    n = int(nlp.layout.size)
    if n > MAX_CHECKED_VARIABLES or "lam_g" not in sol:
        return None
    w = np.asarray(w, dtype=float).ravel()
    lam = ca.MX.sym("lam", nlp.g.numel())
    hess = ca.Function("curvature", [nlp.w, lam], [ca.hessian(nlp.f + ca.dot(lam, nlp.g), nlp.w)[0], ca.jacobian(nlp.g, nlp.w)])
    H, J = (np.asarray(ca.DM(m).full()) for m in hess(w, np.asarray(sol["lam_g"], dtype=float).ravel()))
    lo, hi = nlp.layout.vector("lower"), nlp.layout.vector("upper")
    free = ~(_near(w, lo) | _near(w, hi))
    g = np.asarray(g, dtype=float).ravel()
    active = _near(g, nlp.rows.lower) | _near(g, nlp.rows.upper)
    Ja = J[np.ix_(active, free)]
    import scipy.linalg  # here, not at the top: every solve imports this module, few get this far (0.2 CPU s)

    Z = scipy.linalg.null_space(Ja) if Ja.shape[0] else np.eye(int(free.sum()))
    if not Z.size:
        return None
    R = Z.T @ H[np.ix_(free, free)] @ Z
    values, vectors = np.linalg.eigh(0.5 * (R + R.T))
    scale = max(1.0, float(np.abs(H).max()))
    if values[0] >= -CURVATURE_TOLERANCE * scale:
        return None
    d = np.zeros(n)
    d[free] = Z @ vectors[:, 0]
    j = int(np.argmax(np.abs(d)))
    name = _names(nlp)[j]
    if _falls_without_end(nlp, w, d):
        return True, (f"The problem is unbounded: the objective falls without end along {variable_label(j)} and the variables "
                      f"moving with it, which no constraint or bound stops; {HINT.replace('it', f'`{name}`', 1)}.")
    return False, (f"IPOPT stopped at the guess, which is not a minimum: the objective curves down (by {values[0]:.3g}) along "
                   f"{variable_label(j)}; start from another guess, or {HINT.replace('it', f'`{name}`', 1)}.")


def _near(values, bound):
    bound = np.asarray(bound, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.isfinite(bound) & (np.abs(values - bound) <= ACTIVE_TOLERANCE * np.maximum(1.0, np.abs(bound)))


def _falls_without_end(nlp, w, d):
    """Whether the objective keeps falling along ``w + t d`` (t up to 1e6) with every row and bound still met."""
    f = ca.Function("along", [nlp.w], [nlp.f, nlp.g])
    lo, hi = nlp.layout.vector("lower"), nlp.layout.vector("upper")
    rows_lo, rows_hi = nlp.rows.lower, nlp.rows.upper
    last = float(f(w)[0])
    for t in (1e2, 1e4, 1e6):
        for sign in (1.0, -1.0):
            x = w + sign * t * d
            fx, gx = (np.asarray(ca.DM(v).full()).ravel() for v in f(x))
            tol = 1e-6 * max(1.0, t)
            feasible = (np.all(x >= lo - tol) and np.all(x <= hi + tol) and np.all(gx >= rows_lo - tol) and np.all(gx <= rows_hi + tol))
            if feasible and math.isfinite(fx[0]) and fx[0] < last - t:
                break
        else:
            return False
        last = float(fx[0])
    return True


def _names(nlp):
    """The variable's own name for every entry of ``w`` (``m.u``), or its block label."""
    out = []
    for label in nlp.layout.labels():
        block, _, rest = label.partition(":")
        name = rest.rpartition("@k=")[0] or rest
        out.append("the final time" if block == "tf" else name)
    return out
