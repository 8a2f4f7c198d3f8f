"""A rimless wheel rolling down a slope, passive: its impacts and stance phases found without a schedule.

A hub of mass ``m`` and inertia ``I`` carries ``n`` massless spokes of length
``l`` (angle ``2α = 2π/n`` between them) and rolls down a slope of angle
``γ``.  Each spoke's tip is a contact with the slope (friction ``μ``, plastic
impacts); over the horizon only the spokes that land are declared.  No
control acts: the problem is to find the motion from mid-stance (a
feasibility problem), contact-implicitly (``contact="implicit"``, forces at
the collocation points, free steps): when each spoke lands, the impulse that
stops it, and the stance force, which follows the motion.

States
    ``wheel.x``, ``wheel.y`` [m] (hub), ``wheel.theta`` [rad] (the first
    stance spoke's angle from the vertical, forward positive) and their speeds.
Contacts
    ``wheel.spoke0`` … : gap of each tip above the slope, tangent along it.

Analytic solution [DERIVED] (McGeer 1990; Coleman, Chatterjee & Ruina 1997):
at a landing the angular momentum about the new foot is conserved, so the
rotation rate drops by ``η = (I + m l² cos 2α)/(I + m l²)`` (``cos 2α`` for a
point-mass hub); in stance the wheel is an inverted pendulum,
``J θ̈ = m g l sin θ`` with ``J = I + m l²``, from ``θ = γ − α`` to ``γ + α``.
The steady gait has the pre-impact rate
``ω₋² = 4 m g l sin γ sin α / (J (1 − η²))``, ``ω₊ = η ω₋``.  The event-driven
simulation (:func:`colloc.simulate_events`) is the reference for the motion.

Solved (``SOLVE``, 0.6 s: the first stance, the landing at 0.293229 s and the next stance), against the
closed form and the event-driven simulation: landing time −2.6e-8 / −2.8e-9, post-impact rate ``ηω₋``
2.3e-4 / 6.9e-5, positions 7.8e-5 / 2.4e-5 at 6 / 10 intervals.  What decides it: the friction rows of an
interval's last point read the speeds it ends on, pre-impact (:func:`colloc.transcription.force_points.planar_rows`);
with the mesh point's post-impact speeds the stance spoke slipped just before the landing and the impulse came
out at a third of its value.  Left: the relaxation leaves impulses of ~5e-6 N s at the stance's mesh points
(``|ẏ⁺P| ≤ ε`` with ``ẏ⁺ ≈ cP`` allows ``P ~ √ε``: 2.6e-6 at ε = 1e-9), which verify reads as impacts.

More landings (:func:`solve_landings`): solved from the rolling guess over two steps (1 s, 16 intervals) the
second landing was stopped by 26.6 N at the next interval's first collocation point instead of an impulse
(positions 3.4e-3 off): Radau IIA does not collocate an interval's first point, so a gap held at zero admits a
first point still approaching, and the scheme's implicit projection stands in for the impulse.  Velocity-level
rows ``|ẏ(start) λ| ≤ ε`` (Stewart & Trinkle 1996) or one-sided ``−ẏ⁺λ ≤ ε`` made the homotopy infeasible;
Hermite–Simpson (both ends collocated, the landing interval on its own accelerations) again replaced the second
impulse by forces.  What works is a homotopy in the number of landings: the gait is periodic, so the solution over
``k`` landings, moved one step on (:func:`next_step_guess`: ``T`` later, the hub ``2l sin α`` down the slope,
``θ + 2α``, spoke ``j``'s forces those of spoke ``j − 1``), guesses the walk over ``k + 1`` landings, with the
mesh the free steps ended on extended likewise; its homotopy starts at ε = 1e-4, on free steps, and every
landing stays free to move.  Measured (landing time, post-impact rate against ``ηω₋``, positions against the
simulation): two landings at 6 / 10 intervals per 0.6 s, 8.7e-5 / 2.7e-5 s, 3.7e-4 / 1.2e-4, 2.4e-4 / 7.5e-5;
three at 10 (26 intervals over 1.561 s), 7.3e-5 s, 1.5e-4, 1.4e-4, all three found as impulses of 0.9406 N s.

Source: T. McGeer, "Passive dynamic walking", IJRR 9(2) (1990) 62–82;
M. J. Coleman, A. Chatterjee, A. Ruina, "Motions of a rimless spoked wheel",
Dynamics and Stability of Systems 12(3) (1997) 139–159.
"""
import math
import warnings

import casadi as ca
import numpy as np

import colloc as cl

SOLVE = dict(scheme="radau-3", intervals=10, contact="implicit", contact_forces="collocation", relaxation=1.0,
             relaxation_factor=0.3)
#: The horizon solved: the first stance, one landing and the next stance.
DURATION = 0.6
#: The relaxation each further landing's homotopy starts from (:func:`solve_landings`): below the fixed-mesh stage
#: (``colloc.pipeline.contact_implicit.FREE_FROM``), so the free steps keep the landings the guess places.
NEXT_RELAXATION = 1e-4
#: Its last relaxation: at 6 intervals per 0.6 s two landings stalled at ε = 8.1e-7 (3,000 iterations), the
#: landings and states no longer moving (2.7e-6 solved them to 6.5e-5 s and 1.9e-4 of the simulation).
NEXT_TOLERANCE = 1e-6
IPOPT = {"print_level": 0, "tol": 1e-10}
GRAVITY = 9.81


def constants(spokes=10, slope=0.08, inertia=0.1, mass=1.0, length=1.0, gravity=GRAVITY):
    """``(α, η, ω₋, ω₊)`` of the steady gait (module docstring)."""
    alpha = math.pi / spokes
    J = inertia + mass * length**2
    eta = (inertia + mass * length**2 * math.cos(2 * alpha)) / J
    w_minus = math.sqrt(4 * mass * gravity * length * math.sin(slope) * math.sin(alpha) / (J * (1 - eta**2)))
    return alpha, eta, w_minus, eta * w_minus


def mid_stance_rate(spokes=10, slope=0.08, inertia=0.1, mass=1.0, length=1.0, gravity=GRAVITY):
    """The steady gait's rotation rate with the stance spoke vertical (energy from ``θ = γ − α``)."""
    alpha, _, _, w_plus = constants(spokes, slope, inertia, mass, length, gravity)
    J = inertia + mass * length**2
    return math.sqrt(w_plus**2 + 2 * mass * gravity * length / J * (math.cos(slope - alpha) - 1.0))


def landings(count=2, spokes=10, slope=0.08, inertia=0.1, mass=1.0, length=1.0, gravity=GRAVITY):
    """Times of the steady gait's first ``count`` landings from mid-stance (``t = 0``): ``∫ dθ / ω(θ)`` from ``θ = 0``
    to ``γ + α``, then one step ``∫ dθ / ω(θ)`` over ``[γ − α, γ + α]`` each, ``ω² = ω₊² + 2mgl (cos(γ − α) − cos θ)/J``."""
    from scipy.integrate import quad

    alpha, _, _, w_plus = constants(spokes, slope, inertia, mass, length, gravity)
    c = 2 * mass * gravity * length / (inertia + mass * length**2)
    rate = lambda th: 1.0 / math.sqrt(w_plus**2 + c * (math.cos(slope - alpha) - math.cos(th)))  # noqa: E731
    first = quad(rate, 0.0, slope + alpha, epsabs=1e-13, epsrel=1e-13)[0]
    step = quad(rate, slope - alpha, slope + alpha, epsabs=1e-13, epsrel=1e-13)[0]
    return [first + k * step for k in range(count)]


def wheel(spokes=10, slope=0.08, inertia=0.1, friction=1.0, landing=3, mass=1.0, length=1.0, gravity=GRAVITY):
    """The wheel with contacts on its first ``landing`` spokes (spoke k at ``θ − 2αk`` from the vertical)."""
    body = cl.Multibody("wheel", coordinates=["x", "y", "theta"])
    x, y, th = body.coordinates
    body.kinetic_energy = 0.5 * mass * (body.v[0] ** 2 + body.v[1] ** 2) + 0.5 * inertia * body.v[2] ** 2
    body.potential_energy = mass * gravity * y
    alpha = math.pi / spokes
    for k in range(landing):
        phi = th - 2 * alpha * k
        px, py = x - length * ca.sin(phi), y - length * ca.cos(phi)
        body.contact(f"spoke{k}", px * math.sin(slope) + py * math.cos(slope), friction=friction,
                     tangent=px * math.cos(slope) - py * math.sin(slope))
    body.point("hub", ca.vertcat(x, y))
    return body


def initial_state(spokes=10, slope=0.08, inertia=0.1, mass=1.0, length=1.0, gravity=GRAVITY):
    """``(q, v)`` at mid-stance of the steady gait: spoke 0 vertical, its tip on the slope at the origin."""
    w = mid_stance_rate(spokes, slope, inertia, mass, length, gravity)
    return [0.0, length, 0.0], [length * w, 0.0, w]


def next_step_guess(traj, spokes=10, slope=0.08, length=1.0):
    """A guess one step longer than the solved ``traj``, with the mesh it was solved on extended likewise.

    The gait repeats every step ``T`` (:func:`landings`) with the wheel one spoke on: over ``(D, D + T]`` the guess
    is ``traj`` over ``(D − T, D]`` with the hub moved by ``2l sin α`` down the slope, ``θ`` by ``2α`` and spoke
    ``k``'s forces and impulses those of spoke ``k − 1``; the mesh points ``traj`` ended with in that window
    (free steps placed a landing on one) are shifted likewise.  Returns ``(guess, mesh, duration)``, ``mesh``
    normalised.  A homotopy in the number of landings: the first landing is found without a schedule, and each
    next one starts where the last step's landing ended, still free to move (see the module docstring).
    """
    alpha = math.pi / spokes
    t1, t2 = landings(2, spokes, slope, length=length)
    period, end = t2 - t1, float(traj.time[-1])
    later = traj.time + period > end + 1e-9
    shift = {"wheel.x": 2 * length * math.sin(alpha) * math.cos(slope), "wheel.y": -2 * length * math.sin(alpha) * math.sin(slope),
             "wheel.theta": 2 * alpha}
    spoke = lambda name: int(name.split(".")[1][len("spoke"):]) if name.startswith("wheel.spoke") else None  # noqa: E731
    count = 1 + max(spoke(n) for n in traj.names if spoke(n) is not None)
    cols, kinds = {}, dict(traj.kinds)
    for name in traj.names:
        k = spoke(name)
        if k is None:
            after = np.asarray(traj[name], float)[later] + shift.get(name, 0.0)
        else:
            after = np.asarray(traj[name.replace(f"spoke{k}", f"spoke{k - 1}", 1)], float)[later] if k else np.zeros(later.sum())
        cols[name] = np.concatenate([np.asarray(traj[name], float), after])
        if k == count - 1:  # the spoke that lands next
            new = name.replace(f"spoke{k}", f"spoke{count}", 1)
            cols[new] = np.concatenate([np.zeros(traj.time.size), np.asarray(traj[name], float)[later]])
            kinds[new] = traj.kinds[name]
    mesh = traj.time[:: (traj.time.size - 1) // int(traj.metadata["intervals"])]  # where the solve ended its steps
    mesh = np.concatenate([mesh, mesh[mesh + period > end + 1e-9] + period])
    guess = cl.Trajectory(np.concatenate([traj.time, traj.time[later] + period]), cols, kinds, dict(traj.parameters), {})
    return guess, mesh / mesh[-1], end + period


def solve_next_landing(result, ipopt=None):
    """``result`` (the wheel from mid-stance over some landings) solved one step longer, one more landing, from
    :func:`next_step_guess`, its relaxation homotopy started at ``NEXT_RELAXATION``."""
    guess, mesh, duration = next_step_guess(result.trajectory)
    count = sum(t < duration for t in landings(int(duration / (landings(2)[1] - landings(1)[0])) + 2))
    options = dict(SOLVE, intervals=None, mesh=mesh, relaxation=NEXT_RELAXATION, complementarity_tolerance=NEXT_TOLERANCE)
    with warnings.catch_warnings():  # the guess has no scheme of its own, but its rows are the new grid's points
        warnings.filterwarnings("ignore", "The trajectory names no scheme")
        return cl.solve(build(duration, landing=count + 1), guess=guess, ipopt=ipopt or IPOPT, **options)


def solve_landings(count, intervals=10, ipopt=None):
    """The wheel from mid-stance over ``count`` landings without a schedule: one landing solved from the rolling
    guess (``SOLVE``), then one step more at a time (:func:`solve_next_landing`).  Returns each solve's result."""
    results = [cl.solve(build(), ipopt=ipopt or IPOPT, **dict(SOLVE, intervals=intervals))]
    for _ in range(count - 1):
        results.append(solve_next_landing(results[-1], ipopt))
    return results


def build(duration=DURATION, spokes=10, slope=0.08, inertia=0.1, friction=1.0, landing=3):
    body = wheel(spokes, slope, inertia, friction, landing)
    x, y, th = body.coordinates
    q0, v0 = initial_state(spokes, slope, inertia)
    prob = cl.Problem([body], t0=0.0, tf=duration, name="rimless_wheel")
    prob.initial({**dict(zip(body.coordinates, q0)), **dict(zip(body.speeds, v0))})
    # a guess rolling at the mid-stance rate over a flat floor: no impact, no stance schedule
    w = v0[2]
    prob.guess({x: (0.0, w * duration), y: q0[1], th: (0.0, w * duration), body.speeds[0]: w, body.speeds[2]: w})
    return prob
