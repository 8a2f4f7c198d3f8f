"""The declarations of contact-implicit handlings: what each supports, checked before anything is built.

A contact handling is an :class:`colloc.transcription.extension.Extension` (the protocol the constraint
methods implement too) that also declares the forces it can place and the contacts it can take.  Each
transcription kind points at its own (:attr:`colloc.transcription.registry.Kind.contact_hooks`: collocation's
:class:`colloc.transcription.contacts.ContactRows`, midpoint-vi's
:class:`colloc.transcription.contact_vi.ContactVIRows`); the option checks read the declarations.

Class attributes
----------------
transcriptions : tuple of str
    The transcription kind whose hooks it implements (``("collocation",)``, ``("midpoint-vi",)``).
placements : tuple of str
    Where its forces may act (``contact_forces=``; :mod:`colloc.transcription.force_points`).
restitution : bool
    Whether impacts may restitute (``e > 0``); otherwise every impact is plastic.
curved_friction : bool
    Whether friction may act along a tangent without a tangential position (a curved surface).
"""
from __future__ import annotations

from ..errors import OptionError
from .extension import Extension


class ContactHooks(Extension):
    """Base of every contact handling; see the module docstring for the declarations."""

    capabilities = ("transcriptions", "placements", "restitution", "curved_friction")
    placements = ()
    restitution = False
    curved_friction = False

    @classmethod
    def check(cls, contacts, placement):
        """Refuse, with one sentence, a contact or a placement the class does not declare it supports."""
        name = cls.transcriptions[0]
        if placement not in cls.placements:
            raise OptionError(f"contact_forces='{placement}' does not apply to the {name} transcription; "
                              f"its placements: {', '.join(repr(p) for p in cls.placements)}.")
        for c in contacts:
            if c.friction > 0 and c.tangent is None and not cls.curved_friction:
                raise OptionError(f"Contact `{c.name}` has friction on a curved surface, whose tangential positions do not exist, but the "
                                  f"contact-implicit {name} equations need them; use a collocation scheme.")
            if c.restitution != 0 and not cls.restitution:
                raise OptionError(f"Contact `{c.name}` has restitution {c.restitution:g}, but the contact-implicit {name} "
                                  "equations make every impact plastic; declare it with restitution=0 or use a collocation scheme.")
