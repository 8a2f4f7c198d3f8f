"""A file solved from Python records its build() keyword arguments, so that ``colloc verify`` re-builds the same problem.

The double integrator from rest at 0 to rest at ``distance`` (tests/di_script.py): a file of distance 2 verified
against the default build (distance 1) fails its final condition, so passing says the recorded value was used.
"""
from __future__ import annotations

import colloc as cl
from colloc import cli
from colloc.pipeline.script import import_script, load_problem

from di_script import di_script


def _script(tmp_path, own=False):
    path = tmp_path / "di.py"
    path.write_text(di_script(path="prob.build_params = dict(distance=distance)" if own else None))
    return path


def _verify(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_problem_built_through_the_loader_records_its_arguments(tmp_path, capsys):
    script = _script(tmp_path)
    _, problem = load_problem(script, {"distance": 2.0})
    result = cl.solve(problem, intervals=10)
    assert result.trajectory.metadata["params"] == {"distance": 2.0}
    path = tmp_path / "far.npz"
    result.trajectory.write(path)
    code, out, err = _verify(capsys, "verify", path, script)
    assert code == 0, out + err
    assert "build parameters from the file: distance=2.0" in out


def test_a_build_function_that_records_its_arguments_is_rebuilt_from_them(tmp_path, capsys):
    script = _script(tmp_path, own=True)
    module = import_script(script)
    result = cl.solve(module.build(distance=2.0), intervals=10)  # called directly, as a script's own helper would
    path = tmp_path / "far.csv"
    result.trajectory.write(path)
    assert cl.Trajectory.read(path).metadata["params"] == {"distance": 2.0}
    code, out, err = _verify(capsys, "verify", path, script)
    assert code == 0, out + err


def test_a_problem_built_without_the_loader_records_nothing(tmp_path):
    module = import_script(_script(tmp_path))
    result = cl.solve(module.build(distance=2.0), intervals=10)
    assert "params" not in result.trajectory.metadata  # nothing known: verify needs --set distance=2.0


def test_set_that_disagrees_with_the_file_is_said_in_one_sentence(tmp_path, capsys):
    script = _script(tmp_path)
    _, problem = load_problem(script, {"distance": 2.0})
    path = tmp_path / "far.npz"
    cl.solve(problem, intervals=10).trajectory.write(path)
    code, out, err = _verify(capsys, "verify", path, script, "--set", "distance=1.0")
    assert code == 1  # the distance-1 problem: the file misses its final condition
    assert f"note: `{path}` was solved with distance=2.0; verifying with --set distance=1.0 instead" in err
    code, out, err = _verify(capsys, "verify", path, script, "--set", "distance=2.0")
    assert code == 0 and "was solved with" not in err

