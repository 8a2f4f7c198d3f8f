"""Moco's 2-D gait model standing still on its four contact spheres with the least muscle activation.

The model is opensim-core's ``example2DWalking/2D_gait.osim`` read by :func:`colloc.opensim.load`:
10 coordinates (planar pelvis, hips, knees, ankles, lumbar), 18 DeGroote–Fregly muscles with rigid
tendons, a lumbar torque actuator and four smooth Hunt–Crossley spheres (heels and toes) on the floor.
Standing still is a static problem written as a short trajectory whose speeds are held at zero:
every grid point is then the same pose in equilibrium, M·0 + c(q, 0) = τ_muscles + τ_contact + τ_lumbar,
and the activation dynamics at rest give e = a.

Objective
    minimize J = (1/T) ∫₀ᵀ (Σ_m a_m² + (τ_lumbar / 150 N·m)²) dt: the activations' sum of squares of the
    pose (every point is the same) plus the lumbar torque as a fraction of its bound
States
    ``model.<coordinate>``, ``model.<coordinate>_speed`` (held at 0), ``<muscle>.activation``
Controls
    ``<muscle>.excitation`` ∈ [0.01, 1], ``model.lumbarAct`` ∈ [−150, 150] N·m
Constraints
    every speed, acceleration and activation rate 0 at every grid point (so the pose and the
    activations are constant and e = a); ``pelvis_tx`` = 0 (the floor is
    level: a horizontal shift changes nothing); contact, muscle and skeleton dynamics.

Check (tests/test_osim_standing.py): OpenSim 4.6's own forward simulation of the same file
(``Manager``, integrator accuracy 1e-9, the muscles' excitations and the lumbar torque held constant at
the optimum, starting at the optimal pose at rest with a = e) stays within ``STAY_PUT`` of that pose
for 0.5 s.  The pose colloc finds is an equilibrium of colloc's expressions, which equal OpenSim's to
1e-9 (tests/test_osim_forces.py); what moves it is the NLP's residual (IPOPT tol 1e-10: forces off
balance by ~1e-10 N·m) and the integrator's error (1e-9), both amplified by the falling (unstable)
modes of a standing body: started 0.02 rad off at both hips, the model moves by more than 1 rad in
the same 0.5 s, an amplification below 100.  Hence a bound of 1e-9 × 100 = 1e-7, and ``STAY_PUT`` =
1e-6 (rad for angles, m for the pelvis translations) leaves a margin of 10 (measured: 6e-11).

The optimum has every muscle at its least activation (min_control 0.01, J = 18 × 0.01² = 0.0018) and
no lumbar torque: the model stands on its passive fiber forces.  Such poses form a family, and IPOPT
returns the one its path from the guess reaches (other guesses end in local optima with J = 0.0026 or
0.045, where some muscles hold the trunk).

Source: model from opensim-core (``OpenSim/Examples/Moco/example2DWalking/2D_gait.osim``, Apache 2.0;
M. Afschrift, A. Falisse); the check runs OpenSim itself.
"""
import pathlib

import casadi as ca

import colloc as cl
from colloc.opensim import load

MODEL = pathlib.Path(__file__).resolve().parent.parent / "models" / "opensim" / "2D_gait.osim"
SOLVE = dict(scheme="hermite-simpson", intervals=2, ipopt=dict(tol=1e-10))
DURATION = 0.1
LUMBAR_SCALE = 150.0
#: How far (rad or m) OpenSim's forward simulation may move from the optimal pose in 0.5 s (docstring).
STAY_PUT = 1e-6
#: An upright guess: a little hip and knee flexion, the feet on the floor (pelvis height found from the
#: spheres), every muscle a little above its least activation.
GUESS_POSE = dict(pelvis_tilt=0.0, hip_flexion_l=0.1, hip_flexion_r=0.1, knee_angle_l=-0.2, knee_angle_r=-0.2,
                  ankle_angle_l=0.1, ankle_angle_r=0.1, lumbar=0.0)
GUESS_ACTIVATION = 0.05


def model():
    """The loaded model (:class:`colloc.opensim.OsimModel`)."""
    return load(MODEL)


def standing_height(osim, pose):
    """Pelvis height at which the lowest contact sphere of ``pose`` just touches the floor (y = 0)."""
    sk = osim.skeleton
    q = ca.vertcat(*[pose.get(c, 0.0) for c in sk.coordinates])
    lowest = []
    for element in osim.skeleton.spec.model.iter("ContactSphere"):
        R, p = sk.frame_pose(element.findtext("socket_frame").strip())
        location = ca.DM([float(x) for x in element.findtext("location").split()])
        radius = float(element.findtext("radius"))
        centre = ca.Function("c", [sk.q], [p + ca.mtimes(R, location)])(q)
        lowest.append(float(centre[1]) - radius)
    return -min(lowest)


def build(duration=DURATION):
    """Standing still for ``duration`` seconds, least Σa² (module docstring)."""
    osim = model()
    sk = osim.skeleton
    muscles = osim.components[1:]
    prob = cl.Problem(osim.components, t0=0.0, tf=duration, name="gait2d_standing")
    for speed in sk.speeds:
        prob.bound(sk.speed(speed), 0.0, 0.0)
    # rest, not a zig-zag: with the speeds held at 0 the collocation defects still allow accelerations
    # alternating in sign between grid points when the forces alternate; e = a makes ȧ = 0, so the
    # activations and muscle forces are one constant, and the convex lumbar cost then picks one torque
    prob.path(ca.vertcat(*[m.excitation - m.activation for m in muscles]), 0.0, 0.0, name="steady_activation")
    prob.bound(sk.coordinate("pelvis_tx"), 0.0, 0.0)
    lumbar = sk.body.variable(next(v.symbol for v in sk.body.variables if v.name.endswith(".lumbarAct"))).symbol
    effort = sum(m.activation ** 2 for m in muscles) + (lumbar / LUMBAR_SCALE) ** 2
    prob.minimize(integral=effort / duration)
    pose = dict(GUESS_POSE, pelvis_tx=0.0)
    pose["pelvis_ty"] = standing_height(osim, pose) - 0.002
    guess = {sk.coordinate(c): value for c, value in pose.items()}
    guess.update({m.activation: GUESS_ACTIVATION for m in muscles})
    guess.update({m.excitation: GUESS_ACTIVATION for m in muscles})
    prob.guess(guess)
    return prob
