"""The documentation site builds with warnings as errors (broken links and anchors, docstrings that do not
parse as numpy style, a gallery script that fails to solve all stop the build)."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_documentation_site_builds_strictly(tmp_path):
    if shutil.which("mkdocs") is None and subprocess.run([sys.executable, "-m", "mkdocs", "--version"],
                                                          capture_output=True).returncode != 0:
        pytest.skip("mkdocs is not installed (extra `docs`)")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", MPLBACKEND="Agg")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "gallery" / "cartpole.png").stat().st_size > 10_000
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    assert "colloc.solve" in api and "Multibody" in api


PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
SLOW_PAGES = {"sweeps.md", "tutorial.md"}  # a Dask sweep; adaptive refinement and an animation
FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```", re.S | re.M)
SAVED_AS = re.compile(r"(?:saved as|this script,) `([\w.-]+\.py)`[^`]*$", re.S)


def blocks(page: Path, language: str):
    """The page's code blocks of ``language`` in order, each with the file name the text saves it as (or None)."""
    text = page.read_text()
    for match in FENCE.finditer(text):
        indent, lang, code = match.groups()
        if lang == language:
            before = text[max(0, match.start() - 400):match.start()]
            saved = SAVED_AS.search(before)
            yield "\n".join(line[len(indent):] for line in code.splitlines()), (saved.group(1) if saved else None)


@pytest.mark.parametrize("page", [pytest.param(p, id=p.name, marks=[pytest.mark.slow] if p.name in SLOW_PAGES else [])
                                  for p in PAGES if any(blocks(p, "python"))])
def test_every_python_block_of_a_page_runs(page, tmp_path, monkeypatch):
    """A page's Python blocks run in order in one namespace, in a fresh folder that holds `problems/` and `models/`; a
    block the text saves as a file (`saved as \\`x.py\\``) is written there too, as a reader would."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    (tmp_path / "problems").symlink_to(ROOT / "problems")
    (tmp_path / "models").symlink_to(ROOT / "models")  # the model files the pages read (docs/opensim.md)
    namespace = {"__name__": "__docs__"}
    for i, (code, saved) in enumerate(blocks(page, "python")):
        if saved:
            (tmp_path / saved).write_text(code + "\n")
        exec(compile(code, f"{page.name}, python block {i + 1}", "exec"), namespace)


def test_every_colloc_command_in_the_docs_parses():
    """Each `colloc ...` line of a shell block is a valid command line (parsed, not run: some start clusters)."""
    from colloc.cli.commands import _parser

    parser, checked = _parser(), 0
    for page in PAGES:
        for code, _ in blocks(page, "bash"):
            for line in code.splitlines():
                command = line.split("#", 1)[0].strip()
                if command.startswith("colloc "):
                    try:
                        parser.parse_args(shlex.split(command)[1:])
                    except SystemExit:
                        pytest.fail(f"{page.name}: `{command}` is not a valid colloc command")
                    checked += 1
    assert checked >= 8
