"""Synthetic ledger rows for the report and browser tests (no claim is run)."""

from __future__ import annotations

from dataclasses import dataclass, field

from flbounds.ledger.api.registry import PAPERS
from flbounds.ledger.api.result import CheckResult

VERSIONS = {"flbounds": "0.1.0", "python": "3.11.7"}


@dataclass(frozen=True)
class ExtendedResult(CheckResult):
    """A result with the optional fields other parts of the toolkit add (see the report)."""

    hypotheses: dict = field(default_factory=dict)
    attack: dict = field(default_factory=dict)
    worst_case: dict = field(default_factory=dict)
    git_commit: str = ""
    started: str = ""
    finished: str = ""


def make_result(claim_id: str, **overrides) -> CheckResult:
    """One plausible :class:`CheckResult`; ``overrides`` replace any field."""
    key = claim_id.removeprefix("attack:").split(".")[0]
    fields = dict(id=claim_id, paper=PAPERS[key][0], ref="Thm 1",
                  kind="statement", statement=f"statement of {claim_id}",
                  measured=[0.5, 0.25], theoretical=[1.0, 1.0], relation="<=",
                  tolerance={"value": 0.0, "name": "exact", "derivation": "closed forms"},
                  verdict="holds", expected="holds",
                  reproducer=f"flbounds check {claim_id} --profile quick --seed 0",
                  params={"n_clients": 4}, seed=0, elapsed_s=0.125, versions=VERSIONS,
                  details={"slope": -1.02, "instance": {"a": [1.0, 2.0]}}, task_key="k" * 20)
    fields.update(overrides)
    return ExtendedResult(**fields)


def synthetic_results(n_rows: int) -> list[CheckResult]:
    """``n_rows`` claims over the papers, kinds and verdicts (three of them marked) + an attack:

    ``focus.marked.needle`` (a unique word, hypotheses, an unexpected verdict),
    ``kvib.marked.script`` (markup in its statement) and ``safari.marked.attacked``
    (joined with an ``attack:`` row).
    """
    papers = list(PAPERS)
    kinds = ("statement", "proof-step", "example", "remark")
    verdicts = ("holds", "holds", "violated", "not-applicable")
    rows = []
    for i in range(n_rows - 3):
        verdict = verdicts[i % len(verdicts)]
        rows.append(make_result(f"{papers[i % len(papers)]}.claim{i:04d}.check",
                                kind=kinds[i % len(kinds)], verdict=verdict, expected=verdict,
                                measured=[float(i), float(i) / 2]))
    rows.append(make_result("focus.marked.needle", statement="a zebra appears in this claim",
                            verdict="violated", expected="holds", reason="planted mismatch",
                            hypotheses={"step <= 1/(8L)": True, "step 10x": "left on purpose"}))
    rows.append(make_result("kvib.marked.script",
                            statement="</script><script>window.broken=1</script> & <b>x</b>"))
    rows.append(make_result("safari.marked.attacked"))
    rows.append(make_result("attack:safari.marked.attacked", kind="statement",
                            attack={"best_ratio": 0.93, "evaluations": 400, "tight": False,
                                    "verdict": "no counterexample"}))
    return rows
