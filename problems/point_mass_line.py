"""Planar point mass held on the line x = y: the multiplier is known exactly (Moco "Multipliers are correct").

A unit point mass moves in the plane without gravity, held on the line
x − y = 0 (holonomic, G = ∂φ/∂q = [1, −1]).  It is pushed by a constant
force ``Fx`` (a control fixed by its bounds) and a free control ``Fy``, and
must travel from rest at the origin to rest at x = 3 in T = 1.

Objective
    minimize J = ∫₀¹ (Fx² + Fy²) dt
States
    ``mass.x``, ``mass.y`` [m]; ``mass.vx``, ``mass.vy`` [m/s]
Controls
    ``mass.fx`` ≡ 0.5 N (fixed by its bounds), ``mass.fy`` [N]
Constraints
    m ẍ = Fx + λ, m ÿ = Fy − λ (colloc: M a + c − τ − Gᵀλ = 0, G = [1, −1]);
    φ = x − y = 0; x(0) = 0, ẋ(0) = 0, x(1) = 3, ẋ(1) = 0 (y and ẏ follow
    from φ = 0 and φ̇ = 0 and are not fixed, so no endpoint row repeats the
    constraint).

Multiplier.  ẍ = ÿ gives **λ = ½(Fy − Fx)** in colloc's convention (+Gᵀλ is
the constraint force).  Moco/Simbody write M u̇ + Gᵀλ = f and get
λ = ½(Fx − Fy); the two differ only in sign (see :func:`exact_multiplier`).

Optimum [DERIVED].  Both coordinates move together, 2m ẍ = Fx + Fy, so
Fy = 2m ẍ − Fx and J = T Fx² + ∫(2m ẍ − Fx)² dt = 2 T Fx² + 4m² ∫ẍ² dt
(∫ẍ dt = 0 rest to rest); the minimum-∫ẍ² transfer over d in T is
ẍ = d(6/T² − 12t/T³) with ∫ẍ² = 12 d²/T³, hence
J* = 2 T Fx² + 48 m² d²/T³ = 0.5 + 432 = **432.5** and
Fy(t) = 2m d(6/T² − 12t/T³) − Fx.  The twin is ``point_mass_line_minimal.py``.

Source: OpenSim Moco ``testMocoConstraints.cpp``, TEST_CASE "Multipliers are
correct", section "Planar point mass with CoordinateCouplerConstraint"
(tx: 0 → 3 rest to rest in [0, 1], force_x fixed at 0.5, MocoControlGoal;
Moco asserts λ = 0.5 (Fx − Fy) to 1e-5 relative with HS, 10 intervals)
(docs/moco.md §6); the optimal cost is derived above.
"""
import casadi as ca
import numpy as np

import colloc as cl

#: ∫(Fx² + Fy²) dt of the analytic optimum [DERIVED]; tolerance is relative.
REFERENCE = dict(
    value=432.5,
    source="derived in the module docstring: 2 T Fx² + 48 m² d²/T³ with T=1, d=3, m=1, Fx=0.5",
    tolerance=1e-6,
)

SOLVE = dict(scheme="hermite-simpson", intervals=10)

TWIN = "point_mass_line_minimal"


def build(duration=1.0, distance=3.0, mass=1.0, push_x=0.5):
    """Point mass on the line x = y; ``push_x`` is the constant Fx."""
    body = cl.Multibody("mass", coordinates=["x", "y"], speeds=["vx", "vy"],
                        coordinate_bounds={"x": (-5, 5), "y": (-5, 5)},
                        speed_bounds={"vx": (-5, 5), "vy": (-5, 5)})
    x, y = body.coordinates
    vx, vy = body.speeds
    fx = body.control("fx", bounds=(push_x, push_x))
    fy = body.control("fy", bounds=(-100, 100))
    body.kinetic_energy = 0.5 * mass * (vx**2 + vy**2)
    body.generalized_force = ca.vertcat(fx, fy)
    body.holonomic("line", x - y)

    prob = cl.Problem([body], t0=0.0, tf=duration, name="point_mass_line")
    prob.initial({x: 0.0, vx: 0.0})
    prob.final({x: distance, vx: 0.0})
    prob.minimize(integral=fx**2 + fy**2)
    prob.guess({x: (0.0, distance), y: (0.0, distance), vx: distance / duration, vy: distance / duration})
    return prob


def exact_multiplier(t, duration=1.0, distance=3.0, mass=1.0, push_x=0.5):
    """``λ(t) = ½(Fy − Fx)`` on the optimum (colloc's sign), shape of ``t``."""
    t = np.asarray(t, dtype=float)
    fy = 2 * mass * distance * (6 / duration**2 - 12 * t / duration**3) - push_x
    return 0.5 * (fy - push_x)


def exact_objective(duration=1.0, distance=3.0, mass=1.0, push_x=0.5):
    """``J* = 2 T Fx² + 48 m² d²/T³``."""
    return 2 * duration * push_x**2 + 48 * mass**2 * distance**2 / duration**3
