r"""Client data models with exact population risks, for generalization estimates (FedALS).

Each model describes K client distributions :math:`\mathcal D_k` and exposes, for a batch of
Monte Carlo draws (leading axis ``T``) and the K clients (second axis):

``sample(rng, n_draws, n_samples)``
    independent datasets :math:`S_k \sim \mathcal D_k^{n_k}`, one per draw and client;
``empirical_risk(data, theta)``, ``empirical_grad(data, theta)``
    :math:`R_{S_k}(\theta_k)` and its gradient, ``theta`` of shape (T, K, d);
``population_risk(theta)``
    the exact :math:`R_k(\theta_k)`, shape (T, K);
``erm(data)``
    the local empirical risk minimizer :math:`\arg\min_\theta R_{S_k}(\theta)`.

Every per-sample loss is :math:`\mu`-strongly convex and :math:`L`-smooth in :math:`\theta`
with the constants ``mu`` and ``L`` (the hypothesis of Thm 4.1 of FedALS); ``reference_theta``
(K, d) is a fixed vector per client, used as a zero-mean control variate.

References
----------
.. FedALS P. Gholami, H. Seferoglu, "Improved generalization bounds for communication
   efficient federated learning" (FedALS), Sec. 3, Thm 4.1, Thm B.1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.special import expit, softmax

from flbounds.kernels.moments import (
    SEQUENTIAL_ROW,
    batched_quadratic_forms,
    normalize_rows,
    ridge_moment_sums,
)
from flbounds.kernels.pool_risk import binary_pool_newton, pool_population_risk
from flbounds.validation import as_float_array

NEWTON_GRAD_TOL = 1e-12
NEWTON_MAX_ITER = 60


def _check_theta_star(theta_star) -> np.ndarray:
    return as_float_array(theta_star, "theta_star", ndim=2)


def _check_sizes(n_samples, n_clients: int, minimum: int = 1) -> np.ndarray:
    sizes = np.broadcast_to(np.asarray(n_samples), (n_clients,)).astype(int)
    if np.any(sizes < minimum) or not np.all(np.asarray(n_samples) == np.round(n_samples)):
        raise ValueError(f"n_samples must be integers >= {minimum} (one per client)")
    return sizes


def sphere_points(rng: np.random.Generator, shape: tuple[int, ...], dim: int) -> np.ndarray:
    """Points uniform on the unit sphere :math:`S^{d-1}`, shape ``shape + (dim,)``."""
    x = rng.standard_normal((*shape, dim))
    if dim < SEQUENTIAL_ROW:  # the same bits as numpy's norm, without its reduction overhead
        normalize_rows(x.reshape(-1, dim))
        return x
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _last_axis_max(a: np.ndarray) -> np.ndarray:
    """``a.max(axis=-1, keepdims=True)`` for a short last axis (the classes), one maximum per
    class instead of numpy's reduction loop per row: 15-25x faster on the softmax pools'
    logits, and the same numbers (a maximum is exact; a NaN propagates either way)."""
    top = a[..., 0].copy()
    for j in range(1, a.shape[-1]):
        np.maximum(top, a[..., j], out=top)
    return top[..., None]


def _last_axis_sum(a: np.ndarray) -> np.ndarray:
    """``a.sum(axis=-1, keepdims=True)`` for a short last axis, one addition per class: numpy
    sums fewer than 8 terms in order, so these are its numbers (pairwise beyond: numpy's)."""
    if a.shape[-1] >= 8:
        return a.sum(axis=-1, keepdims=True)
    total = a[..., 0].copy()
    for j in range(1, a.shape[-1]):
        total += a[..., j]
    return total[..., None]


class RidgeData(NamedTuple):
    """Sufficient statistics of K least-squares datasets per draw.

    ``gram`` (T, K, d, d) = X'X/n, ``xy`` (T, K, d) = X'y/n, ``yy`` (T, K) = y'y/n; ``X``
    (T, K, n, d) and ``y`` (T, K, n) are kept when every client has the same n (local SGD
    needs the samples themselves), otherwise they are None.
    """

    gram: np.ndarray
    xy: np.ndarray
    yy: np.ndarray
    X: np.ndarray | None
    y: np.ndarray | None


@dataclass(frozen=True)
class RidgeModel:
    r"""Linear regression with L2 penalty on per-sample losses.

    .. math::
        l(\theta, (x, y)) = \tfrac12 (x^\top\theta - y)^2 + \tfrac{\lambda}{2}\|\theta\|^2,
        \qquad y = x^\top \theta^\star_k + \sigma \xi,\ \xi \sim N(0, 1).

    ``covariates="sphere"``: x uniform on the unit sphere, so the per-sample Hessian
    :math:`xx^\top + \lambda I` gives :math:`\mu = \lambda`, :math:`L = 1 + \lambda` exactly, and
    :math:`R_k(\theta) = \tfrac{1}{2d}\|\theta-\theta^\star_k\|^2 + \tfrac{\sigma^2}{2}
    + \tfrac\lambda2\|\theta\|^2`. ``covariates="gaussian"`` (x ~ N(0, I), L unbounded) with
    ``lam=0`` is ordinary least squares, the setting of the closed forms of spec 3.9.
    """

    theta_star: np.ndarray
    noise_sd: float = 1.0
    lam: float = 0.1
    covariates: str = "sphere"

    def __post_init__(self):
        object.__setattr__(self, "theta_star", _check_theta_star(self.theta_star))
        if not (np.isfinite(self.noise_sd) and self.noise_sd >= 0):
            raise ValueError("noise_sd must be finite and >= 0")
        if not (np.isfinite(self.lam) and self.lam >= 0):
            raise ValueError("lam must be finite and >= 0")
        if self.covariates not in ("sphere", "gaussian"):
            raise ValueError("covariates must be 'sphere' or 'gaussian'")

    @property
    def n_clients(self) -> int:
        return self.theta_star.shape[0]

    @property
    def dim(self) -> int:
        return self.theta_star.shape[1]

    @property
    def mu(self) -> float:
        return float(self.lam)

    @property
    def L(self) -> float:
        return 1.0 + self.lam if self.covariates == "sphere" else np.inf

    @property
    def reference_theta(self) -> np.ndarray:
        """Population risk minimizers (K, d): theta*_k s / (s + lambda), E[xx'] = s I."""
        s = self.second_moment
        return self.theta_star * (s / (s + self.lam))

    @property
    def second_moment(self) -> float:
        """E[x x^T] = second_moment * I."""
        return 1.0 / self.dim if self.covariates == "sphere" else 1.0

    def _covariates(self, rng, shape):
        if self.covariates == "sphere":
            return sphere_points(rng, shape, self.dim)
        return rng.standard_normal((*shape, self.dim))

    def sample(self, rng: np.random.Generator, n_draws: int, n_samples, *,
               keep_samples: bool = True) -> RidgeData:
        """Draw datasets for every client; ``n_samples`` is an int or one int per client.

        ``keep_samples=False`` returns the sufficient statistics only (X and y None, the same
        draws): what the local ERM needs, without copying every sample."""
        sizes = _check_sizes(n_samples, self.n_clients)
        K, d = self.n_clients, self.dim
        gram, xy = np.empty((n_draws, K, d, d)), np.empty((n_draws, K, d))
        yy = np.empty((n_draws, K))
        equal = bool(keep_samples) and bool(np.all(sizes == sizes[0]))
        Xs, ys = [], []
        for k in range(K):
            X = self._covariates(rng, (n_draws, sizes[k]))
            y = X @ self.theta_star[k] + self.noise_sd * rng.standard_normal((n_draws, sizes[k]))
            gram_sum, xy_sum = np.empty((n_draws, d, d)), np.empty((n_draws, d))
            ridge_moment_sums(X, y, gram_sum, xy_sum)
            gram[:, k] = gram_sum / sizes[k]
            xy[:, k] = xy_sum / sizes[k]
            yy[:, k] = np.einsum("tn,tn->t", y, y) / sizes[k]
            if equal:
                Xs.append(X)
                ys.append(y)
        if equal:
            return RidgeData(gram, xy, yy, np.stack(Xs, axis=1), np.stack(ys, axis=1))
        return RidgeData(gram, xy, yy, None, None)

    def empirical_risk(self, data: RidgeData, theta: np.ndarray) -> np.ndarray:
        quad = batched_quadratic_forms(theta, data.gram)
        return (0.5 * quad - np.einsum("tki,tki->tk", theta, data.xy) + 0.5 * data.yy
                + 0.5 * self.lam * np.einsum("tki,tki->tk", theta, theta))

    def empirical_grad(self, data: RidgeData, theta: np.ndarray) -> np.ndarray:
        return np.einsum("tkij,tkj->tki", data.gram, theta) - data.xy + self.lam * theta

    def population_risk(self, theta: np.ndarray) -> np.ndarray:
        diff = theta - self.theta_star
        penalty = 0.5 * self.lam * np.einsum("tki,tki->tk", theta, theta)
        return (0.5 * self.second_moment * np.einsum("tki,tki->tk", diff, diff)
                + 0.5 * self.noise_sd ** 2 + penalty)

    def erm(self, data: RidgeData) -> np.ndarray:
        hess = data.gram + self.lam * np.eye(self.dim)
        return np.linalg.solve(hess, data.xy[..., None])[..., 0]

    def batch_grad(self, X: np.ndarray, y: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """Mini-batch gradient: X (T, K, b, d), y (T, K, b), theta (T, K, d)."""
        resid = np.einsum("tkbi,tki->tkb", X, theta) - y
        return np.einsum("tkbi,tkb->tki", X, resid) / X.shape[2] + self.lam * theta


class PoolData(NamedTuple):
    """Indices (T, K, n) into each client's finite pool."""

    index: np.ndarray


@dataclass(frozen=True)
class SoftmaxPool:
    r"""L2-regularized multinomial logistic regression on finite per-client pools.

    :math:`\mathcal D_k` is the uniform distribution on a fixed pool of ``pool_size`` pairs
    :math:`(x, c)`, so population risks are exact sums and datasets are iid draws with
    replacement. With C classes the parameter is a (C, d) matrix flattened to C*d, the loss is
    :math:`-\log \mathrm{softmax}(W x)_c + \tfrac\lambda2 \|W\|_F^2`, the Hessian is
    :math:`(\mathrm{diag}(p) - pp^\top)\otimes xx^\top + \lambda I \preceq
    (\tfrac12\|x\|^2 + \lambda) I`, hence :math:`\mu = \lambda`,
    :math:`L = \tfrac12\max_{pool}\|x\|^2 + \lambda`. Two classes with labels
    :math:`\pm1` give binary logistic regression up to reparametrization; ``LogisticPool``
    below is the binary model with L = 1/4 max||x||^2 + lambda.
    """

    features: np.ndarray      # (K, M, d)
    labels: np.ndarray        # (K, M) integers in [0, C)
    n_classes: int
    lam: float

    def __post_init__(self):
        f = np.asarray(self.features, dtype=float)
        lab = np.asarray(self.labels)
        if f.ndim != 3 or not np.all(np.isfinite(f)):
            raise ValueError("features must be a finite (n_clients, pool_size, dim) array")
        if lab.shape != f.shape[:2] or lab.min() < 0 or lab.max() >= self.n_classes:
            raise ValueError("labels must be (n_clients, pool_size) integers in [0, n_classes)")
        if not self.lam > 0:
            raise ValueError("lam must be > 0 (strong convexity)")
        object.__setattr__(self, "features", f)
        object.__setattr__(self, "labels", lab.astype(np.int64))

    @property
    def n_clients(self) -> int:
        return self.features.shape[0]

    @property
    def dim(self) -> int:
        return self.n_classes * self.features.shape[2]

    @property
    def reference_theta(self) -> np.ndarray:
        """Population risk minimizers (K, d): Newton on each whole pool (computed once)."""
        cached = self.__dict__.get("_reference")
        if cached is None:
            M = self.features.shape[1]
            full = PoolData(np.broadcast_to(np.arange(M), (1, self.n_clients, M)))
            cached = self.erm(full)[0]
            object.__setattr__(self, "_reference", cached)
        return cached

    @property
    def mu(self) -> float:
        return float(self.lam)

    @property
    def L(self) -> float:
        return 0.5 * float(np.max(np.sum(self.features ** 2, axis=-1))) + self.lam

    def sample(self, rng, n_draws: int, n_samples) -> PoolData:
        sizes = _check_sizes(n_samples, self.n_clients)
        if not np.all(sizes == sizes[0]):
            raise ValueError("SoftmaxPool needs the same n_samples for every client")
        M = self.features.shape[1]
        return PoolData(rng.integers(0, M, size=(n_draws, self.n_clients, int(sizes[0]))))

    def _gather(self, data: PoolData):
        k = np.arange(self.n_clients)[None, :, None]
        return self.features[k, data.index], self.labels[k, data.index]

    def _risk_grad(self, X, c, theta, need_grad=True):
        """Mean loss and gradient over the sample axis; X (T, K, n, d'), c (T, K, n)."""
        W = theta.reshape(*theta.shape[:-1], self.n_classes, -1)
        logits = np.matmul(X, W.swapaxes(-1, -2))
        shifted = logits - _last_axis_max(logits)
        lse = np.log(_last_axis_sum(np.exp(shifted)))
        # log p of the picked class only (the same operations on the same numbers as taking
        # it from the whole log p); the whole log p only for the gradient
        picked = np.take_along_axis(shifted, c[..., None], axis=-1)[..., 0] - lse[..., 0]
        risk = -picked.mean(axis=-1) + 0.5 * self.lam * np.sum(theta ** 2, axis=-1)
        if not need_grad:
            return risk, None
        resid = np.exp(shifted - lse)
        np.put_along_axis(resid, c[..., None],
                          np.take_along_axis(resid, c[..., None], axis=-1) - 1.0, axis=-1)
        grad = np.matmul(resid.swapaxes(-1, -2), X) / X.shape[-2]
        return risk, grad.reshape(theta.shape) + self.lam * theta

    def empirical_risk(self, data, theta):
        X, c = self._gather(data)
        return self._risk_grad(X, c, theta, need_grad=False)[0]

    def empirical_grad(self, data, theta):
        X, c = self._gather(data)
        return self._risk_grad(X, c, theta)[1]

    def population_risk(self, theta):
        """The exact risk on each client's pool, theta (T, K, dim) (``pool_population_risk``)."""
        theta = np.ascontiguousarray(theta, dtype=float)
        out = np.empty(theta.shape[:2])
        pool_population_risk(self.features, self.labels, theta, self.n_classes,
                             float(self.lam), out)
        return out

    def _hessian(self, X, theta, outer=None):
        """The Hessian of the empirical risk; ``outer`` the products x x' of the samples
        (``X[..., :, None] * X[..., None, :]``, computed here when not given)."""
        W = theta.reshape(*theta.shape[:-1], self.n_classes, -1)
        p = softmax(np.matmul(X, W.swapaxes(-1, -2)), axis=-1)
        C, n, dx = self.n_classes, X.shape[-2], X.shape[-1]
        cov = p[..., :, None] * np.eye(C) - p[..., :, None] * p[..., None, :]
        if outer is None:
            outer = X[..., :, None] * X[..., None, :]
        lead = theta.shape[:-1]
        H = np.matmul(cov.reshape(*lead, n, C * C).swapaxes(-1, -2),
                      outer.reshape(*lead, n, dx * dx)) / n
        H = H.reshape(*lead, C, C, dx, dx).swapaxes(-2, -3).reshape(*lead, self.dim, self.dim)
        return H + self.lam * np.eye(self.dim)

    def erm(self, data):
        """Newton's method to ||grad|| <= 1e-12 (damped by halving if a step raises the risk);
        with two classes per dataset in a compiled loop (``binary_pool_newton``: each dataset
        stops at the tolerance; if one does not, the batched loop below runs and raises).

        The samples' products x x' are formed once for every Hessian, and the risk and
        gradient at an accepted step are those the line search computed (the same numbers
        as computing them again)."""
        if self.n_classes == 2:
            theta = np.empty((*data.index.shape[:2], self.dim))
            if not binary_pool_newton(self.features, self.labels, np.asarray(data.index),
                                      self.lam, NEWTON_GRAD_TOL, NEWTON_MAX_ITER, theta):
                return theta
        X, c = self._gather(data)
        outer = X[..., :, None] * X[..., None, :]
        theta = np.zeros((*data.index.shape[:2], self.dim))
        risk, grad = self._risk_grad(X, c, theta)
        for _ in range(NEWTON_MAX_ITER):
            if np.max(np.linalg.norm(grad, axis=-1)) <= NEWTON_GRAD_TOL:
                return theta
            step = np.linalg.solve(self._hessian(X, theta, outer), grad[..., None])[..., 0]
            scale = np.ones(theta.shape[:-1])
            for _ in range(30):
                trial = theta - scale[..., None] * step
                trial_risk, trial_grad = self._risk_grad(X, c, trial)
                worse = trial_risk > risk + 1e-15
                if not np.any(worse):
                    break
                scale = np.where(worse, 0.5 * scale, scale)
            theta, risk, grad = trial, trial_risk, trial_grad
        raise RuntimeError("Newton's method did not reach the gradient tolerance")


def gaussian_class_pool(rng, means: np.ndarray, class_lists, pool_size: int) -> tuple:
    """Pools of (x, class) with x = means[c] + N(0, I), classes uniform over each client's list.

    Returns ``features`` (K, M, d) and ``labels`` (K, M) indices into the client's own list
    of classes mapped back to global class ids.
    """
    K = len(class_lists)
    d = means.shape[1]
    feats, labs = np.empty((K, pool_size, d)), np.empty((K, pool_size), dtype=np.int64)
    for k, classes in enumerate(class_lists):
        c = np.asarray(classes)[rng.integers(0, len(classes), size=pool_size)]
        feats[k] = means[c] + rng.standard_normal((pool_size, d))
        labs[k] = c
    return feats, labs


def logistic_pool(rng, theta_star: np.ndarray, pool_size: int, lam: float) -> SoftmaxPool:
    r"""Binary logistic pools: x uniform on the unit sphere, P(class 1 | x) = sigmoid(x'theta*_k).

    Returned as a two-class :class:`SoftmaxPool` (||x|| = 1, so L = 1/2 + lambda for the
    two-logit parametrization).
    """
    theta_star = _check_theta_star(theta_star)
    K, d = theta_star.shape
    X = sphere_points(rng, (K, pool_size), d)
    p1 = expit(np.einsum("kmi,ki->km", X, theta_star))
    labels = (rng.random((K, pool_size)) < p1).astype(np.int64)
    return SoftmaxPool(X, labels, 2, lam)
