"""The one extension protocol of the transcriptions: kinematic-constraint methods and contact handlings.

An extension adds variables, rows and cost terms to a transcription's NLP and columns to its result.  It is a
class that declares what it supports (:attr:`Extension.capabilities` names those declarations) and whose hooks
the transcription calls in a fixed order; the hooks keep nothing between calls: what one needs of another is
handed back to it (the interval ends :meth:`Extension.interval_ends` builds come back in :class:`At`).  Every
hook has a default that changes nothing, so an extension overrides only those it needs, and the transcriptions
call every extension the same way (``for ext in extensions: ext.add_rows(rows, V, at)``).

Registered extensions: the constraint methods of :data:`colloc.transcription.constraints.METHODS` (selected by
``constraint_method=``) and the contact handling each transcription kind points at
(:attr:`colloc.transcription.registry.Kind.contact_hooks`, selected by ``contact="implicit"``);
:func:`colloc.transcription.registry.extensions` lists them all.

Hooks, in the order the transcriptions call them (collocation calls all of them, midpoint-vi those marked *):

* ``add_variables(layout)`` *: the extension's variable blocks;
* ``guess(layout, warm)`` *: their guesses, from the model's (already filled) and from ``warm``, the warm
  start's columns the model does not take (a :class:`Warm`, or None);
* ``step_fractions(V)``: the interval fractions when the extension makes the steps variables, else None;
* ``generalized_forces(V, at)`` *: generalised forces the extension adds to the equations of motion at every
  point (collocation subtracts them from the residual, midpoint-vi adds them to the node forces), or None;
* ``interval_ends(ends, V, at, point)``: what closes each interval's defects, given what closes them so far;
* ``adjust_derivatives(F_nodes, V, at)``: the node derivatives the defects use;
* ``pointwise_rows(RES, ACC, ends)``: residual and acceleration-level values as their rows are imposed;
* ``acceleration_points()``: the grid points of the acceleration-level rows (None: every point);
* ``add_rows(rows, V, at)`` *: the extension's own rows;
* ``end_integrands(V, at, LQ)``: corrections of the integral costs for intervals ending on their own values;
* ``cost_terms(V, at)`` *: the extension's own cost terms;
* ``slacks(values)``: largest magnitude of each slack block in a solution;
* ``columns(values, times)`` *: trajectory columns of a solution (numeric; ``times`` of its points).
"""
from __future__ import annotations

from typing import NamedTuple


class At(NamedTuple):
    """What a transcription has built when it calls a hook (symbolic, one column per point).

    ``T`` times, ``X`` states (collocation) or coordinates (midpoint-vi), ``H`` interval lengths, ``XD`` state
    derivatives (collocation), ``ends`` what closes each interval (collocation,
    :class:`colloc.transcription.constraints.Ends`, set once the ends are built), ``speeds`` node speeds
    (midpoint-vi: ``Δq/h`` and the end speed).
    """

    T: object
    X: object
    H: object = None
    XD: object = None
    ends: object = None
    speeds: object = None


class Warm(NamedTuple):
    """The columns of a warm start that are not the model's variables (contact forces, impulses), on its times."""

    time: object
    columns: dict


class Extension:
    """Base of every extension: declarations and hooks that change nothing (module docstring)."""

    #: Names of the class attributes that declare what the extension supports (read by the option checks).
    capabilities = ("transcriptions",)
    #: Transcription kinds whose hooks it implements (names of :data:`colloc.transcription.registry.TRANSCRIPTIONS`).
    transcriptions = ()
    #: Whether the defects close on the grid's own node values (no hook replaces or adjusts them); collocation
    #: then writes every interval's defects as one sparse product.
    plain_nodes = True

    def add_variables(self, layout) -> None:
        """Add the extension's variable blocks to ``layout``."""

    def guess(self, layout, warm: Warm | None) -> None:
        """Fill the guesses of the extension's blocks from the model's (already filled) and from ``warm``."""

    def step_fractions(self, V):
        """The interval fractions ``σ`` (column, ``Σσ = 1``) when they are variables, else None (the mesh given)."""
        return None

    def generalized_forces(self, V, at: At):
        """Generalised forces added to the equations of motion at every point, or None (none)."""
        return None

    def interval_ends(self, ends, V, at: At, point):
        """What closes each interval's defects, given ``ends``, what closes them so far (default: unchanged)."""
        return ends

    def adjust_derivatives(self, F_nodes, V, at: At):
        """The node derivatives the defects use (one matrix per scheme node)."""
        return F_nodes

    def pointwise_rows(self, RES, ACC, ends):
        """Residual and acceleration-level values on every grid point, as their rows are imposed."""
        return RES, ACC

    def acceleration_points(self):
        """Grid points where the acceleration-level rows are imposed (None: every point)."""
        return None

    def add_rows(self, rows, V, at: At) -> None:
        """Add the extension's own constraint rows."""

    def end_integrands(self, V, at: At, LQ):
        """Corrections of the integral costs (one per cost, a column) for intervals that end on their own values,
        or None."""
        return None

    def cost_terms(self, V, at: At) -> dict:
        """The extension's own cost terms."""
        return {}

    def slacks(self, values) -> dict:
        """Largest magnitude of each slack block in a solution (for the result)."""
        return {}

    def columns(self, values, times) -> dict:
        """Trajectory columns of a solution at ``times``, the times of its points (numeric)."""
        return {}


#: The hooks of the protocol, in the order they are called: the names a transcription may call on an extension.
HOOKS = ("add_variables", "guess", "step_fractions", "generalized_forces", "interval_ends", "adjust_derivatives",
         "pointwise_rows", "acceleration_points", "add_rows", "end_integrands", "cost_terms", "slacks", "columns")
