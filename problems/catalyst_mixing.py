"""Catalyst mixing: a singular-arc control problem (COPS 3.0 problem 14).

Two catalysts are mixed in a tubular reactor; the fraction ``u`` of the first
catalyst is chosen along the reactor to maximize the yield of the product.

Objective
    minimize J = −1 + x₁(1) + x₂(1)
States
    ``reactor.x1``, ``reactor.x2`` mole fractions of the two reactants
Controls
    ``reactor.u`` catalyst mixing fraction, 0 ≤ u ≤ 1
Constraints
    ẋ₁ = u (10 x₂ − x₁), ẋ₂ = u (x₁ − 10 x₂) − (1 − u) x₂;
    x(0) = (1, 0); t_f = 1 fixed.

The optimal control is bang–singular–bang: u = 1, then a singular arc with
0 < u < 1, then u = 0.  On the singular arc the Hamiltonian does not depend
on u, so Hermite–Simpson with a free midpoint control lets the control
alternate between 0 and 1 at mesh points and midpoints and reports a value
below the continuous optimum; constraining the midpoint control to the mean of
the interval's end controls (``control_interpolation="linear"``) or Radau
collocation does not (see the table in docs/problem-scripts.md of midpoint-control treatments).

Source: E. D. Dolan, J. J. Moré, T. S. Munson, *Benchmarking Optimization
Software with COPS 3.0*, Argonne ANL/MCS-TM-273 (2004), §14 "Catalyst mixing":
J = −4.80556e-02 at 100 intervals (also n = 200, 400); originally von Stryk
(1999) and Gunn & Thomas (1965).
"""
import colloc as cl

#: COPS 3.0 Table 14.1 [SEEN]: −4.80556e-02, six significant digits, so the relative
#: tolerance is 1e-5 (half a unit of the last digit is 1.0e-5 relative).
REFERENCE = dict(
    value=-0.0480556,
    source="COPS 3.0 (Dolan, More, Munson 2004) problem 14, catalyst mixing: J = -4.80556e-2 at n = 100",
    tolerance=1e-5,
)

SOLVE = dict(scheme="hermite-simpson", intervals=100, control_interpolation="linear")


def build():
    """Catalyst mixing on t ∈ [0, 1] with x(0) = (1, 0)."""
    c = cl.Component("reactor")
    x1 = c.state("x1")
    x2 = c.state("x2")
    u = c.control("u", bounds=(0.0, 1.0))
    c.derivative(x1, u * (10.0 * x2 - x1))
    c.derivative(x2, u * (x1 - 10.0 * x2) - (1.0 - u) * x2)

    prob = cl.Problem([c], t0=0.0, tf=1.0, name="catalyst_mixing")
    prob.initial({x1: 1.0, x2: 0.0})
    prob.minimize(final=-1.0 + x1 + x2)
    prob.guess({x1: 1.0, x2: 0.0, u: 0.5})
    return prob
