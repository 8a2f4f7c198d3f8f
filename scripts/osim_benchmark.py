"""Cost of OpenSim models' skeletons in colloc beside OpenSim's own, per model of models/opensim/.

    python scripts/osim_benchmark.py [--points N] [--states N]

For each model (forces off: the skeleton alone): seconds to read the file and build the equations of
motion, SX instructions of the inverse-dynamics residual M(q) a + c(q, v) − τ and of its Jacobian in
(q, v, a) and of the lower triangle of its Lagrangian Hessian (λᵀ residual, in q, v, a), and microseconds per
grid point to evaluate each (CasADi's virtual machine, one thread, a
map over N points). Beside them, OpenSim 4.6 through its Python API (in a subprocess: the opensim wheel
carries its own libcasadi) at one state: SimbodyMatterSubsystem::calcM and InverseDynamicsSolver::solve,
microseconds per call including setting the state and realizing it to velocity (realizing alone is printed
in its own column), the calls Moco's solver makes at every grid point (and then differentiates by
finite differences, one call more per variable). Times are CPU seconds of the process (`time.process_time`),
which a machine shared with other work inflates far less than wall time.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
MODELS = ["2D_gait.osim", "gait10dof18musc_subject01.osim", "leg6dof9musc.osim", "gait2354_simbody.osim",
          "Rajagopal2015_right_leg_9musc.osim"]

OPENSIM_SIDE = r'''
import json, sys, time
import numpy as np
import opensim as osim
model = osim.Model(sys.argv[1])
for comp in model.getComponentsList():
    if osim.Force.safeDownCast(comp) is not None:
        osim.Force.safeDownCast(model.updComponent(comp.getAbsolutePathString())).set_appliesForce(False)
state = model.initSystem()
n, reps = state.getNU(), int(sys.argv[2])
udot = osim.Vector(n, 0.1)
solver = osim.InverseDynamicsSolver(model)
matter = model.getMatterSubsystem()
M = osim.Matrix()
out = {}
for name, call in (("calcM", lambda: matter.calcM(state, M)), ("inverse_dynamics", lambda: solver.solve(state, udot))):
    t0 = time.process_time()
    for k in range(reps):
        state.updQ().set(0, 0.001 * k)  # a new state each call: nothing cached
        model.realizeVelocity(state)
        call()
    out[name] = (time.process_time() - t0) / reps * 1e6
t0 = time.process_time()
for k in range(reps):
    state.updQ().set(0, 0.001 * k)
    model.realizeVelocity(state)
out["realize_only"] = (time.process_time() - t0) / reps * 1e6
print(json.dumps(out))
'''


def colloc_side(path, points):
    import casadi as ca

    import colloc.opensim as co

    t0 = time.process_time()
    model = co.load(path, forces=False)
    body = model.body
    residual = body._inverse_dynamics - (body.generalized_force if body.generalized_force is not None else 0)
    x = ca.vertcat(body.q, body.v, body.a)
    f = ca.Function("residual", [x], [residual])
    jac = ca.Function("jacobian", [x], [ca.jacobian(residual, x)])
    lam = ca.SX.sym("lam", residual.numel())
    hess = ca.Function("hessian", [ca.vertcat(x, lam)], [ca.tril(ca.hessian(ca.dot(lam, residual), x)[0])])
    build = time.process_time() - t0
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, (x.numel(), points))
    out = {"model": path.name, "nq": body.q.numel(), "build_s": build,
           "residual_instructions": f.n_instructions(), "jacobian_instructions": jac.n_instructions(),
           "hessian_instructions": hess.n_instructions()}
    XL = np.vstack([X, rng.normal(size=(residual.numel(), points))])
    for key, fn, arg in (("residual_us", f, X), ("jacobian_us", jac, X), ("hessian_us", hess, XL)):
        mapped = fn.map(points)
        mapped(arg)
        t0 = time.process_time()
        for _ in range(5):
            mapped(arg)
        out[key] = (time.process_time() - t0) / 5 / points * 1e6
    return out


def opensim_side(path, states):
    run = subprocess.run([sys.executable, "-c", OPENSIM_SIDE, str(path), str(states)], capture_output=True, text=True,
                         timeout=600, cwd=tempfile.gettempdir())  # OpenSim writes opensim.log there
    if run.returncode:
        return {"calcM": float("nan"), "inverse_dynamics": float("nan"), "realize_only": float("nan")}
    return json.loads(run.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1000, help="grid points per colloc evaluation (default 1000)")
    parser.add_argument("--states", type=int, default=300, help="OpenSim calls per measurement (default 300)")
    args = parser.parse_args(argv)
    table(args.points, args.states)


def table(points=1000, states=300, models=MODELS):
    """Print the skeleton table (markdown) of the module docstring for ``models`` of models/opensim/."""
    print("| model | nq | build s | residual instr. | µs/point | Jacobian instr. | µs/point | Hessian instr. | µs/point "
          "| OpenSim set+realize µs | + calcM µs | + ID µs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in models:
        path = ROOT / "models" / "opensim" / name
        if not path.exists():
            continue
        c, o = colloc_side(path, points), opensim_side(path, states)
        print(f"| {name} | {c['nq']} | {c['build_s']:.2f} | {c['residual_instructions']} | {c['residual_us']:.2f} | "
              f"{c['jacobian_instructions']} | {c['jacobian_us']:.2f} | {c['hessian_instructions']} | {c['hessian_us']:.2f} | "
              f"{o['realize_only']:.1f} | {o['calcM']:.1f} | {o['inverse_dynamics']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
