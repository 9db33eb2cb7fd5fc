r"""Closed forms of ordinary least squares with Gaussian covariates (FedALS's OLS example): the
expected generalization gap of one client's fit, of the average of K clients' fits, and the
non-iidness of that average."""

from __future__ import annotations


def ols_local_gap(dim: int, n_samples: int, noise_sd: float = 1.0) -> float:
    r"""Expected generalization gap of OLS with Gaussian covariates (FedALS's OLS example).

    .. math:: G = \sigma^2 d \left[\frac{1}{2(n-d-1)} + \frac{1}{2n}\right].
    """
    m = n_samples - dim - 1
    if m <= 0:
        raise ValueError("n_samples must exceed dim + 1")
    return noise_sd ** 2 * dim * (0.5 / m + 0.5 / n_samples)


def ols_averaged_gap(dim: int, n_samples: int, n_clients: int, noise_sd: float = 1.0) -> float:
    r"""Expected gap of the average of K client OLS fits (iid or concept shift).

    .. math:: \sigma^2 d \left[\frac{1}{2K^2(n-d-1)} + \frac{2K-1}{2nK^2}\right].
    """
    m = n_samples - dim - 1
    if m <= 0 or n_clients < 1:
        raise ValueError("need n_samples > dim + 1 and n_clients >= 1")
    K = n_clients
    return noise_sd ** 2 * dim * (0.5 / (K * K * m) + (2 * K - 1) / (2 * n_samples * K * K))


def ols_nonidness(dim: int, n_samples: int, n_clients: int, noise_sd: float = 1.0) -> float:
    r"""Expected non-iidness :math:`D_k` of the OLS average in iid data (FedALS's OLS example).

    .. math:: \frac{\sigma^2 d}{2}\left[\frac{K-1}{K^2(n-d-1)} + \frac{(1-1/K)^2}{n}\right].
    """
    m = n_samples - dim - 1
    if m <= 0 or n_clients < 1:
        raise ValueError("need n_samples > dim + 1 and n_clients >= 1")
    K = n_clients
    return 0.5 * noise_sd ** 2 * dim * ((K - 1) / (K * K * m) + (1 - 1 / K) ** 2 / n_samples)


__all__ = ["ols_averaged_gap", "ols_local_gap", "ols_nonidness"]
