"""A mass hanging from one DeGroote–Fregly 2016 muscle, lifted rest to rest with least excitation.

The muscle runs from the ceiling (height 0) straight down to a point mass at height y < 0
(the layout of Moco's hanging-muscle example), so its muscle–tendon length is l_MT = −y and
its tension lifts the mass: m ÿ = F_T − m g.

Objective
    minimize J = ∫₀ᵀ e² dt
States
    ``mass.height`` y [m], ``mass.height_speed`` ẏ [m/s], ``muscle.activation`` a,
    ``muscle.normalized_tendon_force`` F̃_T (compliant tendons only)
Controls
    ``muscle.excitation`` e ∈ [0, 1]
Constraints
    y(0) = y₀, ẏ(0) = 0, y(T) = y_f, ẏ(T) = 0; the muscle's activation and tendon dynamics
    in the chosen ``tendon_compliance`` ("rigid", "explicit" or "implicit").
    Defaults: m = 0.5 kg, F_max = 30 N, l_opt = 0.10 m, l_s = 0.05 m, α₀ = 0.1 rad,
    y₀ = −0.15 m, y_f = −0.14 m, T = 0.5 s.  Rest means static equilibrium: ẏ = 0, F̃_T = m g / F_max
    and the activation that holds the mass there (:func:`holding_activation`), at both ends.

The explicit and implicit tendon forms describe the same continuous problem; their
discrete optima approach each other as the mesh refines (tests/test_muscle.py measures
the order of the gap).

Static equilibrium [DERIVED] (:func:`build_equilibrium`, :func:`equilibrium_height`):
at a constant excitation e with the mass at rest every state is constant, so ȧ = 0 gives
a = e, dF̃_T/dt = 0 and l̇_MT = 0 give ṽ_M = 0 (f_V = 1), and ÿ = 0 gives F_T = m g,
i.e. F̃* = m g / F_max.  The tendon length follows from its curve, l_T = l_s f_T⁻¹(F̃*)
(l_T = l_s for a rigid tendon), and the fiber length is the root l̃* of the scalar equation

    (e f_L(l̃) + f_PE(l̃)) cos α(l̃) = F̃*,   cos α(l̃) = √(1 − (sin α₀ / l̃)²)

on the ascending limb (l̃ < 1: a lower mass stretches the fiber and raises its force, so this
root is the stable one).  Then y* = −(l_opt l̃* cos α(l̃*) + l_T).

Source: constructed for colloc after Moco's example "exampleHangingMuscle" (C. Dembia,
OpenSim Moco, 2019); muscle model De Groote et al., Ann. Biomed. Eng. 44(10), 2016;
equilibrium reference [DERIVED] above.
"""
import math

import casadi as ca

import colloc as cl
from colloc.model import muscle as mus

SOLVE = dict(scheme="hermite-simpson", intervals=30)

GRAVITY = 9.81
MUSCLE = dict(max_isometric_force=30.0, optimal_fiber_length=0.10, tendon_slack_length=0.05,
              pennation_angle_at_optimal=0.1)


def model(tendon_compliance="implicit", mass=0.5, **muscle):
    """The hanging mass (``mass``) and its muscle (``muscle``)."""
    body = cl.Multibody("mass", coordinates=["height"], coordinate_bounds={"height": (-0.3, -0.07)},
                        speed_bounds={"height_speed": (-2.0, 2.0)})
    y, = body.coordinates
    vy, = body.speeds
    body.kinetic_energy = 0.5 * mass * vy**2
    body.potential_energy = mass * GRAVITY * y
    body.point("ceiling", ca.vertcat(0, 0))
    body.point("mass", ca.vertcat(0, y))
    m = cl.DeGrooteFregly2016Muscle("muscle", body=body, length=-y, tendon_compliance=tendon_compliance,
                                    **dict(MUSCLE, **muscle))
    return body, m


def build(tendon_compliance="implicit", start=-0.15, end=-0.14, duration=0.5, mass=0.5):
    """Rest-to-rest lift from ``start`` to ``end`` in ``duration`` seconds, minimum ∫e² dt."""
    body, m = model(tendon_compliance, mass)
    y, = body.coordinates
    vy, = body.speeds
    prob = cl.Problem([body, m], t0=0.0, tf=duration, name="hanging_mass_muscle")
    weight = mass * GRAVITY / MUSCLE["max_isometric_force"]
    hold0, hold1 = (holding_activation(h, tendon_compliance, mass) for h in (start, end))
    rest0, rest1 = {y: start, vy: 0.0, m.activation: hold0}, {y: end, vy: 0.0, m.activation: hold1}
    if m.normalized_tendon_force is not None:
        rest0[m.normalized_tendon_force] = rest1[m.normalized_tendon_force] = weight
    prob.initial(rest0)
    prob.final(rest1)
    prob.minimize(integral=m.excitation**2)
    guess = dict(rest0)
    guess.update({y: (start, end), m.activation: (hold0, hold1), m.excitation: (hold0, hold1)})
    prob.guess(guess)
    return prob


def build_equilibrium(excitation=0.3, tendon_compliance="implicit", mass=0.5, duration=0.05):
    """The mass held at rest (ẏ ≡ 0) by a constant excitation: a feasibility problem whose height is y*."""
    body, m = model(tendon_compliance, mass)
    y, = body.coordinates
    vy, = body.speeds
    prob = cl.Problem([body, m], t0=0.0, tf=duration, name="hanging_mass_equilibrium")
    prob.bound(m.excitation, excitation, excitation)
    prob.bound(vy, 0.0, 0.0)
    guess = {y: -0.12, m.activation: excitation}
    if m.normalized_tendon_force is not None:
        guess[m.normalized_tendon_force] = mass * GRAVITY / MUSCLE["max_isometric_force"]
    prob.guess(guess)
    return prob


def holding_activation(height, tendon_compliance="implicit", mass=0.5):
    """The activation that holds the mass at rest at ``height``: a = (F̃*/cos α − f_PE(l̃))/f_L(l̃)."""
    p = MUSCLE
    force = mass * GRAVITY / p["max_isometric_force"]
    tendon = p["tendon_slack_length"] * (1.0 if tendon_compliance == "rigid" else mus.tendon_force_length_inverse(force))
    width = p["optimal_fiber_length"] * math.sin(p["pennation_angle_at_optimal"])
    fiber = math.hypot(-height - tendon, width)
    cos_alpha, l = (-height - tendon) / fiber, fiber / p["optimal_fiber_length"]
    return float((force / cos_alpha - mus.passive_force_length(l)) / mus.active_force_length(l))


def equilibrium_height(excitation=0.3, tendon_compliance="implicit", mass=0.5):
    """y* from the scalar root of the curves (module docstring), by bisection to machine precision.

    Returns
    -------
    float
        Height of the mass (m).
    """
    p = MUSCLE
    force = mass * GRAVITY / p["max_isometric_force"]
    tendon = p["tendon_slack_length"] * (1.0 if tendon_compliance == "rigid" else mus.tendon_force_length_inverse(force))
    sin0 = math.sin(p["pennation_angle_at_optimal"])

    def cos_alpha(l):
        return math.sqrt(1.0 - (sin0 / l) ** 2)

    def gap(l):
        return (excitation * mus.active_force_length(l) + mus.passive_force_length(l)) * cos_alpha(l) - force

    lo, hi = sin0 + 0.3, 1.0  # gap(lo) < 0 < gap(hi) for excitations that can hold the mass
    if not gap(lo) < 0.0 < gap(hi):
        raise ValueError(f"excitation {excitation} cannot hold the mass on the ascending limb.")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if gap(mid) < 0.0 else (lo, mid)
        if hi - lo < 1e-15:
            break
    l = 0.5 * (lo + hi)
    return float(-(p["optimal_fiber_length"] * l * cos_alpha(l) + tendon))

