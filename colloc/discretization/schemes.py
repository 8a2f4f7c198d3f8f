"""Collocation schemes as small declarative objects (numpy only).

Each scheme declares, for one mesh interval mapped to local time ``s ∈ [0, 1]``:
its nodes (both interval ends included), quadrature weights on those nodes,
its order, its defect rows and its state interpolant (controls are the polynomial through the
collocation nodes, :mod:`colloc.discretization.interpolant`).  Transcription, reconstruction
and tests read these declarations; nothing here imports casadi.  Defect rows
are written with ``+ - *`` only, so they evaluate on numpy arrays and on CasADi
matrices alike (``H`` is the interval length already broadcast to the shape of
the states).

Legend: ``X[j]`` states at node ``j`` (columns = intervals), ``F[j]`` their
time derivatives, ``H`` interval lengths, ``s`` local time in ``[0, 1]``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import OptionError, did_you_mean


def lagrange_polynomials(nodes, s) -> list:
    """``[ℓ_0(s), …, ℓ_{k−1}(s)]``, the Lagrange basis on ``nodes`` at ``s``: colloc's one Lagrange basis.

    Written with ``- * /`` only, so ``s`` may be a number, a numpy array (each ``ℓ_j(s)`` then has its shape)
    or a CasADi expression (each ``ℓ_j(s)`` an expression of it): numeric and symbolic evaluation are the same
    arithmetic.
    """
    nodes = [float(n) for n in np.asarray(nodes, dtype=float).ravel()]
    out = []
    for j, nj in enumerate(nodes):
        term = s * 0 + 1.0  # ℓ_j of a single node is 1, shaped (or typed) as s
        for m, nm in enumerate(nodes):
            if m != j:
                term = term * ((s - nm) / (nj - nm))
        out.append(term)
    return out


def lagrange_basis(nodes, s):
    """Values ``B[j, i] = ℓ_j(s_i)`` of the Lagrange basis on ``nodes``, shape ``(len(nodes), len(s))``."""
    s = np.atleast_1d(np.asarray(s, dtype=float))
    nodes = np.asarray(nodes, dtype=float).ravel()
    return np.array(lagrange_polynomials(nodes, s)).reshape(nodes.size, s.size)


def differentiation_matrix(nodes):
    """``D[k, j] = ℓ_j'(s_k)``: derivative at node k of the polynomial through node values."""
    nodes = np.asarray(nodes, dtype=float)
    n = nodes.size
    D = np.zeros((n, n))
    for j in range(n):
        coeffs = np.poly1d([1.0])
        for m in range(n):
            if m != j:
                coeffs *= np.poly1d([1.0, -nodes[m]]) / (nodes[j] - nodes[m])
        D[:, j] = np.polyder(coeffs)(nodes)
    return D


def quadrature_weights(nodes):
    """Weights (on [0, 1]) of the interpolatory quadrature rule on ``nodes``."""
    nodes = np.asarray(nodes, dtype=float)
    n = nodes.size
    V = np.vander(nodes, n, increasing=True).T  # V[k, j] = nodes[j]**k
    moments = 1.0 / np.arange(1, n + 1)
    return np.linalg.solve(V, moments)


#: Scheme name -> :meth:`Scheme.defect_coefficients` (the same for every interval and mesh).
_COEFFICIENTS: dict = {}


def _linear_defects(scheme):
    n = scheme.num_nodes
    zero = [np.zeros((1, 1))] * n

    def unit(j):
        return [np.ones((1, 1)) if i == j else np.zeros((1, 1)) for i in range(n)]

    def rows(X, F, H):
        return np.array([float(np.asarray(d).ravel()[0]) for d in scheme.defects(X, F, np.full((1, 1), H))])

    a = np.column_stack([rows(unit(j), zero, 1.0) for j in range(n)])
    b = np.column_stack([rows(zero, unit(j), 1.0) for j in range(n)])
    # the form holds when the X terms do not scale with H and the F terms do
    ok = all(np.allclose(rows(unit(j), zero, 2.0), a[:, j]) and np.allclose(rows(zero, unit(j), 2.0), 2 * b[:, j]) for j in range(n))
    return (a, b) if ok and np.allclose(rows(zero, zero, 1.0), 0.0) else None


@dataclass(frozen=True)
class Scheme:
    """Base of every scheme: see the module docstring."""

    name: str
    order: int
    nodes: np.ndarray = field(repr=False)
    weights: np.ndarray = field(repr=False)

    @property
    def num_nodes(self) -> int:
        return int(self.nodes.size)

    @property
    def stride(self) -> int:
        """Grid points added per interval (nodes minus the shared start)."""
        return self.num_nodes - 1

    def num_defects(self) -> int:
        """Defect rows per state per interval."""
        return self.num_nodes - 1

    @property
    def collocation_indices(self) -> np.ndarray:
        """Nodes where the dynamics enter the defects (controls interpolate through these)."""
        return np.arange(self.num_nodes)

    @property
    def stagewise(self) -> bool:
        """Whether each mesh point's controls enter one interval's rows only, so that the NLP splits into stages
        (a stage-wise solver such as FATROP needs that)."""
        return True

    def defects(self, X, F, H):  # pragma: no cover - abstract
        raise NotImplementedError

    def defect_names(self):
        return [f"defect{j}" for j in range(self.num_defects())]

    def defect_coefficients(self):
        """``(a, b)``, shape ``(defect kinds, nodes)``, with defect ``k`` = ``Σ_j a[k, j] X[j] + H Σ_j b[k, j] F[j]``,
        read off :meth:`defects` by evaluating it on unit node values; ``None`` for a scheme whose defects
        are not of this form."""
        if self.name not in _COEFFICIENTS:
            _COEFFICIENTS[self.name] = _linear_defects(self)
        return _COEFFICIENTS[self.name]

    def interpolate_state(self, s, X, F, h):  # pragma: no cover - abstract
        raise NotImplementedError


class Trapezoidal(Scheme):
    """Trapezoidal collocation: ``x₁ − x₀ − h/2 (f₀ + f₁) = 0`` (order 2)."""

    def __init__(self):
        super().__init__("trapezoidal", 2, np.array([0.0, 1.0]), np.array([0.5, 0.5]))

    def defects(self, X, F, H):
        return [X[1] - X[0] - 0.5 * H * (F[0] + F[1])]

    def defect_names(self):
        return ["defect"]

    def interpolate_state(self, s, X, F, h):
        """Quadratic whose derivative is linear between ``f₀`` and ``f₁`` (Kelly 2017, eq. 3.10)."""
        s = np.atleast_1d(s)
        return X[:, [0]] + h * (np.outer(F[:, 0], s) + np.outer(F[:, 1] - F[:, 0], s**2 / 2))


class HermiteSimpson(Scheme):
    """Separated Hermite–Simpson collocation (order 4), midpoint state a variable.

    Hermite: ``x_m − (x₀ + x₁)/2 − h/8 (f₀ − f₁) = 0``;
    Simpson: ``x₁ − x₀ − h/6 (f₀ + 4 f_m + f₁) = 0`` (Hargraves & Paris 1987;
    Kelly 2017 §4).
    """

    def __init__(self):
        super().__init__("hermite-simpson", 4, np.array([0.0, 0.5, 1.0]), np.array([1 / 6, 2 / 3, 1 / 6]))

    def defects(self, X, F, H):
        return [
            X[1] - 0.5 * (X[0] + X[2]) - (1 / 8) * H * (F[0] - F[2]),
            X[2] - X[0] - (1 / 6) * H * (F[0] + 4 * F[1] + F[2]),
        ]

    def defect_names(self):
        return ["hermite", "simpson"]

    def interpolate_state(self, s, X, F, h):
        """Cubic whose derivative is the quadratic through ``f₀, f_m, f₁`` (Kelly 2017, eq. 4.10)."""
        s = np.atleast_1d(s)
        f0, fm, f1 = F[:, 0], F[:, 1], F[:, 2]
        return X[:, [0]] + h * (np.outer(f0, s) + np.outer(-3 * f0 + 4 * fm - f1, s**2 / 2) + np.outer(2 * f0 - 4 * fm + 2 * f1, s**3 / 3))


class Radau(Scheme):
    """Legendre–Gauss–Radau collocation of degree ``d`` (order 2d − 1).

    Nodes: the interval start and the ``d`` flipped Radau roots on ``(0, 1]``
    (the last is the interval end).  Rows ``h f_k − Σ_j D_kj x_j = 0``,
    ``k = 1..d`` (Garg et al. 2010).
    """

    def __init__(self, degree: int):
        roots = _radau_roots(degree)
        nodes = np.concatenate([[0.0], roots])
        weights = np.concatenate([[0.0], _radau_weights(roots)])
        object.__setattr__(self, "degree", degree)
        object.__setattr__(self, "D", differentiation_matrix(nodes))
        super().__init__(f"radau-{degree}", 2 * degree - 1, nodes, weights)

    def defects(self, X, F, H):
        rows = []
        for k in range(1, self.num_nodes):
            acc = H * F[k]
            for j in range(self.num_nodes):
                if self.D[k, j] != 0.0:
                    acc = acc - self.D[k, j] * X[j]
            rows.append(acc)
        return rows

    @property
    def collocation_indices(self):
        return np.arange(1, self.num_nodes)

    def interpolate_state(self, s, X, F, h):
        return X @ lagrange_basis(self.nodes, s)


class LegendreGauss(Scheme):
    """Legendre–Gauss collocation of degree ``d`` (order 2d).

    Nodes: the interval start, the ``d`` Gauss–Legendre roots on ``(0, 1)``
    and the interval end.  The polynomial through the start and the roots
    satisfies ``h f_k − Σ_j D_kj x_j = 0`` at the roots, and the end state is
    its value at 1: ``x_end − Σ_j C_j x_j = 0`` (Moco's LegendreGauss; Benson
    et al. 2006).  Quadrature: Gauss weights at the roots, zero at the ends.
    """

    def __init__(self, degree: int):
        g, w = np.polynomial.legendre.leggauss(degree)
        roots = (g + 1) / 2
        poly_nodes = np.concatenate([[0.0], roots])
        nodes = np.concatenate([poly_nodes, [1.0]])
        weights = np.concatenate([[0.0], w / 2, [0.0]])
        object.__setattr__(self, "degree", degree)
        object.__setattr__(self, "D", differentiation_matrix(poly_nodes))
        object.__setattr__(self, "C", lagrange_basis(poly_nodes, 1.0)[:, 0])
        super().__init__(f"legendre-gauss-{degree}", 2 * degree, nodes, weights)

    @property
    def stagewise(self) -> bool:
        return False  # a mesh point's control is tied to both neighbouring intervals (no collocation point at the ends)

    @property
    def collocation_indices(self):
        return np.arange(1, self.num_nodes - 1)

    def defects(self, X, F, H):
        d = self.degree
        rows = []
        for k in range(1, d + 1):
            acc = H * F[k]
            for j in range(d + 1):
                acc = acc - self.D[k, j] * X[j]
            rows.append(acc)
        end = X[d + 1]
        for j in range(d + 1):
            end = end - self.C[j] * X[j]
        rows.append(end)
        return rows

    def defect_names(self):
        return [f"collocation{k}" for k in range(self.degree)] + ["continuity"]

    def interpolate_state(self, s, X, F, h):
        return X[:, : self.degree + 1] @ lagrange_basis(self.nodes[: self.degree + 1], s)


def _radau_roots(d):
    """Roots on (0, 1] of the right Radau polynomial P_d − P_{d−1} mapped from [−1, 1]."""
    if d == 1:
        return np.array([1.0])
    from numpy.polynomial import legendre as L
    c = np.zeros(d + 1)
    c[d], c[d - 1] = 1.0, 1.0  # P_d + P_{d-1} has roots at -1 and interior; flip to include +1
    r = np.sort(np.real(L.legroots(c)))
    return np.sort((1.0 - r) / 2.0)  # s = (1 − r)/2 maps the root at −1 to s = 1


def _radau_weights(roots):
    return quadrature_weights(roots)


#: The registry of collocation schemes: kebab-case name → a factory of the scheme (scipy's ``METHODS``).
#: A new scheme is one entry here; the grid, transcription, interpolation, refinement and verification read
#: its declarations.
SCHEMES = {"trapezoidal": lambda: Trapezoidal(), "hermite-simpson": lambda: HermiteSimpson(),
           **{f"radau-{d}": (lambda d=d: Radau(d)) for d in range(1, 10)},
           **{f"legendre-gauss-{d}": (lambda d=d: LegendreGauss(d)) for d in range(1, 10)}}


#: Scheme names that select another transcription than collocation (:mod:`colloc.transcription.registry`), what
#: each is, and how its trajectories hold controls.
OTHER_SCHEMES = {"midpoint-vi": dict(control_hold="zero-order", about="the midpoint variational integrator, not a collocation "
                                     "scheme; it solves single-phase Lagrangian problems only (not multi-phase ones)")}


def _make(name):
    if name in SCHEMES:
        return SCHEMES[name]()
    if name in OTHER_SCHEMES:  # not a collocation scheme: only colloc.solve of a single-phase problem takes it
        raise OptionError(f"Scheme `{name}` is {OTHER_SCHEMES[name]['about']}.")
    if name in ("radau", "legendre-gauss"):
        raise OptionError(f"Scheme `{name}` needs a degree: `{name}-d` with d = 1..9, e.g. `{name}-3`.")
    for prefix in ("radau-", "legendre-gauss-"):
        if name.startswith(prefix):
            raise OptionError(f"Scheme `{name}` has no valid degree; {prefix}d takes d = 1..9.")
    raise OptionError(f"Unknown scheme `{name}`.{did_you_mean(name, SCHEMES)} Known schemes: trapezoidal, hermite-simpson, "
                      "radau-d and legendre-gauss-d (d = 1..9), and midpoint-vi (for colloc.solve, Lagrangian models).")


def get_scheme(name) -> Scheme:
    """The scheme registered under ``name`` (e.g. ``"hermite-simpson"``, ``"radau-3"``)."""
    if isinstance(name, Scheme):
        return name
    if not isinstance(name, str):
        raise OptionError(f"Scheme must be a name such as 'hermite-simpson'; got {name!r}.")
    return _make(name)
