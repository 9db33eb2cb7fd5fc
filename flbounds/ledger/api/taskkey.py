"""The identity of one task for ``--resume``: claim, parameters, seed, profile and code.

The code part hashes every in-tree module a claim can execute: all of ``flbounds`` plus the
import closure of the claim's own module (its helpers in the paper's folder, shared helpers
of ``verify``, a researcher's own package), found by reading ``import`` statements from
the sources. Modules installed in the standard library or in site-packages are left out:
their versions are recorded in each row instead. Changing one helper therefore changes the
keys of exactly the claims that import it (directly or through other in-tree modules).
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib.util
import json
import os
import re
import site
import sys
import sysconfig
from functools import cache
from pathlib import Path

from .result import to_jsonable

__all__ = ["adopt_digests", "cell_key", "code_digest", "fixed_digests", "import_closure",
           "sources_fixed", "task_key"]

#: code digest per module while :func:`sources_fixed` is in effect (None: not in effect)
_fixed: dict[str, str] | None = None
#: meanwhile, the digest of each source file read and the library's list of files
_fixed_files: dict[Path, str] = {}
_fixed_library: list[Path] | None = None


def task_key(claim, profile: str, seed: int) -> str:
    """Key of the task ``(claim, profile, seed)``: same claim, params, seed and code version.

    The code version includes the modules declaring the results the claim is attached to
    (``claim.result_modules``), which its own module need not import: their hypothesis
    predicates decide its verdict.
    """
    key = [claim.id, profile, to_jsonable(claim.params(profile)), int(seed),
           code_digest(claim.module)]
    extra = sorted({m for m in getattr(claim, "result_modules", ()) if m != claim.module})
    if extra:
        key.append([code_digest(m) for m in extra])
    payload = json.dumps(key, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


def code_digest(module_name: str) -> str:
    """Hash of the library sources and every in-tree module ``module_name`` imports."""
    if _fixed is not None and module_name in _fixed:
        return _fixed[module_name]
    files = set(_library_files())
    files.update(import_closure(module_name))
    # sorted by content, so the digest does not depend on where the checkout lives
    digests = sorted(_file_digest(path) for path in files)
    digest = hashlib.sha256("\n".join(digests).encode()).hexdigest()[:16]
    if _fixed is not None:
        _fixed[module_name] = digest
    return digest


@contextlib.contextmanager
def sources_fixed():
    """Within this block each module's :func:`code_digest` is computed once (walking the
    tree costs tens of ms, once per task otherwise): for a run, whose code is the code its
    processes imported at the start, not what an editor saves meanwhile."""
    global _fixed, _fixed_files, _fixed_library
    outer = _fixed, _fixed_files, _fixed_library
    if _fixed is None:
        _fixed, _fixed_files, _fixed_library = {}, {}, None
    try:
        yield
    finally:
        _fixed, _fixed_files, _fixed_library = outer


def fixed_digests() -> dict[str, str]:
    """The module digests computed so far within :func:`sources_fixed` (a copy)."""
    return dict(_fixed or {})


def adopt_digests(digests: dict[str, str]) -> None:
    """Take the digests another process of the same run computed (a pool worker receives
    its parent's, rather than walking the same import closures again); only within
    :func:`sources_fixed`."""
    if _fixed is not None:
        _fixed.update(digests)


def import_closure(module_name: str) -> set[Path]:
    """Source files of ``module_name``, its packages and every in-tree module it imports,
    transitively (imports inside functions included)."""
    seen: dict[str, Path | None] = {}
    stack = [module_name]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen[name] = path = _in_tree_source(name)
        if path is None:
            continue
        parent = name.rpartition(".")[0]
        if parent:
            stack.append(parent)        # importing a.b runs a/__init__.py first
        package = name if path.name == "__init__.py" else parent
        stack.extend(_imports(path, package))
    return {p for p in seen.values() if p is not None}


def _imports(path: Path, package: str) -> list[str]:
    """Absolute names of the modules (and possible submodules) ``path`` imports."""
    stat = path.stat()
    return list(_parse_imports(str(path), stat.st_mtime_ns, stat.st_size, package))


@cache
def _parse_imports(path: str, mtime_ns: int, size: int, package: str) -> tuple[str, ...]:
    try:
        source = Path(path).read_bytes()
    except OSError:
        return ()   # the digest of the file's bytes still covers it
    names: list[str] = []
    for node in _import_statements(source):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node.module, node.level, package)
            if base is None:
                continue
            names.append(base)
            # ``from pkg import name`` may import the submodule pkg.name
            names.extend(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return tuple(names)


#: where an import statement may begin: at the start of a line (any indentation) or after
#: ``;`` or ``:`` (``try: import fcntl``)
_STATEMENT_START = re.compile(rb"(?:^|[;:])[ \t]*(?:import|from)[ \t\\(]", re.MULTILINE)


def _import_statements(source: bytes) -> list[ast.Import | ast.ImportFrom]:
    """Every ``import`` / ``from ... import`` statement of ``source``, at any depth.

    Parsing a whole module costs about a millisecond; only the statements are parsed here:
    each place one may begin is cut out up to the end of its logical line and parsed alone.
    Candidates that do not parse (prose that starts with "from") are skipped. Text in a
    string that reads as an import counts as one: the closure can only grow, never miss a
    module (``tests/flbounds/ledger/test_worker_digests.py`` checks this against a full parse of
    the tree).
    """
    found = []
    for match in _STATEMENT_START.finditer(source):
        start = match.start() + (source[match.start()] in b";:")
        try:
            tree = ast.parse(_logical_line(source, start).strip())
        except (SyntaxError, ValueError):
            continue
        found.extend(n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom))
    return found


def _logical_line(source: bytes, start: int) -> bytes:
    """``source`` from ``start`` to the end of that logical line (open brackets and
    backslashes continue it; ``;`` and a comment end it, a comment inside brackets is
    skipped)."""
    depth, i, end = 0, start, len(source)
    while i < end:
        c = source[i]
        if c == 0x28:                                   # (
            depth += 1
        elif c == 0x29:                                 # )
            depth -= 1
        elif c == 0x5C and source[i + 1:i + 2] == b"\n":  # backslash continuation
            i += 2
            continue
        elif c == 0x23:                                 # a comment ends the line
            if depth <= 0:
                break
            i = source.find(b"\n", i)                  # inside brackets: skip its text
            i = end if i < 0 else i
            continue
        elif depth <= 0 and c in (0x0A, 0x3B):          # newline, ;
            break
        i += 1
    return source[start:i]


def _resolve(module: str | None, level: int, package: str) -> str | None:
    if level == 0:
        return module
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = ".".join(parts[:len(parts) - (level - 1)])
    return f"{base}.{module}" if module and base else (module or base or None)


def _in_tree_source(name: str) -> Path | None:
    """The ``.py`` file of module ``name`` if it is in-tree (not stdlib, not site-packages).

    The top-level package is located first (without importing it), so the submodules of
    an installed package are never imported just to be skipped.
    """
    top = name.partition(".")[0]
    if top != name and _locate(top) is None:
        return None
    return _locate(name)


@cache
def _locate(name: str) -> Path | None:
    # where a module lives does not change within a process (its contents may: not cached)
    module = sys.modules.get(name)
    origin = getattr(module, "__file__", None) if module is not None else None
    if origin is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError, AttributeError):
            return None
        origin = spec.origin if spec is not None else None
    if not origin or not origin.endswith(".py"):
        return None
    path = Path(origin).resolve()
    if any(path.is_relative_to(root) for root in _outside_roots()):
        return None
    return path if path.is_file() else None


@cache
def _outside_roots() -> tuple[Path, ...]:
    """Folders whose modules are not in-tree: the standard library and site-packages."""
    paths = sysconfig.get_paths()
    roots = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots.update(site.getsitepackages() if hasattr(site, "getsitepackages") else [])
    roots.add(site.getusersitepackages() if hasattr(site, "getusersitepackages") else None)
    return tuple(Path(r).resolve() for r in roots if r and os.path.isdir(r))


def _library_files() -> list[Path]:
    """Every source file of the ``flbounds`` package (listed once per run)."""
    global _fixed_library
    if _fixed is not None and _fixed_library is not None:
        return _fixed_library
    import flbounds

    files = list(Path(flbounds.__path__[0]).rglob("*.py"))
    if _fixed is not None:
        _fixed_library = files
    return files


def _file_digest(path: Path) -> str:
    if _fixed is not None and path in _fixed_files:
        return _fixed_files[path]
    stat = path.stat()
    digest = _cached_file_digest(str(path), stat.st_mtime_ns, stat.st_size)
    if _fixed is not None:
        _fixed_files[path] = digest
    return digest


@cache
def _cached_file_digest(path: str, mtime_ns: int, size: int) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def cell_key(claim_key: str, cell: dict) -> str:
    """Key of one cell of a claim split into cells: the claim's task key (claim, params,
    seed, profile, code) plus the cell's parameters (canonical JSON)."""
    payload = json.dumps([claim_key, to_jsonable(cell)], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:20]
