"""The transcriptions of a single-phase problem by name, each with what it declares.

The one place where a scheme name selects a transcription: ``scheme="midpoint-vi"`` is discrete mechanics
(:mod:`colloc.transcription.midpoint_vi`), every other name a collocation scheme of
:data:`colloc.discretization.schemes.SCHEMES` (:mod:`colloc.transcription.collocation`).  Code that must
know which kind a scheme or a file is asks :func:`by_scheme` or :func:`of_trajectory` for its declarations
(variational or collocation, whether it takes ``contact="implicit"``, how its controls are held) instead of
testing the name.  A multi-phase problem names its own transcription (``MultiPhaseProblem.transcription``).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..discretization.schemes import OTHER_SCHEMES
from .base import Transcription
from .collocation import Collocation
from . import constraints
from .contact_vi import ContactVIRows, ContactVITranscription
from .contacts import ContactCollocation, ContactRows
from .discrete_mechanics import SCHEME as MIDPOINT_VI
from .midpoint_vi import MidpointVITranscription


@dataclass(frozen=True)
class Kind:
    """What a transcription is.

    ``variational``: discrete mechanics (a discrete Lagrangian on mesh points; no collocation polynomial,
    no derivative variables, no interior controls), else collocation of the model's ODE/DAE.
    ``control_hold``: ``"scheme"`` (controls on the scheme's polynomial) or ``"zero-order"`` (held over each
    interval; the trajectory's ``metadata["control_hold"]`` says so too).
    ``smooth`` and ``contact`` build the transcription without and with ``contact="implicit"``;
    ``contact_hooks`` is the contact handling ``contact`` calls, an extension
    (:mod:`colloc.transcription.extension`) that declares what it supports.
    """

    name: str
    variational: bool
    control_hold: str
    smooth: type
    contact: type
    contact_hooks: type = None

    @property
    def contact_implicit(self) -> bool:
        """Whether the transcription takes ``contact="implicit"``."""
        return self.contact is not None

    def make(self, problem, scheme, intervals, mesh, **options) -> Transcription:
        """The transcription of ``problem`` (``options`` checked by it, nothing built)."""
        cls = self.contact if options.get("contact") is not None else self.smooth
        if self.variational:
            return cls(problem, intervals, mesh, **options)
        return cls(problem, scheme, intervals, mesh, **options)


COLLOCATION = Kind("collocation", variational=False, control_hold="scheme", smooth=Collocation, contact=ContactCollocation,
                   contact_hooks=ContactRows)
VARIATIONAL = Kind(MIDPOINT_VI, variational=True, control_hold=OTHER_SCHEMES[MIDPOINT_VI]["control_hold"], smooth=MidpointVITranscription,
                   contact=ContactVITranscription, contact_hooks=ContactVIRows)
#: Every transcription of a single-phase problem by the scheme names that select it (the collocation
#: schemes' names: :data:`colloc.discretization.schemes.SCHEMES`).
TRANSCRIPTIONS = {VARIATIONAL.name: VARIATIONAL, COLLOCATION.name: COLLOCATION}


#: The contact handling of each transcription kind, ``{name: class}``: read from :data:`TRANSCRIPTIONS`, not a
#: registry of its own.
CONTACT_HOOKS = {k.name: k.contact_hooks for k in TRANSCRIPTIONS.values() if k.contact_hooks is not None}


def extensions() -> dict:
    """Every registered extension, ``{name: class}``: the constraint methods (``constraint_method=``, and the
    plain hooks of a model without constraints) and each transcription's contact handling (``contact=``)."""
    out = {"constraint:none": constraints.Unconstrained}
    out.update({f"constraint:{name}": cls for name, cls in constraints.METHODS.items()})
    out.update({f"contact:{name}": cls for name, cls in CONTACT_HOOKS.items()})
    return out


def by_scheme(scheme) -> Kind:
    """The transcription a scheme name selects (a collocation scheme's name is checked when it is made)."""
    return TRANSCRIPTIONS[scheme] if isinstance(scheme, str) and scheme in TRANSCRIPTIONS and scheme != COLLOCATION.name \
        else COLLOCATION


def of_trajectory(traj) -> Kind | None:
    """The transcription that made ``traj`` (a Trajectory or its metadata), from the scheme it records (None:
    a file that names no scheme)."""
    scheme = (traj if isinstance(traj, dict) else traj.metadata).get("scheme")
    return None if scheme is None else by_scheme(scheme)


__all__ = ["Kind", "TRANSCRIPTIONS", "COLLOCATION", "VARIATIONAL", "CONTACT_HOOKS", "extensions", "by_scheme", "of_trajectory"]
