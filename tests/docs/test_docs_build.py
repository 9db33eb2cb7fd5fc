"""The documentation site builds with warnings as errors, and every internal link resolves.

A link is internal when it has no scheme and no host: ``href`` of ``a`` and ``link``, ``src``
of ``img`` and ``script``. Its file must exist in the built site, and its fragment, if any,
must be an ``id`` (or an ``a name``) in that file.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

#: attributes that point at another file of the site
LINK_ATTRIBUTES = {"a": "href", "link": "href", "img": "src", "script": "src"}
#: the pages the site must have (the front page, the generated references, the gallery)
PAGES = ("index.html", "reference/cli.html", "reference/api/index.html",
         "reference/api/ledger.html", "performance.html", "auto_examples/index.html",
         "papers/index.html")


class _Page(HTMLParser):
    """The anchors a page defines and the links it makes."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.anchors: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        if values.get("id"):
            self.anchors.add(values["id"])
        if tag == "a" and values.get("name"):
            self.anchors.add(values["name"])
        link = values.get(LINK_ATTRIBUTES.get(tag, ""))
        if link:
            self.links.append(link)


def parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    return page


def broken_links(html: Path) -> list[str]:
    """Every internal link of the site under ``html`` whose file or anchor is missing, as
    ``page -> link (why)``."""
    pages = {path: parse(path) for path in sorted(html.rglob("*.html"))
             if "_static" not in path.relative_to(html).parts}  # the theme's templates
    broken = []
    for path, page in pages.items():
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith("//"):
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            where = f"{path.relative_to(html)} -> {link}"
            if not target.is_file():
                broken.append(f"{where} (no such file)")
                continue
            fragment = unquote(parts.fragment)
            if not fragment or target.suffix != ".html":
                continue
            anchors = pages[target].anchors if target in pages else parse(target).anchors
            if fragment not in anchors:
                broken.append(f"{where} (no anchor #{fragment})")
    return broken


def test_site_builds_without_a_warning(built_site):
    warnings = [line for line in built_site.log.splitlines()
                if re.search(r"WARNING|ERROR|Traceback", line)]
    assert built_site.returncode == 0, "\n".join(warnings or built_site.log.splitlines()[-30:])
    missing = [page for page in PAGES if not (built_site.html / page).is_file()]
    assert missing == []


def test_every_internal_link_and_anchor_resolves(built_site):
    assert built_site.returncode == 0, "the build failed (see the build test)"
    assert broken_links(built_site.html) == []


def test_the_link_check_finds_a_broken_link(tmp_path):
    """The checker itself: a missing file and a missing anchor are reported, external links,
    existing anchors and the page's own fragments are not."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.html").write_text('<h1 id="here">b</h1>')
    (tmp_path / "index.html").write_text(
        '<p id="top"></p><a href="sub/b.html#here">ok</a><a href="#top">ok</a>'
        '<a href="https://example.org/x.html">external</a><img src="missing.png">'
        '<a href="sub/b.html#gone">bad anchor</a><a href="sub/">dir without index</a>')
    assert broken_links(tmp_path) == [
        "index.html -> missing.png (no such file)",
        "index.html -> sub/b.html#gone (no anchor #gone)",
        "index.html -> sub/ (no such file)",
    ]
