"""Moco's goal normalisations (``divide_by_duration``, ``divide_by_displacement``) as colloc terms.

Moco divides a goal's value by the phase duration tf − t0 or by the displacement of the model's centre
of mass |r_com(tf) − r_com(t0)| (``MocoGoal::calcGoal``; ``calcSystemDisplacement``), then multiplies by
the goal's weight.  A colloc integrand sees only pointwise variables, so a divisor that is not a constant
(a free final time, or any displacement) is a parameter of a :class:`Normalization` component, tied to the
end points by boundary constraints.  With a fixed final time the duration is simply a number.
"""
from __future__ import annotations

import math

import casadi as ca

from ..errors import ProblemError
from ..model.component import Component, as_sx


class Normalization(Component):
    """Parameters ``NAME.duration`` (= tf − t0) and, given a centre of mass, ``NAME.displacement``
    (= |r(tf) − r(t0)|), for goals normalised as Moco's are.

    Include it in the model; a goal that needs it adds its boundary constraints (:meth:`constrain`).

    Parameters
    ----------
    name : str
    center_of_mass : casadi.SX, shape (3, 1) or (2, 1), optional
        The model's centre-of-mass position (or the point whose travel counts as the displacement) in
        the model's coordinates.
    """

    def __init__(self, name="normalization", center_of_mass=None):
        super().__init__(name)
        self.duration = self.parameter("duration", bounds=(1e-9, math.inf))
        self.center_of_mass = None
        self.displacement = None
        if center_of_mass is not None:
            self.center_of_mass = ca.vec(as_sx(center_of_mass, f"The centre of mass of `{name}`", ProblemError))
            self.displacement = self.parameter("displacement", bounds=(1e-9, math.inf))
        self._constrained = set()

    def constrain(self, problem) -> None:
        """Boundary constraints ``duration = tf − t0`` and ``displacement = |Δr|`` (once per problem)."""
        if id(problem) in self._constrained:
            return
        if self not in problem.model.components:
            raise ProblemError(f"Normalization `{self.name}` is not a component of problem `{problem.name}`; "
                               "include it in the model the problem is built from.")
        problem.boundary(self.duration - (problem.tf - problem.t0), name=f"{self.name}.duration")
        if self.displacement is not None:
            problem.boundary(self.displacement - displacement(problem, self.center_of_mass),
                             name=f"{self.name}.displacement")
        self._constrained.add(id(problem))


def displacement(problem, point) -> ca.SX:
    """|r(tf) − r(t0)| of a point expression (Moco's ``calcSystemDisplacement``), in end-point terms."""
    delta = problem.at_tf(point) - problem.at_t0(point)
    return ca.sqrt(ca.sumsqr(delta))


def divisor(problem, divide_by_duration, divide_by_displacement, normalization, goal):
    """The factor a goal's value is divided by: a number, or parameters of ``normalization``."""
    out = 1.0
    if divide_by_duration:
        if problem.free_final_time:
            out = out * _need(problem, normalization, goal, "duration").duration
        else:
            out = out * (problem.tf_bounds[0] - problem.t0_value)
    if divide_by_displacement:
        norm = _need(problem, normalization, goal, "displacement")
        if norm.displacement is None:
            raise ProblemError(f"Goal `{goal}` divides by the displacement, but Normalization `{norm.name}` was made "
                               "without a `center_of_mass`.")
        out = out * norm.displacement
    return out


def _need(problem, normalization, goal, what):
    if normalization is None:
        raise ProblemError(f"Goal `{goal}` divides by the {what}, which is not a constant here; add a "
                           "`colloc.goals.Normalization` to the model and pass it as `normalization=`.")
    if not isinstance(normalization, Normalization):
        raise ProblemError(f"`normalization` of goal `{goal}` must be a colloc.goals.Normalization; got "
                           f"{type(normalization).__name__}.")
    normalization.constrain(problem)
    return normalization


__all__ = ["Normalization", "displacement"]
