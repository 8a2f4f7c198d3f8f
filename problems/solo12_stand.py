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


def static_forces(body, q):
    """Joint torques (12,) and each foot's force in its contact frame (4, 3): normal force, friction along the
    contact's two tangents, that hold ``body`` at rest in pose ``q`` (least-squares split of the weight), from the
    contacts' own Jacobians ``W_n``, ``W_t``."""
    import numpy as np

    W = ca.Function("W", [body.q], [ca.vertcat(*[ca.vertcat(c.normal_jacobian, c.tangent_jacobian) for c in body.contacts])])
    bias = ca.Function("c", [body.q, body.v], [body.bias_force])(q, np.zeros(body.num_speeds))
    nv = body.num_speeds
    S = np.zeros((nv - 6, nv))
    S[:, 6:] = np.eye(nv - 6)
    sol = np.linalg.lstsq(np.hstack([S.T, np.array(W(q)).T]), np.array(bias).ravel(), rcond=None)[0]
    return sol[:nv - 6], sol[nv - 6:].reshape(len(body.contacts), 3)


def standing_guess(duration, distance=0.0, friction=0.8, num=9):
    """A guess that stands: the standing pose, its base sliding ``distance`` forward at constant speed (the legs
    rigid), the torques and the feet's forces of the static stand at every time.  It names no contact mode: every
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
    tau0, forces = static_forces(body, q0)
    t = np.linspace(0.0, duration, num)
    columns = {s.name(): np.full(num, float(v)) for s, v in zip(body.coordinates, q0)}
    columns.update({s.name(): np.zeros(num) for s in body.speeds})
    columns[body.coordinates[0].name()] = q0[0] + distance * t / duration
    columns[body.speeds[0].name()] = np.full(num, distance / duration)
    kinds = {n: "state" for n in columns}
    for u, f in zip([u.symbol for u in body.variables if u.kind == "control"], tau0):
        columns[u.name()], kinds[u.name()] = np.full(num, float(f)), "control"
    for c, (lam, f1, f2) in zip(body.contacts, forces):
        for suffix, v in (("normal_force", lam), ("friction_force_1", f1), ("friction_force_2", f2)):
            columns[f"{c.name}.{suffix}"], kinds[f"{c.name}.{suffix}"] = np.full(num, float(v)), "multiplier"
    return cl.Trajectory(t, columns, kinds)


def build(duration=0.2, friction=0.8, max_torque=2.7):
    """Stand ``duration`` seconds, at rest in the standing pose at both ends."""
    body, q0, _, tau0, tau, prob = _standing_problem("solo12_stand", duration, friction, max_torque)
    rest = {s: float(v) for s, v in zip(body.coordinates, q0)}
    rest[body.coordinates[3]] = (0.0, 1.5)
    rest.update({s: 0.0 for s in body.speeds})
    prob.initial(rest)
    prob.final(rest)
    guess = {s: float(v) for s, v in zip(body.coordinates, q0)}
    guess.update({u: float(f) for u, f in zip(tau, tau0)})
    prob.guess(guess)
    return prob


def build_jump(distance=0.2, duration=0.85, friction=0.8, max_torque=2.7, regularization=1e-6):
    """``solo12_jump``'s motion without its schedule: from rest in the standing pose to rest ``distance`` further
    forward after ``duration`` (its push, flight and landing add up to 0.85 s), least ∫(|τ|² + w|q̈_joints|²) dt;
    the guess stands, sliding its base forward at constant speed (the feet follow by the legs' kinematics)."""
    import numpy as np

    body, q0, feet0, tau0, tau, prob = _standing_problem("solo12_jump_implicit", duration, friction, max_torque)
    if regularization:
        prob.minimize(integral=regularization * sum(a**2 for a in list(body.a.elements())[6:]), name="joint_acceleration")
    start = {s: float(v) for s, v in zip(body.coordinates, q0)}
    start[body.coordinates[3]] = (0.0, 1.5)
    start.update({s: 0.0 for s in body.speeds})
    end = dict(start)
    end[body.coordinates[0]] = float(q0[0] + distance)
    prob.initial(start)
    prob.final(end)
    t = np.linspace(0.0, duration, 9)
    guess = {s: float(v) for s, v in zip(body.coordinates, q0)}
    guess[body.coordinates[0]] = (t, q0[0] + distance * t / duration)
    guess[body.speeds[0]] = distance / duration
    guess.update({u: float(f) for u, f in zip(tau, tau0)})
    prob.guess(guess)
    return prob
