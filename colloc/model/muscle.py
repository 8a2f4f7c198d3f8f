"""DeGroote–Fregly 2016 muscle–tendon actuators on a multibody path.

A :class:`DeGrooteFregly2016Muscle` is a :class:`~colloc.Component` with

* control ``NAME.excitation`` e ∈ [0, 1] and state ``NAME.activation`` a, with the
  activation dynamics of De Groote et al. (2016)

      ȧ = (e − a) [ f / (τ_a (0.5 + 1.5 a)) + (1 − f) (0.5 + 1.5 a) / τ_d ],
      f = ½ + ½ tanh(b (e − a));

* for a compliant tendon, state ``NAME.normalized_tendon_force`` F̃_T = F_T / F_max,
  whose dynamics are either *explicit* (the fiber velocity from the inverse
  force–velocity curve, dF̃_T/dt = f_T'(l̃_T) l̇_T / l_s) or *implicit* (dF̃_T/dt is a
  variable and the muscle–tendon equilibrium
  F̃_T − (a f_L(l̃_M) f_V(ṽ_M) + f_PE(l̃_M) + β ṽ_M) cos α = 0 is the residual, the
  form the paper recommends: no division by a f_L or cos α);
* a path of length l_MT(q, t) on a :class:`~colloc.Multibody`, which receives the
  generalised force τ = −Nᵀ (∂l_MT/∂q)ᵀ F_T (moment arm r = −∂l_MT/∂θ).

Geometry (fixed-width pennation): w = l_opt sin α₀, l_M = √((l_MT − l_T)² + w²),
cos α = (l_MT − l_T)/l_M, hence l̇_M = cos α (l̇_MT − l̇_T).

The curves are plain functions of numbers, numpy arrays or CasADi expressions, with
the constants of OpenSim 4's ``DeGrooteFregly2016Muscle`` (the supplement's are
rounded and have typos), so that f_L(1) = 1, f_V(0) = 1, f_V(−1) = 0, f_T(1) = 0,
f_T(1 + ε₀) = 1 and f_PE(1 + e₀) = 1.

Reference: F. De Groote, A. L. Kinney, A. V. Rao, B. J. Fregly, "Evaluation of direct
collocation optimal control problem formulations for solving the muscle redundancy
problem", Annals of Biomedical Engineering 44(10), 2922–2936, 2016.

Legend: ``l`` lengths (m), ``v`` velocities (m/s), ``F`` forces (N); a tilde is a
normalized quantity: l̃_M = l_M/l_opt, ṽ_M = l̇_M/(v_max l_opt), l̃_T = l_T/l_s,
F̃_T = F_T/F_max.
"""
from __future__ import annotations

import math

import casadi as ca
import numpy as np

from ..errors import ModelError
from .component import TIME, Component

#: Active force–length: rows (b₁, b₂, b₃, b₄) of b₁ exp(−½ (x − b₂)² / (b₃ + b₄ x)²) (OpenSim 4).
ACTIVE_FORCE_LENGTH = (
    (0.8150671134243542, 1.055033428970575, 0.162384573599574, 0.063303448465465),
    (0.433004984392647, 0.716775413397760, -0.029947116970696, 0.200356847296188),
    (0.1, 1.0, 0.353553390593274, 0.0),
)
#: Force–velocity f_V(ṽ) = d₁ ln(d₂ṽ + d₃ + √((d₂ṽ + d₃)² + 1)) + d₄ (OpenSim 4).
FORCE_VELOCITY = (-0.3211346127989808, -8.149, -0.374, 0.8825327733249912)
#: Tendon force–length f_T(l̃_T) = c₁ exp(k_T (l̃_T − c₂)) − c₃.
TENDON = (0.2, 1.0, 0.2)
#: Passive force–length: exponential shape factor k_PE and the fiber length where it is zero.
PASSIVE_SHAPE, MIN_NORM_FIBER_LENGTH = 4.0, 0.2
#: Upper bound of the normalized tendon force state (Moco's default).
MAX_NORM_TENDON_FORCE = 5.0
COMPLIANCE_MODES = ("rigid", "explicit", "implicit")


def _lib(x):
    """``casadi`` for symbolic or DM input, else ``numpy`` (so a curve returns what it is given)."""
    return ca if isinstance(x, (ca.SX, ca.MX, ca.DM)) else np


def active_force_length(norm_fiber_length, width_scale=1.0):
    """Active force–length multiplier f_L(l̃_M) = Σᵢ b₁ᵢ exp(−½ (x − b₂ᵢ)² / (b₃ᵢ + b₄ᵢ x)²).

    ``x = (l̃_M − 1)/width_scale + 1``; f_L(1) = 1.  Constants: :data:`ACTIVE_FORCE_LENGTH`.
    """
    m = _lib(norm_fiber_length)
    x = (norm_fiber_length - 1.0) / width_scale + 1.0
    return sum(b1 * m.exp(-0.5 * (x - b2) ** 2 / (b3 + b4 * x) ** 2) for b1, b2, b3, b4 in ACTIVE_FORCE_LENGTH)


def passive_force_length(norm_fiber_length, strain_at_one_norm_force=0.6):
    """Passive fiber force f_PE(l̃_M) = (exp(k_PE (l̃_M − 1)/e₀) − o) / (exp(k_PE) − o).

    ``o = exp(k_PE (l̃_min − 1)/e₀)`` makes it zero at l̃_min = 0.2; f_PE(1 + e₀) = 1.
    """
    m = _lib(norm_fiber_length)
    e0, k = strain_at_one_norm_force, PASSIVE_SHAPE
    offset = math.exp(k * (MIN_NORM_FIBER_LENGTH - 1.0) / e0)
    return (m.exp(k * (norm_fiber_length - 1.0) / e0) - offset) / (math.exp(k) - offset)


def force_velocity(norm_fiber_velocity):
    """Force–velocity multiplier f_V(ṽ) = d₁ ln(d₂ṽ + d₃ + √((d₂ṽ + d₃)² + 1)) + d₄.

    ṽ < 0 is shortening; f_V(−1) = 0, f_V(0) = 1.
    """
    m = _lib(norm_fiber_velocity)
    d1, d2, d3, d4 = FORCE_VELOCITY
    y = d2 * norm_fiber_velocity + d3
    return d1 * m.log(y + m.sqrt(y * y + 1.0)) + d4


def force_velocity_inverse(multiplier):
    """The fiber velocity ṽ with f_V(ṽ) = ``multiplier``: ṽ = (sinh((f_V − d₄)/d₁) − d₃)/d₂."""
    m = _lib(multiplier)
    d1, d2, d3, d4 = FORCE_VELOCITY
    return (m.sinh((multiplier - d4) / d1) - d3) / d2


def tendon_stiffness_factor(strain_at_one_norm_force=0.049):
    """k_T = ln((1 + c₃)/c₁) / (1 + ε₀ − c₂), so that f_T(1 + ε₀) = 1 (36.566 at ε₀ = 0.049)."""
    c1, c2, c3 = TENDON
    return math.log((1.0 + c3) / c1) / (1.0 + strain_at_one_norm_force - c2)


def tendon_force_length(norm_tendon_length, strain_at_one_norm_force=0.049):
    """Tendon force f_T(l̃_T) = c₁ exp(k_T (l̃_T − c₂)) − c₃; f_T(1) = 0."""
    m = _lib(norm_tendon_length)
    c1, c2, c3 = TENDON
    return c1 * m.exp(tendon_stiffness_factor(strain_at_one_norm_force) * (norm_tendon_length - c2)) - c3


def tendon_force_length_inverse(norm_tendon_force, strain_at_one_norm_force=0.049):
    """Tendon length l̃_T = ln((F̃_T + c₃)/c₁)/k_T + c₂ with f_T(l̃_T) = ``norm_tendon_force``."""
    m = _lib(norm_tendon_force)
    c1, c2, c3 = TENDON
    return m.log((norm_tendon_force + c3) / c1) / tendon_stiffness_factor(strain_at_one_norm_force) + c2


def activation_rate(excitation, activation, activation_time_constant=0.015, deactivation_time_constant=0.060, smoothing=0.1):
    """ȧ = (e − a) [f/(τ_a (0.5 + 1.5a)) + (1 − f)(0.5 + 1.5a)/τ_d], f = ½ + ½ tanh(b (e − a))."""
    m = ca if any(_lib(x) is ca for x in (excitation, activation)) else np
    f = 0.5 + 0.5 * m.tanh(smoothing * (excitation - activation))
    scale = 0.5 + 1.5 * activation
    return (excitation - activation) * (f / (activation_time_constant * scale) + (1.0 - f) * scale / deactivation_time_constant)


class DeGrooteFregly2016Muscle(Component):
    """A DeGroote–Fregly 2016 muscle–tendon unit on a path of a multibody.

    Parameters
    ----------
    name : str
        Component name: ``NAME.excitation``, ``NAME.activation``, ``NAME.normalized_tendon_force``.
    body : Multibody
        The body the muscle acts on; it receives ``−Nᵀ (∂l/∂q)ᵀ F_T``.
    length : casadi.SX, scalar
        Muscle–tendon length l_MT(q, t) (m) in ``body``'s coordinates (and time).
    max_isometric_force, optimal_fiber_length, tendon_slack_length : float
        F_max (N), l_opt (m), l_s (m), all positive.
    pennation_angle_at_optimal : float
        α₀ (rad) in [0, π/2).
    max_contraction_velocity : float
        v_max in optimal fiber lengths per second.
    tendon_strain_at_one_norm_force, passive_fiber_strain_at_one_norm_force : float
        ε₀ (default 0.049) and e₀ (default 0.6).
    activation_time_constant, deactivation_time_constant : float
        τ_a, τ_d (s).
    activation_dynamics_smoothing : float
        b of the tanh switch (published 0.1; a sharp b such as 10 invites chattering
        excitations under a ∫e² cost, which :mod:`colloc.results.oscillation` reports with every solution).
    fiber_damping : float
        β ≥ 0 (normalized); the explicit form needs β = 0.
    tendon_compliance : {"rigid", "explicit", "implicit"}
    minimum_activation : float
        Lower bound of the activation (0.01 keeps the explicit form's division by a f_L finite).
    prescribed_motion : casadi.SX, shape (nq, 1), optional
        q_ref(t): ``body``'s coordinates as functions of time (a motion the muscles must reproduce, as in
        the muscle-redundancy problem).  The path length, its lengthening speed and the moment arms are
        then functions of time, the muscle applies nothing to ``body`` (which stays out of the problem)
        and its :attr:`generalized_force` enters the problem's own balance (a path constraint).

    Attributes
    ----------
    excitation, activation, normalized_tendon_force : casadi.SX
        Symbols (``normalized_tendon_force`` is None for a rigid tendon).
    tension : casadi.SX
        Tendon force F_T (N), an expression for costs, bounds and path constraints.
    fiber_length, normalized_fiber_length, normalized_fiber_velocity, moment_arms : casadi.SX
        l_M, l̃_M, ṽ_M and ``−N ᵀ(∂l/∂q)ᵀ`` (shape (nv, 1)).
    generalized_force : casadi.SX
        ``moment_arms · tension`` (nv, 1), what the muscle applies to ``body``.
    """

    def __init__(self, name, body=None, length=None, max_isometric_force=None, optimal_fiber_length=None,
                 tendon_slack_length=None, pennation_angle_at_optimal=0.0, max_contraction_velocity=10.0,
                 tendon_strain_at_one_norm_force=0.049, passive_fiber_strain_at_one_norm_force=0.6,
                 activation_time_constant=0.015, deactivation_time_constant=0.060,
                 activation_dynamics_smoothing=0.1, fiber_damping=0.0, tendon_compliance="implicit",
                 minimum_activation=0.01, prescribed_motion=None):
        super().__init__(name)
        self.params = _check_parameters(name, dict(
            max_isometric_force=max_isometric_force, optimal_fiber_length=optimal_fiber_length,
            tendon_slack_length=tendon_slack_length, pennation_angle_at_optimal=pennation_angle_at_optimal,
            max_contraction_velocity=max_contraction_velocity,
            tendon_strain_at_one_norm_force=tendon_strain_at_one_norm_force,
            passive_fiber_strain_at_one_norm_force=passive_fiber_strain_at_one_norm_force,
            activation_time_constant=activation_time_constant, deactivation_time_constant=deactivation_time_constant,
            activation_dynamics_smoothing=activation_dynamics_smoothing, fiber_damping=fiber_damping,
            minimum_activation=minimum_activation), tendon_compliance)
        self.body = body
        self.tendon_compliance = tendon_compliance
        self.length = _check_length(name, body, length)
        self.prescribed_motion = _check_motion(name, body, prescribed_motion)
        P = self.params
        self._activation_dynamics()
        self._path(body)
        self.normalized_tendon_force = None
        if tendon_compliance == "rigid":
            norm_force = self._rigid()
        else:
            self.normalized_tendon_force = self.state("normalized_tendon_force", bounds=(0.0, MAX_NORM_TENDON_FORCE))
            norm_force = self.normalized_tendon_force
            (self._explicit if tendon_compliance == "explicit" else self._implicit)()
        self.tension = P["max_isometric_force"] * norm_force
        self.generalized_force = self.moment_arms * self.tension
        if self.prescribed_motion is None:
            body.apply_generalized_force(name, self.generalized_force)
        # columns of every solution and result file, drawn with the excitation and states by `colloc plot`
        for key in ("fiber_length", "normalized_fiber_length", "normalized_fiber_velocity", "tension"):
            self.output(key, getattr(self, key))

    def _activation_dynamics(self):
        """Control ``excitation`` e ∈ [0, 1], state ``activation`` a ∈ [a_min, 1] with ȧ of De Groote et al."""
        P = self.params
        self.excitation = self.control("excitation", bounds=(0.0, 1.0))
        self.activation = self.state("activation", bounds=(P["minimum_activation"], 1.0))
        self.derivative(self.activation, activation_rate(
            self.excitation, self.activation, P["activation_time_constant"], P["deactivation_time_constant"],
            P["activation_dynamics_smoothing"]))

    def _path(self, body):
        """Lengthening speed l̇_MT = (∂l/∂q) N v + ∂l/∂t and moment arms −Nᵀ(∂l/∂q)ᵀ; on a prescribed
        motion q_ref(t), l_MT(q_ref(t), t), its time derivative and the arms at q_ref(t), functions of t only."""
        path_jacobian = ca.mtimes(ca.jacobian(self.length, body.q), body.kinematic_matrix)  # (1, nv)
        self.moment_arms = -path_jacobian.T
        if self.prescribed_motion is None:
            self.lengthening_speed = ca.mtimes(path_jacobian, body.v) + ca.jacobian(self.length, TIME)
            return
        self.length = ca.substitute(self.length, body.q, self.prescribed_motion)
        self.moment_arms = ca.substitute(self.moment_arms, body.q, self.prescribed_motion)
        self.lengthening_speed = ca.jacobian(self.length, TIME)

    # -- curves with this muscle's constants ----------------------------------------------------
    def active_force_length(self, norm_fiber_length):
        """f_L(l̃_M); see :func:`active_force_length`."""
        return active_force_length(norm_fiber_length)

    def passive_force_length(self, norm_fiber_length):
        """f_PE(l̃_M) with this muscle's e₀; see :func:`passive_force_length`."""
        return passive_force_length(norm_fiber_length, self.params["passive_fiber_strain_at_one_norm_force"])

    def force_velocity(self, norm_fiber_velocity):
        """f_V(ṽ_M); see :func:`force_velocity`."""
        return force_velocity(norm_fiber_velocity)

    def force_velocity_inverse(self, multiplier):
        """ṽ_M with f_V(ṽ_M) = multiplier; see :func:`force_velocity_inverse`."""
        return force_velocity_inverse(multiplier)

    def tendon_force_length(self, norm_tendon_length):
        """f_T(l̃_T) with this muscle's ε₀; see :func:`tendon_force_length`."""
        return tendon_force_length(norm_tendon_length, self.params["tendon_strain_at_one_norm_force"])

    def tendon_force_length_inverse(self, norm_tendon_force):
        """l̃_T with f_T(l̃_T) = F̃_T; see :func:`tendon_force_length_inverse`."""
        return tendon_force_length_inverse(norm_tendon_force, self.params["tendon_strain_at_one_norm_force"])

    # -- geometry and the three tendon forms ----------------------------------------------------
    def fiber_geometry(self, tendon_length):
        """Fixed-width pennation: ``(l_M, cos α)`` for a tendon length l_T, l_M = √((l_MT − l_T)² + w²)."""
        along = self.length - tendon_length
        width = self.params["optimal_fiber_length"] * math.sin(self.params["pennation_angle_at_optimal"])
        if width == 0.0:
            return along, 1.0
        fiber = ca.sqrt(along ** 2 + width ** 2)
        return fiber, along / fiber

    def _fiber_force(self, norm_fiber_length, norm_fiber_velocity):
        """Normalized fiber force a f_L f_V + f_PE + β ṽ."""
        return (self.activation * self.active_force_length(norm_fiber_length) * self.force_velocity(norm_fiber_velocity)
                + self.passive_force_length(norm_fiber_length) + self.params["fiber_damping"] * norm_fiber_velocity)

    def _set_fiber(self, fiber_length, cos_alpha, fiber_speed):
        P = self.params
        self.fiber_length, self.cos_pennation = fiber_length, cos_alpha
        self.normalized_fiber_length = fiber_length / P["optimal_fiber_length"]
        self.normalized_fiber_velocity = fiber_speed / (P["max_contraction_velocity"] * P["optimal_fiber_length"])

    def _rigid(self):
        """l_T = l_s: l̇_M = cos α l̇_MT; F̃_T = (a f_L f_V + f_PE + β ṽ) cos α."""
        fiber, cos_alpha = self.fiber_geometry(self.params["tendon_slack_length"])
        self._set_fiber(fiber, cos_alpha, cos_alpha * self.lengthening_speed)
        return self._fiber_force(self.normalized_fiber_length, self.normalized_fiber_velocity) * cos_alpha

    def _tendon(self):
        """Tendon length from F̃_T and dl_T/dF̃_T = l_s / (k_T (F̃_T + c₃)) (from the inverse curve)."""
        P, force = self.params, self.normalized_tendon_force
        tendon = P["tendon_slack_length"] * self.tendon_force_length_inverse(force)
        compliance = P["tendon_slack_length"] / (tendon_stiffness_factor(P["tendon_strain_at_one_norm_force"]) * (force + TENDON[2]))
        return tendon, compliance

    def _explicit_rate(self):
        """f_V = (F̃_T / cos α − f_PE)/(a f_L) → ṽ → l̇_T = l̇_MT − l̇_M / cos α → dF̃_T/dt = l̇_T / (dl_T/dF̃_T).

        Returns ``(dF̃_T/dt, l_M, cos α, l̇_M)``.
        """
        P = self.params
        tendon, compliance = self._tendon()
        fiber, cos_alpha = self.fiber_geometry(tendon)
        norm_length = fiber / P["optimal_fiber_length"]
        f_v = ((self.normalized_tendon_force / cos_alpha - self.passive_force_length(norm_length))
               / (self.activation * self.active_force_length(norm_length)))
        fiber_speed = self.force_velocity_inverse(f_v) * P["max_contraction_velocity"] * P["optimal_fiber_length"]
        return (self.lengthening_speed - fiber_speed / cos_alpha) / compliance, fiber, cos_alpha, fiber_speed

    def _explicit(self):
        rate, fiber, cos_alpha, fiber_speed = self._explicit_rate()
        self._set_fiber(fiber, cos_alpha, fiber_speed)
        self.derivative(self.normalized_tendon_force, rate)

    def _implicit(self):
        """l̇_T = (dl_T/dF̃_T) dF̃_T/dt, l̇_M = cos α (l̇_MT − l̇_T); residual F̃_T − (a f_L f_V + f_PE + βṽ) cos α.

        Without damping the explicit form's rate is given as the residual's equivalent, so forward
        simulation integrates an ODE (the equilibrium solved through the inverse force–velocity curve).
        """
        tendon, compliance = self._tendon()
        fiber, cos_alpha = self.fiber_geometry(tendon)
        force_rate = self.dot(self.normalized_tendon_force)
        self._set_fiber(fiber, cos_alpha, cos_alpha * (self.lengthening_speed - compliance * force_rate))
        equilibrium = self.normalized_tendon_force - self._fiber_force(self.normalized_fiber_length, self.normalized_fiber_velocity) * cos_alpha
        explicit = self._explicit_rate()[0] if self.params["fiber_damping"] == 0.0 else None
        self.residual(self.normalized_tendon_force, equilibrium, explicit=explicit)

    @property
    def rest(self) -> ca.SX:
        """Rows that vanish when the muscle is at rest at the current length (for boundary conditions).

        ``e − a`` (ȧ = 0) and, for a compliant tendon, the equilibrium at zero fiber velocity
        ``F̃_T − (a f_L + f_PE) cos α`` (so that dF̃_T/dt = 0 when l̇_MT = 0); states and controls only.
        """
        rows = [self.excitation - self.activation]
        if self.normalized_tendon_force is not None:
            l = self.normalized_fiber_length
            static = (self.activation * self.active_force_length(l) + self.passive_force_length(l)) * self.cos_pennation
            rows.append(self.normalized_tendon_force - static)
        return ca.vertcat(*rows)


def _check_parameters(name, params, mode):
    if mode not in COMPLIANCE_MODES:
        raise ModelError(f"Unknown tendon_compliance {mode!r} of muscle `{name}`; use one of {', '.join(COMPLIANCE_MODES)}.")
    for key in ("max_isometric_force", "optimal_fiber_length", "tendon_slack_length"):
        if params[key] is None:
            raise ModelError(f"Muscle `{name}` needs `{key}`.")
    for key, value in params.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise ModelError(f"`{key}` of muscle `{name}` must be a finite number; got {value!r}.")
    params = {k: float(v) for k, v in params.items()}
    for key, value in params.items():
        if key in ("pennation_angle_at_optimal", "fiber_damping"):
            continue
        if key == "minimum_activation":
            if not 0.0 <= value < 1.0:
                raise ModelError(f"`minimum_activation` of muscle `{name}` must be in [0, 1); got {value}.")
        elif value <= 0.0:
            raise ModelError(f"`{key}` of muscle `{name}` must be positive; got {value}.")
    alpha = params["pennation_angle_at_optimal"]
    if not 0.0 <= alpha < math.pi / 2:
        raise ModelError(f"`pennation_angle_at_optimal` of muscle `{name}` must be in [0, π/2) rad (below 90°); got {alpha} rad.")
    if params["fiber_damping"] < 0.0:
        raise ModelError(f"`fiber_damping` of muscle `{name}` must not be negative; got {params['fiber_damping']}.")
    if params["fiber_damping"] > 0.0 and mode == "explicit":
        raise ModelError(f"Muscle `{name}` has fiber_damping > 0, which the explicit tendon form cannot invert; use tendon_compliance 'implicit'.")
    return params


def _check_length(name, body, length):
    from .multibody import Multibody

    if not isinstance(body, Multibody):
        raise ModelError(f"`body` of muscle `{name}` must be a colloc.Multibody; got {type(body).__name__}.")
    try:
        expr = ca.SX(length)
    except (NotImplementedError, TypeError, RuntimeError):
        raise ModelError(f"`length` of muscle `{name}` must be a CasADi SX expression of `{body.name}`'s coordinates; got {type(length).__name__}.") from None
    if expr.numel() != 1:
        raise ModelError(f"`length` of muscle `{name}` must be a scalar; got shape {expr.shape}.")
    if not ca.depends_on(expr, body.q):
        raise ModelError(f"`length` of muscle `{name}` does not depend on the coordinates of `{body.name}`, so the muscle cannot act on it.")
    if ca.depends_on(expr, ca.vertcat(body.v, body.a)):
        raise ModelError(f"`length` of muscle `{name}` depends on the speeds of `{body.name}`; a path length is a function of the coordinates and time.")
    return expr


def _check_motion(name, body, motion):
    """q_ref(t) as an (nq, 1) SX column of time alone, or None."""
    if motion is None:
        return None
    try:
        expr = ca.vec(ca.SX(motion))
    except (NotImplementedError, TypeError, RuntimeError):
        raise ModelError(f"`prescribed_motion` of muscle `{name}` must be a CasADi SX expression of time; got {type(motion).__name__}.") from None
    if expr.numel() != body.q.numel():
        raise ModelError(f"`prescribed_motion` of muscle `{name}` needs one row per coordinate of `{body.name}` ({body.q.numel()}); got {expr.numel()}.")
    others = [s.name() for s in ca.symvar(expr) if not ca.is_equal(s, TIME)]
    if others:
        raise ModelError(f"`prescribed_motion` of muscle `{name}` must be a function of time alone; it uses `{others[0]}`.")
    return expr


def muscles_of(model) -> list:
    """The muscles among a Model's (or Problem's) components, in model order."""
    model = getattr(model, "model", model)
    return [c for c in model.components if isinstance(c, DeGrooteFregly2016Muscle)]


def add_muscle_outputs(trajectory, problem):
    """A copy of ``trajectory`` with the model's output columns (:func:`colloc.model.derived.add_outputs`).

    Solutions already carry them; this recomputes them on a trajectory read from a
    file written without them.
    """
    from .derived import add_outputs

    return add_outputs(trajectory, problem)


__all__ = ["DeGrooteFregly2016Muscle", "active_force_length", "passive_force_length", "force_velocity",
           "force_velocity_inverse", "tendon_force_length", "tendon_force_length_inverse", "tendon_stiffness_factor",
           "activation_rate", "add_muscle_outputs", "muscles_of"]
