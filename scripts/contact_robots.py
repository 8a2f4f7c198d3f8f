"""Robots through contact, schedule-free against the multi-phase version of the same motion.

``python scripts/contact_robots.py [--sizes 4 8]`` (or ``scripts/benchmark.py --contact``) prints, per
motion and mesh size, IPOPT's iterations (summed over the relaxation homotopy of a contact-implicit solve)
and the CPU seconds of ``colloc.solve`` with its build, for

* Solo12 standing still 0.2 s: ``problems/solo12_stand.py`` (four unilateral feet with 4-facet cones, no
  schedule, ``N`` intervals, from ``standing_guess``) against one phase whose feet are held by holonomic
  constraints (``problems/solo12_jump.py``'s stance phase, ``N`` intervals);
* Solo12's forward jump of 0.2 m in 0.85 s: ``solo12_stand.build_jump`` (no schedule, ``3N`` intervals, the
  mesh given, no impulses, from ``jump_guess``: the base on a ballistic arc, the forces zero in mid-air; Hermite–Simpson
  with one force per interval, and radau-3 with a force at every collocation point, ``JUMP_SOLVE_POINTS``, also
  with soft landings, ``build_jump(landing=SOFT_LANDING)``: the feet touch down and lift off at rest, as the
  problem without impulses needs; and from ``standing_guess``, a guess that never leaves the ground, with the task
  ``build_jump(apex=APEX)``: the base 0.34 m high halfway, ``3N/2`` intervals, ε from 1) against
  ``problems/solo12_jump.py``'s three phases (``N`` intervals each, the same cost);
* the five-link biped's periodic step of 0.5 m in 0.7 s from its URDF: ``problems/urdf_biped.py`` (two
  unilateral feet, no schedule, ``3N`` intervals) against Kelly's step (one phase ending in a heel strike, ``N``);
* Solo12 trotting one stride of 0.1 m in 0.4 s: ``problems/solo12_trot.py``'s ``build`` (no schedule, ``2N``
  intervals, from its standing guess; also with the friction work priced, with ``SOFT_BUILD``: soft landings and
  the feet's slip priced, and with ``SOFT_FINE_BUILD`` on radau-3 with a force at every collocation point, the
  problem and transcription of the verified stride) against its ``build_two_phase`` (the trot imposed, ``N`` uniform
  intervals per phase);
* a passive walker, where ``problems/`` has one (``compass_gait.py`` or ``rimless_wheel.py``: ``build()``
  at ``2N`` intervals, and ``build_two_phase()`` at ``N`` per phase where the script defines it).

The objectives are printed next to each other: the schedule-free solve may find a cheaper motion (the
multi-phase one fixes which feet touch when) or a worse local optimum.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import colloc as cl  # noqa: E402
from colloc.pipeline.multiphase_problem import MultiPhaseProblem, Phase  # noqa: E402

SIZES = (4, 8)


def load(stem):
    path = os.path.join(ROOT, "problems", f"{stem}.py")
    if not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location(f"problems.{stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def held_stance(duration=0.2):
    """Solo12 standing ``duration`` s with its feet held at their ground points (one phase, holonomic feet)."""
    jump = load("solo12_jump")
    free = jump.robot()
    q0, feet0 = jump.standing_pose(free)
    tau0, force0 = jump.static_stand(free, q0)
    body = jump.robot(feet0)
    prob = jump._phase(body, "stance", duration, feet0, 0.8, 2.7, 0.0)
    prob.initial(jump._base_at_rest(body, q0))
    prob.final(jump._base_at_rest(body, q0))
    guess = {s: float(v) for s, v in zip(body.coordinates, q0)}
    guess.update({u.symbol: float(f) for u, f in zip([u for u in body.variables if u.kind == "control"], tau0)})
    for k in body.constraints:
        if k.name.endswith("_FOOT"):
            guess.update({m.symbol: float(x) for m, x in zip(k.multipliers, force0[jump.FEET.index(k.name.split(".")[-1])])})
    prob.guess(guess)
    return MultiPhaseProblem([Phase(prob, name="stance")], name="solo12_stance_held")


def cases(n):
    """``(motion, form, build, solve options)`` at ``n`` intervals per phase."""
    stand, jump = load("solo12_stand"), load("solo12_jump")
    out = [("solo12 stand 0.2 s", "no schedule", stand.build, dict(stand.SOLVE, intervals=n, guess=stand.standing_guess(0.2))),
           ("solo12 stand 0.2 s", "held feet, 1 phase", held_stance, dict(scheme="hermite-simpson", intervals=n)),
           ("solo12 jump 0.2 m", "no schedule", stand.build_jump,
            dict(stand.JUMP_SOLVE, intervals=3 * n, guess=stand.jump_guess())),
           ("solo12 jump 0.2 m", "radau, force/point", stand.build_jump,
            dict(stand.JUMP_SOLVE_POINTS, intervals=3 * n, guess=stand.jump_guess())),
           ("solo12 jump 0.2 m", "radau, soft landing", lambda: stand.build_jump(landing=stand.SOFT_LANDING),
            dict(stand.JUMP_SOLVE_POINTS, intervals=3 * n, guess=stand.jump_guess())),
           ("solo12 jump 0.2 m", "from standing, apex", lambda: stand.build_jump(apex=stand.APEX),
            dict(stand.JUMP_SOLVE_POINTS, intervals=max(3 * n // 2, 2), relaxation=1.0, guess=stand.standing_guess(0.85, 0.2))),
           ("solo12 jump 0.2 m", "3 phases", jump.build, dict(jump.SOLVE, intervals=n))]
    biped = load("urdf_biped")  # one periodic step of the five-link biped from its URDF, against Kelly's heel-strike step
    out += [("biped step 0.5 m", "no schedule", biped.build, dict(biped.SOLVE, intervals=3 * n)),
            ("biped step 0.5 m", "1 phase + heel strike", biped.build_two_phase, dict(scheme="hermite-simpson", intervals=n))]
    trot = load("solo12_trot")
    if trot is not None:  # one trotting stride: no schedule (2N intervals) against the trot imposed (N per phase)
        out += [("solo12 trot 0.1 m", "no schedule", trot.build, dict(trot.SOLVE, intervals=2 * n)),
                ("solo12 trot 0.1 m", "no schedule, slip priced", lambda: trot.build(dissipation=0.1), dict(trot.SOLVE, intervals=2 * n)),
                ("solo12 trot 0.1 m", "no schedule, soft", lambda: trot.build(**trot.SOFT_BUILD), dict(trot.SOLVE, intervals=2 * n)),
                ("solo12 trot 0.1 m", "radau, soft, force/point", lambda: trot.build(**trot.SOFT_FINE_BUILD),
                 dict(trot.SOLVE, **trot.POINTS, intervals=2 * n)),
                ("solo12 trot 0.1 m", "2 phases", lambda: trot.build_two_phase(mesh=None), dict(trot.SOLVE_TWO_PHASE, intervals=n))]
    for stem in ("compass_gait", "rimless_wheel"):
        walker = load(stem)
        if walker is None:
            continue
        out.append((stem, "no schedule", walker.build, dict(getattr(walker, "SOLVE", {}), intervals=2 * n)))
        if hasattr(walker, "build_two_phase"):  # the same motion with its schedule, where the script has one
            out.append((stem, "2 phases", walker.build_two_phase, dict(scheme="hermite-simpson", intervals=n)))
    return out


#: CPU seconds each IPOPT run may take (a contact-implicit solve runs one per relaxation step and stops at the first
#: that does not converge): the schedule-free jump's steps crawl for tens of minutes (docs/contacts.md).
CPU_LIMIT = 600.0


def table(sizes=SIZES, cpu_limit=CPU_LIMIT, only=None):
    """Solve every case (whose motion contains ``only``, if given) at every size; print and return the rows."""
    rows = []
    print(f"{'motion':20s} {'form':20s} {'N':>3s} {'status':16s} {'iter':>5s} {'CPU s':>8s} {'objective':>12s}", flush=True)
    for n in sizes:
        for motion, form, build, opts in cases(n):
            if only and only not in motion:
                continue
            cpu = time.process_time()
            res = cl.solve(build(), ipopt={"tol": 1e-8, "max_cpu_time": cpu_limit}, **opts)
            cpu = time.process_time() - cpu
            rows.append(dict(motion=motion, form=form, intervals=n, status=res.status.value, iterations=res.iterations,
                             cpu=cpu, objective=res.objective))
            print(f"{motion:20s} {form:20s} {n:3d} {res.status.value:16s} {res.iterations:5d} {cpu:8.1f} {res.objective:12.6f}",
                  flush=True)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--cpu-limit", type=float, default=CPU_LIMIT, help="CPU seconds per IPOPT run (default %(default)s)")
    ap.add_argument("--only", help="only the motions whose name contains this (e.g. 'jump')")
    args = ap.parse_args(argv)
    table(args.sizes, args.cpu_limit, args.only)


if __name__ == "__main__":
    main()
