"""Tracking goals: model quantities against table columns, as Moco's tracking goals define them.

Each function adds one ordinary cost term ``problem.minimize(integral=..., name=...)`` whose integrand is
written below with the Moco class it reproduces; the reference columns enter as smooth splines of the
time symbol (:meth:`colloc.goals.TimeTable.function`).  Moco's convention for every tracking goal: the
value is ``weight · ∫ integrand dt``, divided by the duration and/or the displacement when asked
(:mod:`colloc.goals.normalization`).  Moco splines references with a quintic ``GCVSpline``; colloc's
default is a cubic B-spline (cheaper on long tables; the two agree at the table's rows) and
``method="quintic"`` is Moco's spline (:mod:`colloc.goals.splines`).
"""
from __future__ import annotations

import math

import casadi as ca
import numpy as np

from ..errors import ProblemError
from ..model.component import TIME, as_sx
from .normalization import divisor

PROJECTIONS = ("none", "vector", "plane")


def _weights(weights, labels, goal):
    weights = dict(weights or {})
    unknown = [k for k in weights if k not in labels]
    if unknown:
        raise ProblemError(f"Goal `{goal}` has a weight for `{unknown[0]}`, which it does not track.")
    for k, w in weights.items():
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
            raise ProblemError(f"Weight of `{k}` in goal `{goal}` must be a finite number ≥ 0; got {w!r}.")
    return {k: float(weights.get(k, 1.0)) for k in labels}


def _scalar(expr, what):
    expr = as_sx(expr, what, ProblemError)
    if expr.numel() != 1:
        raise ProblemError(f"{what} must be a scalar; got shape {expr.shape}.")
    return expr


def add_integral_goal(problem, integrand, name, weight=1.0, divide_by_duration=False, divide_by_displacement=False,
                      normalization=None):
    """``problem.minimize(integral=weight · integrand / divisor)``: a Moco cost goal's value
    ``weight · (∫ integrand dt) / divisor`` (``MocoGoal::calcGoal``).  Returns the integrand added."""
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight):
        raise ProblemError(f"The weight of goal `{name}` must be a finite number; got {weight!r}.")
    scaled = weight * integrand / divisor(problem, divide_by_duration, divide_by_displacement, normalization, name)
    problem.minimize(integral=scaled, name=name)
    return scaled


def speed_label(label) -> str:
    """The speed column MocoTrack names after a coordinate's value column: ``…/value`` → ``…/speed``."""
    return (label[:-len("/value")] if label.endswith("/value") else label) + "/speed"


def track_states(problem, reference, states, weights=None, speeds=None, weight=1.0, scale_weights_with_range=False,
                 method="bspline", name="state_tracking",
                 divide_by_duration=False, divide_by_displacement=False, normalization=None):
    """State tracking, Moco's ``MocoStateTrackingGoal`` (and MocoTrack's ``track_reference_position_derivatives``).

    ``weight · ∫ Σᵢ wᵢ (xᵢ(t) − rᵢ(t))² dt`` over the tracked columns i, rᵢ the spline of column i.

    Parameters
    ----------
    problem : Problem
    reference : TimeTable
        In radians (convert with ``read_table(..., rotational=...)``).
    states : dict of str to casadi.SX
        Column label → the model expression tracking it (usually a state symbol).
    weights : dict of str to float, optional
        wᵢ per label (Moco's ``state_weights``); 1 for a label not given.  With
        ``scale_weights_with_range`` each is divided by its column's range max − min, as Moco does.
    speeds : dict of str to casadi.SX, optional
        Position column label → a speed expression, tracked as MocoTrack does when the table has no
        speed column: the position spline's derivative sampled at the table's rows, splined again (the
        column ``…/speed``, whose weight is ``weights["…/speed"]``, 1 if not given).
    weight : float
        The goal's weight (Moco's default 1).
    method : {"bspline", "natural", "quintic"}
        The spline of the references (``"quintic"`` is Moco's).
    divide_by_duration, divide_by_displacement, normalization
        Moco's normalisations (:func:`colloc.goals.normalization.divisor`).

    Returns
    -------
    casadi.SX
        The integrand added to the problem.
    """
    if not isinstance(states, dict) or not states:
        raise ProblemError(f"Goal `{name}` needs `states` as a non-empty dict {{column label: expression}}.")
    columns = {label: reference.function(label, method)(TIME) for label in states}
    samples = {}  # the speed columns MocoTrack appends: the position spline's derivative at the rows
    for label, expr in dict(speeds or {}).items():
        rate = ca.Function("rate", [TIME], [ca.jacobian(reference.function(label, method)(TIME), TIME)])
        samples[speed_label(label)] = np.array(rate.map(reference.time.size)(reference.time.reshape(1, -1))).ravel()
        speed_table = type(reference)(reference.time, {speed_label(label): samples[speed_label(label)]})
        columns[speed_label(label)] = speed_table.function(speed_label(label), method)(TIME)
        states = dict(states, **{speed_label(label): expr})
    w = _weights(weights, list(states), name)
    terms = []
    for label, expr in states.items():
        spread = np.ptp(samples[label] if label in samples else reference[label])
        wi = w[label] / (spread if scale_weights_with_range else 1.0)
        terms.append(wi * (_scalar(expr, f"The expression tracking `{label}`") - columns[label]) ** 2)
    return add_integral_goal(problem, ca.sum1(ca.vertcat(*terms)), name, weight,
                             divide_by_duration, divide_by_displacement, normalization)


def track_markers(problem, reference, markers, columns=None, weights=None, weight=1.0, method="bspline",
                  name="marker_tracking",
                  divide_by_duration=False, divide_by_displacement=False, normalization=None):
    """Marker (point) tracking, Moco's ``MocoMarkerTrackingGoal``: ``weight · ∫ Σₘ wₘ |pₘ(q) − rₘ(t)|² dt``.

    Parameters
    ----------
    markers : dict of str to casadi.SX, shape (d, 1)
        Marker name → its position in the model's coordinates (any point expression).
    columns : dict of str to list of str, optional
        Marker name → its d column labels; default ``NAME_1, NAME_2, NAME_3`` (the labels of a
        flattened OpenSim marker table).
    weights : dict of str to float, optional
        wₘ per marker (Moco: the MarkersReference's weights, 1 by default).
    """
    if not isinstance(markers, dict) or not markers:
        raise ProblemError(f"Goal `{name}` needs `markers` as a non-empty dict {{marker: position expression}}.")
    w = _weights(weights, list(markers), name)
    columns = dict(columns or {})
    terms = []
    for marker, point in markers.items():
        point = ca.vec(as_sx(point, f"The position of marker `{marker}`", ProblemError))
        labels = columns.get(marker, [f"{marker}_{i + 1}" for i in range(point.numel())])
        if len(labels) != point.numel():
            raise ProblemError(f"Marker `{marker}` has {point.numel()} coordinates but {len(labels)} reference columns.")
        target = ca.vertcat(*[reference.function(c, method)(TIME) for c in labels])
        terms.append(w[marker] * ca.sumsqr(point - target))
    return add_integral_goal(problem, ca.sum1(ca.vertcat(*terms)), name, weight,
                             divide_by_duration, divide_by_displacement, normalization)


def track_contact(problem, reference, groups, body_weight, weight=1.0, projection="none", projection_vector=None,
                  normalize_tracking_error=False, method="bspline", name="contact_tracking",
                  divide_by_duration=False, divide_by_displacement=False, normalization=None):
    """Contact-force tracking, Moco's ``MocoContactTrackingGoal``.

    For each group g, the model force F_g = Σ (its contact force vectors) is compared with the
    external-loads columns ``IDx, IDy, IDz`` of its force identifier: e = (F_g − r_g(t)) ⊘ n_g, with
    n_g the columns' peak magnitudes if ``normalize_tracking_error`` else 1, then projected:
    ``"none"`` e, ``"vector"`` (e·v̂) v̂, ``"plane"`` e − (e·v̂) v̂ (v̂ the unit ``projection_vector``).
    Value: ``weight · ∫ Σ_g |P e_g|² dt / (m |g|)``: Moco divides by the model's weight
    (``MocoContactTrackingGoal::calcGoalImpl``; by the mass alone in a model without gravity).

    Parameters
    ----------
    groups : list of (list of casadi.SX (3, 1), str)
        Per foot: the contact forces (in ground, e.g. of each sphere of a smooth contact) and the force
        identifier of the external loads (``"ground_force_r_v"`` for columns ``ground_force_r_vx`` …).
    body_weight : float
        m |g| (N), the model's total mass times the gravity's magnitude (Moco's denominator).
    """
    if isinstance(body_weight, bool) or not isinstance(body_weight, (int, float)) or not body_weight > 0 \
            or math.isinf(body_weight):
        raise ProblemError(f"`body_weight` of goal `{name}` must be a positive number (m |g|, N); got {body_weight!r}.")
    if projection not in PROJECTIONS:
        raise ProblemError(f"Unknown projection {projection!r} of goal `{name}`; use one of {', '.join(PROJECTIONS)}.")
    unit = None
    if projection != "none":
        if projection_vector is None:
            raise ProblemError(f"Goal `{name}` projects on a {projection} and needs a `projection_vector`.")
        v = np.asarray(projection_vector, dtype=float).ravel()
        if v.size != 3 or not np.isfinite(v).all() or np.linalg.norm(v) == 0:
            raise ProblemError(f"`projection_vector` of goal `{name}` must be 3 finite numbers, not all zero; got {projection_vector!r}.")
        unit = ca.DM(v / np.linalg.norm(v))
    if not groups:
        raise ProblemError(f"Goal `{name}` needs at least one contact group (forces, force identifier).")
    integrand = 0
    for forces, identifier in groups:
        if not forces:
            raise ProblemError(f"The contact group of `{identifier}` in goal `{name}` has no forces.")
        total = sum(ca.vec(as_sx(f, f"A contact force of `{identifier}`", ProblemError)) for f in forces)
        if total.numel() != 3:
            raise ProblemError(f"Contact forces of `{identifier}` must be 3-vectors; got {total.numel()} rows.")
        labels = [identifier + axis for axis in "xyz"]
        scale = [max(np.max(np.abs(reference[c])), 1e-300) if normalize_tracking_error else 1.0 for c in labels]
        error = (total - ca.vertcat(*[reference.function(c, method)(TIME) for c in labels])) / ca.DM(scale)
        if projection == "vector":
            error = ca.dot(error, unit) * unit
        elif projection == "plane":
            error = error - ca.dot(error, unit) * unit
        integrand = integrand + ca.sumsqr(error)
    return add_integral_goal(problem, integrand / body_weight, name, weight, divide_by_duration, divide_by_displacement,
                             normalization)


__all__ = ["track_states", "track_markers", "track_contact", "add_integral_goal", "speed_label"]
