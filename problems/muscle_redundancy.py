"""The muscle-redundancy problem: muscle excitations that reproduce a prescribed elbow motion, minimum Σ∫a².

A forearm (one coordinate, the elbow flexion θ, gravity and a hand load, as in ``elbow_reach.py``)
follows a prescribed, measured-looking smooth motion θ_ref(t) for one second.  ``num_muscles``
DeGroote–Fregly 2016 muscles (alternately flexors and extensors on two-point paths whose moment
arms vary with θ) must produce the joint torque that motion needs; the distribution among them is
the redundancy, resolved by minimum Σ_m ∫ a_m² dt as in De Groote et al. (2016).

Formulation (``prescribe="time"``, the default): the motion is known, so every muscle's path
length, lengthening speed and moment arm are functions of time (``prescribed_motion=θ_ref(t)``),
and the skeleton's equation of motion is the path constraint
Σ_m r_m(θ_ref) F_T,m = I θ̈_ref + (m_f d + m_L L) g sin θ_ref = ID(t) at every collocation point,
ID from ``Multibody.inverse_dynamics`` of the muscle-free skeleton.  This is the paper's (and Moco's
MocoInverse's) formulation and the NLP a hand-written CasADi script builds.  ``prescribe="constraint"``
keeps the forearm as states held on θ_ref(t) by a holonomic constraint whose multiplier (a torque
other than the muscles') is bounded to zero (exact at the mesh points with
``constraint_method="posa2016"``): the same continuous problem, a larger NLP (θ, θ̇, θ̈ and the
multiplier at every point, every muscle term a function of θ) that costs twice as much per iteration.

Guess: static optimization (``colloc.model.muscle_guess.static_optimization``): at each of 101 times the
torque is shared among rigid-tendon muscles by minimum Σa²; excitations invert the activation
dynamics.  It starts IPOPT near the optimum, so ``SOLVE`` starts the barrier at μ = 1e-6 (from the
default 0.1, the barrier first drives every bounded variable to the middle of its range, J from 0.46
to 11 with 40 muscles, and the guess is lost).  ``guess="constant"`` starts from 0.05 everywhere.
The optimum does not depend on the guess: 6 and 40 muscles at 100 intervals reach the same J from
both to 1e-11 at tol 1e-10, and to 1.4e-7 with ``SOLVE``'s options.

Objective
    minimize J = Σ_m ∫₀ᵀ a_m² dt + w Σ_m ∫₀ᵀ (e_m² + (dF̃_T,m/dt / 10)²) dt, w = 1e-3

    The small terms matter for the solver, not the answer (J moves by 0.3 %).  Without them
    the implicit NLP is nearly singular: a muscle at low activation barely feels its fiber
    velocity (∂residual/∂(dF̃_T/dt) ∝ a f_L f_V'), so the grid-point zig-zag of dF̃_T/dt that
    leaves the Hermite–Simpson defects unchanged, and likewise of the excitation through the
    activation rate, has almost no curvature (reduced-Hessian eigenvalues 1e-11 with 40
    muscles at 10 intervals; 6e-6 with the terms).  IPOPT then corrects the inertia at
    most iterations: 40 muscles at 100 intervals take 99 iterations without the terms and 19
    with them (scripts/benchmark.py muscles).
    Implementations of the implicit formulation add such regularization terms for the same
    reason; ``regularization=0`` solves the bare Σ∫a² problem.
States
    per muscle ``mNN.activation``, ``mNN.normalized_tendon_force`` (implicit tendons by default);
    ``arm.flexion``, ``arm.flexion_speed`` too with ``prescribe="constraint"``
Controls
    ``mNN.excitation`` ∈ [0, 1]
Constraints
    θ = θ_ref(t) = 0.9 + 0.45 sin(2πt/T) + 0.08 sin(6πt/T + 0.5) (no reserve torque);
    muscle activation and tendon dynamics; initial and final muscle states free.

Check [DERIVED] (tests/test_muscle.py): at every grid point Σ_m r_m F_T,m equals
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
from colloc.model.muscle_guess import static_optimization

#: obj_scaling_factor 100: thousands of activations sit at their lower bound, and IPOPT's absolute tolerance stops
#: at a barrier parameter μ whose bias on J (≈ μ per active bound) was 1e-5 of the unscaled J ≈ 0.07–0.45 and
#: depended on the guess; scaled, J is within 2.5e-7 of its tol-1e-11 value from either guess.  mu_init 1e-6: the
#: static-optimization guess is near the optimum.
SOLVE = dict(scheme="hermite-simpson", intervals=30, ipopt=dict(obj_scaling_factor=100.0, mu_init=1e-6))

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


def inverse_dynamics(t, duration=1.0):
    """The skeleton's joint torque for θ_ref(t) (``Multibody.inverse_dynamics``; a CasADi expression of t)."""
    body = skeleton()
    f = body.inverse_dynamics_function()
    return f(t, *(ca.SX(x) for x in motion(t, duration)), ca.SX(f.size1_in(4), 1), ca.SX(f.size1_in(5), 1))


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


def build(num_muscles=6, tendon_compliance="implicit", duration=1.0, regularization=REGULARIZATION, prescribe="time",
          guess="static"):
    """Muscle-redundancy problem with ``num_muscles`` muscles over ``duration`` seconds.

    ``regularization`` weighs Σ_m ∫ (e_m² + (dF̃_T,m/dt / 10)²) dt (0: minimum Σ∫a² alone).
    ``prescribe="time"``: the muscles' paths follow θ_ref(t) and Σ r F_T = ID(t) is a path constraint;
    ``"constraint"``: the forearm is a state held on θ_ref(t) by a holonomic constraint with zero multiplier.
    ``guess="static"``: static optimization (``prescribe="time"`` only); ``"constant"``: 0.05 everywhere.
    """
    if num_muscles < 2:
        raise ValueError(f"num_muscles must be at least 2 (a flexor and an extensor); got {num_muscles}.")
    if prescribe not in ("time", "constraint"):
        raise ValueError(f"prescribe must be 'time' or 'constraint'; got {prescribe!r}.")
    if guess not in ("static", "constant"):
        raise ValueError(f"guess must be 'static' or 'constant'; got {guess!r}.")
    body = skeleton()
    theta, = body.coordinates
    t = body.time
    reference = motion(t, duration)
    if prescribe == "constraint":
        body.holonomic("prescribed", theta - reference[0], multiplier_bounds=(0.0, 0.0))
    muscles = []
    for name, kind, o, i, force, share in muscle_table(num_muscles):
        rest_length = path_length(kind, o, i, REFERENCE_ANGLE)
        muscles.append(cl.DeGrooteFregly2016Muscle(
            name, body=body, length=path_length(kind, o, i, theta), max_isometric_force=force,
            optimal_fiber_length=share * rest_length, tendon_slack_length=(1.0 - share) * rest_length,
            tendon_compliance=tendon_compliance, prescribed_motion=reference[0] if prescribe == "time" else None))
    prob = cl.Problem(([] if prescribe == "time" else [body]) + muscles, t0=0.0, tf=duration, name="muscle_redundancy")
    if prescribe == "time":
        torque = sum(m.generalized_force for m in muscles) - inverse_dynamics(t, duration)
        prob.path(torque, 0.0, 0.0, name="inverse_dynamics")
    prob.minimize(integral=sum(m.activation**2 for m in muscles))
    if regularization:
        prob.minimize(integral=regularization * sum(regularization_terms(m) for m in muscles), name="regularization")
    times = np.linspace(0.0, duration, 41)
    if guess == "static" and prescribe == "time":
        prob.guess(static_optimization(muscles, np.linspace(0.0, duration, 101), inverse_dynamics(t, duration)))
        return prob
    values = {}
    if prescribe == "constraint":
        ref = [motion(s, duration) for s in times]
        values = {theta: (times, [r[0] for r in ref]), body.speeds[0]: (times, [r[1] for r in ref])}
    for m in muscles:
        values[m.activation] = values[m.excitation] = 0.05
        if m.normalized_tendon_force is not None:
            values[m.normalized_tendon_force] = 0.05
    prob.guess(values)
    return prob


def muscle_torque(trajectory, problem):
    """Σ_m r_m F_T,m at the trajectory's grid points (numpy), from the muscles' own expressions."""
    from colloc.model.muscle import muscles_of

    total = np.zeros(trajectory.time.size)
    for m in muscles_of(problem):
        names = [s.name() for s in ca.symvar(m.generalized_force)]
        force = ca.Function("tau", ca.symvar(m.generalized_force), [m.generalized_force[0]]).map(trajectory.time.size)
        columns = [trajectory.time if n == "t" else trajectory[n] for n in names]
        total += np.asarray(force(*[c[None, :] for c in columns])).ravel()
    return total
