r"""A small real-data replication of SAFARI's experiments ([000], Sec. 5) on scikit-learn's
bundled digits (8x8 images, 10 classes; no download).

Setting (spec sections 2 and 5, scaled to 1,797 images): multinomial logistic regression,
M = 10 clients, client i holds the classes :math:`\{\pi(i), \dots, \pi(i + p - 1)\}` (mod 10,
:math:`\pi` a random permutation of the labels; a rotation guarantees every class is held by
some client, the paper's "p random classes" leaves this open), each class split evenly over
its holders; clients :math:`0..s-1` never participate; each client round samples m = 5 of the
others uniformly. Local lr 0.1, one local epoch of minibatches, plain averaging. A server
round is by default one *epoch* of minibatch SGD at lr 0.1 over the n_T server samples (drawn
uniformly from the training split): this is an interpretation, since Algorithm 1 line 11 prints
a single server SGD step per server round (see :func:`safari_digits`); ``server_steps=1`` runs
that literal single step. All randomness (split, partition, rounds, batches) comes from the
plan.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import log_softmax

from verify.softmax import softmax_rows

N_CLASSES = 10


class DigitsFederation(NamedTuple):
    X: np.ndarray              # (n, 65) features in [0, 1] plus a bias column
    y: np.ndarray              # (n,) labels 0..9
    client_idx: list           # M arrays of training indices
    server_idx: np.ndarray     # (n_T,) server sample
    test_idx: np.ndarray       # held-out test indices


def load_digits_features():
    from sklearn.datasets import load_digits
    data = load_digits()
    X = np.hstack([data.data / 16.0, np.ones((data.data.shape[0], 1))])
    return X, data.target.astype(np.int64)


def digits_federation(rng: np.random.Generator, *, n_clients: int = 10,
                      classes_per_client: int, n_server: int, n_test: int = 500,
                      data=None) -> DigitsFederation:
    """Split digits into test / server / clients with ``classes_per_client`` classes each."""
    if not 1 <= classes_per_client <= N_CLASSES:
        raise ValueError(f"classes_per_client must lie in [1, {N_CLASSES}]")
    X, y = load_digits_features() if data is None else data
    order = rng.permutation(y.size)
    test_idx, rest = order[:n_test], order[n_test:]
    if not 0 <= n_server < rest.size:
        raise ValueError(f"n_server must lie in [0, {rest.size})")
    server_idx, pool = rest[:n_server], rest[n_server:]
    perm = rng.permutation(N_CLASSES)
    holders = {c: [] for c in range(N_CLASSES)}
    for i in range(n_clients):
        for j in range(classes_per_client):
            holders[int(perm[(i + j) % N_CLASSES])].append(i)
    client_idx = [[] for _ in range(n_clients)]
    for c, who in holders.items():
        if not who:
            continue
        members = pool[y[pool] == c]
        for part, i in zip(np.array_split(rng.permutation(members), len(who)), who, strict=True):
            client_idx[i].extend(part.tolist())
    return DigitsFederation(X, y, [np.array(ci, dtype=np.int64) for ci in client_idx],
                            server_idx, test_idx)


def _grad(W, X, y):
    """Gradient of the mean cross-entropy of softmax(X W) at labels y; ``W`` is (65, 10) or
    a stack (B, 65, 10) of replicates' weights on the same minibatch (``matmul`` runs one
    product per replicate, the same product as for a single W). It runs once per minibatch
    step, so the temporaries are reused in place."""
    P = softmax_rows(X @ W)
    P[..., np.arange(y.size), y] -= 1.0
    G = X.T @ P
    G /= y.size
    return G


def accuracy(W, X, y) -> float:
    return float(np.mean(np.argmax(X @ W, axis=1) == y))


def cross_entropy(W, X, y) -> float:
    return float(-np.mean(log_softmax(X @ W, axis=1)[np.arange(y.size), y]))


class DigitsPlan(NamedTuple):
    client_round: np.ndarray   # (R,) bool
    clients: np.ndarray        # (R, m) sampled clients
    orders: list               # per round, per sampled client: a permutation of its data
    server_orders: np.ndarray  # (R, n_T) per round a permutation of the server sample


def digits_plan(rng, fed: DigitsFederation, *, n_rounds, q, n_excluded, n_sampled):
    eligible = np.arange(n_excluded, len(fed.client_idx))
    keys = rng.random((n_rounds, eligible.size))
    clients = eligible[np.argsort(keys, axis=1)[:, :n_sampled]]
    orders = [[rng.permutation(fed.client_idx[i].size) for i in row] for row in clients]
    server_orders = np.array([rng.permutation(fed.server_idx.size) for _ in range(n_rounds)],
                             dtype=np.int64).reshape(n_rounds, fed.server_idx.size)
    coins = rng.random(n_rounds) < q
    return DigitsPlan(coins, clients, orders, server_orders)


def safari_digits(fed: DigitsFederation, plan: DigitsPlan, *, step_client=0.1,
                  step_server=0.1, batch=16, tail=1, server_steps=None) -> np.ndarray:
    """SAFARI (Algorithm 1) with minibatch SGD; returns the weights after each of the last
    ``tail`` rounds, shape (tail, 65, 10) (the last entry is the final model).

    Client round: each sampled client runs one local epoch of minibatch SGD (its data in the
    plan's order, batches of ``batch``) from the server model; the server averages. Server
    round (``server_steps=None``, the default): one epoch of minibatch SGD over the server
    sample in the plan's order (skipped if the server has no data). Algorithm 1 line 11 prints
    one server SGD step per server round; the experiments section does not say how many steps
    the server takes (spec 7.A.20), and one epoch mirrors the clients' one local epoch. This is
    an interpretation, not the printed pseudocode: ``server_steps=1`` runs the literal single
    step (the first minibatch of the plan's order, i.e. a uniform minibatch of ``batch``), which
    at the experiments' lr 0.1 is K times weaker than a client round (the theory's coupling
    eta_s = K eta_c / 2 compensates for the same gap). ``server_steps=k`` caps the epoch at k
    minibatches.
    """
    if server_steps is not None and server_steps < 1:
        raise ValueError(f"server_steps must be None or >= 1, got {server_steps}")
    W = np.zeros((fed.X.shape[1], N_CLASSES))
    n_rounds = plan.client_round.size
    if not 1 <= tail <= n_rounds:
        raise ValueError(f"tail must lie in [1, {n_rounds}]")
    kept = []
    for r in range(n_rounds):
        if plan.client_round[r]:
            acc = np.zeros_like(W)
            for i, order in zip(plan.clients[r], plan.orders[r], strict=True):
                idx = fed.client_idx[i][order]
                V = W.copy()
                for start in range(0, idx.size, batch):
                    b = idx[start:start + batch]
                    V -= step_client * _grad(V, fed.X[b], fed.y[b])
                acc += V
            W = acc / plan.clients.shape[1]
        elif fed.server_idx.size:
            idx = fed.server_idx[plan.server_orders[r]]
            if server_steps is not None:
                idx = idx[:server_steps * batch]
            for start in range(0, idx.size, batch):
                b = idx[start:start + batch]
                W = W - step_server * _grad(W, fed.X[b], fed.y[b])
        if r >= n_rounds - tail:
            kept.append(W.copy())
    return np.array(kept)


def _client_round(fed, plan, r, W, step_client, batch):
    """One client round from the weights ``W`` (65, 10) or (B, 65, 10), all replicates on the
    round's clients and minibatches."""
    acc = np.zeros_like(W)
    for i, order in zip(plan.clients[r], plan.orders[r], strict=True):
        idx = fed.client_idx[i][order]
        V = W.copy()
        for start in range(0, idx.size, batch):
            b = idx[start:start + batch]
            V -= step_client * _grad(V, fed.X[b], fed.y[b])
        acc += V
    return acc / plan.clients.shape[1]


def _server_round(fed, plan, r, W, step_server, batch, server_steps):
    idx = fed.server_idx[plan.server_orders[r]]
    if server_steps is not None:
        idx = idx[:server_steps * batch]
    for start in range(0, idx.size, batch):
        b = idx[start:start + batch]
        W = W - step_server * _grad(W, fed.X[b], fed.y[b])
    return W


def _paired_runs(fed, plan, always_client, *, step_client, step_server, batch, tail,
                 server_steps):
    """Two replicates on one plan: replicate 0 takes a client round wherever
    ``always_client`` or the plan says so (FedAvg when all True), replicate 1 follows the
    plan (SAFARI). Rounds where both are client rounds run both in one pass (stacked
    weights, the same minibatches); each replicate equals its own run bit for bit. Returns
    the weights after each of the last ``tail`` rounds, shape (tail, 2, 65, 10)."""
    if server_steps is not None and server_steps < 1:
        raise ValueError(f"server_steps must be None or >= 1, got {server_steps}")
    n_rounds = plan.client_round.size
    if not 1 <= tail <= n_rounds:
        raise ValueError(f"tail must lie in [1, {n_rounds}]")
    W = np.zeros((2, fed.X.shape[1], N_CLASSES))
    kept = []
    for r in range(n_rounds):
        if plan.client_round[r]:
            W = _client_round(fed, plan, r, W, step_client, batch)
        else:
            if always_client[r]:
                W[0] = _client_round(fed, plan, r, W[0], step_client, batch)
            if fed.server_idx.size:
                W[1] = _server_round(fed, plan, r, W[1], step_server, batch, server_steps)
        if r >= n_rounds - tail:
            kept.append(W.copy())
    return np.array(kept)


def gain(rng, *, classes_per_client, n_excluded, n_server, q=0.8, n_rounds=150,
         n_sampled=5, batch=16, tail=10, server_steps=None) -> tuple[float, float]:
    """Test accuracy (%) of FedAvg (q = 1) and SAFARI (q) on one shared federation and plan,
    averaged over the models of the last ``tail`` rounds (with q < 1 the final model depends
    on whether the last rounds happened to be client or server rounds; the tail average
    removes that lottery without favouring either method)."""
    fed = digits_federation(rng, classes_per_client=classes_per_client, n_server=n_server)
    plan = digits_plan(rng, fed, n_rounds=n_rounds, q=q, n_excluded=n_excluded,
                       n_sampled=n_sampled)
    X, y = fed.X[fed.test_idx], fed.y[fed.test_idx]
    # FedAvg (the plan with every round a client round) and SAFARI (the plan), paired
    kept = _paired_runs(fed, plan, np.ones(n_rounds, dtype=bool), step_client=0.1,
                        step_server=0.1, batch=batch, tail=tail, server_steps=server_steps)
    acc = [np.mean([accuracy(W, X, y) for W in kept[:, j]]) for j in range(2)]
    return 100 * float(acc[0]), 100 * float(acc[1])
