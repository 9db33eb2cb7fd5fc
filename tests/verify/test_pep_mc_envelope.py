"""The Monte Carlo claims measured against the PEP worst case catch a biased implementation
that the printed rate lets through."""

from types import SimpleNamespace

import pytest

from flbounds.ledger import get


def _offset(run, offset):
    def biased(*args, **kwargs):
        trace = run(*args, **kwargs)
        return SimpleNamespace(x=trace.x + offset)
    return biased


@pytest.mark.parametrize("offset, verdict", [(0.0, "holds"), (1e-4, "violated")])
def test_biased_safari_crosses_the_pep_envelope(monkeypatch, offset, verdict):
    import importlib
    mod = importlib.import_module("flbounds.algorithms.safari")
    monkeypatch.setattr(mod, "safari", _offset(mod.safari, offset))
    res = get("safari.thm5.mc_below_worst_case").check(seed=0)
    assert res.verdict == verdict, res.details
    printed_final = 27 * res.details["rho_printed"] ** 300
    assert res.details["final_mean"] < printed_final  # the printed envelope lets it through


@pytest.mark.parametrize("offset, verdict", [(0.0, "holds"), (1e-4, "violated")])
def test_biased_fedavg_crosses_the_pep_envelope(monkeypatch, offset, verdict):
    from verify.focus.thm3 import worst_case
    monkeypatch.setattr(worst_case, "fedavg", _offset(worst_case.fedavg, offset))
    res = get("focus.cor3.mc_below_worst_case").check(seed=0)
    assert res.verdict == verdict, res.details
