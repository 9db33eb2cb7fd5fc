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
from scipy.special import logsumexp, softmax


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
        self._data = [np.hstack([f, np.ones((f.shape[0], 1))]) for f in features]
        self._onehot = [np.eye(self.n_classes)[y] for y in labels]
        sizes = np.array([f.shape[0] for f in features], dtype=float)
        self.weights = sizes / sizes.sum()
        self.client_L = np.array([0.5 * np.linalg.eigvalsh(a.T @ a / a.shape[0])[-1]
                                  for a in self._data])
        self.L = float(self.client_L.max())

    def _params(self, x):
        return x.reshape(self.n_features + 1, self.n_classes)

    def _clients(self, X, clients):
        idx = np.arange(self.n_clients) if clients is None else np.asarray(clients)
        X = np.asarray(X, dtype=float)
        if X.shape != (idx.size, self.dim):
            raise ValueError(f"X must have shape ({idx.size}, {self.dim})")
        return X, idx

    def client_losses(self, X, *, clients=None) -> np.ndarray:
        X, idx = self._clients(X, clients)
        out = np.empty(idx.size)
        for j, i in enumerate(idx):
            logits = self._data[i] @ self._params(X[j])
            out[j] = np.mean(logsumexp(logits, axis=1) - np.sum(logits * self._onehot[i], 1))
        return out

    def client_gradients(self, X, *, clients=None) -> np.ndarray:
        X, idx = self._clients(X, clients)
        out = np.empty((idx.size, self.dim))
        for j, i in enumerate(idx):
            a = self._data[i]
            resid = softmax(a @ self._params(X[j]), axis=1) - self._onehot[i]
            out[j] = (a.T @ resid / a.shape[0]).ravel()
        return out


def fedprox_synthetic(rng: np.random.Generator, alpha: float, beta: float, *,
                      n_clients: int = 100, n_features: int = 60, n_classes: int = 10,
                      max_samples: int | None = 1000) -> SoftmaxRegression:
    """Draw a Synthetic(alpha, beta) federation (see the module docstring).

    ``max_samples`` caps the LogNormal(4, 2) client sizes (the uncapped tail reaches 10^5);
    ``None`` keeps the generator's sizes.
    """
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
    return SoftmaxRegression(feats, labels, n_classes)
