"""Unforced pendulum over a long horizon: energy of a variational vs a non-variational transcription.

A point pendulum of unit mass on a massless rod of length ``length`` swings
freely under gravity; its angle θ is measured from the downward vertical.
Released from rest at ``amplitude``, it is transcribed over ``steps``
intervals of length ``step`` with nothing to optimise (a feasibility problem:
the NLP is the simulation).  The energy

    E = ½ m ℓ² θ̇² − m g ℓ cos θ

is conserved by the motion.  The midpoint variational integrator
(``scheme="midpoint-vi"``) keeps the energy error bounded, of size O(h²),
over the whole horizon (symplectic; backward error analysis, Hairer, Lubich
& Wanner 2006, ch. IX); Radau collocation (Radau IIA, algebraically stable)
loses energy steadily, a secular drift that grows with the horizon.
Trapezoidal collocation is symmetric and conjugate to the implicit midpoint
rule, so it too keeps the energy bounded on this (reversible, integrable)
problem; an explicit second-order method (Heun) drifts
(``tests/test_variational.py``).

Objective
    none (feasibility)
States
    ``pend.theta`` [rad], ``pend.omega`` = θ̇ [rad/s]
Controls
    none
Constraints
    θ(0) = ``amplitude``, θ̇(0) = 0; θ̈ = −(g/ℓ) sin θ (from L = T − V).

Source: the energy behaviour of symplectic vs non-symplectic one-step
methods, E. Hairer, C. Lubich, G. Wanner, *Geometric Numerical Integration*,
2nd ed., Springer 2006, §I.1 and ch. IX; variational integrators,
J. E. Marsden & M. West, Acta Numerica 10 (2001) 357–514.  No REFERENCE: the
quantity of interest is the energy error along the trajectory, :func:`energy_error`.
"""
import casadi as ca
import numpy as np

import colloc as cl
from colloc.pipeline.variational import simulate

SOLVE = dict(scheme="midpoint-vi", intervals=1000)

GRAVITY = 9.81


def build(steps=1000, step=0.05, amplitude=1.5, length=1.0, mass=1.0, gravity=GRAVITY):
    """Free pendulum on ``[0, steps·step]`` released from rest at ``amplitude`` rad."""
    body = cl.Multibody("pend", coordinates=["theta"], speeds=["omega"])
    (theta,), (omega,) = body.coordinates, body.speeds
    body.kinetic_energy = 0.5 * mass * length**2 * omega**2
    body.potential_energy = -mass * gravity * length * ca.cos(theta)
    body.point("bob", ca.vertcat(length * ca.sin(theta), -length * ca.cos(theta)))
    duration = steps * step
    prob = cl.Problem([body], t0=0.0, tf=duration, name="pendulum_long_horizon")
    prob.initial({theta: amplitude, omega: 0.0})
    # A long-horizon simulation posed as an NLP needs a guess near the motion (a guess at rest
    # makes IPOPT wander for minutes): the variational simulation of the same steps.
    times = np.arange(steps + 1) * step
    sim = simulate(body, times, [amplitude], v0=[0.0])
    prob.guess({theta: (times, sim["pend.theta"]), omega: (times, sim["pend.omega"])})
    return prob


def energy(theta, omega, length=1.0, mass=1.0, gravity=GRAVITY):
    """``E = ½ m ℓ² θ̇² − m g ℓ cos θ`` for arrays of states."""
    theta, omega = np.asarray(theta, float), np.asarray(omega, float)
    return 0.5 * mass * length**2 * omega**2 - mass * gravity * length * np.cos(theta)


def energy_error(trajectory, amplitude=1.5, **params):
    """``E(t) − E(0)`` along a trajectory of this problem (exact initial energy)."""
    e0 = energy(amplitude, 0.0, **params)
    return energy(trajectory["pend.theta"], trajectory["pend.omega"], **params) - e0
