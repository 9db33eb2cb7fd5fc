"""Which stored rows a report shows, and the sentences that say so.

A store may hold rows of several profiles, seeds and code versions. A report shows one
(profile, seed): by default that of the latest complete run, else the one asked for; the
latest row per claim within it. It never mixes seeds, and it states what it shows: the
(profile, seed) and why, the code versions (git commits) the rows come from, and which
other (profile, seed) pairs the store holds.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import NamedTuple

from ..api.result import CheckResult
from ..engine.store import Run, StoredRow


class Selection(NamedTuple):
    """The rows a report shows and the lines that state their provenance."""

    profile: str
    seed: int
    results: list[CheckResult]
    lines: list[str]


def select_rows(records: list[StoredRow], runs: list[Run], *, profile: str | None = None,
                seed: int | None = None) -> Selection:
    """Choose (profile, seed) and the latest row per claim in it (see the module docstring).

    Raises ``ValueError`` (naming ``--profile``/``--seed``) when nothing is stored for it.
    """
    pairs = Counter((r.result.profile, r.result.seed) for r in records)
    if not pairs:
        raise ValueError("no readable results in the store: run 'flbounds check' first")
    chosen, why = _choose(records, runs, profile, seed)
    if chosen not in pairs:
        stored = ", ".join(f"{p} seed {s}" for p, s in sorted(pairs))
        raise ValueError(f"--profile/--seed: no results for profile {chosen[0]} seed "
                         f"{chosen[1]} (stored: {stored})")
    latest: dict[str, StoredRow] = {}
    for r in records:
        if (r.result.profile, r.result.seed) == chosen:
            latest[r.result.id] = r
    shown = [latest[k] for k in sorted(latest)]
    lines = [f"Rows: profile {chosen[0]}, seed {chosen[1]} ({why}); the latest stored row "
             f"of each of {len(shown)} claims."]
    lines += _code_lines(shown)
    others = sorted((p, s) for p, s in pairs if (p, s) != chosen)
    if others:
        lines.append("Also stored, not shown (choose with --profile/--seed): "
                     + ", ".join(f"{p} seed {s} ({pairs[(p, s)]} rows)" for p, s in others)
                     + ".")
    return Selection(chosen[0], chosen[1], [r.result for r in shown], lines)


def _choose(records, runs, profile, seed) -> tuple[tuple[str, int], str]:
    complete = [r for r in runs if r.status == "complete"
                and (profile is None or r.profile == profile)
                and (seed is None or r.seed == seed)]
    if complete:
        run = max(complete, key=lambda r: r.ended or r.started)
        why = "chosen with --profile/--seed" if profile is not None or seed is not None \
            else "the latest complete run's"
        return (run.profile, run.seed), f"{why}: run {run.run_id}, finished {_when(run.ended)}"
    matching = [r.result for r in records if (profile is None or r.result.profile == profile)
                and (seed is None or r.result.seed == seed)]
    if matching:
        last = matching[-1]
        why = "chosen with --profile/--seed" if profile is not None or seed is not None \
            else "no complete run is stored: those of the latest stored row"
        return (last.profile, last.seed), why
    return (profile or "quick", 0 if seed is None else seed), "as asked"


def _code_lines(shown: list[StoredRow]) -> list[str]:
    commits = Counter(r.result.git_commit or "unknown" for r in shown)
    versions = Counter(r.result.versions.get("flbounds", "?") for r in shown)
    text = ", ".join(f"{c} ({n} rows)" for c, n in commits.most_common())
    lines = [f"Code: git commit {text}; flbounds "
             + ", ".join(f"{v} ({n} rows)" for v, n in versions.most_common()) + "."]
    if len(commits) > 1:
        main = commits.most_common(1)[0][0]
        odd = [r.result.id for r in shown if (r.result.git_commit or "unknown") != main]
        lines.append(f"Rows from another commit than {main}: " + ", ".join(odd[:20])
                     + (f" and {len(odd) - 20} more" if len(odd) > 20 else "") + ".")
    return lines


def _when(epoch: float | None) -> str:
    if epoch is None:
        return "at an unknown time"
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M UTC")
