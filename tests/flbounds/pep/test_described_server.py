"""Worst cases of the descriptions of flbounds.pep.described_server through the engine: FedAU
with equal weights and K-Vib's step at full participation are FedAvg, MIFA's memory costs a
full-participation round nothing, SAFARI's mixture is its two branches' weighted sum."""

import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import gap_tolerance

MU, L, N, TAU, STEP = 1.0, 2.0, 3, 2, 0.1


def _fedavg(participation=None):
    return pep.worst_case(pep.fedavg_round(TAU, STEP), pep.Setting(N, MU, L,
                          common_minimizer=True), pep.distance(), participation).worst


def test_fedau_with_equal_weights_is_fedavg_at_full_participation():
    res = pep.worst_case(pep.fedau_round(TAU, STEP, (1.0,) * N),
                         pep.Setting(N, MU, L, common_minimizer=True), pep.distance())
    ref = _fedavg()
    assert res.worst == pytest.approx(ref, abs=gap_tolerance(ref))


def test_fedau_normalised_weights_are_fedavg_under_any_participation():
    """sum_S omega_i Delta_i / sum_S omega_i with equal omega: the mean over S."""
    law = Bernoulli([0.4, 0.7, 0.9])
    res = pep.worst_case(pep.fedau_round(TAU, STEP, (2.0,) * N, normalize=True),
                         pep.Setting(N, MU, L, common_minimizer=True), pep.distance(), law)
    ref = _fedavg(law)
    assert res.worst == pytest.approx(ref, abs=gap_tolerance(ref))


def test_kvib_step_at_full_participation_is_fedavg():
    res = pep.worst_case(pep.kvib_round(TAU, STEP), pep.Setting(N, MU, L,
                         common_minimizer=True), pep.distance())
    ref = _fedavg()
    assert res.worst == pytest.approx(ref, abs=gap_tolerance(ref))


def test_mifa_at_full_participation_contracts_like_fedavg():
    """Every memory refreshed: x+ is FedAvg's, u_i+ = x - z_i; with a tiny memory weight the
    Lyapunov ratio is FedAvg's distance ratio up to that weight's share."""
    res = pep.worst_case(pep.mifa_round(TAU, STEP, N), pep.Setting(N, MU, L,
                         common_minimizer=True), pep.mifa_lyapunov(1e-6))
    ref = _fedavg()
    assert res.worst == pytest.approx(ref, abs=1e-4)


def test_safari_mixture_is_the_weighted_sum_of_its_branches():
    """q = 0 and q = 1 are the server step and the client round alone (gradient descent)."""
    server = pep.safari_rate(MU, L, 0.0, TAU, STEP, 0.3).worst
    client = pep.safari_rate(MU, L, 1.0, TAU, STEP, 0.3).worst
    assert server == pytest.approx(pep.gd_contraction(MU, L, 0.3), abs=gap_tolerance(1.0))
    assert client == pytest.approx(pep.gd_contraction(MU, L, STEP) ** TAU,
                                   abs=gap_tolerance(1.0))
    mixed = pep.safari_rate(MU, L, 0.4, TAU, STEP, 0.3).worst
    assert mixed <= 0.4 * client + 0.6 * server + gap_tolerance(1.0)


def test_a_mixture_worst_case_is_safari_rate():
    """The public route for a random round (flbounds.pep.scenarios.mixture_worst_case) on
    SAFARI with identical clients gives safari_rate's value."""
    from flbounds.pep.scenarios import mixture_worst_case

    ref = pep.safari_rate(MU, L, 0.4, TAU, STEP, 0.3).worst
    res = mixture_worst_case(pep.safari_round(0.4, TAU, STEP, 0.3),
                             pep.Setting(1, MU, L, identical=True), pep.distance())
    assert res.worst == pytest.approx(ref, abs=gap_tolerance(ref))
    assert [b["probability"] for b in res.params["branches"]] == [0.4, 0.6]
    with pytest.raises(ValueError, match="one-run"):
        mixture_worst_case(pep.safari_round(0.4, TAU, STEP, 0.3),
                           pep.Setting(1, MU, L, identical=True), pep.two_runs())


def test_worst_case_refuses_a_bad_mixture_naming_the_argument():
    rnd = pep.fedavg_round(TAU, STEP)
    with pytest.raises(ValueError, match="branches: probabilities .* sum to 1"):
        pep.Mixture("m", ((0.5, rnd, None), (0.6, rnd, None)))
    with pytest.raises(ValueError, match="branches: probabilities must be in"):
        pep.Mixture("m", ((-0.2, rnd, None), (1.2, rnd, None)))
    setting = pep.Setting(N, MU, L, common_minimizer=True)
    mixture = pep.single(rnd, Bernoulli([0.4, 0.7, 0.9]))
    with pytest.raises(ValueError, match="participation: a Mixture"):
        pep.worst_case(mixture, setting, pep.distance(), Bernoulli([0.4, 0.7, 0.9]))
    with pytest.raises(ValueError, match="classes"):
        pep.worst_case(mixture, setting, pep.distance(), classes=[[0, 1, 2]])
    with pytest.raises(ValueError, match="round_ must be a Round or a Mixture"):
        pep.worst_case("fedavg", setting, pep.distance())


def test_a_one_branch_mixture_is_its_round():
    """worst_case of single(round, law) and of (round, law): the same SDP, the same value."""
    law = Bernoulli([0.4, 0.7, 0.9])
    setting = pep.Setting(N, MU, L, common_minimizer=True)
    ref = pep.worst_case(pep.fedavg_round(TAU, STEP), setting, pep.distance(), law).worst
    res = pep.worst_case(pep.single(pep.fedavg_round(TAU, STEP), law), setting, pep.distance())
    assert res.worst == pytest.approx(ref, abs=gap_tolerance(ref))
