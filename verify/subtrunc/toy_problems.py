r"""Small nonnegative L-smooth client losses for the Theorem 1 claims of SubTrunc.

Clients are an array axis; points ``W`` have shape (..., n_clients, d) so Monte Carlo paths
can be a leading axis. Every problem provides per-client values and gradients, the
smoothness constant L (max over clients) and the per-client minima where known.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: the points :meth:`LeastSquares.gradients` takes at once (their residuals, n m P floats,
#: then fit in cache at the Lemma 1 and 2 sizes)
GRADIENT_BLOCK = 256


@dataclass(frozen=True)
class LeastSquares:
    r""":math:`f_i(w) = \|X_i w - y_i\|^2/(2m) + (\rho/2)\|w\|^2` (nonnegative, convex)."""

    features: np.ndarray  # (n, m, d)
    targets: np.ndarray  # (n, m)
    rho: float

    @property
    def hessians(self) -> np.ndarray:
        m = self.features.shape[1]
        d = self.features.shape[2]
        return np.einsum("imd,ime->ide", self.features, self.features) / m + self.rho * np.eye(d)

    @property
    def L(self) -> float:
        return float(np.linalg.eigvalsh(self.hessians).max())

    def _residuals(self, W):
        W = np.asarray(W)
        lead, (n, d) = W.shape[:-2], W.shape[-2:]
        flat = W.reshape(-1, n, d).transpose(1, 2, 0)  # (n, d, P): n batched BLAS calls
        out = (self.features @ flat).transpose(2, 0, 1).reshape(*lead, n, -1)
        return out - self.targets

    def values(self, W):
        resid = self._residuals(W)
        return (resid ** 2).mean(axis=-1) / 2 + self.rho / 2 * (W ** 2).sum(axis=-1)

    def gradients(self, W):
        """Per-client gradients at ``W`` (..., n, d): the residuals stay in the (n, m, P)
        layout the batched product leaves them in (no transposed copies of the largest
        array), the same numbers as transposing them to (P, n, m) and back. Many points
        (P above ``GRADIENT_BLOCK``) go through in blocks of points, so the residuals of a
        block stay in cache: each point's numbers are computed by the same operations."""
        W = np.asarray(W)
        lead, (n, d) = W.shape[:-2], W.shape[-2:]
        flat = W.reshape(-1, n, d)
        if flat.shape[0] <= GRADIENT_BLOCK:
            return self._block_gradients(flat).reshape(*lead, n, d)
        out = np.empty(flat.shape)
        for start in range(0, flat.shape[0], GRADIENT_BLOCK):
            block = slice(start, start + GRADIENT_BLOCK)
            out[block] = self._block_gradients(flat[block])
        return out.reshape(*lead, n, d)

    def _block_gradients(self, flat):
        """:meth:`gradients` at the points ``flat`` (P, n, d)."""
        m = self.features.shape[1]
        resid = self.features @ flat.transpose(1, 2, 0)  # (n, m, P)
        resid -= self.targets[:, :, None]
        grad = (self.features.transpose(0, 2, 1) @ resid).transpose(2, 0, 1)  # (P, n, d)
        return grad / m + self.rho * flat

    def minima(self) -> np.ndarray:
        m = self.features.shape[1]
        rhs = np.einsum("imd,im->id", self.features, self.targets) / m
        w_star = np.linalg.solve(self.hessians, rhs[..., None])[..., 0]
        return self.values(w_star)


def affine_form(prob: LeastSquares) -> tuple[np.ndarray, np.ndarray]:
    r"""``(H^T, b)`` with :math:`\nabla f_i(w) = H_i w - b_i`, :math:`H_i = X_i^\top X_i/m +
    \rho I` (transposed, (n, d, d)) and :math:`b_i = X_i^\top y_i/m` ((n, d)): the gradient of
    a least-squares client is affine, so a point's gradient costs d^2 products instead of the
    residuals' 2 m d (:func:`affine_gradients`)."""
    m = prob.features.shape[1]
    b = np.einsum("imd,im->id", prob.features, prob.targets) / m
    return np.ascontiguousarray(np.swapaxes(prob.hessians, 1, 2)), b


def affine_gradients(form, W) -> np.ndarray:
    """Per-client gradients at ``W`` (..., n, d) from :func:`affine_form`: the values of
    :meth:`LeastSquares.gradients` (the same function, summed in another order: they agree
    to rounding, about 1e-15 relative), one batched product of the points with each
    client's H^T per block of about ``GRADIENT_BLOCK`` x 20 client-points (8x fewer
    products at m = 20, d = 5, and no residual array: what the Monte Carlo paths of Lemmas
    1 and 2 and Theorem 1 move). The result is a view of client-major memory, the
    products' own layout (a mean over the clients then reads whole slices)."""
    Ht, b = form
    W = np.asarray(W)
    lead, (n, d) = W.shape[:-2], W.shape[-2:]
    flat = W.reshape(-1, n, d)
    out = np.empty((n, flat.shape[0], d))
    size = max(1, GRADIENT_BLOCK * 20 // n)
    for start in range(0, flat.shape[0], size):
        block = out[:, start:start + size]
        np.matmul(flat[start:start + size].transpose(1, 0, 2), Ht, out=block)
        block -= b[:, None, :]
    return out.transpose(1, 0, 2).reshape(*lead, n, d)


def gradients_of(prob):
    """The gradient map the Monte Carlo paths use: :func:`affine_gradients` for
    :class:`LeastSquares` (its affine form computed once), the problem's own ``gradients``
    for any other problem."""
    if type(prob) is LeastSquares:
        form = affine_form(prob)
        return lambda W: affine_gradients(form, W)
    return prob.gradients


@dataclass(frozen=True)
class CosineSum:
    r""":math:`f_i(w) = a_i \sum_j (1 + \cos(w_j - c_{ij}))`: nonnegative, nonconvex,
    :math:`a_i`-smooth, minimum 0."""

    scale: np.ndarray  # (n,)
    shifts: np.ndarray  # (n, d)

    @property
    def L(self) -> float:
        return float(self.scale.max())

    def values(self, W):
        return self.scale * (1 + np.cos(W - self.shifts)).sum(axis=-1)

    def gradients(self, W):
        """``-a_i sin(w - c_i)``, computed in one fresh array (the same numbers)."""
        out = np.subtract(W, self.shifts)
        np.sin(out, out=out)
        out *= -self.scale[:, None]
        return out

    def minima(self) -> np.ndarray:
        return np.zeros(self.scale.size)


def random_least_squares(rng, n, d, m=20, rho=0.1) -> LeastSquares:
    scales = rng.uniform(0.3, 2.0, size=(n, 1, 1))
    features = rng.normal(size=(n, m, d)) * scales
    truth = rng.normal(size=(n, d)) * 2.0  # heterogeneous optima
    targets = np.einsum("imd,id->im", features, truth) + 0.5 * rng.normal(size=(n, m))
    return LeastSquares(features, targets, rho)


def random_cosine(rng, n, d) -> CosineSum:
    return CosineSum(rng.uniform(0.5, 1.5, size=n), rng.uniform(-np.pi, np.pi, size=(n, d)))
