"""A mass lowered onto the ground by a thrust, contact-implicit: without impulses it must arrive at rest.

A point mass ``m`` at height ``y`` above the ground (gravity ``g``) is driven by a vertical thrust ``u``
(|u| ≤ 20 N) from rest at ``y = height`` to rest on the ground at ``T``, least ``∫ u² dt``.  The ground is a
unilateral contact (gap ``y``, normal force ``λ ≥ 0``) and the solve has no impulses (``impacts=False``):
when and how the mass lands is the optimizer's choice (``contact="implicit"``).

States
    ``mass.y`` [m], ``mass.y_speed`` [m/s].
Control
    ``mass.thrust`` [N].
Contact
    ``mass.ground``: gap ``y``, no friction.

Why ``arrival``.  Without impulses a rigid contact can only close at rest, but the transcription holds the
gap at the collocation points, not between them: with a force at every collocation point (radau-3) the
optimizer lands the mass at 0.54 m/s on the mesh point 0.4 s and stops it inside the next interval, the
position polynomial flat on the ground while the speed polynomial jumps from −0.54 m/s to 0 (J = 30.704).
The event-driven simulator started on that file strikes the ground with an impulse of 0.54 N s the file
lacks, and ``colloc verify`` fails it (``impact times``).  ``SOLVE``'s ``arrival``
(:class:`colloc.transcription.contacts.Arrival`: ``−ẏ ≤ √(2a) φ^{7/2}/(φ + φ₁)³ + c λ_{j−1}² + v₀`` at
every grid point, ``a = 5`` m/s²) makes the mass slow down before it touches: it lands on the mesh point
0.3 s at 1e-7 m/s (J = 33.371), and ``colloc verify`` passes every check.

No published optimum exists for this set-up (no ``REFERENCE``); tests/test_arrival.py checks the
rows against their formula, the landing against the event-driven simulator and both files against
``colloc verify``.

Source: contact-implicit collocation after Posa, Cantu & Tedrake, "A direct method for trajectory optimization of
rigid bodies through contact", IJRR 33(1), 2014; the grazing contact's square-root sensitivity after Nordmark,
"Non-periodic motion caused by grazing incidence in an impact oscillator", J. Sound Vib. 145(2), 1991.
"""
import casadi as ca

import colloc as cl

#: radau-3 with a force at every collocation point (the transcription of the schedule-free Solo12 trot), no impulses,
#: the mesh given; ``arrival`` with a deceleration of 5 m/s² far from the ground.
SOLVE = dict(scheme="radau-3", intervals=20, contact="implicit", impacts=False, free_steps=False, contact_forces="collocation",
             relaxation=1e-2, complementarity_tolerance=1e-8, arrival=dict(deceleration=5.0))
GRAVITY = 9.81


def build(height=0.1, duration=1.0, mass=1.0, gravity=GRAVITY, max_thrust=20.0):
    body = cl.Multibody("mass", coordinates=["y"])
    (y,) = body.coordinates
    body.kinetic_energy = 0.5 * mass * ca.sumsqr(body.v)
    body.potential_energy = mass * gravity * y
    thrust = body.control("thrust", bounds=(-max_thrust, max_thrust))
    body.generalized_force = ca.vertcat(thrust)
    body.contact("ground", y)
    prob = cl.Problem([body], t0=0.0, tf=duration, name="lowered_mass")
    prob.bound(y, -1.0, 1.0)
    prob.initial({y: height, body.speeds[0]: 0.0})
    prob.final({y: 0.0, body.speeds[0]: 0.0})
    prob.guess({y: (height, 0.0)})
    prob.minimize(integral=thrust**2)
    return prob
