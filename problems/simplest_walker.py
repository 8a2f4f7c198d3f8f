"""Garcia's simplest walking model: the periodic passive gait by collocation (docs/problems.md E1).

A point-mass hip on two massless legs (foot/hip mass ratio β → 0, g = l = 1)
walks down a slope γ.  One step is one phase of free duration τ; heel strike
and the leg swap are a jump map; the gait is periodic through it.

States
    ``walker.theta`` θ stance-leg angle from the slope normal,
    ``walker.phi`` φ angle between the legs, ``walker.theta_dot`` θ̇,
    ``walker.phi_dot`` φ̇.
Controls
    none (a passive gait) — a feasibility problem, objective 0.
Dynamics
    θ̈ = sin(θ − γ),  φ̈ = sin(θ − γ) + θ̇² sin φ − cos(θ − γ) sin φ.
Event (end of the step)
    heel strike ``φ − 2θ = 0``, crossed increasing, with ``θ(τ) ≤ 0`` (the
    crossing near θ ≈ 0 at mid-stance, foot scuffing, is ignored).
Jump map and periodicity
    ``x(0) = Δ(x(τ))``: θ⁺ = −θ⁻, φ⁺ = −2θ⁻, θ̇⁺ = cos(2θ⁻) θ̇⁻,
    φ̇⁺ = cos(2θ⁻)(1 − cos 2θ⁻) θ̇⁻.

Source [SEEN]: Garcia's 1998 simulation code for Garcia, Chatterjee,
Ruina, Coleman, "The Simplest Walking Model: Stability, Complexity, and
Scaling", ASME J. Biomech. Eng. 120(2) 1998: at γ = 0.009 the long
(stable) step has the post-impact fixed point θ* = 0.20031090049483,
θ̇* = −0.19983247291764; the short (unstable) step θ* = 0.19393736960624,
θ̇* = −0.20386692731962.  Step periods τ ≈ 3.8824638 and 3.0961059
[COMPUTED] (docs/problems.md E1).  The guess picks the gait.
"""
import casadi as ca

import colloc as cl
from colloc.pipeline.multiphase_problem import MultiPhaseProblem, Phase

SOLVE = dict(scheme="radau-4", intervals=20)

#: The pre-impact stance angle is −θ* (θ⁺ = −θ⁻ at the fixed point), docs/problems.md E1 [SEEN].
REFERENCE = dict(value=-0.20031090049483, quantity="final walker.theta", tolerance=1e-6,
                 source="docs/problems.md E1: Garcia et al. 1998 long-step fixed point θ* = 0.20031090049483 (γ = 0.009)")

#: Post-impact fixed points (θ*, θ̇*) at γ = 0.009 (docs/problems.md E1 [SEEN]).
FIXED_POINTS = dict(long=(0.20031090049483, -0.19983247291764), short=(0.19393736960624, -0.20386692731962))
#: Step periods [COMPUTED] (docs/problems.md E1).
PERIODS = dict(long=3.8824638, short=3.0961059)


def jump(theta, theta_dot):
    """Heel strike and leg swap: post-impact (θ, φ, θ̇, φ̇) from the pre-impact θ, θ̇."""
    c = ca.cos(2 * theta)
    return -theta, -2 * theta, c * theta_dot, c * (1 - c) * theta_dot


def build(slope=0.009, gait="long"):
    """One periodic step down ``slope`` [rad]; ``gait`` ("long" or "short") chooses the guess."""
    if gait not in FIXED_POINTS:
        raise cl.ProblemError(f"Unknown gait `{gait}`; choose `long` or `short`.")
    w = cl.Component("walker")
    th = w.state("theta", bounds=(-1.0, 1.0))
    ph = w.state("phi", bounds=(-2.0, 2.0))
    dth = w.state("theta_dot", bounds=(-2.0, 2.0))
    dph = w.state("phi_dot", bounds=(-2.0, 2.0))
    w.derivative(th, dth)
    w.derivative(ph, dph)
    w.derivative(dth, ca.sin(th - slope))
    w.derivative(dph, ca.sin(th - slope) + dth**2 * ca.sin(ph) - ca.cos(th - slope) * ca.sin(ph))

    step = cl.Problem([w], t0=0.0, tf=(1.0, 6.0), name="step")
    step.final({th: (-1.0, 0.0)})
    # A rough guess: legs swap linearly, the stance leg at a constant rate; the period from the gait's size.
    th0 = 0.2
    step.guess({"tf": 3.8 if gait == "long" else 3.1, th: (th0, -th0), ph: (2 * th0, -2 * th0),
                dth: -th0 / 1.9, dph: -0.2})
    phase = Phase(step)
    phase.end_when(ph - 2 * th, "increasing", name="heel_strike")
    mp = MultiPhaseProblem([phase], name="simplest_walker")
    post = jump(th, dth)
    mp.periodic(jump=dict(zip([th, ph, dth, dph], post)))
    return mp
