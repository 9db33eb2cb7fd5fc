r"""The ledger's reading of a claim's hypotheses: every hypothesis of the result parts a claim
checks, evaluated on the instances its evidence carries, and the verdict that follows.

- a hypothesis false on any instance makes the claim ``not-applicable`` (naming it), unless
  the claim declares it ``outside`` on purpose (then it is reported, not enforced);
- ``violated`` needs every hypothesis of its parts evaluated and true on every instance,
  those declared ``outside`` included: a verdict that accuses a paper must rest on an
  instance that meets the printed statement's hypotheses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .results import Hypothesis, Result, declared_results


def claim_hypotheses(parts: Iterable[str]) -> list[tuple[Result, Hypothesis]]:
    """Every (result, hypothesis) that applies to the qualified ``parts`` of a claim."""
    by_result: dict[str, list[str]] = {}
    for q in parts:
        rid, pid = q.split(":", 1)
        by_result.setdefault(rid, []).append(pid)
    out = []
    for rid, pids in by_result.items():
        res = declared_results()[rid]
        out += [(res, h) for h in res.hypotheses_for(pids)]
    return out


@dataclass(frozen=True)
class Judgement:
    """The ledger's reading of a claim's hypotheses on its instances.

    ``table``: hypothesis label -> True / False / text (why not evaluated, or why the claim
    is outside it on purpose), as stored in a result row. ``failed``: labels false on some
    instance and not declared outside. ``unevaluated``: labels that could not be evaluated
    on some instance, and those declared outside (neither may support ``violated``).
    """

    table: dict
    failed: tuple[str, ...]
    unevaluated: tuple[str, ...]


def judge(parts: Iterable[str], instances, outside: Mapping[str, str]) -> Judgement:
    """Evaluate the hypotheses of ``parts`` on ``instances`` (a mapping or a list of them)."""
    parts = tuple(parts)  # read twice below: a generator would be empty the second time
    if instances is None:
        instances = []
    elif isinstance(instances, Mapping):
        instances = [instances]
    else:
        instances = list(instances)
    table, failed, unevaluated = {}, [], []
    for res, h in claim_hypotheses(parts):
        label = h.label if len({q.split(':', 1)[0] for q in parts}) == 1 \
            else f"{res.id} {h.label}"
        values = [h.evaluate(inst) for inst in instances]
        if h.name in outside:
            table[label] = f"outside on purpose: {outside[h.name]}"
            unevaluated.append(label)
            if any(v is False for v in values):
                table[label] += " (false on the instance)"
            continue
        if any(v is False for v in values):
            table[label] = False
            failed.append(label)
        elif not values or any(v is None for v in values):
            lacking = sorted({n for inst in instances for n in h.missing(inst)})
            table[label] = ("not evaluated: the claim reports no instance" if not values
                            else f"not evaluated: the instance lacks {', '.join(lacking)}")
            unevaluated.append(label)
        else:
            table[label] = True
    return Judgement(table, tuple(failed), tuple(unevaluated))


def verdict_under(raw: str, judgement: Judgement) -> tuple[str, str]:
    """The verdict after the hypotheses (and the reason it changed, or '')."""
    if raw in ("error", "not-applicable"):
        return raw, ""
    if judgement.failed:
        return "not-applicable", ("outside the result's hypotheses: "
                                  + "; ".join(judgement.failed) + " fails on the instance")
    if raw == "violated" and judgement.unevaluated:
        return "not-applicable", ("cannot accuse the paper: " + "; ".join(
            judgement.unevaluated) + " not shown true on the instance")
    return raw, ""
