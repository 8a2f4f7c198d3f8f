"""The compass-gait walker going down a slope, passive: its heel strike and stance exchange found without a schedule.

Two straight legs of length ``l = a + b`` with a point mass ``m`` each (``a``
from the foot, ``b`` from the hip) and a hip mass ``m_H`` walk down a slope of
angle ``γ`` (Goswami, Thuilot & Espiau 1998: ``m_H = 10``, ``m = 5``,
``a = b = 0.5`` m, ``γ = 3°``).  Each foot is a contact with the slope
(friction ``μ``, plastic impacts).  No control acts: the problem is to find the
motion over one step of the period-one gait (a feasibility problem),
contact-implicitly (``contact="implicit"``, forces at the collocation points,
free steps): when the swing foot strikes, the impulse that stops it, the
stance foot that lifts.

Scuffing.  A straight-legged swing foot passes through the slope at mid-stance
(its height ``l (cos ψ_st − cos ψ_sw)`` is negative while ``ψ_sw`` lies between
``−ψ_st`` and ``ψ_st``, ``ψ`` the leg angles from the slope's normal); Goswami et
al. ignore it, as does the reference below.  Here the horizon runs from a
point just after one mid-stance (``T_SCUFF`` after the legs cross, when the
swing foot is above the slope again) to the same point of the next step, so
the swing foot never meets the slope inside it but where it strikes: both feet
are contacts all along, and neither the solve nor the event-driven simulation
sees the scuffing.

States
    ``walker.x``, ``walker.y`` [m] (hip), ``walker.theta1``, ``walker.theta2``
    [rad] (each leg's angle from the downward vertical, foot ahead positive) and
    their speeds.  Leg 1 stands at ``t = 0``, leg 2 strikes.
Contacts
    ``walker.foot1``, ``walker.foot2``: gap of each foot above the slope, tangent along it.

Reference [COMPUTED]: the period-one gait of the reduced model (stance foot
pinned; Goswami et al.'s equations of motion and impact map, written out in
:func:`stance_rates` and :func:`strike`), found by Newton's method on its step
map with scipy's ``solve_ivp`` (rtol 1e-12): post-impact leg angles and rates
in ``FIXED_POINT``; :func:`colloc.simulate_events` (the floating model, the
feet as contacts) follows it to 1e-8 and returns to it after the strike.

Solved (``SOLVE``, the relaxation from ε = 1 by factors 0.3, free steps below 1e-3), against the simulation: strike
time 2.5e-6 / 3.3e-7 s, impulse 0.042 / 0.019 of 13.58 N s, leg angles 8.5e-4 / 3.8e-4 rad at 8 / 10 intervals; the
strike falls on a mesh point.  Left: the relaxation leaves impulses of 2e-5–4e-5 N s at the new stance's mesh points,
which ``colloc verify`` reads as impacts (its Newton and impact-time checks fail on them, every other check passes);
at 14 intervals the homotopy ended infeasible at ε = 0.3 on the fixed mesh.

Source: A. Goswami, B. Thuilot, B. Espiau, "A study of the passive gait of a
compass-like biped robot: symmetry and chaos", IJRR 17(12) (1998) 1282–1301.
"""
import math

import casadi as ca
import numpy as np

import colloc as cl

SOLVE = dict(scheme="radau-3", intervals=10, contact="implicit", contact_forces="collocation", relaxation=1.0,
             relaxation_factor=0.3)
GRAVITY = 9.81
#: Goswami et al. 1998's walker: hip mass, leg mass [kg], foot-to-leg-mass and leg-mass-to-hip lengths [m], slope [rad].
PARAMETERS = dict(hip_mass=10.0, leg_mass=5.0, a=0.5, b=0.5, slope=math.radians(3.0))


def _masses(hip_mass, leg_mass, a, b):
    return hip_mass, leg_mass, a, b, a + b


def stance_rates(state, hip_mass=10.0, leg_mass=5.0, a=0.5, b=0.5, gravity=GRAVITY):
    """``(θ̇₁, θ̇₂, θ̈₁, θ̈₂)`` of the reduced model, stance foot pinned (Lagrange's equations written out:
    ``M θ̈ + k sin(θ₁ − θ₂) (−θ̇₂², θ̇₁²) + ∂V/∂θ = 0``, ``k = m l b``)."""
    mh, m, a, b, l = _masses(hip_mass, leg_mass, a, b)
    t1, t2, w1, w2 = state
    k, s = m * l * b, math.sin(t1 - t2)
    M = np.array([[mh * l**2 + m * a**2 + m * l**2, -k * math.cos(t1 - t2)], [-k * math.cos(t1 - t2), m * b**2]])
    rhs = np.array([k * s * w2**2 + gravity * (mh * l + m * a + m * l) * math.sin(t1),
                    -k * s * w1**2 - gravity * m * b * math.sin(t2)])
    acc = np.linalg.solve(M, rhs)
    return np.array([w1, w2, acc[0], acc[1]])


def _floating_mass(t1, t2, hip_mass, leg_mass, b):
    """Mass matrix of the floating model ``(x, y, θ₁, θ₂)`` (hip point mass, a point mass ``b`` below the hip on each leg)."""
    M = np.diag([hip_mass + 2 * leg_mass, hip_mass + 2 * leg_mass, leg_mass * b**2, leg_mass * b**2])
    for i, t in ((2, t1), (3, t2)):
        M[0, i] = M[i, 0] = leg_mass * b * math.cos(t)
        M[1, i] = M[i, 1] = leg_mass * b * math.sin(t)
    return M


def strike(state, hip_mass=10.0, leg_mass=5.0, a=0.5, b=0.5):
    """Heel strike of leg 2 and the leg swap: the post-impact reduced state (new stance leg first) from the pre-impact
    one; a plastic impulse stops the new stance foot, the old one lifts (Goswami et al.'s conservation of angular
    momentum about the new foot and of the old stance leg about the hip, by the floating model's impulse balance)."""
    mh, m, a, b, l = _masses(hip_mass, leg_mass, a, b)
    t1, t2, w1, w2 = state
    v = np.array([-l * math.cos(t1) * w1, -l * math.sin(t1) * w1, w1, w2])  # hip speed from the pinned stance foot
    M = _floating_mass(t1, t2, mh, m, b)
    J = np.array([[1.0, 0.0, 0.0, l * math.cos(t2)], [0.0, 1.0, 0.0, l * math.sin(t2)]])
    K = np.block([[M, -J.T], [J, np.zeros((2, 2))]])
    after = np.linalg.solve(K, np.concatenate([M @ v, np.zeros(2)]))[:4]
    return np.array([t2, t1, after[3], after[2]])


def _step(state, slope, params, dense=False):
    """Integrate the reduced model from a post-impact state to the next heel strike: ``ψ₁ + ψ₂ = θ₁ + θ₂ + 2γ``
    falling through 0 (``ψ = θ + γ``, the swing foot's height is ``2 l sin((ψ₁ + ψ₂)/2) sin((ψ₂ − ψ₁)/2)``).  It
    starts at 0 and falls: the first 0.05 s are integrated without the event."""
    from scipy.integrate import solve_ivp

    def heel(t, x):
        return x[0] + x[1] + 2 * slope
    heel.terminal, heel.direction = True, -1
    rates = lambda t, x: stance_rates(x, **params)  # noqa: E731
    first = solve_ivp(rates, (0.0, 0.05), state, rtol=1e-12, atol=1e-12, method="DOP853")
    return solve_ivp(rates, (0.05, 5.0), first.y[:, -1], events=heel, rtol=1e-12, atol=1e-12, dense_output=dense,
                     method="DOP853")


def fixed_point(slope=PARAMETERS["slope"], guess=(0.2, -0.3, -1.1, -0.4), **masses):
    """Post-impact ``(θ₁, θ₂, θ̇₁, θ̇₂)`` of the period-one gait, and its step time: ten steps from ``guess`` (the gait
    is stable, Goswami et al. 1998), then Newton on the step map."""
    from scipy.optimize import fsolve

    params = {k: masses.get(k, v) for k, v in PARAMETERS.items() if k != "slope"}
    x = np.array(guess, dtype=float)
    for _ in range(10):
        x = strike(_step(x, slope, params).y_events[0][0], **params)

    def residual(z):
        x0 = np.array([z[0], -z[0] - 2 * slope, z[1], z[2]])  # both feet on the slope: θ₂ = −θ₁ − 2γ
        return (strike(_step(x0, slope, params).y_events[0][0], **params) - x0)[[0, 2, 3]]

    z = fsolve(residual, x[[0, 2, 3]], xtol=1e-13)
    x0 = np.array([z[0], -z[0] - 2 * slope, z[1], z[2]])
    return x0, float(_step(x0, slope, params).t_events[0][0])


#: [COMPUTED] by :func:`fixed_point`: post-impact reduced state ``(θ₁, θ₂, θ̇₁, θ̇₂)`` and step time [s] of Goswami et
#: al.'s walker at γ = 3° (scipy DOP853, rtol 1e-12; Newton's residual below 1e-13).
FIXED_POINT = (0.218668802939, -0.323388558059, -1.092383589884, -0.377373948907)
STEP_TIME = 0.7343463911586897
#: Margin [s] between the horizon's ends and the scuffing at mid-stance.
MARGIN = 0.03


def walker(hip_mass=10.0, leg_mass=5.0, a=0.5, b=0.5, slope=PARAMETERS["slope"], friction=1.0, gravity=GRAVITY):
    """The floating compass gait: hip ``(x, y)``, leg angles ``θ₁, θ₂``; each foot a contact with the slope."""
    body = cl.Multibody("walker", coordinates=["x", "y", "theta1", "theta2"])
    x, y, t1, t2 = body.coordinates
    vx, vy, w1, w2 = body.v[0], body.v[1], body.v[2], body.v[3]
    legs = [(x + b * ca.sin(t), y - b * ca.cos(t), vx + b * ca.cos(t) * w, vy + b * ca.sin(t) * w) for t, w in ((t1, w1), (t2, w2))]
    body.kinetic_energy = 0.5 * hip_mass * (vx**2 + vy**2) + sum(0.5 * leg_mass * (u**2 + v**2) for _, _, u, v in legs)
    body.potential_energy = gravity * (hip_mass * y + sum(leg_mass * py for _, py, _, _ in legs))
    l = a + b
    for k, t in ((1, t1), (2, t2)):
        px, py = x + l * ca.sin(t), y - l * ca.cos(t)
        body.contact(f"foot{k}", px * math.sin(slope) + py * math.cos(slope), friction=friction,
                     tangent=px * math.cos(slope) - py * math.sin(slope))
    body.point("hip", ca.vertcat(x, y))
    return body


def floating_state(reduced, a=0.5, b=0.5):
    """``(q, v)`` of the floating model with the stance foot (leg 1) at the origin, from a reduced state."""
    l = a + b
    t1, t2, w1, w2 = reduced
    return [-l * math.sin(t1), l * math.cos(t1), t1, t2], [-l * math.cos(t1) * w1, -l * math.sin(t1) * w1, w1, w2]


def horizon(slope=PARAMETERS["slope"]):
    """``(start, duration, reduced state at start)``: from ``MARGIN`` after the legs cross at mid-stance to ``MARGIN``
    before the next step's swing foot reaches the slope (``ψ₁ + ψ₂`` rising through 0), times from the heel strike
    that starts the gait's step; the strike falls at ``STEP_TIME − start`` into the horizon."""
    from scipy.optimize import brentq

    params = {k: v for k, v in PARAMETERS.items() if k != "slope"}
    sol = _step(np.array(FIXED_POINT), slope, params, dense=True)
    ts = np.linspace(0.05, sol.t[-1], 400)
    at = lambda f: brentq(lambda t: f(sol.sol(t)), *next((a, b) for a, b in zip(ts[:-1], ts[1:]) if f(sol.sol(a)) * f(sol.sol(b)) < 0))  # noqa: E731
    rise = at(lambda x: x[0] + x[1] + 2 * slope)  # the swing foot reaches the slope: scuffing begins
    cross = at(lambda x: x[1] - x[0])  # the legs cross: it ends
    start = cross + MARGIN
    return start, STEP_TIME + rise - MARGIN - start, sol.sol(start)


def reference(times, slope=PARAMETERS["slope"]):
    """The gait's reduced state at ``times`` (from the heel strike of the step that starts it; one strike at ``STEP_TIME``,
    after which ``θ₁`` stays leg 1's angle, as in the floating model), shape ``(len(times), 4)``."""
    params = {k: v for k, v in PARAMETERS.items() if k != "slope"}
    step = _step(np.array(FIXED_POINT), slope, params, dense=True)
    out = []
    for t in np.atleast_1d(times):
        s = t if t <= STEP_TIME else t - STEP_TIME
        x = step.sol(s) if s >= 0.05 else _early(s, slope, params)
        out.append(x if t <= STEP_TIME else x[[1, 0, 3, 2]])  # after the strike leg 2 stands
    return np.array(out)


def _early(t, slope, params):
    from scipy.integrate import solve_ivp

    if t <= 0:
        return np.array(FIXED_POINT)
    return solve_ivp(lambda s, x: stance_rates(x, **params), (0.0, t), FIXED_POINT, rtol=1e-12, atol=1e-12, method="DOP853").y[:, -1]


def build(slope=PARAMETERS["slope"], friction=1.0):
    """One step between two mid-stances (:func:`horizon`), from the gait's state, a feasibility problem."""
    body = walker(slope=slope, friction=friction)
    start, duration, reduced = horizon(slope)
    q0, v0 = floating_state(reduced)
    prob = cl.Problem([body], t0=0.0, tf=duration, name="compass_gait")
    prob.initial({**dict(zip(body.coordinates, q0)), **dict(zip(body.speeds, v0))})
    # a guess from the start straight to the gait's state at the horizon's end: no strike time, no forces
    x, y, t1, t2 = body.coordinates
    q1, v1 = floating_state(reference([start + duration])[0][[1, 0, 3, 2]])
    q1[0] += 2 * (PARAMETERS["a"] + PARAMETERS["b"]) * math.sin(FIXED_POINT[0] + slope) * math.cos(slope)
    q1[1] -= 2 * (PARAMETERS["a"] + PARAMETERS["b"]) * math.sin(FIXED_POINT[0] + slope) * math.sin(slope)
    q1[2], q1[3], v1[2], v1[3] = q1[3], q1[2], v1[3], v1[2]
    prob.guess({**{c: (a, b) for c, a, b in zip(body.coordinates, q0, q1)}, **{s: (a, b) for s, a, b in zip(body.speeds, v0, v1)}})
    return prob
