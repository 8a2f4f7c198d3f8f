"""Measured data over time: OpenSim ``.sto``/``.mot`` and CSV tables, degrees to radians, Moco's low-pass filter.

A :class:`TimeTable` is a time column and named columns of numbers, read by :func:`read_table`.
It becomes a smooth function of time inside any CasADi expression with :meth:`TimeTable.function`
(see :mod:`colloc.goals.splines` for the spline and why).

Two of OpenSim's table operators are reproduced exactly (each step names the C++ it follows; paths are
relative to opensim-core):

* :func:`degrees_to_radians` is ``TabOpConvertDegreesToRadians`` (``SimbodyEngine::convertDegreesToRadians``):
  only the columns of *rotational* coordinates are scaled, a column being matched to a coordinate by its
  label, its last path segment, or the segment before a trailing ``/value`` or ``/speed``.  colloc has no
  OpenSim model here, so the caller names the rotational coordinates.
* :func:`filter_lowpass` is ``TabOpLowPassFilter`` (``TableUtilities::filterLowpass``): resample a
  non-uniform table at its smallest step with a natural quintic interpolating spline (OpenSim's
  ``GCVSpline`` of degree 5 with zero error variance), pad half the rows on each end by odd reflection
  (``Signal::Pad``), run a third-order Butterworth forward and backward with OpenSim's start-up (the first
  three outputs copy the inputs; ``Signal::LowpassIIR``), and trim back to the original time range.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import FileFormatError, ProblemError, did_you_mean
from ..results.files import _header, _rows, decode_text, read_bytes

SUFFIXES = (".sto", ".mot", ".csv")


@dataclass
class TimeTable:
    """Columns of numbers sampled at increasing times.

    Attributes
    ----------
    time : ndarray, shape (num_rows,)
        Strictly increasing sample times (s).
    columns : dict of str to ndarray, shape (num_rows,)
        The data columns in file order.
    in_degrees : bool
        Whether the rotational columns are in degrees (the header's ``inDegrees``).
    metadata : dict of str to str
        The header's ``key=value`` lines.
    """

    time: np.ndarray
    columns: dict
    in_degrees: bool = False
    metadata: dict = field(default_factory=dict)

    @property
    def labels(self) -> list:
        return list(self.columns)

    def __getitem__(self, label) -> np.ndarray:
        return self.columns[self._label(label)]

    def _label(self, label):
        if label not in self.columns:
            raise ProblemError(f"The table has no column `{label}`.{did_you_mean(label, self.columns)}")
        return label

    def select(self, labels) -> "TimeTable":
        """A table of the given columns only, in the given order."""
        return TimeTable(self.time, {k: self[k] for k in labels}, self.in_degrees, dict(self.metadata))

    def function(self, label, method="bspline"):
        """Column ``label`` as a CasADi ``Function`` of time, smooth (C²) between the first and last time.

        ``method`` is ``"bspline"`` (CasADi's cubic B-spline interpolant, the default), ``"natural"``
        (a natural cubic spline written as SX) or ``"quintic"`` (the natural quintic Moco fits to its
        references); see :mod:`colloc.goals.splines`.
        """
        from .splines import spline_function

        name = re.sub(r"\W", "_", label.strip("/"))  # CasADi names are identifiers
        return spline_function(self.time, self[label], method, name=name if name[:1].isalpha() else f"column_{name}")

    def __call__(self, label, t, method="bspline"):
        """Column ``label`` at time ``t`` (a number, an array or a CasADi expression)."""
        return self.function(label, method)(t)


def read_table(path, rotational=None, lowpass=None) -> TimeTable:
    """Read an OpenSim ``.sto``/``.mot`` (Storage v1, STO v3 as Moco writes) or a ``.csv`` with a ``time`` column.

    Parameters
    ----------
    path : str or path-like
    rotational : iterable of str, optional
        Names of the rotational coordinates; when the header says ``inDegrees=yes`` their columns are
        converted to radians (:func:`degrees_to_radians`).  Required for a table in degrees.
    lowpass : float, optional
        Cutoff frequency (Hz) of Moco's ``TabOpLowPassFilter`` (:func:`filter_lowpass`), applied after the
        conversion, as Moco's ``TableProcessor`` orders them.

    Returns
    -------
    TimeTable

    Raises
    ------
    FileFormatError
        For a file that is not such a table (the message names it).
    """
    path = os.fspath(path)
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in SUFFIXES:
        raise FileFormatError(f"Cannot read table `{path}`: unknown suffix `{suffix}`; use .sto, .mot or .csv.")
    text = decode_text(read_bytes(path, "Table file"), path)
    table = _parse_csv(text, path) if suffix == ".csv" else _parse_storage(text, path)
    if np.any(np.diff(table.time) <= 0):
        k = int(np.argmax(np.diff(table.time) <= 0))
        raise FileFormatError(f"The times in `{path}` do not increase at data row {k + 2} ({table.time[k]} then {table.time[k + 1]}).")
    if table.in_degrees:
        if rotational is None:
            raise ProblemError(f"`{path}` is in degrees (inDegrees=yes); name its rotational coordinates with `rotational=` "
                               "so that those columns are converted to radians.")
        table = degrees_to_radians(table, rotational)
    if lowpass is not None:
        table = filter_lowpass(table, lowpass)
    return table


def _parse_storage(text, path):
    """Header lines up to ``endheader`` (``key=value`` kept), then tab- or space-separated columns."""
    lines = text.splitlines()
    try:
        end = next(i for i, line in enumerate(lines) if line.strip() == "endheader")
    except StopIteration:
        raise FileFormatError(f"`{path}` has no `endheader` line; it is not an OpenSim .sto/.mot table.") from None
    meta = {}
    for line in lines[:end]:
        key, sep, value = line.strip().partition("=")
        if sep:
            meta[key.strip()] = value.strip()
    body = [(i + 1, line.strip()) for i, line in enumerate(lines[end + 1:], end + 1) if line.strip()]
    if not body:
        raise FileFormatError(f"`{path}` has no column labels after `endheader`.")
    sep = "\t" if "\t" in body[0][1] else None
    names = _header([c.strip() for c in body[0][1].split(sep)], path, body[0][0])
    if len(body) < 3:
        raise FileFormatError(f"`{path}` has {len(body) - 1} row(s) of values; a table needs at least two times.")
    data = _rows([(n, line) for n, line in body[1:]], path, len(names), sep) if sep else _rows(
        [(n, "\t".join(line.split())) for n, line in body[1:]], path, len(names), "\t")
    degrees = meta.get("inDegrees", "no").strip().lower()
    if degrees not in ("yes", "no"):
        raise FileFormatError(f"`inDegrees` in `{path}` is `{degrees}`; expected yes or no.")
    return _table(names, data, degrees == "yes", meta)


def _parse_csv(text, path):
    """A header row naming the columns (one of them ``time``), then comma-separated rows; ``#`` lines skipped."""
    rows = [(i + 1, line) for i, line in enumerate(text.splitlines()) if line.strip() and not line.startswith("#")]
    if not rows:
        raise FileFormatError(f"`{path}` has no header row (a row of column names with `time` among them).")
    names = _header([c.strip() for c in rows[0][1].split(",")], path, rows[0][0])
    if len(rows) < 3:
        raise FileFormatError(f"`{path}` has {len(rows) - 1} row(s) of values; a table needs at least two times.")
    return _table(names, _rows(rows[1:], path, len(names)), False, {})


def _table(names, data, in_degrees, meta):
    t = names.index("time")
    return TimeTable(data[:, t].copy(), {n: data[:, i].copy() for i, n in enumerate(names) if i != t}, in_degrees, meta)


# -- degrees to radians -------------------------------------------------------------------------
def coordinate_of(label, coordinates):
    """The coordinate a column label belongs to, matched as OpenSim's ``scaleRotationalDofColumns`` does, or None.

    ``/jointset/hip_r/hip_flexion_r/value`` and ``.../speed`` match ``hip_flexion_r``; so does a bare
    ``hip_flexion_r``.
    """
    coordinates = set(coordinates)
    if label in coordinates:
        return label
    prefix, _, short = label.rpartition("/")
    if short in coordinates:
        return short
    short = prefix.rpartition("/")[2]
    return short if short in coordinates else None


def degrees_to_radians(table, rotational) -> TimeTable:
    """The table with the columns of the ``rotational`` coordinates multiplied by π/180 (``TabOpConvertDegreesToRadians``).

    Other columns (translations, forces) are left as they are; the result says ``inDegrees=no``.
    """
    if isinstance(rotational, str):
        raise ProblemError("`rotational` takes a list of coordinate names; got a single string.")
    if not table.in_degrees:
        raise ProblemError("The table is already in radians (inDegrees=no); there is nothing to convert.")
    rotational = list(rotational)
    scale = math.pi / 180.0  # SimTK_DEGREE_TO_RADIAN
    cols = {k: v * scale if coordinate_of(k, rotational) else v.copy() for k, v in table.columns.items()}
    return TimeTable(table.time.copy(), cols, False, dict(table.metadata, inDegrees="no"))


# -- the low-pass filter ------------------------------------------------------------------------
def is_uniform(time):
    """OpenSim's ``isUniform``: ``(uniform, step)`` with steps equal to their mean within 4 ε max(|t₀|, |t_end|).

    ``step`` is the mean step if uniform, else the smallest positive step.
    """
    time = np.asarray(time, dtype=float)
    eps = np.finfo(float).eps
    biggest = max(abs(time[0]), abs(time[-1]))
    tol = 4 * eps * biggest
    mean = (time[-1] - time[0]) / (time.size - 1)
    if abs(mean) < tol:
        tol = eps * biggest if abs(mean) < eps * biggest else abs(mean)
    steps = np.diff(time)
    uniform = bool(np.all(np.abs(steps - mean) <= tol)) or time.size == 2
    return uniform, (mean if uniform else float(steps[steps > 0].min()))


def pad(signal, count):
    """``Signal::Pad``: ``count`` points before and after, reflected about each end point and negated
    (``2 x₀ − x_k``), which keeps the value and slope continuous at the ends."""
    x = np.asarray(signal, dtype=float)
    if count == 0:
        return x.copy()
    if count > x.size - 1:
        raise ProblemError(f"Cannot pad {x.size} points by {count} on each side; at most {x.size - 1}.")
    before = 2.0 * x[0] - x[count:0:-1]
    after = 2.0 * x[-1] - x[-2:-count - 2:-1]
    return np.concatenate([before, x, after])


def butterworth3(step, cutoff):
    """The third-order Butterworth low-pass of ``Signal::LowpassIIR``: ``(b, a)``, numerator and denominator
    of its transfer function in z⁻¹ (``a[0] = 1``), as OpenSim writes them out (bilinear transform with
    prewarping, ω = tan(π f_c T)): b = ω³/d (1, 3, 3, 1), d = (ω + 1)(ω² + ω + 1).

    A cutoff at or above half the sampling frequency is lowered to 0.49 of the sampling frequency, as OpenSim does.
    """
    fs = 1.0 / step
    cutoff = min(cutoff, 0.49 * fs)
    w = math.tan(2.0 * math.pi * cutoff * step / 2.0)
    w2, w3 = w * w, w * w * w
    d = (w + 1.0) * (w2 + w + 1.0)
    b = np.array([w3, 3.0 * w3, 3.0 * w3, w3]) / d
    a = np.array([1.0, (3.0 * w3 + 2.0 * w2 - 2.0 * w - 3.0) / d, (3.0 * w3 - 2.0 * w2 - 2.0 * w + 3.0) / d,
                  (w - 1.0) * (w2 - w + 1.0) / d])
    return b, a


def lowpass_iir(signal, step, cutoff):
    """``Signal::LowpassIIR``: the filter forward, then backward, each pass starting from the first three samples.

    OpenSim's recursion, term for term: the first three outputs are the inputs, then
    yₙ = Σₖ bₖ xₙ₋ₖ − Σₖ₌₁³ aₖ yₙ₋ₖ (in numpy alone: importing scipy.signal cost a tracking problem's
    build 0.7 CPU s).  ``signal``: shape (rows,), or (rows, columns) to filter every column at once.
    """
    b, a = butterworth3(step, cutoff)

    def one_pass(x):
        y = x.copy()
        for n in range(3, len(y)):
            y[n] = b[0] * x[n] + b[1] * x[n - 1] + b[2] * x[n - 2] + b[3] * x[n - 3] - a[1] * y[n - 1] - a[2] * y[n - 2] - a[3] * y[n - 3]
        return y

    return one_pass(one_pass(np.array(signal, dtype=float))[::-1])[::-1].copy()


def resample_natural_quintic(time, values, new_time):
    """Values of the natural quintic spline interpolating ``(time, values)`` (OpenSim's ``GCVSpline``, degree 5,
    error variance 0: knots at the data, third and fourth derivatives zero at both ends)."""
    from ..discretization.grid import locate
    from .splines import natural_coefficients

    time, new_time = np.asarray(time, dtype=float), np.asarray(new_time, dtype=float)
    coeffs = natural_coefficients(time, values, 5)
    piece = locate(time, new_time)[0]
    tau = new_time - time[piece]
    out = np.zeros_like(tau)
    for c in coeffs:  # Horner, highest power first
        out = out * tau + c[piece]
    return out


def filter_lowpass(table, cutoff, trim=True) -> TimeTable:
    """Moco's ``TabOpLowPassFilter(cutoff)``: every column low-passed at ``cutoff`` Hz (see the module notes).

    A table whose times are not uniform (by :func:`is_uniform`'s tight tolerance; times printed with eight
    digits usually are not) is first resampled at its smallest step from its first time on, as OpenSim does,
    so the rows of the result need not fall on the original times.
    """
    if isinstance(cutoff, bool) or not isinstance(cutoff, (int, float)) or not cutoff > 0 or math.isinf(cutoff):
        raise ProblemError(f"The low-pass cutoff frequency must be a positive number of Hz; got {cutoff!r}.")
    time, cols = table.time, table.columns
    uniform, step = is_uniform(time)
    if not uniform:
        new_time = [time[0]]
        while new_time[-1] + step <= time[-1]:  # accumulated, as resampleWithInterval does
            new_time.append(new_time[-1] + step)
        new_time = np.array(new_time)
        cols = {k: resample_natural_quintic(time, v, new_time) for k, v in cols.items()}
        time = new_time
    if time.size < 4:
        raise ProblemError(f"The low-pass filter needs at least 4 rows; the table has {time.size}.")
    count = time.size // 2
    filtered = lowpass_iir(np.column_stack([pad(v, count) for v in cols.values()]), step, cutoff)
    out = {k: filtered[:, i] for i, k in enumerate(cols)}
    if trim:
        out = {k: v[count:count + time.size] for k, v in out.items()}
    else:
        time = pad(time, count)
    return TimeTable(np.array(time, dtype=float), out, table.in_degrees, dict(table.metadata))


__all__ = ["TimeTable", "read_table", "degrees_to_radians", "coordinate_of", "filter_lowpass", "lowpass_iir",
           "butterworth3", "pad", "is_uniform", "resample_natural_quintic"]
