"""Generate the API reference pages (``docs/reference/api/``): one page per public package.

Each page documents the names the package exports (its ``__all__``) from their numpydoc
docstrings. The list of packages is :data:`PACKAGES`; the pages are generated at every
build and ignored by git.
"""

from __future__ import annotations

import importlib
from pathlib import Path

PACKAGES = ("problems", "participation", "sampling", "selection", "algorithms",
            "closed_forms", "submodular", "pac", "theory", "pep", "falsify", "stats", "ledger")
#: packages that only re-export another package's names: their page shows the module's own
#: docstring and links each name to its one description on the home package's page (autodoc
#: would otherwise describe every class a second time under its canonical name)
ALIASES = {"submodular": "selection"}


def generate(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name in PACKAGES:
        module = f"flbounds.{name}"
        if name in ALIASES:
            text = _alias_page(module, f"flbounds.{ALIASES[name]}")
        else:
            text = [f"# `{module}`", "", "```{eval-rst}", f".. automodule:: {module}",
                    "   :members:", "   :imported-members:", "```", ""]
        (out / f"{name}.md").write_text("\n".join(text), encoding="utf-8")
    index = ["# Python API", "",
             "The public names of each package, from their numpydoc docstrings.", "",
             "```{toctree}", ":maxdepth: 1", "", *PACKAGES, "```", ""]
    (out / "index.md").write_text("\n".join(index), encoding="utf-8")


def _alias_page(module: str, home: str) -> list[str]:
    """The page of a module that re-exports ``home``'s names: its docstring, then one link per
    exported name to that name's description on ``home``'s page."""
    names = importlib.import_module(module).__all__
    links = [f"- :py:obj:`{module}.{n} <{home}.{n}>`" for n in names]
    return [f"# `{module}`", "", "```{eval-rst}", f".. automodule:: {module}",
            "   :no-members:", "", f"Its names, each described once in :py:mod:`{home}`:", "",
            *links, "```", ""]


def _on_init(app):
    generate(Path(app.srcdir) / "reference" / "api")


def setup(app):
    app.connect("builder-inited", _on_init)
    return {"parallel_read_safe": True, "version": "1"}
