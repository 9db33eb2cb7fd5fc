r"""A small real-data replication of SAFARI's experiments (SAFARI, Sec. 5) on scikit-learn's
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
    """Gradient of the mean cross-entropy of softmax(X W) at labels y: ``W`` (65, 10),
    ``X`` (n, 65), ``y`` (n,); or a stack of replicates, ``W`` (B, 65, 10), ``X`` (B, n, 65)
    and ``y`` (B, n), replicate b on its own minibatch (``matmul`` runs one product per
    replicate, the same product as for a single replicate, and every other operation is
    elementwise or along the last axis, so each replicate gets the single gradient's bits).
    It runs once per minibatch step, so the temporaries are reused in place."""
    n = y.shape[-1]
    P = softmax_rows(X @ W)
    flat = P.reshape(-1, N_CLASSES)     # a view: P is the product's fresh C-order array
    flat[np.arange(y.size), y.ravel()] -= 1.0
    G = np.swapaxes(X, -1, -2) @ P
    G /= n
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


class Replicate(NamedTuple):
    """One run of :func:`lockstep_runs`: a client round wherever ``client_round`` says so
    (the clients, orders and server orders of ``plan``), a server round elsewhere."""

    fed: DigitsFederation
    plan: DigitsPlan
    client_round: np.ndarray   # (R,) bool


def _phases(rep: Replicate, r, server_steps, batch):
    """Round r of one replicate as phases, each (is a client's, its samples in order, cut
    into minibatches by the caller): one per sampled client on a client round, one server
    epoch (or its first ``server_steps`` minibatches) on a server round, none when the
    server holds no data."""
    fed, plan = rep.fed, rep.plan
    if rep.client_round[r]:
        return [(True, fed.client_idx[i][order])
                for i, order in zip(plan.clients[r], plan.orders[r], strict=True)]
    if not fed.server_idx.size:
        return []
    idx = fed.server_idx[plan.server_orders[r]]
    return [(False, idx if server_steps is None else idx[:server_steps * batch])]


def lockstep_runs(reps, *, step_client=0.1, step_server=0.1, batch=16, tail=1,
                  server_steps=None) -> np.ndarray:
    """:func:`safari_digits` for every replicate of ``reps`` (a sequence of
    :class:`Replicate` on federations of the same digits data, with plans of the same number
    of rounds), all advancing together: in each round, phase by phase and minibatch step by
    minibatch step, the replicates taking a step of the same kind and batch size do it in one
    stacked :func:`_grad`. Replicate b equals ``safari_digits(fed_b,
    plan_b._replace(client_round=client_round_b), ...)`` bit for bit. Returns the weights
    after each of the last ``tail`` rounds, shape (tail, len(reps), 65, 10)."""
    if server_steps is not None and server_steps < 1:
        raise ValueError(f"server_steps must be None or >= 1, got {server_steps}")
    reps = list(reps)
    if not reps:
        raise ValueError("reps must hold at least one replicate")
    X, y = reps[0].fed.X, reps[0].fed.y
    n_rounds = reps[0].plan.client_round.size
    for rep in reps:
        if rep.plan.client_round.size != n_rounds or rep.client_round.shape != (n_rounds,):
            raise ValueError("every replicate needs a plan and client_round of the same rounds")
        if not ((rep.fed.X is X or np.array_equal(rep.fed.X, X))
                and (rep.fed.y is y or np.array_equal(rep.fed.y, y))):
            raise ValueError("every replicate's federation must split the same data")
    if not 1 <= tail <= n_rounds:
        raise ValueError(f"tail must lie in [1, {n_rounds}]")
    W = np.zeros((len(reps), X.shape[1], N_CLASSES))
    V, acc = np.empty_like(W), np.empty_like(W)
    kept = []
    for r in range(n_rounds):
        phases = [_phases(rep, r, server_steps, batch) for rep in reps]
        clients = [b for b, rep in enumerate(reps) if rep.client_round[r]]
        acc[clients] = 0.0
        for p in range(max(len(ph) for ph in phases)):
            active = np.array([b for b in range(len(reps)) if p < len(phases[b])])
            V[active] = W[active]
            for is_client in (True, False):
                mine = [b for b in active if phases[b][p][0] == is_client]
                if mine:
                    _phase_steps(V, X, y, [phases[b][p][1] for b in mine], np.array(mine),
                                 step_client if is_client else step_server, batch)
            for b in active:
                if phases[b][p][0]:
                    acc[b] += V[b]
                else:
                    W[b] = V[b]
        for b in clients:
            W[b] = acc[b] / reps[b].plan.clients.shape[1]
        if r >= n_rounds - tail:
            kept.append(W.copy())
    return np.array(kept)


def _phase_steps(V, X, y, samples, rows, step, batch):
    """Minibatch SGD from ``V[rows[k]]`` over ``samples[k]`` in ``batch``-sized pieces, for
    every k at once: at each step, the replicates whose minibatch has the same size in one
    stacked :func:`_grad` (all full minibatches together, each size of a last, partial one
    apart). The replicates are ordered by decreasing number of samples, so that every such
    group is a contiguous block of the phase's weights (updated in place, no gathering)."""
    order = np.argsort([-idx.size for idx in samples], kind="stable")
    sizes = np.array([samples[k].size for k in order])
    table = np.zeros((order.size, sizes[0]), dtype=np.int64)
    for j, k in enumerate(order):
        table[j, :sizes[j]] = samples[k]
    block = V[rows[order]]
    for lo in range(0, sizes[0], batch):
        left = np.minimum(sizes - lo, batch)      # non-increasing
        start = 0
        while start < left.size and left[start] > 0:
            size = left[start]
            stop = start + int(np.searchsorted(-left[start:], -size, side="right"))
            idx = table[start:stop, lo:lo + size]
            block[start:stop] -= step * _grad(block[start:stop], X[idx], y[idx])
            start = stop
    V[rows[order]] = block


class GainSetting(NamedTuple):
    """One comparison of :func:`gains`: the federation's classes per client, excluded
    clients and server sample size, and SAFARI's q."""

    classes_per_client: int
    n_excluded: int
    n_server: int
    q: float = 0.8


def gains(draws, *, n_rounds=150, n_sampled=5, batch=16, tail=10,
          server_steps=None) -> np.ndarray:
    """:func:`gain` for every ``(rng, setting)`` of ``draws`` (a sequence of a generator and
    a :class:`GainSetting`), the generators consumed in that order, exactly as one call of
    :func:`gain` after the other would; all FedAvg and SAFARI runs in one
    :func:`lockstep_runs`. Row k is ``gain(rng_k, **setting_k._asdict(), ...)``: shape
    (len(draws), 2), test accuracy (%) of FedAvg and SAFARI."""
    data, reps, tests = load_digits_features(), [], []
    for rng, setting in draws:
        fed = digits_federation(rng, classes_per_client=setting.classes_per_client,
                                n_server=setting.n_server, data=data)
        plan = digits_plan(rng, fed, n_rounds=n_rounds, q=setting.q,
                           n_excluded=setting.n_excluded, n_sampled=n_sampled)
        # FedAvg (the plan with every round a client round) and SAFARI (the plan), paired
        reps += [Replicate(fed, plan, np.ones(n_rounds, dtype=bool)),
                 Replicate(fed, plan, plan.client_round)]
        tests.append((fed.X[fed.test_idx], fed.y[fed.test_idx]))
    kept = lockstep_runs(reps, step_client=0.1, step_server=0.1, batch=batch, tail=tail,
                         server_steps=server_steps)
    acc = [[np.mean([accuracy(W, X, y) for W in kept[:, 2 * k + j]]) for j in range(2)]
           for k, (X, y) in enumerate(tests)]
    return 100 * np.array(acc, dtype=float)


def gain(rng, *, classes_per_client, n_excluded, n_server, q=0.8, n_rounds=150,
         n_sampled=5, batch=16, tail=10, server_steps=None) -> tuple[float, float]:
    """Test accuracy (%) of FedAvg (q = 1) and SAFARI (q) on one shared federation and plan,
    averaged over the models of the last ``tail`` rounds (with q < 1 the final model depends
    on whether the last rounds happened to be client or server rounds; the tail average
    removes that lottery without favouring either method). Several at once: :func:`gains`."""
    setting = GainSetting(classes_per_client, n_excluded, n_server, q)
    fedavg, safari = gains([(rng, setting)], n_rounds=n_rounds, n_sampled=n_sampled,
                           batch=batch, tail=tail, server_steps=server_steps)[0]
    return float(fedavg), float(safari)
