"""Solo12 holds its stance on four feet, contact-implicit: unilateral 3-D frictional contacts, no schedule.

The quadruped Solo12 of ``example-robot-data`` (``solo_description/robots/solo12.urdf``, a floating
base and 12 revolute joints, 2.50 kg) starts at rest in the SRDF's ``straight_standing`` pose
(``problems/solo12_jump.py``'s :func:`standing_pose`) and must be at rest again, in the same pose, after
``duration``.  Its four feet are contacts with the ground (``Multibody.contact_point``), each with a
polyhedral Coulomb cone of 4 facets and μ = ``friction``: the transcription decides by itself where each
foot pushes (``contact="implicit"``), nothing is scheduled.

Objective
    minimize ∫|τ|² dt, τ the 12 joint torques.
States
    ``solo12.base_x … base_qz`` and the 12 joint angles, their speeds (as in ``solo12_jump``).
Controls
    ``solo12.tau_<joint>`` [N m], |τ| ≤ ``max_torque`` = 2.7 N m (Grimminger et al. 2020).
Contacts
    ``solo12.<leg>_FOOT``: gap = the foot's height, normal force ≥ 0, friction in the 4-facet cone
    (columns ``normal_force``, ``friction_force_1``, ``_2``).
Constraints
    M(q) v̇ + c(q, v) = τ + Σ_k (W_n,kᵀ λ_k + W_t,kᵀ f_k), the feet's complementarity rows; start and end
    at rest in the standing pose (``qw`` a range: the unit norm fixes it).

What is checked (tests/test_solo12_contact.py): at rest the feet's forces balance the weight, by the
contacts' own Jacobians against Pinocchio's mass and centre of mass; over the solved stance the time
average of the feet's normal forces is the weight m g (start and end at rest: the base's vertical
momentum does not change).  Measured (4 intervals, mesh given, from :func:`standing_guess`): J = 0.2516392,
284 iterations over the relaxation homotopy (66 at ε = 0.1, then 44–49 per step down to 1e-5, 9–13 below),
26 CPU s; the same stance with the feet held by holonomic constraints 0.2514116 (40 iterations, 3 CPU s).
With a force at every collocation point (``contact_forces="collocation"``) 0.2514556 in 750 iterations.
``colloc verify`` passes it: its feet stick throughout, so each interval is integrated with them held by the
contact law (integrated with the file's constant forces instead, an interval ends 0.86 rad/s off in the knee
speeds: a 38 g lower leg turns a small force error into a large speed error).

The jump without a schedule (:func:`build_jump`, ``JUMP_SOLVE``) is solved from :func:`jump_guess`, a guess
that leaves the ground (the base forward at constant speed and on a ballistic arc in height, the legs by inverse
kinematics, the feet on the ground before 0.3 s and after 0.55 s, the forces zero in between): nothing in the
problem says when or which feet lift, and the solution's feet lift and land together, near the guess's times.
Measured (mesh given, uniform; homotopy from ε₀ = 1e-2 by factors 0.1 to 1e-8; IPOPT tol 1e-8; CPU s of
``colloc.solve`` on a shared, loaded 2-core machine): 17 intervals J = 1.672957, 471 iterations (178 at ε = 1e-2,
then 31–66 per step), 143 CPU s, airborne 0.3–0.55 s as guessed; 24 intervals J = 1.453281, 571 iterations,
297 CPU s, a longer push and a flight of about 0.19 s; 12 intervals J = 1.946391, 395 iterations, 99 CPU s.  The
three-phase jump of the same motion and cost (``problems/solo12_jump.py``, graded 6 intervals per phase): 1.656092
with its durations (0.3, 0.25, 0.3 s), 1.364471 with the 24-interval solve's (0.328, 0.194, 0.328 s).  From
:func:`standing_guess` (feet sliding under the moving base, loaded throughout) the homotopy does not finish: its
steps converge while ε is large (6 intervals, ε₀ = 10, factor 0.3: 88, 83, 153, 308 iterations down to ε = 0.27)
and then crawl, each smaller ε starting with the active products violated; from ε₀ = 0.1 the first step already
crawls.  With a force at every collocation point (``JUMP_SOLVE_POINTS`` at 6 intervals, ε₀ = 1) it does finish
from :func:`standing_guess`: J = 0.853264, 682 iterations (115, 224, 126, 44, 42, 32, 28, 24, 47), 155 CPU s, and
the robot it finds does not jump on four feet but bounds on diagonal pairs (FL+HR push, a flight of about 0.13 s
with every foot up, FR+HL land), half the cost of the four-footed jump; the file's checks short of its integrations
pass.  Warm-started from it on 12 intervals (ε₀ = 1e-2): J = 1.147083, 541 iterations, 249 CPU s, and no flight: a
foot is always loaded: FL+HR carry it while HL and FR hover a few mm unloaded (0.08–0.29 s), then FR+HL while FL
(3 mm) and HR (up to 76 mm) swing (0.29–0.57/0.71 s), a diagonal walk rather than a jump; its file's checks short of the integrations pass too.  The leaving guess starts with every complementarity product near zero (the feet at rest on the ground
while loaded, in the air while unloaded), so the first step only has to make the motion dynamically consistent.
``colloc verify`` of the 17-interval file fails: its checks against the problem and the model pass (defects and
derivative columns at 1.4e-4 of their tolerance), but its per-interval integrations miss in the last push interval
and the last flight interval (knee speeds 24 rad/s off, the light legs stopping for a landing without impulse), and
its event-driven re-simulation (140 events) follows the file's torques away from it from there on, landing HR with an
impact the file, solved without impulses, lacks: 50 ms intervals do not resolve the legs at take-off and touch-down (docs/contacts.md).
``JUMP_SOLVE_POINTS`` (radau-3, a force at every collocation point, the same 17 intervals): J = 1.413273, 792
iterations, 538 CPU s; the take-off on the mesh point 0.3 s, a flight of about 0.2 s; verify's per-interval
integrations still miss, in the interval where the feet land (0.5–0.55 s, knee speeds 59 rad/s) and at take-off
(1.8 rad/s).  :func:`graded_mesh` refines a solved jump's mesh where its feet lift and land, for a second,
warm-started solve (no schedule imposed); with free steps that solve had not finished after 1,555 iterations
(Hermite–Simpson) or 726 (radau-3, forces at the collocation points).

Why the landing missed: the radau file's feet reach the ground at speed (its gaps close at the mesh point 0.50 s
with normal speeds −0.14 m/s in front, −0.61 m/s behind, and no force; the next collocation point, 7.8 ms later,
carries 28 N on each hind foot and they stand still), and they leave it at speed (+0.16 m/s at 0.30 s, the gap
closed).  Without impulses a foot's normal speed is continuous and zero in stance, so the file contradicts its own
model between its points.  ``build_jump(landing=a)`` adds :func:`soft_landing`'s rows ``ẏ² ≤ 2a(φ + δ)``; with
a = 100 m/s² (``SOFT_LANDING``) and ``JUMP_SOLVE_POINTS`` on 17 intervals from :func:`jump_guess`: J = 2.066966,
1173 iterations, 759 CPU s; verify's landing interval, re-simulation and Newton checks pass, the take-off interval
(0.25–0.30 s, knee speeds 14 rad/s) and one impact of HL the simulator finds at 0.491 s do not.
:func:`solve_soft_jump` refines it solve by solve, each from the last solution (:func:`graded_mesh`,
:func:`resampled_guess`).  Measured: on ``graded_mesh(first, 3)`` (25 intervals) J = 1.816618 (ε 1e-2 → 1e-5 from
:func:`jump_guess`, 1616 iterations; then 1e-6 → 1e-8 from that iterate, 417 iterations, 908 CPU s), +9.7 % on the
three-phase jump; verify fails 11 checks: stance intervals 0.20–0.25 and 0.60–0.65 s (knee and hip speeds 2–3.7e-2
against 1–2.6e-2), the soft landing between grid points in 0.55–0.60 s, and ``impact times``.  On
``graded_mesh(second, 3, 0.1)`` (33 intervals) those integrations and the rows between grid points pass.  ``impact
times`` fails on the soft landing itself: simulated from the file's state an interval before, the feet land at 0.55 s
at √(2aδ) = 0.014 m/s, an impulse of 1.4e-3 N s that the file, without impulses, lacks; with a clearance δ = 1e-8
(1.4e-3 m/s) it passes.  Both (``SOFT_STAGES``' second stage): ε 1e-4 → 1e-7 converged (294, 386, 530, 396
iterations), and the ``FINISH`` solve at ε = 1e-7 from it: J = 1.755955 (+6.0 % on the three-phase jump), 145
iterations, 193 CPU s, and ``colloc verify`` passes every check (tests/data/solo12_jump_soft33.npz; docs/contacts.md).

A jump without a guess that leaves the ground: ``build_jump(apex=APEX)`` (:func:`apex_row`) asks for a base at
least 0.34 m high halfway, 2 cm above what straight legs reach standing.  From :func:`standing_guess` with
``JUMP_SOLVE_POINTS`` on 6 intervals, ε from 1: J = 0.884074, 1027 iterations, 268 CPU s; all four feet in the air
together 0.305–0.375 s (HL from 0.16 s), FR down again at 0.425 s with the base rolled; verify's per-interval
integrations of its 0.14 s intervals miss.  With soft landings (``build_jump(apex=APEX, landing=100)``) on 17 uniform
intervals, ε from 1: J = 1.855146, 1669 iterations, 1046 CPU s, all four feet in the air 0.30–0.45 s, landing one by
one 0.45–0.65 s; on ``graded_mesh(that, 3)`` (25 intervals): J = 1.594229, 640 iterations, 552 CPU s, verify 26 of 62
(the interval 0.55–0.60 s where the last feet land, the soft landings between grid points, ``impact times``).
Solved again (17 uniform J = 1.724591, 25 graded J = 1.494162), then on that file's ``graded_mesh(..., each_foot=True)``
(34 and 43 intervals): J = 1.466168 and 1.456293, verify 37 of 60 and 43 of 62: HR lands sliding at 3.0 m/s and
friction stops it within an interval, which ``build_jump(tangential=True)`` forbids (docs/contacts.md, what those
solves measured).  With it from the standing guess (17 uniform intervals J = 2.843080, then ``graded_mesh(..., 3,
each_foot=True)``, 43 intervals, J = 2.573430, no foot sliding) verify passes 52 of 62: the take-off interval, one
landing interval, two soft landings between grid points and ``impact times``; on :func:`split_mesh` of it at those
intervals (51, clearance δ = 1e-7) J = 2.507263 and verify passes 59 of 62 (one unrefined stance interval and
``impact times``); split there too (52 intervals, δ = 1e-8, ε = 1e-6) J = 2.512815 and verify passes 60 of 62: FR
lands on a mesh point at 5.4e-3 m/s, a speed Radau's uncollocated interval start drops, and HL's relaxed friction in
the air fails the contact law.  With the transcription's ``arrival`` rows (every foot reaching the ground at rest),
ε = 1e-6 and then ``arrival={"reach": 1e-6}`` at ε = 5e-7 from there: solved, J = 2.509653 (86 iterations, 300 CPU s),
and ``colloc verify`` passes every check (62 of 62; tests/data/solo12_jump_standing52.npz; each stage in
docs/contacts.md, "The jump from the standing guess, stage by stage").  Its feet: HL and FR lift at 0.05 s, FL and HR
push until 0.25 s, all four in the air 0.25–0.45 s, then FR, HR, FL and HL land one after the other (FR lifts once
more, 0.55–0.767 s); 1.52× the three-phase jump's cost, which lands all four together without the apex and tangential
rows.  ``colloc verify FILE problems/solo12_stand.py --set distance=0.2 --set duration=0.85 --set regularization=1e-6
--set landing=100 --set apex=0.34 --set tangential=True --set clearance=1e-8`` checks it.

Source: robot model from example-robot-data (Solo12 URDF and the SRDF's ``straight_standing`` pose;
Grimminger et al., "An open torque-controlled modular robot architecture for legged locomotion
research", IEEE RA-L 5(2), 2020); contact-implicit collocation after Posa, Cantu & Tedrake, "A direct
method for trajectory optimization of rigid bodies through contact", IJRR 33(1), 2014.
"""
import importlib.util
import os

import casadi as ca

import colloc as cl

SOLVE = dict(scheme="hermite-simpson", intervals=4, contact="implicit", impacts=False, free_steps=False)
#: The schedule-free jump (:func:`build_jump`, from :func:`jump_guess`): a soft landing, as the three-phase jump's, so
#: no impulses; the mesh given, 17 intervals of 50 ms; the homotopy from ε₀ = 1e-2, near the guess's products
#: (module docstring).
JUMP_SOLVE = dict(scheme="hermite-simpson", intervals=17, contact="implicit", impacts=False, free_steps=False,
                  relaxation=1e-2)
#: The same with a force at every collocation point of a Radau mesh: the take-off on a mesh point, the push's last point
#: loaded and the flight's first free; the touch-down still inside an interval (module docstring).
JUMP_SOLVE_POINTS = dict(JUMP_SOLVE, scheme="radau-3", contact_forces="collocation")
#: Gap ``δ`` [m] of :func:`soft_landing`'s rows: the feet's normal speed at a closed gap is at most ``√(2 a δ)``.
SOFT_CLEARANCE = 1e-6
#: Normal speed [m/s] at which a foot may approach a closed gap at the initial time (:func:`soft_start`).
APPROACH_SPEED = 1e-7
#: Base height [m] halfway that :func:`apex_row` asks of a jump from :func:`standing_guess`: 2 cm above the
#: highest base that the feet on their ground points allow (legs straight, 0.32 m).
APEX = 0.34
#: :func:`solve_soft_jump`'s refinements after the uniform solve: ``(pieces, width [s], first ε, clearance δ [m])``
#: of each :func:`graded_mesh`, its warm-started homotopy and its soft landing's rows.
SOFT_STAGES = ((3, 0.0, 1e-4, SOFT_CLEARANCE), (3, 0.1, 1e-4, 1e-8))
#: Last ε of :func:`solve_soft_jump`'s refinements: verify's contact law holds to 1e-6, and at ε = 1e-8 the
#: 33-interval solve crawls (inf_du 1e3–1e4, steps 1e-2; 531 iterations).
SOFT_TOLERANCE = 1e-7
#: IPOPT options of :func:`solve_soft_jump`'s finishing solve, from the last refinement's iterate at its last ε: the
#: barrier started at 1e-8 and kept monotone, so the start is not pushed off its active rows (started at 1e-4 and
#: adaptive, the 33-interval finish drifted from J 1.7595 to 1.767 in 47 iterations; with these, solved in 145).
FINISH = {"mu_init": 1e-8, "mu_strategy": "monotone"}
#: Deceleration ``a`` [m/s²] of the soft landing that :func:`solve_soft_jump` asks for (``build_jump(landing=...)``).
SOFT_LANDING = 100.0


def _jump_script():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "solo12_jump.py")
    spec = importlib.util.spec_from_file_location("solo12_jump", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def robot(friction=0.8, facets=4):
    """Solo12 (floating base) with its four feet as ground contacts."""
    jump = _jump_script()
    body = jump.robot()
    for foot in jump.FEET:
        body.contact_point(foot, name=foot, friction=friction, cone="polyhedral", facets=facets)
    return body


def _standing_problem(name, duration, friction, max_torque):
    """The robot standing (its pose, the feet's positions, the torques that hold it) and a problem on it with
    bounded torques and least ∫|τ|² dt."""
    jump = _jump_script()
    body = robot(friction)
    q0, feet0 = jump.standing_pose(body)
    tau0, _ = jump.static_stand(body, q0)
    tau = [u.symbol for u in body.variables if u.kind == "control"]
    prob = cl.Problem([body], t0=0.0, tf=duration, name=name)
    for u in tau:
        prob.bound(u, -max_torque, max_torque)
    prob.minimize(integral=sum(u**2 for u in tau), name="torque_squared")
    return body, q0, feet0, tau0, tau, prob


def static_forces(body, q, v=None, a=None):
    """Joint torques (12,) and each foot's force in its contact frame (4, 3): normal force, friction along the
    contact's two tangents, that give ``body`` in pose ``q`` the speeds ``v`` and accelerations ``a`` (default
    rest), least-squares split: ``M(q) a + c(q, v) = Sᵀτ + Σ_k (W_n,kᵀ λ_k + W_t,kᵀ f_k)``, with the contacts' own
    Jacobians."""
    import numpy as np

    nv = body.num_speeds
    v = np.zeros(nv) if v is None else v
    a = np.zeros(nv) if a is None else a
    acc = ca.SX.sym("a", nv)
    rhs = ca.mtimes(body.equations().mass_matrix, acc) + body.bias_force
    W = ca.vertcat(*[ca.vertcat(c.normal_jacobian, c.tangent_jacobian) for c in body.contacts])
    W, load = ca.Function("W", [body.q, body.v, acc], [W, rhs])(q, v, a)
    S = np.zeros((nv - 6, nv))
    S[:, 6:] = np.eye(nv - 6)
    sol = np.linalg.lstsq(np.hstack([S.T, np.array(W).T]), np.array(load).ravel(), rcond=None)[0]
    return sol[:nv - 6], sol[nv - 6:].reshape(len(body.contacts), 3)


def standing_guess(duration, distance=0.0, friction=0.8, num=33):
    """A guess that stands: the standing pose, its base moving ``distance`` forward from rest to rest (smoothstep
    ``3s² − 2s³``, the legs rigid, so the feet slide), with the torques and feet's forces that give it that motion
    (:func:`static_forces`: the weight and the base's push, split by least squares).  It names no contact mode: every
    foot is on the ground and loaded throughout, as it is at the start.

    Returns
    -------
    Trajectory
        ``num`` times over ``[0, duration]``; states, controls and the feet's ``normal_force``,
        ``friction_force_1``, ``_2`` (for ``colloc.solve(..., guess=...)``).
    """
    import numpy as np

    body = robot(friction)
    q0, _ = _jump_script().standing_pose(body)
    t = np.linspace(0.0, duration, num)
    s = t / duration
    x, vx, ax = (distance * (3 * s**2 - 2 * s**3), distance * 6 * (s - s**2) / duration, distance * 6 * (1 - 2 * s) / duration**2)
    tau, forces = zip(*[static_forces(body, q0 + np.eye(q0.size)[0] * xk, np.eye(body.num_speeds)[0] * vk,
                                      np.eye(body.num_speeds)[0] * ak) for xk, vk, ak in zip(x, vx, ax)])
    q, v = np.tile(np.asarray(q0, float), (num, 1)), np.zeros((num, body.num_speeds))
    q[:, 0], v[:, 0] = q0[0] + x, vx
    return _guess_trajectory(body, t, q, v, np.array(tau), np.array(forces))


def _guess_trajectory(body, t, q, v, tau, forces):
    """A guess as a Trajectory: coordinates ``q`` and speeds ``v`` (num, ·), the torques ``tau`` (num, 12) as
    controls and the feet's forces ``forces`` (num, 4, 3: normal, two tangents) as multipliers."""
    columns = {s.name(): q[:, j] for j, s in enumerate(body.coordinates)}
    columns.update({s.name(): v[:, j] for j, s in enumerate(body.speeds)})
    kinds = {n: "state" for n in columns}
    for j, u in enumerate([u.symbol for u in body.variables if u.kind == "control"]):
        columns[u.name()], kinds[u.name()] = tau[:, j], "control"
    for i, c in enumerate(body.contacts):
        for j, suffix in enumerate(("normal_force", "friction_force_1", "friction_force_2")):
            columns[f"{c.name}.{suffix}"], kinds[f"{c.name}.{suffix}"] = forces[:, i, j], "multiplier"
    return cl.Trajectory(t, columns, kinds)


def build(duration=0.2, friction=0.8, max_torque=2.7, distance=0.0, regularization=0.0, landing=0.0, apex=0.0,
          clearance=SOFT_CLEARANCE, tangential=False, settle=0.0):
    """From rest in the standing pose to rest ``distance`` further forward after ``duration`` seconds (0: stand
    still), least ∫(|τ|² + w|q̈_joints|²) dt, w = ``regularization``; the problem's own guess stands, its base
    sliding forward at constant speed (:func:`standing_guess` adds the feet's forces).  ``landing`` > 0: every
    foot lands and lifts softly (:func:`soft_landing`, that deceleration [m/s²], gap ``clearance``; ``tangential``: its
    whole speed, not only its normal one; ``settle``: its last gap [m]).  ``apex`` > 0: the base is at least that high [m] halfway (:func:`apex_row`)."""

    name = "solo12_stand" if distance == 0 else "solo12_jump_implicit"
    body, q0, _, tau0, tau, prob = _standing_problem(name, duration, friction, max_torque)
    if regularization:
        prob.minimize(integral=regularization * sum(a**2 for a in list(body.a.elements())[6:]), name="joint_acceleration")
    if landing != 0.0:
        soft_landing(prob, body, landing, clearance, tangential, settle)
    if apex != 0.0:
        apex_row(prob, body, apex)
    start = {s: float(v) for s, v in zip(body.coordinates, q0)}
    start[body.coordinates[3]] = (0.0, 1.5)
    start.update({s: 0.0 for s in body.speeds})
    end = dict(start)
    end[body.coordinates[0]] = float(q0[0] + distance)
    prob.initial(start)
    prob.final(end)
    guess = {s: float(v) for s, v in zip(body.coordinates, q0)}
    guess[body.coordinates[0]] = (float(q0[0]), float(q0[0] + distance))
    guess[body.speeds[0]] = distance / duration
    guess.update({u: float(f) for u, f in zip(tau, tau0)})
    prob.guess(guess)
    return prob


def soft_landing(problem, body, deceleration, clearance=SOFT_CLEARANCE, tangential=False, settle=0.0):
    """Path rows ``ẏ² ≤ 2 a (φ + δ)`` of every foot (``a`` = ``deceleration``, ``δ`` = ``clearance``): a foot moves
    towards or away from the ground no faster than a deceleration ``a`` could stop it within its gap.
    ``tangential=True``: ``ẏ² + |ṡ|² ≤ 2 a (φ + δ)``, the foot's whole speed: it also touches down and lifts off
    without sliding, and it slides on the ground no faster than ``√(2 a δ)`` (a foot that must stick).
    ``settle`` = ``s`` > 0: ``ẏ² ≤ 2 a φ²/(φ + s) + 2 a δ``, the same far from the ground and, within ``s`` of it, an
    approach that slows in proportion to the gap (``ẏ ≤ √(2a/s) φ``): a grid point a little above the ground (a foot
    about to land between grid points) then allows almost no speed, where the plain row allows ``√(2aφ)``.

    Why: the problem has no impulses (``impacts=False``), so a foot's normal speed ``ẏ`` is continuous, and it is 0
    wherever the foot stands: it must be 0 where the foot touches down or lifts off.  Collocation sees the gap
    ``φ ≥ 0`` at its points only, and without these rows a foot may arrive at a closed gap at speed (0.61 m/s, the
    hind feet of the 17-interval radau jump) and be stopped within one interval by a force that the interval's
    polynomial does not resolve: integrated with those forces, the light legs end 59 rad/s off.  ``δ`` (1 µm) keeps the
    rows feasible in a stance whose gap the relaxation leaves at −1e-8; the arrival speed is at most ``√(2 a δ)``.
    A foot landing with a tangential speed slides until friction stops it, within an interval as well: the
    ``tangential`` rows remove that slide too.
    """
    _positive(deceleration, "deceleration", "a finite number > 0 (m/s²)")
    if settle != 0.0:
        _positive(settle, "settle", "0 or a finite number > 0 (m)")
    for c in body.contacts:
        speed = ca.sumsqr(ca.mtimes(c.normal_jacobian, body.v))
        if tangential and c.tangent_jacobian is not None:
            speed += ca.sumsqr(ca.mtimes(c.tangent_jacobian, body.v))
        room = c.gap if not settle else c.gap**2 / (c.gap + settle)
        problem.path(speed - 2.0 * deceleration * room, upper=2.0 * deceleration * clearance,
                     name=f"soft_landing.{c.name.split('.')[-1]}")


def _positive(value, name, what):
    if not (isinstance(value, (int, float)) and 0 < value < float("inf")):
        raise cl.ProblemError(f"The soft landing's `{name}` must be {what}; got {value!r}.")


def soft_start(problem, body, deceleration, approach):
    """Boundary rows at the initial time, ``−ẏ − φ √(2a/(φ + φ₀)) ≤ v₀`` per foot (``a`` = ``deceleration``, ``φ₀`` =
    ``approach``, ``v₀`` = ``APPROACH_SPEED``): a motion without impulses starts on no foot that is about to strike
    the ground.  Far from it (``φ ≫ φ₀``) a foot may approach as fast as :func:`soft_landing`'s rows allow,
    ``√(2aφ)``; near it no faster than ``√(2a/φ₀) φ + v₀`` (7.3e-7 m/s at a 1e-8 m gap for a = 100, φ₀ = 5 cm: an
    impulse below the simulator's smallest impact).

    Why: a periodic stride may start where a foot touches down, and the complementarity relaxation leaves that foot's
    gap at up to ε/λ (1e-8 m), at which :func:`soft_landing`'s rows still allow ``√(2a(φ + δ))`` = 2e-3 m/s; the
    rigid-contact simulator, started on that state, stops the foot with an impulse the file lacks.  Inside the horizon
    the simulator starts an interval before, and where it lands the foot at that speed the same holds (the stride's
    touch-down at T/2 does): these rows at every collocation point would remove both, but they bind through each
    stance, where the feet's normal speeds at the points are up to 4e-4 m/s (the scheme's error), and IPOPT stalled
    on them.  Linear in the speed, the row stays regular where it binds."""
    _positive(deceleration, "deceleration", "a finite number > 0 (m/s²)")
    _positive(approach, "approach", "a finite length > 0 (m)")
    for c in body.contacts:
        normal = ca.mtimes(c.normal_jacobian, body.v)
        rate = ca.sqrt(2.0 * deceleration / ca.fmax(c.gap + approach, 1e-3 * approach))  # finite for a wild iterate
        problem.boundary(problem.at_t0(-normal - rate * c.gap), lower=-ca.inf, upper=APPROACH_SPEED,
                         name=f"soft_start.{c.name.split('.')[-1]}")


def build_jump(distance=0.2, duration=0.85, friction=0.8, max_torque=2.7, regularization=1e-6, landing=0.0, apex=0.0,
               clearance=SOFT_CLEARANCE, tangential=False, settle=0.0):
    """``solo12_jump``'s motion without its schedule: :func:`build` over its distance and duration (its push,
    flight and landing add up to 0.85 s) with its cost; solve it from :func:`jump_guess` with ``JUMP_SOLVE``.
    ``colloc verify FILE problems/solo12_stand.py --set distance=0.2 --set duration=0.85 --set regularization=1e-6``
    checks a solution.  ``apex`` (e.g. ``APEX``) makes it a jump without a guess that leaves the ground: the task
    asks for a height halfway that the legs cannot reach standing (:func:`apex_row`)."""
    return build(duration, friction, max_torque, distance, regularization, landing, apex, clearance, tangential, settle)


def apex_row(problem, body, height):
    """The path row ``z(t) + g (t − T/2)²/2 ≥ height`` of the base's height ``z``: at ``T/2`` the base is at least
    ``height`` high, and around it no lower than a ballistic arc with its apex there.

    A task, not a schedule: above the height that straight legs reach standing (0.32 m, ``APEX`` is 2 cm more) every
    foot of a level base is off the ground at ``T/2`` (a rolled base can still reach down with one, as the 6-interval
    solve does), but nothing says when the feet lift or land, or in which order.  The arc makes it
    one row at every collocation point, whatever the mesh (``T/2`` need not be a grid point), and it leaves any flight
    through that apex feasible: a ballistic ``z`` with its apex ``h'`` at ``t_a`` exceeds the arc by an amount linear in
    ``t``, positive over a flight that starts before ``T/2`` and ends after it when ``h'`` is high enough.
    """
    if not (isinstance(height, (int, float)) and 0 < height < float("inf")):
        raise cl.ProblemError(f"The jump's `apex` must be a finite height > 0 (m); got {height!r}.")
    middle = 0.5 * (problem.t0_value + problem.tf_bounds[1])
    z = body.coordinates[2]
    problem.path(z + 0.5 * _jump_script().GRAVITY * (cl.TIME - middle) ** 2, lower=height, name="apex")


def jump_guess(distance=0.2, duration=0.85, lift_off=0.3, touch_down=0.55, friction=0.8, num=35):
    """A guess that leaves the ground: the base forward at constant speed and, in height, up to a take-off speed,
    on the ballistic parabola between ``lift_off`` and ``touch_down``, and back down (``solo12_jump``'s guess of one
    phase after the other); the legs by inverse kinematics, the feet on their ground points before ``lift_off`` and
    after ``touch_down`` and on cubic curves between; torques and feet's forces that give the base its motion
    (:func:`static_forces`), the forces zero (and the torques the static stand's) in mid-air.  It imposes nothing:
    the problem stays :func:`build_jump`'s, free to lift any foot at any time.

    Returns
    -------
    Trajectory
        ``num`` times over ``[0, duration]`` (as :func:`standing_guess`).
    """
    import numpy as np

    jump = _jump_script()
    body = robot(friction)
    q0, feet0 = jump.standing_pose(body)
    durations = (lift_off, touch_down - lift_off, duration - touch_down)
    speed, up = distance / duration, 0.5 * jump.GRAVITY * durations[1]
    z0 = q0[2]
    legs = jump._leg_kinematics(jump.robot())
    each = max(3, num // 3)
    push = jump._contact_samples(legs, q0, feet0, 0.0, durations[0], speed, ((z0, 0.0), (z0 + jump.GUESS_LIFT, up)), each)
    land = jump._contact_samples(legs, q0, feet0 + np.array([distance, 0.0, 0.0]), touch_down, durations[2], speed,
                                 ((z0 + jump.GUESS_LIFT, -up), (z0, 0.0)), each)
    fly = jump._flight_samples(push, land, durations[1], speed, up, each)
    t = np.concatenate([push[0], lift_off + fly[0][1:-1], touch_down + land[0]])
    q = np.vstack([push[1], fly[1][1:-1], land[1]])
    v = np.vstack([push[2], fly[2][1:-1], land[2]])
    a = np.gradient(v, t, axis=0)
    tau0, _ = jump.static_stand(body, q0)
    tau, forces = np.tile(tau0, (t.size, 1)), np.zeros((t.size, len(body.contacts), 3))
    for k in np.flatnonzero((t <= lift_off) | (t >= touch_down)):
        tau[k], forces[k] = static_forces(body, q[k], v[k], a[k])
    return _guess_trajectory(body, t, q, v, tau, forces)


def graded_mesh(trajectory, pieces=3, width=0.0, each_foot=False):
    """A normalised mesh graded where a solved jump's feet lift and land: each interval of ``trajectory``'s mesh
    on either side of a change between loaded (some foot pushes) and unloaded intervals, and each one less than
    ``width`` seconds from such a change, split into equal pieces no longer than the mesh's longest interval over
    ``pieces``; the others kept.  It imposes no schedule: only the mesh is finer there.

    ``each_foot=True`` takes the changes of each foot's load instead of the feet's sum: where feet land one after the
    other (the jump from :func:`standing_guess` lands FL at 0.45 s and HR, FR, HL at 0.55–0.65 s, and the sum's only
    changes are the first take-off and landing, so its later landings stay on 50 ms intervals), or lift and land while
    others carry the robot (a trot).

    ``width`` reaches the stance intervals next to a take-off or touch-down, where the legs still move fast (the
    push's last 50 ms, the landing's first 100 ms); intervals already short enough stay whole, so a graded mesh graded
    again refines only what is new.

    Returns
    -------
    ndarray, shape (num_intervals + 1,)
        Mesh times over [0, 1] (``colloc.solve(..., mesh=...)``).
    """
    import numpy as np

    from colloc.discretization.interpolant import Interpolant

    grid = Interpolant(trajectory).grid
    mesh = trajectory.time[grid.mesh_points]
    feet = [trajectory[c] for c in trajectory.names if c.endswith("_FOOT.normal_force")]
    changes = np.unique(np.concatenate([np.flatnonzero(np.diff(_loaded(trajectory, grid, f).astype(int)))
                                        for f in (feet if each_foot else [sum(feet)])]))
    at = mesh[changes + 1]  # the mesh point between the two intervals
    near = set(changes) | set(changes + 1)
    longest, reach = np.diff(mesh).max() / pieces, width - 1e-9 * trajectory.duration  # an interval that only touches the reach is out
    times = [mesh[0]]
    for i in range(mesh.size - 1):
        close = i in near or bool(np.any((mesh[i] < at + reach) & (mesh[i + 1] > at - reach)))
        count = int(np.ceil((mesh[i + 1] - mesh[i]) / longest - 1e-9)) if close else 1
        times += list(np.linspace(mesh[i], mesh[i + 1], count + 1)[1:])
    times = np.array(times)
    return (times - times[0]) / (times[-1] - times[0])


def split_mesh(trajectory, splits):
    """``trajectory``'s normalised mesh with each interval that contains one of ``splits``' times split into that
    time's number of equal pieces (the largest, where several fall in one interval); the other intervals kept.

    For the intervals ``colloc verify`` names (a take-off whose force drops within one interval, a soft landing
    violated between grid points): a finer mesh there only, no schedule.

    Parameters
    ----------
    trajectory : Trajectory
        A solve's file (its ``metadata["mesh"]``).
    splits : iterable of (float, int)
        ``(time [s], pieces ≥ 2)``; a time on a mesh point, or outside the horizon, is refused.

    Returns
    -------
    ndarray, shape (num_intervals + 1,)
        Mesh times over [0, 1] (``colloc.solve(..., mesh=...)``).
    """
    import numpy as np

    from colloc.pipeline.refine import refine_mesh

    mesh = np.asarray(trajectory.metadata["mesh"], float)
    t0, duration = trajectory.time[0], trajectory.duration
    pieces = np.ones(mesh.size - 1, int)
    for time, count in splits:
        at = (time - t0) / duration
        if not (isinstance(count, (int, np.integer)) and count >= 2):
            raise ValueError(f"split_mesh: the pieces at t = {time:g} s must be an integer ≥ 2; got {count!r}.")
        inside = np.flatnonzero((mesh[:-1] < at) & (at < mesh[1:]))
        if inside.size != 1 or np.abs(mesh - at).min() < 1e-9:
            raise ValueError(f"split_mesh: t = {time:g} s lies on a mesh point or outside the horizon "
                             f"[{t0:g}, {t0 + duration:g}] s; name a time inside the interval to split.")
        pieces[inside[0]] = max(pieces[inside[0]], count)
    # refine_mesh's split with an interval's "error" its pieces against a tolerance of 1 at order 1: p ≥ 2 pieces, else kept
    return refine_mesh(mesh, pieces, 1.0, 1, max_pieces=int(pieces.max()))


def _loaded(trajectory, grid, force):
    """Per interval of ``grid``, whether ``force`` (at the grid points) pushes on it."""
    if trajectory.metadata.get("contact_forces", "interval") == "collocation":  # the interval's own points, its start excluded
        return force[grid.nodes_of_intervals[:, 1:]].max(axis=1) > 1e-3
    return force[grid.interval_starts] > 1e-3  # one force per interval, held at its start


def resampled_guess(problem, trajectory, mesh, **options):
    """``trajectory`` (a solved jump) as a guess on ``mesh``, its torques and feet's forces made to obey the dynamics
    there: at each new grid point the torques and the forces of the loaded feet on the ground (gap < 0.1 mm) nearest
    the interpolated ones for which ``M(q) a + c(q, v) = Sᵀτ + Σ_k W_kᵀ F_k`` holds with the interpolated ``q, v, a``.

    Why: resampled as it is (linear interpolation of the forces, the states on their polynomials) a landing's forces,
    which change by tens of newtons from point to point, no longer balance the light legs' accelerations at the new
    points; the 25-interval jump read onto its 33-interval refinement started IPOPT at a violation of 96 (the base's
    vertical dynamics) and it crawled (steps of 1e-2, 80 iterations to 0.3); projected, it starts at 2.2.

    Parameters
    ----------
    problem : Problem
        :func:`build_jump`'s problem.
    trajectory : Trajectory
    mesh : array_like
        Normalised mesh (as ``colloc.solve(..., mesh=...)``).
    **options
        Transcription options of the solve to come (default ``JUMP_SOLVE_POINTS``).

    Returns
    -------
    Trajectory
        On ``mesh``'s grid, for ``colloc.solve(..., guess=...)``.
    """
    import numpy as np

    from colloc.pipeline import driver

    o = {k: v for k, v in dict(JUMP_SOLVE_POINTS, **options).items() if k != "intervals"}
    tr = driver.transcription(problem, mesh=np.asarray(mesh, float), **o)
    nlp = tr.build(tr.warm_start(trajectory))
    lay = nlp.layout
    body = problem.model.components[0]
    nq, nv = body.num_coordinates, body.num_speeds
    acc = ca.SX.sym("a", nv)
    f = ca.Function("f", [body.q, body.v, acc], [ca.mtimes(body.equations().mass_matrix, acc) + body.bias_force,
                                                 ca.vertcat(*[ca.vertcat(c.normal_jacobian, c.tangent_jacobian) for c in body.contacts]),
                                                 ca.vertcat(*[c.gap for c in body.contacts])])
    X, Z, U, N, B = (lay[b].guess for b in ("x", "z", "u", "cn", "cf3"))  # B: the 4 facets (±t₁, ±t₂) of each foot
    S = np.hstack([np.zeros((nv - 6, 6)), np.eye(nv - 6)])
    for k in range(X.shape[1]):
        load, W, gap = (np.array(a) for a in f(X[:nq, k], X[nq:, k], Z[:, k]))
        on = [i for i in range(len(body.contacts)) if gap[i, 0] < 1e-4 and N[i, k] > 1e-3]  # loaded, on the ground
        if not on:  # in the air the base's rows hold with the interpolated accelerations
            continue
        A = np.hstack([S.T, W[np.ravel([[3 * i, 3 * i + 1, 3 * i + 2] for i in on])].T])
        x0 = np.concatenate([U[:, k]] + [[N[i, k], B[4 * i, k] - B[4 * i + 2, k], B[4 * i + 1, k] - B[4 * i + 3, k]] for i in on])
        x = x0 + np.linalg.lstsq(A, load.ravel() - A @ x0, rcond=None)[0]  # the nearest (τ, F) that balance
        U[:, k] = x[:nv - 6]
        for j, i in enumerate(on):
            n, f1, f2 = x[nv - 6 + 3 * j:nv - 3 + 3 * j]
            N[i, k], B[4 * i:4 * i + 4, k] = max(n, 0.0), [max(f1, 0.0), max(f2, 0.0), max(-f1, 0.0), max(-f2, 0.0)]
    return tr.trajectory(nlp, lay.vector("guess"), dict(status="resampled", success=False))


def solve_soft_jump(landing=SOFT_LANDING, stages=SOFT_STAGES, **solve_options):
    """The schedule-free jump with soft landings, solve after solve on finer meshes: ``build_jump(landing=landing)``
    from :func:`jump_guess` with ``JUMP_SOLVE_POINTS`` (17 uniform intervals, ε from 1e-2), then for each
    ``(pieces, width, relaxation, clearance)`` of ``stages`` ``build_jump(landing=landing, clearance=clearance)`` on
    the last solution's ``graded_mesh(last, pieces, width)``, from the last solution (:func:`resampled_guess`), ε from
    ``relaxation`` down to ``SOFT_TOLERANCE``; last, the same problem again from the last iterate with ``FINISH``'s
    barrier.  Meshes given, not schedules: any foot may still lift or land anywhere.  ``solve_options`` go to every
    solve (e.g. ``ipopt={"max_cpu_time": 1200}``).  Stops at the first solve that fails.

    ``colloc verify FILE problems/solo12_stand.py --set distance=0.2 --set duration=0.85 --set regularization=1e-6
    --set landing=100 --set clearance=1e-8`` checks the last solve's file (module docstring: what each stage measured).

    Returns
    -------
    list of SolveResult
        One per solve, the uniform one first.
    """
    problem = build_jump(landing=landing)
    options = dict(JUMP_SOLVE_POINTS, **solve_options)
    results = [cl.solve(problem, guess=jump_guess(), **options)]
    options.pop("intervals")
    # each warm solve starts where the last ended, at its multipliers' scale: IPOPT's default push off the bounds
    # (1e-2) would lift every sticking foot's sliding speed and every zero force off its bound
    ipopt = {"bound_push": 1e-9, "bound_frac": 1e-9, "mu_init": 1e-4, **options.pop("ipopt", {})}
    options["complementarity_tolerance"] = SOFT_TOLERANCE
    for pieces, width, relaxation, clearance in stages:
        if not results[-1].success:
            return results
        problem = build_jump(landing=landing, clearance=clearance)
        mesh = graded_mesh(results[-1].trajectory, pieces, width)
        guess = resampled_guess(problem, results[-1].trajectory, mesh, **options)
        results.append(cl.solve(problem, guess=guess, mesh=mesh, ipopt=ipopt, **dict(options, relaxation=relaxation)))
    if results[-1].success:
        results.append(cl.solve(problem, guess=results[-1].trajectory, mesh=mesh, ipopt=dict(ipopt, **FINISH),
                                **dict(options, relaxation=SOFT_TOLERANCE)))
    return results
