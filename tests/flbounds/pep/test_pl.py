"""FOCUS Theorem 1(b)'s relaxed PL worst case (flbounds.pep.pl): sanity bounds, bad input,
and the tightness claim with and without a planted bug."""

import pytest

from flbounds.ledger import bounds, get
from flbounds.pep import gap_tolerance
from flbounds.pep import pl as pl_module
from flbounds.pep.pl import focus_pl_rate

BETA, L = 1.0, 2.0


@pytest.mark.parametrize("step", [0.05, 0.2, 0.5])
def test_one_client_is_gradient_descent_under_pl(step):
    """N = 1, tau = 1, full participation: x+ = x - eta grad F(x). The relaxation lies between
    the quadratic beta x^2/2 (which is beta-PL: (1 - eta beta)^2) and the descent-lemma bound
    1 - beta eta (2 - L eta) that PL at x and smoothness between x and x+ already give."""
    res = focus_pl_rate(BETA, L, (1.0,), 1, step, consensus_weight=1e-6)
    tol = gap_tolerance(1.0)
    assert (1 - step * BETA) ** 2 - tol <= res.worst <= 1 - BETA * step * (2 - L * step) + tol


def test_printed_rate_and_step_are_the_callers():
    value = bounds.get("focus.thm1b").evaluate(beta=BETA, L=L, p=[0.5, 0.8], tau=2)
    res = focus_pl_rate(BETA, L, (0.5, 0.8), 2, value.step, printed=value.value,
                        consensus_weight=1 - 4 * value.step * L**2)
    assert res.params["step"] == value.step
    assert res.printed == pytest.approx(1 - value.step * BETA * 2)


@pytest.mark.parametrize("call, name", [
    (lambda: focus_pl_rate(-1.0, L, (0.5,), 1), "beta"),
    (lambda: focus_pl_rate(3.0, L, (0.5,), 1), "L"),
    (lambda: focus_pl_rate(BETA, L, (0.5, 1.5), 1), "p"),
    (lambda: focus_pl_rate(BETA, L, (0.5,), 0), "local_steps"),
    (lambda: focus_pl_rate(BETA, L, (0.5,), 1, step=-0.1), "step"),
    (lambda: focus_pl_rate(BETA, L, (0.5,), 1), "step"),
    (lambda: focus_pl_rate(BETA, L, (0.5,), 1, step=0.2), "consensus_weight"),
    (lambda: focus_pl_rate(BETA, L, (0.5,), 1, step=0.2, consensus_weight=-0.6),
     "consensus_weight"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_tightness_claim_holds_on_quick():
    res = get("focus.thm1b.tightness").check(seed=0)
    assert res.verdict == "holds", res.reason
    assert res.worst_case["ratio"] <= 1


def test_dropping_the_gradient_correction_changes_the_verdict(monkeypatch):
    """Clients that push raw gradients (no - g_i^old correction) double-count the tracker;
    the relaxed worst case exceeds the printed rate and the claim leaves 'holds'."""
    from dataclasses import replace

    from flbounds.pep.steps import local_custom

    real = pl_module.focus_round

    def uncorrected_round(tau, step):
        def run(f, pulled, state):
            z, v = pulled["x"], None
            for t in range(tau):
                if t > 0:
                    z = z - step * v
                v = f.gradient(z)
            return {"z": z, "g": state["g"] + v}, {"v": v}

        return replace(real(tau, step), local=local_custom(run, "raw"))

    monkeypatch.setattr(pl_module, "focus_round", uncorrected_round)
    res = get("focus.thm1b.tightness").check(seed=0)
    assert res.verdict != "holds"


def test_an_unsolved_cell_outside_the_hypotheses_is_listed_without_a_number(monkeypatch):
    import verify.focus.thm1.worst_case_pl as module
    from flbounds.ledger import get
    from flbounds.pep.sdp import PEPSolveError

    real = module.focus_pl_rate

    def flaky(beta, L, p, tau, step, **kw):
        top = bounds.get("focus.thm1b").evaluate(beta=beta, L=L, p=list(p), tau=tau).step
        if step > top * (1 + 1e-9):
            raise PEPSolveError("no accurate solve (planted)")
        return real(beta, L, p, tau, step, **kw)

    monkeypatch.setattr(module, "focus_pl_rate", flaky)
    res = get("focus.thm1b.tightness").check(seed=0)
    assert res.verdict == "holds"
    assert any("unsolved" in c for c in res.details["cells"])

    def broken(*args):
        raise PEPSolveError("no accurate solve (planted)")

    monkeypatch.setattr(module, "focus_pl_rate", broken)
    assert get("focus.thm1b.tightness").check(seed=0).verdict == "error"
