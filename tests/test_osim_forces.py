"""Muscles, muscle paths and contact forces of ``.osim`` models against OpenSim 4.6 itself.

OpenSim is the oracle (``tests/oracle/osim_forces.py``, run in a subprocess because its wheel carries its
own libcasadi): at 20 random states of each model it records every muscle–tendon length, lengthening speed,
moment arm about every coordinate (``computeMomentArm``), every muscle's tendon force and state
derivatives at a random activation, tendon state and excitation (after Moco's
``DeGrooteFregly2016Muscle::replaceMuscles``), every contact force's ``getRecordValues`` and every muscle's
properties after the replacement.  colloc's expressions must equal them to 1e-9 (relative where larger
than 1).
"""
from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys

import casadi as ca
import numpy as np
import pytest

from colloc.opensim import load
from colloc.opensim.muscle_parameters import component_name

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODELS = ROOT / "models" / "opensim"
ORACLE = pathlib.Path(__file__).resolve().parent / "oracle" / "osim_forces.py"
TOL = 1e-9
STATES = 20

needs_opensim = pytest.mark.skipif(importlib.util.find_spec("opensim") is None, reason="needs the opensim package")


def run_oracle(model_file, out, states=STATES, seed=0):
    """OpenSim's numbers for ``model_file`` (one subprocess for all states)."""
    done = subprocess.run([sys.executable, str(ORACLE), str(model_file), str(out), "--states", str(states),
                           "--seed", str(seed)], capture_output=True, text=True, timeout=600,
                          cwd=pathlib.Path(out).parent)  # OpenSim writes opensim.log into its working directory
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(np.load(out))


def close(actual, expected, what):
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    scale = np.maximum(1.0, np.abs(expected))
    err = np.abs(actual - expected) / scale
    err[np.isnan(actual) & np.isnan(expected)] = 0.0  # a rate neither has (no activation dynamics)
    worst = np.unravel_index(np.nanargmax(err), err.shape) if err.size else ()
    assert np.all(err <= TOL), f"{what}: worst relative error {err[worst]:.3g} at {worst}: {actual[worst]!r} vs {expected[worst]!r}"


class Colloc:
    """The loaded model's expressions as one function of (q, v, activations, tendon states, excitations)."""

    def __init__(self, model_file):
        self.model = load(model_file)
        sk = self.model.skeleton
        self.skeleton = sk
        self.muscles = {c.name: c for c in self.model.components[1:]}

    def function(self, names, coordinate_order):
        sk = self.skeleton
        muscles = [self.muscles[component_name(n)] for n in names]
        a = ca.vertcat(*[m.activation if m.activation is not m.excitation else ca.SX.sym("unused") for m in muscles])
        e = ca.vertcat(*[m.excitation for m in muscles])
        f = ca.vertcat(*[m.normalized_tendon_force if m.normalized_tendon_force is not None else ca.SX.sym("unused") for m in muscles])
        fdot = ca.vertcat(*[m.dot(m.normalized_tendon_force) if m.normalized_tendon_force is not None else ca.SX.sym("unused") for m in muscles])
        order = [sk.speeds.index(f"{c}_speed") for c in coordinate_order]
        arms = ca.horzcat(*[m.moment_arms[order] for m in muscles]).T  # (m, nq) in OpenSim's order
        outputs = dict(length=ca.vertcat(*[m.length for m in muscles]),
                       speed=ca.vertcat(*[m.lengthening_speed for m in muscles]),
                       arms=arms, tendon_force=ca.vertcat(*[m.tension for m in muscles]),
                       fiber_length=ca.vertcat(*[m.fiber_length for m in muscles]),
                       activation_dot=ca.vertcat(*[m._rows[m.variable(m.activation).name][1]
                                                   if m.activation is not m.excitation else ca.SX(np.nan) for m in muscles]),
                       tendon_row=ca.vertcat(*[_tendon_row(m) for m in muscles]))
        contacts = getattr(sk, "contacts", {})
        outputs["records"] = ca.horzcat(*[c.record for c in contacts.values()]).T if contacts else ca.SX(0, 12)
        inputs = [sk.q, sk.v, a, f, e, fdot]
        return ca.Function("osim", inputs, list(outputs.values()), ["q", "v", "a", "f", "e", "fdot"], list(outputs)), list(contacts)


def _tendon_row(m):
    """The tendon state's row: its rate (explicit) or the equilibrium residual in its rate (implicit)."""
    if m.normalized_tendon_force is None:
        return ca.SX(0.0)
    return m._rows[m.variable(m.normalized_tendon_force).name][1]


def evaluate(colloc, data):
    names = [str(n) for n in data["muscles"]]
    coords = [str(c) for c in data["coordinates"]]
    fn, contacts = colloc.function(names, coords)
    sk = colloc.skeleton
    to_colloc = [coords.index(c) for c in sk.coordinates]
    rows = []
    for k in range(data["q"].shape[0]):
        q, v = data["q"][k, to_colloc], data["u"][k, to_colloc]
        f = np.nan_to_num(data["tendon_state"][k], nan=0.5)
        args = dict(q=q, v=v, a=data["activation"][k], f=f, e=data["excitation"][k], fdot=np.zeros(len(names)))
        out = {key: np.array(val).squeeze(-1) if val.shape[1] == 1 else np.array(val) for key, val in fn.call(args).items()}
        out["fdot"] = _tendon_rate(fn, args, colloc, names)
        rows.append(out)
    return {key: np.array([r[key] for r in rows]) for key in rows[0]}, contacts


def _tendon_rate(fn, args, colloc, names):
    """dF̃_T/dt: the explicit row, or the root in the rate of the implicit equilibrium (bracketed secant)."""
    explicit = np.array([colloc.muscles[component_name(n)]._rows[colloc.muscles[component_name(n)].variable(
        colloc.muscles[component_name(n)].normalized_tendon_force).name][0] == "explicit"
        if colloc.muscles[component_name(n)].normalized_tendon_force is not None else True for n in names])
    rate = np.array(fn.call(args)["tendon_row"]).ravel()
    if explicit.all():
        return rate
    fd = ca.SX.sym("fd", len(names))
    g = ca.Function("g", [fd], [fn(q=args["q"], v=args["v"], a=args["a"], f=args["f"], e=args["e"], fdot=fd)["tendon_row"]])
    solve = ca.rootfinder("solve", "newton", ca.Function("r", [fd], [ca.if_else(ca.DM(explicit), fd - rate, g(fd))]),
                          {"abstol": 1e-14, "max_iter": 100, "error_on_fail": False})
    return np.array(solve(np.where(explicit, rate, 0.0))).ravel()


MODEL_FILES = {"2D_gait": "2D_gait.osim", "leg6dof9musc": "leg6dof9musc.osim",
               "gait10dof18musc": "gait10dof18musc_subject01.osim",
               "2D_gait_fitted_paths": "2D_gait_fitted_paths.osim",
               "Rajagopal_fitted_paths": "Rajagopal2015_right_leg_fitted_paths.osim"}


#: 2D_gait with the DeGroote–Fregly properties its muscles leave at their defaults changed:
#: (muscle, property, new value).  iliopsoas_r gets an explicit compliant tendon with its fiber damping.
VARIANT = (("hamstrings_r", "ignore_activation_dynamics", "true"), ("bifemsh_r", "active_force_width_scale", "1.5"),
           ("glut_max_r", "ignore_passive_fiber_force", "true"), ("iliopsoas_r", "ignore_tendon_compliance", "false"),
           ("rect_fem_r", "tendon_strain_at_one_norm_force", "0.07"))


def variant_file(folder):
    text = (MODELS / "2D_gait.osim").read_text()
    for muscle, key, value in VARIANT:
        start = text.index(f'<DeGrooteFregly2016Muscle name="{muscle}">')
        a = text.index(f"<{key}>", start)
        b = text.index(f"</{key}>", a)
        text = text[:a] + f"<{key}>{value}" + text[b:]
    path = folder / "2D_gait_variant.osim"
    path.write_text(text)
    return path


@pytest.fixture(scope="module", params=[
    "2D_gait", "leg6dof9musc", "gait10dof18musc", "2D_gait_fitted_paths", "2D_gait_variant", "Rajagopal_fitted_paths",
    pytest.param("gait2354", marks=pytest.mark.slow)])
def case(request, tmp_path_factory):
    if importlib.util.find_spec("opensim") is None:
        pytest.skip("needs the opensim package")
    if request.param == "2D_gait_variant":
        model_file = variant_file(tmp_path_factory.mktemp("variant"))
    else:
        model_file = MODELS / MODEL_FILES.get(request.param, "gait2354_simbody.osim")
    data = run_oracle(model_file, tmp_path_factory.mktemp("oracle") / f"{request.param}.npz")
    colloc = Colloc(model_file)
    values, contacts = evaluate(colloc, data)
    return request.param, colloc, data, values, contacts


def test_muscle_properties_match_moco_replacement(case):
    _, colloc, data, _, _ = case
    for j, name in enumerate(data["muscles"]):
        m = colloc.muscles[component_name(str(name))]
        for key in [k[6:] for k in data if k.startswith("param_")]:
            assert m.osim[key] == pytest.approx(data["param_" + key][j], rel=1e-15, abs=0), f"{name}.{key}"
        assert m.osim["tendon_compliance_dynamics_mode"] == str(data["compliance_mode"][j])


def test_lengths_speeds_and_moment_arms(case):
    name, colloc, data, values, _ = case
    close(values["length"], data["length"], f"{name}: muscle–tendon lengths")
    close(values["speed"], data["speed"], f"{name}: lengthening speeds")
    # OpenSim's MomentArmSolver for a GeometryPath: the generalized force of unit tension on the
    # constraint-coupled speeds; a FunctionBasedPath returns its own moment arm about the coordinate
    coupled = np.einsum("kin,kjn->kji", data["coupling"], values["arms"])
    geometric = np.array([bool(colloc.muscles[component_name(str(n))]._given_path.points) for n in data["muscles"]])
    arms = np.where(geometric[None, :, None], coupled, values["arms"])
    close(arms, data["moment_arm"], f"{name}: moment arms")


def test_tendon_forces_and_state_rates(case):
    name, _, data, values, _ = case
    close(values["tendon_force"], data["tendon_force"], f"{name}: tendon forces")
    # OpenSim's fiber length is √(l_along² + w²) ≥ 0; colloc's is the signed l_along when w = 0 (equal at
    # every physical state; a random tendon state can make the tendon longer than the whole unit)
    close(np.abs(values["fiber_length"]), data["fiber_length"], f"{name}: fiber lengths")
    close(values["activation_dot"], data["activation_dot"], f"{name}: activation rates")
    compliant = ~np.isnan(data["tendon_state_dot"])
    # compared where the fiber is longer than zero along the tendon (a random tendon state may stretch the
    # tendon beyond the whole unit, where the two differ by the sign of cos α) and the rate is finite
    physical = values["fiber_length"] > 0
    finite = compliant & physical & np.isfinite(data["tendon_state_dot"]) & (np.abs(data["tendon_state_dot"]) < 1e6)
    if compliant.any():
        assert finite.sum() > compliant.sum() // 2, "too few states with a finite tendon rate to compare"
        close(values["fdot"][finite], data["tendon_state_dot"][finite], f"{name}: tendon force rates")


def test_contact_forces(case):
    name, _, data, values, contacts = case
    assert list(contacts) == [str(f) for f in data["forces"]]
    if contacts:
        assert np.abs(data["records"]).max() > 1.0, "no state touches the floor"
        close(values["records"], data["records"], f"{name}: contact record values")


SPRINGS = """
            <CoordinateLimitForce name="knee_limit_r">
                <coordinate>knee_angle_r</coordinate>
                <upper_stiffness>20</upper_stiffness>
                <upper_limit>-10</upper_limit>
                <lower_stiffness>15</lower_stiffness>
                <lower_limit>-90</lower_limit>
                <damping>0.05</damping>
                <transition>5</transition>
            </CoordinateLimitForce>
            <CoordinateLimitForce name="height_limit">
                <coordinate>pelvis_ty</coordinate>
                <upper_stiffness>300</upper_stiffness>
                <upper_limit>0.9</upper_limit>
                <lower_stiffness>200</lower_stiffness>
                <lower_limit>0.7</lower_limit>
                <damping>3</damping>
                <transition>0.3</transition>
            </CoordinateLimitForce>
            <SpringGeneralizedForce name="lumbar_spring">
                <coordinate>lumbar</coordinate>
                <stiffness>40</stiffness>
                <rest_length>0.1</rest_length>
                <viscosity>2</viscosity>
            </SpringGeneralizedForce>
"""


@needs_opensim
def test_coordinate_springs_match_opensim(tmp_path):
    """CoordinateLimitForce (rotational limits in degrees, a translational one in metres) and
    SpringGeneralizedForce added to 2D_gait: the scalar force of each (its first record value) and the
    generalized force it applies."""
    text = (MODELS / "2D_gait.osim").read_text()
    model_file = tmp_path / "2D_gait_springs.osim"
    model_file.write_text(text.replace('<CoordinateActuator name="lumbarAct">', SPRINGS + '<CoordinateActuator name="lumbarAct">', 1))
    data = run_oracle(model_file, tmp_path / "springs.npz")
    model = load(model_file, forces=["knee_limit_r", "height_limit", "lumbar_spring"])
    sk = model.skeleton
    names = ["knee_limit_r", "height_limit", "lumbar_spring"]
    rows = [[str(f) for f in data["forces"]].index(n) for n in names]
    fn = ca.Function("springs", [sk.q, sk.v], [ca.vertcat(*[sk.spring_forces[n] for n in names])])
    coords = [str(c) for c in data["coordinates"]]
    to_colloc = [coords.index(c) for c in sk.coordinates]
    forces = np.array([np.array(fn(data["q"][k, to_colloc], data["u"][k, to_colloc])).ravel() for k in range(STATES)])
    assert (np.abs(forces[:, :2]) > 1e-3).sum(axis=0).min() >= 3, "too few states beyond the limits"
    close(forces, data["records"][:, rows, 0], "coordinate spring forces")


@needs_opensim
@pytest.mark.parametrize("stem", ["2D_gait", "leg6dof9musc"])
def test_sto_with_muscle_states_is_read_by_opensim(tmp_path, stem):
    """A trajectory of every variable of the model, muscles included, written under Moco's names: OpenSim
    turns its states into a StatesTrajectory of the model after Moco's muscle replacement (which refuses a
    column that is not one of the model's states) and Moco reads every muscle's control."""
    import colloc.opensim as co
    from colloc import Trajectory

    model_file = MODELS / MODEL_FILES[stem]
    model = co.load(model_file)
    t = np.linspace(0.0, 0.2, 3)
    variables = [v for c in model.components for v in c.variables if v.kind in ("state", "control")]
    columns = {v.name: np.full(t.size, 0.1) for v in variables}
    traj = Trajectory(t, columns, {v.name: v.kind for v in variables})
    sto = co.write_sto(traj, model, tmp_path / "all.sto")
    out = tmp_path / "read.npz"
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "oracle" / "osim_sto.py"), str(model_file), str(sto), str(out),
                           "replace-muscles"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    ref = np.load(out)
    names = model.skeleton.opensim_names
    muscles = model.components[1:]
    expected_states = {names[v.name] for v in variables if v.kind == "state"}
    assert set(ref["state_names"]) == expected_states
    assert {names[m.variable(m.activation).name] for m in muscles} <= set(ref["state_names"])
    assert {names[m.variable(m.excitation).name] for m in muscles} <= set(ref["control_names"])
    controls = {names[v.name] for v in variables if v.kind == "control"}
    assert controls == set(ref["control_names"]) and controls <= set(ref["actuators"])  # Moco's names: actuator paths
