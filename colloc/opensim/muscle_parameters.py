"""OpenSim muscles as colloc DeGroote–Fregly 2016 muscles.

:func:`muscle_parameters` reads one muscle element of an ``.osim`` file into the
properties of OpenSim's ``DeGrooteFregly2016Muscle``; a property the file does not
set takes OpenSim's default *of the element's own class* (a Thelen muscle without
``activation_time_constant`` has 0.015 s, its default ``min_control`` is its
``minimum_activation``).  Other muscle types are replaced the way Moco's
``ModOpReplaceMusclesWithDeGrooteFregly2016`` does it
(``DeGrooteFregly2016Muscle::replaceMuscles``, OpenSim 4.6):

=========================================  ===========================================================
DeGroote–Fregly property                   from ``Thelen2003Muscle`` / ``Millard2012EquilibriumMuscle``
=========================================  ===========================================================
max_isometric_force, optimal_fiber_length, the same ``Muscle`` properties
tendon_slack_length,
pennation_angle_at_optimal,
max_contraction_velocity,
ignore_tendon_compliance,
ignore_activation_dynamics,
min_control, max_control, appliesForce,
path
activation_time_constant,                  the same properties
deactivation_time_constant,
default_activation
fiber_damping                              0 / ``fiber_damping`` (Millard sets values below 0.001 to 0)
passive_fiber_strain_at_one_norm_force     ``FmaxMuscleStrain`` /
                                           ``FiberForceLengthCurve/strain_at_one_norm_force``
tendon_strain_at_one_norm_force            ``FmaxTendonStrain`` /
                                           ``TendonForceLengthCurve/strain_at_one_norm_force``
everything else                            DeGroote–Fregly defaults (width scale 1, passive force on,
                                           tendon dynamics 'explicit', activation smoothing 0.1)
=========================================  ===========================================================

Moco refuses any other ``Muscle`` subclass (``allowUnsupportedMuscles=false``); so does
this module.  ``muscles="degroote-only"`` refuses every muscle that is not already a
DeGroote–Fregly muscle.

Files of version 20301 or older name ``pennation_angle_at_optimal`` ``pennation_angle``.  Files older
than version 30513 have their ``min_control`` of 0 and ``max_control`` of 1
dropped on reading, as OpenSim's ``Muscle::updateFromXMLNode`` does (those values were
then written by mistake), so that the class default applies.
"""
from __future__ import annotations

import math
import re

from ..errors import ModelError
from .xmlvalues import flag, number, text

DGF = "DeGrooteFregly2016Muscle"
REPLACEABLE = ("Thelen2003Muscle", "Millard2012EquilibriumMuscle")
#: Every ``Muscle`` subclass of OpenSim 4.6, so that an unsupported one is named as a muscle.
OTHER_MUSCLES = ("Thelen2003Muscle_Deprecated", "RigidTendonMuscle", "Schutte1993Muscle_Deprecated",
                 "Delp1990Muscle_Deprecated", "McKibbenActuator", "Millard2012AccelerationMuscle",
                 "VandenBogert2011Muscle", "ActivationFiberLengthMuscle")
MUSCLE_OPTIONS = ("degroote", "degroote-only")

#: ``Muscle`` base-class defaults (``Muscle::constructProperties``).
MUSCLE_DEFAULTS = dict(max_isometric_force=1000.0, optimal_fiber_length=0.1, tendon_slack_length=0.2,
                       pennation_angle_at_optimal=0.0, max_contraction_velocity=10.0,
                       ignore_tendon_compliance=False, ignore_activation_dynamics=False,
                       min_control=0.0, max_control=1.0)
#: ``DeGrooteFregly2016Muscle::constructProperties``.
DGF_DEFAULTS = dict(activation_time_constant=0.015, deactivation_time_constant=0.060, default_activation=0.5,
                    default_normalized_tendon_force=0.5, active_force_width_scale=1.0, fiber_damping=0.0,
                    passive_fiber_strain_at_one_norm_force=0.6, tendon_strain_at_one_norm_force=0.049,
                    ignore_passive_fiber_force=False, tendon_compliance_dynamics_mode="explicit",
                    activation_dynamics_smoothing=0.1)
THELEN_DEFAULTS = dict(activation_time_constant=0.015, deactivation_time_constant=0.050, default_activation=0.05,
                       FmaxMuscleStrain=0.6, FmaxTendonStrain=0.04, minimum_activation=0.01)
MILLARD_DEFAULTS = dict(activation_time_constant=0.010, deactivation_time_constant=0.040, default_activation=0.05,
                        fiber_damping=0.1, minimum_activation=0.01, fiber_strain=0.7, tendon_strain=0.049)
MILLARD_MIN_DAMPING = 0.001  # Millard2012EquilibriumMuscle.cpp: MIN_NONZERO_DAMPING_COEFFICIENT
BOOLEANS = ("ignore_tendon_compliance", "ignore_activation_dynamics", "ignore_passive_fiber_force")


def is_muscle(tag) -> bool:
    """Whether an element tag names an OpenSim ``Muscle`` subclass."""
    return tag in (DGF, *REPLACEABLE, *OTHER_MUSCLES)


def applies_force(element) -> bool:
    """``appliesForce`` (``isDisabled`` in files before 4.0)."""
    if element.find("appliesForce") is not None:
        return flag(element, "appliesForce", True)
    return not flag(element, "isDisabled", False)


def muscle_parameters(element, version=40000, muscles="degroote", line=None) -> dict:
    """The DeGroote–Fregly properties of one muscle element.

    Parameters
    ----------
    element : xml.etree.ElementTree.Element
        A ``DeGrooteFregly2016Muscle``, ``Thelen2003Muscle`` or ``Millard2012EquilibriumMuscle``.
    version : int
        The file's ``OpenSimDocument Version``.
    muscles : {"degroote", "degroote-only"}
        Replace the two supported types by DeGroote–Fregly muscles, or refuse them.
    line : int, optional
        The element's line in the file, for the error messages.

    Returns
    -------
    dict
        Every property of the table in the module docstring, plus ``source`` (the element's tag).
    """
    tag, name = element.tag, element.get("name")
    where = f"{tag} `{name}`" + (f" (line {line})" if line else "")
    if muscles not in MUSCLE_OPTIONS:
        raise ModelError(f"Unknown muscles option {muscles!r}; use one of {', '.join(map(repr, MUSCLE_OPTIONS))}.")
    if tag != DGF and (muscles == "degroote-only" or tag not in REPLACEABLE):
        hint = ("muscles='degroote' replaces it as Moco's ModOpReplaceMusclesWithDeGrooteFregly2016 does"
                if tag in REPLACEABLE else "Moco's replaceMuscles supports only Thelen2003Muscle and "
                "Millard2012EquilibriumMuscle besides DeGrooteFregly2016Muscle")
        raise ModelError(f"Muscle {where} is not a DeGrooteFregly2016Muscle; {hint}.")
    base_min = {DGF: 0.0, "Thelen2003Muscle": None, "Millard2012EquilibriumMuscle": None}[tag]
    params = dict(source=tag, name=name, applies_force=applies_force(element))
    for key, default in MUSCLE_DEFAULTS.items():
        params[key] = (flag if key in BOOLEANS else number)(element, key, default)
    if version <= 20301 and element.find("pennation_angle_at_optimal") is None:  # Muscle::updateFromXMLNode
        params["pennation_angle_at_optimal"] = number(element, "pennation_angle", MUSCLE_DEFAULTS["pennation_angle_at_optimal"])
    specific = {DGF: _degroote, "Thelen2003Muscle": _thelen, "Millard2012EquilibriumMuscle": _millard}[tag]
    params.update(specific(element))
    if base_min is None:  # Thelen and Millard default their min_control to minimum_activation
        params["min_control"] = number(element, "min_control", params.pop("minimum_activation"))
    params.pop("minimum_activation", None)
    _old_controls(element, version, params)
    _check(params, where)
    return params


def check_muscle_option(force_elements, muscles, path=None):
    """Refuse a bad ``muscles`` option, and under ``"degroote-only"`` every other muscle, before building."""
    if muscles not in MUSCLE_OPTIONS:
        raise ModelError(f"Unknown muscles option {muscles!r}; use one of {', '.join(map(repr, MUSCLE_OPTIONS))}.")
    for element in force_elements:
        if is_muscle(element.tag):
            muscle_parameters(element, 40000, muscles, _line(element, path))


def _line(element, path):
    line = getattr(element, "sourceline", None)
    if not line:
        return None
    return f"{line} of `{path}`" if path else line


def _degroote(element):
    out = {}
    for key, default in DGF_DEFAULTS.items():
        if key == "tendon_compliance_dynamics_mode":
            out[key] = (text(element, key) or default).strip()
        else:
            out[key] = (flag if key in BOOLEANS else number)(element, key, default)
    return out


def _thelen(element):
    d = THELEN_DEFAULTS
    out = dict(DGF_DEFAULTS)
    out.update(activation_time_constant=number(element, "activation_time_constant", d["activation_time_constant"]),
               deactivation_time_constant=number(element, "deactivation_time_constant", d["deactivation_time_constant"]),
               default_activation=number(element, "default_activation", d["default_activation"]),
               fiber_damping=0.0,
               passive_fiber_strain_at_one_norm_force=number(element, "FmaxMuscleStrain", d["FmaxMuscleStrain"]),
               tendon_strain_at_one_norm_force=number(element, "FmaxTendonStrain", d["FmaxTendonStrain"]),
               minimum_activation=number(element, "minimum_activation", d["minimum_activation"]))
    return out


def _millard(element):
    d = MILLARD_DEFAULTS
    out = dict(DGF_DEFAULTS)
    damping = number(element, "fiber_damping", d["fiber_damping"])
    fiber, tendon = element.find("FiberForceLengthCurve"), element.find("TendonForceLengthCurve")
    out.update(activation_time_constant=number(element, "activation_time_constant", d["activation_time_constant"]),
               deactivation_time_constant=number(element, "deactivation_time_constant", d["deactivation_time_constant"]),
               default_activation=number(element, "default_activation", d["default_activation"]),
               fiber_damping=0.0 if damping < MILLARD_MIN_DAMPING else damping,
               passive_fiber_strain_at_one_norm_force=d["fiber_strain"] if fiber is None
               else number(fiber, "strain_at_one_norm_force", d["fiber_strain"]),
               tendon_strain_at_one_norm_force=d["tendon_strain"] if tendon is None
               else number(tendon, "strain_at_one_norm_force", d["tendon_strain"]),
               minimum_activation=number(element, "minimum_activation", d["minimum_activation"]))
    return out


def _old_controls(element, version, params):
    """Muscle::updateFromXMLNode: before 30513 a min_control of 0 and a max_control of 1 are dropped."""
    if version >= 30513:
        return
    if element.find("min_control") is not None and number(element, "min_control", 1.0) == 0.0:
        params["min_control"] = _class_min_control(element)
    if element.find("max_control") is not None and number(element, "max_control", 0.0) == 1.0:
        params["max_control"] = MUSCLE_DEFAULTS["max_control"]


def _class_min_control(element):
    if element.tag == "Thelen2003Muscle":
        return number(element, "minimum_activation", THELEN_DEFAULTS["minimum_activation"])
    if element.tag == "Millard2012EquilibriumMuscle":
        return number(element, "minimum_activation", MILLARD_DEFAULTS["minimum_activation"])
    return MUSCLE_DEFAULTS["min_control"]


def _check(params, where):
    mode = params["tendon_compliance_dynamics_mode"]
    if mode not in ("explicit", "implicit"):
        raise ModelError(f"{where} has tendon_compliance_dynamics_mode {mode!r}; OpenSim accepts 'explicit' or 'implicit'.")
    lo, hi = params["min_control"], params["max_control"]
    if not (math.isfinite(hi) and lo < hi):
        raise ModelError(f"{where} has min_control {lo} and max_control {hi}; a muscle needs min_control < max_control ≤ 1.")
    if params["active_force_width_scale"] < 1.0:
        raise ModelError(f"{where} has active_force_width_scale {params['active_force_width_scale']}; OpenSim requires ≥ 1.")


def tendon_compliance(params) -> str:
    """colloc's ``tendon_compliance`` for a muscle's properties.

    ``ignore_tendon_compliance`` → ``"rigid"``; else OpenSim's ``tendon_compliance_dynamics_mode``.
    """
    if params["ignore_tendon_compliance"]:
        return "rigid"
    return params["tendon_compliance_dynamics_mode"]


def effective_damping(params) -> float:
    """The fiber damping that acts in OpenSim's dynamics of this muscle.

    With an explicit compliant tendon OpenSim's ``calcFiberVelocityInfoHelper`` inverts the force–velocity
    curve from F̃_T/cos α = a f_L f_V + f_PE, *without* the damping term, and the tendon force is the state
    F_max F̃_T: the damping changes nothing in the dynamics (only reported fiber forces).  colloc's explicit
    form is then exactly OpenSim's with β = 0 (a replaced Millard muscle keeps its β = 0.1 in the file but
    not in the dynamics).  Rigid and implicit tendons use β as given.
    """
    if not params["ignore_tendon_compliance"] and params["tendon_compliance_dynamics_mode"] == "explicit":
        return 0.0
    return params["fiber_damping"]


def component_name(name):
    """A muscle's component name: its OpenSim name with anything but letters, digits and _ replaced by _."""
    out = re.sub(r"\W", "_", name or "muscle")
    return out if not out[0].isdigit() else "_" + out


def moco_name(name: str, in_forceset=True) -> str:
    """The Moco name of a muscle variable given its colloc name.

    colloc names a muscle's variables ``<muscle>.activation``, ``<muscle>.normalized_tendon_force`` and
    ``<muscle>.excitation`` (component ``.`` variable); Moco names the states by the muscle's path,
    ``/forceset/<muscle>/activation`` and ``/forceset/<muscle>/normalized_tendon_force``, and the control
    ``/forceset/<muscle>`` (``/<muscle>…`` for a muscle among the model's components rather than in its
    ForceSet).  ``OsimModel.skeleton.opensim_names`` holds these names for every loaded muscle.
    """
    muscle, _, local = name.partition(".")
    base = f"/forceset/{muscle}" if in_forceset else f"/{muscle}"
    return base if local == "excitation" else f"{base}/{local}"


__all__ = ["muscle_parameters", "check_muscle_option", "tendon_compliance", "effective_damping", "moco_name", "is_muscle", "applies_force",
           "MUSCLE_OPTIONS", "component_name"]
