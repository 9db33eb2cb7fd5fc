"""Per-client constants (mu_i, L_i) and probabilities p_i in the Lyapunov search and its
witnesses: known answers (equal constants give the one-class value, one client gradient
descent's rate), the bracket with two classes, and planted bugs caught."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import lyapunov_search as lyap
from flbounds.pep import second_moment as sm


def _slack(rate):
    return pep.gap_tolerance(rate.certified) + lyap.BISECTION_TOL


@pytest.mark.parametrize("mu, L, step", [(1.0, 4.0, 0.1), (0.5, 2.0, 0.8)])
def test_one_client_with_per_client_constants_is_gradient_descent(mu, L, step):
    """max(|1 - eta mu|, |1 - eta L|)^2 within 1e-6, constants given per client."""
    rate = lyap.lyapunov_rate(pep.fedavg_round(1, step),
                              pep.Setting(1, (mu,), (L,), common_minimizer=True))
    known = max(abs(1 - step * mu), abs(1 - step * L)) ** 2
    assert abs(rate.certified - known) <= 1e-6, (rate.certified, known)
    assert abs(rate.witness - known) <= 1e-12, (rate.witness, known)


@pytest.mark.parametrize("name, build", [
    ("focus", lambda: pep.focus_round(2, 0.05)),
    ("scaffold", lambda: pep.scaffold_round(2, 0.05, 2)),
])
def test_equal_constants_per_client_give_the_one_class_value(name, build):
    """The same constants written per client: same bracket within 1e-6 (p_i differ)."""
    proc = Bernoulli([0.3, 0.9])
    one = lyap.lyapunov_rate(build(), pep.Setting(2, 1.0, 4.0, common_minimizer=True), proc)
    per = lyap.lyapunov_rate(build(), pep.Setting(2, (1.0, 1.0), (4.0, 4.0),
                                                  common_minimizer=True), proc)
    assert abs(per.certified - one.certified) <= 1e-6, (per.certified, one.certified)
    assert abs(per.witness - one.witness) <= 1e-12, (per.witness, one.witness)


def test_two_classes_of_constants_bracket():
    """Clients (mu, L) = (1, 2) and (0.5, 4): the witness (1-D curvatures within each
    client's own [mu_i, L_i]) stays below the certified rate, which lies between the rates
    with every client of the gentler and of the harsher constants."""
    rnd, proc = pep.fedavg_round(2, 0.1), Bernoulli([0.5, 0.8])
    rate = lyap.lyapunov_rate(rnd, pep.Setting(2, (1.0, 0.5), (2.0, 4.0),
                                               common_minimizer=True), proc)
    assert rate.witness <= rate.certified + _slack(rate)
    gentle = lyap.lyapunov_rate(rnd, pep.Setting(2, 1.0, 2.0, common_minimizer=True), proc)
    harsh = lyap.lyapunov_rate(rnd, pep.Setting(2, 0.5, 4.0, common_minimizer=True), proc)
    assert gentle.certified - _slack(gentle) <= rate.certified <= harsh.certified + _slack(harsh)
    assert rate.certified > gentle.certified + 1e-4  # the harsher client counts
    lam = np.asarray(rate.witness_instance, float)
    assert 1.0 <= lam[0] <= 2.0 and 0.5 <= lam[1] <= 4.0


def test_witness_curvatures_stay_in_each_clients_interval():
    setting = pep.Setting(3, (1.0, 0.5, 2.0), (2.0, 4.0, 2.0), common_minimizer=True)
    for lam in sm._curvatures(setting):
        for i, v in enumerate(lam):
            mu, L = setting.constants(i)
            assert mu <= v <= L


def test_a_witness_that_ignores_per_client_constants_is_caught(monkeypatch):
    """Planted bug: witness curvatures from the first client's constants for everyone. The
    second client's L = 4 is then never tried and the witness falls below the bracket's
    right lower end (the correct witness is larger)."""
    rnd, proc = pep.fedavg_round(1, 0.45), Bernoulli([0.5, 0.5])
    setting = pep.Setting(2, (1.0, 1.0), (2.0, 4.0), common_minimizer=True)
    good, _ = sm.witness_rate(rnd, setting, proc)

    def first_only(s):
        mu, L = s.constants(0)
        return [(lam,) * s.n_clients for lam in np.linspace(mu, L, sm.GRID)]

    monkeypatch.setattr(sm, "_curvatures", first_only)
    bad, _ = sm.witness_rate(rnd, setting, proc)
    assert bad < good - 1e-3, (bad, good)
