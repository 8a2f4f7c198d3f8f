"""Point mass on the line x = y in its one coordinate (minimal twin of ``point_mass_line.py``).

With x = y = s the two unit masses' worth of inertia move together:
2m s̈ = Fx + Fy.

Objective
    minimize J = ∫₀¹ (Fx² + Fy²) dt
States
    ``mass.s`` [m], ``mass.v`` = ṡ [m/s]
Controls
    ``mass.fx`` ≡ 0.5 N (fixed by its bounds), ``mass.fy`` [N]
Constraints
    s(0) = 0, ṡ(0) = 0, s(1) = 3, ṡ(1) = 0.

J* = 2 T Fx² + 48 m² d²/T³ = 432.5 [DERIVED] (see ``point_mass_line.py``).

Source: OpenSim Moco ``testMocoConstraints.cpp`` "Multipliers are correct"
(the constrained version); the reduction and optimum are derived in
``point_mass_line.py``.
"""
import colloc as cl

REFERENCE = dict(
    value=432.5,
    source="derived in point_mass_line.py: 2 T Fx² + 48 m² d²/T³ with T=1, d=3, m=1, Fx=0.5",
    tolerance=1e-6,
)

SOLVE = dict(scheme="hermite-simpson", intervals=10)


def build(duration=1.0, distance=3.0, mass=1.0, push_x=0.5):
    """One coordinate s = x = y."""
    c = cl.Component("mass")
    s = c.state("s", bounds=(-5, 5))
    v = c.state("v", bounds=(-5, 5))
    fx = c.control("fx", bounds=(push_x, push_x))
    fy = c.control("fy", bounds=(-100, 100))
    c.derivative(s, v)
    c.derivative(v, (fx + fy) / (2 * mass))

    prob = cl.Problem([c], t0=0.0, tf=duration, name="point_mass_line_minimal")
    prob.initial({s: 0.0, v: 0.0})
    prob.final({s: distance, v: 0.0})
    prob.minimize(integral=fx**2 + fy**2)
    prob.guess({s: (0.0, distance), v: distance / duration})
    return prob
