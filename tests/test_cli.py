"""The ``colloc`` command, run in-process with ``cli.main([...])`` on scripts written to ``tmp_path``.

Reference value: the double integrator x'' = u, x(0) = v(0) = 0, x(1) = d, v(1) = 0,
minimize ∫₀¹ u² dt has u* = d (6 − 12 t), J* = 12 d² (Kelly, SIAM Review 59(4), 2017,
§2); x* is cubic, so Hermite–Simpson reproduces J* to round-off on any mesh.
"""
from __future__ import annotations

import math
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import colloc as cl
from colloc.cli import commands as cli
from colloc.pipeline.script import parse_assignments
from di_script import di_script

DOUBLE_INTEGRATOR = di_script(solve='dict(scheme="hermite-simpson", intervals=10)', name="double_integrator", implicit=False,
                              doc="Double integrator, minimum energy, rest to rest.")

# Pendulum swing-up: nonlinear, so IPOPT needs more than one iteration from a zero guess.
PENDULUM = '''
import casadi as ca
import colloc as cl

SOLVE = dict(intervals=20)


def build():
    c = cl.Component("pend")
    th = c.state("theta")
    om = c.state("omega")
    u = c.control("u", bounds=(-10, 10))
    c.derivative(th, om)
    c.derivative(om, u - 9.81 * ca.sin(th))
    prob = cl.Problem([c], t0=0.0, tf=2.0, name="pendulum")
    prob.initial({th: 0.0, om: 0.0})
    prob.final({th: ca.pi, om: 0.0})
    prob.minimize(integral=u**2)
    return prob
'''


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def script(tmp_path):
    return write(tmp_path, "di.py", DOUBLE_INTEGRATOR)


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# -- solve --------------------------------------------------------------------------------------
def test_solve_prints_summary_and_writes_csv_and_png(tmp_path, script, capsys):
    out_dir = tmp_path / "results"
    code, out, err = run(capsys, "solve", script, "--out", out_dir, "--plot")
    assert code == 0, err
    assert "objective" in out and "solved" in out
    csv, png = out_dir / "di.csv", out_dir / "di.png"
    assert csv.is_file() and png.is_file()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    traj = cl.Trajectory.read(csv)
    assert traj.metadata["objective"] == pytest.approx(12.0, rel=1e-6)
    assert traj.metadata["intervals"] == 10  # from SOLVE
    assert traj.final("mass.x") == pytest.approx(1.0, abs=1e-8)


def test_solve_default_out_is_results_folder(tmp_path, script, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "solve", script)
    assert code == 0
    assert (tmp_path / "results" / "di.csv").is_file()
    assert not (tmp_path / "results" / "di.png").exists()  # only with --plot


def test_set_passes_parameter_to_build(tmp_path, script, capsys):
    code, out, err = run(capsys, "solve", script, "--set", "distance=2", "--out", tmp_path)
    assert code == 0, err
    assert cl.Trajectory.read(tmp_path / "di_distance=2.csv").metadata["objective"] == pytest.approx(48.0, rel=1e-6)  # 12 d²


def test_flags_override_solve_defaults(tmp_path, script, capsys):
    code, _, err = run(capsys, "solve", script, "--intervals", 4, "--scheme", "trapezoidal", "--out", tmp_path)
    assert code == 0, err
    meta = cl.Trajectory.read(tmp_path / "di.csv").metadata
    assert (meta["intervals"], meta["scheme"]) == (4, "trapezoidal")


def test_unknown_set_name_suggests_closest(script, capsys):
    code, out, err = run(capsys, "solve", script, "--set", "distnce=2")
    assert code == 2
    assert "`distnce`" in err and "Did you mean `distance`?" in err
    assert "Traceback" not in err + out


def test_unknown_set_name_without_close_match_lists_parameters(script, capsys):
    code, _, err = run(capsys, "solve", script, "--set", "zzz=2")
    assert code == 2
    assert "`zzz`" in err and "distance" in err


def test_set_any_name_when_build_takes_kwargs(tmp_path, capsys):
    path = write(tmp_path, "kw.py", DOUBLE_INTEGRATOR.replace("def build(distance=1.0):", "def build(**params):\n    distance = params.get('distance', 1.0)"))
    code, _, err = run(capsys, "solve", path, "--set", "distance=2", "--set", "anything='x'", "--out", tmp_path)
    assert code == 0, err
    assert cl.Trajectory.read(tmp_path / "kw_anything=x_distance=2.csv").metadata["objective"] == pytest.approx(48.0, rel=1e-6)


def test_missing_required_build_parameter(tmp_path, capsys):
    path = write(tmp_path, "req.py", DOUBLE_INTEGRATOR.replace("def build(distance=1.0):", "def build(distance):"))
    code, _, err = run(capsys, "solve", path)
    assert code == 2
    assert "distance" in err and "--set" in err


@pytest.mark.parametrize("text, words", [
    ("def build(:\n    pass\n", ["bad.py", "syntax error", "line 1"]),
    ("import colloc\nBUILD = None\n", ["bad.py", "`build`"]),
    ("def build():\n    return 3\n", ["bad.py", "int", "Problem"]),
    ("def build():\n    raise ValueError('distance must be positive')\n", ["bad.py", "line 2", "distance must be positive"]),
    ("SOLVE = [1]\ndef build():\n    import colloc\n    c = colloc.Component('a')\n    x = c.state('x')\n    c.derivative(x, 0)\n    return colloc.Problem([c])\n",
     ["bad.py", "SOLVE", "dict"]),
])
def test_bad_scripts_exit_2_naming_the_file(tmp_path, capsys, text, words):
    path = write(tmp_path, "bad.py", text)
    code, out, err = run(capsys, "solve", path)
    assert code == 2
    assert err.startswith("colloc: error: ")
    assert err.count("\n") == 1  # one line
    for w in words:
        assert w in err
    assert "Traceback" not in err + out


def test_missing_script_exits_2(tmp_path, capsys):
    code, _, err = run(capsys, "solve", tmp_path / "nope.py")
    assert code == 2
    assert "nope.py" in err and "does not exist" in err


def test_problem_error_from_build_exits_2(tmp_path, capsys):
    path = write(tmp_path, "typo.py", DOUBLE_INTEGRATOR.replace('prob.final({x: distance, v: 0.0})', 'prob.final({"mass.xx": distance})'))
    code, _, err = run(capsys, "solve", path)
    assert code == 2
    assert "mass.xx" in err and "Did you mean `mass.x`?" in err


def test_not_converged_exits_1_and_still_writes(tmp_path, capsys):
    path = write(tmp_path, "pend.py", PENDULUM)
    code, out, err = run(capsys, "solve", path, "--ipopt", "max_iter=1", "--out", tmp_path, "--plot")
    assert code == 1, err
    assert "max-iterations" in out
    traj = cl.Trajectory.read(tmp_path / "pend.csv")
    assert traj.metadata["status"] == "max-iterations" and traj.metadata["success"] is False
    assert (tmp_path / "pend.png").is_file()


def test_scheme_nonsense_lists_known_names(tmp_path, script, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "solve", script, "--scheme", "nonsense")
    assert code == 2
    for name in ("trapezoidal", "hermite-simpson", "radau-d", "legendre-gauss-d", "midpoint-vi"):
        assert name in err
    assert not (tmp_path / "results").exists()  # no empty output folder left by a refused solve
    code, _, err = run(capsys, "solve", script, "--scheme", "radau")
    assert code == 2 and "radau-3" in err


def test_ipopt_options_are_checked_by_name_before_the_build(tmp_path, script, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "solve", script, "--ipopt", "max_itr=2")
    assert code == 2 and "`max_itr`" in err and "max_iter" in err
    code, _, err = run(capsys, "solve", script, "--ipopt", "max_iter=abc")
    assert code == 2 and "`max_iter`" in err
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("argv", [
    [],
    ["frobnicate"],
    ["solve"],
    ["solve", "x.py", "--intervals", "ten"],
    ["solve", "x.py", "--no-such-flag"],
    ["plot"],
    ["sweep"],
    ["solve", "x.py", "--quiet", "--verbose"],
    ["plot", "x.csv", "--violations", "--refinement"],
])
def test_usage_errors_exit_2(argv, capsys):
    assert cli.main(argv) == 2
    assert capsys.readouterr().err


@pytest.mark.parametrize("flag, item", [("--set", "distance"), ("--ipopt", "max_iter"), ("--set", "1x=2"), ("--ipopt", "=3")])
def test_assignment_without_name_or_value_exits_2(script, capsys, flag, item):
    code, _, err = run(capsys, "solve", script, flag, item)
    assert code == 2
    assert "NAME=VALUE" in err


def test_guess_file_that_does_not_exist_exits_2(tmp_path, script, capsys):
    code, _, err = run(capsys, "solve", script, "--guess", tmp_path / "prev.csv", "--out", tmp_path)
    assert code == 2
    assert "prev.csv" in err


def test_guess_from_previous_solution(tmp_path, script, capsys):
    assert run(capsys, "solve", script, "--out", tmp_path / "a")[0] == 0
    code, _, err = run(capsys, "solve", script, "--guess", tmp_path / "a" / "di.csv", "--out", tmp_path / "b")
    assert code == 0, err
    assert cl.Trajectory.read(tmp_path / "b" / "di.csv").metadata["objective"] == pytest.approx(12.0, rel=1e-6)


def test_help_exits_0(capsys):
    assert cli.main(["solve", "--help"]) == 0
    assert "--set" in capsys.readouterr().out


@pytest.mark.parametrize("text, value", [
    ("2", 2), ("2.5", 2.5), ("-1e3", -1000.0), ("True", True), ("'abc'", "abc"), ("abc", "abc"),
    ("(1, 2)", (1, 2)), ("[0.5, 1]", [0.5, 1]), ("inf", math.inf), ("hermite-simpson", "hermite-simpson"),
])
def test_values_are_python_literals_else_strings(text, value):
    assert parse_assignments([f"k={text}"], "--set") == {"k": value}


def test_solve_prints_one_progress_line_per_iteration(tmp_path, capsys):
    path = write(tmp_path, "pend.py", PENDULUM)
    code, out, err = run(capsys, "solve", path, "--out", tmp_path)
    assert code == 0, err
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["iter", "objective"])
    rows = [line.split() for line in lines[header + 1:] if line.split() and line.split()[0].isdigit()]
    assert len(rows) > 2 and [int(r[0]) for r in rows] == list(range(len(rows)))


def test_quiet_solve_prints_no_progress(tmp_path, script, capsys):
    code, out, err = run(capsys, "solve", script, "--quiet", "--out", tmp_path)
    assert code == 0, err
    assert not any(line.split()[:2] == ["iter", "objective"] for line in out.splitlines())
    assert "objective" in out  # the summary stays


def test_verbose_solve_prints_ipopts_log(tmp_path, script, capfd):
    assert cli.main(["solve", str(script), "--verbose", "--out", str(tmp_path)]) == 0
    out = capfd.readouterr().out  # IPOPT writes from C, past sys.stdout
    assert "This is Ipopt" in out and "EXIT: Optimal Solution Found." in out
    assert "violation" not in out.split("This is Ipopt")[0]  # no colloc progress lines besides IPOPT's


def test_solve_records_parameters_and_violations(tmp_path, script, capsys):
    assert run(capsys, "solve", script, "--set", "distance=2", "--out", tmp_path)[0] == 0
    meta = cl.Trajectory.read(tmp_path / "di_distance=2.csv").metadata
    assert meta["params"] == {"distance": 2}
    assert set(meta["violations"]) == {"defect.hermite:mass.x", "defect.hermite:mass.v", "defect.simpson:mass.x", "defect.simpson:mass.v"}
    assert max(meta["violations"].values()) < 1e-8


# -- animation ----------------------------------------------------------------------------------
PENDULUM_CARTESIAN = Path(__file__).resolve().parents[1] / "problems" / "pendulum_cartesian.py"


def test_solve_animate_writes_a_gif(tmp_path, capsys):
    from PIL import Image

    code, out, err = run(capsys, "solve", PENDULUM_CARTESIAN, "--intervals", 10, "--animate", "--quiet", "--out", tmp_path)
    assert code == 0, err
    gif = tmp_path / "pendulum_cartesian.gif"
    assert f"wrote {gif}" in out
    with Image.open(gif) as im:
        assert im.format == "GIF" and im.n_frames > 1


def test_animate_without_points_exits_2_before_solving(tmp_path, script, capsys):
    code, out, err = run(capsys, "solve", script, "--animate", "--out", tmp_path / "out")
    assert code == 2
    assert "body.point" in err
    assert not (tmp_path / "out").exists() and "objective" not in out


# -- info ---------------------------------------------------------------------------------------
def test_info_prints_variables_and_sizes(script, capsys):
    code, out, err = run(capsys, "info", script)
    assert code == 0, err
    for name in ("mass.x", "mass.v", "mass.u"):
        assert name in out
    # Hermite–Simpson, 10 intervals: 21 grid points × (2 states + 1 control) = 63 variables;
    # 2 defects (Hermite, Simpson) × 2 states × 10 intervals = 40 constraints.
    assert "63 variables" in out and "40 constraints" in out


def test_info_with_flags_and_constraints(tmp_path, capsys):
    text = DOUBLE_INTEGRATOR.replace("    return prob", "    prob.path(v, upper=2.0, name='speed')\n    return prob")
    path = write(tmp_path, "dip.py", text)
    code, out, err = run(capsys, "info", path, "--intervals", 4, "--scheme", "trapezoidal")
    assert code == 0, err
    # trapezoidal, 4 intervals: 5 points × 3 = 15 variables; 4 × 2 defects + 5 path rows = 13 constraints
    assert "15 variables" in out and "13 constraints" in out
    assert "speed" in out


def test_info_lists_residual_labels(tmp_path, capsys):
    text = DOUBLE_INTEGRATOR.replace("c.derivative(v, u)", "c.residual(v, c.dot(v) - u)")
    code, out, err = run(capsys, "info", write(tmp_path, "imp.py", text))
    assert code == 0, err
    assert "residual:mass.v" in out


def test_info_explains_every_block_and_the_projection_cost_term(capsys):
    root = Path(__file__).resolve().parents[1]
    code, out, err = run(capsys, "info", root / "problems" / "pendulum_cartesian.py", "--intervals", 4)
    assert code == 0, err
    blocks = re.search(r"variables by block: (.*)", out).group(1)
    names = [item.split()[0] for item in blocks.split(", ")]
    assert names == ["x", "z", "u", "lam", "xp", "mu"]
    legend = {line.split()[0]: line for line in out.splitlines() if line.startswith("    ") and line.split()[0] in names}
    assert set(legend) == set(names)  # one line per block
    assert "derivative variables ẋ" in legend["z"] and "projection states x'" in legend["xp"] and "slacks μ" in legend["mu"]
    assert re.search(r"cost term added by the transcription: projection: 1e-6 Σ ‖x' − x‖²", out)


def test_info_refuses_unknown_set_name(script, capsys):
    code, _, err = run(capsys, "info", script, "--set", "distanse=3")
    assert code == 2
    assert "Did you mean `distance`?" in err


# -- plot ---------------------------------------------------------------------------------------
def test_plot_overlays_two_csv_files(tmp_path, script, capsys):
    assert run(capsys, "solve", script, "--out", tmp_path / "a")[0] == 0
    assert run(capsys, "solve", script, "--set", "distance=2", "--out", tmp_path / "b")[0] == 0
    png = tmp_path / "both.png"
    code, out, err = run(capsys, "plot", tmp_path / "a" / "di.csv", tmp_path / "b" / "di_distance=2.csv", "--out", png)
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_default_output_beside_the_file(tmp_path, script, capsys):
    assert run(capsys, "solve", script, "--out", tmp_path)[0] == 0
    code, _, err = run(capsys, "plot", tmp_path / "di.csv")
    assert code == 0, err
    assert (tmp_path / "di.png").is_file()


def test_plot_missing_file_exits_2(tmp_path, capsys):
    code, _, err = run(capsys, "plot", tmp_path / "gone.csv")
    assert code == 2
    assert "gone.csv" in err


def test_plot_violations_of_two_files(tmp_path, script, capsys):
    assert run(capsys, "solve", script, "--out", tmp_path / "a")[0] == 0
    assert run(capsys, "solve", script, "--intervals", 3, "--out", tmp_path / "b")[0] == 0
    code, out, err = run(capsys, "plot", tmp_path / "a" / "di.csv", tmp_path / "b" / "di.csv", "--violations")
    assert code == 0, err
    png = tmp_path / "a" / "violations.png"
    assert f"wrote {png}" in out and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, out, err = run(capsys, "plot", tmp_path / "a" / "di.csv", "--violations", "--by-kind")
    assert code == 0, err
    assert (tmp_path / "a" / "di_violations.png").is_file()


def test_plot_violations_of_a_file_without_them_exits_2(tmp_path, capsys):
    import numpy as np

    path = cl.Trajectory(np.linspace(0, 1, 3), {"a.x": np.zeros(3)}).write(tmp_path / "bare.csv")
    code, _, err = run(capsys, "plot", path, "--violations")
    assert code == 2
    assert "bare.csv" in err and "records no constraint violations" in err
    code, _, err = run(capsys, "plot", path, "--by-kind")
    assert code == 2 and "--by-kind goes with --violations" in err


def test_plot_refinement_from_file_metadata(tmp_path, capsys):
    import numpy as np

    records = [dict(iteration=i, intervals=n, grid_points=2 * n + 1, max_error=e, iterations=5, seconds=0.1)
               for i, (n, e) in enumerate([(10, 1e-3), (25, 1e-6), (30, 1e-9)])]
    traj = cl.Trajectory(np.linspace(0, 1, 3), {"a.x": np.zeros(3)}, metadata={"refinement": records})
    path = traj.write(tmp_path / "refined.csv")
    code, out, err = run(capsys, "plot", path, "--refinement")
    assert code == 0, err
    assert (tmp_path / "refined_refinement.png").is_file()
    plain = cl.Trajectory(np.linspace(0, 1, 3), {"a.x": np.zeros(3)}).write(tmp_path / "plain.csv")
    code, _, err = run(capsys, "plot", plain, "--refinement")
    assert code == 2 and "plain.csv" in err and "refinement" in err


def test_file_labels_disambiguate_equal_stems():
    assert cli._file_labels(["a/x.csv", "b/y.csv"]) == ["x", "y"]
    assert cli._file_labels(["a/x.csv", "b/x.csv"]) == ["a/x", "b/x"]


# -- python -m colloc -----------------------------------------------------------------------------
def test_python_dash_m_runs_the_cli(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "colloc", "solve", str(tmp_path / "missing.py")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "missing.py" in proc.stderr and "Traceback" not in proc.stderr


def test_readme_cartpole_command_reaches_the_continuous_optimum(tmp_path, capsys):
    """`colloc solve problems/cartpole.py --intervals 100 --plot` (README); C1, docs/problems.md:
    continuous optimum 58.807667 [COMPUTED], asserted to 1e-3 relative as the issue asks."""
    from pathlib import Path

    import colloc as cl
    from colloc.cli import commands as cli

    script = Path(__file__).resolve().parents[1] / "problems" / "cartpole.py"
    code = cli.main(["solve", str(script), "--intervals", "100", "--plot", "--out", str(tmp_path)])
    assert code == 0
    traj = cl.Trajectory.read(tmp_path / "cartpole.csv")
    assert traj.metadata["objective"] == pytest.approx(58.807667, rel=1e-3)
    assert traj.metadata["intervals"] == 100
    assert (tmp_path / "cartpole.png").stat().st_size > 0
    assert "58.80" in capsys.readouterr().out


CARTPOLE = Path(__file__).resolve().parents[1] / "problems" / "cartpole.py"


def test_verify_reports_final_errors_that_shrink_with_the_mesh(tmp_path, capsys):
    """Issue check: `colloc verify` on cart-pole solutions at 25, 50, 100 Hermite–Simpson intervals."""
    from colloc.cli import commands as cli

    finals = []
    for n in (25, 50, 100):
        out = tmp_path / f"r{n}"
        assert cli.main(["solve", str(CARTPOLE), "--intervals", str(n), "--quiet", "--out", str(out)]) == 0
        capsys.readouterr()
        assert cli.main(["verify", str(out / "cartpole.csv"), str(CARTPOLE), "--plot", str(out / "verify.png")]) == 0
        text = capsys.readouterr().out
        finals.append(float(next(line for line in text.splitlines() if "final state error" in line).split()[3]))
        assert (out / "verify.png").exists()
    assert finals[0] > finals[1] > finals[2], finals
    assert finals[2] < 1e-3


def test_checkpoint_every_writes_the_iterate(tmp_path, capsys):
    from colloc.cli import commands as cli

    code = cli.main(["solve", str(CARTPOLE), "--intervals", "20", "--quiet", "--checkpoint-every", "2",
                     "--ipopt", "max_iter=3", "--out", str(tmp_path)])
    assert code == 1  # not converged in 3 iterations, files still written
    import colloc as cl

    assert cl.Trajectory.read(tmp_path / "cartpole.csv").metadata["status"] == "max-iterations"


def test_sigint_to_a_colloc_solve_subprocess_writes_the_last_iterate(tmp_path):
    """Issue check: send SIGINT to `colloc solve` during the solve; the file is written, flagged interrupted."""
    import signal
    import subprocess
    import sys
    import time

    import colloc as cl

    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "colloc", "solve", str(CARTPOLE), "--intervals", "1500", "--quiet",
                             "--checkpoint-every", "1", "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    target = out / "cartpole.csv"
    deadline = time.time() + 120
    while not target.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert target.exists(), "the solve never wrote a checkpoint"
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    traj = cl.Trajectory.read(target)
    if traj.metadata["status"] == "solved":  # the solve finished before the signal arrived: nothing to test
        pytest.skip("the solve converged before SIGINT arrived")
    assert proc.returncode == 130, stderr.decode()  # the exit-code contract: interrupted (the iterate is written)
    assert traj.metadata["status"] == "interrupted"
    assert traj.time.size == 3001 and np.isfinite(traj["cartpole.x"]).all()
    assert b"interrupted" in stdout


def test_verify_rebuilds_with_the_parameters_the_file_records(tmp_path, script, capsys):
    out = tmp_path / "d2"
    assert cli.main(["solve", str(script), "--set", "distance=2.0", "--quiet", "--out", str(out)]) == 0
    capsys.readouterr()
    assert cli.main(["verify", str(out / "di_distance=2.0.csv"), str(script)]) == 0
    text = capsys.readouterr().out
    assert "distance=2.0" in text
    final = float(next(line for line in text.splitlines() if "final state error" in line).split()[3])
    assert final < 1e-6, text  # the double integrator's HS solution is exact (u is linear in t)
    # an explicit --set wins (and the recorded values are not announced): the file then misses
    # the final condition of the distance=1 problem, so verification fails and says where
    assert cli.main(["verify", str(out / "di_distance=2.0.csv"), str(script), "--set", "distance=1.0"]) == 1
    text = capsys.readouterr().out
    assert "build parameters from the file" not in text
    assert "verification failed: final: `mass.x` is 2" in text


def test_verify_checks_a_multi_phase_file_phase_by_phase(tmp_path, capsys):
    """(Was refused; multi-phase files are now simulated phase by phase, the jump maps applied between.)"""
    rocket = CARTPOLE.parent / "two_phase_rocket.py"
    out = tmp_path / "r"
    assert cli.main(["solve", str(rocket), "--quiet", "--out", str(out)]) in (0, 1)
    capsys.readouterr()
    code, text, err = run(capsys, "verify", out / "two_phase_rocket.csv", rocket)
    assert code == 0 and "phase burn:" in text and "phase coast:" in text and "jump burn>coast" in text, err
    assert "Traceback" not in err


def test_verify_re_simulates_a_multi_phase_file_event_by_event(tmp_path, capsys):
    """The walker's heel strike is found again by root-finding on its guard, at the file's time (Garcia et al. 1998)."""
    walker = CARTPOLE.parent / "simplest_walker.py"
    out = tmp_path / "w"
    assert cli.main(["solve", str(walker), "--quiet", "--out", str(out)]) == 0
    capsys.readouterr()
    code, text, err = run(capsys, "verify", out / "simplest_walker.csv", walker)
    assert code == 0 and "event-driven re-simulation" in text and "verified" in text, text + err
    row = next(line for line in text.splitlines() if line.split()[:2] == ["step", "heel_strike"]).split()
    found, recorded, dt = float(row[2]), float(row[3]), float(row[4])
    assert abs(found - recorded) < 1e-6 and dt < 1e-6, row


@pytest.mark.parametrize("text, words", [
    ("time,mass.x,mass.v\n0,0,0\n0.5,0.5\n1,1,0\n", ["Line 3", "2 values", "3 columns"]),
    ("time,mass.x,mass.v\n", ["no rows"]),
    ("time,mass.x,mass.v\n0,0,0\n1,nan,0\n", ["`mass.x`", "NaN"]),
    ("time,mass.x,mass.v\n1,0,0\n0,1,0\n", ["decrease"]),
])
def test_malformed_guess_files_get_one_sentence(tmp_path, script, capsys, text, words):
    bad = tmp_path / "bad.csv"
    bad.write_text(text)
    code, _, err = run(capsys, "solve", script, "--guess", bad, "--out", tmp_path / "o")
    assert code == 2 and "Traceback" not in err, err
    for w in words:
        assert w in err, err


def test_a_guess_missing_columns_is_used_with_a_warning(tmp_path, script, capsys):
    partial = tmp_path / "partial.csv"
    partial.write_text("time,mass.x\n0,0\n1,1\n")
    with pytest.warns(UserWarning, match="`mass.v`"):
        code, _, _ = run(capsys, "solve", script, "--guess", partial, "--out", tmp_path / "o")
    assert code == 0


@pytest.mark.parametrize("value, got", [("heavy", "the text `heavy`"), ("[1,2]", "`[1, 2]` (list)"), ("True", "`True` (bool)")])
def test_set_value_of_wrong_type_names_parameter_and_type(script, capsys, value, got):
    code, out, err = run(capsys, "solve", script, "--set", f"distance={value}")
    assert code == 2
    assert re.search(r"--set `distance` expects a number \(its default is 1\.0\) but got ", err), err
    assert got in err and "Traceback" not in err + out and "SX" not in err


def test_set_value_checked_against_annotation_and_bool_default(tmp_path, capsys):
    path = write(tmp_path, "typed.py", DOUBLE_INTEGRATOR.replace("def build(distance=1.0):", "def build(distance: float, free: bool = False):"))
    code, _, err = run(capsys, "solve", path, "--set", "distance=far")
    assert code == 2 and "--set `distance` expects a number (it is annotated so) but got the text `far`." in err
    code, _, err = run(capsys, "solve", path, "--set", "distance=1", "--set", "free=1")
    assert code == 2 and "--set `free` expects True or False (its default is False) but got `1` (int)." in err


# -- file names ---------------------------------------------------------------------------------
def test_a_solve_with_other_set_values_writes_its_own_file(tmp_path, script, capsys):
    assert run(capsys, "solve", script, "--out", tmp_path)[0] == 0
    assert run(capsys, "solve", script, "--set", "distance=2", "--out", tmp_path)[0] == 0
    assert cl.Trajectory.read(tmp_path / "di.csv").metadata["objective"] == pytest.approx(12.0, rel=1e-6)  # not replaced
    assert cl.Trajectory.read(tmp_path / "di_distance=2.csv").metadata["objective"] == pytest.approx(48.0, rel=1e-6)


def test_result_names_list_the_set_values_in_name_order():
    from colloc.batch.outputs import MAX_STEM, result_name

    assert result_name("swingup", {}) == "swingup"
    assert result_name("swingup", {"mode": "time", "duration": 1.5}) == "swingup_duration=1.5_mode=time"
    assert result_name("s", {"b": 1, "a": True}) == result_name("s", {"a": True, "b": 1}) == "s_a=True_b=1"
    # characters a file name should not hold are replaced, and a hash keeps "a b" and "a/b" apart
    one, two = result_name("s", {"k": "a b"}), result_name("s", {"k": "a/b"})
    assert one != two and re.fullmatch(r"s_k=a-b-[0-9a-f]{8}", one)
    long = result_name("s", {"k": "x" * 300})
    assert len(long) == MAX_STEM and long != result_name("s", {"k": "x" * 299})


def test_the_readme_shows_the_verdicts_colloc_verify_prints(tmp_path, capsys):
    """docs/verification.md's `verify` listing (the tutorial's swing-up) has the checks and verdicts the command prints."""
    docs = Path(__file__).resolve().parents[1] / "docs"
    tutorial = (docs / "tutorial.md").read_text()
    start = tutorial.index('"""Pendulum swing-up')
    script = write(tmp_path, "swingup.py", tutorial[start:tutorial.index("```", start)])
    assert cli.main(["solve", str(script), "--quiet", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    assert cli.main(["verify", str(tmp_path / "swingup.csv"), str(script)]) == 0
    printed = capsys.readouterr().out.splitlines()
    readme = (docs / "verification.md").read_text()
    block = readme[readme.index("checks (constraints:"):]
    shown = [line.strip() for line in block[:block.index("```")].splitlines() if line.strip()]
    verdicts = lambda lines: [line.split()[:2] for line in lines if line.split()[:1] in (["pass"], ["FAIL"])]  # noqa: E731
    # the checks between grid points (colloc.limits) are newer than the README's listing: compared once it shows them
    printed_here = [line for line in printed if not line.split()[1:2] or not line.split()[1].startswith("between:") or
                    any("between:" in line for line in shown)]
    assert verdicts(shown) == verdicts(printed_here) and len(verdicts(shown)) == 13
    assert shown[0].split(":")[0] == printed[0].split(":")[0] and shown[-1] == printed[-1] == "verified: every check passed."


def test_colloc_plot_of_a_solved_file_draws_the_bounds_it_records(tmp_path, capsys, monkeypatch):
    root = Path(__file__).resolve().parents[1]
    assert run(capsys, "solve", root / "problems" / "double_integrator_time.py", "--intervals", 10, "--quiet", "--out", tmp_path)[0] == 0
    traj = cl.Trajectory.read(tmp_path / "double_integrator_time.csv")
    assert traj.metadata["bounds"]["mass.u"] == [-1.0, 1.0]
    figures = []
    monkeypatch.setattr(cli, "save_figure", lambda fig, path, close=False: figures.append(fig) or str(path))
    assert run(capsys, "plot", tmp_path / "double_integrator_time.csv")[0] == 0
    ax = next(a for a in figures[0].axes if a.get_title() == "mass.u")
    assert sorted(line.get_ydata()[0] for line in ax.lines if line.get_linestyle() == "--") == [-1.0, 1.0]
