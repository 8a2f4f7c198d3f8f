"""Moco's 2-D walking prediction (opensim-core ``example2DWalking``, its ``gaitPrediction`` half) in colloc.

The model is ``2D_gait.osim`` as in problems/gait2d_tracking.py (10 coordinates, 18 DeGroote–Fregly
muscles, a lumbar torque actuator, four smooth sphere contacts).  Nothing is tracked: half a gait cycle
is predicted at a prescribed average speed, the other half being its mirror image.

Objective (as Moco evaluates its goal, so the numbers compare)
    J = 10 ∫ Σ_u |u|³ dt / |r(tf) − r(t0)|         ``effort`` (MocoControlGoal, exponent 3,
                                                     divide_by_displacement): every control, the 18
                                                     excitations and the lumbar torque
    r the model's centre of mass (Moco's ``calcSystemDisplacement``).
States
    the 10 coordinates and their speeds, the 18 activations (as in the tracking problem)
Controls
    ``<muscle>.excitation`` ∈ [0.01, 1], ``model.lumbarAct`` ∈ [−150, 150] N·m
Parameters
    ``normalization.duration`` and ``normalization.displacement`` (the divisor as a variable tied to the
    end points; :class:`colloc.goals.Normalization`)
Constraints
    skeleton, muscle and contact dynamics; the example's bounds (problems/gait2d_tracking.py); the final
    time free in [0.4, 0.6] s; average speed |r(tf) − r(t0)| / (tf − t0) = 1.2 m/s
    (``MocoAverageSpeedGoal``, an end-point constraint as Moco's default); the symmetry pairs of the
    tracking problem (``MocoPeriodicityGoal`` as constraints).

Transcription: as the tracking problem's, Hermite–Simpson, 50 intervals, ``control_interpolation="linear"``
(Moco's midpoint controls), ``mode="explicit"``.  Guess: colloc's tracking solution at 50 intervals
(``problems/data/gait2d/tracking_solution.sto``, written by :func:`write_opensim`; the example starts
its prediction from its tracking solution).

Reference: OpenSim Moco 4.6 (``MocoCasADiSolver``, the example's settings, 50 intervals) solving the same
problem with ``scripts/moco_gait_predictive.py``: J = 0.1345056 in 17 iterations, started from colloc's
solution; from the tracking solution Moco does not finish (docs/moco-gait.md says why).  Moco's tolerance
1e-4 leaves its objective 1.3e-4 above colloc's 0.1344883 (Moco at tolerance 1e-6 went on down to
0.134485); hence the reference's tolerance 2e-4.  colloc started from Moco's solution finds 0.1344838, a
neighbouring optimum 3.4e-5 below.
Source: model and data from opensim-core ``OpenSim/Examples/Moco/example2DWalking`` (Apache 2.0; M. Afschrift,
A. Falisse); ``problems/data/gait2d/README.md``.
"""
import importlib.util
import pathlib

import casadi as ca
import numpy as np

import colloc as cl
from colloc import goals
from colloc.opensim import from_opensim, write_sto

ROOT = pathlib.Path(__file__).resolve().parent.parent
GUESS = ROOT / "problems" / "data" / "gait2d" / "tracking_solution.sto"
SPEED = 1.2
EFFORT_WEIGHT = 10.0
EXPONENT = 3
FINAL_TIME = (0.4, 0.6)
REFERENCE = dict(value=0.1345056, source="OpenSim Moco 4.6 example2DWalking gaitPrediction, 50 intervals, tol 1e-4, "
                 "from colloc's solution (26 Nov 2026)", tolerance=2e-4)



def _tracking():
    """problems/gait2d_tracking.py as a module (its model, bounds and symmetry pairs)."""
    spec = importlib.util.spec_from_file_location("problems.gait2d_tracking", ROOT / "problems" / "gait2d_tracking.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tracking = _tracking()
#: As the tracking problem (tol 1e-8 and the METIS ordering: see problems/gait2d_tracking.py ``SOLVE``), but
#: IPOPT's default monotone barrier update: from the tracking solution the adaptive one was slower (objective
#: 0.21 after 56 iterations, where the monotone one was at 0.16 and converged in 102).
SOLVE = dict(tracking.SOLVE, ipopt=dict(mumps_pivot_order=5))


def center_of_mass(osim) -> ca.SX:
    """The model's centre of mass in ground, SX (3, 1) in the coordinates: Σ m_b r_b / Σ m_b over every
    ``Body`` (OpenSim's ``calcMassCenterPosition``)."""
    sk = osim.skeleton
    bodies = sk.spec.bodies
    total = sum(b.mass for b in bodies.values())
    return sum(b.mass * sk.point_position(path, b.com) for path, b in bodies.items()) / total


def build(guess=GUESS):
    """Moco's 2-D walking prediction (module docstring), its guess read from ``guess`` (a ``.sto`` in
    OpenSim's names; None: no guess)."""
    osim = tracking.model()
    sk = osim.skeleton
    to_colloc = {v: k for k, v in sk.opensim_names.items()}
    com = center_of_mass(osim)
    norm = goals.Normalization("normalization", center_of_mass=com)
    prob = cl.Problem(osim.components + [norm], t0=0.0, tf=FINAL_TIME, name="gait2d_predictive")
    for coordinate, (lo, hi) in tracking.BOUNDS.items():
        prob.bound(sk.coordinate(coordinate), lo, hi)
    state_order = [sk.opensim_names[v.name] for v in prob.model.variables if v.kind == "state"]
    pairs = [(to_colloc[a], to_colloc[b]) for a, b in tracking.symmetry_pairs(state_order)]
    goals.periodicity(prob, pairs + [("model.lumbarAct", "model.lumbarAct")], name="symmetry")
    goals.average_speed(prob, com, SPEED, name="speed")
    goals.control_effort(prob, exponent=EXPONENT, weight=EFFORT_WEIGHT, divide_by_displacement=True,
                         normalization=norm, name="effort")
    if guess is not None:
        prob.guess(trajectory_guess(cl.Trajectory.read(guess), osim, com))
    return prob


def trajectory_guess(trajectory, osim, com):
    """``Problem.guess`` values from a trajectory in OpenSim's names: every state and control as
    (times, values), the final time, and the normalisation's duration and displacement at the guess."""
    traj = from_opensim(trajectory, osim)
    time = np.asarray(traj.time, dtype=float)
    own = tuple(f"{c.name}." for c in osim.components)
    guess = {n: (time, np.asarray(traj[n], dtype=float)) for n in traj.names if n.startswith(own)}
    position = ca.Function("com", [osim.skeleton.q], [com])
    names = [f"{osim.skeleton.name}.{c}" for c in osim.skeleton.coordinates]
    start, end = (position(np.array([traj[n][k] for n in names])) for k in (0, -1))
    guess["tf"] = float(time[-1])
    guess["normalization.duration"] = float(time[-1] - time[0])
    guess["normalization.displacement"] = float(ca.norm_2(end - start))
    return guess


def write_opensim(result, path=GUESS):
    """Write a 2-D walking solution's states and controls under OpenSim's names; the path.  A tracking
    solution so written is the guess file; a prediction so written is a start for
    ``scripts/moco_gait_predictive.py --guess`` (``MocoTrajectory`` reads it)."""
    traj = result.trajectory
    keep = [n for n in traj.names if traj.kinds.get(n) in ("state", "control")]
    kept = cl.Trajectory(traj.time, {n: traj[n] for n in keep}, {n: traj.kinds[n] for n in keep})
    return write_sto(kept, tracking.model(), path)


def mirrored(trajectory):
    """The full stride (problems/gait2d_tracking.py :func:`mirrored`)."""
    return tracking.mirrored(trajectory)
