"""K-Vib eq. (36)'s weights for flbounds.pep.descent (verify.kvib.pep_conditions): the closed
form at R = 1, bad input, and the tightness claim with and without a planted bug."""

import pytest

from flbounds.ledger import get
from flbounds.pep import descent as descent_module
from flbounds.pep import gap_tolerance
from verify.kvib.pep_conditions import eq36_descent_rate


@pytest.mark.parametrize("step", [0.0625, 0.125, 0.25])
def test_one_local_step_matches_the_descent_lemma(step):
    """R = 1: f(x) - f(x+) >= eta (1 - L eta/2)||g||^2, attained by f = -L x^2/2 locally."""
    res = eq36_descent_rate(1.0, 1, step)
    expected = (1 - 10 * step**2) / (32 * (1 - step / 2))
    assert res.worst == pytest.approx(expected, abs=gap_tolerance(1.0))
    assert res.printed == 1.0


@pytest.mark.parametrize("call, name", [
    (lambda: eq36_descent_rate(0.0, 1, 0.1), "L"),
    (lambda: eq36_descent_rate(1.0, 0, 0.1), "local_steps"),
    (lambda: eq36_descent_rate(1.0, 1, -0.1), "step"),
    (lambda: eq36_descent_rate(1.0, 1, 0.1, step_global=0.0), "step_global"),
    (lambda: eq36_descent_rate(1.0, 1, 0.1, gamma=-1.0), "gamma"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_claim_holds_and_a_planted_ascent_step_changes_it(monkeypatch):
    assert get("kvib.thm4_1.descent_tightness").check(seed=0).verdict == "holds"

    from dataclasses import replace

    from flbounds.pep.steps import local_custom

    real = descent_module.fedavg_round

    def ascent(R, eta_l, **kw):
        def run(f, pulled, state):
            z = pulled["x"]
            for _ in range(R):
                z = z + eta_l * f.gradient(z)
            return {}, {"delta": z - pulled["x"]}

        return replace(real(R, eta_l, **kw), local=local_custom(run, "ascent"))
    monkeypatch.setattr(descent_module, "fedavg_round", ascent)
    assert get("kvib.thm4_1.descent_tightness").check(seed=0).verdict != "holds"
