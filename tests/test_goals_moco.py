"""Each goal of colloc.goals evaluated on a known trajectory, in colloc and by Moco itself, to 1e-12 relative.

Moco's side (tests/oracle/moco_goals.py, in its own process) builds the same small models with OpenSim's API
and reports ``MocoSolution.getObjectiveTerm`` after zero IPOPT iterations from the trajectory as its guess.
colloc's side builds the NLP on the same Hermite–Simpson mesh (controls linear within an interval, as Moco's
midpoint controls) from the same trajectory and evaluates each cost term.  End-point goals are compared in
cost mode (Moco: weight · Σ row²); that colloc's constraint rows square to its cost is checked here too.
"""
import warnings

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc import goals
from colloc.goals import TimeTable
from goal_oracle import moco

T0, TF, N = 0.2, 1.4, 4
TIME = np.linspace(T0, TF, 2 * N + 1)
REL = 1e-12  # measured: every goal agrees with Moco to 3e-15 relative or better


def colloc_terms(problem, columns, kinds, parameters=None):
    """Every cost term of ``problem`` on the trajectory ``columns`` (values at the grid times)."""
    traj = cl.Trajectory(TIME, columns, kinds, parameters=parameters or {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the trajectory names no scheme: it is read at its own rows
        nlp = cl.build_nlp(problem, intervals=N, guess=traj, control_interpolation="linear")
    w0 = nlp.layout.vector("guess")
    values = ca.Function("terms", [nlp.w], list(nlp.terms.values()))(w0)
    values = [values] if len(nlp.terms) == 1 else values
    return {k: float(v) for k, v in zip(nlp.terms, values)}, nlp, w0


def boundary_rows(nlp, w0, prefix):
    g = np.array(ca.Function("g", [nlp.w], [nlp.g])(w0)).ravel()
    return np.array([g[i] for i, lab in enumerate(nlp.rows.labels()) if lab.startswith(f"boundary:{prefix}")])


def assert_terms(mine, theirs, names):
    for name in names:
        assert mine[name] == pytest.approx(theirs["terms"][name], rel=REL, abs=1e-12), name


# -- the two-link chain: effort, marker and state tracking, periodicity -------------------------------
TWOLINK_STATES = {"/jointset/pin_r/swing_r/value": ("twolink.swing_r", 0.3 + 0.5 * np.sin(2 * TIME)),
                  "/jointset/pin_r/swing_r/speed": ("twolink.swing_r_speed", np.cos(2 * TIME)),
                  "/jointset/pin_l/swing_l/value": ("twolink.swing_l", -0.2 + TIME**2),
                  "/jointset/pin_l/swing_l/speed": ("twolink.swing_l_speed", 2 * TIME - 0.3)}
TWOLINK_CONTROLS = {"/forceset/act_r": ("forceset.act_r", 1.0 + np.cos(3 * TIME)),
                    "/forceset/act_l": ("forceset.act_l", -0.5 + TIME**3)}


def twolink():
    body = cl.Multibody("twolink", coordinates=["swing_r", "swing_l"])
    q1, q2 = body.coordinates
    v1, v2 = body.speeds
    body.kinetic_energy = 0.5 * (v1**2 + v2**2)  # the goals read states and controls only
    act = cl.Component("forceset")
    u = ca.vertcat(act.control("act_r"), act.control("act_l"))
    body.apply_generalized_force("forceset", u)
    tip = ca.vertcat(ca.cos(q1) + ca.cos(q1 + q2), ca.sin(q1) + ca.sin(q1 + q2), 0)
    return cl.Problem([body, act], t0=T0, tf=TF, name="twolink"), tip


def _twolink_columns():
    cols = {k: v for k, v in list(TWOLINK_STATES.values()) + list(TWOLINK_CONTROLS.values())}
    kinds = {k: "state" for k, _ in TWOLINK_STATES.values()} | {k: "control" for k, _ in TWOLINK_CONTROLS.values()}
    return cols, kinds


def test_twolink_goals_match_moco(tmp_path):
    problem, tip = twolink()
    marker_ref = np.column_stack([1.2 + 0.3 * np.sin(TIME), 0.8 * TIME, 0.1 * TIME**2])
    markers = TimeTable(TIME, {f"tip_{i + 1}": marker_ref[:, i] for i in range(3)})
    state_ref = {"/jointset/pin_r/swing_r/value": 0.2 + 0.4 * np.cos(TIME), "/jointset/pin_l/swing_l/value": TIME / 3,
                 "/jointset/pin_r/swing_r/speed": -0.4 * np.sin(TIME)}
    table = TimeTable(TIME, state_ref)
    names = {k: v[0] for k, v in TWOLINK_STATES.items()}
    goals.control_effort(problem, weights={"forceset.act_l": 0.5}, name="effort")
    goals.control_effort(problem, exponent=3, weight=2.5, divide_by_duration=True, name="effort3")
    goals.track_markers(problem, markers, {"tip": tip}, weight=4.0, name="markers")
    goals.track_states(problem, table, {k: problem.variable(names[k], "test").symbol for k in state_ref},
                       weights={"/jointset/pin_l/swing_l/value": 3.0}, weight=0.7, scale_weights_with_range=True,
                       name="tracking")
    pairs = goals.mirror_pairs(["twolink.swing_r", "twolink.swing_r_speed"])
    goals.periodicity(problem, pairs, negate=["twolink.swing_r_speed"], mode="cost", weight=3.0, name="symmetry")
    goals.periodicity(problem, [("forceset.act_r", "forceset.act_l")], mode="cost", name="control_symmetry")
    mine, _, _ = colloc_terms(problem, *_twolink_columns())
    theirs = moco({"kind": "goals", "model": "twolink", "t0": T0, "tf": TF, "intervals": N, "trajectory": {
        "time": TIME.tolist(), "states": {k: v[1].tolist() for k, v in TWOLINK_STATES.items()},
        "controls": {k: v[1].tolist() for k, v in TWOLINK_CONTROLS.items()}}, "goals": [
        {"type": "control", "name": "effort", "weights": {"/forceset/act_l": 0.5}},
        {"type": "control", "name": "effort3", "exponent": 3, "weight": 2.5, "divide_by_duration": True},
        {"type": "marker_tracking", "name": "markers", "weight": 4.0, "reference": {"tip": marker_ref.tolist()}},
        {"type": "state_tracking", "name": "tracking", "weight": 0.7, "scale_weights_with_range": True,
         "reference": {k: v.tolist() for k, v in state_ref.items()}, "weights": {"/jointset/pin_l/swing_l/value": 3.0}},
        {"type": "periodicity", "name": "symmetry", "cost_mode": True, "weight": 3.0, "states": [
            ["/jointset/pin_r/swing_r/value", "/jointset/pin_l/swing_l/value", False],
            ["/jointset/pin_r/swing_r/speed", "/jointset/pin_l/swing_l/speed", True]]},
        {"type": "periodicity", "name": "control_symmetry", "cost_mode": True, "states": [],
         "controls": [["/forceset/act_r", "/forceset/act_l", False]]}]}, tmp_path)
    for path, (_, values) in TWOLINK_STATES.items():  # Moco evaluated the trajectory it was given
        np.testing.assert_allclose(theirs["states"][path], values, rtol=0, atol=1e-14)
    assert_terms(mine, theirs, ["effort", "effort3", "markers", "tracking", "symmetry", "control_symmetry"])


def test_quintic_references_match_moco_between_the_rows(tmp_path):
    """With ``method="quintic"`` a reference is the spline Moco fits (natural quintic, GCVSpline with zero error
    variance), so state and marker tracking agree with Moco's even when the table's rows are not grid times."""
    problem, tip = twolink()
    rows = np.linspace(T0 - 0.1, TF + 0.05, 13)
    state_ref = {"/jointset/pin_r/swing_r/value": 0.2 + 0.4 * np.cos(3 * rows), "/jointset/pin_l/swing_l/value": np.sin(rows)}
    marker_ref = np.column_stack([1.2 + 0.3 * np.sin(2 * rows), 0.8 * rows**2, 0.1 * np.cos(rows)])
    names = {k: v[0] for k, v in TWOLINK_STATES.items()}
    goals.track_states(problem, TimeTable(rows, state_ref), {k: problem.variable(names[k], "test").symbol for k in state_ref},
                       method="quintic", name="tracking")
    goals.track_markers(problem, TimeTable(rows, {f"tip_{i + 1}": marker_ref[:, i] for i in range(3)}), {"tip": tip},
                        method="quintic", name="markers")
    mine, _, _ = colloc_terms(problem, *_twolink_columns())
    theirs = moco({"kind": "goals", "model": "twolink", "t0": T0, "tf": TF, "intervals": N, "trajectory": {
        "time": TIME.tolist(), "states": {k: v[1].tolist() for k, v in TWOLINK_STATES.items()},
        "controls": {k: v[1].tolist() for k, v in TWOLINK_CONTROLS.items()}}, "goals": [
        {"type": "state_tracking", "name": "tracking", "reference_time": rows.tolist(),
         "reference": {k: v.tolist() for k, v in state_ref.items()}},
        {"type": "marker_tracking", "name": "markers", "reference_time": rows.tolist(),
         "reference": {"tip": marker_ref.tolist()}}]}, tmp_path)
    assert_terms(mine, theirs, ["tracking", "markers"])
    cubic, _, _ = colloc_terms(_cubic_copy(rows, state_ref), *_twolink_columns())
    assert abs(cubic["tracking"] / theirs["terms"]["tracking"] - 1) > 1e-6  # the cubic spline differs between rows


def test_tracked_speeds_match_moco_track(tmp_path):
    """MocoTrack with ``track_reference_position_derivatives``: positions and the derivatives of their splines,
    weights per column, the global weight, range scaling off (MocoTrack's default)."""
    problem, _ = twolink()
    rows = np.linspace(T0 - 0.1, TF + 0.05, 13)
    reference = {"/jointset/pin_r/swing_r/value": 0.2 + 0.4 * np.cos(3 * rows), "/jointset/pin_l/swing_l/value": np.sin(rows)}
    weights = {"/jointset/pin_l/swing_l/value": 2.0, "/jointset/pin_r/swing_r/speed": 0.3}
    names = {k: problem.variable(v[0], "test").symbol for k, v in TWOLINK_STATES.items()}
    goals.track_states(problem, TimeTable(rows, reference), {k: names[k] for k in reference},
                       speeds={k: names[goals.tracking.speed_label(k)] for k in reference}, weights=weights, weight=5.0,
                       method="quintic")
    mine, _, _ = colloc_terms(problem, *_twolink_columns())
    theirs = moco({"kind": "track", "model": "twolink", "t0": T0, "tf": TF, "intervals": N, "weight": 5.0,
                   "weights": weights, "reference_time": rows.tolist(), "reference": {k: v.tolist() for k, v in reference.items()},
                   "trajectory": {"time": TIME.tolist(), "states": {k: v[1].tolist() for k, v in TWOLINK_STATES.items()},
                                  "controls": {k: v[1].tolist() for k, v in TWOLINK_CONTROLS.items()}}}, tmp_path)
    assert_terms(mine, theirs, ["state_tracking"])


def _cubic_copy(rows, state_ref):
    problem, _ = twolink()
    names = {k: v[0] for k, v in TWOLINK_STATES.items()}
    goals.track_states(problem, TimeTable(rows, state_ref), {k: problem.variable(names[k], "test").symbol for k in state_ref},
                       name="tracking")
    return problem


def test_periodicity_rows_square_to_the_cost_mode():
    problem, _ = twolink()
    pairs = goals.mirror_pairs(["twolink.swing_r", "twolink.swing_l_speed"])
    assert pairs == [("twolink.swing_r", "twolink.swing_l"), ("twolink.swing_l_speed", "twolink.swing_r_speed")]
    goals.periodicity(problem, pairs, negate=["twolink.swing_r"], name="symmetry")
    goals.periodicity(problem, pairs, negate=["twolink.swing_r"], mode="cost", weight=2.0, name="symmetry_cost")
    mine, nlp, w0 = colloc_terms(problem, *_twolink_columns())
    rows = boundary_rows(nlp, w0, "symmetry.")
    q1, q2 = TWOLINK_STATES["/jointset/pin_r/swing_r/value"][1], TWOLINK_STATES["/jointset/pin_l/swing_l/value"][1]
    v1, v2 = TWOLINK_STATES["/jointset/pin_r/swing_r/speed"][1], TWOLINK_STATES["/jointset/pin_l/swing_l/speed"][1]
    np.testing.assert_allclose(rows, [-q1[0] - q2[-1], v2[0] - v1[-1]], rtol=1e-14)
    assert mine["symmetry_cost"] == pytest.approx(2.0 * np.sum(rows**2), rel=1e-14)


# -- the sliding mass: average speed, effort over displacement ----------------------------------------
def slider(free_time=False):
    body = cl.Multibody("slider", coordinates=["position"])
    x, = body.coordinates
    v, = body.speeds
    body.kinetic_energy = 0.5 * 2.0 * v**2
    act = cl.Component("forceset")
    u = act.control("actuator")
    body.apply_generalized_force("forceset", ca.vertcat(u))
    com = ca.vertcat(x, 0, 0)
    norm = goals.Normalization("normalization", center_of_mass=com)
    tf = (T0 + 0.5, TF + 0.5) if free_time else TF
    return cl.Problem([body, act, norm], t0=T0, tf=tf, name="slider"), com, norm


def test_slider_goals_match_moco(tmp_path):
    problem, com, norm = slider()
    x, v, u = 0.1 + 0.9 * TIME**2, 1.8 * TIME, 3.0 - 2.0 * TIME
    goals.average_speed(problem, com, 1.1, mode="cost", weight=1.0, name="speed")
    goals.control_effort(problem, exponent=4, weight=10.0, divide_by_displacement=True, normalization=norm, name="effort")
    goals.control_effort(problem, weight=0.3, divide_by_displacement=True, divide_by_duration=True, normalization=norm,
                         name="effort_both")
    shift = abs(x[-1] - x[0])
    mine, nlp, w0 = colloc_terms(problem, {"slider.position": x, "slider.position_speed": v, "forceset.actuator": u},
                                 {"slider.position": "state", "slider.position_speed": "state", "forceset.actuator": "control"},
                                 {"normalization.displacement": shift, "normalization.duration": TF - T0})
    np.testing.assert_allclose(boundary_rows(nlp, w0, "normalization."), 0.0, atol=1e-14)
    theirs = moco({"kind": "goals", "model": "slider", "t0": T0, "tf": TF, "intervals": N, "trajectory": {
        "time": TIME.tolist(), "states": {"/jointset/slider/position/value": x.tolist(), "/jointset/slider/position/speed": v.tolist()},
        "controls": {"/forceset/actuator": u.tolist()}}, "goals": [
        {"type": "average_speed", "name": "speed", "speed": 1.1, "cost_mode": True},
        {"type": "control", "name": "effort", "exponent": 4, "weight": 10.0, "divide_by_displacement": True},
        {"type": "control", "name": "effort_both", "weight": 0.3, "divide_by_displacement": True,
         "divide_by_duration": True}]}, tmp_path)
    assert_terms(mine, theirs, ["speed", "effort", "effort_both"])
    assert mine["speed"] == pytest.approx((1.1 - shift / (TF - T0)) ** 2, rel=1e-14)


# -- one DeGroote–Fregly muscle: initial activation, initial velocity equilibrium, metabolics -----------
MUSCLE = dict(max_isometric_force=500.0, optimal_fiber_length=0.10, tendon_slack_length=0.05,
              pennation_angle_at_optimal=0.1, max_contraction_velocity=10.0)
MASS = 2.0


def muscle_problem():
    body = cl.Multibody("slider", coordinates=["length"])
    x, = body.coordinates
    v, = body.speeds
    body.kinetic_energy = 0.5 * MASS * v**2
    m = cl.DeGrooteFregly2016Muscle("muscle", body=body, length=x, tendon_compliance="explicit", **MUSCLE)
    return cl.Problem([body, m], t0=T0, tf=TF, name="muscle"), m


def _muscle_trajectory():
    return {"slider.length": 0.148 + 0.004 * np.sin(3 * TIME), "slider.length_speed": 0.012 * np.cos(3 * TIME),
            "muscle.activation": 0.45 + 0.1 * np.sin(2 * TIME), "muscle.normalized_tendon_force": 0.3 + 0.05 * TIME,
            "muscle.excitation": 0.5 + 0.3 * np.cos(5 * TIME)}


def test_muscle_goals_match_moco(tmp_path):
    problem, m = muscle_problem()
    goals.initial_activation(problem, mode="cost", weight=2.0, name="initial_activation")
    goals.initial_velocity_equilibrium(problem, mode="cost", weight=1e-4, name="velocity_equilibrium")
    goals.metabolic_cost(problem, [m], body_mass=MASS, weight=0.1, name="metabolics")
    cols = _muscle_trajectory()
    kinds = {k: "control" if k == "muscle.excitation" else "state" for k in cols}
    mine, nlp, w0 = colloc_terms(problem, cols, kinds)
    # Moco's muscle is implicit (see the oracle); its tendon-force derivative is colloc's explicit rate
    rate = ca.Function("rate", [problem.model.vector("state"), problem.model.vector("control")], [m._explicit_rate()[0]])
    states = np.array([cols[v.name] for v in problem.model.states])
    tendon_rate = np.array(rate.map(TIME.size)(states, cols["muscle.excitation"].reshape(1, -1))).ravel()
    paths = {"slider.length": "/jointset/slider/length/value", "slider.length_speed": "/jointset/slider/length/speed",
             "muscle.activation": "/forceset/muscle/activation",
             "muscle.normalized_tendon_force": "/forceset/muscle/normalized_tendon_force"}
    theirs = moco({"kind": "goals", "model": "muscle", "muscle": MUSCLE, "metabolics": True, "t0": T0, "tf": TF,
                   "intervals": N, "trajectory": {
                       "time": TIME.tolist(), "states": {paths[k]: cols[k].tolist() for k in paths},
                       "controls": {"/forceset/muscle": cols["muscle.excitation"].tolist()},
                       "derivatives": {"/forceset/muscle/implicitderiv_normalized_tendon_force": tendon_rate.tolist()}},
                   "goals": [
                       {"type": "initial_activation", "name": "initial_activation", "cost_mode": True, "weight": 2.0},
                       {"type": "initial_velocity_equilibrium", "name": "velocity_equilibrium", "cost_mode": True,
                        "weight": 1e-4},
                       {"type": "output", "name": "metabolics", "output": "/metabolics|total_metabolic_rate",
                        "weight": 0.1}]}, tmp_path)
    assert mine["initial_activation"] == pytest.approx(2.0 * (cols["muscle.excitation"][0] - cols["muscle.activation"][0]) ** 2)
    assert mine["velocity_equilibrium"] > 1e-6  # the trajectory is not in equilibrium: the check has teeth
    assert_terms(mine, theirs, ["initial_activation", "velocity_equilibrium", "metabolics"])


# -- a foot with two smooth contact spheres: contact-force tracking --------------------------------
def test_contact_tracking_matches_moco(tmp_path):
    """MocoContactTrackingGoal on a planar foot with heel and toe SmoothSphereHalfSpaceForces.  colloc has no
    smooth-contact model here, so its forces are controls set to the sphere forces OpenSim computes on the
    same states (returned by the oracle): the check covers the goal (sum over a group, reference spline,
    normalisation, projection), not the contact model."""
    # the foot's weight m |g| with OpenSim's default gravity, Moco's denominator of this goal
    states = {"/jointset/planar/rz/value": 0.1 * np.sin(2 * TIME), "/jointset/planar/rz/speed": 0.2 * np.cos(2 * TIME),
              "/jointset/planar/tx/value": 0.3 * TIME, "/jointset/planar/tx/speed": 0 * TIME + 0.3,
              "/jointset/planar/ty/value": 0.072 + 0.01 * np.cos(3 * TIME), "/jointset/planar/ty/speed": -0.03 * np.sin(3 * TIME)}
    reference = np.column_stack([40 * np.sin(TIME), 300 + 200 * TIME, 5 * np.cos(TIME)])
    common = {"type": "contact_tracking", "reference": reference.tolist(),
              "forces": ["/forceset/contact_heel", "/forceset/contact_toe"]}
    theirs = moco({"kind": "goals", "model": "foot", "t0": T0, "tf": TF, "intervals": N,
                   "trajectory": {"time": TIME.tolist(), "states": {k: v.tolist() for k, v in states.items()}, "controls": {}},
                   "goals": [dict(common, name="grf_plane", weight=0.01, projection="plane", projection_vector=[0, 0, 2]),
                             dict(common, name="grf_vertical", weight=3.0, projection="vector", projection_vector=[0, 1, 0],
                                  normalize_tracking_error=True),
                             dict(common, name="grf", weight=1e-3)]}, tmp_path)
    heel, toe = (np.array(theirs["forces"][f"/forceset/contact_{n}"]) for n in ("heel", "toe"))
    assert np.max(np.abs(heel[:, 1])) > 10.0 and np.max(np.abs(toe[:, 1])) > 10.0  # both spheres touch the floor
    feet = cl.Component("feet")
    forces = {n: ca.vertcat(*[feet.control(f"{n}_{a}") for a in "xyz"]) for n in ("heel", "toe")}
    x = feet.state("x")
    feet.derivative(x, 0)
    problem = cl.Problem([feet], t0=T0, tf=TF, name="foot")
    loads = TimeTable(TIME, {f"ground_force_v{a}": reference[:, k] for k, a in enumerate("xyz")})
    group = [([forces["heel"], forces["toe"]], "ground_force_v")]
    goals.track_contact(problem, loads, group, 2.0 * 9.80665, weight=0.01, projection="plane", projection_vector=(0, 0, 2), name="grf_plane")
    goals.track_contact(problem, loads, group, 2.0 * 9.80665, weight=3.0, projection="vector", projection_vector=(0, 1, 0),
                        normalize_tracking_error=True, name="grf_vertical")
    goals.track_contact(problem, loads, group, 2.0 * 9.80665, weight=1e-3, name="grf")
    cols = {"feet.x": 0 * TIME} | {f"feet.{n}_{a}": values[:, k] for n, values in (("heel", heel), ("toe", toe))
                                   for k, a in enumerate("xyz")}
    mine, _, _ = colloc_terms(problem, cols, {k: "state" if k == "feet.x" else "control" for k in cols})
    assert_terms(mine, theirs, ["grf_plane", "grf_vertical", "grf"])
