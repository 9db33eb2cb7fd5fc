r"""Fair client selection in FedAvg (Sec. V of SubTrunc) on small label-skewed problems.

Data: 100 clients, each holding 3 distinct classes in equal shares (pathological label skew).
Two sources: ``synthetic`` (Gaussian class clusters) and ``digits`` (scikit-learn's bundled
8x8 digits, no download). Model: multinomial logistic regression with an L2 term (convex,
so per-client losses are nonnegative). Each client's test set is the held-out data of its
3 classes, class-balanced; per-client test accuracy [%] gives the dissimilarity metrics.

FedAvg (Algorithm 1, cleaned): each round the rule picks k clients from every client's full
gradient and loss at :math:`w_k` (fresh information); each runs ``local_steps`` full-batch
gradient steps; the server averages the k local models uniformly.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

import numpy as np

from flbounds.selection import SelectionRule, select_clients
from verify.subtrunc._fl_kernels import local_update, residuals


class FederatedData(NamedTuple):
    """Padded per-client arrays: features (n, m, p) with a bias column, labels (n, m),
    mask (n, m); the test pool (features, labels) and each client's classes (n, 3)."""

    features: np.ndarray
    labels: np.ndarray
    mask: np.ndarray
    test_features: np.ndarray
    test_labels: np.ndarray
    client_classes: np.ndarray
    n_classes: int


def _client_classes(n_clients: int, n_classes: int, per_client: int) -> np.ndarray:
    """Client i holds classes (i, i+1, i+2) mod C shifted per block: every class is used by
    the same number of clients (30 of 100 for C = 10)."""
    return (np.arange(n_clients)[:, None] + np.arange(per_client)[None, :]) % n_classes


def _partition(rng, X, y, classes_of, n_test_share) -> FederatedData:
    n_clients = classes_of.shape[0]
    n_classes = int(y.max()) + 1
    order = rng.permutation(y.size)
    X, y = X[order], y[order]
    is_test = np.zeros(y.size, dtype=bool)
    for c in range(n_classes):
        idx = np.flatnonzero(y == c)
        is_test[idx[: int(round(n_test_share * idx.size))]] = True
    train_idx = np.flatnonzero(~is_test)
    shards: list[list[int]] = [[] for _ in range(n_clients)]
    for c in range(n_classes):
        holders = np.flatnonzero((classes_of == c).any(axis=1))
        idx = train_idx[y[train_idx] == c]
        for h, part in zip(holders, np.array_split(idx, holders.size), strict=True):
            shards[h].extend(part.tolist())
    m = max(len(s) for s in shards)
    feats = np.zeros((n_clients, m, X.shape[1]))
    labels = np.zeros((n_clients, m), dtype=np.int64)
    mask = np.zeros((n_clients, m))
    for i, s in enumerate(shards):
        feats[i, : len(s)], labels[i, : len(s)], mask[i, : len(s)] = X[s], y[s], 1.0
    return FederatedData(feats, labels, mask, X[is_test], y[is_test], classes_of, n_classes)


@cache
def _load_digits():
    from sklearn.datasets import load_digits
    data = load_digits()
    return data.data / 16.0, data.target.astype(np.int64)


def _digits():
    X, y = _load_digits()
    return X.copy(), y.copy()


def _with_bias(X):
    return np.hstack([X, np.ones((X.shape[0], 1))])


def make_federated_data(source: str, rng: np.random.Generator, *, n_clients: int = 100,
                        classes_per_client: int = 3) -> FederatedData:
    """``synthetic`` or ``digits`` split over ``n_clients`` label-skewed clients."""
    if source == "digits":
        X, y = _digits()
    elif source == "synthetic":
        n_classes, dim, per_class = 10, 20, 300
        centers = rng.normal(size=(n_classes, dim)) * 0.6
        y = np.repeat(np.arange(n_classes), per_class)
        X = centers[y] + rng.normal(size=(y.size, dim))
    else:
        raise ValueError(f"source must be 'synthetic' or 'digits', got {source!r}")
    classes_of = _client_classes(n_clients, int(y.max()) + 1, classes_per_client)
    return _partition(rng, _with_bias(X), y, classes_of, n_test_share=0.3)


def client_losses_and_gradients(W, data: FederatedData, clients=None, reg: float = 1e-3):
    """Per-client mean cross-entropy + reg/2 ||W||^2 and its gradient.

    ``W``: one model (p, C) shared by all clients, or (len(clients), p, C) one per client.
    """
    X, y, mask, W, logits = _forward(W, data, clients)
    count = mask.sum(axis=1)
    picked = np.empty(y.shape)
    residual = residuals(logits, y, mask, picked)
    loss = -(np.log(np.maximum(picked, 1e-300)) * mask).sum(axis=1) / count
    loss += reg / 2 * (W ** 2).sum(axis=(-2, -1))   # one model: its norm once, for all
    return loss, _gradients(X, mask, W, residual, reg)


def client_gradients(W, data: FederatedData, clients=None, reg: float = 1e-3):
    """The gradients of :func:`client_losses_and_gradients` alone (the same numbers, without
    the losses: what the local steps need)."""
    X, y, mask, W, logits = _forward(W, data, clients)
    return _gradients(X, mask, W, residuals(logits, y, mask), reg)


def _forward(W, data, clients):
    """The clients' arrays, the model(s) and the logits (a fresh product)."""
    X = data.features if clients is None else data.features[clients]
    y = data.labels if clients is None else data.labels[clients]
    mask = data.mask if clients is None else data.mask[clients]
    W = np.asarray(W)
    Wb = np.broadcast_to(W, (X.shape[0], *W.shape[-2:]))
    return X, y, mask, W, X @ Wb


def _gradients(X, mask, W, residual, reg):
    """Mean cross-entropy gradients + reg W from the masked residuals (softmax minus the
    one-hot labels, :func:`~verify.subtrunc._fl_kernels.residuals`); one model ``W`` (p, C)
    is scaled once and broadcast over the clients (the same sums)."""
    grads = np.swapaxes(X, 1, 2) @ residual / mask.sum(axis=1)[:, None, None]
    return grads + reg * W


def client_test_accuracy(W, data: FederatedData) -> np.ndarray:
    """Per-client accuracy [%] on the held-out data of its classes, class-balanced."""
    pred = np.argmax(data.test_features @ W, axis=1)
    correct = pred == data.test_labels
    per_class = np.array([correct[data.test_labels == c].mean() for c in range(data.n_classes)])
    return 100.0 * per_class[data.client_classes].mean(axis=1)


def dissimilarity(acc: np.ndarray) -> dict:
    """Client dissimilarity [%] of per-client accuracies: std, MAD, max-min, mean pairwise."""
    acc = np.asarray(acc, dtype=float)
    pair = np.abs(acc[:, None] - acc[None, :])
    n = acc.size
    return {"std": float(acc.std()), "mad": float(np.abs(acc - acc.mean()).mean()),
            "max_min": float(acc.max() - acc.min()),
            "pairwise": float(pair.sum() / max(1, n * (n - 1)))}


def gini(counts: np.ndarray) -> float:
    """Gini coefficient of participation counts (0 = perfectly even)."""
    c = np.sort(np.asarray(counts, dtype=float))
    n = c.size
    if c.sum() == 0:
        return 0.0
    return float((2 * np.arange(1, n + 1) - n - 1) @ c / (n * c.sum()))


class FLRun(NamedTuple):
    """Outcome of one FedAvg run: final per-client accuracies, metrics and participation."""

    accuracy: np.ndarray
    metrics: dict
    counts: np.ndarray
    train_loss: float


def run_fedavg(data: FederatedData, rule: SelectionRule, *, plan: np.ndarray, k: int = 10,
               local_steps: int = 5, step: float = 0.5) -> FLRun:
    """FedAvg with client selection ``rule``; ``plan`` (R, k + 1, n) uniforms (the randomness).

    Model starts at 0; R = plan.shape[0] rounds.
    """
    n, _, p = data.features.shape
    n_rounds = plan.shape[0]
    W = np.zeros((p, data.n_classes))
    fractions = data.mask.sum(axis=1) / data.mask.sum()
    history: list[np.ndarray] = []
    counts = np.zeros(n, dtype=np.int64)
    # the random rule picks from the plan alone: the round's gradients and losses are not
    # computed for it (they would not change its picks)
    blind = (np.zeros(n), np.zeros((n, 1))) if rule.name == "random" else None
    # DivFL and UnionFL read the gradients alone: their losses are not computed either
    loss_free = rule.name in ("divfl", "unionfl")
    for t in range(n_rounds):
        if blind:
            losses, grads = blind
        elif loss_free:
            losses, grads = np.zeros(n), client_gradients(W, data)
        else:
            losses, grads = client_losses_and_gradients(W, data)
        sel = np.array(select_clients(rule, k=k, grads=grads.reshape(n, -1), losses=losses,
                                      data_fractions=fractions, history=history,
                                      keys=plan[t]))
        history.append(sel)
        counts[sel] += 1
        W = _local_models(W, data, sel, local_steps, step,
                          first=None if blind else grads[sel]).mean(axis=0)
    losses, _ = client_losses_and_gradients(W, data)
    acc = client_test_accuracy(W, data)
    metrics = dissimilarity(acc)
    metrics.update(test_accuracy=float(acc.mean()), train_loss=float(losses.mean()),
                   participation_gini=gini(counts))
    return FLRun(acc, metrics, counts, float(losses.mean()))


def _local_models(W, data, sel, local_steps, step, reg: float = 1e-3, first=None):
    """The selected clients' models after ``local_steps`` full-batch gradient steps from W:
    the operations of :func:`client_gradients` in the same order, with what does not change
    between the steps (the clients' arrays, the label positions, the counts) set up once.
    ``first``: the selected clients' gradients at W when the round already computed them
    (the first step's gradients, the same per-client products and numbers), else None."""
    X, y, mask = data.features[sel], data.labels[sel], data.mask[sel]
    Xt = np.swapaxes(X, 1, 2)
    count = mask.sum(axis=1)
    local = np.broadcast_to(W, (X.shape[0], *W.shape)).copy()
    for t in range(local_steps):
        if t == 0 and first is not None:
            local -= step * first
            continue
        local_update(local, Xt @ residuals(X @ local, y, mask), count, step, reg)
    return local


def fl_plan(rng: np.random.Generator, n_rounds: int, k: int, n: int) -> np.ndarray:
    """The random plan of a run: (n_rounds, k + 1, n) uniforms."""
    return rng.random((n_rounds, k + 1, n))


class Experiment(NamedTuple):
    """Metrics of every (rule, seed): ``metrics[name]`` is (n_rules, n_seeds); accuracies
    (n_rules, n_seeds, n_clients); participation counts likewise."""

    labels: list
    metrics: dict
    accuracy: np.ndarray
    counts: np.ndarray


def run_experiment(source: str, rules, rng: np.random.Generator, *, n_seeds: int,
                   n_rounds: int, k: int = 10, n_clients: int = 100,
                   local_steps: int = 5, step: float = 0.5) -> Experiment:
    """Every rule on the same ``n_seeds`` data splits and random plans (paired comparisons)."""
    runs = []
    for r in rng.spawn(n_seeds):
        data = make_federated_data(source, r, n_clients=n_clients)
        plan = fl_plan(r, n_rounds, k, n_clients)
        runs.append([run_fedavg(data, rule, plan=plan, k=k, local_steps=local_steps,
                                step=step) for rule in rules])
    names = runs[0][0].metrics.keys()
    metrics = {m: np.array([[runs[s][j].metrics[m] for s in range(n_seeds)]
                            for j in range(len(rules))]) for m in names}
    acc = np.array([[runs[s][j].accuracy for s in range(n_seeds)] for j in range(len(rules))])
    counts = np.array([[runs[s][j].counts for s in range(n_seeds)] for j in range(len(rules))])
    return Experiment([rule.label() for rule in rules], metrics, acc, counts)
