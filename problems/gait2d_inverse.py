"""MocoInverse of Moco's 2-D walking motion: the 18 muscles' excitations that reproduce it, in colloc.

The model is ``2D_gait.osim`` (opensim-core ``example2DWalking``) read by :func:`colloc.opensim.load` with
its 18 DeGroote–Fregly muscles, made compliant with implicit tendon dynamics (MocoInverse's usual setting,
``ModOpUseImplicitTendonComplianceDynamicsDGF``; ``tendons="rigid"`` keeps the file's rigid tendons), and
its four smooth sphere–half-space contacts; the lumbar torque actuator is left out (a reserve takes its
place).  The 10 coordinates are prescribed from ``referenceCoordinates.sto`` (natural quintic splines of
the table, unfiltered: Moco's ``PositionMotion``), so there are no skeleton states; the contact forces are
then known functions of time — the model's own ground reaction forces on the measured motion, in place of
a table of external loads (the example's ``referenceGRF.sto`` gives no centres of pressure).

Objective (MocoInverse's goals, ``colloc.goals.inverse_problem``)
    J = ∫ Σ_m e_m² + Σ_c u_c² dt                    ``excitation_effort`` (reserves weight 1)
      + 0.01 ∫ Σ_m (dF̃_T,m/dt)² dt                  ``auxiliary_derivatives`` (implicit tendons)
States
    the 18 activations ``<muscle>.activation`` and normalized tendon forces ``<muscle>.normalized_tendon_force``
Controls
    ``<muscle>.excitation`` ∈ [0.01, 1]; ``reserves.reserve_<coordinate>`` (unbounded), one per coordinate,
    with optimal force 1 N·m on the six joints the muscles cross and 100 N or N·m on the pelvis's three
    coordinates and the lumbar joint, which no muscle crosses (the residual forces of the motion, up to
    ~110 N, would otherwise make a constant ~10⁴ of the objective)
Constraints
    at every collocation point, Σ_m r_m(q̂) F_T,m + F_opt u = M(q̂) q̂̈ + c(q̂, q̂̇) − τ_contact(q̂, q̂̇);
    activation dynamics; each tendon's implicit equilibrium F̃_T = (a f_L f_V + f_PE + damping) cos α;
    e_m(0) = a_m(0) (``initial_activation``).

Transcription: MocoInverse's — Hermite–Simpson on ⌈0.47 s / 0.02 s⌉ = 24 intervals, midpoint controls free.

Reference: Moco 4.6 ``MocoInverse`` on the same model, motion, reserves and mesh (``scripts/moco_inverse.py
--tendons implicit``, run 2026-11-26, tolerances 1e-4): J = 32.6296895 in 116 iterations; colloc reaches
32.6296754 (4e-7 below), and colloc's objective at Moco's solution is Moco's to 2e-11 (docs/moco-gait.md).
With rigid tendons the two tools end on neighbouring local optima (84.7078583 and 85.2601963), each of
which the other keeps when started there, and two reserves make 99 % of the objective.
Source: model and data from opensim-core ``OpenSim/Examples/Moco/example2DWalking`` (Apache 2.0);
``problems/data/gait2d/README.md``.
"""
import pathlib
import time

import colloc as cl
from colloc import goals
from colloc.opensim import load

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "opensim" / "2D_gait.osim"
DATA = ROOT / "problems" / "data" / "gait2d"
DURATION = 0.47
MESH_INTERVAL = 0.02
CONTACTS = ["contactHeel_r", "contactFront_r", "contactHeel_l", "contactFront_l"]
#: Coordinates no muscle crosses: their reserves are residual actuators (N or N·m).
RESIDUALS = {"pelvis_tilt": 100.0, "pelvis_tx": 100.0, "pelvis_ty": 100.0, "lumbar": 100.0}
RESERVE = 1.0
#: Moco's MocoInverse with implicit tendons (docs/moco-gait.md; tests/data/moco/gait2d_inverse_moco.json).
REFERENCE = dict(value=32.6296895, source="OpenSim Moco 4.6 MocoInverse (scripts/moco_inverse.py --tendons implicit), "
                 "24 intervals, tolerance 1e-4", tolerance=1e-4)
#: No ``expand``: the motion's splines, path lengths and inverse dynamics at the (fixed) grid times are
#: evaluated once when the NLP is built (the transcription hoists what depends on the time alone), and the
#: point-by-point derivatives then beat expanding the whole NLP (measured: 1.4 s of solve CPU against 2.4 s).
SOLVE = dict(scheme="hermite-simpson", intervals=24)


def muscle_names():
    """The 18 muscles of the model file, in file order."""
    import xml.etree.ElementTree as ET

    return [el.get("name") for el in ET.parse(MODEL).getroot().iter("DeGrooteFregly2016Muscle")]


def compliant_model(folder):
    """``2D_gait.osim`` with compliant tendons, implicit (``ignore_tendon_compliance`` false and
    ``tendon_compliance_dynamics_mode`` implicit on every muscle, as Moco's
    ``ModOpUseImplicitTendonComplianceDynamicsDGF`` sets it), written into ``folder``; its path."""
    import re

    text = MODEL.read_text()
    text, count = re.subn(r"<ignore_tendon_compliance>true</ignore_tendon_compliance>",
                          "<ignore_tendon_compliance>false</ignore_tendon_compliance>"
                          "<tendon_compliance_dynamics_mode>implicit</tendon_compliance_dynamics_mode>", text)
    assert count == len(muscle_names())
    path = pathlib.Path(folder) / "2D_gait_implicit_tendons.osim"
    path.write_text(text)
    return path


def model(tendons="implicit"):
    """The loaded model on the prescribed motion; ``model().motion`` is its :class:`colloc.goals.PrescribedMotion`.

    ``tendons``: ``"rigid"`` (the file's) or ``"implicit"`` (compliant tendons with implicit dynamics,
    :func:`compliant_model`: a tendon-force state per muscle and MocoInverse's ``auxiliary_derivatives`` goal).
    """
    import tempfile

    if tendons not in ("rigid", "implicit"):
        raise ValueError(f"`tendons` must be 'rigid' or 'implicit'; got {tendons!r}.")
    table = goals.read_table(DATA / "referenceCoordinates.sto")

    def motion(body):  # each coordinate's column, /jointset/<joint>/<coordinate>/value (no second load for the names)
        columns = {c.name(): next(label for label in table.labels if label.endswith(f"/{c.name().split('.', 1)[1]}/value"))
                   for c in body.coordinates}
        return goals.prescribed_motion(body, table, columns, method="quintic")

    if tendons == "rigid":
        return load(MODEL, forces=CONTACTS + muscle_names(), motion=motion)
    with tempfile.TemporaryDirectory() as folder:
        return load(compliant_model(folder), forces=CONTACTS + muscle_names(), motion=motion)


def build(duration=DURATION, tendons="implicit"):
    """MocoInverse's problem on the walking motion over [0, ``duration``] s (module docstring)."""
    osim = model(tendons)
    motion = osim.motion
    muscles = [c for c in osim.components if isinstance(c, cl.DeGrooteFregly2016Muscle)]
    reserves = {c.name(): RESIDUALS.get(c.name().split(".", 1)[1], RESERVE) for c in motion.body.coordinates}
    return goals.inverse_problem(motion, muscles, reserves=reserves, t0=0.0, tf=duration, name="gait2d_inverse")


def run(quick=False, tendons="implicit"):
    """Build and solve once, as ``scripts/benchmark.py --moco`` reads it.

    Returns ``{"build_s", "solve_s", "build_cpu_s", "solve_cpu_s", "iterations", "objective", "success",
    "intervals", "result"}``: build is loading the model and writing the problem, solve is
    ``colloc.solve`` (NLP construction, IPOPT and the accuracy report).  ``quick`` solves on a mesh twice
    as coarse (0.04 s intervals) for a smoke run; the full run is Moco's mesh, 24 intervals.
    """
    wall, cpu = time.perf_counter(), time.process_time()
    problem = build(tendons=tendons)
    intervals = goals.inverse_intervals(DURATION, 2 * MESH_INTERVAL if quick else MESH_INTERVAL)
    built_wall, built_cpu = time.perf_counter(), time.process_time()
    res = cl.solve(problem, scheme="hermite-simpson", intervals=intervals, ipopt={"tol": 1e-8})
    return {"build_s": built_wall - wall, "solve_s": time.perf_counter() - built_wall,
            "build_cpu_s": built_cpu - cpu, "solve_cpu_s": time.process_time() - built_cpu,
            "iterations": res.stats.get("iter_count"), "objective": res.objective, "success": res.success,
            "intervals": intervals, "result": res}


def opensim_names(problem):
    """``{colloc name: OpenSim name}`` of the problem's states and controls: the muscles' as the loader names
    them, each reserve as ``ModOpAddReserves`` names it (``/forceset/reserve_jointset_<joint>_<coordinate>``)."""
    implicit = any(v.name.endswith(".normalized_tendon_force") for v in problem.model.variables)
    osim_names = problem_model_names("implicit" if implicit else "rigid")
    out = {}
    for var in problem.model.variables:
        if var.name in osim_names:
            out[var.name] = osim_names[var.name]
            if var.name.endswith(".normalized_tendon_force"):  # Moco's implicit derivative of the tendon force
                out[var.name + ".dot"] = osim_names[var.name].replace("normalized_tendon_force",
                                                                      "implicitderiv_normalized_tendon_force")
        elif var.name.startswith("reserves.reserve_"):
            coordinate = osim_names[f"model.{var.name.split('reserve_', 1)[1]}"]  # /jointset/<joint>/<coordinate>/value
            out[var.name] = "/forceset/reserve_" + coordinate[1:].rsplit("/", 1)[0].replace("/", "_")
    return out


def problem_model_names(tendons="rigid"):
    """The loader's ``{colloc name: OpenSim name}`` for this model (coordinates, muscles' variables)."""
    import tempfile

    if tendons == "rigid":
        return dict(load(MODEL, forces=muscle_names()).skeleton.opensim_names)
    with tempfile.TemporaryDirectory() as folder:
        return dict(load(compliant_model(folder), forces=muscle_names()).skeleton.opensim_names)


def from_moco(path, problem):
    """A Moco solution file (``scripts/moco_inverse.py``) as a :class:`colloc.Trajectory` in the problem's names."""
    moco = cl.Trajectory.read(path)
    names = opensim_names(problem)
    kinds = {v.name: v.kind for v in problem.model.variables}
    kinds.update({n: "derivative" for n in names if n.endswith(".dot")})
    columns = {n: moco[o] for n, o in names.items() if o in moco.names}
    missing = [n for n in names if n not in columns]
    if missing:
        raise ValueError(f"`{path}` has no column for `{missing[0]}` ({names[missing[0]]}).")
    return cl.Trajectory(moco.time, columns, {n: kinds[n] for n in columns})


def to_moco(trajectory, problem, path):
    """Write a colloc trajectory of this problem with Moco's names (a guess for ``scripts/moco_inverse.py``)."""
    names = {n: o for n, o in opensim_names(problem).items() if not n.endswith(".dot")}  # states and controls
    columns = {names[n]: trajectory[n] for n in names}
    kinds = {names[n]: trajectory.kinds[n] for n in names}
    return cl.Trajectory(trajectory.time, columns, kinds).write(path)


def evaluate(problem, trajectory, intervals):
    """(objective, largest constraint violation) of colloc's NLP at ``trajectory`` (on the same grid)."""
    import warnings

    import casadi as ca
    import numpy as np

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a file written by Moco names no colloc scheme: read at its own rows
        nlp = cl.build_nlp(problem, intervals=intervals, guess=trajectory)
    f, g = (np.array(x).ravel() for x in ca.Function("fg", [nlp.w], [nlp.f, nlp.g])(nlp.layout.vector("guess")))
    violation = np.maximum(nlp.rows.lower - g, 0) + np.maximum(g - nlp.rows.upper, 0)
    return float(f[0]), float(np.max(violation)), nlp.rows.labels()[int(np.argmax(violation))]
