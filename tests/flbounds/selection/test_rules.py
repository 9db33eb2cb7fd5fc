"""FL client-selection layer of [004]: selection rules and the label-skewed FedAvg simulator."""

import numpy as np
import pytest

from flbounds.selection import SelectionRule, gradient_distances, select_clients
from verify.subtrunc.fl_experiment import (
    client_losses_and_gradients,
    dissimilarity,
    gini,
    make_federated_data,
    run_fedavg,
)


def _round_inputs(seed=0, n=30, k=5):
    rng = np.random.default_rng(seed)
    return dict(k=k, grads=rng.normal(size=(n, 4)), losses=rng.exponential(size=n),
                data_fractions=np.full(n, 1 / n), history=[], keys=rng.random((k + 1, n)))


@pytest.mark.parametrize("name", ["random", "divfl", "subtrunc", "unionfl", "poc"])
def test_rules_return_k_distinct_clients(name):
    sel = select_clients(SelectionRule(name, lam=0.5), **_round_inputs())
    assert len(sel) == 5 and len(set(sel)) == 5


def test_bad_round_inputs_raise():
    args = _round_inputs()
    with pytest.raises(ValueError, match="keys must have shape"):
        select_clients(SelectionRule("divfl"), **{**args, "keys": args["keys"][:2]})
    with pytest.raises(ValueError, match="k must satisfy"):
        select_clients(SelectionRule("divfl"), **{**args, "k": 31})
    with pytest.raises(ValueError, match="rule.name"):
        select_clients(SelectionRule("oracle"), **args)


def test_poc_takes_highest_losses_among_all_when_d_is_n():
    args = _round_inputs()
    sel = select_clients(SelectionRule("poc", poc_candidates=30), **args)
    assert sorted(sel) == sorted(np.argsort(-args["losses"])[:5].tolist())


def test_unionfl_large_mu_avoids_recent_clients():
    args = _round_inputs()
    args["history"] = [np.arange(0, 20)]
    sel = select_clients(SelectionRule("unionfl", mu=1e6, window=1, sample_size=30), **args)
    assert min(sel) >= 20


def test_gradient_distances_match_direct():
    g = np.random.default_rng(1).normal(size=(12, 5))
    direct = np.linalg.norm(g[:, None] - g[None], axis=-1)
    np.testing.assert_allclose(gradient_distances(g), direct, atol=1e-12)


def test_softmax_gradient_matches_finite_differences():
    rng = np.random.default_rng(2)
    data = make_federated_data("synthetic", rng, n_clients=10)
    W = rng.normal(size=data.features.shape[2:] + (data.n_classes,)) * 0.1
    loss, grad = client_losses_and_gradients(W, data)
    h, i, j = 1e-6, 3, 2
    Wp, Wm = W.copy(), W.copy()
    Wp[i, j] += h
    Wm[i, j] -= h
    fd = (client_losses_and_gradients(Wp, data)[0] - client_losses_and_gradients(Wm, data)[0])
    np.testing.assert_allclose(fd / (2 * h), grad[:, i, j], rtol=1e-5, atol=1e-8)
    assert np.all(loss >= 0)


def test_partition_gives_three_classes_per_client():
    data = make_federated_data("digits", np.random.default_rng(0))
    assert data.features.shape[0] == 100 and data.client_classes.shape == (100, 3)
    for i in range(0, 100, 17):
        labels = set(data.labels[i][data.mask[i] > 0].tolist())
        assert labels == set(data.client_classes[i].tolist())


def test_metrics():
    m = dissimilarity(np.array([80.0, 90.0, 100.0]))
    assert m["max_min"] == 20.0 and m["std"] == pytest.approx(np.sqrt(200 / 3))
    assert m["mad"] == pytest.approx(20 / 3)
    assert gini(np.ones(10)) == 0.0
    assert gini(np.array([0, 0, 0, 10])) == pytest.approx(0.75)


def test_fedavg_runs_and_is_deterministic_given_the_plan():
    rng = np.random.default_rng(3)
    data = make_federated_data("synthetic", rng, n_clients=20)
    plan = rng.random((5, 4, 20))
    a = run_fedavg(data, SelectionRule("subtrunc", lam=0.5), plan=plan, k=3)
    b = run_fedavg(data, SelectionRule("subtrunc", lam=0.5), plan=plan, k=3)
    np.testing.assert_array_equal(a.accuracy, b.accuracy)
    assert a.counts.sum() == 15
