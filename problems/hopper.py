"""A planar one-legged hopper finds its periodic gait by itself: contact-implicit, no contact schedule given.

The hopper of the contact-implicit literature (Manchester & Kuindersma, ISRR
2017; Le Cleac'h, Howell et al., ``ContactImplicitMPC.jl``): a body of mass
``m_b`` and inertia ``J_b`` at ``(x, y)``, a telescoping leg at angle ``θ``
from the vertical (it turns with the body) and length ``r``, a foot of mass
``m_f`` at its end, ``(x + r sin θ, y − r cos θ)``.  Controls: an attitude
torque ``τ`` on ``θ`` and the leg force ``F`` along ``r``.  The ground
``y_foot ≥ 0`` has Coulomb friction ``μ`` and plastic impacts (``e = 0``).

:func:`build` asks for one stride: the state at ``T`` is the state at ``0``
moved forward by the stride length ``D`` (average speed ``D/T``), with least
``∫ (τ² + F²) dt``, and nothing else.  Its guess is the body gliding forward
at constant height with the leg straight down and the foot sliding along the
ground, forces zero: no flight, no stance, no touchdown time.  Solved with
``contact="implicit"`` the optimizer finds a hop: stance, lift-off, flight,
touchdown (an impulse on a mesh point).

:func:`build_two_phase` is the same gait with that schedule imposed: a stance
phase on the hopper pinned at its foot (coordinates ``θ, r``; the ground force,
``m_b a_body + (m_b + m_f) g e_y``, kept in the friction cone with a
non-negative normal part), a flight phase ending when the foot comes down one
stride ahead, the touchdown as an :class:`colloc.model.impact.Impact` (plastic, no
slip) and periodicity.  (The stance written instead on the free hopper with
the foot's height as a holonomic row and its horizontal speed as a velocity
row ended in restoration failure after 68 iterations, probably because the
touchdown's rows already fix the foot's speed at the stance's first point.)  Its optimum, 870.39–870.63 from
10 to 80 intervals per phase with the stance 0.3277 s of 0.6, is the reference.

Measured (docs/contacts.md, "Contact-implicit solves"; ``scripts/hopper_gait.py``): the
contact-implicit solve finds one stance and one flight per stride by itself,
within 2.9 % (10 intervals) and 2.3 % (20) of the two-phase cost, its stance a
whole number of intervals (0.36 s, 0.33 s).  The gap is first order in the
mesh (the normal force is constant per interval, lift-off and touchdown fall
on mesh points): warm-started with the two-phase gait it is 10.9, 5.3 and
2.6 % at 10, 20 and 40 intervals.  The homotopy must start at ``ε = 1``
(``SOLVE``); from the default 0.1 it ends in dearer gaits.  From random
guesses (20 intervals) 4 of 10 end within 0.25 % of the two-phase cost and one
2.5 % below it, 848.71: its foot slides for one interval after touchdown
before it sticks, which the two-phase problem (no slip at touchdown) excludes.
With free steps (the default of ``contact="implicit"``; ``SOLVE`` keeps the mesh
given) that slipping touchdown is what the schedule-free guess finds: 823.57 and 827.48 at 10 and 20 intervals, 5 % below the
two-phase cost, the foot sliding 0.04–0.06 s after touchdown.

States
    ``hopper.x``, ``hopper.y`` [m] (body), ``hopper.theta`` [rad] (leg from
    the vertical, positive forward of the body), ``hopper.r`` [m] (leg
    length) and their speeds.
Controls
    ``hopper.torque`` [N m], ``hopper.force`` [N], each within bounds.
Contact
    ``hopper.foot``: gap ``y − r cos θ``, tangent ``x + r sin θ``, ``μ``, ``e = 0``.

Source: model and masses (``m_b = 3``, ``m_f = 0.3``, ``J_b = 0.75``,
``J_f = 0.075`` kg m²) after the hopper of ``ContactImplicitMPC.jl``
(Le Cleac'h, Howell, Schwager, Manchester 2021), written here as a Lagrangian
(its foot's mass moves with the foot); no published optimum for this stride
[NOT FOUND]: the reference is the two-phase solve of the same gait.
"""
import math

import casadi as ca
import numpy as np

import colloc as cl
from colloc.model.impact import Impact
from colloc.pipeline.multiphase_problem import MultiPhaseProblem, Phase

#: The homotopy starts at ε = 1 (not the default 0.1): from 0.1 the guess's sliding foot ends in gaits
#: 8–11 % dearer than the two-phase optimum (969.7 at 20 intervals), from 1 within 2–3 % of it.
# the mesh given: the gait the two-phase problem can represent (free steps find the slipping touchdown, above)
SOLVE = dict(scheme="hermite-simpson", intervals=20, contact="implicit", relaxation=1.0, free_steps=False)

BODY_MASS, FOOT_MASS = 3.0, 0.3
BODY_INERTIA, LEG_INERTIA = 0.75, 0.075
GRAVITY = 9.81
#: Leg length bounds and its rest length in the guess [m].
LEG = (0.3, 0.7, 0.5)
#: Leg angle bounds [rad] and control bounds [N m], [N].
THETA, MAX_TORQUE, MAX_FORCE = (-0.5, 0.5), 20.0, 100.0


def hopper(friction=0.8, contact=True):
    """The hopper as a :class:`colloc.Multibody` (``contact=False``: no ground, for the multi-phase model)."""
    body = cl.Multibody("hopper", coordinates=["x", "y", "theta", "r"],
                        coordinate_bounds={"theta": THETA, "r": LEG[:2]})
    x, y, th, r = body.coordinates
    foot = ca.vertcat(x + r * ca.sin(th), y - r * ca.cos(th))
    foot_speed = ca.jtimes(foot, body.q, body.v)
    body.kinetic_energy = (0.5 * BODY_MASS * (body.v[0] ** 2 + body.v[1] ** 2) + 0.5 * (BODY_INERTIA + LEG_INERTIA) * body.v[2] ** 2
                           + 0.5 * FOOT_MASS * ca.sumsqr(foot_speed))
    body.potential_energy = GRAVITY * (BODY_MASS * y + FOOT_MASS * foot[1])
    torque = body.control("torque", bounds=(-MAX_TORQUE, MAX_TORQUE))
    force = body.control("force", bounds=(-MAX_FORCE, MAX_FORCE))
    body.generalized_force = ca.vertcat(0, 0, torque, force)
    if contact:
        body.contact("foot", foot[1], restitution=0.0, friction=friction, tangent=foot[0])
    body.point("body", ca.vertcat(x, y))
    body.point("foot", foot)
    return body, foot, (torque, force)


def _periodic(prob, body, stride):
    """Every state at ``T`` equals its value at ``0``, but ``x``, which advances by ``stride``."""
    x = body.coordinates[0]
    for s in body.coordinates + body.speeds:
        shift = stride if s is x else 0.0
        prob.boundary(prob.at_tf(s) - prob.at_t0(s), shift, shift, name=f"periodic_{s.name()}")


def build(stride=0.5, duration=0.6, friction=0.8, height=None):
    """One stride of ``stride`` [m] in ``duration`` [s], contact-implicit, from a guess without contacts.

    ``height``: the guess's body height (default: the leg at rest length, foot on the ground).
    """
    body, foot, (torque, force) = hopper(friction)
    x, y, th, r = body.coordinates
    prob = cl.Problem([body], t0=0.0, tf=duration, name="hopper")
    prob.bound(y, 0.0, 1.5)
    _periodic(prob, body, stride)
    prob.initial({x: 0.0})
    prob.minimize(integral=torque**2 + force**2, name="effort")
    h = LEG[2] if height is None else height
    prob.guess({x: (0.0, stride), y: h, th: 0.0, r: LEG[2], body.speeds[0]: stride / duration})
    return prob


def stance_model():
    """The hopper standing on its foot, pinned at the origin: coordinates ``θ, r``; body at ``(−r sin θ, r cos θ)``.

    Returns ``(body, centre, ground, (torque, force))``: ``centre`` the body's position, ``ground`` the
    ground's force on the foot (2-vector, SX in the states and controls), ``m_b a_body + (m_b + m_f) g e_y``
    with the body's acceleration from the equations of motion (the foot is at rest).
    """
    body = cl.Multibody("hopper", coordinates=["theta", "r"], coordinate_bounds={"theta": THETA, "r": LEG[:2]})
    th, r = body.coordinates
    centre = ca.vertcat(-r * ca.sin(th), r * ca.cos(th))
    centre_speed = ca.jtimes(centre, body.q, body.v)
    body.kinetic_energy = 0.5 * BODY_MASS * ca.sumsqr(centre_speed) + 0.5 * (BODY_INERTIA + LEG_INERTIA) * body.v[0] ** 2
    body.potential_energy = GRAVITY * BODY_MASS * centre[1]
    torque = body.control("torque", bounds=(-MAX_TORQUE, MAX_TORQUE))
    force = body.control("force", bounds=(-MAX_FORCE, MAX_FORCE))
    body.generalized_force = ca.vertcat(torque, force)
    body.point("body", centre)
    body.point("foot", ca.vertcat(0.0, 0.0))
    eq = body.equations()
    a = ca.solve(eq.mass_matrix, eq.generalized_force - eq.bias)
    accel = ca.mtimes(ca.jacobian(centre, body.q), a) + ca.jtimes(centre_speed, body.q, body.v)
    ground = BODY_MASS * accel + ca.vertcat(0.0, (BODY_MASS + FOOT_MASS) * GRAVITY)
    return body, centre, ground, (torque, force)


def build_two_phase(stride=0.5, duration=0.6, friction=0.8, stance=0.3):
    """:func:`build` with the gait scheduled: stance (foot pinned), lift-off, flight, touchdown (Impact), periodic.

    ``stance`` is the guessed stance duration [s]; both durations are free and sum to ``duration``.
    The stance phase starts right after touchdown, its foot at the origin; the flight ends with the
    foot one stride ahead, where the touchdown's post-impact state starts the next stance.
    """
    sbody, centre, ground, (st, sf) = stance_model()
    fbody, foot, (ft, ff) = hopper(contact=False)
    stance_prob = cl.Problem([sbody], t0=0.0, tf=(0.02, duration), name="stance")
    flight_prob = cl.Problem([fbody], t0=0.0, tf=(0.02, duration), name="flight")
    stance_prob.minimize(integral=st**2 + sf**2, name="effort")
    flight_prob.minimize(integral=ft**2 + ff**2, name="effort")
    # the ground pushes (a non-negative normal force), within the friction cone
    stance_prob.path(ca.vertcat(ground[1], friction * ground[1] - ground[0], friction * ground[1] + ground[0]), 0.0, math.inf,
                     name="ground_force")
    flight_prob.bound(fbody.coordinates[1], 0.0, 1.5)
    flight_prob.boundary(flight_prob.at_tf(foot[0]), stride, stride, name="stride")
    reach = 0.2 * stride  # the guess: the body passes over the foot from reach behind to reach ahead
    th0, th1 = math.asin(reach / LEG[2]), math.asin(-reach / LEG[2])
    speed = stride / duration
    stance_prob.guess({"tf": stance, sbody.coordinates[0]: (th0, th1), sbody.coordinates[1]: LEG[2],
                       sbody.speeds[0]: (th1 - th0) / stance})
    flight_prob.guess({"tf": duration - stance, fbody.coordinates[0]: (reach, stride - reach), fbody.coordinates[1]: LEG[2] * math.cos(th0),
                       fbody.coordinates[2]: (th1, th0), fbody.coordinates[3]: LEG[2], fbody.speeds[0]: speed})
    a, b = Phase(stance_prob, name="stance"), Phase(flight_prob, name="flight")
    b.end_when(foot[1], "decreasing", inside=True, name="touchdown")
    mp = MultiPhaseProblem([a, b], name="hopper_two_phase")
    x, y = fbody.coordinates[:2]
    vx, vy = fbody.speeds[:2]
    centre_speed = ca.jtimes(centre, sbody.q, sbody.v)
    mp.connect(a, b, jump={x: centre[0], y: centre[1], vx: centre_speed[0], vy: centre_speed[1]})
    ibody, ifoot, _ = hopper(contact=False)
    impact = Impact(ibody, contact=ifoot - ca.vertcat(stride, 0.0), restitution=0.0, normal=1, friction=friction, name="touchdown")
    mp.periodic(impact=impact)
    mp.link(a.duration + b.duration, duration, duration, name="stride_time")
    return mp


def gait(res, intervals):
    """``dict(stance, fraction, lift_off, touchdown)`` of a contact-implicit result on ``intervals`` intervals: the
    time the foot carries a force (intervals whose normal force exceeds 1e-3 of the largest), the ends of
    those spans and the impacts (impulse above 1e-3 N s)."""
    traj = res.trajectory
    t = traj.time
    stride = (t.size - 1) // intervals
    mesh = t[::stride]
    force = traj["hopper.foot.normal_force"][::stride][:-1]  # each interval's force sits on the mesh point it starts
    on = force > 1e-3 * max(force.max(), 1e-12)
    stance = float(np.sum(np.diff(mesh)[on]))
    lift = [float(mesh[i + 1]) for i in range(on.size) if on[i] and not on[(i + 1) % on.size]]
    touch = [d["time"] for d in res.contact["impacts"] if d["impulse"] > 1e-3]
    return dict(stance=stance, fraction=stance / (t[-1] - t[0]), lift_off=lift, touchdown=touch)


def warm_start(two_phase, intervals, stride=0.5, duration=0.6, touchdown_at=2 / 3):
    """``(guess, mesh)`` for :func:`build` from a :func:`build_two_phase` result (a diagnostic, not the default start).

    The periodic gait is read from a time in the stance chosen so that its touchdown falls on the mesh
    point nearest ``touchdown_at`` of the horizon (uniform mesh of ``intervals``): states, controls, the
    stance's ground force as the contact's normal and friction forces, and the touchdown's normal impulse
    (from ``M (v⁺ − v⁻) = Jᵀ P``, least squares).
    """
    traj = two_phase.trajectory
    ph = traj.metadata["phases"]
    ts = ph[0]["duration"]
    h = duration / intervals
    t_td = h * round(touchdown_at * intervals)  # touchdown on a mesh point of the horizon
    shift = duration - t_td  # the horizon starts at this time of the two-phase stride (in its stance)
    sbody, _, ground, (st, sf) = stance_model()
    ground_f = ca.Function("ground", [sbody.q, sbody.v, ca.vertcat(st, sf)], [ground])
    t = np.unique(np.r_[np.linspace(0.0, duration, 8 * intervals + 1), t_td, t_td - 1e-9])
    tau = (t + shift) % duration
    tau[t == t_td] = 0.0  # the touchdown's post-impact state starts the stance
    stance, flight = traj.phase(0), traj.phase(1)
    cols = {n: np.zeros(t.size) for n in ("x", "y", "theta", "r", "x_speed", "y_speed", "theta_speed", "r_speed", "torque", "force")}
    normal, friction = np.zeros(t.size), np.zeros(t.size)
    for k, (tk, sk) in enumerate(zip(t, tau)):
        wrapped = stride if tk + shift >= duration - 1e-12 and tk != t_td - 1e-9 else 0.0
        if sk < ts:
            s = stance.sample(np.array([sk]))
            th, r, dth, dr = (float(s[f"hopper.{n}"][0]) for n in ("theta", "r", "theta_speed", "r_speed"))
            u = [float(s["hopper.torque"][0]), float(s["hopper.force"][0])]
            vals = dict(x=-r * np.sin(th), y=r * np.cos(th), theta=th, r=r, x_speed=-dr * np.sin(th) - r * np.cos(th) * dth,
                        y_speed=dr * np.cos(th) - r * np.sin(th) * dth, theta_speed=dth, r_speed=dr, torque=u[0], force=u[1])
            normal[k], friction[k] = np.asarray(ground_f([th, r], [dth, dr], u)).ravel()[::-1]
        else:
            s = flight.sample(np.array([sk - ts]))
            vals = {n: float(s[f"hopper.{n}"][0]) for n in cols}
            if tk == t_td - 1e-9:
                vals = {n: float(flight[f"hopper.{n}"][-1]) for n in cols}
        vals["x"] += wrapped
        for n in cols:
            cols[n][k] = vals[n]
    x0 = cols["x"][0]
    cols["x"] = cols["x"] - x0
    # the touchdown impulse from the speed jump across it
    fbody, foot, _ = hopper(contact=False)
    eq = fbody.equations()
    fm = ca.Function("mj", [fbody.q], [eq.mass_matrix, ca.jacobian(foot, fbody.q)])
    k_minus, k_plus = np.flatnonzero(t == t_td - 1e-9)[0], np.flatnonzero(t == t_td)[0]
    q = [cols[n][k_plus] for n in ("x", "y", "theta", "r")]
    v = lambda k: np.array([cols[n][k] for n in ("x_speed", "y_speed", "theta_speed", "r_speed")])  # noqa: E731
    M, J = (np.asarray(a) for a in fm(q))
    P = np.linalg.lstsq(J.T, M @ (v(k_plus) - v(k_minus)), rcond=None)[0]
    keep = t != t_td - 1e-9
    impulse = np.zeros(t.size)
    impulse[k_plus] = P[1]
    out = {f"hopper.{n}": c[keep] for n, c in cols.items()}
    out["hopper.foot.normal_force"], out["hopper.foot.friction_force"] = normal[keep], friction[keep]
    out["hopper.foot.impulse"] = impulse[keep]
    kinds = {n: "control" if n.endswith(("torque", "force")) and "foot" not in n else "multiplier" if "foot" in n else "state" for n in out}
    return cl.Trajectory(t[keep], out, kinds, metadata=dict(scheme="hermite-simpson")), np.linspace(0.0, 1.0, intervals + 1)
