"""What the summary reports: kinematic constraints per level, at mesh points and between them; one
iteration count shared by the progress lines and the summary."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import colloc as cl
from colloc.results.trajectory import level_of

ROOT = Path(__file__).resolve().parents[1]


def _build(stem, **params):
    spec = importlib.util.spec_from_file_location(stem, ROOT / "problems" / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build(**params)


def test_kinematic_constraints_are_reported_per_level_at_mesh_points_and_between_them(tmp_path):
    """Skate (knife edge): ψ = sin θ·ẋ − cos θ·ẏ holds at mesh points to round-off; at the Hermite–Simpson
    midpoints only to the scheme's accuracy. The summary gives both and keeps ψ apart from ψ̇."""
    res = cl.solve(_build("skate"), intervals=10)
    assert res.success
    path = res.trajectory.write(tmp_path / "skate.csv")
    traj = cl.Trajectory.read(path)  # the oracle: ψ computed from the file's columns by its formula
    psi = np.sin(traj["skate.theta"]) * traj["skate.vx"] - np.cos(traj["skate.theta"]) * traj["skate.vy"]
    between, at_mesh = np.abs(psi[1::2]).max(), np.abs(psi[0::2]).max()
    assert res.between_mesh_points["nonholonomic:skate.blade"] == np.float64(between)
    assert at_mesh < 1e-10 < 1e-6 < between  # the mesh-point rows are not the whole truth
    lines = res.summary().splitlines()
    psi_line = next(line for line in lines if "nonholonomic ψ " in line)
    assert f"at mesh points, {between:.2e} largest between them" in psi_line
    assert any("nonholonomic ψ̇" in line and "between" not in line for line in lines)  # ψ̇ (collocation points) apart
    assert level_of("holonomic:pend.rod.ddot@k=3") == "holonomic φ̈" and level_of("path:speed") == "path"


def test_progress_counts_ipopt_iterations_through_a_restoration_phase(capsys):
    """log x driven to x = 0.001 under √x ≥ 0: IPOPT enters its restoration phase (and calls the iteration
    callback once more than it counts at its end); the progress lines number IPOPT's iterations, 0 … the
    summary's count, each once, restoration steps marked ``r`` as in IPOPT's own log."""
    import casadi as ca

    c = cl.Component("m")
    x = c.state("x", bounds=(-10, 10))
    u = c.control("u", bounds=(-50, 50))
    c.derivative(x, u)
    p = cl.Problem([c], t0=0, tf=1, name="resto")
    p.initial({x: 1.0})
    p.final({x: 0.001})
    p.guess({x: 1.0})
    p.path(ca.sqrt(x), lower=0, name="root")
    p.minimize(integral=u**2 + ca.log(x))
    scaled = {"mumps_scaling": 77}  # MUMPS's automatic scaling (the default): this example's steps pass through restoration
    # whether IPOPT takes a restoration step depends on rounding in the first iterates: the first mesh that does
    for n in (5, 6, 7, 3):
        seen = []
        res = cl.solve(p, intervals=n, progress=seen.append, ipopt=scaled)
        if any(i["restoration"] for i in seen):
            break
    assert any(i["restoration"] for i in seen), "the example no longer reaches IPOPT's restoration phase"
    assert [i["iteration"] for i in seen] == list(range(res.iterations + 1))
    res = cl.solve(p, intervals=n, progress=True, ipopt=scaled)
    lines = capsys.readouterr().out.splitlines()
    numbers = [line.split()[0] for line in lines[1:]]
    assert numbers[-1].rstrip("r") == str(res.iterations) and len(numbers) == res.iterations + 1
    assert "Ipopt" not in "\n".join(lines) and any(n.endswith("r") for n in numbers)


def test_a_multi_phase_summary_reports_kinematic_constraints_between_mesh_points_per_phase():
    """The Cartesian pendulum (a rod: x² + y² = 1) split into two phases joined by continuity."""
    from colloc.pipeline.multiphase_problem import MultiPhaseProblem, Phase

    whole = _build("pendulum_cartesian")
    phases = []
    for name in ("one", "two"):
        prob = cl.Problem(whole.model, t0=0.0, tf=1.5, name=name)
        prob.minimize(integral=whole.costs[0].integral)
        phases.append(Phase(prob))
    phases[0].problem.initial_bounds.update(whole.initial_bounds)
    phases[1].problem.final_bounds.update(whole.final_bounds)
    mp = MultiPhaseProblem(phases, name="split")
    mp.connect("one", "two")
    res = cl.solve(mp, intervals=10)
    assert res.success, res.message
    traj = res.phase("two")  # the oracle: the rod's equation on the file's columns at the midpoints
    rod = np.abs(traj["pend.x"] ** 2 + traj["pend.y"] ** 2 - 1)[1::2].max()
    assert res.between_mesh_points["holonomic:two/pend.rod"] == pytest.approx(rod, rel=1e-12)
    line = next(line for line in res.summary().splitlines() if "holonomic φ " in line)
    assert "largest between them" in line
