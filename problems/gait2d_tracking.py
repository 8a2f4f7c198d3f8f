"""Moco's 2-D walking tracking problem (opensim-core ``example2DWalking``, its ``MocoTrack`` half) in colloc.

The model is ``2D_gait.osim`` read by :func:`colloc.opensim.load`: 10 coordinates, 18 DeGroote–Fregly
muscles (rigid tendons, activation dynamics) on their GeometryPaths, a lumbar torque actuator and four
smooth sphere–half-space contacts.  Half a gait cycle, t ∈ [0, 0.47] s, is tracked; the other half is the
mirror image (left and right swapped), imposed by the symmetry constraints.

Objective (each term exactly as Moco evaluates its goal, so the numbers compare)
    J = ∫ Σ_c [(q_c − q̂_c(t))² + (v_c − v̂_c(t))²] dt              ``state_tracking`` (MocoTrack, weight 1)
      + 10 ∫ Σ_u u² dt                                               ``control_effort`` (18 excitations, lumbar)
      + ∫ Σ_foot |P(F_foot − F̂_foot(t))|² dt / (m |g|)              ``contact`` (MocoContactTrackingGoal)
    q̂ the reference coordinates low-pass filtered at 6 Hz (``TabOpLowPassFilter(6)``), v̂ the slope of
    their spline at the table's rows, splined again (MocoTrack's ``track_reference_position_derivatives``);
    F̂ the right and left ground reaction forces of ``referenceGRF.sto`` (unfiltered, as the goal reads
    its external loads); F_foot the sum of the heel and front sphere forces on the foot; P the projection
    on the plane normal to z; m |g| = 62.8 kg × 9.80665 m/s².  All references are natural quintic
    splines, Moco's ``GCVSplineSet``.  No goal is divided by the duration: none of Moco's is here.
States
    the 10 coordinates and their speeds (``model.<coordinate>``, ``model.<coordinate>_speed``), the 18
    activations ``<muscle>.activation``
Controls
    ``<muscle>.excitation`` ∈ [0.01, 1], ``model.lumbarAct`` ∈ [−150, 150] N·m (optimal force 1)
Constraints
    skeleton, muscle and contact dynamics; bounds of the example (pelvis tilt ∈ [−20°, −10°],
    tx ∈ [0, 1] m, ty ∈ [0.75, 1.25] m, hips ∈ [−10°, 60°], knees ∈ [−50°, 0], ankles ∈ [−15°, 25°],
    lumbar ∈ [0, 20°]; speeds within ±50, Moco's default); symmetry (``MocoPeriodicityGoal`` as a
    constraint, pairs built as the example does): every ``_r`` state at t0 equals its ``_l`` twin at tf
    and the reverse (coordinates, speeds, activations); pelvis tilt, height, lumbar, their speeds and the
    forward speed equal themselves; the lumbar control too.  Not pelvis tx, which advances.

Transcription: Hermite–Simpson, 50 intervals, ``control_interpolation="linear"`` — Moco's
``interpolate_control_midpoints`` (each midpoint control the mean of its interval's ends); the integrals
are Simpson's rule on the mesh and midpoints in both; ``mode="explicit"`` integrates the skeleton as Moco
does (q̈ = M⁻¹(τ − c)).  The NLPs are then the same: colloc's objective at Moco's solution equals Moco's
to 6e-10 and Moco's solution meets colloc's constraints to 5e-7 (Moco's tolerance is 1e-4); Moco's goals
on colloc's solution equal colloc's to 3e-10 or better (tests/test_gait2d_tracking.py).  What differs is the
tolerance that reaches the optimum (see ``SOLVE``).

Reference: Moco 4.6 (``MocoCasADiSolver``, tolerances 1e-4, its example's guess from the tracked states)
reached J = 1.5302081 in 190 iterations (docs/moco-gait.md; the Moco side is ``scripts/moco_gait.py``);
colloc started from Moco's solution stays there: 1.5302083 (tol 1e-8, 22 iterations).
Source: model and data from opensim-core ``OpenSim/Examples/Moco/example2DWalking`` (Apache 2.0; M. Afschrift,
A. Falisse); ``problems/data/gait2d/README.md``.
"""
import math
import pathlib
import re

import casadi as ca
import numpy as np

import colloc as cl
from colloc import goals
from colloc.opensim import load

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "opensim" / "2D_gait.osim"
DATA = ROOT / "problems" / "data" / "gait2d"
DURATION = 0.47
GRAVITY = 9.80665
EFFORT_WEIGHT = 10.0
CUTOFF = 6.0
#: Moco's objective at 50 intervals (MOCO_BASELINE.md, scripts/moco_gait.py); tolerance relative.
REFERENCE = dict(value=1.5302081, source="OpenSim Moco 4.6 MocoTrack example2DWalking, 50 intervals, tol 1e-4",
                 tolerance=1e-4)
#: IPOPT at colloc's default tol 1e-8, not Moco's 1e-4: at 1e-4 IPOPT with exact Hessians stops at barrier
#: parameter μ ≈ 1e-5, where each excitation held near its bound 0.01 sits μ/g ≈ 0.03 above it (g, the cost's
#: gradient in that variable, is a quadrature weight times 2·10·0.01 ≈ 3e-4) and the objective is 1 % high
#: (1.54633, measured); Moco's limited-memory IPOPT meets the same tol only after driving μ to 5e-11.
#: ``mode="explicit"`` is Moco's formulation (q̈ = M⁻¹(τ − c)); from the tracked-states guess, whose
#: accelerations are unknown, colloc's default implicit form (accelerations as variables) took tiny steps.
#: MUMPS orders the KKT systems with METIS, not AMD, by colloc's own choice (each grid point's Jacobian and Hessian
#: blocks are dense: 57 variables coupled through M⁻¹; :func:`colloc.solvers.mumps.pivot_order`).  IPOPT's
#: adaptive barrier update took 49 iterations instead of 64, to 1.5302070, 7e-7 from Moco's optimum
#: (docs/moco-gait.md, "Where the time goes").
SOLVE = dict(scheme="hermite-simpson", intervals=50, control_interpolation="linear", mode="explicit",
             ipopt=dict(mu_strategy="adaptive"))
DEG = math.pi / 180
#: The example's bounds (rad or m), by coordinate.
BOUNDS = dict(pelvis_tilt=(-20 * DEG, -10 * DEG), pelvis_tx=(0.0, 1.0), pelvis_ty=(0.75, 1.25),
              hip_flexion_l=(-10 * DEG, 60 * DEG), hip_flexion_r=(-10 * DEG, 60 * DEG),
              knee_angle_l=(-50 * DEG, 0.0), knee_angle_r=(-50 * DEG, 0.0),
              ankle_angle_l=(-15 * DEG, 25 * DEG), ankle_angle_r=(-15 * DEG, 25 * DEG), lumbar=(0.0, 20 * DEG))
FEET = {"ground_force_r_v": ("contactHeel_r", "contactFront_r"), "ground_force_l_v": ("contactHeel_l", "contactFront_l")}


def model():
    """The loaded model (:class:`colloc.opensim.OsimModel`)."""
    return load(MODEL)


def body_weight(osim):
    """m |g| (N): the model's total mass (every ``Body``) times OpenSim's default gravity, Moco's divisor."""
    return GRAVITY * sum(float(b.findtext("mass")) for b in osim.skeleton.spec.model.iter("Body"))


def references():
    """(coordinates filtered at 6 Hz, ground reaction forces) as :class:`colloc.goals.TimeTable`."""
    coordinates = goals.read_table(DATA / "referenceCoordinates.sto", lowpass=CUTOFF)
    return coordinates, goals.read_table(DATA / "referenceGRF.sto")


def symmetry_pairs(opensim_names):
    """The example's periodicity pairs, built from OpenSim's state names exactly as its script does,
    returned as (initial, final) OpenSim names: joint states first, then activations."""
    names = list(opensim_names)
    pairs = []
    for s in names:
        if not s.startswith("/jointset"):
            continue
        if "_r" in s:
            pairs.append((s, re.sub(r"_r", "_l", s)))
        if "_l" in s:
            pairs.append((s, re.sub(r"_l", "_r", s)))
        if not ("_r" in s or "_l" in s or "pelvis_tx/value" in s or "/activation" in s):
            pairs.append((s, s))
    for s in names:
        if s.endswith("/activation"):
            if "_r" in s:
                pairs.append((s, re.sub(r"_r", "_l", s)))
            if "_l" in s:
                pairs.append((s, re.sub(r"_l", "_r", s)))
    return pairs


def build(duration=DURATION, effort_weight=EFFORT_WEIGHT):
    """Moco's 2-D walking tracking problem over [0, ``duration``] s (module docstring)."""
    osim = model()
    sk = osim.skeleton
    to_colloc = {v: k for k, v in sk.opensim_names.items()}
    prob = cl.Problem(osim.components, t0=0.0, tf=duration, name="gait2d_tracking")
    for coordinate, (lo, hi) in BOUNDS.items():
        prob.bound(sk.coordinate(coordinate), lo, hi)
    coordinates, grf = references()
    values = {label: prob.variable(to_colloc[label], "tracking").symbol for label in coordinates.labels}
    speeds = {label: prob.variable(to_colloc[goals.tracking.speed_label(label)], "tracking").symbol
              for label in coordinates.labels}
    goals.track_states(prob, coordinates, values, speeds=speeds, method="quintic", name="state_tracking")
    goals.control_effort(prob, weight=effort_weight, name="control_effort")
    groups = [([sk.contacts[c].record[0:3] for c in spheres], identifier) for identifier, spheres in FEET.items()]
    goals.track_contact(prob, grf, groups, body_weight(osim), projection="plane", projection_vector=(0, 0, 1),
                        method="quintic", name="contact")
    state_order = [sk.opensim_names[v.name] for v in prob.model.variables if v.kind == "state"]
    pairs = [(to_colloc[a], to_colloc[b]) for a, b in symmetry_pairs(state_order)]
    goals.periodicity(prob, pairs + [("model.lumbarAct", "model.lumbarAct")], name="symmetry")
    prob.guess(tracked_guess(prob, coordinates, to_colloc, duration))
    return prob


def tracked_guess(prob, coordinates, to_colloc, duration, activation=0.1):
    """MocoTrack's ``apply_tracked_states_to_guess``: the filtered coordinates and their spline's slope
    at the table's rows (inside the horizon); every muscle at ``activation``, no lumbar torque."""
    inside = coordinates.time <= duration + 1e-12
    time = coordinates.time[inside]
    guess = {}
    for label in coordinates.labels:
        f = coordinates.function(label, "quintic")
        t = ca.SX.sym("t")
        rate = ca.Function("rate", [t], [ca.jacobian(f(t), t)])
        guess[to_colloc[label]] = (time, np.asarray(coordinates[label])[inside])
        guess[to_colloc[goals.tracking.speed_label(label)]] = (time, np.array([float(rate(t)) for t in time]))
    for var in prob.model.variables:
        if var.name.endswith((".activation", ".excitation")):
            guess[var.name] = activation
    guess["model.lumbarAct"] = 0.0
    return guess


def mirrored(trajectory):
    """The full stride: the half cycle, then the same half with left and right swapped and pelvis tx
    advanced by its travel, as a :class:`colloc.Trajectory` (times [t0, 2 tf − t0], the joint row once)."""
    names = [n for n in trajectory.names if trajectory.kinds.get(n) in ("state", "control")]
    time = np.asarray(trajectory.time)
    travel = trajectory.final("model.pelvis_tx") - trajectory.initial("model.pelvis_tx")
    second = {}
    for n in names:
        twin = n.replace("_r", "\0").replace("_l", "_r").replace("\0", "_l")
        column = np.asarray(trajectory[twin], dtype=float)
        second[n] = column + (travel if n == "model.pelvis_tx" else 0.0)
    stride_time = np.concatenate([time, time[1:] + (time[-1] - time[0])])
    columns = {n: np.concatenate([np.asarray(trajectory[n], dtype=float), second[n][1:]]) for n in names}
    return cl.Trajectory(stride_time, columns, kinds={n: trajectory.kinds[n] for n in names})
