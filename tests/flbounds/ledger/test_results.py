"""Results, parts and hypothesis predicates (flbounds.ledger.api.results) and the registry's
``result=`` / ``parts=`` / ``outside=``: the ledger's rule on hand-made instances, the
declaration errors, and attack surfaces that reject points by the same predicates.

Everything is declared under the test paper key ``testpaper`` in the ``ledger_sandbox``
(tests/flbounds/conftest.py), which restores the registries afterwards.
"""

import numpy as np
import pytest

import flbounds.ledger.api.registry as registry
import flbounds.ledger.api.results as results
from flbounds.falsify.search import search, validator_rejects
from flbounds.falsify.spaces import Box, Space
from flbounds.falsify.surfaces import Surface
from flbounds.ledger import Evidence, Tolerance, claim, hypothesis
from flbounds.ledger.api.judge import judge, verdict_under
from flbounds.ledger.api.results import result

RATE = "testpaper.lemma1:rate"
CONSTANT = "testpaper.lemma1:constant"


@hypothesis("A1", "every client participates: q_i in (0, 1]")
def a1(*, q):
    q = np.asarray(q, dtype=float)
    return bool(np.all((q > 0) & (q <= 1)))


@hypothesis("step", "eta <= 1/L")
def step_condition(*, step, L):
    return step <= 1 / L


@hypothesis("tau", "tau >= 2 local steps")
def two_steps(*, tau):
    return tau >= 2


@pytest.fixture
def lemma1(ledger_sandbox):
    """``testpaper.lemma1``: parts rate and constant; A1 on both, step and tau on rate only."""
    return result("testpaper.lemma1", ref="Lemma 1", title="a test lemma",
                  parts={"rate": "x_{r+1} <= (1 - eta mu) x_r",
                         "constant": ("c = 2", "a printed constant no claim reads")},
                  hypotheses=(a1, step_condition.only("rate"), two_steps.only("rate")))


GOOD = dict(q=[0.5, 1.0], step=0.1, L=2.0, tau=3)


def evidence(measured, instance, **kw):
    return Evidence(measured, 1.0, "<=", Tolerance.exact(), instance=instance, **kw)


# --- the declaration -------------------------------------------------------------------

def test_result_declares_parts_and_scoped_hypotheses(lemma1):
    assert lemma1.paper_key == "testpaper" and lemma1.kind == "lemma"
    assert list(lemma1.parts) == ["rate", "constant"]
    assert lemma1.parts["constant"].unchecked == "a printed constant no claim reads"
    assert lemma1.parts["rate"].unchecked == ""
    assert [h.name for h in lemma1.hypotheses_for(["rate"])] == ["A1", "step", "tau"]
    assert [h.name for h in lemma1.hypotheses_for(["constant"])] == ["A1"]
    assert step_condition.needs == ("step", "L")
    assert lemma1.part("rate") == RATE
    assert results.declared_results()["testpaper.lemma1"] is lemma1
    assert lemma1.module == __name__


def test_result_without_parts_has_one_statement_part(lemma1):
    r = result("testpaper.remark2", ref="Remark 2", title="a remark")
    assert list(r.parts) == ["statement"] and r.parts["statement"].text == "a remark"
    assert r.kind == "remark"


@pytest.mark.parametrize("ref, kind", [("Thm 1(a), eq. (23)", "theorem"),
                                       ("Corollaries 1-2", "corollary"),
                                       ("Fig. 3", "figure"), ("Eqs. (3)-(5)", "equation"),
                                       ("Appendix C", "section")])
def test_kind_is_read_from_the_ref(lemma1, ref, kind):
    assert result("testpaper.r", ref=ref, title="t").kind == kind


def test_evaluate_on_one_instance(lemma1):
    assert lemma1.evaluate(GOOD) == {"A1: every client participates: q_i in (0, 1]": True,
                                     "step: eta <= 1/L": True, "tau: tau >= 2 local steps": True}
    out = lemma1.evaluate(dict(GOOD, step=1.0, tau=1))
    assert out["step: eta <= 1/L"] is False and out["tau: tau >= 2 local steps"] is False
    assert lemma1.evaluate({"q": [0.5]}, parts=["rate"])["step: eta <= 1/L"] is None
    with pytest.raises(ValueError, match="instance must be a mapping"):
        a1.evaluate([("q", 1.0)])


def test_a_predicate_that_returns_nothing_is_an_error_not_a_false_hypothesis():
    @hypothesis("broken", "forgets to return")
    def broken(*, q):
        q > 0  # noqa: B015

    with pytest.raises(ValueError, match="'broken'.*returned None"):
        broken.evaluate({"q": 1.0})


# --- the ledger's rule: judge and verdict_under ------------------------------------------

def test_false_hypothesis_makes_any_verdict_not_applicable_and_names_it(lemma1):
    j = judge([RATE], dict(GOOD, step=1.0), {})
    assert j.failed == ("step: eta <= 1/L",) and j.unevaluated == ()
    assert j.table["step: eta <= 1/L"] is False and j.table["tau: tau >= 2 local steps"] is True
    for raw in ("holds", "violated"):
        verdict, why = verdict_under(raw, j)
        assert verdict == "not-applicable"
        assert "step: eta <= 1/L fails on the instance" in why
    assert verdict_under("error", j) == ("error", "")


def test_violated_needs_every_hypothesis_evaluated(lemma1):
    j = judge([RATE], {"q": [0.5, 1.0], "step": 0.1, "L": 2.0}, {})  # no tau
    assert j.failed == () and j.unevaluated == ("tau: tau >= 2 local steps",)
    assert j.table["tau: tau >= 2 local steps"] == "not evaluated: the instance lacks tau"
    verdict, why = verdict_under("violated", j)
    assert verdict == "not-applicable" and "tau: tau >= 2 local steps not shown true" in why
    assert verdict_under("holds", j) == ("holds", "")
    all_true = judge([RATE], GOOD, {})
    assert verdict_under("violated", all_true) == ("violated", "")
    none = judge([RATE], None, {})
    assert set(none.table.values()) == {"not evaluated: the claim reports no instance"}
    assert verdict_under("violated", none)[0] == "not-applicable"


def test_outside_hypothesis_is_reported_and_blocks_violated(lemma1):
    j = judge([RATE], dict(GOOD, step=1.0), {"step": "a step above 1/L on purpose"})
    assert j.failed == () and "step: eta <= 1/L" in j.unevaluated
    assert j.table["step: eta <= 1/L"] == ("outside on purpose: a step above 1/L on purpose "
                                           "(false on the instance)")
    assert verdict_under("holds", j) == ("holds", "")
    verdict, why = verdict_under("violated", j)
    assert verdict == "not-applicable" and "step: eta <= 1/L" in why
    met = judge([RATE], GOOD, {"step": "why"})  # outside, and true: still blocks violated
    assert met.table["step: eta <= 1/L"] == "outside on purpose: why"
    assert verdict_under("violated", met)[0] == "not-applicable"


def test_lists_of_instances(lemma1):
    grid = [GOOD, dict(GOOD, tau=1), dict(GOOD, q=[0.2, 0.3])]
    j = judge([RATE], grid, {})
    assert j.failed == ("tau: tau >= 2 local steps",)
    assert judge([RATE], (g for g in [GOOD, GOOD]), {}).failed == ()
    partly = judge([RATE], [GOOD, {"q": [0.5], "step": 0.1, "L": 2.0}], {})
    assert partly.unevaluated == ("tau: tau >= 2 local steps",)
    assert judge([RATE], [], {}).unevaluated == tuple(lemma1.evaluate(GOOD))


def test_only_scopes_a_hypothesis_to_its_parts(lemma1):
    j = judge([CONSTANT], {"q": [0.5]}, {})  # no step, L or tau: they belong to rate only
    assert list(j.table) == ["A1: every client participates: q_i in (0, 1]"]
    assert verdict_under("violated", j) == ("violated", "")
    assert judge((p for p in [CONSTANT]), {"q": [2.0]}, {}).failed == (
        "A1: every client participates: q_i in (0, 1]",)


def test_parts_of_two_results_label_hypotheses_by_result(lemma1):
    result("testpaper.cor2", ref="Corollary 2", title="t", hypotheses=(step_condition,))
    j = judge([RATE, "testpaper.cor2:statement"], dict(GOOD, step=1.0), {})
    assert "testpaper.cor2 step: eta <= 1/L" in j.failed
    assert "testpaper.lemma1 step: eta <= 1/L" in j.failed


# --- claims attached to parts --------------------------------------------------------------

def test_claim_outside_its_hypotheses_comes_out_not_applicable(lemma1):
    @claim("testpaper.lemma1.rate", ref="Lemma 1", kind="statement", statement="-",
           expected="holds", result=lemma1, parts=("rate",), quick=dict(step=0.1))
    def rate(*, rng, step):
        return evidence(2.0, dict(GOOD, step=step))  # 2 > 1: a counterexample

    c = registry.get("testpaper.lemma1.rate")
    assert c.parts == (RATE,) and c.results == ["testpaper.lemma1"]
    assert lemma1.claims() == [c]
    row = c.check(seed=0)
    assert row.verdict == "violated" and all(v is True for v in row.hypotheses.values())
    row = c.check(seed=0, step=1.0)
    assert row.verdict == "not-applicable" and row.hypotheses["step: eta <= 1/L"] is False
    assert row.reason.startswith("outside the result's hypotheses: step: eta <= 1/L")


def test_claim_with_no_parts_checks_every_part_and_qualified_ids_attach(lemma1):
    claim("testpaper.lemma1.all", ref="-", kind="statement", statement="-",
          expected="holds", result=lemma1)(lambda *, rng: None)
    assert registry.get("testpaper.lemma1.all").parts == (RATE, CONSTANT)
    claim("testpaper.lemma1.q", ref="-", kind="statement", statement="-",
          expected="holds", parts=CONSTANT)(lambda *, rng: None)
    assert registry.get("testpaper.lemma1.q").parts == (CONSTANT,)


def test_hypothesis_labels_are_gone_from_the_api(lemma1):
    import flbounds.ledger as ledger

    assert not hasattr(ledger, "declare_hypotheses")
    with pytest.raises(TypeError, match="hypotheses"):
        claim("testpaper.lemma1.x", ref="-", kind="statement", statement="-",
              expected="holds", result=lemma1, hypotheses={"step <= 1/L": True})
    with pytest.raises(TypeError, match="hypotheses"):
        Evidence(0.0, 1.0, "<=", Tolerance.exact(), hypotheses={"step <= 1/L": True})


def test_a_claim_must_attach_to_parts(lemma1):
    with pytest.raises(ValueError, match="attach it to the parts it checks"):
        claim("testpaper.lemma1.bare", ref="-", kind="statement", statement="-",
              expected="holds")


@pytest.mark.parametrize("kw, match", [
    (dict(parts=("nosuch",)), r"has no part 'nosuch'"),
    (dict(parts=("testpaper.nosuch:rate",)), r"part 'testpaper.nosuch:rate' names an "
                                             r"undeclared result"),
    (dict(result=None, parts=("rate",)), r"part 'rate' needs result="),
    (dict(outside={"nosuch": "why"}), r"outside names unknown hypotheses \['nosuch'\]"),
    (dict(outside={"step": ""}), r"outside maps hypothesis names to a reason"),
    (dict(result=None, outside={"step": "why"}), r"attach it to the parts it checks"),
    (dict(result="testpaper.lemma1"), r"result must be a Result"),
    (dict(corrects="testpaper.lemma1.bad"), r"corrects must be the id of another claim"),
    (dict(corrects="nodot"), r"corrects must be the id of another claim"),
])
def test_claim_declaration_errors_name_the_argument(lemma1, kw, match):
    kw = {"result": lemma1, **kw}
    with pytest.raises(ValueError, match=match):
        claim("testpaper.lemma1.bad", ref="-", kind="statement", statement="-",
              expected="holds", **kw)


def test_corrects_must_name_a_registered_claim(lemma1, monkeypatch):
    from flbounds.ledger.api import registry

    claim("testpaper.lemma1.fixed", ref="-", kind="statement", statement="-",
          expected="holds", result=lemma1, corrects="testpaper.lemma1.nosuch")(lambda: None)
    assert registry._REGISTRY["testpaper.lemma1.fixed"].corrects == "testpaper.lemma1.nosuch"
    with pytest.raises(ValueError, match=r"testpaper.lemma1.fixed -> testpaper.lemma1.nosuch"):
        registry._check_corrects()
    del registry._REGISTRY["testpaper.lemma1.fixed"]
    registry._check_corrects()


def _declare(**kw):
    args = dict(ref="Lemma 3", title="t")
    args.update(kw)
    return result(args.pop("id", "testpaper.lemma3"), **args)


@pytest.mark.parametrize("kw, match", [
    (dict(id="testpaper"), r"result id must be '<paper key>.<name>'"),
    (dict(id="Testpaper.lemma3"), r"result id"),
    (dict(id="nosuchpaper.lemma3"), r"paper 'nosuchpaper' is not declared"),
    (dict(ref=" "), r"ref must be a non-empty text"),
    (dict(title=""), r"title must be a non-empty text"),
    (dict(ref="Proof of Lemma 3"), r"kind must be one of"),
    (dict(parts={"a b": "t"}), r"part id must be a word"),
    (dict(parts={"a": ("t",)}), r"parts\['a'\] must be a text or \(text, reason"),
    (dict(parts={"a": 3}), r"parts\['a'\]"),
    (dict(hypotheses=(a1, a1)), r"hypotheses must have distinct names; 'A1' given twice"),
    (dict(hypotheses=("A1: q > 0",)), r"hypotheses must be Hypothesis objects"),
    (dict(hypotheses=(step_condition.only("nosuch"),)),
     r"hypothesis 'step' names unknown parts \['nosuch'\]"),
    (dict(not_checked=None), r"not_checked must be a text"),
])
def test_result_declaration_errors_name_the_argument(lemma1, kw, match):
    with pytest.raises(ValueError, match=match):
        _declare(**kw)


def test_hypothesis_declaration_errors():
    with pytest.raises(ValueError, match="hypothesis name"):
        hypothesis(" ", "w")
    with pytest.raises(ValueError, match="wording"):
        hypothesis("A1", "")
    with pytest.raises(ValueError, match="predicate must be callable"):
        hypothesis("A1", "w")(3)
    with pytest.raises(ValueError, match=r"'A1': only must be part ids"):
        a1.only("a:b")
    assert a1.only("rate").parts == ("rate",)
    assert hypothesis("A1", "w", parts="rate")(lambda *, q: True).parts == ("rate",)


def test_a_single_hypothesis_needs_no_tuple(lemma1):
    assert _declare(hypotheses=a1).hypotheses == (a1,)


def test_a_result_declared_by_two_modules_is_refused(lemma1):
    code = "result('testpaper.lemma1', ref='Lemma 1', title='again')"
    with pytest.raises(ValueError, match="declared twice"):
        exec(code, {"__name__": "another_module", "result": result})
    _declare(id="testpaper.lemma1", ref="Lemma 1")  # the same module re-declares it


# --- attack surfaces reject points by the claim's own predicates -------------------------

def test_attack_surface_instance_rejects_points_where_a_hypothesis_fails(lemma1):
    claim("testpaper.lemma1.rate", ref="Lemma 1", kind="statement", statement="-",
          expected="holds", result=lemma1, parts="rate")(lambda *, rng: None)

    def ratio(*, step):
        return step  # above 1 exactly where the step condition (L = 1) fails

    surface = Surface(claim_id="testpaper.lemma1.rate", ratio=ratio,
                      space=Space.of({"step": Box(0.01, 4.0)}),
                      instance=lambda *, step: dict(q=[0.5], step=step, L=1.0, tau=2))
    valid = surface.effective_validator()
    assert valid(step=0.5) is True
    assert valid(step=2.0) == "step: eta <= 1/L"
    assert validator_rejects(valid, {"step": 2.0}) and not validator_rejects(valid, {"step": .5})
    attack = search(ratio, surface.space, budget=60, seed=0, validator=valid,
                    starts=[{"step": 0.5}])
    assert 0.5 <= attack.best_ratio <= 1.0 and attack.rejected > 0  # never above the limit

    lacking = Surface(claim_id="testpaper.lemma1.rate", ratio=ratio, space=surface.space,
                      instance=lambda *, step: dict(q=[0.5], step=step, L=1.0))
    assert lacking.effective_validator()(step=0.5) == "tau: tau >= 2 local steps"

    own = Surface(claim_id="testpaper.lemma1.rate", ratio=ratio, space=surface.space,
                  instance=surface.instance, validator=lambda *, step: step > 0.2 or "low")
    assert own.effective_validator()(step=0.1) == "low"
    assert own.effective_validator()(step=2.0) == "step: eta <= 1/L"


def _unattached(cid):
    """A claim built without parts (claim() refuses one; a hand-built Claim can lack them)."""
    return registry.Claim(id=cid, ref="-", kind="statement", statement="-", expected="holds",
                          func=lambda *, rng: None)


def test_attack_surface_instance_needs_an_attached_claim(lemma1, monkeypatch):
    monkeypatch.setitem(registry._REGISTRY, "testpaper.lemma1.free",
                        _unattached("testpaper.lemma1.free"))
    surface = Surface(claim_id="testpaper.lemma1.free", ratio=lambda *, step: step,
                      space=Space.of({"step": Box(0.01, 4.0)}),
                      instance=lambda *, step: {"step": step})
    with pytest.raises(ValueError, match="instance= needs the claim to be attached"):
        surface.effective_validator()


def test_the_task_key_follows_the_module_that_declares_the_result(lemma1, monkeypatch):
    """--resume must not reuse a verdict judged by predicates that changed since, even when
    the claim's module does not import the result's module."""
    from flbounds.ledger.api import taskkey

    elsewhere = {"__name__": "some_results_module", "result": result, "a1": a1}
    exec("R = result('testpaper.lemma5', ref='Lemma 5', title='t', hypotheses=(a1,))", elsewhere)
    claim("testpaper.lemma5.x", ref="-", kind="statement", statement="-", expected="holds",
          parts="testpaper.lemma5:statement")(lambda *, rng: None)
    attached, free = registry.get("testpaper.lemma5.x"), _unattached("testpaper.free")
    assert attached.result_modules == ("some_results_module",) and free.result_modules == ()
    digests = {__name__: "a", "some_results_module": "b"}
    monkeypatch.setattr(taskkey, "code_digest", lambda module: digests[module])
    before = taskkey.task_key(attached, "quick", 0), taskkey.task_key(free, "quick", 0)
    digests["some_results_module"] = "b2"  # a predicate was edited
    assert taskkey.task_key(attached, "quick", 0) != before[0]
    assert taskkey.task_key(free, "quick", 0) == before[1]


def test_a_predicate_may_be_any_callable():
    class AtMost:  # unhashable (eq without hash): its signature is read uncached
        __hash__ = None

        def __call__(self, *, step, L):
            return np.array([step <= 1 / L, True])

    h = hypothesis("step", "eta <= 1/L")(AtMost())
    assert h.needs == ("step", "L") and h.evaluate({"step": 0.1, "L": 2.0}) is True
    assert hypothesis("all", "reads everything")(lambda **kw: len(kw) == 2).evaluate(
        {"a": 1, "b": 2}) is True
