"""A solve that fails by local infeasibility from a straight-line guess says a non-trivial guess is the cure."""
import casadi as ca
import numpy as np

import colloc as cl


def parking():
    """Unicycle parallel parking: move 1 sideways with heading 0 at both ends (ẋ = v cos θ, ẏ = v sin θ, θ̇ = ω)."""
    c = cl.Component("car")
    x, y, th = c.state("x"), c.state("y"), c.state("th")
    v, w = c.control("v", bounds=(-1, 1)), c.control("w", bounds=(-1, 1))
    c.derivative(x, v * ca.cos(th))
    c.derivative(y, v * ca.sin(th))
    c.derivative(th, w)
    p = cl.Problem([c], tf=4.0)
    p.initial({x: 0, y: 0, th: 0})
    p.final({x: 0, y: 1, th: 0})
    p.minimize(integral=v**2 + w**2)
    return p, th, v


def test_straight_guess_failure_names_the_guess_and_a_curved_guess_solves():
    p, th, v = parking()
    failed = cl.solve(p, intervals=20)
    assert failed.status in (cl.Status.INFEASIBLE, cl.Status.RESTORATION_FAILED)
    assert "non-trivial guess is the likely cure" in failed.message
    t = np.linspace(0, 4, 9)
    p.guess({th: (t, 0.8 * np.sin(np.pi * t / 4)), v: (t, 0.5 * np.cos(np.pi * t / 4))})
    solved = cl.solve(p, intervals=20)
    assert solved.success, solved.message
    # the end conditions hold at the solution (y moved by 1 with θ back to 0)
    assert abs(solved.trajectory.final("car.y") - 1.0) < 1e-8
