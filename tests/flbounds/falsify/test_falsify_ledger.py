"""Attacks as ledger tasks and on the command line: surfaces, verdicts, store/resume, replay."""

from __future__ import annotations

import json

import numpy as np
import pytest

from flbounds.cli import main
from flbounds.falsify import get_surface, surfaces
from flbounds.ledger import PAPERS, get, run_claims
from flbounds.ledger.api.result import to_jsonable

HOLDS = "kvib.lemma2_1.isp_le_rsp_bound"
VIOLATED = "kvib.thm4_1.sigma2_constant_printed"


def test_at_least_40_surfaces_5_per_paper_on_registered_claims():
    table = surfaces()
    assert len(table) >= 40
    for paper in PAPERS:
        assert sum(cid.startswith(paper + ".") for cid in table) >= 5, paper
    for cid, surface in table.items():
        claim = get(cid)                      # every attacked claim exists
        # beside its claim: in the claim's own module, or in the attacks module of its paper
        # or of its result's folder
        package = claim.module.rsplit(".", 1)[0]
        homes = (claim.module, claim.module + ".attacks", package + ".attacks",
                 package.rsplit(".", 1)[0] + ".attacks")
        # or in a further attacks module of the paper (verify.<paper>.attacks_<topic>)
        paper_package = ".".join(claim.module.split(".")[:2])
        assert surface.module in homes or surface.module.startswith(
            paper_package + ".attacks_"), (cid, surface.module)
        assert claim.id == cid


@pytest.mark.parametrize("claim_id", sorted(surfaces()))
def test_every_attack_meets_its_expectation_at_a_small_budget(claim_id):
    """Each attack starts from the claim's fixed instances, so a printed error is already
    violated there; a statement that holds must not be reported violated by the search."""
    task = get("attack:" + claim_id)
    result = task.check(seed=0, profile="budget=12")
    assert result.verdict == result.expected, (result.reason, result.attack)
    assert result.attack["evaluations"] <= 12
    assert result.attack["best_ratio"] >= result.attack["fixed_ratio"]


def test_attack_task_has_the_claim_interface():
    task = get("attack:" + HOLDS)
    claim = get(HOLDS)
    assert task.id == "attack:" + HOLDS and task.paper == claim.paper and task.ref == claim.ref
    assert task.params("budget=50") == {"budget": 50, "method": "cma"}
    assert task.params("quick")["budget"] >= 1 and task.expected_for("quick") == "holds"
    with pytest.raises(ValueError, match="profile"):
        task.params("budget=0")
    with pytest.raises(ValueError, match="attack surface"):
        get("attack:kvib.no_such_claim")
    row = task.check(seed=3, profile="budget=40")
    assert row.id == "attack:" + HOLDS and set(row.attack) >= {
        "fixed_ratio", "best_ratio", "evaluations", "witness", "verdict", "tight"}
    assert row.reason.startswith("attacked: best ratio") and row.verdict == "holds"


def test_planted_bug_turns_a_holding_attack_violated(monkeypatch):
    """A 10% too small RSP bound (a wrong implementation) is caught by the attack."""
    import verify.kvib.attacks as kvib_attacks

    real = kvib_attacks.rsp_bound
    monkeypatch.setattr(kvib_attacks, "rsp_bound", lambda p, a: 0.9 * real(p, a))
    row = get("attack:" + HOLDS).check(seed=0, profile="budget=100")
    assert row.verdict == "violated" and row.attack["best_ratio"] > 1


def test_store_and_resume(store):
    task = get("attack:" + HOLDS)
    first = run_claims([task], profile="budget=30", seed=1, store=store)
    again = run_claims([task], profile="budget=30", seed=1, store=store, resume=True)
    assert again[0].elapsed_s == first[0].elapsed_s       # the stored row, not a rerun
    assert len(store.load()) == 1 and store.load()[0].attack == first[0].attack


def test_witness_replays_exactly_through_json():
    row = get("attack:" + VIOLATED).check(seed=0, profile="budget=60")
    surface = get_surface(VIOLATED)
    stored = json.loads(json.dumps(to_jsonable(row.attack)))
    instance = surface.space.coerce(stored["witness"])
    assert surface.ratio(**instance) == stored["best_ratio"] > surface.threshold
    assert "minimal_witness" in stored                      # shrink=True on this surface
    small = surface.space.coerce(stored["minimal_witness"])
    assert surface.ratio(**small) > surface.threshold


def test_falsify_cli_json_and_replay(tmp_path, capsys):
    out = tmp_path / "attacks.json"
    code = main(["falsify", HOLDS, VIOLATED, "--budget", "40", "--quiet",
                 "--results", str(tmp_path / "r"), "--json", str(out)])
    assert code == 0
    rows = {r["id"]: r for r in json.loads(out.read_text())}
    assert set(rows) == {HOLDS, VIOLATED}
    for r in rows.values():
        assert {"id", "best_ratio", "fixed_ratio", "evaluations", "witness", "verdict"} <= set(r)
    assert rows[VIOLATED]["verdict"] == "violated" and rows[HOLDS]["verdict"] == "holds"
    assert "| claim |" in capsys.readouterr().out
    holds_only = tmp_path / "holds.json"
    holds_only.write_text(json.dumps(rows[HOLDS]))
    assert main(["replay", str(holds_only)]) == 0
    # the paper error's witness breaks its bound again, as its claim expects: exit 0
    assert main(["replay", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.count("identical") == 3 and "DIFFERS" not in text and "UNEXPECTED" not in text
    assert "breaks the bound" in text and "claim expected violated" in text
    # a witness that no longer gives its stored ratio does not reproduce: exit 1
    changed = dict(rows[VIOLATED], best_ratio=rows[VIOLATED]["best_ratio"] * 2)
    moved = tmp_path / "moved.json"
    moved.write_text(json.dumps(changed))
    assert main(["replay", str(moved)]) == 1
    assert "DIFFERS" in capsys.readouterr().out


@pytest.mark.parametrize("args", [["falsify", "no.such.claim"], ["falsify", "--budget", "0"],
                                  ["replay", "/no/such/file.json"]])
def test_falsify_usage_errors_exit_2(args, capsys, tmp_path):
    assert main(args + (["--results", str(tmp_path / "r")] if args[0] == "falsify" else [])) == 2
    err = capsys.readouterr().err
    assert err.startswith("flbounds: error:") and err.strip().count("\n") == 0
    assert not (tmp_path / "r").exists()


def test_replay_refuses_a_malformed_witness(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"id": HOLDS, "witness": {"a": [1.0]}}))
    assert main(["replay", str(bad)]) == 2
    assert "witness" in capsys.readouterr().err


def test_attacks_are_not_part_of_check():
    from flbounds.ledger import select

    assert not any(c.id.startswith("attack:") for c in select())
    ratio, ordered = get_surface(HOLDS).fixed_ratio()
    assert np.isfinite(ratio) and len(ordered) == 1


def _attack_numbers(results):
    return [(r.id, r.attack["best_ratio"], r.attack["evaluations"],
             json.dumps(r.attack["witness"], sort_keys=True)) for r in results]


def test_pool_and_dask_run_attacks_identically():
    distributed = pytest.importorskip("distributed")
    tasks = [get("attack:" + HOLDS), get("attack:" + VIOLATED)]
    serial = run_claims(tasks, profile="budget=40", seed=2, workers=1)
    pooled = run_claims(tasks, profile="budget=40", seed=2, workers=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        remote = run_claims(tasks, profile="budget=40", seed=2, scheduler=client)
    assert _attack_numbers(serial) == _attack_numbers(pooled) == _attack_numbers(remote)


@pytest.mark.parametrize("pep, tight", [(lambda: 1.0, True), (lambda: 0.5, False),
                                        (None, None), (lambda: 1 / 0, None)])
def test_tight_marks_an_attack_within_1e3_of_the_pep_worst_case(pep, tight):
    import dataclasses

    from flbounds.falsify.task import AttackTask

    surface = dataclasses.replace(get_surface(HOLDS), pep=pep)   # sup of this ratio is 1
    row = AttackTask(surface=surface, claim=get(HOLDS)).check(seed=0, profile="budget=400")
    assert row.attack["best_ratio"] > 0.999 and row.attack["tight"] is tight
    assert ("pep_error" in row.attack) == (pep is not None and tight is None)


def test_an_attack_on_an_unknown_claim_id_fails_clearly(monkeypatch, capsys):
    import sys

    from flbounds.falsify import Box, attack_surface

    surfaces_module = sys.modules["flbounds.falsify.surfaces"]  # not the function

    monkeypatch.setattr(surfaces_module, "_SURFACES", dict(surfaces_module._SURFACES))

    @attack_surface("kvib.lemma2_1.no_such_claim", space={"a": Box(0.0, 1.0)})
    def misspelt(*, a):
        return a

    with pytest.raises(ValueError, match=r"unknown claims .*kvib\.lemma2_1\.no_such_claim "
                                         r"\(in tests\.flbounds\.falsify"):
        surfaces()
    assert main(["falsify", "kvib"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("flbounds: error: attack surfaces registered on unknown claims")
    assert err.count("\n") == 1
