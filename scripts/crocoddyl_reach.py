"""The Panda reach by colloc and by crocoddyl, side by side in one process.

``python scripts/benchmark.py --crocoddyl [--sizes 50 100]``

The problem is problems/panda_reach.py: the Panda of example-robot-data (the same URDF file, fingers locked
at 0, 7 joints, gravity −9.81), at rest in configuration A at t = 0 and in B at T = 1.5 s, every link origin of
``OBSTACLE_LINKS`` outside a sphere (centre (0.1, 0.1, 0.85) m, radius 0.1 m), the URDF's position, velocity
and effort limits, minimum ∫|τ|² dt.

Rows per N: colloc with ``compile=False`` and with ``compile=True`` (the libraries cached by a run before),
Hermite–Simpson on N uniform intervals, every constraint exact (IPOPT, tol 1e-8); crocoddyl as below, and
again without the obstacle term (its own speed, without the Python residual: the same solution whenever the
obstacle is inactive in it); colloc started from crocoddyl's solution (is a difference in cost the guess's
or the method's?).

crocoddyl (DDP over Pinocchio's analytical derivatives, C++): the same T split into N steps, forward dynamics
(ABA) integrated by RK4 with the torque held constant over each step (``IntegratedActionModelRK``), the
running cost 2 · ½|τ|² (= |τ|², integrated by RK4 over the step), x(0) = (A, 0) exactly.  What crocoddyl's
FDDP cannot hold exactly is written as penalties ½ w ‖·‖² that a continuation raises, each stage warm-started
from the last (w = 1e2, 1e4, 1e6): the terminal state (x(T) − (B, 0)), the obstacle (a quadratic barrier on
|p_k − c| − r ≥ 0 per link origin, at every RK stage and at T; a Python residual, as crocoddyl has no
point–sphere distance without a collision library) and the position and velocity limits (a quadratic
barrier on the state).  The torque limits are kept by box-FDDP (``SolverBoxFDDP``) exactly.  Its guess is
colloc's: joint angles on the straight line from A to B, zero speeds and torques.

crocoddyl runs in a child process of ``$CROCODDYL_PYTHON`` (default: this interpreter), which first checks that
crocoddyl's forward dynamics equal Pinocchio's ABA: the wheels of crocoddyl 3.2.1 with Pinocchio 4.1.0 give
garbage accelerations (built against 4.0.0; an interpreter with ``pip install crocoddyl==3.2.1 pin==4.0.0``
works).  The child needs no colloc and no CasADi: the problem's data go to it as JSON.

Reported for both: seconds (wall and process CPU, from building the problem to the solution), iterations,
∫|τ|² dt (colloc: its Hermite–Simpson quadrature, the objective; crocoddyl: Σ h |u_k|², exact for its
piecewise-constant torques), the terminal error max(|q(T) − B|, |v(T)|), the smallest clearance
min_k,t |p_k − c| − r at the grid points (colloc) or steps (crocoddyl), the largest violation of any limit,
and the dynamics: colloc's largest constraint violation, crocoddyl's largest gap between shooting nodes.
"""
from __future__ import annotations

import importlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WEIGHTS = (1e2, 1e4, 1e6)


def _spec():
    """The reach's data, from problems/panda_reach.py, for the crocoddyl child (JSON)."""
    from colloc.model.urdf import example_robot

    script = importlib.import_module("problems.panda_reach")
    return dict(urdf=example_robot("panda_description/urdf/panda.urdf"), arm=script.ARM, links=script.OBSTACLE_LINKS,
                start=list(script.START), goal=list(script.GOAL), duration=1.5, centre=[0.1, 0.1, 0.85], radius=0.1)


def _model(spec):
    import pinocchio as pin

    model = pin.buildModelFromUrdf(spec["urdf"])
    locked = [model.getJointId(n) for n in model.names[1:] if n not in spec["arm"]]
    return pin.buildReducedModel(model, locked, pin.neutral(model))


def _clearance_residual(state, frames, centre, radius, nu):
    """|p_k(q) − c| − r for every frame k (a crocoddyl residual written in Python)."""
    import crocoddyl
    import pinocchio as pin

    class Clearance(crocoddyl.ResidualModelAbstract):
        def __init__(self):
            crocoddyl.ResidualModelAbstract.__init__(self, state, len(frames), nu, True, False, False)

        def calc(self, data, x, u=None):
            pdata = data.shared.pinocchio
            for i, f in enumerate(frames):
                d = pdata.oMf[f].translation - centre
                data.r[i] = math.sqrt(d @ d) - radius

        def calcDiff(self, data, x, u=None):
            model, pdata = state.pinocchio, data.shared.pinocchio
            pin.computeJointJacobians(model, pdata, x[:model.nq])
            for i, f in enumerate(frames):
                d = pdata.oMf[f].translation - centre
                J = pin.getFrameJacobian(model, pdata, f, pin.LOCAL_WORLD_ALIGNED)[:3]
                data.Rx[i, :model.nv] = d @ J / max(math.sqrt(d @ d), 1e-12)

    return Clearance()


def _models(spec, model, n, weight, with_obstacle=True):
    import crocoddyl

    state = crocoddyl.StateMultibody(model)
    actuation = crocoddyl.ActuationModelFull(state)
    nu, nx = actuation.nu, state.nx
    centre, radius = np.array(spec["centre"]), spec["radius"]
    frames = [model.getFrameId(name) for name in spec["links"]]
    barrier = lambda lo, hi: crocoddyl.ActivationModelQuadraticBarrier(crocoddyl.ActivationBounds(lo, hi))  # noqa: E731
    obstacle = crocoddyl.CostModelResidual(state, barrier(np.zeros(len(frames)), np.full(len(frames), np.inf)),
                                           _clearance_residual(state, frames, centre, radius, nu))
    lo = np.concatenate([model.lowerPositionLimit, -model.velocityLimit])
    hi = np.concatenate([model.upperPositionLimit, model.velocityLimit])
    limits = crocoddyl.CostModelResidual(state, barrier(lo, hi), crocoddyl.ResidualModelState(state, np.zeros(nx), nu))
    goal = np.concatenate([spec["goal"], np.zeros(model.nv)])
    running, terminal = crocoddyl.CostModelSum(state, nu), crocoddyl.CostModelSum(state, nu)
    running.addCost("effort", crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelControl(state, nu)), 2.0)
    for costs in (running, terminal):
        if with_obstacle:
            costs.addCost("obstacle", obstacle, weight)
        costs.addCost("limits", limits, weight)
    terminal.addCost("goal", crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelState(state, goal, nu)), weight)
    h = spec["duration"] / n
    dam = crocoddyl.DifferentialActionModelFreeFwdDynamics(state, actuation, running)
    dam.u_lb, dam.u_ub = -model.effortLimit, model.effortLimit
    step = crocoddyl.IntegratedActionModelRK(dam, crocoddyl.RKType.four, h)
    end = crocoddyl.IntegratedActionModelRK(crocoddyl.DifferentialActionModelFreeFwdDynamics(state, actuation, terminal),
                                            crocoddyl.RKType.four, 0.0)
    x0 = np.concatenate([spec["start"], np.zeros(model.nv)])
    return crocoddyl.ShootingProblem(x0, [step] * n, end), goal, frames, centre, radius


def _check_dynamics(model):
    """``None`` when crocoddyl's forward dynamics equal Pinocchio's ABA at a random state, else why not."""
    import crocoddyl
    import pinocchio as pin

    state = crocoddyl.StateMultibody(model)
    actuation = crocoddyl.ActuationModelFull(state)
    dam = crocoddyl.DifferentialActionModelFreeFwdDynamics(state, actuation, crocoddyl.CostModelSum(state, actuation.nu))
    data, rng = dam.createData(), np.random.default_rng(0)
    q, v, u = pin.randomConfiguration(model), rng.normal(size=model.nv), rng.normal(size=model.nv)
    dam.calc(data, np.concatenate([q, v]), u)
    error = float(np.abs(data.xout - pin.aba(model, model.createData(), q, v, u)).max())
    if error <= 1e-8:
        return None
    return (f"crocoddyl {crocoddyl.__version__}'s forward dynamics differ from Pinocchio {pin.__version__}'s ABA by {error:.1e} "
            "(built against another Pinocchio); set CROCODDYL_PYTHON to an interpreter with a matching pin "
            "(crocoddyl 3.2.1: pin 4.0.0)")


def solve_crocoddyl(n, spec, with_obstacle=True):
    """The continuation of box-FDDP solves (in this process); a dict of what the table prints.  ``with_obstacle``
    False: without the obstacle's (Python) residual, crocoddyl's own speed; its solution solves the reach
    as well when it clears the sphere anyway (its clearance says)."""
    import crocoddyl

    start, cpu = time.perf_counter(), time.process_time()
    model = _model(spec)
    broken = _check_dynamics(model)
    if broken:
        return dict(side="crocoddyl", error=broken)
    s = np.linspace(0.0, 1.0, n + 1)
    xs = [np.concatenate([(1 - t) * np.array(spec["start"]) + t * np.array(spec["goal"]), np.zeros(model.nv)]) for t in s]
    us = [np.zeros(model.nv)] * n
    iterations = 0
    for weight in WEIGHTS:
        problem, goal, frames, centre, radius = _models(spec, model, n, weight, with_obstacle)
        solver = crocoddyl.SolverBoxFDDP(problem)
        solver.th_stop = 1e-9
        solver.solve(xs, us, 1000, False)
        xs, us, iterations = list(solver.xs), list(solver.us), iterations + solver.iter
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    X, U = np.array(xs), np.array(us)
    nq = model.nq
    gaps = max(float(np.abs(a - b).max()) for a, b in zip(problem.rollout(us), xs))
    return dict(side=f"crocoddyl {crocoddyl.__version__}" + ("" if with_obstacle else " no obstacle term"), wall=wall, cpu=cpu, iterations=iterations,
                effort=float((spec["duration"] / n) * np.sum(U**2)), terminal=float(np.abs(X[-1] - goal).max()),
                clearance=_clearance(model, X[:, :nq], frames, centre, radius), limits=_limit_violation(model, X[:, :nq], X[:, nq:], U),
                dynamics=gaps, status=f"stopped at {solver.stop:.1e}", xs=X.tolist(), us=U.tolist())


def crocoddyl_child(n, spec, with_obstacle=True):
    """:func:`solve_crocoddyl` in a child process of ``$CROCODDYL_PYTHON`` (default: this interpreter)."""
    python = os.environ.get("CROCODDYL_PYTHON", sys.executable)
    out = subprocess.run([python, os.path.abspath(__file__), str(n), json.dumps(spec), str(int(with_obstacle))], capture_output=True, text=True)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        return dict(side="crocoddyl", error=(out.stderr.strip().splitlines() or ["no output"])[-1])
    return json.loads(lines[-1])


def solve_colloc(n, label="colloc", guess=None, **options):
    """colloc's solve of the reach (``guess``: crocoddyl's states and torques at its steps); a table row."""
    import colloc as cl

    start, cpu = time.perf_counter(), time.process_time()
    script = importlib.import_module("problems.panda_reach")
    if guess is not None:
        guess = _as_trajectory(script, guess, n)
    res = cl.solve(script.build(), scheme="hermite-simpson", intervals=n, guess=guess, **options)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    model = _model(_spec())
    traj = res.trajectory
    Q = np.vstack([traj[f"panda.{j}"] for j in script.ARM]).T
    V = np.vstack([traj[f"panda.{j}_speed"] for j in script.ARM]).T
    U = np.vstack([traj[f"panda.tau_{j}"] for j in script.ARM]).T
    frames = [model.getFrameId(name) for name in script.OBSTACLE_LINKS]
    goal = np.concatenate([script.GOAL, np.zeros(model.nv)])
    return dict(side=" ".join([label, *(f"{k}={v}" for k, v in options.items())]), wall=wall, cpu=cpu, iterations=res.iterations,
                effort=res.objective, terminal=float(np.abs(np.concatenate([Q[-1], V[-1]]) - goal).max()),
                clearance=_clearance(model, Q, frames, np.array([0.1, 0.1, 0.85]), 0.1), limits=_limit_violation(model, Q, V, U),
                dynamics=res.max_violation, status=res.status.value)


def _as_trajectory(script, row, n):
    """crocoddyl's solution as a colloc guess: its states at the steps, each step's torque at its start (and the
    last one at T)."""
    import colloc as cl

    X, U = np.array(row["xs"]), np.array(row["us"])
    U = np.vstack([U, U[-1:]])
    nq = len(script.ARM)
    columns = {f"panda.{j}": X[:, i] for i, j in enumerate(script.ARM)}
    columns.update({f"panda.{j}_speed": X[:, nq + i] for i, j in enumerate(script.ARM)})
    columns.update({f"panda.tau_{j}": U[:, i] for i, j in enumerate(script.ARM)})
    kinds = {k: "control" if ".tau_" in k else "state" for k in columns}
    return cl.Trajectory(np.linspace(0.0, 1.5, n + 1), columns, kinds, metadata={"scheme": "trapezoidal"})


def _clearance(model, Q, frames, centre, radius):
    import pinocchio as pin

    data, worst = model.createData(), np.inf
    for q in Q:
        pin.framesForwardKinematics(model, data, q)
        worst = min(worst, min(np.linalg.norm(data.oMf[f].translation - centre) - radius for f in frames))
    return float(worst)


def _limit_violation(model, Q, V, U):
    over = [np.maximum(Q - model.upperPositionLimit, 0), np.maximum(model.lowerPositionLimit - Q, 0),
            np.maximum(np.abs(V) - model.velocityLimit, 0), np.maximum(np.abs(U) - model.effortLimit, 0)]
    return float(max(o.max() for o in over))


def compare(sizes=(50,)):
    """Solve the reach both ways at each N and print the table."""
    sys.path.insert(0, ROOT)
    import pinocchio

    print(f"pinocchio {pinocchio.__version__} here; crocoddyl in {os.environ.get('CROCODDYL_PYTHON', sys.executable)}; "
          f"Panda reach, T = 1.5 s, penalty weights {WEIGHTS}")
    print(f"{'N':>4s} {'side':36s} | {'wall s':>7s} {'CPU s':>7s} {'iter':>5s} | {'∫|τ|² dt':>10s} {'terminal':>9s} "
          f"{'clearance':>10s} {'limits':>9s} {'dynamics':>9s} | status")
    rows = []
    for n in sizes:
        croc = crocoddyl_child(n, _spec())
        with tempfile.TemporaryDirectory() as cache:  # colloc's compiled libraries: made by the first row, loaded by the second
            os.environ["COLLOC_CACHE_DIR"] = cache
            solve_colloc(n, compile=True)
            todo = [solve_colloc(n, compile=False), solve_colloc(n, compile=True), croc, crocoddyl_child(n, _spec(), with_obstacle=False)]
            if "error" not in croc:  # the same NLP from crocoddyl's optimum: is it colloc's guess or its method?
                todo.append(solve_colloc(n, "colloc from crocoddyl's", croc, compile=True))
        for row in todo:
            rows.append(dict(row, n=n))
            if "error" in row:
                print(f"{n:4d} {row['side']:36s} | failed: {row['error']}", flush=True)
                continue
            print(f"{n:4d} {row['side']:36s} | {row['wall']:7.2f} {row['cpu']:7.2f} {row['iterations']:5d} | {row['effort']:10.4f} "
                  f"{row['terminal']:9.1e} {row['clearance']:10.1e} {row['limits']:9.1e} {row['dynamics']:9.1e} | {row['status']}", flush=True)
    return rows


if __name__ == "__main__":  # the crocoddyl child: N and the problem's data (JSON) in, one JSON line out
    print(json.dumps(solve_crocoddyl(int(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3] == "1")))
