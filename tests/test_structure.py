"""colloc's structure: no import cycle among its modules, no module or function over the size limits,
and the IPOPT backend's option checks."""
from __future__ import annotations

import ast
import pathlib

import pytest

import colloc as cl
from colloc.solvers import ipopt as backend

PACKAGE = pathlib.Path(cl.__file__).parent
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 60


def _modules():
    return {".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__"): p
            for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name, path, known, lazy=False):
    """colloc modules that ``name`` imports at module level (and inside functions too if ``lazy``)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    tree = ast.parse(path.read_text())
    for node in (ast.walk(tree) if lazy else tree.body):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            submodules = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]
            targets = submodules or [base]  # `from . import plot` imports plot, not the package's other modules
        out |= {t for t in targets if t in known and t != name}
    return out


def _cycle(graph):
    """One import cycle as a list of module names, or ``None``."""
    state, stack = {}, []

    def visit(u):
        state[u] = "open"
        stack.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == "open":
                return stack[stack.index(v):] + [v]
            if v not in state and (found := visit(v)):
                return found
        stack.pop()
        state[u] = "done"
        return None

    for u in sorted(graph):
        if u not in state and (found := visit(u)):
            return found
    return None


@pytest.mark.parametrize("lazy", [False, True], ids=["module-level", "with-function-level"])
def test_no_import_cycle_among_collocs_modules(lazy):
    """Data flows one way: not even an import inside a function may lead back (lazy imports are for
    optional dependencies such as matplotlib, dask and scipy, which are not colloc modules)."""
    mods = _modules()
    graph = {n: _imports(n, p, mods, lazy) for n, p in mods.items()}
    cycle = _cycle(graph)
    assert cycle is None, " -> ".join(cycle)


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_modules_and_functions_stay_small():
    too_long = []
    for name, path in _modules().items():
        lines = path.read_text().splitlines()
        if len(lines) > MAX_MODULE_LINES:
            too_long.append(f"module {name}: {len(lines)} lines")
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = node.body[1:] if ast.get_docstring(node) else node.body
                code = {n for stmt in body for sub in ast.walk(stmt) for n in range(getattr(sub, "lineno", 0), getattr(sub, "end_lineno", 0) + 1)
                        if hasattr(sub, "lineno")}
                code = {n for n in code if lines[n - 1].strip() and not lines[n - 1].strip().startswith("#")}
                if len(code) > MAX_FUNCTION_LINES:
                    too_long.append(f"function {name}.{node.name}: {len(code)} lines of code")
    assert not too_long, "\n".join(too_long)


def test_a_linear_solver_this_build_lacks_is_refused_naming_those_it_has():
    available = backend.available_linear_solvers()
    assert "mumps" in available
    missing = next((n for n in ("ma57", "ma27", "pardiso") if n not in available), None)
    if missing is None:
        pytest.skip("this build loads every HSL solver")
    with pytest.raises(cl.OptionError, match=rf"linear solver `{missing}` is not available in this CasADi build; choose one of: mumps"):
        backend.ipopt_options({"linear_solver": missing})
    with pytest.raises(cl.OptionError, match="linear solver `nonsense` is not available"):
        backend.ipopt_options({"linear_solver": "nonsense"})
    assert backend.ipopt_options({"linear_solver": "mumps"})["linear_solver"] == "mumps"


def test_readme_and_ci_run_the_same_test_command():
    root = PACKAGE.parent
    ci = (root / ".ci" / "run").read_text().strip().splitlines()[-1]
    command = ci.split("-e \".[test]\" && ", 1)[1]
    assert "-m slow" in command and f'python -m pip install -e ".[test]" && {command}' in (root / "README.md").read_text()


def test_every_document_the_code_and_docs_cite_is_in_the_repository():
    """Citations such as `docs/problems.md C1` or `docs/design.md §2` name a file shipped here, and the
    entry or section they cite exists in it; nothing cites a document kept elsewhere."""
    import re

    root = PACKAGE.parent
    files = [p for pattern in ("colloc/**/*.py", "problems/*.py", "scripts/*.py", "tests/*.py", "docs/*.md", "README.md")
             for p in root.glob(pattern)]
    problems = (root / "docs" / "problems.md").read_text()
    design = (root / "docs" / "design.md").read_text()
    cited = set()
    for path in files:
        text = path.read_text()
        assert not re.search(r"(?<![\w/])(DESIGN|PROBLEMS|MUSCLES|MOCO_NOTES)\.md", text), f"{path} cites a document not shipped"
        for name in re.findall(r"docs/([\w.-]+\.(?:md|png|gif))", text):
            assert (root / "docs" / name).is_file(), f"{path} cites docs/{name}, which does not exist"
            cited.add(name)
        for entry in re.findall(r"docs/problems\.md,? (?:entry )?([A-E]\d+[a-z]*)", text):  # a section or a sub-item
            assert f"### {entry}. " in problems or f"**{entry} " in problems, f"{path} cites docs/problems.md {entry}, not in it"
        for section in re.findall(r"docs/design\.md §(\d)", text):
            assert re.search(rf"^## {section}\. ", design, re.M), f"{path} cites docs/design.md §{section}, not in it"
    assert {"design.md", "problems.md"} <= cited


# The sub-packages, lowest layer first: a module imports only from its own layer or lower ones, even inside a
# function (docs/architecture.md explains each layer).
LAYERS = ["errors", "numeric", "discretization", "results", "model", "opensim", "goals", "transcription", "solvers", "viz",
          "simulate", "pipeline", "batch", "cli"]


def _layer(module):
    parts = module.split(".")
    if len(parts) == 1:
        return LAYERS.index("cli")  # the curated `colloc` namespace: everything but the command line is below it
    return LAYERS.index(parts[1]) if parts[1] in LAYERS else len(LAYERS)


def test_every_module_belongs_to_a_layer():
    strays = [n for n in _modules() if n.count(".") and n.split(".")[1] not in LAYERS + ["__main__"]]
    assert not strays, f"modules outside the layers {LAYERS}: {strays}"


def test_no_sub_package_imports_one_above_it():
    mods = _modules()
    upward = [f"{n} imports {t}" for n, p in mods.items() for t in sorted(_imports(n, p, mods, lazy=True))
              if _layer(t) > _layer(n)]
    assert not upward, "\n".join(upward)


def test_the_architecture_page_maps_every_module_and_only_modules_that_exist():
    import re

    text = (PACKAGE.parent / "docs" / "architecture.md").read_text()
    table = text.split("## Module map", 1)[1].split("\n## ", 1)[0]
    cited = {c for row in table.splitlines() if row.startswith("| `")
             for c in re.findall(r"`([\w/]+\.py)`", row.split(" | ")[0])}
    missing_files = sorted(c for c in cited if not (PACKAGE / c).is_file())
    assert not missing_files, f"docs/architecture.md maps modules that do not exist: {missing_files}"
    modules = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
               if p.name not in ("__init__.py", "__main__.py") or p.parent.name in ("solvers", "transcription")}
    unmapped = sorted(modules - cited)
    assert not unmapped, f"docs/architecture.md's module map leaves out {unmapped}"


#: The curated public namespace: `import colloc as cl` gives exactly these names (a new public name is a
#: decision, made here and in docs/api/index.md).
PUBLIC = {
    "CollocError", "ContactParadoxError", "FileFormatError", "ModelError", "OptionError", "ProblemError",
    "TIME", "Component", "KinematicConstraint", "Model", "Variable", "Problem", "Multibody",
    "make_mesh", "SCHEMES", "get_scheme", "solve", "build_nlp", "SolveResult", "Status", "Trajectory",
    "solve_adaptive", "simulate_controls", "verify", "plot", "Impact", "MultiPhaseProblem", "Phase", "solve_phases",
    "MultiPhaseResult", "PhasedTrajectory", "MidpointVI", "simulate", "urdf", "simulate_events", "SimulationError",
    "DeGrooteFregly2016Muscle",
}


def test_the_public_namespace_is_the_curated_one():
    assert set(cl.__all__) == PUBLIC and len(cl.__all__) == len(PUBLIC)
    assert all(hasattr(cl, name) for name in PUBLIC)


def test_every_exception_class_is_defined_in_errors():
    strays = [f"{name}.{node.name}" for name, path in _modules().items() if name != "colloc.errors"
              for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.ClassDef)
              and any(getattr(b, "id", getattr(b, "attr", "")).endswith(("Error", "Exception")) for b in node.bases)]
    assert not strays, f"exception classes outside colloc/errors.py: {strays}"


def test_every_public_option_is_walked_through_every_pipeline():
    """tests/test_options.py walks each option of a solve through each pipeline (its value reaches its consumer or
    it is refused by name); here: that walk names every field of SolveOptions, and every pipeline."""
    import dataclasses

    from colloc.pipeline.options import SolveOptions

    tree = ast.parse((PACKAGE.parent / "tests" / "test_options.py").read_text())
    tables = {t.id: node.value for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}
    walked = {k.value for k in tables["WALK"].keys}
    assert walked == {f.name for f in dataclasses.fields(SolveOptions)}
    pipelines = {k.value for k in tables["PIPELINES"].keys}
    assert {"collocation", "midpoint-vi", "multi-phase", "contact", "refine", "multi-start", "sweep", "cli"} <= pipelines


#: The one place below the command line that writes to the terminal: the per-iteration lines a caller asks for
#: with ``progress=True`` (a callable ``progress`` receives them instead).
PRINTS = {("colloc.solvers.ipopt", "_report")}


def test_nothing_outside_the_command_line_prints():
    """Reports are returned as strings (or passed to a ``progress`` callable) and colloc/cli prints them."""
    strays = []
    for name, path in _modules().items():
        if name.startswith("colloc.cli"):
            continue
        tree = ast.parse(path.read_text())
        for func in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))] + [tree]:
            body = func.body if func is not tree else [n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.ClassDef))]
            calls = [c for stmt in body for c in ast.walk(stmt) if isinstance(c, ast.Call) and getattr(c.func, "id", None) == "print"]
            if calls and (name, getattr(func, "name", None)) not in PRINTS:
                strays += [f"{name}:{c.lineno}" for c in calls]
    assert not strays, f"print() outside colloc/cli: {sorted(set(strays))}"


def test_only_the_transcription_registry_tells_transcriptions_apart_by_scheme_name():
    """Code that must know whether a scheme or a file is collocation or discrete mechanics reads the declarations
    of colloc/transcription/registry.py (or a trajectory's ``control_hold``); no other module compares a name with
    ``"midpoint-vi"``, nor with a constant bound to it."""
    VI = "midpoint-vi"
    trees = {name: ast.parse(path.read_text()) for name, path in _modules().items()}
    aliases = {t.id for tree in trees.values() for node in tree.body if isinstance(node, ast.Assign)
               and isinstance(node.value, ast.Constant) and node.value.value == VI for t in node.targets if isinstance(t, ast.Name)}
    aliases |= {a.asname for tree in trees.values() for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                for a in node.names if a.name in aliases and a.asname}

    def names_vi(node):
        if isinstance(node, ast.Constant):
            return node.value == VI
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(names_vi(e) for e in node.elts)
        return getattr(node, "id", getattr(node, "attr", None)) in aliases

    strays = [f"{name}:{node.lineno}" for name, tree in trees.items() if name != "colloc.transcription.registry"
              for node in ast.walk(tree) if isinstance(node, ast.Compare) and any(names_vi(n) for n in [node.left, *node.comparators])]
    assert not strays, f"scheme-name tests outside colloc/transcription/registry.py: {strays}"


#: Calls that look up the interval a value lies in: colloc's one interval search is
#: `colloc.discretization.grid.locate`.
SEARCHES = {"searchsorted", "digitize", "bisect", "bisect_left", "bisect_right"}


def _same(a, b):
    return ast.dump(a) == ast.dump(b)


def _lagrange_factor(node):
    """Whether ``node`` multiplies by a Lagrange factor ``(s − x_m) / (x_j − x_m)``: ``p * ((s − x_m) / (x_j − x_m))``,
    ``p * (s − x_m) / (x_j − x_m)`` or ``p *= (s − x_m) / (x_j − x_m)``."""
    def ratio(div):
        return (isinstance(div, ast.BinOp) and isinstance(div.op, ast.Div) and isinstance(div.right, ast.BinOp)
                and isinstance(div.right.op, ast.Sub))

    def factor(div):  # (s − x_m) / (x_j − x_m)
        return ratio(div) and isinstance(div.left, ast.BinOp) and isinstance(div.left.op, ast.Sub) and _same(div.left.right, div.right.right)

    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Mult):
        return factor(node.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return factor(node.left) or factor(node.right)
    if ratio(node) and isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.Mult):
        inner = node.left.right
        return isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Sub) and _same(inner.right, node.right.right)
    return False


def _own_dense_output(source):
    """Interval searches and Lagrange bases written in ``source``, as ``line: what``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            called = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if called in SEARCHES:
                found.append(f"{node.lineno}: calls {called}")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and "lagrange" in node.name.lower():
            found.append(f"{node.lineno}: defines {node.name}")
        if _lagrange_factor(node):
            found.append(f"{node.lineno}: a Lagrange basis' product")
    return found


def test_only_discretization_has_a_lagrange_basis_or_an_interval_search():
    """One dense output: every other layer evaluates a solution between its points through
    `colloc.discretization.interpolant` (the Lagrange basis of `schemes.lagrange_polynomials`, the interval
    search `grid.locate`) instead of writing its own."""
    found = {name: _own_dense_output(path.read_text()) for name, path in _modules().items()}
    strays = [f"{name}:{hit}" for name, hits in found.items() if not name.startswith("colloc.discretization") for hit in hits]
    assert not strays, "\n".join(strays)
    inside = {name: [hit.split(": ", 1)[1] for hit in hits] for name, hits in found.items() if hits}
    assert inside == {"colloc.discretization.schemes": ["defines lagrange_polynomials", "defines lagrange_basis", "a Lagrange basis' product"],
                      "colloc.discretization.grid": ["calls searchsorted"]}, inside


def test_the_dense_output_check_finds_bases_and_searches():
    basis = ("def basis(nodes, s):\n    out = []\n    for j, nj in enumerate(nodes):\n        term = 1.0\n"
             "        for m, nm in enumerate(nodes):\n            if m != j:\n                term = term * (s - nm) / (nj - nm)\n"
             "        out.append(term)\n    return out\n")
    assert _own_dense_output(basis) == ["7: a Lagrange basis' product"]
    assert _own_dense_output("for m in M:\n    B[j] *= (s - x[m]) / (x[j] - x[m])\n") == ["2: a Lagrange basis' product"]
    assert _own_dense_output("i = np.searchsorted(mesh, t, side='right') - 1\n") == ["1: calls searchsorted"]
    assert _own_dense_output("def _lagrange_at(nodes, j, s):\n    pass\n") == ["1: defines _lagrange_at"]
    assert _own_dense_output("s = (t - t0) / (t1 - t0)\n") == []  # a local time alone is no basis


def test_every_extension_implements_the_one_protocol_and_declares_what_it_supports():
    """Constraint methods and contact handlings (collocation and midpoint-vi) are all :class:`Extension`s: every
    hook they override keeps the protocol's signature, and every declaration they name is set by them."""
    import inspect

    from colloc.transcription.extension import HOOKS, Extension
    from colloc.transcription.registry import TRANSCRIPTIONS, extensions

    found = extensions()
    assert {"contact:collocation", "contact:midpoint-vi", "constraint:bordalba2023", "constraint:posa2016"} <= set(found)
    for hook in HOOKS:
        assert callable(getattr(Extension, hook)), hook
    wrong = []
    for name, cls in found.items():
        assert issubclass(cls, Extension), name
        for hook in HOOKS:
            if inspect.signature(getattr(cls, hook)).parameters.keys() != inspect.signature(getattr(Extension, hook)).parameters.keys():
                wrong.append(f"{name}.{hook}{inspect.signature(getattr(cls, hook))}")
        assert "transcriptions" in cls.capabilities and cls.transcriptions, name
        assert set(cls.transcriptions) <= set(TRANSCRIPTIONS), name
        # each declaration is made below the protocol's base, not left to it
        for cap in cls.capabilities:
            assert any(cap in vars(k) for k in cls.__mro__ if k is not Extension), f"{name} does not declare `{cap}`"
    assert not wrong, f"hooks whose signatures differ from the protocol's: {wrong}"
    # each transcription kind's contact handling declares that transcription
    assert all(k.contact_hooks.transcriptions == (n,) for n, k in TRANSCRIPTIONS.items())


#: Names bound to an extension in the transcriptions' code, and attributes of an NLP or transcription holding one
#: (a bare ``contact`` is also a model's contact elsewhere, so it counts only as ``nlp.contact``).
EXTENSION_NAMES, EXTENSION_ATTRIBUTES = {"ext", "method", "hooks"}, {"method", "contact"}


def test_the_transcriptions_call_extensions_through_the_protocol_only():
    """Outside the extensions' own classes, code of colloc/transcription touches an extension (a name bound to one,
    ``nlp.method``, ``nlp.contact`` or an alias of them) only through the protocol: its hooks and declarations."""
    import importlib

    from colloc.transcription.extension import Extension

    allowed = {n for n in dir(Extension) if not n.startswith("_")}
    strays = []
    for name, path in _modules().items():
        if not name.startswith("colloc.transcription") or name.endswith((".extension", ".contact_hooks")):
            continue
        module = importlib.import_module(name)
        tree = ast.parse(path.read_text())
        skip = {id(n) for cls in tree.body if isinstance(cls, ast.ClassDef)
                and isinstance(getattr(module, cls.name, None), type) and issubclass(getattr(module, cls.name), Extension)
                for n in ast.walk(cls)}
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.Module)) or id(fn) in skip:
                continue
            holds = lambda v: (isinstance(v, ast.Name) and v.id in names) or (  # noqa: E731
                isinstance(v, ast.Attribute) and v.attr in EXTENSION_ATTRIBUTES and not (isinstance(v.value, ast.Name) and v.value.id == "self"))
            names = set(EXTENSION_NAMES)
            for node in ast.walk(fn):  # aliases: `rows = nlp.contact`, `lay, rows = nlp.layout, nlp.contact`
                if isinstance(node, ast.Assign):
                    pairs = [(t, node.value) for t in node.targets]
                    pairs += [(a, b) for t in node.targets if isinstance(t, ast.Tuple) and isinstance(node.value, ast.Tuple)
                              for a, b in zip(t.elts, node.value.elts)]
                    names |= {t.id for t, v in pairs if isinstance(t, ast.Name) and holds(v)}
            strays += [f"{name}:{node.lineno} .{node.attr}" for node in ast.walk(fn) if id(node) not in skip
                       and isinstance(node, ast.Attribute) and holds(node.value) and node.attr not in allowed]
    assert not strays, f"extensions used outside the protocol: {sorted(set(strays))}"
