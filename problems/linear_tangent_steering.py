"""Linear tangent steering, fixed final time (Bryson & Ho §2.4; docs/problems.md entry B8m).

A unit point mass with thrust acceleration of constant magnitude ``a`` and
steering angle θ, no gravity, reaches height ``h`` with zero vertical speed at
time ``T`` while maximizing its final horizontal speed.

Objective
    maximize ẋ(T), written as minimize −ẋ(T)
States
    ``particle.x``, ``particle.y`` position, ``particle.vx``, ``particle.vy`` velocity
Controls
    ``particle.theta`` steering angle θ ∈ [−π/2, π/2]
Constraints
    ẍ = a cos θ, ÿ = a sin θ (a = 5); all states 0 at t = 0; y(T) = h = 1,
    ẏ(T) = 0; T = 1 fixed.  (Moco's bounds 0 ≤ x, ẋ, ẏ ≤ 10, 0 ≤ y ≤ h are
    inactive at the optimum and omitted.)

Analytic solution (linear tangent law)::

    θ(t) = atan(tan θ₀ − c t),  c = 2 tan θ₀ / T,
    1/sin θ₀ − ln((sec θ₀ + tan θ₀)/(sec θ₀ − tan θ₀)) / (2 tan² θ₀) = 4h/(aT²),
    ẋ(T) = (a/c) ln((tan θ₀ + sec θ₀)/(tan θ_T + sec θ_T)),  θ_T = −θ₀.

For a = 5, T = 1, h = 1: θ₀ = 1.17017700561676, ẋ(T)* = 3.37630662124788
[DERIVED]; see :func:`theta0` and :func:`exact_final_speed`.

Source: A. E. Bryson, Y.-C. Ho, *Applied Optimal Control* (1975) §2.4; OpenSim
Moco ``testMocoAnalytic.cpp`` "Linear tangent steering" and
``MocoStudyFactory::createLinearTangentSteeringStudy``.
"""
import math

import casadi as ca

import colloc as cl

#: The solver minimizes −ẋ(T), so the objective it reports is −ẋ(T)* = −3.37630662124788
#: [DERIVED from the analytic θ₀]; tolerance is relative.
REFERENCE = dict(
    value=-3.37630662124788,
    quantity="objective",
    source="docs/problems.md B8m [DERIVED] analytic linear tangent law, vx(T)* = 3.37630662124788 "
           "(a=5, T=1, h=1); the objective is -vx(T)",
    tolerance=1e-6,
)

SOLVE = dict(scheme="hermite-simpson", intervals=30)


def build(accel=5.0, duration=1.0, height=1.0):
    """Linear tangent steering with thrust acceleration ``accel``, horizon ``duration``, target ``height``."""
    c = cl.Component("particle")
    x = c.state("x")
    y = c.state("y")
    vx = c.state("vx")
    vy = c.state("vy")
    theta = c.control("theta", bounds=(-math.pi / 2, math.pi / 2))
    c.derivative(x, vx)
    c.derivative(y, vy)
    c.derivative(vx, accel * ca.cos(theta))
    c.derivative(vy, accel * ca.sin(theta))

    prob = cl.Problem([c], t0=0.0, tf=duration, name="linear_tangent_steering")
    prob.initial({x: 0.0, y: 0.0, vx: 0.0, vy: 0.0})
    prob.final({y: height, vy: 0.0})
    prob.minimize(final=-vx)
    # Steering sweeps from up to down; speeds of the analytic solution's order.
    vx_end = 0.7 * accel * duration
    prob.guess({x: (0.0, 0.5 * vx_end * duration), y: (0.0, height), vx: (0.0, vx_end),
                vy: height / duration, theta: (1.0, -1.0)})
    return prob


def theta0(accel=5.0, duration=1.0, height=1.0):
    """Initial steering angle θ₀ of the analytic solution, the root in (0, π/2) of the B8m equation.

    Uses ln((sec θ + tan θ)/(sec θ − tan θ)) = 2 asinh(tan θ), which stays accurate near π/2.
    The left side rises from 0 (θ → 0) to 1 (θ → π/2), so a root exists iff 4h/(aT²) < 1.
    """
    from scipy.optimize import brentq

    target = 4.0 * height / (accel * duration**2)
    if not 0.0 < target < 1.0:
        raise ValueError(f"No analytic solution: 4h/(aT^2) = {target:g} must lie in (0, 1).")

    def residual(th):
        tn = math.tan(th)
        return 1.0 / math.sin(th) - math.asinh(tn) / tn**2 - target

    return brentq(residual, 1e-6, math.pi / 2 - 1e-12, xtol=1e-15, rtol=1e-15)


def exact_final_speed(accel=5.0, duration=1.0, height=1.0):
    """ẋ(T)* = (a/c) ln((tan θ₀ + sec θ₀)/(tan θ_T + sec θ_T)) = (a/c) 2 asinh(tan θ₀), θ_T = −θ₀."""
    tn = math.tan(theta0(accel, duration, height))
    c = 2.0 * tn / duration
    return accel / c * 2.0 * math.asinh(tn)
