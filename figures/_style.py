"""One look for every figure: fonts and sizes readable in print, 300 dpi PNG, vector PDF.

:func:`figure_style` is the context :func:`figures._common.run_figure` draws every figure
in; the scripts set no font size of their own. Sizes are in points for a figure printed at
its own size (a two-panel figure is 10-12 inches wide, so a page-wide print halves them:
axis labels stay >= 5.5 pt, the usual minimum). PDF fonts are TrueType (type 42), so the
text stays selectable and journals accept the files.

:func:`caption` turns a figure's first docstring line into the caption the ledger report
shows: that line, then the paper it reproduces by its citation (authors, venue, arXiv id).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["DPI", "RC", "caption", "figure_style", "paper_citation"]

#: resolution of every PNG (the PDF is vector)
DPI = 300
#: matplotlib settings of every figure
RC = {
    "savefig.dpi": DPI,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.05,
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 12,
    "xtick.labelsize": 10.5,
    "ytick.labelsize": 10.5,
    "legend.fontsize": 10,
    "legend.title_fontsize": 10,
    "legend.framealpha": 0.9,
    "figure.titlesize": 12.5,
    "lines.linewidth": 1.7,
    "lines.markersize": 5.5,
    "axes.linewidth": 0.9,
    "mathtext.fontset": "dejavusans",
}


@contextlib.contextmanager
def figure_style() -> Iterator[None]:
    """Draw (and save) inside this context: :data:`RC` on top of matplotlib's defaults."""
    with plt.rc_context(RC):
        yield


def paper_citation(paper_key: str) -> str:
    """``authors, venue, arXiv id`` of a declared paper (the key itself if undeclared)."""
    from flbounds.ledger import PAPERS

    paper = PAPERS.get(paper_key)
    if paper is None:
        return paper_key
    return ", ".join(part for part in (paper.reference, paper.venue, paper.source) if part)


def caption(first_line: str, claims: tuple[str, ...]) -> str:
    """``first_line`` and, for the paper of the figure's claims, its citation."""
    papers = list(dict.fromkeys(c.split(".", 1)[0] for c in claims))
    if not papers:
        return first_line
    cited = "; ".join(paper_citation(key) for key in papers)
    return f"{first_line.rstrip('.')}. {cited}."
