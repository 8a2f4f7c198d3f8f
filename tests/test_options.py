"""Every public option of a solve walked through every pipeline (tests/test_structure.py relies on it).

For each pair, the option's value either arrives where it is used — a spy at that consumer sees it and stops the
run — or the pipeline refuses it with a :class:`colloc.OptionError` naming it, before anything is built.  The walk
covers every field of :class:`~colloc.pipeline.options.SolveOptions`, so an option added there and not routed
fails here.
"""
from __future__ import annotations

import dataclasses
import re
import sys
import types

import numpy as np
import pytest

import colloc as cl
from colloc.pipeline.options import SolveOptions
from problems import bouncing_ball, pushed_block
from test_pipeline import double_integrator  # a Lagrangian model: midpoint-vi takes it too


class Reached(BaseException):
    """A spy saw the walked option's value at its consumer (a BaseException: no pipeline catches it)."""


def _progress(*args):
    raise Reached  # a progress callable is its own consumer's witness: being called is arriving


GUESS = object()  # never read: the spy at `warm_start` stops the run first
MESH = [0.0, 0.25, 1.0]

#: option -> (keywords given, name a refusal must say, consumer, what the consumer must see)
WALK = {
    "scheme": (dict(scheme="trapezoidal"), "scheme", "transcription", lambda d: _schemes(d["tr"]) == {"trapezoidal"}),
    "intervals": (dict(intervals=3), "intervals", "transcription", lambda d: {len(m) - 1 for m in _meshes(d["tr"])} == {3}),
    "mesh": (dict(mesh=MESH), "mesh", "transcription", lambda d: all(np.allclose(m, MESH) for m in _meshes(d["tr"]))),
    "guess": (dict(guess=GUESS), "guess", "warm_start", lambda d: d["guess"] is GUESS),
    "backend": (dict(backend="fatrop"), "backend", "solver_run", lambda d: d["backend"] == "fatrop"),
    "ipopt": (dict(ipopt={"max_iter": 7}), "ipopt", "solver_options", lambda d: d["backend"] == "ipopt" and d["given"] == {"max_iter": 7}),
    "fatrop": (dict(backend="fatrop", fatrop={"max_iter": 7}), "fatrop", "solver_options",
               lambda d: d["backend"] == "fatrop" and d["given"] == {"max_iter": 7}),
    "verbose": (dict(verbose=True), "verbose", "solver_options", lambda d: d["verbose"] is True),
    "expand": (dict(expand=True), "expand", "solver_run", lambda d: d["expand"] is True),
    "progress": (dict(progress=_progress), "progress", "solver_run", lambda d: d["progress"] is _progress),
    "checkpoint": (dict(checkpoint=("walk.csv", 3)), "checkpoint", "solver_run", lambda d: d["checkpoint"] == ("walk.csv", 3)),
    "accuracy": (dict(accuracy=1e-3), "accuracy", "accuracy", lambda d: d["accuracy"] == 1e-3),
    "refine": (dict(refine={"objective_tolerance": 3e-3, "max_iterations": 1}), "refine", "settled", lambda d: d["objective_tolerance"] == 3e-3),
    "starts": (dict(starts=3), "starts", "starts", lambda d: d["starts"] == 3),
    "seed": (dict(seed=5), "seed", "starts", lambda d: d["seed"] == 5),
    "scheduler": (dict(scheduler="tcp://127.0.0.1:1"), "scheduler", None, None),
    "workers": (dict(workers=1), "workers", None, None),
    "relaxation": (dict(relaxation=0.05), "relaxation", "schedule", lambda d: d["eps"][0] == 0.05),
    "complementarity_tolerance": (dict(complementarity_tolerance=1e-7), "complementarity_tolerance", "schedule", lambda d: d["eps"][1] == 1e-7),
    "relaxation_factor": (dict(relaxation_factor=0.2), "relaxation_factor", "schedule", lambda d: d["eps"][2] == 0.2),
    "transcription": (dict(mode="implicit"), "mode", "transcription", lambda d: {getattr(o, "mode", None) for o in _options(d["tr"])} == {"implicit"}),
}


def _settings(tr):
    """``(scheme name, mesh, options)`` of every phase of a transcription (one for a single phase)."""
    if hasattr(tr, "phase_settings"):
        return [(s.name, m, o) for s, m, o in tr.phase_settings()]
    scheme = getattr(tr, "scheme", None)
    return [(scheme.name if scheme is not None else "midpoint-vi", tr.mesh, getattr(tr, "options", None))]


def _schemes(tr):
    return {s for s, _, _ in _settings(tr)}


def _meshes(tr):
    return [m for _, m, _ in _settings(tr)]


def _options(tr):
    return [o for _, _, o in _settings(tr)]


def _spy(monkeypatch, seen):
    """Wrap every consumer of an option so that it calls ``seen(consumer, **what_it_received)`` first."""
    from colloc.pipeline import contact_implicit, driver, multistart, refine
    from colloc.solvers.fatrop import FatropBackend
    from colloc.solvers.ipopt import IpoptBackend

    def wrap(owner, name, consumer, record, static=False):
        real = getattr(owner, name)

        def spy(*args, **kwargs):
            seen(consumer, **record(*args, **kwargs))
            return real(*args, **kwargs)
        monkeypatch.setattr(owner, name, staticmethod(spy) if static else spy)

    real_transcription = driver.transcription

    def transcription(problem, options=None, **keywords):
        tr = real_transcription(problem, options, **keywords)
        seen("transcription", tr=tr)
        wrap(tr, "warm_start", "warm_start", lambda guess: dict(guess=guess))
        return tr

    monkeypatch.setattr(driver, "transcription", transcription)
    for backend in (IpoptBackend, FatropBackend):
        wrap(backend, "options", "solver_options", lambda given, verbose, b=backend.name: dict(backend=b, given=given, verbose=verbose), True)
        wrap(backend, "run", "solver_run", lambda nlp, opts, expand, progress, checkpoint, *rest, b=backend.name:
             dict(backend=b, expand=expand, progress=progress, checkpoint=checkpoint), True)
    wrap(driver, "check_tolerance", "accuracy", lambda accuracy: dict(accuracy=accuracy))
    wrap(refine, "_settled", "settled", lambda result, change, objective_tolerance: dict(objective_tolerance=objective_tolerance))
    wrap(multistart, "perturbed_guesses", "starts", lambda problem, starts, seed=0, *rest, **kw: dict(starts=starts, seed=seed))
    wrap(contact_implicit, "schedule", "schedule", lambda *eps: dict(eps=eps))


SCRIPT = '''import sys

SOLVE = sys.modules["colloc_option_walk"].SOLVE
build = sys.modules["colloc_option_walk"].build
'''


def _solve(problem, base):
    def go(keywords, tmp_path, monkeypatch, capsys):
        try:
            cl.solve(problem(), **{**base, **keywords})
        except cl.OptionError as e:
            return str(e)
        return None
    return go


def _script(tmp_path, monkeypatch, keywords):
    monkeypatch.setitem(sys.modules, "colloc_option_walk", types.SimpleNamespace(SOLVE=dict(keywords), build=double_integrator))
    path = tmp_path / "walk.py"
    path.write_text(SCRIPT)
    return str(path)


def _cli(keywords, tmp_path, monkeypatch, capsys):
    from colloc.cli import main

    code = main(["solve", _script(tmp_path, monkeypatch, keywords), "--out", str(tmp_path / "out"), "--quiet"])
    return capsys.readouterr().err if code == 2 else None


def _sweep_point(keywords, tmp_path, monkeypatch, capsys):
    from colloc.batch.sweep import solve_point

    row = solve_point(_script(tmp_path, monkeypatch, {}), {}, 0, None, dict(keywords))
    return row["message"] if row["status"] == "error" else None


PIPELINES = {
    "collocation": _solve(double_integrator, {}),
    "midpoint-vi": _solve(double_integrator, dict(scheme="midpoint-vi")),
    "multi-phase": _solve(lambda: bouncing_ball.build(bounces=1), {}),
    "contact": _solve(pushed_block.build, dict(contact="implicit", impacts=False)),
    "refine": _solve(double_integrator, dict(refine={"max_iterations": 1})),
    "multi-start": _solve(double_integrator, dict(starts=2)),
    "sweep": _sweep_point,
    "cli": _cli,
}


def test_the_walk_covers_every_option():
    assert set(WALK) == {f.name for f in dataclasses.fields(SolveOptions)}


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("option", WALK)
def test_every_option_reaches_its_consumer_or_is_refused_by_name(option, pipeline, monkeypatch, tmp_path, capsys):
    keywords, name, consumer, arrived = WALK[option]

    def seen(point, **what):
        if point == consumer and arrived(what):
            raise Reached

    _spy(monkeypatch, seen)
    monkeypatch.chdir(tmp_path)
    try:
        refusal = PIPELINES[pipeline](keywords, tmp_path, monkeypatch, capsys)
    except Reached:
        return
    assert refusal is not None, f"`{option}` given to the {pipeline} pipeline was neither used nor refused"
    assert re.search(rf"\b{name}\b", refusal), f"`{option}` refused by the {pipeline} pipeline without its name: {refusal}"


@pytest.mark.parametrize("keywords, match", [
    (dict(starts=2, progress=True), r"With `starts`, `progress` is a callable receiving \(start, result\)"),
    (dict(seed=3), r"`seed` \(3\) seeds the perturbed guesses of `starts`"),
    (dict(contact="implicit", starts=2), "`starts` does not combine with contact='implicit'"),
    (dict(contact="implicit", accuracy=1e-3), "`accuracy` does not apply to contact='implicit'"),
    (dict(relaxation_factor=0.5), "`relaxation_factor` is an option of the contact homotopy"),
    (dict(backend="fatrop", ipopt={"tol": 1e-9}), r"`ipopt=` options do not apply to backend='fatrop'"),
    (dict(refine={"tolerence": 1e-6}), "Unknown refinement option `tolerence`. Did you mean `tolerance`?"),
])
def test_options_no_pipeline_can_honour_are_refused_when_made(keywords, match):
    with pytest.raises(cl.OptionError, match=match):
        SolveOptions.of(**keywords)


def test_refinement_starts_from_the_intervals_every_solve_starts_from(monkeypatch):
    from colloc.discretization.mesh import DEFAULT_INTERVALS
    from colloc.pipeline import refine

    seen = []

    def run(problem, options=None, **keywords):
        seen.append(options.mesh)
        raise Reached

    monkeypatch.setattr(refine, "run", run)
    with pytest.raises(Reached):
        refine.solve_adaptive(double_integrator())
    assert np.asarray(seen[0]).size - 1 == DEFAULT_INTERVALS == 50
