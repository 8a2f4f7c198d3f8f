"""Trajectory files, interpolation, and failed solves as data."""
import numpy as np
import pytest

import colloc as cl


def double_integrator(tf=1.0, umax=100.0):
    c = cl.Component("m")
    x = c.state("x")
    v = c.state("v")
    u = c.control("u", bounds=(-umax, umax))
    k = c.parameter("k", bounds=(0.5, 2.0))
    c.derivative(x, v)
    c.derivative(v, u)
    p = cl.Problem([c], tf=tf, name="di")
    p.initial({x: 0, v: 0})
    p.final({x: 1, v: 0})
    p.minimize(integral=u**2, final=(k - 1.5) ** 2)
    return p, (x, v, u, k)


@pytest.fixture(scope="module")
def result():
    p, _ = double_integrator()
    return cl.solve(p, intervals=10, ipopt={"tol": 1e-12})


@pytest.mark.parametrize("suffix", [".csv", ".npz", ".sto"])
def test_round_trip_is_exact(result, tmp_path, suffix):
    traj = result.trajectory
    path = traj.write(tmp_path / f"out{suffix}")
    back = cl.Trajectory.read(path)
    assert back.names == traj.names
    assert np.array_equal(back.time, traj.time)
    for n in traj.names:
        assert np.array_equal(back[n], traj[n]), n
    assert back.parameters == traj.parameters
    assert back.metadata == traj.metadata
    assert back.kinds == traj.kinds


def test_metadata_block(result):
    meta = result.trajectory.metadata
    assert meta["problem"] == "di" and meta["scheme"] == "hermite-simpson" and meta["intervals"] == 10
    assert meta["status"] == "solved" and meta["objective"] == pytest.approx(12.0, rel=1e-9)
    assert result.trajectory.parameters["m.k"] == pytest.approx(1.5, abs=1e-6)
    assert result.terms["cost0"] == pytest.approx(12.0, rel=1e-9)


def test_hermite_interpolant_reproduces_the_cubic_exactly(result):
    # x* = 3t² − 2t³ is a cubic: the Hermite–Simpson interpolant is exact between nodes (A4a, [DERIVED])
    t = np.linspace(0, 1, 37)
    vals = result.trajectory(t)
    assert np.allclose(vals["m.x"], 3 * t**2 - 2 * t**3, atol=1e-9)
    assert np.allclose(vals["m.u"], 6 - 12 * t, atol=1e-8)
    one = result.trajectory(0.37)
    assert one["m.x"] == pytest.approx(3 * 0.37**2 - 2 * 0.37**3, abs=1e-9)


def test_access_by_symbol_and_name(result):
    _, (x, v, u, k) = double_integrator()
    traj = result.trajectory
    assert traj.final("m.x") == pytest.approx(1.0)
    assert np.array_equal(traj.value(x.name()), traj["m.x"])
    with pytest.raises(KeyError, match="Did you mean `m.x`"):
        traj["m.xx"]


def test_failed_solve_returns_last_iterate():
    p, _ = double_integrator(umax=1.0)  # x: 0 → 1 in 1 s with |u| ≤ 1 is infeasible (needs 2 s)
    res = cl.solve(p, intervals=10)
    assert not res.success
    assert res.status in (cl.Status.INFEASIBLE, cl.Status.RESTORATION_FAILED)
    assert "bounds" in res.message or "guess" in res.message
    assert res.trajectory.time.size == 21 and np.isfinite(res.trajectory["m.x"]).all()
    assert res.worst and res.worst[0][2] > 0


def test_max_iterations_is_data():
    p, _ = double_integrator()
    res = cl.solve(p, intervals=10, ipopt={"max_iter": 1})
    assert res.status == cl.Status.MAX_ITERATIONS and not res.success
    assert "max_iter" in res.message
    assert res.trajectory.metadata["success"] is False


def test_warm_start_from_file(result, tmp_path):
    path = result.trajectory.write(tmp_path / "prev.csv")
    p, _ = double_integrator()
    res = cl.solve(p, intervals=20, guess=str(path))
    assert res.success and res.objective == pytest.approx(12.0, rel=1e-8)


def test_unwritable_path_is_a_clear_error(result, tmp_path):
    with pytest.raises(cl.FileFormatError, match="does not exist"):
        result.trajectory.write(tmp_path / "missing" / "x.csv")
    with pytest.raises(cl.FileFormatError, match="unknown suffix"):
        result.trajectory.write(tmp_path / "x.xls")


def test_sto_header_follows_the_moco_layout(result, tmp_path):
    path = result.trajectory.write(tmp_path / "out.sto")
    text = open(path).read().splitlines()
    end = text.index("endheader")
    header = dict(line.split("=", 1) for line in text[:end] if "=" in line)
    assert header["num_states"] == "2" and header["num_controls"] == "1" and header["num_derivatives"] == "2"
    assert header["num_multipliers"] == "0" and header["num_slacks"] == "0" and header["num_parameters"] == "1"
    assert header["success"] == "true" and header["status"] == "solved"
    assert float(header["objective"]) == pytest.approx(12.0)
    cols = text[end + 1].split("\t")
    assert cols == ["time", "m.x", "m.v", "m.u", "m.x.dot", "m.v.dot", "m.k"]
    row0, row1 = text[end + 2].split("\t"), text[end + 3].split("\t")
    assert float(row0[-1]) == pytest.approx(1.5, abs=1e-6) and row1[-1] == "nan"


def test_sigint_stops_after_the_current_iteration_and_keeps_the_iterate(tmp_path):
    import os
    import signal

    p, _ = double_integrator()
    seen = []

    def progress(info):
        seen.append(info)
        if info["iteration"] == 2:
            os.kill(os.getpid(), signal.SIGINT)  # as Ctrl-C would

    res = cl.solve(p, intervals=10, progress=progress, checkpoint=(tmp_path / "ck.csv", 1))
    assert res.status == cl.Status.INTERRUPTED and not res.success
    assert "interrupted" in res.message
    assert res.trajectory.time.size == 21 and np.isfinite(res.trajectory["m.x"]).all()
    assert len(seen) <= 4  # stops at the iteration the signal arrived in, or the next
    assert cl.Trajectory.read(tmp_path / "ck.csv").metadata["status"] == "checkpoint"
    # the handler is restored afterwards
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_progress_lines(capsys):
    p, _ = double_integrator()
    cl.solve(p, intervals=5, progress=True)
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["iter", "objective", "primal", "dual", "step"]
    last = out[-1].split()
    assert float(last[2]) < 1e-8 and float(last[3]) < 1e-6  # converged: both infeasibilities small
    assert len(out) >= 3


def test_nan_is_reported_with_the_row_label():
    import casadi as ca

    c = cl.Component("s")
    x = c.state("x")
    u = c.control("u", bounds=(-1, 1))
    c.derivative(x, ca.sqrt(x) + u)  # sqrt of a negative state: NaN
    p = cl.Problem([c], tf=1.0)
    p.initial({x: -1.0})
    p.minimize(integral=u**2)
    res = cl.solve(p, intervals=4)
    assert res.status == cl.Status.INVALID_NUMBER and not res.success
    assert "defect" in res.message and "@k=0" in res.message


def test_cpu_time_limit_is_data():
    p, _ = double_integrator()
    res = cl.solve(p, intervals=10, ipopt={"max_cpu_time": 1e-9})
    assert res.status == cl.Status.TIME_LIMIT and not res.success
    assert "max_cpu_time" in res.message
    assert res.trajectory.time.size == 21


@pytest.mark.parametrize("code, status, hint", [
    ("Restoration_Failed", cl.Status.RESTORATION_FAILED, "restoration"),
    ("Infeasible_Problem_Detected", cl.Status.INFEASIBLE, "infeasib"),
    ("Error_In_Step_Computation", cl.Status.RESTORATION_FAILED, "redundant"),
    ("Maximum_WallTime_Exceeded", cl.Status.TIME_LIMIT, "max_wall_time"),
    ("Search_Direction_Becomes_Too_Small", cl.Status.FAILED, "too small"),
    ("Some_Future_Status", cl.Status.FAILED, "Some_Future_Status"),
])
def test_every_solver_outcome_becomes_a_flagged_result(monkeypatch, code, status, hint):
    """Fault injection at the solver boundary: IPOPT reports `code`; the result is data with a hint."""
    from colloc.solvers.ipopt import IpoptBackend  # the backend the driver runs

    real = IpoptBackend.run

    def faulty(*args, **kwargs):
        sol, stats, b, s = real(*args, **kwargs)
        stats["return_status"] = code
        return sol, stats, b, s

    monkeypatch.setattr(IpoptBackend, "run", staticmethod(faulty))
    p, _ = double_integrator()
    res = cl.solve(p, intervals=5)
    assert res.status == status and not res.success
    assert hint in res.message
    assert res.trajectory.metadata["status"] == status.value and np.isfinite(res.trajectory["m.x"]).all()


def test_an_interrupt_inside_an_evaluation_still_records_the_iterates_objective_and_rows(monkeypatch):
    """An interrupt that lands inside a function evaluation makes CasADi return the iterate with objective 0 and
    zero rows: the result (and the file it writes) records the iterate's own objective and violations."""
    import casadi as ca

    from colloc.solvers.ipopt import IpoptBackend

    real = IpoptBackend.run

    def interrupted(*args, **kwargs):
        sol, stats, b, s = real(*args, **kwargs)
        stats["return_status"] = "User_Requested_Stop"
        return dict(sol, f=ca.DM(0.0), g=ca.DM.zeros(*sol["g"].shape)), stats, b, s

    monkeypatch.setattr(IpoptBackend, "run", staticmethod(interrupted))
    p, _ = double_integrator()
    res = cl.solve(p, intervals=10, ipopt={"max_iter": 2})
    monkeypatch.setattr(IpoptBackend, "run", staticmethod(real))
    ref = cl.solve(p, intervals=10, ipopt={"max_iter": 2})
    assert res.status == cl.Status.INTERRUPTED and not res.success
    assert ref.objective > 1.0 and res.objective == pytest.approx(ref.objective, rel=1e-12)
    assert res.trajectory.metadata["objective"] == pytest.approx(ref.objective, rel=1e-12)
    assert res.max_violation == pytest.approx(ref.max_violation, rel=1e-9, abs=1e-14)


def test_the_summary_lists_the_optimized_parameters(result):
    # min ∫u² + (k − 1.5)²: k* = 1.5 exactly, inside its bounds (0.5, 2)
    line = next(line for line in result.summary().splitlines() if line.strip().startswith("parameters"))
    assert line.split() == ["parameters", "m.k", "=", "1.5"]
