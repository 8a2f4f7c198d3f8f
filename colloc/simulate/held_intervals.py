"""Each interval of a contact-implicit file integrated alone with its contacts held by the contact law.

The per-interval check of :mod:`colloc.simulate.contact_checks` integrates each interval from the file's state
at its start with the file's controls and the file's contact forces (constant on the interval, or the
polynomial through the collocation points).  Where a contact stays closed, its force is a constraint force:
the motion fixes it, and an error ``δF`` in it moves the contact point's speed by ``h δF / m``, ``m`` the
effective mass at the point.  A light link makes that open-loop integration ill-conditioned: Solo12's lower
leg weighs 38 g, and its 4-interval stance, whose event-driven re-simulation follows the file to 1e-4, had
every interval integrated with the file's constant forces end 0.86 rad/s off in the knee speeds.

On the intervals where every loaded contact sticks (closed, its friction holding it still: a foot planted, in
effect a point held fixed, as a stance phase's holonomic constraint holds it) the same interval is integrated by
the event-driven simulator (:func:`colloc.simulate.events.simulate_events`)
from the file's state at its start with the file's controls, knowing nothing of its forces: closed contacts
stay closed with the forces the contact law gives them (and open or slide as it says).  Such an interval passes
the per-interval check if either integration ends on the file's state; the file's forces are judged apart,
against the model at every grid point (check ``derivatives``) and by the contact rows (``contact``).  That
either-or adds no way through: the held integration knows nothing of the file's forces, so it can only pass states
that the contact law itself reaches, and a stance whose forces or controls are edited (a normal force doubled, a
friction force moved inside its cone, a push below the friction limit, each also with derivative columns made to
match) fails ``derivatives`` or the scheme's ``defects``, which read every stored force to the constraint
tolerance.  Where a
contact slides (a bead in a bowl, a box braking) its force follows from the motion only through the sliding law,
and the file's forces stay the input of the per-interval integration.
"""
from __future__ import annotations

import numpy as np


def _file_simulator(problem, traj):
    """``simulate(start, stop, times)``: the event-driven simulation from the file's own state at grid row ``start``
    with its controls until ``stop`` (None where it fails), and the ContactSystem; None if the model has no contacts
    the simulator takes."""
    from .control_signals import solution_controls
    from .events import ContactSystem, simulate_events
    from ..discretization.interpolant import Interpolant
    from ..transcription.contacts import END

    try:
        system = ContactSystem(problem.model)
    except (ValueError, TypeError):
        return None
    itp = Interpolant(traj)
    ends = itp.grid.interval_ends
    controls = solution_controls(itp, system.control_names, {n: traj[n + END][ends] for n in system.control_names if n + END in traj.names})

    def simulate(start, stop, times):
        q0, v0 = ([traj[n][start] for n in group] for group in (system.coordinate_names, system.speed_names))
        try:
            return simulate_events(system, float(stop), q0, v0, controls=controls, parameters=traj.parameters or None,
                                   t0=float(traj.time[start]), times=times, gap_tolerance=1e-8, paradox="impact")
        except (ValueError, RuntimeError, ArithmeticError, np.linalg.LinAlgError):
            return None

    return simulate, system


def held_interval_errors(problem, traj, setup, intervals) -> np.ndarray | None:
    """``x_sim − x_file`` at each interval's end, shape ``(num_states, num_intervals)``, the intervals where
    ``intervals`` (bool, one per interval) is true simulated event by event from the file's state at their start
    (NaN where the simulation failed, and on the others); ``setup`` is
    :func:`colloc.simulate.contact_checks.interval_contact`'s (its ``targets``: the pre-impact state where an
    impulse acts, which the simulator reaches just before its own impact).  None if the model has no contacts
    the simulator takes."""
    from ..discretization.interpolant import Interpolant

    made = _file_simulator(problem, traj)
    if made is None:
        return None
    simulate, grid, t = made[0], Interpolant(traj).grid, traj.time
    names = [v.name for v in problem.model.states]
    out = np.full((len(names), grid.num_intervals), np.nan)
    for k in np.flatnonzero(intervals):
        a, b = grid.interval_starts[k], grid.interval_ends[k]
        sim = simulate(a, t[b], np.array([t[a], t[b]]))
        if sim is None:
            continue
        row = int(np.flatnonzero(sim.time >= t[b])[0])  # before an impact the simulator finds at the interval's end
        out[:, k] = [sim[n][row] - setup["targets"][i, k] for i, n in enumerate(names)]
    return out


def local_impacts(problem, traj, start, stop) -> tuple | None:
    """The impacts the simulator finds from the file's own state at grid row ``start`` (a mesh point) with its
    controls until ``stop``: whether an impact the whole-horizon simulation found is the file's or that simulation's
    drift (an unstable body's open-loop drift lands a Solo12 foot 17 ms early at 0.5 m/s): the simulated Trajectory,
    the ContactSystem and the impact events.  None if the simulation fails."""
    made = _file_simulator(problem, traj)
    sim = made and made[0](start, stop, np.array([traj.time[start], float(stop)]))
    if sim is None:
        return None
    return sim, made[1], [e for e in sim.metadata.get("events", []) if e["kind"] == "impact"]


#: Sliding speed (relative to max(1, the file's largest)) below which a loaded contact sticks; force (relative to
#: max(1, the file's largest)) above which a contact is loaded.
STICK, LOADED = 1e-4, 1e-6


def sticking_intervals(problem, traj, setup) -> np.ndarray:
    """Which intervals have at least one loaded contact and every loaded contact frictional and sticking at every grid
    point of the interval, shape ``(num_intervals,)`` bool."""
    from ..discretization.interpolant import Interpolant

    rows = setup["rows"]
    grid = Interpolant(traj).grid
    states = [traj[n] for n in rows.state_names]
    X, ng = np.array(states).reshape(len(states), -1), traj.time.size
    P = np.array([traj.parameters[v.name] for v in problem.model.parameters]).reshape(-1, 1)
    nc, nt = len(rows.contacts), rows.num_tangents
    sd = np.asarray(rows.point.map(ng)(X, P, np.zeros((nc, ng)), np.zeros((nt, ng)))[3]).reshape(nt, ng)
    lam = np.array([traj[f"{c.name}.normal_force"] for c in rows.contacts]).reshape(nc, ng)
    loaded = lam > LOADED * max(1.0, float(np.abs(lam).max(initial=0.0)))
    offsets = np.concatenate([[0], np.cumsum(rows.tangents)]).astype(int)
    slip = np.zeros((nc, ng))
    for r, i in enumerate(rows.frictional):
        slip[i] = np.linalg.norm(sd[offsets[r]:offsets[r + 1]], axis=0)
    sticks = np.isin(np.arange(nc), rows.frictional)[:, None] & (slip <= STICK * max(1.0, float(slip.max(initial=0.0))))
    nodes = grid.nodes_of_intervals  # (n, nodes)
    load = loaded[:, nodes].any(axis=2)  # (nc, n): loaded somewhere in the interval
    held = sticks[:, nodes].all(axis=2)
    return load.any(axis=0) & (held | ~load).all(axis=0)


def better_of(forced: dict, held: np.ndarray | None, traj, allowed=None) -> tuple[dict, np.ndarray]:
    """Per interval, the integration that ends nearer the file: ``forced`` ``{state: (n,)}`` (the file's forces) or
    ``held`` (the contact law), the latter only on the intervals ``allowed`` (:func:`sticking_intervals`); the
    distance is the largest error over states relative to max(1, max |x|).  Returns the chosen signed errors and
    which intervals took ``held``."""
    names = list(forced)
    F = np.array([forced[n] for n in names])
    if held is None:
        return forced, np.zeros(F.shape[1], dtype=bool)
    scale = np.array([max(1.0, float(np.max(np.abs(traj[n])))) for n in names])[:, None]

    def distance(E):
        return np.where(np.isfinite(E), np.abs(E), np.inf).max(axis=0)

    use = (distance(held / scale) < distance(F / scale)) & (True if allowed is None else allowed)
    out = np.where(use[None, :], held, F)
    return dict(zip(names, out)), use
