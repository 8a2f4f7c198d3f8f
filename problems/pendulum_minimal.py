"""Point pendulum in the angle coordinate with a tangential force (minimal twin of Betts 10.103; docs/problems.md D1).

The pendulum of ``pendulum_cartesian.py`` written in its one coordinate: the bob
is at (cos φ, sin φ) (unit length, unit mass, φ from the +x axis, y up) and the
tangential force (u y, −u x) is a torque −u.

Objective
    minimize J = ∫₀³ u² dt
States
    ``pend.phi`` [rad], ``pend.omega`` = φ̇ [rad/s]
Controls
    ``pend.u`` [N]
Constraints
    φ̈ = −g cos φ − u, g = 9.81; φ(0) = 0, φ̇(0) = 0; cos φ(3) = 0 and φ̇(3) = 0
    (the reference optimum ends at the bottom, φ(3) = −π/2, which is imposed
    directly; the swing-up optimum, φ(3) = +π/2, has J = 94.1187456).

With ``x = cos φ, y = sin φ`` the Cartesian rod multiplier is
λ = (g sin φ − φ̇²)/2 (see ``pendulum_cartesian.multiplier_from_states``).

Source: J. T. Betts, *Practical Methods for Optimal Control Using Nonlinear
Programming*, 3rd ed., problems 10.103/10.104 via opty's
``plot_betts_10_103_104.py`` [SEEN-2nd]; minimal form and reference
12.8738888777 [DERIVED]/[COMPUTED] in docs/problems.md D1.
"""
import math

import casadi as ca

import colloc as cl

#: Objective ∫u² dt of the continuous optimum; tolerance is relative.
REFERENCE = dict(
    value=12.8738888777,
    source="docs/problems.md D1 [COMPUTED] minimal coordinates N=100,d=4 (Betts book value 12.8738850)",
    tolerance=1e-5,
)

SOLVE = dict(scheme="hermite-simpson", intervals=40)


def build(duration=3.0, gravity=9.81):
    """Pendulum angle form; ends at the bottom φ = −π/2."""
    c = cl.Component("pend")
    phi = c.state("phi")
    omega = c.state("omega")
    u = c.control("u")
    c.derivative(phi, omega)
    c.derivative(omega, -gravity * ca.cos(phi) - u)

    prob = cl.Problem([c], t0=0.0, tf=duration, name="pendulum_minimal")
    prob.initial({phi: 0.0, omega: 0.0})
    prob.final({phi: -0.5 * math.pi, omega: 0.0})
    prob.minimize(integral=u**2)
    prob.guess({phi: (0.0, -0.5 * math.pi), omega: -0.5 * math.pi / duration, u: 0.0})
    return prob
