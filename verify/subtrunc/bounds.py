r"""[004]'s printed bound as a function of its constants (``flbounds bound``)."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import bound, integer, nonnegative, positive


def aux_inequality_sides(k, x):
    """Both sides of the proof's auxiliary inequality zeta K (1 - zeta K) <= 1 - (1 + zeta)^-K
    at zeta K = x, the right side through expm1/log1p (accurate as x -> 0)."""
    return x * (1 - x), -np.expm1(-k * np.log1p(x / k))


@bound("subtrunc.thm1", ref="Thm 1, eq. (19)",
       constants=(positive("L", "smoothness"), nonnegative("f0", "f(w_0) (f >= 0)"),
                  integer("K", "rounds (K >= 9)", low=9), integer("E", "local epochs"),
                  integer("n", "local samples"), nonnegative("sigma2", "gradient noise"),
                  nonnegative("gamma", "selection bias")),
       quantity="E||grad f(w_k*)||^2, k* ~ P")
def thm1(*, L, f0, K, E, n, sigma2, gamma):
    """12 L f(w_0)/sqrt K + (2/(EnK) + 3/K + 4/(En sqrt K)) sigma^2 + (4 + 4/sqrt K) gamma."""
    root = np.sqrt(K)
    return (12 * L * f0 / root + (2 / (E * n * K) + 3 / K + 4 / (E * n * root)) * sigma2
            + (4 + 4 / root) * gamma)
