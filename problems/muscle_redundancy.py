"""The muscle-redundancy problem: muscle excitations that reproduce a prescribed elbow motion, minimum Σ∫a².

A forearm (one coordinate, the elbow flexion θ, gravity and a hand load, as in ``elbow_reach.py``)
follows a prescribed, measured-looking smooth motion θ_ref(t) for one second.  ``num_muscles``
DeGroote–Fregly 2016 muscles (alternately flexors and extensors on two-point paths whose moment
arms vary with θ) must produce the joint torque that motion needs; the distribution among them is
the redundancy, resolved by minimum Σ_m ∫ a_m² dt as in De Groote et al. (2016).

Formulation: the motion is a holonomic constraint θ − θ_ref(t) = 0 whose multiplier (a joint
torque other than the muscles') is bounded to zero, so the skeleton's equation of motion
I θ̈_ref + (m_f d + m_L L) g sin θ_ref − Σ_m r_m(θ_ref) F_T,m = 0 holds at every collocation point:
the muscles' torque equals the inverse dynamics of the prescribed motion (exactly at the mesh points
with ``constraint_method="posa2016"``, the default in ``SOLVE``).

Objective
    minimize J = Σ_m ∫₀ᵀ a_m² dt + w Σ_m ∫₀ᵀ (e_m² + (dF̃_T,m/dt / 10)²) dt, w = 1e-3

    The small terms matter for the solver, not the answer (J moves by 0.3 %).  Without them
    the implicit NLP is nearly singular: a muscle at low activation barely feels its fiber
    velocity (∂residual/∂(dF̃_T/dt) ∝ a f_L f_V'), so the grid-point zig-zag of dF̃_T/dt that
    leaves the Hermite–Simpson defects unchanged, and likewise of the excitation through the
    activation rate, has almost no curvature (reduced-Hessian eigenvalues 1e-11 with 40
    muscles at 10 intervals; 6e-6 with the terms).  IPOPT then corrects the inertia at
    most iterations and MUMPS's factorizations fill in: 40 muscles at 100 intervals took 84
    iterations and ~110 s, and take 32–37 with the terms (scripts/benchmark.py muscles).
    Implementations of the implicit formulation add such regularization terms for the same
    reason; ``regularization=0`` solves the bare Σ∫a² problem.
States
    ``arm.flexion``, ``arm.flexion_speed`` (prescribed); per muscle ``mNN.activation``,
    ``mNN.normalized_tendon_force`` (implicit tendons by default)
Controls
    ``mNN.excitation`` ∈ [0, 1]
Constraints
    θ = θ_ref(t) = 0.9 + 0.45 sin(2πt/T) + 0.08 sin(6πt/T + 0.5) (holonomic, zero reserve torque);
    muscle activation and tendon dynamics; initial and final muscle states free.

Check [DERIVED] (tests/test_muscle.py): at every mesh point Σ_m r_m F_T,m equals
``inverse_dynamics`` of the muscle-free skeleton at (θ_ref, θ̇_ref, θ̈_ref), with the analytic
derivatives of θ_ref.

Source: De Groote, Kinney, Rao & Fregly, "Evaluation of direct collocation optimal control problem
formulations for solving the muscle redundancy problem", Ann. Biomed. Eng. 44(10), 2922–2936,
2016 (formulation); the arm and the motion are constructed for colloc.
"""
import math

import casadi as ca
import numpy as np

import colloc as cl

#: Posa's method imposes θ, θ̇ and θ̈ of the prescribed motion on the true states at the mesh points, so the
#: torque balance holds there exactly; the projection method (bordalba2023) evaluates the dynamics at the
#: projected states and matches the inverse dynamics only to the discretisation error (1e-3 N·m at 20 intervals).
SOLVE = dict(scheme="hermite-simpson", intervals=30, constraint_method="posa2016")

GRAVITY = 9.81
ARM = dict(forearm_mass=1.5, com_distance=0.17, forearm_length=0.35, load=1.0)
#: Six base muscles: (kind, origin distance o [m], insertion distance i [m], F_max [N], fiber share of l_MT(0.9)).
BASE = (
    ("flexor", 0.30, 0.045, 600.0, 0.45),     # biceps
    ("extensor", 0.25, 0.025, 800.0, 0.40),   # triceps long head
    ("flexor", 0.12, 0.030, 900.0, 0.55),     # brachialis
    ("extensor", 0.14, 0.022, 600.0, 0.50),   # triceps lateral head
    ("flexor", 0.09, 0.220, 250.0, 0.60),     # brachioradialis
    ("extensor", 0.05, 0.015, 300.0, 0.60),   # anconeus
)
REFERENCE_ANGLE = 0.9
#: Weight of the excitations' and tendon-force rates' squares added to Σ∫a², and the rate's scale (1/s).
REGULARIZATION, RATE_SCALE = 1e-3, 10.0


def motion(t, duration=1.0):
    """θ_ref(t) and its first two derivatives (numbers or CasADi)."""
    lib = ca if isinstance(t, (ca.SX, ca.MX)) else math
    w = 2.0 * math.pi / duration
    theta = 0.9 + 0.45 * lib.sin(w * t) + 0.08 * lib.sin(3 * w * t + 0.5)
    speed = 0.45 * w * lib.cos(w * t) + 0.24 * w * lib.cos(3 * w * t + 0.5)
    accel = -0.45 * w**2 * lib.sin(w * t) - 0.72 * w**2 * lib.sin(3 * w * t + 0.5)
    return theta, speed, accel


def skeleton(name="arm"):
    """The forearm as a one-coordinate Multibody (no muscles, no constraint)."""
    p = ARM
    body = cl.Multibody(name, coordinates=["flexion"], coordinate_bounds={"flexion": (0.05, 2.6)},
                        speed_bounds={"flexion_speed": (-20.0, 20.0)})
    theta, = body.coordinates
    omega, = body.speeds
    L = p["forearm_length"]
    body.kinetic_energy = 0.5 * (p["forearm_mass"] * L**2 / 3.0 + p["load"] * L**2) * omega**2
    body.potential_energy = -(p["forearm_mass"] * p["com_distance"] + p["load"] * L) * GRAVITY * ca.cos(theta)
    return body


def path_length(kind, origin, insertion, theta):
    """Two-point path over the elbow: flexors √(o² + i² + 2oi cos θ), extensors with − (numbers or CasADi)."""
    sign = 1.0 if kind == "flexor" else -1.0
    lib = ca if isinstance(theta, (ca.SX, ca.MX)) else math
    return lib.sqrt(origin**2 + insertion**2 + 2.0 * sign * origin * insertion * lib.cos(theta))


def muscle_table(num_muscles):
    """``num_muscles`` rows cycling through :data:`BASE`, attachments perturbed and forces shared."""
    rows = []
    for k in range(num_muscles):
        kind, o, i, force, share = BASE[k % len(BASE)]
        if k >= len(BASE):  # deterministic variety, so no two muscles are identical
            o *= 1.0 + 0.12 * math.sin(1.7 * k)
            i *= 1.0 + 0.12 * math.cos(2.3 * k)
        rows.append((f"m{k:02d}", kind, o, i, force * len(BASE) / max(num_muscles, len(BASE)), share))
    return rows


def regularization_terms(muscle):
    """e² + (dF̃_T/dt / RATE_SCALE)² of one muscle (e² only for a rigid tendon)."""
    terms = muscle.excitation**2
    if muscle.normalized_tendon_force is not None:
        terms += (muscle.dot(muscle.normalized_tendon_force) / RATE_SCALE) ** 2
    return terms


def build(num_muscles=6, tendon_compliance="implicit", duration=1.0, regularization=REGULARIZATION):
    """Muscle-redundancy problem with ``num_muscles`` muscles over ``duration`` seconds.

    ``regularization`` weighs Σ_m ∫ (e_m² + (dF̃_T,m/dt / 10)²) dt (0: minimum Σ∫a² alone).
    """
    if num_muscles < 2:
        raise ValueError(f"num_muscles must be at least 2 (a flexor and an extensor); got {num_muscles}.")
    body = skeleton()
    theta, = body.coordinates
    t = body.time
    body.holonomic("prescribed", theta - motion(t, duration)[0], multiplier_bounds=(0.0, 0.0))
    muscles = []
    for name, kind, o, i, force, share in muscle_table(num_muscles):
        reference = path_length(kind, o, i, REFERENCE_ANGLE)
        muscles.append(cl.DeGrooteFregly2016Muscle(
            name, body=body, length=path_length(kind, o, i, theta), max_isometric_force=force,
            optimal_fiber_length=share * reference, tendon_slack_length=(1.0 - share) * reference,
            tendon_compliance=tendon_compliance))
    prob = cl.Problem([body] + muscles, t0=0.0, tf=duration, name="muscle_redundancy")
    prob.minimize(integral=sum(m.activation**2 for m in muscles))
    if regularization:
        prob.minimize(integral=regularization * sum(regularization_terms(m) for m in muscles), name="regularization")
    times = np.linspace(0.0, duration, 41)
    ref = [motion(s, duration) for s in times]
    guess = {theta: (times, [r[0] for r in ref]), body.speeds[0]: (times, [r[1] for r in ref])}
    for m in muscles:
        guess[m.activation] = guess[m.excitation] = 0.05
        if m.normalized_tendon_force is not None:
            guess[m.normalized_tendon_force] = 0.05
    prob.guess(guess)
    return prob


def muscle_torque(trajectory, problem):
    """Σ_m r_m(θ) F_T,m at the trajectory's grid points (numpy), from the muscles' own expressions."""
    from colloc.muscle import add_muscle_outputs, muscles_of

    out = add_muscle_outputs(trajectory, problem)
    total = np.zeros(trajectory.time.size)
    for m in muscles_of(problem):
        arm = ca.Function("r", [m.body.q], [m.moment_arms[0]]).map(trajectory.time.size)
        total += np.asarray(arm(trajectory[m.body.coordinates[0]][None, :])).ravel() * out[f"{m.name}.tension"]
    return total
