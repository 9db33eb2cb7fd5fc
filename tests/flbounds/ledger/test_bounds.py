"""The printed-bound registry and the ``flbounds bound`` calculator."""

import json

import numpy as np
import pytest

from flbounds.cli import main
from flbounds.ledger import bounds
from verify.focus.instances import thm1a_step_printed, thm1b_step


def test_admissible_step_is_the_claims_step_and_names_the_binding_term():
    thm = bounds.get("focus.thm1a")
    p = np.array([0.3, 0.5, 0.7, 0.9])
    value = thm.evaluate(mu=1.0, L=2.0, p=p, tau=3)
    from verify.focus.thm1 import q_min_of
    assert value.admissible_step == thm1a_step_printed(1.0, 2.0, 4, 3, q_min_of(p))
    assert value.binding == "q_min^{3/2}/(8L sqrt N)"
    assert value.value == pytest.approx(1 - value.step * 4 / 2)


def test_step_above_the_conditions_is_flagged():
    value = bounds.get("focus.thm1b").evaluate(beta=1.0, L=2.0, p=[0.5, 0.5], tau=2, step=1.0)
    assert not value.within_conditions
    from verify.focus.thm1 import q_min_of
    assert value.admissible_step == thm1b_step(1.0, 2.0, 2, 2, q_min_of([0.5, 0.5]))
    assert value.corrected == pytest.approx(1 - 1.0 * 2 / 4)


def test_thm3_calls_the_claims_formulas():
    from verify.focus.thm3 import thm3_corrected, thm3_printed
    value = bounds.get("focus.thm3").evaluate(mu=0.5, L=2.0, tau=3, delta_q2=0.2, sigma_g2=1.0,
                                               step=0.01)
    assert value.value == thm3_printed(0.01, 3, 0.5, 2.0, 0.2, 1.0)
    assert value.corrected == thm3_corrected(0.01, 3, 0.5, 2.0, 0.2, 1.0)


@pytest.mark.parametrize("values, name", [
    (dict(L=2.0, p=[0.5], tau=3), "mu"),
    (dict(mu=1.0, L=2.0, p=[0.5, 1.5], tau=3), "p"),
    (dict(mu=1.0, L=2.0, p=[0.5], tau=0), "tau"),
    (dict(mu=3.0, L=2.0, p=[0.5], tau=1), "L"),
    (dict(mu=1.0, L=2.0, p=[0.5], tau=1, step=-1.0), "step"),
    (dict(mu=1.0, L=2.0, p=[0.5], tau=1, zeta=1.0), "zeta"),
])
def test_bad_constants_name_the_constant(values, name):
    with pytest.raises(ValueError, match=name):
        bounds.get("focus.thm1a").evaluate(**values)


def test_cli_bound_text_json_and_list(capsys):
    assert main(["bound", "focus.thm1a", "mu=1", "L=2", "p=0.3,0.5,0.7,0.9", "tau=3"]) == 0
    out = capsys.readouterr().out
    assert "binding: q_min^{3/2}/(8L sqrt N)" in out and "printed:" in out
    assert main(["bound", "focus.thm1a", "mu=1", "L=2", "p=0.3,0.5,0.7,0.9", "tau=3",
                 "step=0.001", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["step"] == 0.001 and row["value"] == pytest.approx(1 - 0.001 * 4 / 2)
    assert main(["bound", "--list"]) == 0
    assert "focus.thm1a" in capsys.readouterr().out


@pytest.mark.parametrize("argv, word", [
    (["bound", "focus.thm1a", "mu=1", "L=2", "tau=3"], "'p'"),
    (["bound", "focus.thm1a", "mu=1", "L=2", "p=0.3,x", "tau=3"], "p must be"),
    (["bound", "focus.nope"], "unknown bound"),
    (["bound", "focus.thm1a", "mu"], "KEY=VALUE"),
    (["bound"], "bound ID"),
])
def test_cli_bound_usage_errors_exit_2_one_line(capsys, argv, word):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert word in err and err.count("\n") == 1


EXAMPLES = {
    "focus.thm1a": dict(mu=1, L=2, p=[0.3, 0.5], tau=3),
    "focus.thm1a.proof": dict(mu=1, L=2, p=[0.3, 0.5], tau=3),
    "focus.thm1b": dict(beta=1, L=2, p=[0.3, 0.5], tau=3),
    "focus.thm1c": dict(L=2, p=[0.3, 0.5], tau=3, R=100, gap0=1.0),
    "focus.thm3": dict(mu=1, L=2, tau=3, delta_q2=0.1, sigma_g2=1.0),
    "focus.cor3.rate": dict(mu=1, L=2, tau=3),
    "safari.thm1": dict(n_clients=10, n_participating=5, n_samples=1),
    "safari.thm4": dict(L=1, local_steps=2, n_sampled=2, q=0.5, R=100, delta_f=1, sigma2=1,
                        sigma_s2=1, sigma_G2=1),
    "safari.thm5": dict(mu=1, L=2, local_steps=2, n_sampled=2, q=0.5, R=100, dist0=1,
                        sigma2=1, sigma_s2=1, sigma_G2=1),
    "kvib.thm4_1": dict(M=1, L=1, T=1000, sigma2=1, beta1=0.1, gamma=1),
    "kvib.thm5_1": dict(T=1000, K=2, Pi_star=3, V=[1, 2, 3]),
    "kvib.lemma_b5": dict(r0=2, b=1, e=1, d=8, T=100),
    "kvib.thm_d1": dict(N=4, G=1, zbar=1, K=2, root=3),
    "kvib.thm5_2": dict(N=100, T=1000, K=4, G=0.1, zbar=3, root=30),
    "kvib.lemma_b6": dict(R=5, eta_l=0.025, sigma_l2=0, sigma_g2=99, grad2=1),
    "kvib.lemma2_1.isp": dict(p=[0.25, 0.75, 1.0], a=[1, 3, 6]),
    "kvib.lemma2_1.rsp": dict(p=[0.25, 0.75, 1.0], a=[1, 3, 6]),
    "fedals.thm4_1": dict(mu=1, L=4, G=[0.1, 0.2], D=[0.05, 0.05], w=[0.5, 0.5]),
    "subtrunc.thm1": dict(L=1, f0=2, K=100, E=2, n=10, sigma2=1, gamma=0.01),
}


def test_every_registered_bound_evaluates_at_an_example():
    table = bounds.load_all()
    assert set(table) == set(EXAMPLES)
    for bid, values in EXAMPLES.items():
        value = table[bid].evaluate(**values)
        assert np.isfinite(value.value) and value.value >= 0, bid
        if table[bid].uses_step:
            assert value.step == value.admissible_step and value.binding in value.conditions
