"""The import graph of ``flbounds/``, built from the source: no circles, kernels import
nothing of the project, the library imports no plugin package, the ledger's three layers
(``api`` < ``engine`` < ``reports``) import only downwards, and ``flbounds.pep`` imports no
module of the ledger.

The graph is read from the abstract syntax tree of every module, not by importing it:
module-level and function-level imports count alike (a lazy import inside a function is
still a dependency, and a circle through one is still a circle), relative imports are
resolved against the importing module's package, ``from package import name`` is an edge
to the submodule ``package.name`` when one exists and to the package otherwise, and a call
``importlib.import_module("flbounds....")`` with a literal name counts as an import.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "flbounds"
PLUGIN_PACKAGES = ("verify", "paper_checks", "figures")
# the ledger's layers, lowest first: a layer may import only the layers before it
LEDGER_LAYERS = ("flbounds.ledger.api", "flbounds.ledger.engine", "flbounds.ledger.reports")

Graph = Mapping[str, set[str]]


def module_files(root: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` under ``root``: dotted name -> file."""
    files = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        files[".".join(parts)] = path
    return files


def _imported_names(tree: ast.AST, module: str, is_package: bool) -> Iterator[str]:
    """The dotted names an AST imports: ``import a.b`` gives ``a.b``, ``from a import b``
    gives ``a.b`` (resolved to a module or to ``a`` by the caller)."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            for alias in node.names:
                yield prefix if alias.name == "*" else f"{prefix}.{alias.name}"
        elif (isinstance(node, ast.Call) and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and _call_name(node.func) in ("import_module", "importlib.import_module")):
            yield node.args[0].value


def _call_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return ""


def _resolve(name: str, modules: Iterable[str]) -> str:
    """The longest prefix of ``name`` that is a known module, else its top-level name."""
    known = set(modules)
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in known:
            return candidate
    return parts[0]


def import_graph(root: Path = ROOT, package: str = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules it imports: the project's by full name, any other by its
    top-level name (``numpy``, ``verify``)."""
    files = module_files(root, package)
    graph = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        targets = {_resolve(name, files) for name in _imported_names(tree, module, is_package)}
        targets.discard(module)
        graph[module] = targets
    return graph


def circles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative),
    each sorted; a module importing itself is not counted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def kernel_breaches(graph: Graph, package: str = PACKAGE) -> list[tuple[str, str]]:
    """(kernel module, project module outside the kernels) pairs."""
    kernels = f"{package}.kernels"
    return sorted((module, target) for module, targets in graph.items()
                  if _inside(module, kernels) for target in targets
                  if _inside(target, package) and not _inside(target, kernels))


def plugin_imports(graph: Graph) -> list[tuple[str, str]]:
    """(library module, plugin package) pairs: the library never imports its plugins."""
    return sorted((module, target) for module, targets in graph.items()
                  for target in targets if target.split(".")[0] in PLUGIN_PACKAGES)


def layer_breaches(graph: Graph, layers: tuple[str, ...] = LEDGER_LAYERS
                   ) -> list[tuple[str, str]]:
    """(module, target) pairs where a layer imports a layer above it."""
    def rank(module: str) -> int | None:
        return next((i for i, layer in enumerate(layers) if _inside(module, layer)), None)

    breaches = []
    for module, targets in graph.items():
        own = rank(module)
        if own is None:
            continue
        for target in targets:
            theirs = rank(target)
            if theirs is not None and theirs > own:
                breaches.append((module, target))
    return sorted(breaches)


def imports_of(graph: Graph, importer: str, imported: str) -> list[tuple[str, str]]:
    """(module, target) pairs where a module inside ``importer`` imports ``imported``."""
    return sorted((module, target) for module, targets in graph.items()
                  if _inside(module, importer) for target in targets
                  if _inside(target, imported))


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_graph_sees_the_package(graph):
    assert "flbounds.ledger" in graph and "flbounds.kernels" in graph
    assert any(_inside(target, "flbounds.ledger") for target in graph["flbounds.cli.check"])


def test_no_import_circle(graph):
    assert circles(graph) == []


def test_kernels_import_nothing_of_the_project(graph):
    assert kernel_breaches(graph) == []


def test_library_imports_no_plugin_package(graph):
    assert plugin_imports(graph) == []


def test_ledger_layers_import_only_downwards(graph):
    for layer in LEDGER_LAYERS:
        assert any(_inside(module, layer) for module in graph), f"no module in {layer}"
    assert layer_breaches(graph) == []


def test_pep_imports_no_ledger_module(graph):
    """The worst-case library takes every step and printed value as arguments: it looks no
    theorem up in the ledger and builds no Evidence."""
    assert imports_of(graph, "flbounds.pep", "flbounds.ledger") == []


# The checks can fail: synthetic graphs with the faults they look for.

def test_a_circle_is_found():
    synthetic = {"p.a": {"p.b"}, "p.b": {"p.c", "numpy"}, "p.c": {"p.a"}, "p.d": {"p.a"},
                 "p.e": {"p.e"}}
    assert circles(synthetic) == [["p.a", "p.b", "p.c"]]
    assert circles({"p.a": {"p.b"}, "p.b": set()}) == []


def test_a_breach_of_each_rule_is_found():
    synthetic = {
        "flbounds.kernels.k": {"flbounds.kernels.base", "flbounds.problems._layout", "numba"},
        "flbounds.kernels.base": set(),
        "flbounds.ledger.api.claims": {"flbounds.ledger.engine.runner"},
        "flbounds.ledger.engine.runner": {"flbounds.ledger.api.claims", "verify"},
        "flbounds.ledger.reports.page": {"flbounds.ledger.engine.runner"},
        "flbounds.pep.rates": {"flbounds.ledger"},
    }
    assert kernel_breaches(synthetic) == [("flbounds.kernels.k", "flbounds.problems._layout")]
    assert layer_breaches(synthetic) == [("flbounds.ledger.api.claims",
                                          "flbounds.ledger.engine.runner")]
    assert plugin_imports(synthetic) == [("flbounds.ledger.engine.runner", "verify")]
    assert imports_of(synthetic, "flbounds.pep", "flbounds.ledger") == [
        ("flbounds.pep.rates", "flbounds.ledger")]


def test_imports_are_read_from_the_source(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("from .a import x\n")
    (package / "a.py").write_text(
        "import numpy\n"
        "def f():\n"
        "    from .sub import b\n"
        "    import importlib\n"
        "    return importlib.import_module('pkg.sub.c')\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "b.py").write_text("from .. import a\nfrom ..sub.c import y\n")
    (package / "sub" / "c.py").write_text("from pkg import sub\n")
    graph = import_graph(tmp_path, "pkg")
    assert graph == {
        "pkg": {"pkg.a"},
        "pkg.a": {"numpy", "pkg.sub.b", "importlib", "pkg.sub.c"},
        "pkg.sub": set(),
        "pkg.sub.b": {"pkg.a", "pkg.sub.c"},
        "pkg.sub.c": {"pkg.sub"},
    }
    assert circles(graph) == [["pkg.a", "pkg.sub.b"]]
