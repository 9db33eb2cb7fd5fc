"""The data behind the HTML ledger: one JSON-ready row per claim, and the figures.

The page renders its table from these rows in the browser, so everything a reader may open
(full measured and theoretical arrays, the tolerance's derivation, details, hypotheses,
provenance) travels as data, not as pre-rendered HTML. Optional result fields that other
parts of the toolkit add (``hypotheses``, ``attack``, ``worst_case``, ``git_commit``,
``started``, ``finished``) are read with ``getattr`` so older stored rows still render.
An adversarial search on claim X is stored as its own row ``attack:X``; its summary is
joined onto X's row.
"""

from __future__ import annotations

import base64
import io
import json
import logging
from pathlib import Path
from typing import NamedTuple

from ..api.registry import PAPERS, load_all, matches
from ..api.result import CheckResult
from .format import fmt
from .margins import margin

log = logging.getLogger(__name__)

ATTACK_PREFIX = "attack:"
#: widest figure embedded in the page, in pixels (keeps a 20-figure page near 2 MB)
FIGURE_WIDTH = 900
#: optional result fields rendered when present (added by other parts of the toolkit)
OPTIONAL_DICTS = ("hypotheses", "attack", "worst_case")
OPTIONAL_TEXT = ("git_commit", "started", "finished")


class Figure(NamedTuple):
    """A drawn figure: name, title, the claim ids/prefixes it illustrates, PNG data URI."""

    name: str
    title: str
    claims: tuple[str, ...]
    src: str


def paper_key(claim_id: str) -> str:
    return claim_id.removeprefix(ATTACK_PREFIX).split(".", 1)[0]


def split_attacks(results) -> tuple[list[CheckResult], dict[str, dict]]:
    """Claims, and the attack summary per target claim (the latest ``attack:X`` row wins)."""
    claims, attacks = [], {}
    for r in results:
        if r.id.startswith(ATTACK_PREFIX):
            summary = dict(getattr(r, "attack", None) or {})
            summary.setdefault("verdict", r.verdict)
            attacks[r.id[len(ATTACK_PREFIX):]] = summary
        else:
            claims.append(r)
    return claims, attacks


def hypotheses_state(hypotheses: dict) -> str:
    """``all met`` when every recorded hypothesis is met (True), ``some left`` otherwise."""
    if not hypotheses:
        return ""
    return "all met" if all(v is True for v in hypotheses.values()) else "some left"


def tightness_state(kind: str, worst_case: dict, attack: dict) -> str:
    """``tight`` / ``not tight`` where a worst case or an attack says so, else empty."""
    for source in (worst_case, attack):
        tight = source.get("tight") if source else None
        if isinstance(tight, bool):
            return "tight" if tight else "not tight"
    return "computed" if worst_case or kind == "tightness" else ""


def attack_state(attack: dict) -> str:
    if not attack:
        return ""
    return str(attack.get("verdict") or "searched")


#: verdicts whose row says by how much the comparison fails
FAILING = ("violated", "not-reproduced", "inconclusive")


def citation(key: str) -> str:
    """The declared paper's citation (authors, title, venue, arXiv id), else ''."""
    declared = PAPERS.get(key)
    return declared.plain_citation if declared is not None else ""


def correction_links() -> tuple[dict[str, str], dict[str, list[str]]]:
    """``corrects`` (corrected claim -> printed claim) and its inverse (printed claim ->
    the claims correcting it), from the registry."""
    corrects = {c.id: c.corrects for c in load_all().values() if c.corrects is not None}
    corrected_by: dict[str, list[str]] = {}
    for cid, target in corrects.items():
        corrected_by.setdefault(target, []).append(cid)
    return corrects, corrected_by


def claim_row(r: CheckResult, attack: dict | None, figure_names: list[str],
              links: tuple[dict, dict] = ({}, {})) -> dict:
    """One claim as the page's JSON row (short forms for the table, full values for the
    panel): by how much it fails (``margin``), the printed claim it corrects and the claims
    correcting it (``links``: :func:`correction_links`), its paper's ``citation``."""
    extra = {name: dict(getattr(r, name, None) or {}) for name in OPTIONAL_DICTS}
    if attack and not extra["attack"]:
        extra["attack"] = attack
    found = margin(r.measured, r.theoretical, r.relation, (r.tolerance or {}).get("value", 0.0)) \
        if r.verdict in FAILING else None
    row = {
        "id": r.id, "paper": paper_key(r.id), "citation": citation(paper_key(r.id)),
        "margin": found.text if found is not None else "",
        "corrects": links[0].get(r.id, ""), "corrected_by": links[1].get(r.id, []),
        "ref": r.ref, "kind": r.kind,
        "statement": r.statement, "verdict": r.verdict, "expected": r.expected,
        "unexpected": not r.as_expected, "measured": r.measured,
        "theoretical": r.theoretical, "relation": r.relation,
        "measured_short": fmt(r.measured), "theoretical_short": fmt(r.theoretical),
        "tolerance": r.tolerance or {}, "reason": r.reason, "traceback": r.traceback,
        "details": r.details, "reproducer": r.reproducer, "params": r.params,
        "seed": r.seed, "profile": r.profile, "versions": r.versions,
        "elapsed_s": r.elapsed_s, "task_key": r.task_key, "figures": figure_names,
        "hyp_state": hypotheses_state(extra["hypotheses"]),
        "attack_state": attack_state(extra["attack"]),
        "tight_state": tightness_state(r.kind, extra["worst_case"], extra["attack"]),
        **extra,
    }
    for name in OPTIONAL_TEXT:
        row[name] = getattr(r, name, None) or ""
    return row


def figures_for(claim_id: str, figures: list[Figure]) -> list[str]:
    return [f.name for f in figures if any(matches(claim_id, p) for p in f.claims)]


def payload(results, figures: list[Figure]) -> dict:
    """Everything the page shows, as one JSON-ready dict."""
    claims, attacks = split_attacks(results)
    claims = sorted(claims, key=lambda r: r.id)
    links = correction_links()
    rows = [claim_row(r, attacks.get(r.id), figures_for(r.id, figures), links)
            for r in claims]
    return {"rows": rows,
            "papers": {k: v[1] for k, v in PAPERS.items()},
            "citations": {k: v.plain_citation for k, v in PAPERS.items()},
            # the images themselves are in the page's gallery once, not repeated here
            "figures": {f.name: {"title": f.title, "claims": list(f.claims)} for f in figures}}


def script_json(data) -> str:
    """JSON safe inside ``<script type="application/json">`` (no ``</script>`` breaks out)."""
    text = json.dumps(data, separators=(",", ":"), default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def load_figure(png: Path) -> Figure:
    """A PNG and its ``.json`` record (title, claims) as an embeddable :class:`Figure`."""
    png = Path(png)
    meta = {}
    meta_path = png.with_suffix(".json")
    if meta_path.exists():
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except ValueError:
            log.warning("%s: unreadable figure record, figure shown without claims", meta_path)
    return Figure(name=str(meta.get("name", png.stem)), title=str(meta.get("title", png.stem)),
                  claims=tuple(meta.get("claims", ())), src=png_data_uri(png))


def png_data_uri(png: Path, width: int = FIGURE_WIDTH) -> str:
    """The PNG downscaled to at most ``width`` pixels (256-colour palette) as a data URI."""
    from PIL import Image

    with Image.open(png) as image:
        image = image.convert("RGB")
        if image.width > width:
            image = image.resize((width, round(image.height * width / image.width)),
                                 Image.Resampling.LANCZOS)
        buffer = io.BytesIO()
        image.quantize(256).save(buffer, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
