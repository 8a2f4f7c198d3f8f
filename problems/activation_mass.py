"""Point mass driven through first-order activation dynamics written as an implicit residual.

A mass ``mass`` on a frictionless line is pushed by a force F = F_max a, where the
activation ``a`` follows the excitation ``e`` with time constant τ, written as
the implicit residual τ ȧ − (e − a) = 0 (the form a muscle model uses).  The
drive is signed (an agonist–antagonist pair lumped into one), so the problem is
linear–quadratic and its optimum has a closed form.

Objective
    minimize J = ∫₀ᵀ e² dt
States
    ``mass.x`` position, ``mass.v`` velocity, ``drive.activation`` a
Controls
    ``drive.excitation`` e (unbounded)
Constraints
    ẋ = v, m v̇ = F_max a, τ ȧ = e − a (implicit);
    x(0) = 0, v(0) = 0, a(0) = 0 (rest, no force); x(T) = d, v(T) = 0, a(T) = 0;
    T fixed.  Defaults: d = 1, T = 1, m = 1, F_max = 10, τ = 0.1.

Reference [DERIVED]: with state s = (x, v, a), ṡ = A s + B e,
A = [[0, 1, 0], [0, 0, F_max/m], [0, 0, −1/τ]], B = (0, 0, 1/τ)ᵀ, the minimum of
∫e² dt from s₀ to s_f in time T is

    J* = δᵀ W(T)⁻¹ δ,   δ = s_f − e^{AT} s₀,   W(T) = ∫₀ᵀ e^{As} B Bᵀ e^{Aᵀs} ds

(the standard minimum-norm control through the controllability Gramian, e.g.
R. W. Brockett, *Finite Dimensional Linear Systems*, 1970).  :func:`exact_objective` computes W(T) with ``scipy.linalg.expm``
of an augmented matrix: W solves Ẇ = AW + WAᵀ + BBᵀ, W(0) = 0, a linear ODE in
vec W whose matrix I⊗A + A⊗I has only eigenvalues ≤ 0 here, so the exponential
is well conditioned (Van Loan's [[−A, BBᵀ], [0, Aᵀ]] form is not when τ is
small: it mixes e^{±T/τ}).  At the defaults J* = 0.2307934119.

Source: constructed for colloc; reference value derived by the Gramian formula.
"""
import numpy as np

import colloc as cl

#: Objective value ∫e² dt, [DERIVED] by the Gramian formula (exact_objective() at the defaults);
#: tolerance is relative.
REFERENCE = dict(
    value=0.2307934119,
    source="[DERIVED] minimum-energy LQ transfer, J* = d^T W(T)^-1 d with the controllability "
           "Gramian W (exact_objective() at the default parameters)",
    tolerance=1e-6,
)

SOLVE = dict(scheme="hermite-simpson", intervals=40)


def build(distance=1.0, duration=1.0, mass=1.0, f_max=10.0, tau=0.1):
    """Rest-to-rest move of a point mass pushed through activation dynamics ``tau·ȧ = e − a``."""
    drive = cl.Component("drive")
    a = drive.state("activation")
    e = drive.control("excitation")
    drive.residual(a, tau * drive.dot(a) - (e - a))

    body = cl.Component("mass")
    x = body.state("x")
    v = body.state("v")
    body.derivative(x, v)
    body.derivative(v, f_max * a / mass)

    prob = cl.Problem([drive, body], t0=0.0, tf=duration, name="activation_mass")
    prob.initial({x: 0.0, v: 0.0, a: 0.0})
    prob.final({x: distance, v: 0.0, a: 0.0})
    prob.minimize(integral=e**2)
    # The rigid-mass optimum (force 6 − 12 t/T scaled) as a rough shape for a and e.
    t = np.linspace(0.0, 1.0, 11)
    accel = distance / duration**2 * (6.0 - 12.0 * t)
    prob.guess({x: (0.0, distance), v: distance / duration,
                a: (t * duration, mass * accel / f_max), e: (t * duration, mass * accel / f_max)})
    return prob


def exact_objective(distance=1.0, duration=1.0, mass=1.0, f_max=10.0, tau=0.1):
    """Minimum of ∫e² dt by the controllability-Gramian formula J* = δᵀ W(T)⁻¹ δ.

    Returns
    -------
    float
    """
    from scipy.linalg import expm

    A = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, f_max / mass], [0.0, 0.0, -1.0 / tau]])
    B = np.array([[0.0], [0.0], [1.0 / tau]])
    n = A.shape[0]
    # d/dt vec W = K vec W + vec(B Bᵀ), vec W(0) = 0  =>  vec W(T) is the top-right block of expm.
    K = np.kron(np.eye(n), A) + np.kron(A, np.eye(n))
    aug = np.zeros((n * n + 1, n * n + 1))
    aug[:n * n, :n * n] = K
    aug[:n * n, -1] = (B @ B.T).reshape(-1, order="F")
    W = expm(aug * duration)[:n * n, -1].reshape(n, n, order="F")
    s0 = np.zeros(n)
    sf = np.array([distance, 0.0, 0.0])
    delta = sf - expm(A * duration) @ s0
    return float(delta @ np.linalg.solve(W, delta))
