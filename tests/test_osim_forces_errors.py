"""Bad input to the force elements of an ``.osim`` file: one sentence naming the element, before anything
is built; and the pieces that need no oracle (polynomial term order, conditional path points)."""
from __future__ import annotations

import pathlib

import casadi as ca
import pytest

from colloc.errors import ModelError
from colloc.opensim import load
from colloc.opensim.multivariate import exponents
from colloc.opensim.muscle_parameters import moco_name
from colloc.opensim.paths import path_length

MODELS = pathlib.Path(__file__).resolve().parent.parent / "models" / "opensim"


def _variant(tmp_path, old, new, source="2D_gait.osim"):
    text = (MODELS / source).read_text()
    assert old in text
    path = tmp_path / "variant.osim"
    path.write_text(text.replace(old, new, 1))
    return path


WRAP = """<PathWrapSet>
                        <objects>
                            <PathWrap name="pw1">
                                <wrap_object>femur_cyl</wrap_object>
                            </PathWrap>
                        </objects>"""


@pytest.mark.parametrize("case, kwargs, match", [
    ("thelen-refused", dict(muscles="degroote-only"),
     r"Thelen2003Muscle `bifemlh_r` \(line \d+ of .*leg6dof9musc.osim`\) is not a DeGrooteFregly2016Muscle; muscles='degroote' replaces"),
    ("unknown-option", dict(muscles="thelen"), r"Unknown muscles option 'thelen'"),
])
def test_muscle_options(case, kwargs, match):
    with pytest.raises(ModelError, match=match):
        load(MODELS / "leg6dof9musc.osim", **kwargs)


@pytest.mark.parametrize("old, new, match", [
    ("<PathWrapSet>\n                        <objects />", WRAP,
     r"Muscle `hamstrings_r` wraps over `femur_cyl`.*PolynomialPathFitter.*\(line \d+"),
    ("<dissipation>2</dissipation>", "<dissipation>0</dissipation>",
     r"SmoothSphereHalfSpaceForce `contactHeel_r` has dissipation 0.*\(line \d+"),
    ("<socket_sphere>/contactgeometryset/heel_r</socket_sphere>", "<socket_sphere>/contactgeometryset/heel</socket_sphere>",
     r"SmoothSphereHalfSpaceForce `contactHeel_r` names sphere '/contactgeometryset/heel', which is not a ContactSphere"),
    ("<active_force_width_scale>1.0</active_force_width_scale>", "<active_force_width_scale>0.5</active_force_width_scale>",
     r"DeGrooteFregly2016Muscle `hamstrings_r` has active_force_width_scale 0.5; OpenSim requires ≥ 1"),
    ("<fiber_damping>0.01</fiber_damping>", "<fiber_damping>lots</fiber_damping>",
     r"`fiber_damping` of DeGrooteFregly2016Muscle `hamstrings_r` must be a number; got 'lots'"),
    ('<PathPoint name="bifemlh_r-P2">', '<MusclePoint name="bifemlh_r-P2">',
     r"Path point `bifemlh_r-P2` of muscle `hamstrings_r` is a MusclePoint"),
])
def test_bad_force_elements_are_refused_before_building(tmp_path, old, new, match):
    if new.startswith("<MusclePoint"):
        text = (MODELS / "2D_gait.osim").read_text()
        start = text.index(old)
        end = text.index("</PathPoint>", start)
        path = tmp_path / "variant.osim"
        path.write_text(text[:start] + new + text[start + len(old):end] + "</MusclePoint>" + text[end + len("</PathPoint>"):])
    else:
        path = _variant(tmp_path, old, new)
    with pytest.raises(ModelError, match=match):
        load(path)


def test_polynomial_terms_in_opensims_order():
    """MultivariatePolynomial::generateCombinations: first variable outermost (dimension 2, order 2)."""
    assert exponents(2, 2) == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (2, 0)]
    assert len(exponents(3, 4)) == 35  # C(3 + 4, 4)


def test_conditional_points_skip_inactive_points_whatever_their_place():
    """ConditionalPathPoint semantics: an inactive point is left out, the first active one starts the path."""
    s = ca.SX.sym("s")
    P = [ca.DM([0, 0, 0]), ca.DM([1, 0, 0]), ca.DM([1, 1, 0]), ca.DM([2, 1, 0])]
    on = s > 0
    cases = {  # activity pattern -> (length with s = 1, with s = −1)
        (on, True, True, True): (3.0, 1.0 + 1.0),
        (True, on, True, True): (3.0, 2 ** 0.5 + 1.0),
        (True, True, True, on): (3.0, 2.0),
        (on, on, True, True): (3.0, 1.0),
    }
    for pattern, (inside, outside) in cases.items():
        length = ca.Function("l", [s], [path_length(list(zip(pattern, P)))])
        assert float(length(1.0)) == pytest.approx(inside, abs=1e-15)
        assert float(length(-1.0)) == pytest.approx(outside, abs=1e-15)


def test_moco_names_of_muscle_variables():
    assert moco_name("soleus_r.activation") == "/forceset/soleus_r/activation"
    assert moco_name("soleus_r.normalized_tendon_force") == "/forceset/soleus_r/normalized_tendon_force"
    assert moco_name("soleus_r.excitation") == "/forceset/soleus_r"


def test_replaced_muscles_keep_control_bounds_and_states():
    """leg6dof9musc (file version 20303): Thelen muscles with min_control 0.01 become compliant DGF muscles."""
    model = load(MODELS / "leg6dof9musc.osim")
    muscle = model.components[1]
    assert muscle.osim["source"] == "Thelen2003Muscle"
    assert muscle.variable(muscle.excitation).bounds == (0.01, 1.0)
    assert muscle.variable(muscle.activation).bounds == (0.01, 1.0)
    assert muscle.normalized_tendon_force is not None and muscle.tendon_compliance == "explicit"


def test_muscle_variables_carry_moco_names():
    """2D_gait keeps its muscles among the model's components (Moco: ``/hamstrings_r/activation``);
    leg6dof9musc in its ForceSet (``/forceset/bifemlh_r/activation``)."""
    names = load(MODELS / "2D_gait.osim").skeleton.opensim_names
    assert names["hamstrings_r.activation"] == "/hamstrings_r/activation"
    assert names["hamstrings_r.excitation"] == "/hamstrings_r"
    names = load(MODELS / "leg6dof9musc.osim").skeleton.opensim_names
    assert names["bifemlh_r.normalized_tendon_force"] == "/forceset/bifemlh_r/normalized_tendon_force"
    assert names["bifemlh_r.excitation"] == "/forceset/bifemlh_r"
