"""Second-order minimum effort with damping (Kirk 1998 Ex. 5.1-1; docs/problems.md entry A8).

Objective
    minimize J = ½ ∫₀² u² dt
States
    ``plant.x1`` position, ``plant.x2`` velocity
Controls
    ``plant.u``
Constraints
    ẋ₁ = x₂, ẋ₂ = −x₂ + u; x(0) = (0, 0), x(2) = (5, 2), t_f = 2 fixed;
    |x| ≤ 10, |u| ≤ 50 as in OpenSim Moco's version of this test (inactive).

Analytic solution (Kirk eqs. 5.1-69/70, as used by Moco's ``testMocoAnalytic.cpp``)::

    x₁(t) = c₂(−t − ½e^{−t} + ½e^{t}) + c₃(1 − ½e^{−t} − ½e^{t})
    x₂(t) = c₂(−1 + ½e^{−t} + ½e^{t}) + c₃(½e^{−t} − ½e^{t})
    u(t)  = ẍ₁ + ẋ₁ = c₂(e^{t} − 1) − c₃e^{t}

with (c₂, c₃) from the end conditions x(2) = (5, 2); see :func:`constants`.
The objective is J* = 16.7507233968 [DERIVED] by quadrature of u².  The same
state history is optimal for ẋ₂ = +x₂ + u, with J = 12.7507233968, so compare
the objective, not only the states, to catch a sign error in the damping.

Source: D. E. Kirk, *Optimal Control Theory: An Introduction* (1998), Example
5.1-1, p. 198; OpenSim Moco ``testMocoAnalytic.cpp`` "Second order linear min effort".
"""
import numpy as np

import colloc as cl

#: Objective value ½∫u² dt of the analytic optimum; tolerance is relative.
REFERENCE = dict(
    value=16.7507233968,
    source="docs/problems.md A8 [DERIVED] quadrature of the analytic u*(t) (Kirk 1998 Ex. 5.1-1)",
    tolerance=1e-6,
)

SOLVE = dict(scheme="hermite-simpson", intervals=30)


def build(duration=2.0, final_position=5.0, final_velocity=2.0):
    """Kirk's damped double integrator (only the defaults match :func:`exact_states`)."""
    c = cl.Component("plant")
    x1 = c.state("x1", bounds=(-10, 10))
    x2 = c.state("x2", bounds=(-10, 10))
    u = c.control("u", bounds=(-50, 50))
    c.derivative(x1, x2)
    c.derivative(x2, -x2 + u)

    prob = cl.Problem([c], t0=0.0, tf=duration, name="kirk")
    prob.initial({x1: 0.0, x2: 0.0})
    prob.final({x1: final_position, x2: final_velocity})
    prob.minimize(integral=0.5 * u**2)
    prob.guess({x1: (0.0, final_position), x2: (0.0, final_velocity), u: 0.0})
    return prob


def constants():
    """The coefficients (c₂, c₃) of the analytic solution, from x₁(2) = 5, x₂(2) = 2."""
    e = np.exp(2.0)
    matrix = np.array([[-2.0 - 0.5 / e + 0.5 * e, 1.0 - 0.5 / e - 0.5 * e],
                       [-1.0 + 0.5 / e + 0.5 * e, 0.5 / e - 0.5 * e]])
    return np.linalg.solve(matrix, [5.0, 2.0])


def exact_states(t):
    """Analytic optimal states at times ``t``.

    Parameters
    ----------
    t : array_like
        Times in [0, 2].

    Returns
    -------
    x1, x2 : ndarray, shape of ``t``
    """
    t = np.asarray(t, dtype=float)
    c2, c3 = constants()
    ep, em = np.exp(t), np.exp(-t)
    x1 = c2 * (-t - 0.5 * em + 0.5 * ep) + c3 * (1.0 - 0.5 * em - 0.5 * ep)
    x2 = c2 * (-1.0 + 0.5 * em + 0.5 * ep) + c3 * (0.5 * em - 0.5 * ep)
    return x1, x2


def exact_control(t):
    """Analytic optimal control u*(t) = c₂(eᵗ − 1) − c₃eᵗ."""
    t = np.asarray(t, dtype=float)
    c2, c3 = constants()
    return c2 * (np.exp(t) - 1.0) - c3 * np.exp(t)
