"""Moco's ``MocoInverse`` on a colloc model: muscle excitations (and reserves) that reproduce a measured motion.

The coordinates are prescribed from a table (no skeleton states: every muscle's path length, lengthening
speed and moment arms become functions of time, ``DeGrooteFregly2016Muscle(prescribed_motion=...)``), and
the skeleton's equations of motion are a path constraint at every collocation point:

    Σ_m r_m(q_ref) F_T,m + F_opt · u_reserve − ID(t) = 0,   ID(t) = M(q_ref) q̈_ref + c(q_ref, q̇_ref, t) − τ_other

with ID the skeleton's inverse dynamics on the splined motion (``Multibody.inverse_dynamics_function``).
The costs are MocoInverse's (``MocoInverse::initializeInternal``):

* ``excitation_effort``: ``MocoControlGoal``, ∫ Σ e_m² + w_r Σ u_reserve² dt (w_r = ``reserves_weight``);
* ``auxiliary_derivatives``: 0.01 ∫ Σ (dF̃_T,m/dt)² dt for implicit tendons (Moco's
  ``minimize_implicit_auxiliary_derivatives`` with ``implicit_auxiliary_derivatives_weight = 0.01``);
* ``initial_activation``: ``MocoInitialActivationGoal``, e_m(t0) = a_m(t0) (an end-point constraint);
* with ``minimize_sum_squared_activations``, ``activation_effort``: ∫ Σ a_m² dt;

and its reserves are ModelFactory's: a ``CoordinateActuator`` per coordinate, ``reserve_<coordinate>``,
optimal force F_opt, control unbounded.  Moco's mesh is one interval per ``mesh_interval`` seconds
(0.02 s by default): :func:`inverse_intervals`.  Moco also leaves the midpoint controls free
(``interpolate_control_mesh_interior_points = false``), which is colloc's default.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import casadi as ca
import numpy as np

from ..errors import ProblemError, did_you_mean
from ..model.component import TIME, Component
from ..model.multibody import Multibody
from ..model.muscle import DeGrooteFregly2016Muscle
from ..model.problem import Problem
from .effort import control_effort, initial_activation
from .tracking import add_integral_goal

AUXILIARY_DERIVATIVES_WEIGHT = 0.01


@dataclass
class PrescribedMotion:
    """A body's coordinates as splines of time from table columns.

    Attributes
    ----------
    body : Multibody
    q, v, a : casadi.SX, shape (nq, 1)
        q_ref(t), its first and second time derivatives (functions of ``colloc.TIME`` alone).
    t0, tf : float
        The table's first and last time.
    """

    body: Multibody
    q: ca.SX
    v: ca.SX
    a: ca.SX
    t0: float
    tf: float


def prescribed_motion(body, table, columns, method="bspline") -> PrescribedMotion:
    """Every coordinate of ``body`` from a table column (in radians for rotations).

    Parameters
    ----------
    body : Multibody
        With q̇ = v (no kinematic matrix), as Moco's PositionMotion requires.
    table : TimeTable
    columns : dict of (str or casadi.SX) to str
        Coordinate (symbol or full name, e.g. ``"leg.knee"``) → column label.
    """
    if not isinstance(body, Multibody):
        raise ProblemError(f"A prescribed motion needs a colloc.Multibody; got {type(body).__name__}.")
    if not body._is_identity_kinematics():
        raise ProblemError(f"Multibody `{body.name}` has q̇ ≠ v; a prescribed motion needs q̇ = v.")
    names, coords = _by_coordinate(body, columns,
                                   lambda k, cs: f"`{k}` is not a coordinate of `{body.name}` (its coordinates: {', '.join(cs)}).",
                                   lambda c: f"Coordinate `{c}` of `{body.name}` has no column; a prescribed motion gives every coordinate.")
    q = ca.vertcat(*[table.function(names[c], method)(TIME) for c in coords])
    v = ca.jacobian(q, TIME)
    return PrescribedMotion(body, q, v, ca.jacobian(v, TIME), float(table.time[0]), float(table.time[-1]))


def inverse_intervals(duration, mesh_interval=0.02) -> int:
    """Moco's mesh for a tool: ⌈duration / mesh_interval⌉ intervals (``MocoTool``)."""
    if not mesh_interval > 0:
        raise ProblemError(f"`mesh_interval` must be a positive number of seconds; got {mesh_interval!r}.")
    return max(1, math.ceil(duration / mesh_interval - 1e-9))


def inverse_problem(motion, muscles, reserves=1.0, reserves_weight=1.0, minimize_sum_squared_activations=False,
                    t0=None, tf=None, guess=True, name="inverse") -> Problem:
    """MocoInverse's problem: ``muscles`` on ``motion``, reserves per coordinate, its three goals (module notes).

    Parameters
    ----------
    motion : PrescribedMotion
    muscles : list of DeGrooteFregly2016Muscle
        Built with ``body=motion.body`` and ``prescribed_motion=motion.q``.
    reserves : float, dict or None
        Optimal force F_opt of each reserve actuator (N or N·m; Moco's ``ModOpAddReserves``), or a dict
        ``{coordinate name: F_opt}`` giving every coordinate its own (as CoordinateActuators added to the
        model before ``ModOpAddReserves``), or None for no reserves.
    reserves_weight : float
        w_r, MocoInverse's ``reserves_weight``.
    minimize_sum_squared_activations : bool
        Also minimize ∫ Σ a_m² dt (``activation_effort``; MocoInverse's option of that name, a
        ``MocoSumSquaredStateGoal`` on the activations, weight 1).
    t0, tf : float, optional
        The time range; default the table's.
    guess : bool
        Start from static optimization (``colloc.model.muscle_guess.static_optimization``).

    Returns
    -------
    Problem
        Its reserves component is ``reserves`` with controls ``reserve_<coordinate>``.
    """
    body = motion.body
    muscles = list(muscles)
    probe = np.linspace(motion.t0, motion.tf, 3)
    for m in muscles:
        if not isinstance(m, DeGrooteFregly2016Muscle) or m.body is not body or m.prescribed_motion is None \
                or not np.allclose(_at(m.prescribed_motion, probe), _at(motion.q, probe), rtol=0, atol=1e-12):
            raise ProblemError(f"Muscle `{getattr(m, 'name', m)}` must be a DeGrooteFregly2016Muscle on `{body.name}` "
                               "with prescribed_motion=motion.q.")
    if not muscles:
        raise ProblemError("An inverse problem needs at least one muscle (with reserves alone it is inverse dynamics: "
                           "`Multibody.inverse_dynamics`).")
    components, force = list(muscles), sum((m.generalized_force for m in muscles), ca.SX.zeros(body.num_speeds, 1))
    if reserves is not None:
        strength = _reserve_forces(body, reserves)
        actuator = Component("reserves")
        controls = ca.vertcat(*[actuator.control(f"reserve_{c.name().split('.', 1)[1]}") for c in body.coordinates])
        components.append(actuator)
        force = force + ca.DM(strength) * controls
    required = _inverse_dynamics(motion)
    t0 = motion.t0 if t0 is None else t0
    tf = motion.tf if tf is None else tf
    problem = Problem(components, t0=t0, tf=tf, name=name)
    problem.path(force - required, 0.0, 0.0, name="inverse_dynamics")
    weights = {v.name: reserves_weight for v in problem.model.controls if v.component == "reserves"}
    control_effort(problem, weights=weights, name="excitation_effort")
    implicit = [m for m in muscles if m.tendon_compliance == "implicit"]
    if implicit:
        rates = ca.vertcat(*[m.dot(m.normalized_tendon_force) for m in implicit])
        add_integral_goal(problem, ca.sumsqr(rates), "auxiliary_derivatives", AUXILIARY_DERIVATIVES_WEIGHT)
    if minimize_sum_squared_activations:
        add_integral_goal(problem, ca.sumsqr(ca.vertcat(*[m.activation for m in muscles])), "activation_effort")
    initial_activation(problem, muscles)
    if guess:
        from ..model.muscle_guess import static_optimization

        problem.guess(static_optimization(muscles, np.linspace(t0, tf, 101), required))
    return problem


def _by_coordinate(body, given, stranger, absent):
    """``given`` ``{coordinate or its name: value}`` keyed by name, and the body's coordinate names in order; a key
    that is no coordinate is refused with ``stranger(name, coordinates)``, a coordinate left out with ``absent(name)``."""
    coords = [c.name() for c in body.coordinates]
    named = {(k if isinstance(k, str) else k.name()): v for k, v in dict(given).items()}
    unknown = [k for k in named if k not in coords]
    if unknown:
        raise ProblemError(stranger(unknown[0], coords))
    missing = [c for c in coords if c not in named]
    if missing:
        raise ProblemError(absent(missing[0]))
    return named, coords


def _reserve_forces(body, reserves):
    """F_opt of each coordinate's reserve, in the body's coordinate order."""
    coords = [c.name() for c in body.coordinates]
    if isinstance(reserves, dict):
        given, _ = _by_coordinate(body, reserves,
                                  lambda k, cs: f"`{k}` in `reserves` is not a coordinate of `{body.name}`.{did_you_mean(k, cs)}",
                                  lambda c: f"Coordinate `{c}` has no reserve optimal force in `reserves`; give every coordinate one.")
        values = [given[c] for c in coords]
    else:
        values = [reserves] * len(coords)
    for c, v in zip(coords, values):
        if not (isinstance(v, (int, float)) and v > 0):
            raise ProblemError(f"The reserves' optimal force must be positive; got {v!r} for `{c}`.")
    return [float(v) for v in values]


def _at(expr, times):
    """A function of time alone at some times (to check that two motions are the same)."""
    return np.array(ca.Function("at", [TIME], [expr]).map(times.size)(times.reshape(1, -1)))


def _inverse_dynamics(motion):
    """ID(t): the skeleton's residual M a + c − τ on the prescribed motion (no other inputs allowed)."""
    body = motion.body
    others = body.other_symbols
    if others:
        raise ProblemError(f"The equations of `{body.name}` use `{others[0].name()}`, which a prescribed motion cannot "
                           "give; an inverse problem takes a skeleton whose only inputs are the muscles and reserves.")
    f = body.inverse_dynamics_function()
    return f(TIME, motion.q, motion.v, motion.a, ca.SX.zeros(body.multiplier_vector.numel(), 1), ca.SX(0, 1))


__all__ = ["PrescribedMotion", "prescribed_motion", "inverse_problem", "inverse_intervals"]
