"""Point functions compiled to C (colloc.transcription.compilation): the same numbers as CasADi's SX virtual machine, a disk
cache that spares the second build its compiler, and a fallback with a message when there is no compiler."""
import importlib
import os
import subprocess
import sys

import casadi as ca
import numpy as np
import pytest

import colloc as cl
from colloc.transcription import compilation
from colloc.transcription.derivatives import structured

if compilation.compiler() is None:
    pytest.skip("no C compiler on this machine", allow_module_level=True)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """A fresh cache folder per test, a count of the compiler runs, and warnings shown anew."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("COLLOC_CACHE_DIR", str(folder))
    monkeypatch.setattr(compilation, "_warned", set())
    runs = []
    start = compilation.run_compiler

    def counted(command):
        runs.append(command)
        return start(command)

    monkeypatch.setattr(compilation, "run_compiler", counted)
    return folder, runs


def _build(name, intervals=5, **options):
    return cl.build_nlp(importlib.import_module(f"problems.{name}").build(), intervals=intervals, **options)


def _values(d, w, lam, sigma):
    g, jac = d["jac_g"](w, [])
    f, grad = d["grad_f"](w, [])
    hess = d["hess_lag"](w, [], sigma, lam)
    return [np.asarray(ca.densify(m)) for m in (g, jac, f, grad, hess)]


@pytest.mark.parametrize("name", ["cartpole", "pendulum_cartesian", "double_integrator_time"])
def test_compiled_derivatives_equal_the_virtual_machines(name, cache):
    """g, ∂g/∂w, f, ∇f and the Lagrangian Hessian are the SX virtual machine's to 1e-12, at random points, with
    several mapped calls (the Cartesian pendulum's projection) and a free final time (the outer functions)."""
    _, runs = cache
    plain = structured(nlp := _build(name, compile=False), nlp.mapped)
    assert not runs
    built = structured(nlp2 := _build(name, compile=True), nlp2.mapped)
    assert runs, "nothing was compiled"
    rng = np.random.default_rng(11)
    guess = nlp.layout.vector("guess")
    for _ in range(2):
        w = guess + rng.normal(scale=0.1, size=guess.size) * (1 + np.abs(guess))
        lam, sigma = rng.normal(size=nlp.g.numel()), rng.uniform(0.5, 2)
        for a, b in zip(_values(plain, w, lam, sigma), _values(built, w, lam, sigma)):
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12 * (1 + np.abs(a).max()))


def _solve_both(problem, **kw):
    a = cl.solve(problem, compile=False, **kw)
    b = cl.solve(problem, compile=True, **kw)
    assert a.success and b.success
    assert b.iterations == a.iterations
    assert abs(b.objective - a.objective) <= 1e-12 * abs(a.objective)
    for name in a.trajectory.names:
        np.testing.assert_allclose(b.trajectory[name], a.trajectory[name], rtol=1e-12, atol=1e-12, err_msg=name)


def test_cartpole_solve_unchanged_by_compiling(cache):
    _solve_both(importlib.import_module("problems.cartpole").build(), intervals=20)
    assert cache[1], "nothing was compiled"


@pytest.mark.slow
def test_urdf_robot_solve_unchanged_by_compiling(cache):
    """UR5 minimum time (URDF dynamics, free final time): same objective and iterations, compiled or not."""
    pytest.importorskip("urdf_parser_py")
    spec = importlib.util.spec_from_file_location("ur5", os.path.join(ROOT, "problems", "ur5_min_time.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _solve_both(module.build(), scheme="hermite-simpson", intervals=10)


def test_second_build_loads_the_cached_libraries(cache):
    folder, runs = cache
    nlp = _build("cartpole", compile=True)
    structured(nlp, nlp.mapped)
    libraries = sorted(folder.glob("*.so"))
    assert len(runs) == len(libraries) == 4  # the point function, its Jacobian, Hessian and gradient
    stamps = [p.stat().st_mtime_ns for p in libraries]
    runs.clear()
    nlp = _build("cartpole", compile=True)
    structured(nlp, nlp.mapped)
    assert runs == []
    assert sorted(folder.glob("*.so")) == libraries and [p.stat().st_mtime_ns for p in libraries] == stamps
    assert not [p for p in folder.iterdir() if p.suffix != ".so"]  # no temporary files left


def test_missing_compiler_warns_once_and_falls_back(cache, monkeypatch):
    monkeypatch.setenv("COLLOC_CC", "/nonexistent/bin/cc")
    problem = importlib.import_module("problems.cartpole").build()
    with pytest.warns(UserWarning, match=r"No C compiler found \(looked for `/nonexistent/bin/cc`\).*SX virtual machine"):
        a = cl.solve(problem, intervals=10, compile=True)
    assert a.success and cache[1] == []
    b = cl.solve(problem, intervals=10, compile=False)
    assert a.objective == b.objective and a.iterations == b.iterations


def test_failing_compiler_warns_and_falls_back(cache, monkeypatch):
    monkeypatch.setenv("COLLOC_CC", "false")  # found, but exits with an error
    nlp = _build("cartpole", compile=True)
    with pytest.warns(UserWarning, match=r"Compiling `point.*` failed .* SX virtual machine"):
        d = structured(nlp, nlp.mapped)
    assert cache[1] and not list(cache[0].glob("*.so"))
    w = nlp.layout.vector("guess")
    np.testing.assert_allclose(np.asarray(d["jac_g"](w, [])[0]).ravel(), np.asarray(ca.Function("g", [nlp.w], [nlp.g])(w)).ravel())


def test_unwritable_cache_warns_and_falls_back(cache, monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("COLLOC_CACHE_DIR", str(blocker / "cache"))
    nlp = _build("cartpole", compile=True)
    with pytest.warns(UserWarning, match=r"Cannot compile point functions in `.*cache`.*SX virtual machine"):
        d = structured(nlp, nlp.mapped)
    assert cache[1] == [] and d["jac_g"].n_in() == 2


def test_auto_compiles_only_what_pays(cache, monkeypatch):
    """The cart-pole's point functions (tens of instructions) are never worth a compiler; a 20,000-instruction
    point Hessian is at a few hundred points when the virtual machine is slow on it, and not when it is about
    as fast as compiled code would be (sines and exponentials cost the same either way)."""
    nlp = _build("cartpole", intervals=50)  # compile="auto" is the default
    structured(nlp, nlp.mapped)
    assert cache[1] == []
    v = ca.SX.sym("v", 8)
    e = v
    for _ in range(2500):  # ~20,000 instructions of arithmetic, like a robot's dynamics
        e = e * v[0] + v[1] * e[::-1] - v[2]
    f = ca.Function("point_hessian", [v], [e])
    n = f.n_instructions()
    assert n > 10_000
    monkeypatch.setattr(compilation, "seconds_per_point", lambda g: 5e-9 * g.n_instructions())
    assert compilation.pays(f, 300) and not compilation.pays(f, 2)
    monkeypatch.setattr(compilation, "seconds_per_point", lambda g: 1.5e-9 * g.n_instructions())
    assert not compilation.pays(f, 300)


@pytest.mark.parametrize("value", ["yes", 1, "always"])
def test_compile_setting_is_checked(value):
    with pytest.raises(cl.OptionError, match=r"`compile` must be True, False or 'auto'"):
        _build("cartpole", compile=value)


_RACE = """
import sys, casadi as ca
from colloc.transcription import compilation
x = ca.SX.sym("x", 3)
f = ca.Function("point_race", [x], [ca.sin(x) * x[0] + ca.exp(x[1])])
(g,) = compilation.compiled([f], True)
assert g.class_name() == "External", g.class_name()
print(float(g([0.1, 0.2, 0.3])[0]))
"""


def test_concurrent_processes_share_the_cache(cache):
    """Two processes compiling the same function into one folder both end with a working library, and one
    file holds it (each compiles under a temporary name and renames it into place)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    procs = [subprocess.Popen([sys.executable, "-c", _RACE], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(2)]
    outs = [p.communicate() for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    expected = float(np.sin(0.1) * 0.1 + np.exp(0.2))
    assert all(abs(float(o.strip()) - expected) < 1e-15 for o, _ in outs)
    assert [p.name.split("-")[0] for p in cache[0].iterdir()] == ["point_race"]
