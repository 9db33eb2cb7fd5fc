"""The README stays true: counts regenerate, Tour commands parse, screenshots exist."""

import re
import shlex
from pathlib import Path

import pytest

from flbounds.cli import build_parser
from flbounds.ledger import load_all
from flbounds.ledger.reports.readme import render

README = Path(__file__).resolve().parents[1] / "README.md"


def test_generated_counts_are_fresh():
    text = README.read_text(encoding="utf-8")
    assert render(text) == text, "stale README counts: run python -m flbounds.ledger.reports.readme"


def test_claim_counts_in_prose_match_the_registry():
    text = README.read_text(encoding="utf-8")
    n_claims = len(load_all())
    # a count tied to a date ("266 claims on 2026-11-22") is a dated measurement
    for match in re.finditer(r"\b(\d+) claims\b(?! on \d{4}-)", text):
        assert int(match.group(1)) == n_claims, f"README says {match.group(0)!r}"


def _tour_commands() -> list[list[str]]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Tour", 1)[1].split("\n## ", 1)[0]
    block = section.split("```", 2)[1]
    return [shlex.split(line.split("#", 1)[0])[1:] for line in block.splitlines()
            if line.startswith("flbounds ")]


def test_tour_has_seven_commands_that_parse():
    commands = _tour_commands()
    assert len(commands) == 7
    parser = build_parser()
    for argv in commands:
        args = parser.parse_args(argv)
        if args.command in ("list", "check"):
            from flbounds.ledger import select

            select(args.patterns)  # every pattern names claims that exist
        if args.command == "show":
            from flbounds.ledger.api.results import get as get_result

            get_result(args.claim_id)  # a declared result
        if args.command == "figures":
            from flbounds.ledger.api.figures import select_figures

            select_figures(args.names)


@pytest.mark.parametrize("image", re.findall(r"!\[[^\]]*\]\(([^)]+)\)",
                                             README.read_text(encoding="utf-8")))
def test_readme_images_exist(image):
    assert (README.parent / image).is_file(), image


def test_library_example_prints_the_numbers_its_comments_state():
    import contextlib
    import io

    text = README.read_text(encoding="utf-8")
    code = text.split("## Using the library", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    printed = [float(x) for x in re.findall(r"-?\d+(?:\.\d*)?(?:e-?\d+)?", out.getvalue())]
    for line in code.splitlines():
        if "#" not in line or "print(" not in line and "=" not in line:
            continue
        comment = line.split("#", 1)[1].rsplit(": ", 1)[-1]
        for number in re.findall(r"-?\d+\.\d+", comment):
            value = float(number)
            digits = len(number.split(".")[1])  # the comment's rounding
            assert any(abs(p - value) <= 0.5 * 10.0 ** -digits for p in printed), number
