"""Solo12 trots one periodic stride: without a contact schedule (contact-implicit), and with the trot imposed.

The quadruped Solo12 of ``example-robot-data`` (``solo_description/robots/solo12.urdf``, a floating base
and 12 revolute joints, 2.50 kg; its standing pose, feet and torque limit from ``problems/solo12_jump.py``
and ``problems/solo12_stand.py``) moves forward by ``stride`` = D in ``duration`` = T: the state at T is
the state at 0 with the base ``stride`` further forward, every other coordinate and every speed the same.

:func:`build` gives no schedule.  The four feet are unilateral contacts with the ground
(``Multibody.contact_point``, μ = ``friction``, a 4-facet Coulomb cone |f_1| + |f_2| ≤ μλ in the ground's
x, y axes); ``contact="implicit"`` lets the optimizer decide which feet touch when.  Its guess stands in
the standing pose with the base sliding forward at D/T (the feet slide with it), the static stand's
torques: no foot lifts, nothing says which pair to swing.  The base starts at x = x_0, y = 0 (the stride
is otherwise free to translate).  No impulses (``impacts=False``): a foot lands with zero normal speed,
as in the two-phase problem.

:func:`build_two_phase` imposes the trot: phase ``FL_HR`` (T/2) with the front-left and hind-right feet
held at ground points (holonomic, multipliers λ = the ground's force in world axes, in the same
4-facet cone) while FR and HL stay above the ground, then phase ``FR_HL`` the other way round; the
phases joined by continuity and the end joined to the start by periodicity (base x − D).  The footholds
are the standing ones moved by D/4 (``FL_HR``) and 3D/4 (``FR_HL``): the base passes over the middle of
each stance (a symmetric trot).  Its guess: the base at constant speed and height, the legs by inverse
kinematics of the stance feet on their holds and the swing feet on a half-sine arc of ``SWING_HEIGHT``.

Objective (both)
    minimize ∫ (|τ|² + w |q̈_joints|²) dt, τ the 12 joint torques, w = ``regularization`` = 1e-6 (the
    flat valley of the light legs' motions that ``solo12_jump`` explains).
States
    ``solo12.base_x … base_qz`` and the 12 joint angles, their speeds (as in ``solo12_jump``).
Controls
    ``solo12.tau_<joint>`` [N m], |τ| ≤ ``max_torque`` = 2.7 N m (Grimminger et al. 2020).
Constraints
    M(q) v̇ + c(q, v) = τ + (contact or holonomic forces); periodicity (x_T = x_0 + D, the other
    coordinates but ``qw`` and every speed equal; the unit norm fixes ``qw``, which gets a range).

Measured (D = 0.1 m, T = 0.4 s; docs/contacts.md, "A trotting quadruped", has the table): the imposed trot
on ``PHASE_MESH`` (9 intervals per phase, graded towards lift-off and touch-down) J = 0.04792 (∫|τ|² =
0.03470), 99 iterations, 12.7 CPU s, and ``colloc verify`` passes (uniform meshes of 4 and 8 per phase fail
its per-interval check at the touch-down; 12 pass).  Without a schedule, from the standing guess: 8 intervals
J = 0.07358 (∫|τ|² = 0.05044), 2298 iterations over the homotopy, 461 CPU s, a skating shuffle (only HR
lifts; the other feet slide, loaded in turn); :func:`solve_staged` refines the 4-interval result (diagonal
pairs) on 16 intervals: J = 0.11287 (∫|τ|² = 0.08376), diagonal pairs with the hind foot of FL+HR leading,
the front feet sliding through their stance; then with a force at every grid point, J = 0.10806, 1796
iterations, 1047 CPU s.  None passes ``colloc verify`` (per-interval dynamics where a loaded foot slides: up to
8.5 rad/s with one force per interval, 2.4 rad/s with forces at the grid points; the re-simulation meets
Painlevé's paradox).

Sliding costs nothing in that objective, so :func:`build` can also weigh the feet's friction work,
``dissipation`` × ∫ Σ_k |f_t,k · ṡ_k| dt (:func:`friction_power`: each foot's force from its own leg's equations;
zero where every loaded foot sticks, so the imposed trot's J is unchanged by it).  A weight on the net joint
work ∫ τ·q̇ dt, which equals the friction work over a periodic stride in the continuous problem, is no use: at 4
intervals the optimizer made energy out of the discretization error (J = −462).  With ``dissipation`` = 0.1 the
4-interval stage from the standing guess chooses a clean diagonal trot (FR+HL 0–0.2 s, FL+HR 0.2–0.4 s, 13–15 N a
foot) but stops at IPOPT's iteration limit at ε = 0.1 (3000 iterations, 313 CPU s; J = 0.03678 with the friction
term 0.0157; FL dissipates 0.109 J, sliding at up to 0.38 m/s); on :func:`graded_mesh` of that gait (18
intervals) from ε = 1e-2 the step stops at its 900 CPU s limit (2337 iterations; J = 0.03625, ∫|τ|² =
0.02716, friction term 0.0074; FR and HR stick, FL slides at up to 0.72 m/s while loaded); from there ε = 1e-3
stops at 400 CPU s (974 iterations; J = 0.02124, ∫|τ|² = 0.01329, FR+HL 0–0.176 s then FL+HR, FR and HR
sticking, FL and HL sliding loaded at 0.23 and 0.28 m/s).
Why those stages stall (IPOPT's output): a file's warm start had no sliding speeds for the cones (now guessed from
its states), and the smoothed |f_t · ṡ| keeps IPOPT regularizing its Hessian with steps of 1e-8.  Without it the
same start converges (72 iterations, 25 CPU s), and a price on the feet's slip near the ground that depends on the
state only, ``ground`` × ∫ Σ_k e^(−φ_k/h)|ṡ_k|² dt (:func:`ground_slip`), converges at every step: with ``ground`` = 1
down to ε = 1e-6 (J = 0.07374, ∫|τ|² = 0.03051), the feet sticking through their stance and sliding only in the
interval where they land; with ``ground`` = 10 and forces at the grid points down to ε = 1e-8 (J = 0.18047).
From the standing guess, :func:`solve_staged` with :data:`STICKING` reaches J = 0.08222 (∫|τ|² = 0.03769; 1.7× the
imposed trot), every stage after the first converging.  ``colloc verify`` still fails these: per-interval dynamics (worst 0.71 rad/s on 18 intervals) and the re-simulation,
which starts with HL sliding just after it landed and meets Painlevé's paradox (docs/contacts.md).
What fails is the landing: FL touches down at 0.43 m/s tangentially and friction stops it inside one interval.
``landing`` = a adds ``solo12_stand.soft_landing``'s rows with their tangential part, ẏ² + |ṡ|² ≤ 2a(φ + δ): a foot
touches down and lifts off at rest and slides no faster than √(2aδ) (a = 100 m/s², δ = 1 µm: 0.014 m/s).  From the
:data:`STICKING` result on its mesh (ε 1e-4 → 1e-8): J = 0.09552 (∫|τ|² = 0.04881), 1274 iterations, 469 CPU s, the
pairs switching on the mesh point T/2; verify's contact check passes, but loaded feet slide at up to 0.014 m/s, and
its per-interval check integrates an interval with the contact law only where every loaded foot sticks (1e-4 m/s):
four intervals fail (worst 2.1 rad/s), and the re-simulation meets Painlevé at 0.05 s.  ``stick`` prices a planted
foot's slip (:func:`ground_slip` with h = 0.1 mm): with 1e3 (J = 0.10521, 174 iterations, 70 CPU s) the stances
stick but for the touch-down points (0.011 m/s); with 1e4 and a force at every grid point (J = 0.11272; 286 + 416
iterations, 138 + 217 CPU s, the first run ending in IPOPT's restoration failure at a feasible point) every loaded
foot sticks to 5e-6 m/s (HL 1.4e-3 at t = 0) and verify's contact check passes; 10 states
fail in the five longest intervals (24–36 ms, worst 0.42 rad/s), and the re-simulation meets Painlevé where FR lifts
off (0.208 s).  That is :data:`SOFT`.  On
:func:`split_mesh` of it (24 intervals) the warm start begins far off (J 3.06: the old cubics' feet slide between the
old grid points) and stops at its 600 CPU s limit (J 0.14689, feet sliding 3e-3 m/s); again from there, ε = 1e-6
and 1e-7 converge (J 0.11431, 0.11462; 559 + 192 iterations, 553 + 234 CPU s) and ε = 1e-8 stalls.  A smaller δ
(1e-11 m) is infeasible with the relaxation's gaps (IPOPT's restoration fails).  ``SOFT``'s J is 2.35× the imposed
trot's (∫|τ|² 1.6×).

:data:`FINE` refines it: ``radau-3`` with a force at every collocation point, on ``SOFT``'s mesh split to intervals
of at most 20 ms (:func:`split_mesh` with ``FINE_LONGEST``: 28 intervals of 8–18 ms), δ = 1e-8
(:data:`SOFT_FINE_BUILD`, the soft jump's clearance: a foot reaches the ground at ≤ 1.4e-3 m/s), ε = 1e-6, from
``SOFT``'s result read onto that mesh by :func:`resampled_guess` (which starts IPOPT at a violation of 1.1, the stance
feet of the old cubics sliding between the old grid points: J 3.39).  Three runs (:data:`FINE`): 387 iterations to its
CPU limit (J 0.286, feasible, the barrier stuck at μ = 1e-4), 290 more with μ₀ = 1e-5 (J 0.154), then IPOPT's adaptive
barrier converges (428 iterations; 983 + 464 + 530 CPU s): J = 0.11365 (∫|τ|² = 0.05875; 2.37× the imposed trot).
``colloc verify`` of it passes every per-interval integration (the 24–36 ms Hermite–Simpson intervals failed by up to
0.42 rad/s), bounds, periodicity, defects and the soft landings' rows at the grid points; it fails the contact check
(μλ|ṡ| + fᵀṡ = 3.1e-6 for HL at 0.045 s: ε = 1e-6 leaves products the check's 1e-6 does not allow), HR's soft-landing
row between the grid points (0.028 at 0.188 s, in the 16 ms interval before it lands: simulated from the file's state
at 0.164 s, HR lands there at 0.31 m/s) and ``impact times`` (an impact of HL at 1.3e-5 s that the file lacks); the
whole-stride re-simulation passes.  ε = 1e-7 did not converge: from the ε = 1e-6 solution with the adaptive barrier μ
jumped to 1e-3 and the dual infeasibility to 1e9; with ``path_points=3`` (the soft landings imposed inside the
intervals too) and the barrier capped at 1e-5, and with the jump's finish (μ₀ = 1e-8, monotone), the steps stayed
at 1e-3–1e-2; with the two 16 ms intervals before the touch-downs halved (30 intervals, ε = 2e-7) it crawled from
J 0.27 — but from ε = 1e-4 on that mesh (from the 28-interval file's resampled guess) every step converged: ε 1e-4
→ 1e-7 in 782 + 163 + 161 + 198 iterations, 1549 CPU s, J = 0.091567 (1.91× the imposed trot), and ``colloc
verify`` passes every check but ``impact times`` (FR and HL touch down at t = 0 at 1.9e-3 m/s without an impulse,
which the first interval's local error does not excuse).  That 30-interval mesh is :func:`touchdown_mesh`'s
(:data:`TOUCHDOWN`).  ``build(approach=...)`` starts the stride on no foot about to strike the ground
(``solo12_stand.soft_start``'s rows at t0; :data:`START`): J = 0.091895, and t = 0 passes; ``impact times`` then failed
at T/2, where FL, simulated from the file's state at 0.192 s, lands at 2.2e-3 m/s (what the soft landing's rows allow
at the relaxation's 1e-8 m gap).  ``arrival`` (:data:`ARRIVE`, :class:`colloc.transcription.arrival.Arrival`: every
foot reaches the ground at rest) from there: J = 0.092223 (+0.36 %), 248 iterations, 664 CPU s; FL now lands at 0.2 s
at 5.8e-7 m/s and the simulator's strike there is a grazing one.  In a stance, HL, loaded at the mesh point 0.192 s,
moves down at 2.5e-5 m/s there (the scheme holds the gap at the grid points, not the normal speed; the stances' mesh
points move at up to 1e-3 m/s), and the simulator started there stops it with an impulse of 1.1e-5 N s: the
velocity-level drift of a constraint held at position level, which ``colloc verify`` excuses within the coordinates'
tolerance differentiated through the interval's nodes (``Λ' δφ``, about 4e-3 m/s there; its stance rule).  Every check
passes (100 of 100): tests/data/solo12_trot_soft.npz.  Making the stances' mesh points rest too did not converge: without the arrival
rows' relief there (580 iterations to IPOPT's 1500 CPU s; the approaching speeds went, rising ones of up to 1e-3 m/s
stayed, and HR failed the same way at 0.32 s), and with rows ``|λ_{j−1} ẏ_j| ≤ 1e-5`` at the mesh points from there
(690 iterations, J rising to 0.0962).

What is checked (tests/test_solo12_trot.py, Pinocchio as oracle): over the periodic stride the feet's
normal forces average to the weight m g (the base's vertical momentum returns to its start value);
the feet's forces are in their cones, no foot below the ground, the stride periodic; ``colloc verify``
of the two-phase file; :func:`friction_power` against the feet's forces and speeds by Pinocchio.

No published optimum exists for this set-up (no ``REFERENCE``).

Source: robot model from example-robot-data (Solo12 URDF and the SRDF's ``straight_standing`` pose;
Grimminger et al., "An open torque-controlled modular robot architecture for legged locomotion
research", IEEE RA-L 5(2), 2020); contact-implicit collocation after Posa, Cantu & Tedrake, "A direct
method for trajectory optimization of rigid bodies through contact", IJRR 33(1), 2014; fixed-schedule
contacts as holonomic constraints after Posa, Kuindersma & Tedrake, ICRA 2016.
"""
import importlib.util
import os

import casadi as ca
import numpy as np

import colloc as cl
from colloc.pipeline.multiphase_problem import MultiPhaseProblem, Phase

SOLVE = dict(scheme="hermite-simpson", intervals=8, contact="implicit", impacts=False, free_steps=False)
#: Stages of :func:`solve_staged`, each the options it adds to :data:`SOLVE`: the first from the standing guess with
#: the homotopy's default start, the others warm-started from a small relaxation (their guess already says which feet
#: touch when), the last with a force at every grid point (``contact_forces="collocation"``, docs/contacts.md).
STAGES = (dict(intervals=4), dict(intervals=16, relaxation=1e-3),
          dict(intervals=16, relaxation=1e-4, contact_forces="collocation"))
#: IPOPT options of a stage warm-started from a result: start where it ended (IPOPT's default pushes every variable
#: 1e-2 off its bounds, lifting sticking feet's sliding speeds and zero forces into the cones).
WARM = {"bound_push": 1e-9, "bound_frac": 1e-9, "mu_init": 1e-6}
#: Stages of :func:`solve_staged` to a stride whose feet stick in stance (docs/contacts.md): the friction work priced
#: on 4 intervals from the standing guess chooses the trot (it stops at IPOPT's 3000 iterations at ε = 0.1); on
#: :func:`graded_mesh` of it, unpriced, ε = 1e-3; then the slip near the ground priced (:func:`ground_slip`), 0.1,
#: then 1 down to ε = 1e-6.  Every stage after the first converges.
STICKING = (dict(intervals=4, build=dict(dissipation=0.1)),
            dict(mesh="graded", relaxation=1e-3, complementarity_tolerance=1e-3, ipopt=WARM),
            dict(mesh="same", relaxation=1e-3, complementarity_tolerance=1e-3, build=dict(ground=0.1), ipopt=WARM),
            dict(mesh="same", relaxation=1e-3, complementarity_tolerance=1e-6, build=dict(ground=1.0), ipopt=WARM))
#: Options of :func:`build` of the stride that ``colloc verify`` passes: the slip near the ground priced, soft landings
#: (a = 100 m/s²: a foot touches down and lifts off at rest, slides at most 0.014 m/s), a planted foot's slip priced.
SOFT_BUILD = dict(ground=1.0, landing=100.0, stick=1e4)
#: :data:`STICKING`, then on its mesh the landings made soft (ε 1e-4 → 1e-8), the planted feet's slip priced (1e3,
#: then 1e4 with a force at every grid point; that stage twice: its first run ends in IPOPT's restoration failure at a
#: feasible point, and the second, from there, converges).  A further stage on ``mesh="split"`` (:func:`split_mesh`)
#: did not converge (module docstring).
SOFT = STICKING + (
    dict(mesh="same", relaxation=1e-4, complementarity_tolerance=1e-8, build=dict(ground=1.0, landing=100.0), ipopt=WARM),
    dict(mesh="same", relaxation=1e-6, complementarity_tolerance=1e-8, build=dict(SOFT_BUILD, stick=1e3), ipopt=WARM),
    dict(mesh="same", relaxation=1e-5, complementarity_tolerance=1e-8, contact_forces="collocation", build=SOFT_BUILD,
         ipopt=WARM),
    dict(mesh="same", relaxation=1e-5, complementarity_tolerance=1e-8, contact_forces="collocation", build=SOFT_BUILD,
         ipopt=WARM))
#: The transcription of :data:`FINE` and the stages after it: radau-3 with a force at every collocation point.
POINTS = dict(scheme="radau-3", contact_forces="collocation")
#: :data:`SOFT_BUILD` with the soft landings' gap δ = 1e-8 m: a foot reaches the ground at ≤ √(2aδ) = 1.4e-3 m/s (the
#: clearance with which the soft jump's landings pass ``colloc verify``'s ``impact times``; at δ = 1e-6, 0.014 m/s failed).
SOFT_FINE_BUILD = dict(SOFT_BUILD, clearance=1e-8)
#: The fine stages after :data:`SOFT`: radau-3 with a force at every collocation point on :data:`SOFT`'s mesh split to
#: intervals of at most 20 ms (``mesh="fine"``, 28 intervals), from :data:`SOFT`'s result read onto it
#: (:func:`resampled_guess`), ε = 1e-6 (``colloc verify``'s contact check fails it at 3.1e-6, and ``impact times`` and
#: one soft-landing row between the grid points; ε = 1e-7 did not converge).  As measured, run stage by stage
#: from files: the first stopped at its 900 CPU s limit (387 iterations), feasible but with IPOPT's barrier stuck at
#: μ = 1e-4; the second, from its iterate with μ₀ = 1e-5, stuck at 1e-5 and was interrupted (290 iterations); the third,
#: with IPOPT's adaptive barrier, converged.  The iteration limits repeat those stops.
FINE = (dict(POINTS, mesh="fine", relaxation=1e-6, complementarity_tolerance=1e-6,
             build=SOFT_FINE_BUILD, ipopt=dict(WARM, mu_init=1e-4, max_iter=387)),
        dict(POINTS, mesh="same", relaxation=1e-6, complementarity_tolerance=1e-6,
             build=SOFT_FINE_BUILD, ipopt=dict(WARM, mu_init=1e-5, max_iter=290)),
        dict(POINTS, mesh="same", relaxation=1e-6, complementarity_tolerance=1e-6,
             build=SOFT_FINE_BUILD, ipopt=dict(WARM, mu_init=1e-6, mu_strategy="adaptive")))
#: ``build(approach=...)`` of :data:`START`: ``solo12_stand.soft_start``'s φ₀ [m] (with ``APPROACH_SPEED`` = 1e-7 m/s a
#: foot at the relaxation's 1e-8 m gap at t0 approaches at most at 7.3e-7 m/s; with φ₀ = 1 mm, 5.5e-6 m/s failed).
SOFT_START = 0.05
#: The stage after :data:`FINE`'s: its mesh with the long intervals before the touch-downs halved (:func:`touchdown_mesh`,
#: 30 intervals), the result read onto it, ε from 1e-4 (from 2e-7 it crawled): 782 + 163 + 161 + 198 iterations.
TOUCHDOWN = dict(POINTS, mesh="touchdown", relaxation=1e-4,
                 complementarity_tolerance=1e-7, build=SOFT_FINE_BUILD, ipopt=dict(WARM, mu_init=1e-4))
#: Then the stride started on no foot about to strike the ground (:data:`SOFT_START`), at ε = 1e-7 with IPOPT's barrier
#: at 1e-8 and monotone (the soft jump's ``FINISH``).  As measured: from :data:`TOUCHDOWN`'s result first with φ₀ = 1 mm
#: and a 1e-6 m/s start (202 iterations), then this (198 iterations, J = 0.091895); straight from :data:`TOUCHDOWN`'s
#: it reached that J but cycled at a dual infeasibility of 1e-7–1e-5 for 400 iterations.
START = dict(POINTS, mesh="same", relaxation=1e-7, complementarity_tolerance=1e-7,
             build=dict(SOFT_FINE_BUILD, approach=SOFT_START), ipopt=dict(WARM, mu_init=1e-8, mu_strategy="monotone"))
#: Then every foot reaching the ground at rest (``arrival``, :class:`colloc.transcription.arrival.Arrival` with its
#: defaults: far from the ground a = 100 m/s², as the soft landing's rows), from :data:`START`'s result, as :data:`START`.
ARRIVE = dict(START, arrival={})
#: :data:`SOFT`, :data:`FINE`, :data:`TOUCHDOWN`, :data:`START` and :data:`ARRIVE` (module docstring: what ``colloc
#: verify`` still fails).
SOFT_FINE = SOFT + FINE + (TOUCHDOWN, START, ARRIVE)
#: Normalised length beyond which :func:`split_mesh` halves an interval (the 18 graded intervals' middle ones, 32-36 ms).
SPLIT_LONGEST = 0.075
#: Normalised length beyond which a ``mesh="fine"`` stage of :func:`solve_staged` splits an interval (20 ms of the 0.4 s
#: stride: ``colloc verify``'s per-interval integrations failed in the 24–36 ms intervals of the 18 graded ones).
FINE_LONGEST = 0.05
#: :func:`touchdown_mesh`: the normalised time before a touch-down (24 ms of the 0.4 s stride) in which intervals longer
#: than ``TOUCHDOWN_LONGEST`` (12 ms) are halved.
TOUCHDOWN_WINDOW = 0.06
TOUCHDOWN_LONGEST = 0.03
#: Solve options of :func:`build_two_phase` (its phases carry their mesh, :data:`PHASE_MESH`).
SOLVE_TWO_PHASE = dict(scheme="hermite-simpson")
#: Normalised mesh of each phase of :func:`build_two_phase`: 9 intervals, finer towards lift-off and touch-down.
PHASE_MESH = (0.0, 0.04, 0.12, 0.25, 0.42, 0.6, 0.76, 0.88, 0.96, 1.0)
#: The trot's pairs of feet, in stance one after the other.
PAIRS = (("FL_FOOT", "HR_FOOT"), ("FR_FOOT", "HL_FOOT"))
#: Height [m] of :func:`ground_slip` as ``build(stick=w)`` prices it: the foot on the ground, not the swing near it.
STICK_HEIGHT = 1e-4
#: Apex of the swing feet's arc in the two-phase guess [m].
SWING_HEIGHT = 0.03


def _script(stem):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{stem}.py")
    spec = importlib.util.spec_from_file_location(stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _regularize(prob, body, regularization):
    if regularization:
        prob.minimize(integral=regularization * ca.sumsqr(body.a[6:]), name="joint_acceleration")


def _foot_forces(body, tau):
    """Each foot's force (normal, tangent 1, tangent 2) from its own leg's three equations of motion and the foot's
    tangential speed ṡ_k (2,): M a + c − Sᵀτ = Σ_k W_kᵀ f_k restricted to leg k's joints (only foot k acts on them),
    f_k = (W_k,legᵀ)⁻¹ (M a + c − Sᵀτ)_leg, W_k = (W_n; W_t); where the dynamics hold this is the transcription's
    contact force.  Contacts and legs are in the same order: FL, FR, HL, HR."""
    rhs = ca.mtimes(body.equations().mass_matrix, body.a) + body.bias_force
    out = []
    for k, c in enumerate(body.contacts):
        leg = slice(6 + 3 * k, 9 + 3 * k)
        W = ca.vertcat(c.normal_jacobian, c.tangent_jacobian)
        f = ca.solve(W[:, leg].T, rhs[leg] - ca.vertcat(*tau[3 * k:3 * k + 3]))
        out.append((f, ca.mtimes(c.tangent_jacobian, body.v)))
    return out


def friction_power(body, tau, smoothing=1e-3):
    """Σ_k |f_t,k · ṡ_k| [W]: the power friction dissipates at the feet, zero when every loaded foot sticks.

    Each foot's force from its own leg's equations (:func:`_foot_forces`).  The absolute value is smoothed,
    √(p² + δ²) − δ with δ = ``smoothing``.  Shape: scalar expression of q, v, a and τ."""
    total = 0
    for f, sdot in _foot_forces(body, tau):
        p = ca.dot(f[1:], sdot)
        total += ca.sqrt(p**2 + smoothing**2) - smoothing
    return total


def loaded_slip(body, tau):
    """Σ_k (λ_k |ṡ_k|)² [N² m²/s²]: each foot's slip speed weighed by its normal force λ_k (its own leg's
    equations, :func:`_foot_forces`), squared.  Zero where every loaded foot sticks and where a foot slides unloaded
    (in the air); smooth, unlike |f_t · ṡ|, whose smoothed kink has curvature 1/δ where a foot sticks."""
    return sum((f[0] ** 2) * ca.sumsqr(sdot) for f, sdot in _foot_forces(body, tau))


def ground_slip(body, height=0.005):
    """Σ_k e^(−φ_k/h) |ṡ_k|² [m²/s²]: each foot's tangential speed squared, weighed by how close it is to the ground
    (φ_k its gap, h = ``height``): a function of q and v only, convex in v, where :func:`loaded_slip` and
    :func:`friction_power` multiply a speed by a force from the accelerations and torques."""
    return sum(ca.exp(-c.gap / height) * ca.sumsqr(ca.mtimes(c.tangent_jacobian, body.v)) for c in body.contacts)


def build(stride=0.1, duration=0.4, friction=0.8, max_torque=2.7, regularization=1e-6, dissipation=0.0, slip=0.0,
          ground=0.0, landing=0.0, stick=0.0, clearance=1e-6, approach=0.0):
    """One stride of ``stride`` [m] in ``duration`` [s], contact-implicit, from a standing guess.

    ``dissipation``: weight c of the feet's friction work, ``c ∫ Σ_k |f_t,k · ṡ_k| dt`` (:func:`friction_power`);
    ``slip``: weight w of the loaded feet's slip, ``w ∫ Σ_k (λ_k |ṡ_k|)² dt`` (:func:`loaded_slip`); ``ground``: weight
    of the feet's slip near the ground, ``∫ Σ_k e^(−φ_k/h)|ṡ_k|² dt`` (:func:`ground_slip`).  ``landing`` > 0: every
    foot touches down and lifts off at rest and does not slide on the ground (``solo12_stand.soft_landing`` with its
    tangential rows, ``ẏ² + |ṡ|² ≤ 2a(φ + δ)``, a = ``landing`` [m/s²], δ = ``clearance`` [m]; ``approach`` = φ₀ > 0: the
    stride starts on no foot about to strike the ground, ``solo12_stand.soft_start``).  ``stick``: weight of the feet's slip on the
    ground, :func:`ground_slip` with ``STICK_HEIGHT``: it prices a planted foot's slip, which those rows bound by
    ``√(2aδ)`` only."""
    stand = _script("solo12_stand")
    body, q0, _, tau0, tau, prob = stand._standing_problem("solo12_trot", duration, friction, max_torque)
    _regularize(prob, body, regularization)
    if landing:
        stand.soft_landing(prob, body, landing, clearance=clearance, tangential=True)
        if approach:
            stand.soft_start(prob, body, landing, approach)
    if dissipation:
        prob.minimize(integral=dissipation * friction_power(body, tau), name="friction_work")
    if slip:
        prob.minimize(integral=slip * loaded_slip(body, tau), name="loaded_slip")
    if ground:
        prob.minimize(integral=ground * ground_slip(body), name="ground_slip")
    if stick:
        prob.minimize(integral=stick * ground_slip(body, STICK_HEIGHT), name="stance_slip")
    x, y, qw = body.coordinates[0], body.coordinates[1], body.coordinates[3]
    for s in body.coordinates + body.speeds:
        if s.name() != qw.name():
            shift = stride if s.name() == x.name() else 0.0
            prob.boundary(prob.at_tf(s) - prob.at_t0(s), shift, shift, name=f"periodic_{s.name().split('.')[-1]}")
    prob.initial({x: float(q0[0]), y: 0.0, qw: (0.0, 1.5)})
    t = np.linspace(0.0, duration, 9)
    guess = {s: float(v) for s, v in zip(body.coordinates, q0)}
    guess[x] = (t, q0[0] + stride * t / duration)
    guess[body.speeds[0]] = stride / duration
    guess.update({u: float(f) for u, f in zip(tau, tau0)})
    prob.guess(guess)
    # a solved file records them, and `colloc verify` re-builds the same problem from it (no --set needed)
    prob.build_params = dict(stride=stride, duration=duration, friction=friction, max_torque=max_torque,
                             regularization=regularization, dissipation=dissipation, slip=slip, ground=ground,
                             landing=landing, stick=stick, clearance=clearance, approach=approach)
    return prob


def solve_staged(stages=STAGES, ipopt=None, log=None, **build_options):
    """The schedule-free stride solved in stages (:data:`STAGES`, :data:`STICKING`): the homotopy from the standing
    guess on a coarse mesh, then each later stage warm-started from the last result (its states, torques and contact
    forces): the coarse mesh chooses which feet touch when, the later ones resolve the legs without choosing again.
    Each stage holds :func:`colloc.solve`'s options it adds to :data:`SOLVE`, and may hold ``build`` (options of
    :func:`build` for that stage, over ``build_options``) and ``ipopt`` (over ``ipopt``).  A stage whose ``mesh`` is
    ``"graded"`` gets :func:`graded_mesh` of the last result, ``"same"`` the last stage's mesh, ``"split"`` that
    mesh with its longest intervals halved (:func:`split_mesh`), ``"fine"`` that mesh split to intervals of at most
    ``FINE_LONGEST`` and the last result read onto it by :func:`resampled_guess`, ``"touchdown"`` that mesh with the
    long intervals just before the last result's touch-downs halved (:func:`touchdown_mesh`), read onto likewise.

    Returns the results, one per stage; the last is the answer.  A stage that ends unconverged still hands its
    last iterate on (with ``dissipation`` = 0.1 the first stops at IPOPT's iteration limit at ε = 0.1, its gait
    chosen).  ``log``: called with (stage, result) after each stage."""
    results, mesh = [], None
    for stage in stages:
        stage = dict(stage)
        built = build(**dict(build_options, **stage.pop("build", {})))
        stage_ipopt = dict(ipopt or {}, **stage.pop("ipopt", {}))
        options = dict(SOLVE, **stage)
        if results:
            options["guess"] = results[-1].trajectory
        if options.get("mesh") == "graded":
            options.update(intervals=None, mesh=graded_mesh(results[-1]))
        elif options.get("mesh") == "same":
            options.update(intervals=None, mesh=mesh)
        elif options.get("mesh") == "split":
            options.update(intervals=None, mesh=split_mesh(mesh))
        elif options.get("mesh") in ("fine", "touchdown"):
            refined = split_mesh(mesh, FINE_LONGEST) if options["mesh"] == "fine" else touchdown_mesh(results[-1], mesh)
            options.update(intervals=None, mesh=refined)
            transcription = {k: v for k, v in options.items() if k not in ("guess", "mesh", "intervals")}
            options["guess"] = resampled_guess(built, results[-1].trajectory, options["mesh"], **transcription)
        mesh = options.get("mesh") or tuple(np.linspace(0.0, 1.0, options["intervals"] + 1))
        results.append(cl.solve(built, ipopt=stage_ipopt or None, **options))
        if log is not None:
            log(stage, results[-1])
    return results


def split_mesh(mesh, longest=SPLIT_LONGEST):
    """``mesh`` (normalised) with every interval longer than ``longest`` split into the fewest equal pieces no longer
    than it (halved, for the intervals of at most twice ``longest``): the per-interval errors of a Hermite–Simpson
    interval fall as its length to the fifth power where the motion is smooth."""
    out = [mesh[0]]
    for a, b in zip(mesh[:-1], mesh[1:]):
        count = max(1, int(np.ceil((b - a) / longest - 1e-9)))
        out += [a + (b - a) * (i + 1) / count for i in range(count)]
    return tuple(out)


def touchdown_mesh(result, mesh, before=TOUCHDOWN_WINDOW, longest=TOUCHDOWN_LONGEST):
    """``mesh`` (normalised) with every interval longer than ``longest`` that reaches into the ``before`` (normalised)
    preceding a touch-down of ``result`` (the start of a foot's loaded span, :func:`gait`; the stride is periodic, so a
    touch-down at its start is preceded by its end) halved.

    Why: a foot comes down there fast until the last millimetres, and the soft landing's rows, imposed at the
    collocation points, let it dip to the ground between them in a long interval (HR at 0.31 m/s in the 16 ms
    interval before 0.2 s of the 28-interval stride)."""
    tr = result.trajectory if hasattr(result, "trajectory") else result
    t0, tf = float(tr.time[0]), float(tr.time[-1])
    downs = {round((a - t0) / (tf - t0), 12) for spans in gait(tr).values() for a, _ in spans}
    out = [mesh[0]]
    for a, b in zip(mesh[:-1], mesh[1:]):
        near = any(a < d + shift and b > d + shift - before for d in downs for shift in (0.0, 1.0))
        out += [0.5 * (a + b), b] if near and b - a > longest + 1e-12 else [b]
    return tuple(out)


def resampled_guess(problem, trajectory, mesh, **options):
    """``trajectory`` (a solved stride) as a guess on ``mesh`` for the transcription ``options`` (``colloc.solve``'s,
    e.g. :data:`FINE`'s ``radau-3`` with a force at every collocation point): ``solo12_stand.resampled_guess`` (the
    torques and the grounded feet's forces at each new grid point projected onto Newton's law), and at the first grid
    point, which a Radau interval does not collocate (its forces are held at zero there), the accelerations that law
    gives without contact forces, ``M(q) a = Sᵀτ − c(q, v)``.

    Why: the dynamics' rows hold at that point too, with its free accelerations; read from the file (the feet loaded)
    they start IPOPT 32 N off in the base's vertical row, a violation its line search then took 60 iterations to
    halve."""
    tr = _script("solo12_stand").resampled_guess(problem, trajectory, mesh, **options)
    if options.get("scheme", SOLVE["scheme"]).startswith("radau"):
        body = problem.model.components[0]
        tau = [u.symbol for u in body.variables if u.kind == "control"]
        nj = len(tau)
        rhs = ca.vertcat(ca.DM.zeros(body.num_speeds - nj, 1), ca.vertcat(*tau)) - body.bias_force
        free = ca.Function("free", [body.q, body.v, ca.vertcat(*tau)], [ca.solve(body.equations().mass_matrix, rhs)])
        q, v, u = ([tr[s.name()][0] for s in group] for group in (body.coordinates, body.speeds, tau))
        columns = {n: np.array(tr[n], float) for n in tr.names}
        for s, a in zip(body.speeds, np.array(free(q, v, u)).ravel()):
            columns[f"{s.name()}.dot"][0] = a
        tr = cl.Trajectory(tr.time, columns, kinds=tr.kinds, metadata=tr.metadata)
    return tr


def graded_mesh(result, phase_mesh=PHASE_MESH):
    """A normalised mesh graded towards the times where ``result``'s feet load or unload (:func:`gait`): between
    two such times, ``phase_mesh`` stretched over the span.  It places mesh points, it imposes nothing: the next
    solve may load any foot at any time."""
    tr = result.trajectory if hasattr(result, "trajectory") else result
    t0, tf = float(tr.time[0]), float(tr.time[-1])
    switches = sorted({t0, tf} | {round(t, 12) for spans in gait(tr).values() for span in spans for t in span})
    mesh = [0.0]
    for a, b in zip(switches[:-1], switches[1:]):
        if b - a > 1e-9 * (tf - t0):
            mesh += [((a + (b - a) * s) - t0) / (tf - t0) for s in phase_mesh[1:]]
    return tuple(mesh)


def _phase(jump, name, duration, holds, friction, max_torque, regularization):
    """One half-stride: the feet of ``holds`` ({foot: ground point}) held, the others above the ground."""
    body = jump.robot()
    for foot, p in holds.items():
        body.holonomic(foot, body.frame(foot)[0] - ca.DM(np.reshape(p, (3, 1))))
    tau = [u.symbol for u in body.variables if u.kind == "control"]
    prob = cl.Problem([body], t0=0.0, tf=duration, name=name)
    for u in tau:
        prob.bound(u, -max_torque, max_torque)
    prob.minimize(integral=sum(u**2 for u in tau), name="torque_squared")
    _regularize(prob, body, regularization)
    for k in body.constraints:
        if k.name.split(".")[-1] in holds:
            lam = ca.vertcat(*[m.symbol for m in k.multipliers])  # world axes: x, y tangential, z normal
            foot = k.name.split(".")[-1]
            prob.path(ca.vertcat(friction * lam[2] - lam[0] - lam[1], friction * lam[2] - lam[0] + lam[1],
                                 friction * lam[2] + lam[0] - lam[1], friction * lam[2] + lam[0] + lam[1]),
                      lower=0.0, name=f"{foot}_cone")  # the 4-facet cone of the contacts: |f_x| + |f_y| ≤ μ λ_z
    swing = [f for f in jump.FEET if f not in holds]
    prob.path(ca.vertcat(*[body.frame(f)[0][2] for f in swing]), lower=0.0, name="swing_above_ground")
    return body, prob


def build_two_phase(stride=0.1, duration=0.4, friction=0.8, max_torque=2.7, regularization=1e-6, mesh=PHASE_MESH):
    """The same stride with the trot imposed: FL+HR in stance for ``duration``/2, then FR+HL.

    ``mesh``: each phase's normalised mesh (None: the solve's ``intervals``, uniform)."""
    jump = _script("solo12_jump")
    free = jump.robot()
    q0, feet0 = jump.standing_pose(free)
    tau0, force0 = jump.static_stand(free, q0)
    shifts = (0.25 * stride, 0.75 * stride)
    holds = [{f: feet0[jump.FEET.index(f)] + np.array([s, 0.0, 0.0]) for f in pair} for pair, s in zip(PAIRS, shifts)]
    names = tuple("_".join(f.split("_")[0] for f in pair) for pair in PAIRS)
    half = 0.5 * duration
    made = [_phase(jump, n, half, h, friction, max_torque, regularization) for n, h in zip(names, holds)]
    _guess(jump, made, q0, feet0, stride, half, tau0, force0)
    first = made[0][0]
    made[0][1].initial({first.coordinates[3]: (0.0, 1.5)})
    phases = [Phase(prob, name=n, mesh=mesh) for (_, prob), n in zip(made, names)]
    mp = MultiPhaseProblem(phases, name="solo12_trot_two_phase")
    mp.connect(phases[0], phases[1])
    last = made[1][0]
    x, qw = last.coordinates[0], last.coordinates[3]
    mp.periodic(states=[s for s in last.coordinates + last.speeds if s.name() not in (x.name(), qw.name())],
                jump={x: x - stride})
    return mp


def _guess(jump, made, q0, feet0, stride, half, tau0, force0, num=9):
    """Base at constant speed and height; legs by inverse kinematics (stance feet on their holds, swing feet on
    half-sine arcs from their last hold to their next one); joint speeds by differences; static torques and forces."""
    legs = jump._leg_kinematics(made[0][0])
    speed = stride / (2 * half)
    s = np.linspace(0.0, 1.0, num)
    previous = q0
    for i, (body, prob) in enumerate(made):
        q = np.tile(q0, (num, 1))
        q[:, 0] += speed * half * (i + s)
        feet = np.tile(feet0, (num, 1, 1))
        for k, foot in enumerate(jump.FEET):
            stance = foot in PAIRS[i]
            # a foot of the pair in stance in phase i sits at feet0 + (2i + 1) D/4; a swing foot goes from its
            # last hold, (2i − 1) D/4, to its next, (2i + 3) D/4
            start = (2 * i + 1) * stride / 4 if stance else (2 * i - 1) * stride / 4
            feet[:, k, 0] += start + (0.0 if stance else stride * s)
            if not stance:
                feet[:, k, 2] += SWING_HEIGHT * np.sin(np.pi * s)
        for n in range(num):
            q[n], _ = legs(q[n], np.zeros(body.num_speeds), feet[n], previous)
            previous = q[n]
        t = half * s
        v = np.zeros((num, body.num_speeds))
        v[:, 0] = speed
        v[:, 6:] = np.gradient(q[:, 7:], t, axis=0)
        g = {c: (t, q[:, j]) for j, c in enumerate(body.coordinates)}
        g.update({c: (t, v[:, j]) for j, c in enumerate(body.speeds)})
        tau = [u.symbol for u in body.variables if u.kind == "control"]
        g.update({u: float(f) for u, f in zip(tau, tau0)})
        for k in body.constraints:
            if k.multipliers:
                f = 2.0 * force0[jump.FEET.index(k.name.split(".")[-1])]  # two feet carry what four did
                g.update({m.symbol: float(x) for m, x in zip(k.multipliers, f)})
        prob.guess(g)


def gait(result, threshold=0.05):
    """Which feet touch when: ``{foot: [(start, end), ...]}`` where its normal force exceeds ``threshold`` × m g
    (contact-implicit results; forces are constant per interval, so the spans are whole intervals)."""
    tr = result.trajectory if hasattr(result, "trajectory") else result
    jump = _script("solo12_jump")
    lam = np.array([tr[f"solo12.{f}.normal_force"] for f in jump.FEET])
    weight = lam.sum(axis=0).mean()
    spans = {}
    for f, row in zip(jump.FEET, lam):
        on = row > threshold * max(weight, 1e-12)
        edges = np.flatnonzero(np.diff(np.r_[0, on.astype(int), 0]))
        spans[f] = [(float(tr.time[a]), float(tr.time[min(b, len(tr.time) - 1)])) for a, b in zip(edges[::2], edges[1::2])]
    return spans


def warm_start(two_phase):
    """A guess for :func:`build` from a :func:`build_two_phase` result (a diagnostic, not the default start).

    Its states and torques over the stride, and each held foot's normal force (the multiplier's z part); the
    swing feet carry nothing.  At the junction the second phase's row is kept.
    """
    tr = two_phase.trajectory if hasattr(two_phase, "trajectory") else two_phase
    keep = np.r_[np.diff(tr.time) > 0, True]
    columns = {n: tr[n][keep] for n in tr.names if tr.kinds.get(n) in ("state", "control")}
    for foot in _script("solo12_jump").FEET:
        lam = tr[f"solo12.{foot}.lambda_2"][keep] if f"solo12.{foot}.lambda_2" in tr.names else np.zeros(keep.sum())
        columns[f"solo12.{foot}.normal_force"] = np.nan_to_num(lam)
    kinds = {n: tr.kinds.get(n, "multiplier") for n in columns}
    return cl.Trajectory(tr.time[keep], columns, kinds=kinds)
