"""Results of multi-phase solves: a Trajectory per phase and their concatenation.

:class:`PhasedTrajectory` is a :class:`~colloc.Trajectory` whose rows are the
phases' grid points one phase after the other (a junction's time appears
twice: end of one phase, start of the next) with a ``phase`` column holding
the phase index, so plots, CSV and NPZ files work unchanged.  Columns a phase
does not have are NaN there.  ``traj(t)`` and ``sample`` interpolate inside
the phase that contains ``t`` with that phase's scheme (at a junction, the
later phase).  :meth:`PhasedTrajectory.split` recovers the phases from a
concatenated trajectory read back from a file.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from ..discretization.grid import locate
from ..errors import FileFormatError, did_you_mean
from .trajectory import SolveResult, Trajectory

#: Kind of the ``phase`` column (not a state, control or multiplier; not plotted).
PHASE_KIND = "phase"


class PhasedTrajectory(Trajectory):
    """The phases of a multi-phase solution, concatenated in time.

    Parameters
    ----------
    phases : list of Trajectory
        One per phase, in (global) time order.
    names : list of str
        Phase names.
    metadata : dict, optional
        Merged with ``phases``: ``[{name, scheme, intervals, start, duration}]``.
    """

    def __init__(self, phases, names, metadata=None):
        if len(phases) != len(names) or not phases:
            raise FileFormatError("A PhasedTrajectory needs one name per phase and at least one phase.")
        self.phases, self.phase_names = list(phases), list(names)
        columns, kinds = [], {}
        for p in phases:
            for n in p.names:
                if n not in kinds:
                    columns.append(n)
                    kinds[n] = p.kinds.get(n, "state")
        time = np.concatenate([p.time for p in phases])
        data = {"phase": np.concatenate([np.full(p.time.size, float(i)) for i, p in enumerate(phases)])}
        kinds["phase"] = PHASE_KIND
        for n in columns:
            data[n] = np.concatenate([p[n] if n in p else np.full(p.time.size, np.nan) for p in phases])
        params = {}
        for p in phases:
            params.update(p.parameters)
        meta = dict(metadata or {})
        meta["scheme"] = "multi-phase"
        meta["phases"] = [dict(name=nm, scheme=p.metadata.get("scheme"), intervals=p.metadata.get("intervals"),
                               start=float(p.time[0]), duration=float(p.time[-1] - p.time[0]))
                          for nm, p in zip(names, phases)]
        super().__init__(time, data, kinds, params, meta)

    def phase(self, key) -> Trajectory:
        """One phase's Trajectory, by index or name."""
        if isinstance(key, str):
            if key not in self.phase_names:
                raise KeyError(f"No phase `{key}`.{did_you_mean(key, self.phase_names)}")
            key = self.phase_names.index(key)
        return self.phases[key]

    @property
    def start_times(self) -> np.ndarray:
        return np.array([p.time[0] for p in self.phases])

    @property
    def durations(self) -> np.ndarray:
        return np.array([p.time[-1] - p.time[0] for p in self.phases])

    def sample(self, times) -> dict:
        """Every column at ``times``, each inside its phase with that phase's interpolant."""
        times = np.clip(np.asarray(times, dtype=float).ravel(), self.time[0], self.time[-1])
        which, _ = locate(np.append(self.start_times, self.time[-1]), times)
        out = {n: np.full(times.size, np.nan) for n in self.names}
        out["phase"] = which.astype(float)
        for i, p in enumerate(self.phases):
            sel = which == i
            if sel.any():
                for n, v in p.sample(times[sel]).items():
                    out[n][sel] = v
        return out

    def write(self, path) -> str:
        """As :meth:`Trajectory.write`; a ``.sto`` file leaves out the ``phase`` column (phases stay in the metadata)."""
        if os.path.splitext(os.fspath(path))[1].lower() == ".sto":
            cols = {n: self[n] for n in self.names if n != "phase"}
            return Trajectory(self.time, cols, {n: self.kinds[n] for n in cols}, self.parameters, self.metadata).write(path)
        return super().write(path)

    @classmethod
    def split(cls, traj) -> "PhasedTrajectory":
        """The phases of a concatenated trajectory (e.g. read from a file) with a ``phase`` column."""
        if isinstance(traj, PhasedTrajectory):
            return traj
        idx = traj["phase"] if "phase" in traj else _phase_index(traj)
        info = traj.metadata.get("phases") or []
        count = int(np.nanmax(idx)) + 1
        phases, names = [], []
        for i in range(count):
            sel = idx == i
            if not sel.any():
                raise FileFormatError(f"Phase {i} has no rows in this trajectory.")
            cols = {n: traj[n][sel] for n in traj.names if n != "phase" and not np.isnan(traj[n][sel]).all()}
            meta = {k: v for k, v in traj.metadata.items() if k != "phases"}
            pinfo = info[i] if i < len(info) else {}
            meta.update(scheme=pinfo.get("scheme"), intervals=pinfo.get("intervals"))
            phases.append(Trajectory(traj.time[sel], cols, {n: traj.kinds.get(n, "state") for n in cols}, traj.parameters, meta))
            names.append(pinfo.get("name", f"phase{i}"))
        meta = {k: v for k, v in traj.metadata.items() if k not in ("phases", "scheme")}
        return cls(phases, names, meta)


def _phase_index(traj) -> np.ndarray:
    """The phase of each row of a file without a ``phase`` column (``.sto`` leaves it out), from the phases its
    metadata lists: each phase has ``intervals × stride + 1`` rows of its scheme, in order."""
    from ..discretization.schemes import get_scheme

    which = f"`{traj.source}`" if getattr(traj, "source", None) else "This trajectory"
    info = traj.metadata.get("phases")
    if not isinstance(info, list) or not info:
        raise FileFormatError(f"{which} has no `phase` column; it is not the result of a multi-phase solve.")
    try:
        counts = [int(p["intervals"]) * get_scheme(p["scheme"]).stride + 1 for p in info]
    except Exception:  # noqa: BLE001  metadata written by hand or by another program
        raise FileFormatError(f"{which} has no `phase` column and its `phases` metadata does not give each phase's "
                              "scheme and intervals.") from None
    if sum(counts) != traj.time.size:
        raise FileFormatError(f"{which} has no `phase` column, and its {traj.time.size} rows are not the "
                              f"{sum(counts)} its `phases` metadata lists.")
    return np.repeat(np.arange(len(counts), dtype=float), counts)


@dataclass(frozen=True)
class MultiPhaseResult(SolveResult):
    """:class:`SolveResult` of a multi-phase solve.

    ``trajectory`` is the concatenated :class:`PhasedTrajectory`; ``phases``
    one Trajectory per phase (global time); ``links`` the values of the link
    variables (post-impact speeds ``…v+`` and impulses ``…P``) by block name.
    """

    phases: list = field(default_factory=list)
    phase_names: list = field(default_factory=list)
    links: dict = field(default_factory=dict)

    def phase(self, key) -> Trajectory:
        return self.trajectory.phase(key)

    @property
    def durations(self) -> np.ndarray:
        return self.trajectory.durations

    @property
    def start_times(self) -> np.ndarray:
        return self.trajectory.start_times

    def summary(self) -> str:
        lines = super().summary().splitlines()
        extra = []
        for info in self.trajectory.metadata.get("phases", []):
            extra.append(f"  phase {info['name']:14s} {info['scheme']}, {info['intervals']} intervals, "
                         f"t = {info['start']:.8g} … {info['start'] + info['duration']:.8g} (duration {info['duration']:.8g})")
        return "\n".join(lines[:3] + extra + lines[3:])


__all__ = ["PhasedTrajectory", "MultiPhaseResult", "PHASE_KIND"]
