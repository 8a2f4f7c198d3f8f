"""Solved time histories (:class:`Trajectory`) and the result envelope (:class:`SolveResult`).

A Trajectory holds named columns on the solution grid, the static parameters
and a metadata block; ``traj(t)`` interpolates with the scheme's own
interpolant.  ``write``/``read`` round-trip exactly through CSV and NPZ; every
write is atomic (temporary file, then rename).
"""
from __future__ import annotations

import enum
import io
import json
import os
import unicodedata
from dataclasses import dataclass, field

import numpy as np

from ..errors import FileFormatError, did_you_mean
from .files import atomic_write, read_trajectory  # noqa: F401  (atomic_write: re-exported)
from ..discretization.interpolant import sample

KINDS = ("state", "control", "multiplier", "derivative", "slack", "output")  # output: derived, e.g. a muscle's fiber length


class Trajectory:
    """Named columns over time.

    Parameters
    ----------
    time : ndarray, shape (num_points,)
    columns : dict of str -> ndarray, shape (num_points,)
        Column order is kept.  Names: states and controls ``component.name``,
        derivatives ``component.name.dot``, multipliers ``component.constraint.lambda``.
    kinds : dict of str -> str
        One of ``state, control, multiplier, derivative, slack, output`` per column (``output``: a quantity
        derived from the others, such as a muscle's fiber length).
    parameters : dict of str -> float
    metadata : dict
        ``problem``, ``scheme``, ``intervals``, ``status``, ``objective`` … (JSON-serialisable).
    """

    def __init__(self, time, columns, kinds=None, parameters=None, metadata=None):
        self.time = np.asarray(time, dtype=float).ravel()
        self._columns = {k: np.asarray(v, dtype=float).ravel() for k, v in columns.items()}
        for k, v in self._columns.items():
            if v.shape != self.time.shape:
                raise FileFormatError(f"Column `{k}` has {v.size} values but there are {self.time.size} times.")
        self.kinds = dict(kinds or {k: "state" for k in self._columns})
        self.parameters = dict(parameters or {})
        self.metadata = dict(metadata or {})

    # -- access --------------------------------------------------------------------------------
    @property
    def names(self):
        return list(self._columns)

    def of_kind(self, kind):
        return [n for n in self._columns if self.kinds.get(n) == kind]

    def _key(self, key):
        if not isinstance(key, str):
            try:
                key = key.name()
            except AttributeError:
                raise KeyError(f"Index a trajectory by a name or a variable symbol, not {key!r}.") from None
        if key not in self._columns:
            raise KeyError(f"No column `{key}` in the trajectory.{did_you_mean(key, self._columns)}")
        return key

    def __getitem__(self, key) -> np.ndarray:
        return self._columns[self._key(key)]

    def __contains__(self, key):
        try:
            self._key(key)
            return True
        except KeyError:
            return False

    def value(self, key) -> np.ndarray:
        """The column of a variable (symbol or name)."""
        return self[key]

    def initial(self, key) -> float:
        return float(self[key][0])

    def final(self, key) -> float:
        return float(self[key][-1])

    @property
    def duration(self) -> float:
        return float(self.time[-1] - self.time[0])

    # -- interpolation -------------------------------------------------------------------------
    def __call__(self, t):
        """Values at time(s) ``t`` by the scheme's interpolant: ``{name: value or array}``."""
        scalar = np.ndim(t) == 0
        out = self.sample(np.atleast_1d(np.asarray(t, dtype=float)))
        return {k: float(v[0]) for k, v in out.items()} if scalar else out

    def sample(self, times) -> dict:
        """Every column at ``times`` (outside the span, held at the end values), each as it is held.

        See :func:`colloc.discretization.interpolant.sample`: the scheme's interpolant for collocation results,
        zero-order-held controls for ``midpoint-vi``, linear (with a warning) for a file from elsewhere.
        """
        return sample(self, times)

    # -- files ---------------------------------------------------------------------------------
    def write(self, path) -> str:
        """Write to ``.csv``, ``.sto`` (OpenSim/Moco) or ``.npz`` (by suffix), atomically; returns the path."""
        path = os.fspath(path)
        suffix = os.path.splitext(path)[1].lower()
        if suffix == ".csv":
            data = self._csv_text().encode()
        elif suffix == ".npz":
            buf = io.BytesIO()
            np.savez(buf, time=self.time, values=self._matrix(), names=np.array(self.names), meta=np.array(json.dumps(self._meta())))
            data = buf.getvalue()
        elif suffix == ".sto":
            data = self._sto_text().encode()
        else:
            raise FileFormatError(f"Cannot write `{path}`: unknown suffix `{suffix}`; use .csv, .sto or .npz.")
        atomic_write(path, data)
        return path

    def _matrix(self):
        return np.column_stack([self._columns[n] for n in self.names]) if self.names else np.zeros((self.time.size, 0))

    def _meta(self):
        return {"kinds": [self.kinds.get(n, "state") for n in self.names], "parameters": self.parameters, "metadata": self.metadata}

    def _csv_text(self):
        out = io.StringIO()
        out.write("# colloc trajectory\n")
        for k, v in self.metadata.items():
            out.write(f"# {k}: {json.dumps(v)}\n")
        out.write(f"# parameters: {json.dumps(self.parameters)}\n")
        out.write(f"# kinds: {json.dumps([self.kinds.get(n, 'state') for n in self.names])}\n")
        out.write(",".join(["time"] + self.names) + "\n")
        mat = np.column_stack([self.time, self._matrix()])
        for row in mat:
            out.write(",".join(repr(float(v)) for v in row) + "\n")
        return out.getvalue()

    def _sto_text(self):
        """OpenSim STO v3 in MocoTrajectory layout: time, states, controls, multipliers,
        derivatives, slacks, parameters (parameters in row 0, NaN below)."""
        order = [n for k in KINDS for n in self.of_kind(k)]
        other = [n for n in self.names if n not in order]
        if other:
            raise FileFormatError(f"Column `{other[0]}` has kind `{self.kinds.get(other[0])}`, which a .sto file cannot hold.")
        meta = self.metadata
        head = [meta.get("problem", "colloc"), "inDegrees=no"]
        head += [f"num_{k}s={len(self.of_kind(k))}" for k in ("state", "control")] + ["num_input_controls=0"]
        head += [f"num_{k}s={len(self.of_kind(k))}" for k in ("multiplier", "derivative", "slack")]
        head += [f"num_parameters={len(self.parameters)}"]
        if "success" in meta:
            head.append(f"success={'true' if meta['success'] else 'false'}")
        for key in ("status", "objective", "iterations"):
            if key in meta:
                head.append(f"{'num_iterations' if key == 'iterations' else key}={meta[key]}")
        head += ["DataType=double", "version=3", "OpenSimVersion=4.5",
                 f"colloc_metadata={json.dumps(meta)}", f"colloc_kinds={json.dumps([self.kinds[n] for n in order])}", "endheader"]
        cols = order + list(self.parameters)
        lines = ["\t".join(["time"] + cols)]
        for r in range(self.time.size):
            vals = [self.time[r]] + [self._columns[n][r] for n in order]
            vals += [self.parameters[p] if r == 0 else float("nan") for p in self.parameters]
            lines.append("\t".join(repr(float(v)) for v in vals))
        return "\n".join(head + lines) + "\n"

    @classmethod
    def read(cls, path) -> "Trajectory":
        """Read a file written by :meth:`write` (``.csv``, ``.sto`` or ``.npz``).

        Anything that is not a well-formed trajectory file raises :class:`FileFormatError` naming
        it (:func:`colloc.results.files.read_trajectory`).
        """
        traj = cls(*read_trajectory(path))
        traj.source = os.fspath(path)  # for messages about the file (not metadata: it is not written back)
        return traj

    def __repr__(self):
        return f"Trajectory({self.time.size} points, {len(self.names)} columns, t ∈ [{self.time[0]:g}, {self.time[-1]:g}])"




#: Kinematic constraint kinds and the symbol of each level (label suffix ``""``, ``.dot``, ``.ddot``).
_LEVELS = {"holonomic": ("φ", "φ̇", "φ̈"), "nonholonomic": ("ψ", "ψ̇", "ψ̈"), "acceleration": ("α", "α̇", "α̈")}


def level_of(label) -> str:
    """The kind of a constraint row label, with its level for kinematic constraints:
    ``nonholonomic:skate.blade.dot@k=3`` -> ``nonholonomic ψ̇``, ``path:speed`` -> ``path``."""
    kind, _, name = label.partition(":")
    if kind not in _LEVELS:
        return kind
    name = name.split("@", 1)[0].split("[", 1)[0]
    level = 2 if name.endswith(".ddot") else 1 if name.endswith(".dot") else 0
    return f"{kind} {_LEVELS[kind][level]}"


class Status(str, enum.Enum):
    """How a solve ended; ``message`` says what to try."""

    SOLVED = "solved"
    ACCEPTABLE = "acceptable"
    MAX_ITERATIONS = "max-iterations"
    INFEASIBLE = "infeasible"
    RESTORATION_FAILED = "restoration-failed"
    INVALID_NUMBER = "invalid-number"
    TIME_LIMIT = "time-limit"
    INTERRUPTED = "interrupted"
    UNBOUNDED = "unbounded"
    FAILED = "failed"


@dataclass(frozen=True)
class SolveResult:
    """The envelope of one solve.  A failed solve is data: ``trajectory`` holds the last iterate.

    Immutable: refinement, sweeps and the command line build new results
    (``dataclasses.replace``) instead of patching one.
    """

    trajectory: Trajectory
    success: bool
    status: Status
    message: str
    objective: float
    terms: dict
    iterations: int
    build_seconds: float
    solve_seconds: float
    violations: dict
    worst: list = field(default_factory=list)
    slacks: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    stats: dict = field(default_factory=dict, repr=False)
    nlp_size: dict = field(default_factory=dict)
    refinement: list | None = None  # one record per mesh iteration when solved with refine=
    interval_errors: np.ndarray | None = field(default=None, repr=False)
    accuracy: dict | None = None  # largest local error, where, objective error estimate (colloc.pipeline.accuracy)
    between_mesh_points: dict = field(default_factory=dict)  # kinematic constraint label -> largest |value| between mesh points
    contact: dict | None = None  # contact-implicit solves: complementarity per contact, schedule, impacts, homotopy steps
    optima: list | None = None  # multi-start: each distinct local optimum (objective, count, starts, trajectory), best first
    starts: list | None = None  # multi-start: every start's status and objective

    @property
    def max_violation(self) -> float:
        return max(self.violations.values(), default=0.0)

    def violation_by_kind(self) -> dict:
        out = {}
        for label, v in self.violations.items():
            kind = label.split(":", 1)[0]
            out[kind] = max(out.get(kind, 0.0), v)
        return out

    def violation_by_level(self) -> dict:
        """Largest violation per constraint kind, kinematic constraints per level (φ, φ̇, φ̈, ψ, ψ̇, α): ``{key: value}``
        with keys such as ``defect.hermite``, ``nonholonomic ψ``, ``nonholonomic ψ̇``."""
        out = {}
        for label, v in self.violations.items():
            key = level_of(label)
            out[key] = max(out.get(key, 0.0), v)
        return out

    def summary(self) -> str:
        meta = self.trajectory.metadata
        lines = [
            f"{meta.get('problem', 'problem')}: {self.status.value} — {self.message}",
            f"  objective  {self.objective:.10g}" + ("" if len(self.terms) <= 1 else "  (" + ", ".join(f"{k} {v:.6g}" for k, v in self.terms.items()) + ")"),
            f"  scheme     {meta.get('scheme')}, {meta.get('intervals')} intervals, {self.nlp_size.get('variables', '?')} variables, {self.nlp_size.get('constraints', '?')} constraints",
            f"  iterations {self.iterations}   build {self.build_seconds:.3f} s   solve {self.solve_seconds:.3f} s",
            f"  final time {self.trajectory.time[-1]:.8g}",
        ]
        if self.trajectory.parameters:
            lines.append("  parameters " + ", ".join(f"{k} = {v:.8g}" for k, v in self.trajectory.parameters.items()))
        if self.accuracy:
            lines.append("  accuracy   " + accuracy_line(self.accuracy))
            if self.accuracy.get("between"):
                lines.append("  limits     " + between_line(self.accuracy["between"]))
        if self.optima is not None:
            lines += self._optima_lines()
        between = {}
        for label, v in self.between_mesh_points.items():
            between[level_of(label)] = max(between.get(level_of(label), 0.0), v)
        for kind, v in sorted(self.violation_by_level().items()):
            text = f"{v:.2e}" if np.isfinite(v) else "non-finite (NaN or inf)"
            if kind in between:  # rows at mesh points only: say how well they hold between them
                text = f"{text} at mesh points, {between[kind]:.2e} largest between them"
            pad = 22 + sum(1 for ch in kind if unicodedata.combining(ch))  # ψ̇ is two code points, one column
            lines.append(f"  max violation {kind:{pad}s} {text}")
        for k, v in self.slacks.items():
            lines.append(f"  largest slack {k:22s} {v:.2e}")
        if self.refinement:
            lines.append("  mesh refinement: " + " → ".join(f"{r['intervals']} ({r['max_error']:.3e})" for r in self.refinement)
                         + "  intervals (max relative local error)")
            lines.append("  objective per mesh: " + " → ".join(f"{r['objective']:.8g}" for r in self.refinement)
                         + (f"  (last change {self.refinement[-1]['objective_change']:.1e} relative)"
                            if self.refinement[-1].get("objective_change") is not None else ""))
        if self.contact:
            lines += _contact_lines(self.contact)
        lines += [f"  warning: {headline(w)}" for w in self.warnings]
        if not self.success and self.worst:
            lines.append("  worst violated rows:")
            lines += [f"    {lab:40s} value {val:.3e}  " + (f"violation {vio:.3e}" if np.isfinite(vio) else "non-finite")
                      for lab, val, vio in self.worst[:5]]
        return "\n".join(lines)

    def _optima_lines(self) -> list:
        """Multi-start: each distinct local optimum with how many starts reached it."""
        run = self.trajectory.metadata.get("multistart", {})
        starts = self.starts or []
        failed = sum(1 for s in starts if s["status"] not in ("solved", "acceptable", "interrupted", "lost"))
        stopped = sum(1 for s in starts if s["status"] == "interrupted")
        lost = sum(1 for s in starts if s["status"] == "lost")
        lines = [f"  multi-start {len(starts)} starts (seed {run.get('seed', '?')}, {run.get('seconds', float('nan')):.1f} s): "
                 f"{len(self.optima)} distinct local optim{'um' if len(self.optima) == 1 else 'a'}"
                 + (f", {failed} start{'s' if failed != 1 else ''} did not converge" if failed else "")
                 + (f", {lost} lost (their worker process died)" if lost else "")
                 + (f", {stopped} interrupted" if stopped else "")]
        for i, o in enumerate(self.optima, start=1):
            lines.append(f"    optimum {i}: objective {o['objective']:.10g}, reached by {o['count']} start{'s' if o['count'] != 1 else ''} "
                         f"({', '.join(map(str, o['starts']))})" + ("  ← this result" if i == 1 else ""))
        return lines


def accuracy_line(acc) -> str:
    """The summary's accuracy line (:mod:`colloc.pipeline.accuracy`): largest local error and where, objective error estimate."""
    a, b = acc["time"]
    where = f" of phase {acc['phase']}" if acc.get("phase") else ""
    text = f"max relative local error {acc['max_error']:.1e} in interval {acc['interval']}{where} (t = {a:.4g} … {b:.4g})"
    if np.isfinite(acc.get("objective_error", np.nan)):
        text += f"; objective error ≈ {acc['objective_error']:+.2e} ({acc['relative_objective_error']:.1e} relative)"
    elif np.isfinite(acc.get("relative_objective_error", np.nan)):  # step doubling: the size only, not the sign
        text += f"; objective error ≈ {acc['relative_objective_error']:.1e} relative ({acc.get('method', 'estimated')})"
    if acc.get("method") == "smooth intervals":  # contact-implicit: what it covers, what it does not say
        text += f" of the {acc['smooth_intervals']} smooth intervals ({len(acc['excluded'])} with a switch or an impact left out; not a bound on the objective's error)"
    return text + ("  NOT RESOLVED" if acc.get("resolved") is False else "")


def between_line(worst) -> str:
    """The summary's line on bounds and path constraints between grid points (:mod:`colloc.simulate.limits`)."""
    if worst["excess"] <= 0:
        return f"every bound and path constraint holds between grid points ({worst['points']} points per interval)"
    return (f"worst between grid points: `{worst['name']}` {worst['value']:.6g} at t = {worst['time']:.6g}, bound "
            f"{worst['bound']:.6g} (excess {worst['relative']:.1e} relative)")


#: Longest warning the summary prints whole; longer ones are cut at a clause boundary (full text in ``warnings``).
WARNING_WIDTH = 300


def headline(text) -> str:
    """A warning on one summary line: whole if short, else its first clause (what) cut to fit and its last (the fix)."""
    text = " ".join(str(text).split())
    clauses = text.split("; ")
    if len(text) <= WARNING_WIDTH or len(clauses) < 2:
        return text
    first, last = clauses[0], clauses[-1]
    room = max(60, WARNING_WIDTH - len(last) - 6)
    if len(first) > room:
        first = first[:first.rfind(" ", 0, room)] + " …"
    return f"{first}; … {last} (full text: result.warnings)"


def _contact_lines(info) -> list:
    """Summary lines of a contact-implicit solve: relaxation, complementarity and schedule per contact, impacts."""
    lines = [f"  contact-implicit: relaxation {info['relaxation']:.1e} reached in {len(info['steps'])} warm-started solve(s)"]
    for name, v in info["complementarity"].items():
        spans = ", ".join(f"{a:.4g}–{b:.4g} {m}" for a, b, m in info["schedule"].get(name, []))
        lines.append(f"  contact {name:20s} complementarity {v:.1e}   {spans}")
    lines += [f"  impact  {i['contact']:20s} t = {i['time']:.6g}   impulse {i['impulse']:.6g}" for i in info["impacts"]]
    return lines
