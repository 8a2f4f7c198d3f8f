"""An elbow flexed by four DeGroote–Fregly 2016 muscles against gravity and a hand load, minimum effort.

The upper arm hangs vertically; the forearm (mass m_f, centre of mass d from the elbow, length L,
a load m_L in the hand) turns about the elbow by the flexion angle θ (θ = 0: arm straight down).
Each muscle is a straight line between an origin on the upper arm at distance o above the elbow
and an insertion at distance i from the elbow:

* flexors (biceps, brachialis, brachioradialis), inserted on the forearm:
  l(θ) = √(o² + i² + 2 o i cos θ), moment arm r(θ) = −dl/dθ = o i sin θ / l(θ) > 0;
* extensor (triceps), inserted on the olecranon behind the joint:
  l(θ) = √(o² + i² − 2 o i cos θ), r(θ) = −o i sin θ / l(θ) < 0.

The moment arms vary with the angle (zero at θ = 0, largest near θ = π/2).

Objective
    minimize J = Σ_m ∫₀ᵀ e_m² dt
States
    ``arm.flexion`` θ [rad], ``arm.flexion_speed`` θ̇ [rad/s]; per muscle ``NAME.activation``
    and ``NAME.normalized_tendon_force`` (implicit tendons by default)
Controls
    ``NAME.excitation`` ∈ [0, 1] for NAME in biceps, brachialis, brachioradialis, triceps
Constraints
    I θ̈ = −(m_f d + m_L L) g sin θ + Σ_m r_m(θ) F_T,m, I = m_f (L²/3) + m_L L²;
    θ(0) = θ₀, θ(T) = θ_f, θ̇ = 0 and θ̈ = 0 at both ends (the muscles' torque balances gravity),
    every muscle at rest at both ends (``muscle.rest``: ȧ = 0 and zero fiber velocity).  Defaults: m_f = 1.5 kg, d = 0.17 m,
    L = 0.35 m, m_L = 1 kg, θ₀ = 0.4, θ_f = 1.4 rad, T = 0.6 s.

Derived checks [DERIVED] (tests/test_muscle.py): the moment arms colloc takes by automatic
differentiation equal the closed forms above; at both (static) ends the muscles' joint torque
Σ r_m F_T,m equals the gravity torque that ``inverse_dynamics`` of the skeleton returns.

``smoothing`` is the muscles' activation_dynamics_smoothing: with 10 instead of the published 0.1 the
∫e² optimum chatters (every solution then warns, see colloc.results.oscillation).

Source: constructed for colloc; muscle model De Groote et al., Ann. Biomed. Eng. 44(10), 2016;
attachment distances and forces of the order of Holzbaur, Murray & Delp, Ann. Biomed. Eng.
33(6), 2005 (upper-limb model), not copied from it.
"""
import math

import casadi as ca

import colloc as cl

SOLVE = dict(scheme="hermite-simpson", intervals=30)

GRAVITY = 9.81
ARM = dict(forearm_mass=1.5, com_distance=0.17, forearm_length=0.35, load=1.0)
#: Angle at which every muscle's fiber is at its optimal length with a slack tendon (mid-reach).
REFERENCE_ANGLE = 0.9
#: name: (kind, origin distance o, insertion distance i, F_max [N], share of l_MT(REFERENCE_ANGLE) that is fiber)
MUSCLES = {
    "biceps": ("flexor", 0.30, 0.045, 600.0, 0.45),
    "brachialis": ("flexor", 0.12, 0.030, 900.0, 0.55),
    "brachioradialis": ("flexor", 0.09, 0.220, 250.0, 0.60),
    "triceps": ("extensor", 0.25, 0.025, 800.0, 0.40),
}


def skeleton(name="arm", **arm):
    """The forearm as a one-coordinate Multibody (no muscles)."""
    p = dict(ARM, **arm)
    body = cl.Multibody(name, coordinates=["flexion"], coordinate_bounds={"flexion": (0.05, 2.6)},
                        speed_bounds={"flexion_speed": (-20.0, 20.0)})
    theta, = body.coordinates
    omega, = body.speeds
    L = p["forearm_length"]
    inertia = p["forearm_mass"] * L**2 / 3.0 + p["load"] * L**2
    body.kinetic_energy = 0.5 * inertia * omega**2
    body.potential_energy = -(p["forearm_mass"] * p["com_distance"] + p["load"] * L) * GRAVITY * ca.cos(theta)
    body.point("elbow", ca.vertcat(0, 0))
    body.point("hand", ca.vertcat(L * ca.sin(theta), -L * ca.cos(theta)))
    return body


def path_length(kind, origin, insertion, theta):
    """l(θ) of a flexor (+ cos) or extensor (− cos) two-point path; works on numbers and CasADi."""
    sign = 1.0 if kind == "flexor" else -1.0
    lib = ca if isinstance(theta, (ca.SX, ca.MX)) else math
    return lib.sqrt(origin**2 + insertion**2 + 2.0 * sign * origin * insertion * lib.cos(theta))


def moment_arm(kind, origin, insertion, theta):
    """r(θ) = −dl/dθ = ± o i sin θ / l(θ) (closed form, for checks)."""
    sign = 1.0 if kind == "flexor" else -1.0
    return sign * origin * insertion * math.sin(theta) / path_length(kind, origin, insertion, theta)


def add_muscles(body, table=MUSCLES, tendon_compliance="implicit", smoothing=0.1):
    """One DeGroote–Fregly muscle per row of ``table``; l_opt + l_s = l_MT(REFERENCE_ANGLE), split by the share."""
    theta, = body.coordinates
    muscles = []
    for name, (kind, o, i, force, share) in table.items():
        reference = path_length(kind, o, i, REFERENCE_ANGLE)
        muscles.append(cl.DeGrooteFregly2016Muscle(
            name, body=body, length=path_length(kind, o, i, theta), max_isometric_force=force,
            optimal_fiber_length=share * reference, tendon_slack_length=(1.0 - share) * reference,
            tendon_compliance=tendon_compliance, activation_dynamics_smoothing=smoothing))
    return muscles


def build(tendon_compliance="implicit", start=0.4, end=1.4, duration=0.6, smoothing=0.1):
    """Rest-to-rest elbow flexion from ``start`` to ``end`` rad in ``duration`` s, minimum Σ∫e² dt."""
    body = skeleton()
    theta, = body.coordinates
    omega, = body.speeds
    muscles = add_muscles(body, tendon_compliance=tendon_compliance, smoothing=smoothing)
    prob = cl.Problem([body] + muscles, t0=0.0, tf=duration, name="elbow_reach")
    prob.initial({theta: start, omega: 0.0})
    prob.final({theta: end, omega: 0.0})
    # At rest: every muscle (ȧ = 0, zero fiber velocity) and the forearm (θ̈ = 0: torques balance).
    balance = ca.substitute(body.equations().residual, body.a, ca.SX.zeros(1))
    rest = ca.vertcat(balance, *[m.rest for m in muscles])
    prob.boundary(prob.at_t0(rest), 0.0, 0.0)
    prob.boundary(prob.at_tf(rest), 0.0, 0.0)
    prob.minimize(integral=sum(m.excitation**2 for m in muscles))
    guess = {theta: (start, end), omega: (end - start) / duration}
    for m in muscles:
        guess[m.activation] = guess[m.excitation] = 0.1
        if m.normalized_tendon_force is not None:
            guess[m.normalized_tendon_force] = 0.1
    prob.guess(guess)
    return prob
