"""Contacts that arrive at rest: the ``arrival`` rows of contact-implicit collocation without impulses.

Without impulses a rigid contact can close only at rest, but the transcription holds the gap at the grid points,
not between them, and the soft-landing rows a problem may add, ``ẏ² ≤ 2a(φ + δ)``, still allow ``√(2aδ)`` at the
relaxation's gap (1.4e-3 m/s at a = 100 m/s², δ = 1e-8 m): there an event-driven simulator started on the file
strikes the contact with an impulse the file lacks (``colloc verify``'s ``impact times``).  ``arrival=...``
(:class:`Arrival`) adds rows linear in the normal speed that make every contact arrive at the relaxation's gaps at
``v₀`` (docs/contacts.md, "Arriving at rest").
"""
from __future__ import annotations

from typing import NamedTuple

import casadi as ca
import numpy as np

from ..errors import OptionError

#: Row kind of the arrival rows (``arrival=...``), which the relaxation homotopy leaves alone.
ARRIVAL = "arrival"


class Arrival(NamedTuple):
    """``arrival`` of a contact-implicit solve without impulses: every contact reaches its surface at rest.

    At every grid point j, for every contact, ``−ẏ_j ≤ √(2a) φ⁺^{7/2}/(φ⁺ + φ₁)³ + c λ_{j−1}² + v₀`` (``ẏ`` the
    normal speed, ``φ⁺ = max(φ, 0)`` the gap, ``λ_{j−1}`` the normal force at the grid point before).

    * ``deceleration`` a [m/s²]: far from the surface (φ ≫ φ₁) the speed allowed is ``√(2aφ)``, a stop at a;
    * ``reach`` φ₁ [m]: within it the speed allowed falls as ``φ^{7/2}``, so a contact arrives at the relaxation's
      gaps (≈ ε/λ) at ``v₀`` rather than at ``√(2aφ)``: the speed at which an event-driven simulator, started on the
      state, strikes it with an impulse that a solve without impulses lacks (``√(2aφ)`` is 1.4e-3 m/s at
      a = 100 m/s², φ = 1e-8 m; with φ₁ = 1e-7 m this row allows 1.1e-6);
    * ``relief`` c [m/(s N²)]: a contact loaded at the point before may approach at ``c λ²``: the scheme's own
      normal speeds at the collocation points of a stance (the gap is held at points, not between them; 4e-4 m/s at
      15 N in a Solo12 trot's 16 ms intervals), small at small loads, so that a touch-down is not excused by the
      relaxation's compliance (a load λ at a gap up to ε/λ);
    * ``speed`` v₀ [m/s]: the approach speed always allowed.

    Linear in the speed, so the row stays regular where it binds (``ẏ² ≤ 2a(φ + δ)`` squared has a tolerance of
    ``√tol`` in speed)."""
    deceleration: float = 100.0
    reach: float = 1e-7
    relief: float = 4e-6
    speed: float = 1e-7

    @classmethod
    def of(cls, value, impacts=False):
        """``value`` (None, an Arrival, or a dict of its fields) checked, for a solve with ``impacts`` or without;
        None stays None."""
        if value is not None and impacts:
            raise OptionError("`arrival` makes every contact arrive at rest: it needs `impacts=False`.")
        if value is None or isinstance(value, cls):
            return value
        if not isinstance(value, dict) or set(value) - set(cls._fields):
            raise OptionError(f"`arrival` must be a dict with keys among {', '.join(cls._fields)}; got {value!r}.")
        out = cls(**value)
        for name, v in out._asdict().items():
            zero = name == "speed"
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 <= v < np.inf) or (not zero and v == 0):
                raise OptionError(f"`arrival`'s `{name}` must be a finite number {'≥' if zero else '>'} 0; got {v!r}.")
        return cls(*(float(v) for v in out))


def arrival_rows(rows, contact, V, gap, yd):
    """The rows of :class:`Arrival` (kind ``ARRIVAL``) at every grid point of ``contact``
    (:class:`colloc.transcription.contacts.ContactRows`): ``V`` the decision blocks, ``gap`` and ``yd`` the gaps and
    normal speeds on the grid (one row per contact, from the same mapped call as the ``gap`` rows)."""
    a, reach, relief, speed = contact.arrival
    ng = contact.grid.num_points
    force = contact._on_grid(V["cn"])
    before = force[:, [0] + list(range(ng - 1))]  # the force at the grid point before (the first point: its own)
    phi = ca.fmax(gap, 0.0)
    allowed = np.sqrt(2.0 * a) * phi ** 3.5 / (phi + reach) ** 3
    rows.add(ARRIVAL, contact._names("arrival"), -yd - allowed - relief * before ** 2, np.arange(ng), -np.inf, speed)
