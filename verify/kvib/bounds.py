r"""[003]'s printed bounds as functions of their constants (``flbounds bound``)."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import (
    bound,
    integer,
    nonnegative,
    positive,
    probabilities,
    vector,
)
from flbounds.sampling import isp_variance, rsp_bound


def _thm41_rho(gamma, step):
    return (1 - 10 * gamma * step**2) / 16


def _thm41_check(*, gamma, L, **_):
    if not gamma > 0:
        raise ValueError(f"gamma must be > 0, got {gamma}")


def thm41_rhs(*, M, L, T, sigma2, beta1, gamma, last=2.0):
    """The right side of App. C.2's explicit bound before dividing by rho (last term
    ``last`` L M/T: 2 as printed, 16 corrected); shared by the bound and the attack surfaces."""
    return (np.sqrt(2 * M * (4 * beta1 + 5 * L * sigma2) / T)
            + np.cbrt(5 * sigma2 * gamma) * (2 * M / T) ** (2 / 3) + last * L * M / T)


def _thm41_value(*, M, L, T, sigma2, beta1, gamma, step, last=2.0):
    rho = _thm41_rho(gamma, step)
    if not rho > 0:
        return np.inf  # the proof needs rho = (1 - 10 gamma eta^2)/16 > 0
    return thm41_rhs(M=M, L=L, T=T, sigma2=sigma2, beta1=beta1, gamma=gamma, last=last) / rho


@bound("kvib.lemma_b5", ref="Lemma B.5 (step-size choice)",
       constants=(positive("r0"), nonnegative("b"), nonnegative("e"), positive("d"),
                  positive("T", "rounds")),
       quantity="min over the lemma's step of r0/(T eta) + b eta + e eta^2")
def lemma_b5(*, r0, b, e, d, T):
    """2 (b r0/T)^1/2 + 2 e^1/3 (r0/T)^2/3 + d r0/T."""
    return 2 * np.sqrt(b * r0 / T) + 2 * np.cbrt(e) * (r0 / T) ** (2 / 3) + d * r0 / T


@bound("kvib.thm4_1", ref="Thm 4.1, explicit form of App. C.2",
       constants=(nonnegative("M", "E f(x_0) - f(x_inf)"), positive("L"),
                  integer("T", "rounds"), nonnegative("sigma2", "sigma_l^2/R + 6 sigma_g^2"),
                  nonnegative("beta1", "mean sub-optimality Q(S^t)"),
                  positive("gamma", "gamma^t = (alpha (N-K)/K + N) W, constant here")),
       check=_thm41_check, quantity="min_t E||grad f(x_t)||^2",
       steps=lambda L, **_: {"eta <= 1/(8L)": 1 / (8 * L)},
       corrected=lambda **c: _thm41_value(**c, last=16.0))
def thm4_1(**c):
    """RHS / rho; corrected: the step choice of Lemma B.5 gives 16 L M/T as the last term."""
    return _thm41_value(**c)


@bound("kvib.thm5_1", ref="Thm 5.1 (best fixed probability)",
       constants=(integer("T", "rounds"), positive("K", "expected sample size"),
                  nonnegative("Pi_star", "sum_i pi_*(i)"),
                  vector("V", "V_T(i), one per client")),
       quantity="T_BFP (regret of the best fixed probability)")
def thm5_1(*, T, K, Pi_star, V):
    """(T/K) (sum_i sqrt(V_T(i)/T)) (2 Pi_* + sum_i sqrt(V_T(i)/T))."""
    s = float(np.sum(np.sqrt(np.asarray(V) / T)))
    return T / K * s * (2 * Pi_star + s)


def _same_length(*, p, a):
    if p.size != a.size:
        raise ValueError(f"p and a must have one entry per client, got {p.size} and {a.size}")


_LEMMA21 = (probabilities("p", "inclusion probabilities p_i"),
            vector("a", "a_i = lambda_i ||g_i||, one per client"))


@bound("kvib.lemma2_1.isp", ref="Lemma 2.1, eq. (3), ISP side (an equality)",
       constants=_LEMMA21, check=_same_length,
       quantity="V(S) under independent sampling: sum_i (1 - p_i) a_i^2 / p_i")
def lemma2_1_isp(*, p, a):
    """The exact ISP variance (``flbounds.sampling.isp_variance``)."""
    return isp_variance(p, a)


@bound("kvib.lemma2_1.rsp", ref="Lemma 2.1, eq. (3), RSP side (an upper bound)",
       constants=_LEMMA21, check=_same_length,
       quantity="RSP variance bound (N-K)/(N-1) sum_i a_i^2/p_i, K = sum p")
def lemma2_1_rsp(*, p, a):
    """The RSP bound (``flbounds.sampling.rsp_bound``)."""
    return rsp_bound(p, a)
