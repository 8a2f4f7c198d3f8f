"""Controls of a simulation as functions of time, with the times where they may jump (breakpoints).

While a contact sticks the state may not change at all, so an integrator's
step-size control sees nothing and its steps grow past a short push; the
simulator therefore restarts its integration at every breakpoint of the
controls.  Breakpoints come from what the controls declare — the grid of a
:class:`~colloc.results.trajectory.Trajectory` given as controls, a ``breakpoints`` attribute
of a control function, the simulator's ``breakpoints`` argument — and, for a
plain function, from a scan: it is sampled at ``samples`` times and each jump
it makes (a change between neighbouring samples far larger than the changes
around it, or the rise and fall of a pulse that only one sample sees) is
located by bisection; where it bends (is not affine), the steps
taken while a contact sticks are no longer than half the samples' spacing: a
push that exceeds the friction limit for longer than that is not stepped over.

Legend: ``t`` time, ``u`` controls.
"""
from __future__ import annotations

import numpy as np

from ..discretization.interpolant import dense_output
from ..discretization.schemes import lagrange_basis
from ..errors import OptionError, did_you_mean
from ..results.trajectory import Trajectory


def control_function(controls, names):
    """``(u(t) -> ndarray (nu,), declared breakpoints, needs_scan)`` from the simulator's ``controls`` argument."""
    nu = len(names)
    if controls is None:
        return (lambda t: np.zeros(nu)), [], False
    if isinstance(controls, Trajectory):
        missing = [n for n in names if n not in controls]
        if missing:
            raise OptionError(f"The controls trajectory has no column `{missing[0]}`.{did_you_mean(missing[0], list(controls.names))}")
        itp = dense_output(controls)
        if itp is not None:  # a solution: its controls as its scheme holds them, free to jump at mesh points
            return solution_controls(itp, names), list(itp.mesh_times), False
        cols = [np.asarray(controls[n], dtype=float) for n in names]
        t = np.asarray(controls.time, dtype=float)
        return (lambda s: np.array([np.interp(s, t, c) for c in cols])), list(t), False
    if callable(controls):
        def u_of(t):
            u = np.asarray(controls(t), dtype=float).ravel()
            if u.size != nu:
                raise OptionError(f"`controls(t)` must return {nu} values ({', '.join(names)}); got {u.size}.")
            return u
        declared = getattr(controls, "breakpoints", None)
        return u_of, list(declared or []), declared is None
    if isinstance(controls, dict):
        parts, declared, scan = {}, [], False
        for k, val in controls.items():
            name = k if isinstance(k, str) else k.name()
            if name not in names:
                raise OptionError(f"`{name}` in `controls` is not a control of the model.{did_you_mean(name, names)}")
            parts[name] = val if callable(val) else (lambda t, c=float(val): c)
            if callable(val):
                own = getattr(val, "breakpoints", None)
                declared += list(own or [])
                scan = scan or own is None
        return (lambda t: np.array([float(parts[n](t)) if n in parts else 0.0 for n in names])), declared, scan
    raise OptionError(f"`controls` must be None, a function u(t), a Trajectory or a dict {{control: value or function}}; got {type(controls).__name__}.")


def solution_controls(itp, names, control_ends=None):
    """``u(t) -> ndarray (len(names),)``: every control of a solution at a physical time ``t``, exactly as
    :meth:`colloc.discretization.interpolant.Interpolant.control` gives each (the same arithmetic on the same
    arrays, so the same numbers to the last bit: a robot's re-simulation near Painlevé's paradox follows them),
    with its ``breakpoints`` (the inner mesh times).  One interval search and one Lagrange basis per call for all
    controls: the simulator calls it at every right-hand side, and one search per control made a robot's
    re-simulation spend most of its time finding the same interval twelve times.

    ``control_ends`` ``{name: (n,)}`` are the values intervals end on where they differ from the next interval's
    start (free steps), when the control polynomial passes through the interval's end.
    """
    cols = itp.control_nodes
    values = []
    for name in names:
        v = itp.nodes(name)[:, cols].copy()
        end = (control_ends or {}).get(name)
        if end is not None and cols[-1] == itp.scheme.num_nodes - 1:
            v[:, -1] = end
        values.append(v)
    nodes = itp.scheme.nodes[cols]

    def u(t):
        (k,), s = itp.locate(t)
        basis = lagrange_basis(nodes, s)
        return np.array([float((v[k] @ basis)[0]) for v in values])

    u.breakpoints = list(itp.mesh_times[1:-1]) if names else []  # no control, nothing that jumps
    return u


class ControlScan:
    """What a scan of the controls found: jumps, and the stretches where they bend (``(start, end)`` pairs)."""

    def __init__(self, jumps=(), varying=(), spacing=np.inf):
        self.jumps, self.varying, self.spacing = list(jumps), list(varying), spacing

    def step_limit(self, t0, t1):
        """Largest step on ``(t0, t1)`` that samples the controls as finely as the scan did (inf where they are constant)."""
        return 0.5 * self.spacing if any(a < t1 and t0 < b for a, b in self.varying) else np.inf


def scan_controls(u_of, t0, t1, samples) -> ControlScan:
    """Sample ``u_of`` ``samples`` times on ``[t0, t1]``: its jumps (each located to round-off by bisection: a change
    far larger than the changes around it) and the stretches where it bends (is not affine)."""
    t = np.linspace(t0, t1, samples + 1)
    U = np.array([u_of(s) for s in t]).reshape(t.size, -1)
    if not U.size:
        return ControlScan()
    change = np.abs(np.diff(U, axis=0)).max(axis=1)
    scale = 1e-12 * max(1.0, np.abs(U).max())
    around = np.maximum(np.concatenate([[0.0], change[:-1]]), np.concatenate([change[1:], [0.0]]))
    jump = (change > 10 * around) & (change > scale)
    jump |= _pulses(U, change, scale)
    jumps = [_bisect(u_of, t[k], t[k + 1], change[k]) for k in np.flatnonzero(jump)]
    # where the controls are affine the cone's margin μF_n − |F_t| of a body held still is concave in time, so a
    # step that starts and ends inside the cone cannot leave it in between: only curved stretches limit the steps
    bend = np.abs(np.diff(U, 2, axis=0)).max(axis=1) if t.size > 2 else np.zeros(0)
    bent = np.zeros(change.size, dtype=bool)
    bent[:-1] |= bend > 1e3 * scale
    bent[1:] |= bend > 1e3 * scale
    moving = bent & ~jump
    edges = np.flatnonzero(np.diff(np.concatenate([[0], moving.astype(int), [0]])))
    varying = [(t[a], t[b]) for a, b in zip(edges[::2], edges[1::2])]
    return ControlScan(jumps, varying, (t1 - t0) / samples)


def _pulses(U, change, scale):
    """The changes on either side of a pulse that covers a single sample (a push shorter than the samples' spacing
    seen once): up and back down, each change far larger than those before and after the pair.  Each of the two
    is as large as its neighbour, so the test of a lone jump misses them."""
    pulse = np.zeros(change.size, dtype=bool)
    if change.size < 2:
        return pulse
    back = np.abs(U[2:] - U[:-2]).max(axis=1)  # where the controls are after the pair, against before it
    pair = np.minimum(change[:-1], change[1:])
    outside = np.maximum(np.concatenate([[0.0], change[:-2]]), np.concatenate([change[2:], [0.0]]))
    k = np.flatnonzero((pair > scale) & (pair > 10 * outside) & (back < 0.1 * pair))
    pulse[k] = pulse[k + 1] = True
    return pulse


def _bisect(u_of, lo, hi, size):
    u_lo = u_of(lo)
    while hi - lo > 4 * np.spacing(hi):
        mid = 0.5 * (lo + hi)
        if np.abs(u_of(mid) - u_lo).max() > 0.5 * size:
            hi = mid
        else:
            lo = mid
    return hi


def breakpoints(u_of, declared, scan, t0, t1, samples):
    """``(sorted breakpoints strictly inside (t0, t1), ControlScan)``: the declared breakpoints and, if ``scan``,
    the jumps found and the ends of the stretches where the controls vary."""
    found = ControlScan()
    if scan and samples:
        found = scan_controls(u_of, t0, t1, samples)
    cuts = list(declared) + found.jumps + [x for ab in found.varying for x in ab]
    return sorted({float(b) for b in cuts if t0 < b < t1}), found


__all__ = ["control_function", "solution_controls", "scan_controls", "breakpoints", "ControlScan"]
