"""Effort and end-point goals as Moco defines them: control effort, average speed, periodicity with
left/right symmetry, initial activation, initial velocity equilibrium of compliant tendons.

End-point goals default, as in Moco, to constraints (``problem.boundary`` rows, equal to zero); with
``mode="cost"`` each row r becomes the cost ``weight · Σ r²`` (Moco squares every row in cost mode).
"""
from __future__ import annotations

import math

import casadi as ca

from ..errors import ProblemError
from ..model.component import as_sx
from ..model.muscle import muscles_of
from .normalization import displacement
from .tracking import _weights, add_integral_goal

MODES = ("constraint", "cost")


def _names(problem, variables, kind, goal):
    """Model variables of ``kind`` given by symbol or name, or all of them when ``variables`` is None."""
    if variables is None:
        return [v for v in problem.model.variables if v.kind == kind]
    out = []
    for key in variables:
        var = problem.variable(key, f"goal `{goal}`")
        if var.kind != kind:
            raise ProblemError(f"`{var.name}` in goal `{goal}` is a {var.kind}, not a {kind}.")
        out.append(var)
    return out


def control_effort(problem, controls=None, weights=None, exponent=2, weight=1.0, name="control_effort",
                   divide_by_duration=False, divide_by_displacement=False, normalization=None):
    """Control effort, Moco's ``MocoControlGoal``: ``weight · ∫ Σ_c w_c |u_c|^p dt`` (u_c² for p = 2).

    Parameters
    ----------
    controls : list of casadi.SX or str, optional
        The controls counted; default every control of the model (Moco counts every actuator's).
    weights : dict of str to float, optional
        w_c by control name (Moco's ``control_weights``); 1 when not given.
    exponent : int
        p ≥ 2, an integer, as Moco requires.
    divide_by_duration, divide_by_displacement, normalization
        Moco's normalisations (:mod:`colloc.goals.normalization`); MocoTrack's and Moco's predictive
        examples divide by the displacement.
    """
    if isinstance(exponent, bool) or not isinstance(exponent, int) or exponent < 2:
        raise ProblemError(f"The exponent of goal `{name}` must be an integer ≥ 2 (as Moco's); got {exponent!r}.")
    vs = _names(problem, controls, "control", name)
    if not vs:
        raise ProblemError(f"Goal `{name}` has no controls to count; the model declares none.")
    w = _weights(weights, [v.name for v in vs], name)
    power = (lambda u: u**2) if exponent == 2 else (lambda u: ca.fabs(u) ** exponent)
    integrand = ca.sum1(ca.vertcat(*[w[v.name] * power(v.symbol) for v in vs if w[v.name] != 0.0]))
    return add_integral_goal(problem, integrand, name, weight,
                             divide_by_duration, divide_by_displacement, normalization)


def _endpoint_goal(problem, rows, names, mode, weight, name):
    if mode not in MODES:
        raise ProblemError(f"Unknown mode {mode!r} of goal `{name}`; use one of {', '.join(MODES)}.")
    rows = ca.vertcat(*rows)
    if mode == "constraint":
        for k, label in enumerate(names):
            problem.boundary(rows[k], name=f"{name}.{label}")
    else:
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight):
            raise ProblemError(f"The weight of goal `{name}` must be a finite number; got {weight!r}.")
        problem.minimize(final=weight * ca.sumsqr(rows), name=name)
    return rows


def average_speed(problem, center_of_mass, speed, mode="constraint", weight=1.0, name="average_speed"):
    """Average speed, Moco's ``MocoAverageSpeedGoal``: ``v* − |r(tf) − r(t0)| / (tf − t0) = 0``.

    ``center_of_mass`` is the model's centre of mass (or the point whose travel counts), ``speed`` v* in m/s.
    """
    if isinstance(speed, bool) or not isinstance(speed, (int, float)) or not math.isfinite(speed):
        raise ProblemError(f"The speed of goal `{name}` must be a finite number (m/s); got {speed!r}.")
    point = ca.vec(as_sx(center_of_mass, f"The centre of mass of goal `{name}`", ProblemError))
    row = speed - displacement(problem, point) / (problem.tf - problem.t0)
    return _endpoint_goal(problem, [row], ["speed"], mode, weight, name)


def mirror_pairs(names, right="_r", left="_l"):
    """Moco's 2-D walking symmetry pairs ``(initial, final)``: a name with ``right`` pairs with the name with
    ``left`` put in its place, and the reverse; any other name pairs with itself (``re.sub``, as the
    example does: every occurrence is replaced)."""
    pairs = []
    for n in names:
        if right in n:
            pairs.append((n, n.replace(right, left)))
        if left in n:
            pairs.append((n, n.replace(left, right)))
        if right not in n and left not in n:
            pairs.append((n, n))
    return pairs


def periodicity(problem, pairs, negate=(), mode="constraint", weight=1.0, name="periodicity"):
    """Periodicity, Moco's ``MocoPeriodicityGoal``: per pair (i, f), ``s · x_i(t0) − x_f(tf) = 0`` with
    s = −1 for the pairs whose initial variable is in ``negate`` (Moco's pair property ``negate``), else 1.

    Parameters
    ----------
    pairs : list of (str or casadi.SX, str or casadi.SX)
        ``(initial variable, final variable)``, states or controls (:func:`mirror_pairs` builds the
        left/right ones).
    negate : iterable of str or casadi.SX
        Initial variables whose pair is negated (e.g. a pelvis rotation that changes sign between sides).
    """
    flip = {problem.variable(n, f"goal `{name}`").name for n in negate}
    rows, labels = [], []
    for first, last in pairs:
        a, b = (problem.variable(v, f"goal `{name}`") for v in (first, last))
        for var in (a, b):
            if var.kind not in ("state", "control"):
                raise ProblemError(f"`{var.name}` in goal `{name}` is a {var.kind}; periodicity pairs states or controls.")
        sign = -1.0 if a.name in flip else 1.0
        rows.append(sign * problem.endpoint_symbols("t0")[a.name] - problem.endpoint_symbols("tf")[b.name])
        labels.append(a.name if a.name == b.name else f"{a.name}->{b.name}")
    unused = flip - {problem.variable(p[0], f"goal `{name}`").name for p in pairs}
    if unused:
        raise ProblemError(f"`{sorted(unused)[0]}` is in `negate` of goal `{name}` but starts no pair.")
    if not rows:
        raise ProblemError(f"Goal `{name}` has no pairs.")
    return _endpoint_goal(problem, rows, labels, mode, weight, name)


def initial_activation(problem, muscles=None, mode="constraint", weight=1.0, name="initial_activation"):
    """Initial activation, Moco's ``MocoInitialActivationGoal``: ``e(t0) − a(t0) = 0`` per muscle."""
    muscles = muscles_of(problem) if muscles is None else list(muscles)
    if not muscles:
        raise ProblemError(f"Goal `{name}` has no muscles; the model has no DeGrooteFregly2016Muscle.")
    rows = [problem.at_t0(m.excitation - m.activation) for m in muscles]
    return _endpoint_goal(problem, rows, [m.name for m in muscles], mode, weight, name)


def linearized_equilibrium_rate(muscle) -> ca.SX:
    """DeGroote–Fregly's ``getLinearizedEquilibriumResidualDerivative`` (Millard et al. 2013, eq. A6):
    ``k_M∥ v_M∥ − k_T (v_MT − v_M∥)``, velocity split between fiber and tendon by their stiffnesses.

    k_T = dF_T/dl_T; k_M∥ = d(F_M cos α)/d(l_M cos α) with the force–velocity factor held fixed (as
    OpenSim's ``calcFiberStiffness``); v_M∥ = l̇_M / cos α with l̇_M the fiber velocity of the explicit
    tendon form (the implicit form's when its residual holds).  States and controls only.
    """
    P = muscle.params
    if muscle.normalized_tendon_force is None:
        raise ProblemError(f"Muscle `{muscle.name}` has a rigid tendon; its velocity equilibrium is not defined.")
    if P["fiber_damping"] != 0.0:
        raise ProblemError(f"Muscle `{muscle.name}` has fiber damping; the initial velocity equilibrium needs fiber_damping=0.")
    rate, fiber, cos_alpha, fiber_speed = muscle._explicit_rate()
    length = ca.SX.sym("l_M")  # the fiber length as a free symbol, to differentiate the fiber force along it
    width = P["optimal_fiber_length"] * math.sin(P["pennation_angle_at_optimal"])
    cos_l = ca.sqrt(1.0 - (width / length) ** 2)
    norm = length / P["optimal_fiber_length"]
    f_v = muscle.force_velocity(fiber_speed / (P["max_contraction_velocity"] * P["optimal_fiber_length"]))
    force = P["max_isometric_force"] * (muscle.activation * muscle.active_force_length(norm) * f_v
                                        + muscle.passive_force_length(norm))
    stiffness = ca.jacobian(force * cos_l, length) / ca.jacobian(length * cos_l, length)
    stiffness = ca.substitute(stiffness, length, fiber)
    tendon_length = P["tendon_slack_length"] * muscle.tendon_force_length_inverse(muscle.normalized_tendon_force)
    l_t = ca.SX.sym("l_T")
    tendon_stiffness = ca.substitute(ca.jacobian(P["max_isometric_force"] * muscle.tendon_force_length(
        l_t / P["tendon_slack_length"]), l_t), l_t, tendon_length)
    along = fiber_speed / cos_alpha
    return stiffness * along - tendon_stiffness * (muscle.lengthening_speed - along)


def initial_velocity_equilibrium(problem, muscles=None, mode="constraint", weight=1.0,
                                 name="initial_velocity_equilibrium"):
    """Initial velocity equilibrium of compliant tendons, Moco's ``MocoInitialVelocityEquilibriumDGFGoal``:
    :func:`linearized_equilibrium_rate` = 0 at t0 for every muscle with a compliant tendon."""
    muscles = muscles_of(problem) if muscles is None else list(muscles)
    muscles = [m for m in muscles if m.normalized_tendon_force is not None]
    if not muscles:
        raise ProblemError(f"Goal `{name}` has no muscle with a compliant tendon.")
    rows = [problem.at_t0(linearized_equilibrium_rate(m)) for m in muscles]
    return _endpoint_goal(problem, rows, [m.name for m in muscles], mode, weight, name)


__all__ = ["control_effort", "average_speed", "mirror_pairs", "periodicity", "initial_activation",
           "initial_velocity_equilibrium", "linearized_equilibrium_rate"]
