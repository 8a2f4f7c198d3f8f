"""The rest-to-rest double integrator as the text of a problem script, for the tests that write scripts to files.

ẋ = v, v̇ = u, from rest at 0 to rest at ``distance`` in 1 s, minimize ∫u²: J* = 12 d² (Kelly, SIAM Review
59(4), 2017, §2).  The CLI, sweep, fault, kept-result and verification tests each put their own set-up in front.
"""
from __future__ import annotations


def di_script(build="def build(distance=1.0):", setup=(), solve="dict(intervals=10)", name="di", final="distance",
              implicit=True, bounds=False, path=None, imports=(), doc=None) -> str:
    """The script: ``imports`` and colloc, ``SOLVE = solve``, then ``build`` running the ``setup`` lines first.

    ``implicit`` writes v̇ = u as a residual; ``bounds`` bounds x to ±5 and u to ±100; ``path`` is one more
    line before the cost; ``final`` the expression x must end on.
    """
    head = ([f'"""{doc}"""'] if doc else []) + [f"import {m}" for m in imports] + ["import colloc as cl", "", f"SOLVE = {solve}", "", "", build]
    body = [*setup,
            'c = cl.Component("mass")',
            'x = c.state("x", bounds=(-5, 5))' if bounds else 'x = c.state("x")',
            'v = c.state("v")',
            'u = c.control("u", bounds=(-100, 100))' if bounds else 'u = c.control("u")',
            "c.derivative(x, v)",
            "c.residual(v, c.dot(v) - u)" if implicit else "c.derivative(v, u)",
            f'prob = cl.Problem([c], t0=0.0, tf=1.0, name="{name}")',
            "prob.initial({x: 0.0, v: 0.0})",
            f"prob.final({{x: {final}, v: 0.0}})",
            *([path] if path else []),
            "prob.minimize(integral=u**2)",
            "return prob"]
    return "\n" + "\n".join(head + ["    " + line for line in body]) + "\n"
