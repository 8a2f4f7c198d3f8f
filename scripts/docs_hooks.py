"""Build-time pages of the documentation site (an MkDocs hook, named in mkdocs.yml).

- ``index.md``: the README, with its ``docs/`` links made relative to the site.
- ``gallery.md``: every problem script of ``problems/`` — its docstring's first line, its reference answer
  and source — and, for the scripts in ``FIGURES``, a figure of the solution made now: the script is solved
  with its own ``SOLVE`` defaults and drawn by ``colloc.viz.plot.plot_trajectory``, so the figure is always
  what the code gives today.
"""
from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]

#: Scripts drawn in the gallery: quick to solve (well under a second each) and of different kinds.
FIGURES = ("double_integrator_energy", "bryson_denham", "cartpole", "hypersensitive", "catalyst_mixing",
           "goddard", "pendulum_cartesian", "elbow_reach")


def _docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text())) or ""


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"problems.{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _figure(path: Path) -> tuple[bytes, str]:
    """A PNG of the script's solution and a one-line caption."""
    import io

    import colloc as cl
    from colloc.viz.plot import plot_trajectory

    module = _load(path)
    options = {"scheme": "hermite-simpson", "intervals": 40}
    options.update(getattr(module, "SOLVE", {}))
    res = cl.solve(module.build(), ipopt={"print_level": 0}, **options)
    fig = plot_trajectory(res.trajectory)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    import matplotlib.pyplot as plt

    plt.close(fig)
    caption = (f"`colloc solve problems/{path.name}`: {res.status.value}, J = {res.objective:.7g}, "
               f"{options['scheme']} on {options.get('intervals', 'the given')} intervals")
    return buffer.getvalue(), caption


def _gallery(config, files) -> str:
    lines = ["# Gallery", "",
             "Every problem script in `problems/`, with the answer it is checked against (a test solves each one",
             "and compares). The figures are made when this site is built, by solving the script with its own",
             "defaults.", ""]
    for path in sorted((ROOT / "problems").glob("*.py")):
        if path.stem.startswith("_"):
            continue
        doc = _docstring(path)
        title = doc.splitlines()[0] if doc else path.stem
        lines += [f"## {path.stem}", "", title, ""]
        tree = ast.parse(path.read_text())
        reference = next((node.value for node in tree.body if isinstance(node, ast.Assign)
                          and any(getattr(t, "id", "") == "REFERENCE" for t in node.targets)), None)
        if reference is not None:
            lines += [f"Reference: `{ast.unparse(reference)}`", ""]
        if path.stem in FIGURES:
            png, caption = _figure(path)
            name = f"gallery/{path.stem}.png"
            files.append(File.generated(config, name, content=png))
            lines += [f"![{path.stem}]({name})", "", caption, ""]
    return "\n".join(lines) + "\n"


def on_files(files, config):
    readme = (ROOT / "README.md").read_text()
    readme = re.sub(r"\]\(docs/([^)]+)\)", r"](\1)", readme)
    files.append(File.generated(config, "index.md", content=readme))
    files.append(File.generated(config, "gallery.md", content=_gallery(config, files)))
    return files
