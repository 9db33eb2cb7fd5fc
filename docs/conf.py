"""Sphinx configuration of the flbounds documentation site.

Build: ``pip install -e ".[docs]"`` then ``python -m sphinx -W -b html docs docs/_build/html``
(``-W``: a warning fails the build). Pages are Markdown (MyST); the API reference is generated
from the numpydoc docstrings, the CLI reference from the command's own parsers, the paper pages
from the declared results and claims, and the gallery is executed at build time.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("MPLBACKEND", "Agg")

import flbounds  # noqa: E402

project = "flbounds"
author = "the flbounds developers"
copyright = "2026, the flbounds developers"
release = flbounds.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "numpydoc",
    "cli_reference",
    "api_pages",
    "performance_page",
    "paper_pages",  # before the gallery: an example declares a toy paper in this process
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "coverage.md", "Thumbs.db", ".DS_Store", "examples",
                    "reference/generated",  # included by the pages that show them
                    "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip",
                    "auto_examples/*.json", "auto_examples/*.md5"]
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

autodoc_default_options = {"members": True, "undoc-members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()

sphinx_gallery_conf = {
    "examples_dirs": str(HERE / "examples"),
    "gallery_dirs": str(HERE / "auto_examples"),
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "within_subsection_order": "FileNameSortKey",
}

html_theme = "pydata_sphinx_theme"
html_title = "flbounds"
html_theme_options = {
    "navigation_depth": 3,
    "show_toc_level": 2,
    "navbar_align": "left",
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
}
html_static_path: list[str] = []
html_show_sourcelink = False
suppress_warnings = ["config.cache"]
# A module docstring's "References" section is shown as a bold paragraph: numpydoc would make
# it a rubric whose label repeats on every module page that has one.
suppress_warnings += ["ref.citation"]


def _module_references(app, what, name, obj, options, lines):
    if what != "module":
        return
    for i in range(len(lines) - 1):
        if lines[i].strip() == "References" and set(lines[i + 1].strip()) == {"-"}:
            lines[i], lines[i + 1] = "**References**", ""


def setup(app):
    app.connect("autodoc-process-docstring", _module_references, priority=400)
