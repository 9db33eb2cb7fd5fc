r"""FedProx Synthetic(alpha, beta) data with multinomial logistic regression (K-Vib Sec. 6.1).

Generator (Li et al. 2020, as configured by the K-Vib code, spec 003 section 5): client sizes
:math:`\lfloor\mathrm{LogNormal}(4,2)\rfloor+50` (optionally capped), features
:math:`x\sim N(\mu_i,\mathrm{diag}((j+1)^{-1.2}))` with :math:`\mu_i\sim N(B_i,1)`,
:math:`B_i\sim N(0,\beta)`; labels :math:`y=\arg\max(xW_i+b_i)` with
:math:`W_i,b_i\sim N(u_i,1)`, :math:`u_i\sim N(0,\alpha)`. Client weights
:math:`\lambda_i\propto n_i`. The model is softmax regression with a bias, parameters flattened
to ``dim = (d + 1) * C``; losses are mean cross-entropy per client (all data used for training;
the paper's 90/10 split only matters for test curves).
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from verify.softmax import softmax_rows

# Largest padded row count for which the gradients go by size groups (:meth:`SoftmaxRegression.
# _size_groups`, one transposed product per client); the uncapped federations (3,000+ rows)
# take the padded product over every client's rows.
_GROUPED_MAX_ROWS = 256


class SoftmaxRegression:
    r"""Federated softmax regression: :math:`f_i(x)=\frac1{n_i}\sum_k\mathrm{CE}(W^\top a_k+b,y_k)`.

    Same calling convention as :mod:`flbounds.problems` (``client_losses(X, clients=)``,
    ``client_gradients(X, clients=)``, rows = clients). ``weights`` are the :math:`\lambda_i`.
    ``client_L`` bounds the smoothness: :math:`\frac12\lambda_{\max}(\tilde A_i^\top\tilde A_i/n_i)`
    with :math:`\tilde A_i=[A_i,1]` (the softmax Hessian is at most 1/2 in operator norm).
    """

    def __init__(self, features: list[np.ndarray], labels: list[np.ndarray], n_classes: int):
        if len(features) != len(labels) or not features:
            raise ValueError("features and labels must be non-empty lists of equal length")
        self.n_clients = len(features)
        self.n_features = features[0].shape[1]
        self.n_classes = int(n_classes)
        self.dim = (self.n_features + 1) * self.n_classes
        sizes = np.array([f.shape[0] for f in features])
        n_max = int(sizes.max())
        # padded (N, n_max, d + 1) design with a bias column; padded rows are zero and masked
        self._data = np.zeros((self.n_clients, n_max, self.n_features + 1))
        self._onehot = np.zeros((self.n_clients, n_max, self.n_classes))
        self._mask = np.zeros((self.n_clients, n_max))
        for i, (f, y) in enumerate(zip(features, labels, strict=True)):
            self._data[i, :sizes[i], :-1] = f
            self._data[i, :sizes[i], -1] = 1.0
            self._onehot[i, np.arange(sizes[i]), y] = 1.0
            self._mask[i, :sizes[i]] = 1.0
        self.sizes = sizes
        self._groups = self._size_groups(n_max) if n_max <= _GROUPED_MAX_ROWS else None
        self._order = np.arange(self.n_clients)
        self._gathered = None
        self.weights = sizes / sizes.sum()
        grams = np.einsum("inp,inq->ipq", self._data, self._data) / sizes[:, None, None]
        self.client_L = 0.5 * np.linalg.eigvalsh(grams)[:, -1]
        self.L = float(self.client_L.max())

    def _clients(self, X, clients):
        idx = np.arange(self.n_clients) if clients is None else np.asarray(clients)
        X = np.asarray(X, dtype=float)
        if X.shape != (idx.size, self.dim):
            raise ValueError(f"X must have shape ({idx.size}, {self.dim})")
        return X, idx

    def _logits(self, X, idx):
        W = X.reshape(idx.size, self.n_features + 1, self.n_classes)
        return np.matmul(self._data[idx], W)

    def client_losses(self, X, *, clients=None) -> np.ndarray:
        X, idx = self._clients(X, clients)
        reps = self._repetitions(idx)
        if self._groups is not None:    # the transposed rows (:func:`_transposed_losses`)
            W = X.reshape(idx.size, self.n_features + 1, self.n_classes)
            if reps:    # every client, reps times in order: broadcast the data
                W = W.reshape(reps, self.n_clients, *W.shape[1:])
                return _transposed_losses(self._data_t, self._onehot_t, self._mask,
                                          self.sizes, W).reshape(idx.size)
            return _transposed_losses(self._data_t[idx], self._onehot_t[idx], self._mask[idx],
                                      self.sizes[idx], W)
        if reps:     # every client, reps times in order: broadcast the data, do not copy it
            W = X.reshape(reps, self.n_clients, self.n_features + 1, self.n_classes)
            logits = np.matmul(self._data, W)
            ce = logsumexp(logits, axis=-1) - np.sum(logits * self._onehot, axis=-1)
            return (np.sum(ce * self._mask, axis=-1) / self.sizes).reshape(idx.size)
        logits = self._logits(X, idx)
        ce = logsumexp(logits, axis=2) - np.sum(logits * self._onehot[idx], axis=2)
        return np.sum(ce * self._mask[idx], axis=1) / self.sizes[idx]

    def _size_groups(self, n_max):
        """The clients grouped by their size rounded up to a multiple of 8 (at most
        ``n_max``): per group the clients, that row count, their rows and one-hot labels
        transposed ((n, d + 1, m) and (n, C, m)) and their sizes. A client's gradient is
        computed from its first m rows in every call (:func:`_group_gradients`), so its
        bits are the same whichever clients or replicates share the call; the rows beyond a
        client's size are zero and add exact zeros."""
        self._rows = rows = np.minimum(-(-self.sizes // 8) * 8, n_max)
        self._data_t = np.ascontiguousarray(np.swapaxes(self._data, 1, 2))
        self._onehot_t = np.ascontiguousarray(np.swapaxes(self._onehot, 1, 2))
        groups = []
        for m in np.unique(rows):
            who = np.flatnonzero(rows == m)
            groups.append((who, int(m), np.ascontiguousarray(self._data_t[who, :, :m]),
                           np.ascontiguousarray(self._onehot_t[who, :, :m]), self.sizes[who]))
        return groups

    def _replicated_gradients(self, W):
        """Gradients of every client for ``W`` of shape (reps, N, d + 1, C), group by group
        (:meth:`_size_groups`)."""
        if len(self._groups) == 1:      # every client in one group, in order: no copies
            _, _, data_t, onehot_t, sizes = self._groups[0]
            return _group_gradients(data_t, onehot_t, sizes, W)
        grad = np.empty_like(W)
        for who, _, data_t, onehot_t, sizes in self._groups:
            grad[:, who] = _group_gradients(data_t, onehot_t, sizes, W[:, who])
        return grad

    def client_gradients(self, X, *, clients=None) -> np.ndarray:
        X, idx = self._clients(X, clients)
        W = X.reshape(idx.size, self.n_features + 1, self.n_classes)
        reps = self._repetitions(idx)
        if reps and self._groups is not None:   # every client, reps times in order
            W = W.reshape(reps, self.n_clients, *W.shape[1:])
            return self._replicated_gradients(W).reshape(idx.size, self.dim)
        if reps:     # every client, reps times in order: broadcast the data, do not copy it
            data, onehot, sizes = self._data, self._onehot, self.sizes
            W = W.reshape(reps, self.n_clients, *W.shape[1:])
        elif self._groups is not None:      # a list of clients: its size groups
            grad = np.empty_like(W)
            for at, data_t, onehot_t, sizes in self._gathered_groups(idx):
                grad[at] = _group_gradients(data_t, onehot_t, sizes, W[at])
            return grad.reshape(idx.size, self.dim)
        else:
            data, onehot, sizes = self._rows_of(idx)
        P = softmax_rows(np.matmul(data, W))
        P -= onehot     # padded rows are not masked: their features are 0, so they add
        grad = np.matmul(np.swapaxes(data, -1, -2), P)    # exact zeros to the product
        grad /= sizes[:, None, None]
        return grad.reshape(idx.size, self.dim)

    def _rows_of(self, idx):
        """Copies of the data, one-hot labels and sizes of the clients ``idx``; the last
        copies are kept, since the local steps of a round ask for the same clients again."""
        if self._gathered is None or not np.array_equal(self._gathered[0], idx):
            self._gathered = (idx.copy(), self._data[idx], self._onehot[idx], self.sizes[idx])
        return self._gathered[1:]

    def _gathered_groups(self, idx):
        """The clients ``idx`` by size groups (:meth:`_size_groups`): per group their
        positions in ``idx`` and copies of their rows, one-hot labels and sizes; the last
        groups are kept, as in :meth:`_rows_of`."""
        if self._gathered is None or not np.array_equal(self._gathered[0], idx):
            rows, groups = self._rows[idx], []
            for m in np.unique(rows):
                at = np.flatnonzero(rows == m)
                who = idx[at]
                groups.append((at, self._data_t[who, :, :m], self._onehot_t[who, :, :m],
                               self.sizes[who]))
            self._gathered = (idx.copy(), groups)
        return self._gathered[1]

    def _repetitions(self, idx) -> int:
        """r when ``idx`` lists every client in order r times (the replicated rounds), else 0."""
        reps, rest = divmod(idx.size, self.n_clients)
        shape = (reps, self.n_clients)
        if rest or not reps or not np.array_equal(idx.reshape(shape),
                                                  np.broadcast_to(self._order, shape)):
            return 0
        return reps


def _group_gradients(data_t, onehot_t, sizes, W):
    r"""Cross-entropy gradients (..., n, d + 1, C) of n clients at ``W`` (..., n, d + 1, C)
    from their transposed rows ``data_t`` (n, d + 1, m), one-hot labels ``onehot_t``
    (n, C, m) and sizes (n,): logits :math:`Z^\top = W^\top A^\top` (C, m) per client, the
    softmax down each column (the classes of a row: maxima, sums and the exponential over
    contiguous rows of m), :math:`A^\top(P - Y)/n_i`. One product per client and
    replicate, whatever the batch."""
    Z = np.matmul(np.swapaxes(W, -1, -2), data_t)
    Z -= Z.max(axis=-2, keepdims=True)
    np.exp(Z, out=Z)
    Z /= Z.sum(axis=-2, keepdims=True)
    Z -= onehot_t       # columns beyond a client's size have zero features: they add zeros
    grad = np.matmul(data_t, np.swapaxes(Z, -1, -2))
    grad /= sizes[:, None, None]
    return grad


def _transposed_losses(data_t, onehot_t, mask, sizes, W):
    r"""Mean cross-entropy (..., n) of n clients at ``W`` (..., n, d + 1, C) from their
    transposed padded rows ``data_t`` (n, d + 1, n_max), one-hot labels ``onehot_t``
    (n, C, n_max), row mask (n, n_max) and sizes: the log-sum-exp of the logits
    :math:`W^\top A^\top` down each column (its maximum, then the log of the exponentials'
    sum), less the label's logit, averaged over the client's rows."""
    Z = np.matmul(np.swapaxes(W, -1, -2), data_t)
    picked = np.sum(Z * onehot_t, axis=-2)     # the label's logit (the others times 0)
    peak = Z.max(axis=-2)
    Z -= peak[..., None, :]
    np.exp(Z, out=Z)
    ce = np.log(Z.sum(axis=-2)) + peak - picked
    ce *= mask
    return np.sum(ce, axis=-1) / sizes


def _draw(rng, alpha, beta, n_clients, n_features, n_classes, max_samples):
    """Every client's features and labels (the generator of the module docstring)."""
    if alpha < 0 or beta < 0:
        raise ValueError("alpha and beta must be nonnegative")
    sizes = rng.lognormal(4, 2, n_clients).astype(int) + 50
    if max_samples is not None:
        sizes = np.minimum(sizes, max_samples)
    cov_diag = (np.arange(1, n_features + 1)) ** -1.2
    feats, labels = [], []
    for i in range(n_clients):
        u = rng.normal(0, np.sqrt(alpha))
        b_mean = rng.normal(0, np.sqrt(beta))
        mean = rng.normal(b_mean, 1.0, n_features)
        w = rng.normal(u, 1.0, (n_features, n_classes))
        b = rng.normal(u, 1.0, n_classes)
        x = mean + rng.standard_normal((sizes[i], n_features)) * np.sqrt(cov_diag)
        feats.append(x)
        labels.append(np.argmax(x @ w + b, axis=1))
    return feats, labels


def fedprox_synthetic(rng: np.random.Generator, alpha: float, beta: float, *,
                      n_clients: int = 100, n_features: int = 60, n_classes: int = 10,
                      max_samples: int | None = 1000) -> SoftmaxRegression:
    """Draw a Synthetic(alpha, beta) federation (see the module docstring).

    ``max_samples`` caps the LogNormal(4, 2) client sizes (the uncapped tail reaches 10^5);
    ``None`` keeps the generator's sizes.
    """
    feats, labels = _draw(rng, alpha, beta, n_clients, n_features, n_classes, max_samples)
    return SoftmaxRegression(feats, labels, n_classes)


def fedprox_synthetic_split(rng: np.random.Generator, alpha: float, beta: float, *,
                            test_fraction: float = 0.1, n_clients: int = 100,
                            n_features: int = 60, n_classes: int = 10,
                            max_samples: int | None = 1000):
    """The federation of :func:`fedprox_synthetic` split per client into train and test
    parts (the K-Vib code's 90/10 split; samples are i.i.d. within a client, so the last
    ``test_fraction`` of each client's draw is its test set). Returns (train, test)."""
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must lie in (0, 1), got {test_fraction!r}")
    feats, labels = _draw(rng, alpha, beta, n_clients, n_features, n_classes, max_samples)
    cut = [len(y) - max(1, int(round(test_fraction * len(y)))) for y in labels]
    train = SoftmaxRegression([f[:c] for f, c in zip(feats, cut, strict=True)],
                              [y[:c] for y, c in zip(labels, cut, strict=True)], n_classes)
    test = SoftmaxRegression([f[c:] for f, c in zip(feats, cut, strict=True)],
                             [y[c:] for y, c in zip(labels, cut, strict=True)], n_classes)
    return train, test
