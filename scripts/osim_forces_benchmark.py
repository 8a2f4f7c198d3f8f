"""Cost of OpenSim models with their forces (muscles, paths, contacts) in colloc, beside OpenSim's own.

    python scripts/osim_forces_benchmark.py [--points N] [--states N]

For each model of models/opensim/ that colloc reads with its forces: seconds to read the file and build
the model's dynamics function, SX instructions of the residual (skeleton, muscles with their activation
and tendon dynamics, contacts) and of the applied generalized forces alone, the same for the lower
triangle of the Lagrangian Hessian (λᵀ residual in every input), and microseconds per grid point to
evaluate each (CasADi's virtual machine, one thread, a map over N points). Beside them, OpenSim 4.6 (in a
subprocess: its wheel carries its own libcasadi) after Moco's muscle replacement: microseconds per
``realizeAcceleration`` from a fresh state, the call Moco's solver makes at every grid point, and
microseconds per forward-difference Jacobian of the state derivatives in every state variable (one
``realizeAcceleration`` more per variable, as Moco's solver differentiates).  Moco approximates the
Hessian by L-BFGS for such models: OpenSim has no counterpart of the exact Lagrangian Hessian.  Times are
CPU seconds of each process (`time.process_time`), which a machine shared with other work inflates far
less than wall time.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time

import casadi as ca
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
MODELS = ["2D_gait.osim", "2D_gait_fitted_paths.osim", "leg6dof9musc.osim", "gait10dof18musc_subject01.osim",
          "gait2354_simbody.osim", "Rajagopal2015_right_leg_fitted_paths.osim"]

OPENSIM_SIDE = r'''
import json, sys, time
import opensim as osim
osim.Logger.setLevelString("error")
model = osim.Model(sys.argv[1])
osim.DeGrooteFregly2016Muscle.replaceMuscles(model)
state = model.initSystem()
reps = int(sys.argv[2])
t0 = time.process_time()
for k in range(reps):
    state.updQ().set(0, 0.001 * k)  # a new state each call: nothing cached
    model.realizeAcceleration(state)
out = {"realizeAcceleration": (time.process_time() - t0) / reps * 1e6}
# a forward-difference Jacobian of the state derivatives in every state variable, as Moco's solver takes it
y, n = osim.Vector(state.getY()), state.getNY()
reps = max(1, reps // 20)
t0 = time.process_time()
for k in range(reps):
    for i in range(n + 1):
        z = osim.Vector(y)
        if i:
            z.set(i - 1, y.get(i - 1) + 1e-6)
        state.setY(z)
        model.realizeAcceleration(state)
out.update(fd_jacobian=(time.process_time() - t0) / reps * 1e6, num_y=n)
print(json.dumps(out))
'''


def per_point(f, points):
    """Microseconds per point of ``f`` mapped over ``points`` random points."""
    fm = f.map(points, "serial")
    args = [ca.DM(np.random.default_rng(i).uniform(0.05, 0.3, (f.size1_in(i), points))) for i in range(f.n_in())]
    fm(*args)
    reps, t0 = 3, time.process_time()
    for _ in range(reps):
        fm(*args)
    return (time.process_time() - t0) / reps / points * 1e6


def hessian(f):
    """The lower triangle of ∇²(λᵀ f) in all inputs of ``f`` stacked (every output of ``f`` weighted), as a Function."""
    x = [ca.SX.sym(f"x{i}", f.size_in(i)) for i in range(f.n_in())]
    out = f(*x)
    out = ca.vertcat(*[ca.vec(o) for o in out]) if isinstance(out, (list, tuple)) else out  # (ẋ, residual)
    lam = ca.SX.sym("lam", out.numel())
    z = ca.vertcat(*[ca.vec(v) for v in x])
    return ca.Function("lagrangian_hessian", x + [lam], [ca.tril(ca.hessian(ca.dot(lam, out), z)[0])])


def colloc_side(path, points):
    import colloc as cl
    from colloc.opensim import load

    t0 = time.process_time()
    model = load(path)
    residual = cl.Model(model.components).dynamics()
    build = time.process_time() - t0
    sk = model.skeleton
    tau = sk.body.generalized_force
    rest = [s for s in ca.symvar(tau) if not (ca.depends_on(sk.q, s) or ca.depends_on(sk.v, s))]
    forces = ca.Function("forces", [sk.q, sk.v, ca.vertcat(*rest)], [tau])
    out = dict(build=build, coordinates=sk.q.numel(), muscles=len(model.components) - 1)
    for key, f in (("residual", residual), ("forces", forces)):
        h = hessian(f)
        out[key] = (f.n_instructions(), per_point(f, points), h.n_instructions(), per_point(h, points))
    return out


def opensim_side(path, states):
    with tempfile.TemporaryDirectory() as tmp:  # OpenSim writes opensim.log where it runs
        done = subprocess.run([sys.executable, "-c", OPENSIM_SIDE, str(path), str(states)], capture_output=True,
                              text=True, cwd=tmp, timeout=600)
    return json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else {}


def table(points=100, states=200, models=MODELS):
    """Print the table (markdown) of the module docstring for ``models`` of models/opensim/; return its rows."""
    print("| model | q | muscles | build s | residual instr | µs/pt | Hessian instr | µs/pt | forces instr | µs/pt "
          "| forces Hessian instr | µs/pt | OpenSim realizeAcceleration µs | OpenSim FD Jacobian µs (states) |")
    print("|---" * 14 + "|")
    rows = []
    for name in models:
        path = ROOT / "models" / "opensim" / name
        if not path.exists():
            continue
        c, o = colloc_side(path, points), opensim_side(path, states)
        r, f = c["residual"], c["forces"]
        print(f"| {name} | {c['coordinates']} | {c['muscles']} | {c['build']:.2f} | {r[0]} | {r[1]:.1f} | {r[2]} | {r[3]:.1f} "
              f"| {f[0]} | {f[1]:.1f} | {f[2]} | {f[3]:.1f} | {o.get('realizeAcceleration', float('nan')):.0f} "
              f"| {o.get('fd_jacobian', float('nan')):.0f} ({o.get('num_y', '?')}) |", flush=True)
        rows.append(dict(model=name, colloc=c, opensim=o))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", type=int, default=100)
    ap.add_argument("--states", type=int, default=200)
    args = ap.parse_args()
    table(args.points, args.states)


if __name__ == "__main__":
    main()
