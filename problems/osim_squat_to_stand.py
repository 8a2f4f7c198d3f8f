"""Squat to stand of Moco's 2-D gait model, its feet fixed to the floor, with the least muscle effort.

The model is Moco's 2-D gait model with polynomial muscle paths, ``models/opensim/2D_gait_fitted_paths.osim``
(opensim-core's ``example2DWalking/2D_gait.osim`` with every path replaced by a ``FunctionBasedPath``
fitted by OpenSim's ``PolynomialPathFitter``; how: ``models/opensim/2D_gait_fitted_paths.md``), read by
:func:`colloc.opensim.load`: 10 coordinates (planar pelvis, hips, knees, ankles, lumbar) and 18
DeGroote–Fregly muscles with rigid tendons and activation dynamics.  Its four contact spheres are left
out: both feet are instead held at their place on the floor by holonomic constraints, as Moco's
``exampleSquatToStand`` welds its foot to the ground, so the body is a closed chain (floor – left leg –
pelvis – right leg – floor) with four degrees of freedom.  The model has no trunk muscles: its own
``lumbarAct`` torque actuator (±150 N·m) moves the lumbar joint; no other reserve or residual actuator
is added (the legs' nine muscles a side move the hips, knees and ankles on their own).

Objective
    minimize J = ∫₀ᵀ (Σ_m e_m² + (τ_lumbar / 150 N·m)² + w |v̇|²) dt, T = 1 s: the controls' sum of squares
    (Moco's ``MocoControlGoal``), the lumbar torque as a fraction of its bound, and a small acceleration
    penalty (``ACCELERATION_WEIGHT`` w = 1e-5 s⁴, a few per cent of J) against the grid-point zig-zag of
    the accelerations that Hermite–Simpson otherwise leaves on this closed chain
States
    ``model.<coordinate>``, ``model.<coordinate>_speed`` (10 + 10), ``<muscle>.activation`` (18)
Controls
    ``<muscle>.excitation`` ∈ [0.01, 1] (18), ``model.lumbarAct`` ∈ [−150, 150] N·m
Multipliers
    ``model.foot_l.lambda_*``, ``model.foot_r.lambda_*``: the floor's forces on each foot
Constraints
    each calcaneus's origin (x, y) and the height of a point ``FORE`` ahead of it on the foot held where
    the standing pose puts them (3 rows a foot: a planar weld); at t = 0 the ``SQUAT`` pose, at t = T the
    ``STAND`` pose (knees 0.3 rad bent: with both legs straight the two feet's constraint rows are
    dependent — a squeezing force along both legs is undetermined — and the multipliers are not unique;
    with knees 0.1 rad bent IPOPT still failed, with 0.3 rad it converges),
    each at rest; both are given for the right leg and the lumbar joint, the left leg and the pelvis
    following from the feet; muscle activation dynamics and the skeleton's equations of motion.
    Every activation starts at its excitation's steady state (the squat is held before it starts): with
    free initial activations the optimum started glut_max at full activation, decaying within the first
    interval, which no coarse mesh resolves.  Both knees stay bent
    by at least 0.2 rad (``KNEE_BENT``): with straight knees the closed chain is singular, and without
    the bound the optimum swung both knees through 0 to 0.13 rad of hyperextension and back, where the
    re-simulation of ``colloc verify`` could not solve for the multipliers.

The squat is a half squat (knees 0.75 rad) with the trunk leaning 0.3 rad forward, for three reasons.
The paths are fitted to the coordinates of Moco's walking example ±20°, and a polynomial is not to be
trusted far outside its samples.  The original file's paths have conditional points (the
gastrocnemius's switches at knee −0.785 rad, the iliopsoas's at hip 0.785 rad) where the path length
jumps; a motion across one makes the NLP non-smooth, and with those paths IPOPT ended in restoration
failures or stopped at its acceptable level (measured), while the fitted paths are smooth.  And the
centre of mass must lie over the foot: with the trunk upright the half squat puts it 9 cm behind the
heel, the ankle muscles must hold the whole body from falling backwards through the weld, and tibialis
anterior, rectus femoris and vasti saturate (activation 1) without converging.

Check (``REFERENCE`` and tests/test_osim_squat.py): there is no published optimum for this problem, so
what is checked is what the problem prescribes, measured on the result: the pelvis height at T equals
that of the standing pose the feet were placed for (``measure``), both feet stay where they were placed
at every mesh point, and every activation and excitation stays within its bounds.  ``colloc verify`` of
the file ``colloc solve`` writes passes: defects and residuals to 1e-6 where the solver imposed them,
each interval integrated alone within the local error the solve estimated, the whole horizon
re-simulated; it fails on the file with one state or one projection multiplier edited.  Held instead to
the fixed ``--dynamics-tolerance 1e-2``, the first interval fails by a little (hip, pelvis and lumbar
speeds 0.013–0.016 rad/s off at its end; 0.13–0.16 on a uniform 20-interval mesh: the start is the
hardest part to resolve).

Source: model from opensim-core (``OpenSim/Examples/Moco/example2DWalking/2D_gait.osim``, Apache 2.0;
M. Afschrift, A. Falisse), paths fitted with OpenSim 4.6; the problem follows Moco's
``exampleSquatToStand`` (a predictive squat to stand, least control effort, foot welded to the floor,
T = 1 s), here on a two-legged model.
"""
import pathlib

import casadi as ca

import colloc as cl
from colloc.opensim import load

MODEL = pathlib.Path(__file__).resolve().parent.parent / "models" / "opensim" / "2D_gait_fitted_paths.osim"
#: 28 intervals, 12.5 ms at the start and the end (the muscles' activations and the trunk move fastest
#: there), 50 ms between.
SOLVE = dict(scheme="hermite-simpson", mesh=[0.0, 0.0125, 0.025, 0.0375, 0.05, 0.075] + [round(0.05 * k, 4) for k in range(2, 19)]
             + [0.925, 0.95, 0.9625, 0.975, 0.9875, 1.0])
DURATION = 1.0
LUMBAR_SCALE = 150.0
#: The squat and the standing pose on the right side (rad); the left leg follows from the feet.
SQUAT = dict(hip_flexion_r=0.75, knee_angle_r=-0.75, ankle_angle_r=0.3, lumbar=0.0)
STAND = dict(hip_flexion_r=0.15, knee_angle_r=-0.3, ankle_angle_r=0.15, lumbar=0.0)
#: Pelvis height (m) at which the feet are placed, in the standing pose.
STANDING_HEIGHT = 0.93
#: Upper bound of both knee angles (rad): the knees stay bent, away from the straight legs where the closed
#: chain is singular (module docstring).
KNEE_BENT = -0.2
#: Weight (s⁴) of the accelerations' ∫|v̇|² dt beside the effort (module docstring).
ACCELERATION_WEIGHT = 1e-5
#: Distance (m) ahead of the calcaneus's origin of the point whose height fixes the foot's angle.
FORE = 0.15

#: No published optimum: the check is that the final pose is the standing pose (module docstring).
REFERENCE = dict(value=STANDING_HEIGHT, source="the standing pose the feet were placed for: pelvis height at t = T (module docstring)",
                 tolerance=1e-6, quantity="measure: pelvis height at the final time")


def model():
    """The model without its contact spheres: the feet are held by constraints instead."""
    kinds = dict((name, kind) for kind, name in load(MODEL, forces=True).forces)
    return load(MODEL, forces=[name for name, kind in kinds.items() if kind != "SmoothSphereHalfSpaceForce"])


def _foot_points(sk, side):
    """Ground (x, y) of the calcaneus's origin and the height of the point ``FORE`` ahead of it."""
    heel = sk.point_position(f"calcn_{side}", [0.0, 0.0, 0.0])
    fore = sk.point_position(f"calcn_{side}", [FORE, 0.0, 0.0])
    return ca.vertcat(heel[0], heel[1], fore[1])


def _mirrored(sk, right):
    """Every coordinate: ``right`` on both legs, the pelvis upright at ``STANDING_HEIGHT``, others 0."""
    out = {c: (STANDING_HEIGHT if c == "pelvis_ty" else 0.0) for c in sk.coordinates}
    for name, value in right.items():
        out[name] = out[name.replace("_r", "_l")] = value
    return out


def pose(sk, right):
    """The whole pose: ``right`` on both legs, the pelvis placed (Newton) so that the feet are where the
    standing pose, at pelvis height ``STANDING_HEIGHT`` with its trunk upright, puts them."""
    out, standing = _mirrored(sk, right), _mirrored(sk, STAND)
    feet = ca.Function("feet", [sk.q], [_foot_points(sk, "r")])
    jac = ca.Function("J", [sk.q], [ca.jacobian(_foot_points(sk, "r"), sk.q)])
    target = feet(ca.DM([standing[c] for c in sk.coordinates]))
    pelvis = [sk.coordinates.index(c) for c in ("pelvis_tilt", "pelvis_tx", "pelvis_ty")]
    for _ in range(30):
        q = ca.DM([out[c] for c in sk.coordinates])
        residual = feet(q) - target
        if float(ca.norm_inf(residual)) < 1e-13:
            break
        step = ca.solve(jac(q)[:, pelvis], -residual)
        for k, i in enumerate(pelvis):
            out[sk.coordinates[i]] += float(step[k])
    return out


def build(duration=DURATION, acceleration_weight=ACCELERATION_WEIGHT):
    """Squat to stand in ``duration`` seconds, least Σe² plus ``acceleration_weight`` ∫|v̇|² dt (module docstring)."""
    osim = model()
    sk = osim.skeleton
    muscles = osim.components[1:]
    squat, stand = pose(sk, SQUAT), pose(sk, STAND)
    q_stand = ca.DM([stand[c] for c in sk.coordinates])
    for side in ("l", "r"):
        points = _foot_points(sk, side)
        sk.body.holonomic(f"foot_{side}", points - ca.Function("p", [sk.q], [points])(q_stand), multiplier_bounds=(-1e4, 1e4))
    prob = cl.Problem(osim.components, t0=0.0, tf=duration, name="osim_squat_to_stand")
    lumbar = next(v.symbol for v in sk.body.variables if v.name == f"{sk.name}.lumbarAct")
    for side in ("l", "r"):
        prob.bound(sk.coordinate(f"knee_angle_{side}"), upper=KNEE_BENT)
    prob.minimize(integral=sum(m.excitation ** 2 for m in muscles) + (lumbar / LUMBAR_SCALE) ** 2)
    if acceleration_weight:
        prob.minimize(integral=acceleration_weight * ca.sumsqr(sk.body.a), name="acceleration")
    prob.initial({sk.coordinate(c): squat[c] for c in SQUAT})
    prob.final({sk.coordinate(c): stand[c] for c in STAND})
    prob.initial({sk.speed(c): 0.0 for c in SQUAT})
    # held in the squat before it starts: each activation at its excitation's steady state
    for m in muscles:
        prob.boundary(prob.at_t0(m.activation) - prob.at_t0(m.excitation), name=f"{m.name}.steady_start")
    prob.final({sk.speed(c): 0.0 for c in STAND})
    guess = {sk.coordinate(c): (squat[c], stand[c]) for c in sk.coordinates}
    guess.update({m.activation: 0.1 for m in muscles})
    guess.update({m.excitation: 0.1 for m in muscles})
    prob.guess(guess)
    return prob


def measure(result):
    """Pelvis height at the final time (m)."""
    return float(result.trajectory.final("model.pelvis_ty"))
