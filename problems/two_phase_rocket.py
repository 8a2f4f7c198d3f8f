"""Two-phase vertical rocket: burn, then coast to the apex; free switching time (burn-out).

Nondimensional vertical flight in uniform gravity without drag.  Phase
``burn`` has a constant thrust level (a static parameter, optimized) and a
mass-flow state; phase ``coast`` is a
different model (no control, constant mass) with the same state names, joined
to the burn by continuity.  Both durations are free: the switching time is
the burn duration, found by the optimizer.

Objective
    maximize the apex height h(T) (minimize −h at the end of the coast)
States
    ``rocket.h`` height, ``rocket.v`` vertical speed, ``rocket.m`` mass
Parameters
    ``rocket.thrust`` F ∈ [0, F_max] (burn only; constant over the burn)
Dynamics
    burn: ḣ = v, v̇ = F/m − g, ṁ = −F/c;  coast: ḣ = v, v̇ = −g, ṁ = 0
Constraints
    h(0) = 0, v(0) = 0, m(0) = m₀; m ≥ m_dry; the coast ends at the apex,
    the event ``v = 0`` crossed decreasing (v ≥ 0 inside).

Analytic solution [DERIVED]: without drag, burning at full thrust is optimal
(every second of burn costs g·t of speed), so the burn lasts until the fuel is
gone, ``t_b = (m₀ − m_dry) c / F_max``; with ``k = F_max / c``,
``v₁ = c ln(m₀/m_dry) − g t_b``, ``h₁ = c (t_b + (m_dry/k) ln(m_dry/m₀)) − g t_b²/2``,
apex ``h₁ + v₁²/(2g)`` after a coast of ``v₁/g``.

Why a parameter and not a control: with a thrust control on a fixed mesh the
discrete optimum switches the thrust off at the burn's last grid point (that
node enters only one interval's quadrature, so fuel is saved there at no
cost), lengthening the burn by O(h); a constant thrust level has no such end
effect and the collocation solution converges at the scheme's order.

Source: the Tsiolkovsky rocket equation with gravity loss (e.g. Sutton &
Biblarz, *Rocket Propulsion Elements*, ch. 4); the closed forms are derived
above.
"""
import math

import colloc as cl
from colloc.pipeline.multiphase_problem import MultiPhaseProblem, Phase

SOLVE = dict(scheme="hermite-simpson", intervals=20)

#: Objective = −apex height for the default data [DERIVED]: see :func:`exact`.
REFERENCE = dict(value=-0.5746116667165122, tolerance=1e-6,
                 source="derived: full thrust to burn-out, then ballistic coast (Tsiolkovsky with gravity loss)")


def exact(m0=1.0, m_dry=0.5, exhaust_speed=2.0, max_thrust=2.0, gravity=1.0):
    """``dict(burn, coast, apex, burnout_speed, burnout_height)`` of the optimal flight."""
    c, g = exhaust_speed, gravity
    k = max_thrust / c
    tb = (m0 - m_dry) / k
    v1 = c * math.log(m0 / m_dry) - g * tb
    h1 = c * (tb + (m_dry / k) * math.log(m_dry / m0)) - 0.5 * g * tb**2
    return dict(burn=tb, coast=v1 / g, apex=h1 + v1**2 / (2 * g), burnout_speed=v1, burnout_height=h1)


def _states(c, m0):
    return c.state("h"), c.state("v"), c.state("m", bounds=(0.0, m0))


def build(m0=1.0, m_dry=0.5, exhaust_speed=2.0, max_thrust=2.0, gravity=1.0):
    """Maximum apex height with ``m0 − m_dry`` of propellant; nondimensional units."""
    burn_c = cl.Component("rocket")
    h, v, m = _states(burn_c, m0)
    F = burn_c.parameter("thrust", bounds=(0.0, max_thrust))
    burn_c.derivative(h, v)
    burn_c.derivative(v, F / m - gravity)
    burn_c.derivative(m, -F / exhaust_speed)
    burn = cl.Problem([burn_c], t0=0.0, tf=(0.01, 10.0), name="burn")
    burn.bound(m, m_dry, m0)
    burn.initial({h: 0.0, v: 0.0, m: m0})
    burn.guess({"tf": 0.3, h: (0.0, 0.1), v: (0.0, 0.5), m: (m0, 0.5 * (m0 + m_dry)), F: 0.5 * max_thrust})

    coast_c = cl.Component("rocket")
    hc, vc, mc = _states(coast_c, m0)
    coast_c.derivative(hc, vc)
    coast_c.derivative(vc, -gravity + 0 * mc)
    coast_c.derivative(mc, 0 * mc)
    coast = cl.Problem([coast_c], t0=0.0, tf=(0.01, 10.0), name="coast")
    coast.guess({"tf": 0.5, hc: (0.1, 0.3), vc: (0.5, 0.0), mc: 0.5 * (m0 + m_dry)})

    b, c = Phase(burn), Phase(coast)
    c.end_when(vc, "decreasing", inside=True, name="apex")
    mp = MultiPhaseProblem([b, c], name="two_phase_rocket")
    mp.connect(b, c)  # h, v, m continuous (same names)
    mp.minimize(-c.end(hc), name="apex_height")
    return mp
