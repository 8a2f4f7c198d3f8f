"""Where a NaN or an inf came from: the constraint rows and cost terms, with their grid point and time.

IPOPT sees only numbers.  When a function returns NaN or inf at a *trial
point* of the line search (a square root of a state that the step made
negative, a division by a speed that crossed zero), IPOPT shortens the step
and goes on; when that keeps happening it stops with a status that speaks of
restoration or step computation, never of the NaN.  CasADi reports every such
evaluation as a warning naming the function (``nlp_f``, ``nlp_g``,
``nlp_grad_f``, ``nlp_jac_g``, ``nlp_hess_l``) and the row and column of the
first non-finite entry.  :class:`EvaluationWatch` collects those warnings
while a solver runs (instead of printing them), and :func:`describe` turns
them into one sentence with constraint labels (``defect.hermite:m.x@k=2``),
variable labels and times.

The objective's warning names no cost term.  :func:`describe` evaluates each
term at the points IPOPT is likely to have tried: the last iterate, and the
last step continued by factors 2, 4, …, 256 (IPOPT's backtracking halves a
rejected step, so the rejected trial points of the last accepted step lie
there).  A term's integrand is located at its grid point and time.
"""
from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass

import numpy as np

_FAILURE = re.compile(r"(nlp_\w+) failed: (NaN|Inf) detected for output (\w+), at (?:nonzero index \d+ )?\(row (\d+), col (\d+)\)")


@dataclass(frozen=True)
class Evaluation:
    """One evaluation that gave a non-finite value: ``function`` (``nlp_g`` …), ``value`` (``NaN`` or
    ``Inf``), ``output`` (``g``, ``jac_g_x`` …), the ``row`` and ``col`` of the first bad entry, and the
    ``iteration`` during which it happened."""

    function: str
    value: str
    output: str
    row: int
    col: int
    iteration: int


class EvaluationWatch:
    """Collect CasADi's "NaN/Inf detected" warnings written to ``sys.stderr`` during a solve.

    Everything else written to ``sys.stderr`` meanwhile passes through unchanged.
    ``iteration()`` gives the iteration number to record with each failure.
    """

    def __init__(self, iteration=lambda: 0):
        self.iteration, self.events, self._buffer, self._stream = iteration, [], "", None

    def __enter__(self):
        self._stream, sys.stderr = sys.stderr, self
        return self

    def __exit__(self, *exc):
        if sys.stderr is self:
            sys.stderr = self._stream
        if self._buffer:
            self._stream.write(self._buffer)
        self._buffer = ""
        return False

    def write(self, text):
        self._buffer += text
        while "\n" in self._buffer:
            line, self._buffer = self._buffer.split("\n", 1)
            m = _FAILURE.search(line) if line.startswith("CasADi") else None
            if m:
                self.events.append(Evaluation(m[1], m[2], m[3], int(m[4]), int(m[5]), int(self.iteration())))
            elif line.startswith("CasADi") and "KeyboardInterruptException" in line:
                pass  # the Ctrl-C that stopped IPOPT: the result says the solve was interrupted
            else:
                self._stream.write(line + "\n")
        return len(text)

    def flush(self):
        self._stream.flush()

    def __getattr__(self, name):  # encoding, isatty, fileno … of the real stream
        return getattr(self._stream, name)


def describe(events, row_label, variable_label, cost_parts=None, points=()) -> str:
    """One sentence naming what went non-finite; ``""`` when nothing did.

    Parameters
    ----------
    events : list of Evaluation
    row_label, variable_label : callable
        Index of a constraint row / a variable -> its label with a time (``defect.hermite:m.x@k=2 (t = 0.4)``).
    cost_parts : callable, optional
        ``cost_parts(w) -> [sentence, ...]`` naming the cost terms that are non-finite at ``w``.
    points : sequence of ndarray
        Where to look for the non-finite cost terms, in order (the first point that has one is named).
    """
    if not events:
        return ""
    first, last = min(e.iteration for e in events), max(e.iteration for e in events)
    when = f"in iteration {first}" if first == last else f"in iterations {first}–{last}"
    parts = []
    objective = [e for e in events if e.function == "nlp_f"]
    if objective:
        terms = _terms(cost_parts, points)
        n = len(objective)
        parts.append(f"the objective ({_kinds(objective)}, {n} evaluation{'s' if n != 1 else ''})" + (f": {terms}" if terms else ""))
    rows = _distinct([e.row for e in events if e.function == "nlp_g"])
    if rows:
        parts.append(f"constraint row{'s' if len(rows) > 1 else ''} " + ", ".join(row_label(r) for r in rows))
    jac = _distinct([(e.row, e.col) for e in events if e.output.startswith("jac_g")])
    if jac:
        parts.append("the derivative of " + ", ".join(f"{row_label(r)} with respect to {variable_label(c)}" for r, c in jac))
    grad = _distinct([e.row for e in events if e.output.startswith("grad_f")])
    if grad:
        parts.append("the objective's derivative with respect to " + ", ".join(variable_label(c) for c in grad))
    hess = _distinct([(e.row, e.col) for e in events if e.function == "nlp_hess_l"])
    if hess:
        parts.append("second derivatives with respect to " + ", ".join(f"{variable_label(r)} and {variable_label(c)}" for r, c in hess))
    return f"NaN or inf appeared {when} at points IPOPT tried, in " + "; ".join(parts) + "."


#: What to do about a NaN or inf (said once, after where it appeared).
HINT = ("Bound the variables away from the singularity (a square root or logarithm of a quantity that can turn negative, "
        "a division by one that can reach zero) or start nearer the solution.")


def rows_at(g, row_label, count=3) -> str:
    """``"rows A, B, C (and N more)"`` for the non-finite entries of ``g``, or ``""``."""
    bad = np.flatnonzero(~np.isfinite(np.asarray(g, dtype=float)))
    if not bad.size:
        return ""
    more = f" (and {bad.size - count} more)" if bad.size > count else ""
    return f"row{'s' if bad.size > 1 else ''} " + ", ".join(row_label(int(i)) for i in bad[:count]) + more


def _terms(cost_parts, points) -> str:
    if cost_parts is None:
        return ""
    for w in points:
        found = cost_parts(w)
        if found:
            return ", ".join(found)
    return ""


def trial_points(last, previous, factors=(1, 2, 4, 8, 16, 32, 64, 128, 256)) -> list:
    """The last iterate and the last step continued by ``factors`` (IPOPT halves rejected steps)."""
    if last is None:
        return []
    if previous is None:
        return [last]
    return [previous + f * (last - previous) for f in factors]


def _kinds(events) -> str:
    kinds = sorted({e.value for e in events})
    return " and ".join("NaN" if k == "NaN" else "inf" for k in kinds)


def _distinct(items, count=3) -> list:
    out = []
    for item in items:
        if item not in out:
            out.append(item)
    return out[:count]


def locate_cost(name, integrand, final, times) -> list:
    """Sentences for one cost term: its integrand's non-finite grid points and its final part.

    ``integrand`` ndarray, shape (num_points,) or None; ``final`` float or None; ``times`` of the grid points.
    """
    out = []
    if integrand is not None:
        bad = np.flatnonzero(~np.isfinite(integrand))
        if bad.size:
            k = int(bad[0])
            value = "NaN" if math.isnan(integrand[k]) else "inf"
            more = f" (and at {bad.size - 1} more grid point{'s' if bad.size > 2 else ''})" if bad.size > 1 else ""
            out.append(f"the integrand of cost `{name}` is {value} at t = {times[k]:.6g} (grid point {k}){more}")
    if final is not None and not math.isfinite(final):
        out.append(f"the final (Mayer) part of cost `{name}` is {'NaN' if math.isnan(final) else 'inf'}")
    return out


__all__ = ["Evaluation", "EvaluationWatch", "describe", "trial_points", "locate_cost", "rows_at", "HINT"]
