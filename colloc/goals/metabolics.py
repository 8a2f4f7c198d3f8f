"""Metabolic energy rate of Bhargava et al. (2004), smoothed as OpenSim's ``Bhargava2004SmoothedMuscleMetabolics``.

Per muscle (W), with e the excitation, a the activation, m the muscle mass, r the slow-twitch ratio,
s = r sin(πe/2) and f = (1 − r)(1 − cos(πe/2)) the fiber-type excitations, v the fiber velocity (m/s,
negative when shortening), F_act = F_max a f_L f_V, F_tot = F_act + F_max f_PE (no damping), and the
tanh switch C(c, L, R) = L + (R − L)(½ + ½ tanh(b c)):

* activation heat  Ȧ = m (A_s s + A_f f)                              (A_s = 40, A_f = 133 W/kg)
* maintenance heat Ṁ = m g(l̃_M) (M_s s + M_f f), g piecewise linear through (0, .5) (.5, .5) (1, 1) (1.5, 0)
* shortening heat  Ṡ = −α (v + ε), α = C(v + ε, 0.25 F_tot, 0, b_v)   (Anderson 1999's constant)
* work rate        Ẇ = −F_act v (negative work included, the default)
* Ṡ −= C(−(Ȧ + Ṁ + Ṡ + Ẇ), 0, Ȧ + Ṁ + Ṡ + Ẇ, b_p)                       (no negative total power)
* heat H = C(−(Ȧ + Ṁ + Ṡ) + m, Ȧ + Ṁ + Ṡ, m, b_h)                      (at least 1 W/kg)
* total Ė = H + Ẇ; the model's rate adds the basal 1.2 · (body mass)¹.

These are the defaults of that OpenSim component with ``use_smoothing = true`` and ``smoothing_type =
"tanh"`` (b_v = b_p = b_h = 10, ε = 10⁻¹⁶); the muscle mass is F_max / σ · ρ · l_opt with σ = 0.25 MPa and
ρ = 1059.7 kg/m³ unless given.  Reference: U. Bhargava, M. Pandy, F. Anderson, "A phenomenological model
for estimating metabolic energy consumption in muscle contraction", J. Biomech. 37(1), 81–88, 2004.
"""
from __future__ import annotations

import math

import casadi as ca

from ..errors import ProblemError
from .tracking import add_integral_goal

EPS = 1e-16  # added to the fiber velocity, as OpenSim does, so that the smoothing never divides by zero
DEFAULTS = dict(ratio_slow_twitch_fibers=0.5, specific_tension=0.25e6, density=1059.7, muscle_mass=None,
                activation_constants=(40.0, 133.0), maintenance_constants=(74.0, 111.0),
                velocity_smoothing=10.0, power_smoothing=10.0, heat_rate_smoothing=10.0,
                enforce_minimum_heat_rate_per_muscle=True, include_negative_mechanical_work=True,
                forbid_negative_total_power=True, muscle_effort_scaling_factor=1.0)


def _switch(cond, left, right, smoothing):
    """OpenSim's smoothed conditional: ``left`` for cond ≪ 0, ``right`` for cond ≫ 0."""
    return left + (right - left) * (0.5 + 0.5 * ca.tanh(smoothing * cond))


def fiber_length_dependence(norm_fiber_length):
    """g(l̃_M): OpenSim's PiecewiseLinearFunction through (0, .5) (.5, .5) (1, 1) (1.5, 0) (10, 0)."""
    x = norm_fiber_length
    return ca.if_else(x < 0.5, 0.5, ca.if_else(x < 1.0, x, ca.if_else(x < 1.5, 1.0 - 2.0 * (x - 1.0), 0.0)))


def muscle_mass(muscle, specific_tension=0.25e6, density=1059.7):
    """F_max / σ · ρ · l_opt (kg), OpenSim's default when no mass is given."""
    P = muscle.params
    return P["max_isometric_force"] / specific_tension * density * P["optimal_fiber_length"]


def bhargava2004_rates(muscle, **options) -> dict:
    """The rates of one :class:`~colloc.DeGrooteFregly2016Muscle` (W) as SX: ``activation``,
    ``maintenance``, ``shortening``, ``mechanical_work`` and ``total`` (see the module notes; keyword
    options as :data:`DEFAULTS`)."""
    unknown = set(options) - set(DEFAULTS)
    if unknown:
        raise ProblemError(f"Unknown metabolics option `{sorted(unknown)[0]}`; known: {', '.join(DEFAULTS)}.")
    o = dict(DEFAULTS, **options)
    P = muscle.params
    if P["fiber_damping"] != 0.0:
        raise ProblemError(f"Muscle `{muscle.name}` has fiber damping, which this metabolic rate does not count; use fiber_damping=0.")
    mass = o["muscle_mass"] if o["muscle_mass"] is not None else muscle_mass(muscle, o["specific_tension"], o["density"])
    scale, ratio = o["muscle_effort_scaling_factor"], o["ratio_slow_twitch_fibers"]
    excitation = scale * muscle.excitation
    l_norm, v_norm = muscle.normalized_fiber_length, muscle.normalized_fiber_velocity
    velocity = v_norm * P["max_contraction_velocity"] * P["optimal_fiber_length"]
    active = scale * P["max_isometric_force"] * muscle.activation * muscle.active_force_length(l_norm) * muscle.force_velocity(v_norm)
    total_force = active + P["max_isometric_force"] * muscle.passive_force_length(l_norm)
    slow = ratio * ca.sin(math.pi / 2 * excitation)
    fast = (1 - ratio) * (1 - ca.cos(math.pi / 2 * excitation))
    activation = mass * (o["activation_constants"][0] * slow + o["activation_constants"][1] * fast)
    maintenance = mass * fiber_length_dependence(l_norm) * (o["maintenance_constants"][0] * slow + o["maintenance_constants"][1] * fast)
    alpha = _switch(velocity + EPS, 0.25 * total_force, 0.0, o["velocity_smoothing"])
    shortening = -alpha * (velocity + EPS)
    work = -active * velocity if o["include_negative_mechanical_work"] else _switch(velocity + EPS, -active * velocity, 0.0, o["velocity_smoothing"])
    if o["forbid_negative_total_power"]:
        before = activation + maintenance + shortening + work
        shortening = shortening - _switch(-before, 0.0, before, o["power_smoothing"])
    heat = activation + maintenance + shortening
    if o["enforce_minimum_heat_rate_per_muscle"]:
        heat = _switch(-heat + mass, heat, mass, o["heat_rate_smoothing"])
    return dict(activation=activation, maintenance=maintenance, shortening=shortening, mechanical_work=work,
                total=heat + work)


def metabolic_rate(muscles, body_mass=None, basal_coefficient=1.2, basal_exponent=1.0, **options) -> ca.SX:
    """Σ over ``muscles`` of the total rate, plus the basal rate c · M^k when ``body_mass`` M (kg) is given
    (``getTotalMetabolicRate``, the output ``total_metabolic_rate`` Moco's examples minimize)."""
    muscles = list(muscles)
    if not muscles:
        raise ProblemError("A metabolic rate needs at least one muscle.")
    rate = sum(bhargava2004_rates(m, **options)["total"] for m in muscles)
    if body_mass is not None:
        rate = rate + basal_coefficient * body_mass ** basal_exponent
    return rate


def metabolic_cost(problem, muscles, body_mass=None, weight=1.0, name="metabolic_cost", divide_by_duration=False,
                   divide_by_displacement=False, normalization=None, **options):
    """Metabolic cost, Moco's ``MocoOutputGoal`` on ``Bhargava2004SmoothedMuscleMetabolics``'s
    ``total_metabolic_rate``: ``weight · ∫ Ė dt``, normalised as Moco's goals are
    (:mod:`colloc.goals.normalization`); ``options`` as :func:`bhargava2004_rates`."""
    return add_integral_goal(problem, metabolic_rate(muscles, body_mass, **options), name, weight, divide_by_duration,
                             divide_by_displacement, normalization)


__all__ = ["bhargava2004_rates", "metabolic_rate", "metabolic_cost", "muscle_mass", "fiber_length_dependence"]
