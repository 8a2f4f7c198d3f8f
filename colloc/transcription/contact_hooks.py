"""The extension protocol of contact-implicit transcriptions: declared capabilities, stateless hooks, a registry.

Like the kinematic-constraint methods (:mod:`colloc.transcription.constraints`), a contact handling is a
class that declares what it supports and whose hooks the transcription calls in a fixed order, each returning
what it builds (or adding rows and blocks to the container it is given) and keeping nothing between calls:
everything a later hook needs of an earlier one is handed back to it (collocation's interval ends,
:class:`colloc.transcription.contacts.ContactEnds`).  :data:`CONTACT_HOOKS` is the registry
``{transcription: class}``; the option checks read the declarations.

Class attributes
----------------
transcription : str
    The transcription whose hooks it implements (``"collocation"``, ``"midpoint-vi"``).
placements : tuple of str
    Where its forces may act (``contact_forces=``; :mod:`colloc.transcription.force_points`).
restitution : bool
    Whether impacts may restitute (``e > 0``); otherwise every impact is plastic.
curved_friction : bool
    Whether friction may act along a tangent without a tangential position (a curved surface).
"""
from __future__ import annotations

from ..errors import OptionError

#: Registry of contact handlings: ``{transcription: class}`` (filled by :func:`register`).
CONTACT_HOOKS = {}


class ContactHooks:
    """Base of every contact handling; see the module docstring for the declarations."""

    transcription = None
    placements = ()
    restitution = False
    curved_friction = False

    @classmethod
    def check(cls, contacts, placement):
        """Refuse, with one sentence, a contact or a placement the class does not declare it supports."""
        if placement not in cls.placements:
            raise OptionError(f"contact_forces='{placement}' does not apply to the {cls.transcription} transcription; "
                              f"its placements: {', '.join(repr(p) for p in cls.placements)}.")
        for c in contacts:
            if c.friction > 0 and c.tangent is None and not cls.curved_friction:
                raise OptionError(f"Contact `{c.name}` has friction on a curved surface, whose tangential positions do not exist, but the "
                                  f"contact-implicit {cls.transcription} equations need them; use a collocation scheme.")
            if c.restitution != 0 and not cls.restitution:
                raise OptionError(f"Contact `{c.name}` has restitution {c.restitution:g}, but the contact-implicit {cls.transcription} "
                                  "equations make every impact plastic; declare it with restitution=0 or use a collocation scheme.")


def register(cls):
    """Class decorator: add a :class:`ContactHooks` subclass to :data:`CONTACT_HOOKS` under its transcription."""
    CONTACT_HOOKS[cls.transcription] = cls
    return cls
