"""Generate the API reference pages (``docs/reference/api/``): one page per public package.

Each page documents the names the package exports (its ``__all__``) from their numpydoc
docstrings. The list of packages is :data:`PACKAGES`; the pages are generated at every
build and ignored by git.
"""

from __future__ import annotations

from pathlib import Path

PACKAGES = ("problems", "participation", "sampling", "selection", "algorithms",
            "closed_forms", "submodular", "pac", "theory", "pep", "falsify", "stats", "ledger")
#: packages that re-export names of another package (indexed only there)
ALIASES = ("submodular",)


def generate(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name in PACKAGES:
        module = f"flbounds.{name}"
        options = ["   :members:", "   :imported-members:"]
        if name in ALIASES:  # re-exports: their names are documented on their home page
            options = []
        text = [f"# `{module}`", "", "```{eval-rst}", f".. automodule:: {module}",
                *options, "```", ""]
        (out / f"{name}.md").write_text("\n".join(text), encoding="utf-8")
    index = ["# Python API", "",
             "The public names of each package, from their numpydoc docstrings.", "",
             "```{toctree}", ":maxdepth: 1", "", *PACKAGES, "```", ""]
    (out / "index.md").write_text("\n".join(index), encoding="utf-8")


def _on_init(app):
    generate(Path(app.srcdir) / "reference" / "api")


def setup(app):
    app.connect("builder-inited", _on_init)
    return {"parallel_read_safe": True, "version": "1"}
