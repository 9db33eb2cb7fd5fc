"""K-Vib's synthetic softmax regression: the in-place gradient gives the textbook formula's
bits (scipy's softmax, copied client rows) for the padded product, for replicated rounds and
any client list; the size groups agree with it to rounding and with themselves bit for bit."""

import numpy as np
import pytest
from scipy.special import softmax

from verify.kvib.fedprox_synthetic import fedprox_synthetic


def _textbook(problem, X, idx):
    W = X.reshape(idx.size, problem.n_features + 1, problem.n_classes)
    data = problem._data[idx]
    resid = (softmax(np.matmul(data, W), axis=2) - problem._onehot[idx]) \
        * problem._mask[idx][:, :, None]
    grad = np.matmul(data.transpose(0, 2, 1), resid) / problem.sizes[idx][:, None, None]
    return grad.reshape(idx.size, problem.dim)


@pytest.mark.parametrize("clients", ["all", "tiled", "some", "reordered"])
def test_gradients_match_the_textbook_formula(clients):
    problem = fedprox_synthetic(np.random.default_rng(0), 0.5, 0.5, n_clients=7,
                                max_samples=400)
    n = problem.n_clients
    assert problem.sizes.min() < problem.sizes.max()     # padded rows, masked out
    idx = {"all": np.arange(n), "tiled": np.tile(np.arange(n), 3),
           "some": np.array([4, 1, 1, 6]), "reordered": np.tile(np.arange(n)[::-1], 2)}[clients]
    X = 0.3 * np.random.default_rng(1).standard_normal((idx.size, problem.dim))
    got = problem.client_gradients(X, clients=None if clients == "all" else idx)
    assert np.array_equal(got, _textbook(problem, X, idx))


def test_replicated_losses_are_the_copied_rows_losses():
    """Every client r times in order (the broadcast data) gives the losses of the same
    rows computed client by client from copied data, bit for bit."""
    problem = fedprox_synthetic(np.random.default_rng(2), 0.5, 0.5, n_clients=5,
                                max_samples=300)
    idx = np.tile(np.arange(problem.n_clients), 4)
    X = 0.3 * np.random.default_rng(4).standard_normal((idx.size, problem.dim))
    one_by_one = [problem.client_losses(X[j:j + 1], clients=idx[j:j + 1])[0]
                  for j in range(idx.size)]
    assert np.array_equal(problem.client_losses(X, clients=idx), one_by_one)


def test_size_groups_agree_with_the_padded_product_and_across_calls():
    """The gradients by size groups (one transposed product per client) equal the padded
    product over every client's n_max rows to rounding, and a client's gradient has the same
    bits whichever clients or replicates share its call: every client in order once or
    three times, and a round's drawn clients (repeats allowed) in any order (caps of both
    profiles; at 50 every client has 50 rows)."""
    for cap, n_groups in ((50, 1), (117, 5), (200, 10)):
        grouped = fedprox_synthetic(np.random.default_rng(3), 0.0, 0.0, max_samples=cap)
        padded = fedprox_synthetic(np.random.default_rng(3), 0.0, 0.0, max_samples=cap)
        padded._groups = None
        assert len(grouped._groups) >= n_groups
        rng = np.random.default_rng(4)
        X = rng.standard_normal((3 * grouped.n_clients, grouped.dim))
        once = np.concatenate([grouped.client_gradients(X[j * grouped.n_clients:
                                                          (j + 1) * grouped.n_clients])
                               for j in range(3)])
        clients = np.tile(np.arange(grouped.n_clients), 3)
        thrice = grouped.client_gradients(X, clients=clients)
        assert np.array_equal(once, thrice)
        scale = np.abs(thrice).max()
        np.testing.assert_allclose(thrice, padded.client_gradients(X, clients=clients),
                                   rtol=0, atol=1e-13 * scale)
        for _ in range(3):      # a round's drawn clients (repeats allowed), in any order
            drawn = rng.integers(grouped.n_clients, size=30)
            got = grouped.client_gradients(X[drawn], clients=drawn)
            assert np.array_equal(got, thrice[drawn])
            np.testing.assert_allclose(got, padded.client_gradients(X[drawn], clients=drawn),
                                       rtol=0, atol=1e-13 * scale)


def test_transposed_losses_agree_with_the_padded_rows():
    """With size groups the losses come from the transposed rows: the padded row-layout
    losses to rounding, and the same bits for every client in order and client by client."""
    grouped = fedprox_synthetic(np.random.default_rng(5), 0.0, 0.0, max_samples=120)
    padded = fedprox_synthetic(np.random.default_rng(5), 0.0, 0.0, max_samples=120)
    padded._groups = None
    idx = np.tile(np.arange(grouped.n_clients), 2)
    X = 0.3 * np.random.default_rng(6).standard_normal((idx.size, grouped.dim))
    together = grouped.client_losses(X, clients=idx)
    np.testing.assert_allclose(together, padded.client_losses(X, clients=idx), rtol=1e-13)
    one_by_one = [grouped.client_losses(X[j:j + 1], clients=idx[j:j + 1])[0]
                  for j in range(0, idx.size, 7)]
    assert np.array_equal(together[::7], one_by_one)
