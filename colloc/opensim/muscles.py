"""An OpenSim muscle as a colloc component: colloc's DeGroote–Fregly muscle with the properties the
``.osim`` format adds (active-force width, passive force off, activation dynamics off, control bounds)
on a path read from the file (:mod:`colloc.opensim.paths`)."""
from __future__ import annotations

import math

import casadi as ca

from ..errors import ModelError
from ..model.component import TIME
from ..model.muscle import DeGrooteFregly2016Muscle, active_force_length
from .document import force_path
from .muscle_parameters import (DGF, REPLACEABLE, component_name, effective_damping, muscle_parameters,
                                tendon_compliance)


class OpenSimMuscle(DeGrooteFregly2016Muscle):
    """A DeGroote–Fregly 2016 muscle built from an ``.osim`` muscle's properties.

    Parameters
    ----------
    name : str
        The muscle's name in the file (variables ``name.excitation``, ``name.activation`` and, with a
        compliant tendon, ``name.normalized_tendon_force``; see :func:`colloc.opensim.muscles.moco_name`).
    body : Multibody
        The skeleton the muscle pulls on.
    path : colloc.opensim.paths.Path
        Length l_MT(q); its lengthening speed and moment arms when the file gives them as functions
        (a ``FunctionBasedPath`` with ``moment_arm_functions``), else both by AD of the length.
    params : dict
        From :func:`colloc.opensim.muscles.muscle_parameters`.
    prescribed_motion : casadi.SX, shape (nq, 1), optional
        q_ref(t) (see :class:`~colloc.DeGrooteFregly2016Muscle`): the muscle on a prescribed motion.

    Notes
    -----
    Excitation and activation are bounded by ``[min_control, max_control]`` as Moco bounds a
    DeGroote–Fregly muscle's control and activation state.  With ``ignore_activation_dynamics`` the
    activation *is* the excitation (a control, no state), as in OpenSim.
    """

    def __init__(self, name, body, path, params, prescribed_motion=None):
        self.osim = dict(params)
        self._given_path = path
        #: ``(active, position in ground)`` of each path point, SX in q (:class:`colloc.opensim.paths.Path`);
        #: empty for a function-based path.  What an animation draws as the muscle's line.
        self.path_points = path.points
        lo, hi = params["min_control"], params["max_control"]
        minimum = max(0.0, lo) if max(0.0, lo) < 1.0 else 0.0
        super().__init__(
            name, body, path.length, max_isometric_force=params["max_isometric_force"],
            optimal_fiber_length=params["optimal_fiber_length"], tendon_slack_length=params["tendon_slack_length"],
            pennation_angle_at_optimal=params["pennation_angle_at_optimal"],
            max_contraction_velocity=params["max_contraction_velocity"],
            tendon_strain_at_one_norm_force=params["tendon_strain_at_one_norm_force"],
            passive_fiber_strain_at_one_norm_force=params["passive_fiber_strain_at_one_norm_force"],
            activation_time_constant=params["activation_time_constant"],
            deactivation_time_constant=params["deactivation_time_constant"],
            activation_dynamics_smoothing=params["activation_dynamics_smoothing"],
            fiber_damping=effective_damping(params), tendon_compliance=tendon_compliance(params),
            minimum_activation=minimum, prescribed_motion=prescribed_motion)
        self.variable(self.excitation).bounds = (lo if math.isfinite(lo) else 0.0, hi)
        if not params["ignore_activation_dynamics"]:
            self.variable(self.activation).bounds = (minimum, hi)

    def _activation_dynamics(self):
        if not self.osim["ignore_activation_dynamics"]:
            super()._activation_dynamics()
            return
        self.excitation = self.control("excitation", bounds=(0.0, 1.0))
        self.activation = self.excitation

    def _path(self, body):
        path = self._given_path
        if path.moment_arms is None:
            super()._path(body)
        else:
            self.moment_arms = path.moment_arms
        if self.prescribed_motion is not None:
            # on a prescribed motion everything is a function of time: the file's speed function is not needed
            if path.moment_arms is not None:
                self.length = ca.substitute(self.length, body.q, self.prescribed_motion)
                self.moment_arms = ca.substitute(self.moment_arms, body.q, self.prescribed_motion)
                self.lengthening_speed = ca.jacobian(self.length, TIME)
        elif path.lengthening_speed is not None:
            self.lengthening_speed = path.lengthening_speed

    @property
    def rest(self):
        """As :attr:`DeGrooteFregly2016Muscle.rest`, without the row e − a ≡ 0 when the activation is the excitation."""
        rows = super().rest
        return rows[1:] if self.osim["ignore_activation_dynamics"] else rows

    def active_force_length(self, norm_fiber_length):
        """f_L((l̃_M − 1)/s + 1) with the file's ``active_force_width_scale`` s."""
        return active_force_length(norm_fiber_length, self.osim["active_force_width_scale"])

    def passive_force_length(self, norm_fiber_length):
        """f_PE, or 0 with ``ignore_passive_fiber_force``."""
        if self.osim["ignore_passive_fiber_force"]:
            return 0.0 * norm_fiber_length
        return super().passive_force_length(norm_fiber_length)


def check_muscle(element, path, model_element):
    """Refuse a malformed muscle before anything is built (its properties, its path's wrapping)."""
    from .document import where
    from .paths import check_path

    try:
        muscle_parameters(element, 40000, "degroote")  # the version changes defaults only, never validity
        check_path(element)
    except ModelError as err:
        raise ModelError(f"{err}".rstrip(".") + f"{where(element, path)}.") from None


def build_muscle(skeleton, element, path):
    """Registry builder: one :class:`OpenSimMuscle` on ``skeleton``."""
    from .context import from_skeleton
    from .paths import muscle_path

    params = muscle_parameters(element, skeleton.spec.version, getattr(skeleton, "muscles", "degroote"),
                               getattr(element, "sourceline", None))
    muscle = OpenSimMuscle(component_name(element.get("name")), skeleton.body, muscle_path(element, from_skeleton(skeleton, path)), params,
                           prescribed_motion=getattr(skeleton, "prescribed_motion", None))
    base = force_path(skeleton.spec.model, element)
    names = {muscle.excitation: base, muscle.activation: f"{base}/activation"}
    if muscle.normalized_tendon_force is not None:
        names[muscle.normalized_tendon_force] = f"{base}/normalized_tendon_force"
    for symbol, opensim in names.items():
        skeleton.opensim_names[muscle.variable(symbol).name] = opensim
    return [muscle]


def _register():
    from .registry import register_force

    for tag in (DGF, *REPLACEABLE):
        register_force(tag, build_muscle, check_muscle)


_register()

__all__ = ["OpenSimMuscle", "build_muscle", "check_muscle", "force_path"]
