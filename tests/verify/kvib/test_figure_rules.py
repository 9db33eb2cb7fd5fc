"""The rules, fixed before the runs, of K-Vib's figure re-runs (kind reproduction): the
interval rule of Fig. 6's slopes (verify/kvib/online_claims.interval_rule) and Fig. 3(c)'s
z-test. Shown, contradicted and undecided are each reached, a failed rejection is never a
failure of the effect, and a planted defect (the baselines' regret flat in K, a gamma grid
with no spread) moves the claims' verdicts."""

import numpy as np
import pytest

import verify.kvib.fig3 as fig3
import verify.kvib.fig6 as fig6
from flbounds.ledger.api.result import Evidence, Tolerance
from verify.kvib.online_claims import interval_rule

RNG = np.random.default_rng(0)


def _ev(rule, effect):
    return Evidence(measured=rule["measured"], theoretical=0.0, relation=effect,
                    undecided=rule["undecided"], tolerance=Tolerance.exact("test"))


@pytest.mark.parametrize("effect", ["<=", ">="])
def test_interval_rule_shown_contradicted_undecided(effect):
    sign = -1.0 if effect == "<=" else 1.0
    shown = interval_rule({"a": sign * (1 + 0.01 * RNG.normal(size=500))}, 0.0, alpha=0.05,
                          effect=effect)
    against = interval_rule({"a": sign * (1 + 0.01 * RNG.normal(size=500)),
                             "b": -sign * (1 + 0.01 * RNG.normal(size=500))}, 0.0,
                            alpha=0.05, effect=effect)
    straddle = interval_rule({"a": RNG.normal(size=500)}, 0.0, alpha=0.05, effect=effect)
    assert shown["shown"] and _ev(shown, effect).verdict() == "holds"
    assert against["contradicted"] and _ev(against, effect).verdict() == "violated"
    assert _ev(straddle, effect).verdict() == "inconclusive"
    assert "half-widths" in straddle["undecided"]
    with pytest.raises(ValueError, match="effect"):
        interval_rule({"a": np.zeros(3)}, 0.0, alpha=0.05, effect="<")


def test_flat_baselines_would_reproduce_fig6(monkeypatch):
    """Planted: every regret curve flat in K (as Fig. 6 draws the baselines). Then the
    baselines' claim is no longer not-reproduced, and K-Vib's flat curve is not steeper."""
    flat = lambda rng, fb, ks, n_rounds, n_seeds: {  # noqa: E731
        k: 5.0 * (1 + 0.01 * rng.random((n_seeds, len(ks)))) for k in ("vrb", "mabs", "kvib")}
    monkeypatch.setattr(fig6, "_baseline_regrets", flat)
    kw = dict(n_clients=20, n_rounds=10, ks=(2, 4, 8), n_seeds=6)
    ev = fig6.baselines_regret_in_k(rng=np.random.default_rng(1), **kw)
    assert ev.verdict() != "violated"
    ev = fig6.kvib_steeper_than_baselines(rng=np.random.default_rng(1), **kw)
    assert ev.verdict() != "holds"


def test_gamma_insensitive_grid_would_reproduce_fig3c(monkeypatch):
    """Planted: K-Vib's regret the same at every gamma, well below uniform ISP's: the
    z-test shows the paper's effect."""
    from types import SimpleNamespace
    m = len(fig3.GAMMA_FACTORS)
    stats = SimpleNamespace(mean=np.full(m, 100.0), se=np.full(m, 1.0))
    monkeypatch.setattr(fig3, "_gamma_regrets", lambda *a: (stats, 200.0, 1.0, None))
    ev = fig3.gamma_sensitivity(rng=None, n_clients=5, budget=2, n_rounds=3, n_seeds=2)
    assert ev.verdict() == "holds"
    stats.mean[0] = 2.0   # spread 98, gain 100: within 4 SE of each other
    assert fig3.gamma_sensitivity(rng=None, n_clients=5, budget=2, n_rounds=3,
                                  n_seeds=2).verdict() == "inconclusive"
