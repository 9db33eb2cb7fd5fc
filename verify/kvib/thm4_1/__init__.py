r"""Theorem 4.1 of K-Vib (FedAvg with arbitrary unbiased client sampling): the result, its parts
and its hypotheses; its claims are the sibling modules of this folder.

Statement: under Assumptions 4.1-4.3, with :math:`\mathbb E[f(x^0)-f(x^{+\infty})]\le M`,
:math:`W=\max_i\lambda_i` and budget K, there are learning rates with
:math:`\eta_l\eta_g\le1/(8RL)` such that (eq. (7))

.. math::
    \min_{t\in[T]}\mathbb E\|\nabla f(x^t)\|^2\le O\Big(\tfrac{ML\sigma^2}T\Big)^{1/2}
    +O\Big(\tfrac{M\beta_1}T\Big)^{1/2}+O\Big(\tfrac{M(\sigma^2\beta_2)^2}T\Big)^{2/3}
    +O\Big(\tfrac{ML}T\Big),

:math:`\sigma^2=\sigma_l^2/R+\sigma_g^2`, :math:`\beta_1=\frac1T\sum_tQ(S^t)`,
:math:`\beta_2=\frac1T\sum_t\gamma^t`, :math:`\gamma^t\in[NW,NW+\frac{N-K}KW]`. App. C.2
proves the explicit form (the printed bound ``kvib.thm4_1``) through eqs. (31)-(36).

The printed statement's hypotheses (Assumptions 4.1-4.3, the budget, the step condition) apply
to every part but the definitions, the proof steps included: a proof step is taken under the
theorem's hypotheses, so a ``violated`` proof step rests on an FL instance that meets all of
them (built by :func:`admissible_instance`; each algebraic slip holds for every admissible
choice of the constants, so one admissible choice is enough). Each step part adds the
conditions its algebra uses (the proof's :math:`R\ge2` and :math:`\eta_g` range, the tuning
constants, the sampling pair, ...). A companion that checks a corrected step beyond the
statement's hypotheses (e.g. any :math:`\eta_g\ge1`) declares them ``outside`` on purpose.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import bound, hypothesis, integer, nonnegative, positive, result

from ...predicates import at_most, smooth
from ..conditions import budget_in_range, isp_probabilities


@hypothesis("A4.1", "Assumption 4.1: every f_i is L-smooth")
def a4_1(*, problem, L):
    return smooth(problem, L)


@hypothesis("A4.2", "Assumption 4.2: unbiased local stochastic gradients with variance at most "
                    "sigma_l^2 (local_noise: the variance the instance's local steps have)")
def a4_2(*, local_noise, sigma_l2):
    return bool(local_noise >= 0 and at_most(local_noise, sigma_l2))


@hypothesis("A4.3", "Assumption 4.3: sum_i lambda_i ||grad f_i(x) - grad f(x)||^2 <= sigma_g^2 "
                    "for all x (quadratics: equal Hessians, else unbounded)")
def a4_3(*, problem, lam, sigma_g2):
    quad = problem if hasattr(problem, "A") else problem.as_quadratic()
    A = np.asarray(quad.A, dtype=float)
    if not np.allclose(A, A[0], rtol=0, atol=1e-12 * np.abs(A).max()):
        return False
    lam = np.asarray(lam, dtype=float)
    g = quad.client_gradients(np.zeros((A.shape[0], A.shape[1])))
    spread = float(lam @ np.sum((g - lam @ g) ** 2, axis=1))
    return at_most(spread, sigma_g2)


@hypothesis("step", "eta_l eta_g <= 1/(8RL), i.e. eta = R eta_l eta_g <= 1/(8L)")
def step_condition(*, step, eta_g, R, L):
    return at_most(np.asarray(step) * np.asarray(eta_g) * np.asarray(R) * 8 * np.asarray(L), 1.0)


@hypothesis("eta_l", "eta_l <= 1/(8RL) (Lemma B.6's condition, which eq. (31) uses; eq. (32)'s "
                     "eta <= 1/(8L) implies it since eta_g >= 1)")
def local_step_condition(*, step, R, L):
    return at_most(np.asarray(step) * np.asarray(R) * 8 * np.asarray(L), 1.0)


@hypothesis("eta_g", "1 <= eta_g <= max(sqrt(1/L), 1) (the proof's range, App. C.2)")
def eta_g_range(*, eta_g, L):
    eta_g, L = np.asarray(eta_g, dtype=float), np.asarray(L, dtype=float)
    return bool(np.all(eta_g >= 1)) and at_most(eta_g, np.maximum(np.sqrt(1 / L), 1.0))


@hypothesis("eta_g>=1", "eta_g >= 1 (App. C.2, used from eq. (32) on)")
def eta_g_at_least_one(*, eta_g):
    return bool(np.all(np.asarray(eta_g) >= 1))


@hypothesis("R", "R >= 2 local steps (App. C.2: 'with R >= 2')")
def two_local_steps(*, R):
    return bool(np.all(np.asarray(R) >= 2))


@hypothesis("K", "budget K in [1, N] (Remark 2.1)")
def budget(*, budget, n_clients):
    return budget_in_range(budget, n_clients)


@hypothesis("sampling", "S^t and S_*^t are ISP draws with E|S| = K (Def. 4.1): p^t, p^* in "
                        "P_K, p^* the Lemma 2.2 optimum of the round's a = lambda ||g||")
def isp_pair(*, p, p_star, budget, a):
    from flbounds.sampling import optimal_isp_probabilities

    return bool(isp_probabilities(p, budget) and isp_probabilities(p_star, budget)
                and np.allclose(p_star, optimal_isp_probabilities(a, budget), rtol=1e-12))


@hypothesis("tuning", "the last step's Lemma B.5 constants r0 = 2M > 0, b = beta_1 + 5/4 L "
                      "sigma^2 >= 0, e = 5/8 sigma^2 beta_2 >= 0, d = 8L > 0, T >= 1")
def tuning(*, M, L, T, sigma2, beta1, beta2):
    values = [np.asarray(v, dtype=float) for v in (M, L, T, sigma2, beta1, beta2)]
    M, L, T, sigma2, beta1, beta2 = values
    return bool(np.all(M > 0) and np.all(L > 0) and np.all(T >= 1) and np.all(sigma2 >= 0)
                and np.all(beta1 >= 0) and np.all(beta2 >= 0))


@hypothesis("balance", "the balanced pair of the last step: r0 = 2M > 0 against e = 5/8 s, "
                       "s = sigma^2 beta_2 > 0, T >= 1")
def balance(*, M, T, s):
    M, T, s = (np.asarray(v, dtype=float) for v in (M, T, s))
    return bool(np.all(M > 0) and np.all(T >= 1) and np.all(s > 0))


@hypothesis("factors", "the factored quantities R, gamma^t, eta_l are positive")
def positive_factors(*, R, gamma, step):
    return bool(R > 0) and bool(gamma > 0) and bool(step > 0)


FL = ("rate", "explicit", "beta1", "utility", "descent", "bound_a", "rho")
#: the parts under the printed statement's hypotheses: all but the definitions (sigma2,
#: gamma_range, beta1), the proof steps included
STATEMENT = ("rate", "explicit", "sampling_term", "utility", "eq31_drop", "eq31_32", "eq33",
             "bound_a", "bound_a_algebra", "eq35_36", "descent", "rho", "last_step")
THM4_1 = result(
    "kvib.thm4_1", ref="Theorem 4.1", title="FedAvg with arbitrary unbiased client sampling",
    parts={
        "rate": "eq. (7): min_t E||grad f(x^t)||^2 <= O((ML sigma^2/T)^{1/2}) + O((M beta_1/"
                "T)^{1/2}) + O((M (sigma^2 beta_2)^2/T)^{2/3}) + O(ML/T) (an O(.) rate: checked "
                "through its explicit form at the rates the theorem picks)",
        "explicit": "App. C.2: rho min_t E||grad f||^2 <= (2M(4 beta_1 + 5 L sigma^2)/T)^{1/2}"
                    " + (5 sigma^2 beta_2)^{1/3} (2M/T)^{2/3} + 2LM/T (the bound kvib.thm4_1), "
                    "at Lemma B.5's step",
        "sampling_term": "the Sampling Utility term O((M (sigma^2 beta_2)^2/T)^{2/3}) is what "
                         "the proof's last step gives",
        "sigma2": ("sigma^2 = sigma_l^2/R + sigma_g^2", "checked through eq31_32"),
        "gamma_range": "gamma^t in [NW, NW + (N-K)/K W] (Def. C.1)",
        "beta1": "beta_1 = (1/T) sum_t Q(S^t) measures the sampler: 0 with optimal sampling "
                 "(the rate of Chen et al. 2020, Thm 18), non-zero for sub-optimal samplers",
        "utility": "beta_1 is the cost of sub-optimal sampling: a sampler with smaller Q(S^t) "
                   "improves the bound",
        "eq31_drop": "before eq. (31): 10 R L^2 eta_l^2 dominates 2/R with R >= 2, so the "
                     "2 sigma_l^2/R term may be dropped",
        "eq31_32": "eq. (31) implies eq. (32) (T_1 <= 15/16 ||grad f||^2 + 10 L^2 sigma^2 "
                   "eta^2/eta_g^2) with the statement's sigma^2",
        "eq33": "eq. (33): E||d^t - sum lambda g||^2 <= Q(S^t) + E||Y - sum lambda g||^2",
        "bound_a": "before eq. (34): (A) = delta_* + ||sum lambda_i g_i||^2 <= 5 R^2 gamma^t "
                   "eta_l^2 (sigma^2 + ||grad f||^2)",
        "bound_a_algebra": "the factoring line: gamma eta_l^2 (5R sigma_l^2 + 30 R^2 (sigma_g^2"
                           " + ||grad f||^2)) = 5 R^2 gamma eta_l^2 (sigma^2 + ||grad f||^2)",
        "eq35_36": "eq. (35) -> (36): with 1 <= eta_g <= max(sqrt(1/L), 1), L eta_g^2 Q <= Q",
        "descent": "eq. (36): (1 - 10 gamma^t eta^2)/16 ||grad f(x^t)||^2 <= 2(f(x^t) - E f("
                   "x^{t+1}))/eta + (Q(S^t) + 5/4 L sigma^2) eta + 5/8 gamma^t sigma^2 eta^2",
        "rho": "the proof's step (Lemma B.5, d = 8L) keeps rho = min_t (1 - 10 gamma^t "
               "eta^2)/16 > 0",
        "last_step": "the last display: Lemma B.5's tuning gives (2M(4 beta_1 + 5 L sigma^2)/T)"
                     "^{1/2} + (5 sigma^2 beta_2)^{1/3} (2M/T)^{2/3} + 2LM/T",
    },
    hypotheses=(*(h.only(*STATEMENT) for h in (a4_1, a4_2, a4_3, step_condition)),
                budget.only(*STATEMENT, "beta1"),
                local_step_condition.only("eq31_32"),
                eta_g_at_least_one.only("eq31_32"),
                eta_g_range.only("eq35_36"),
                two_local_steps.only("eq31_drop"),
                isp_pair.only("eq33"),
                balance.only("sampling_term"),
                tuning.only("last_step"),
                positive_factors.only("bound_a_algebra")))


def admissible_instance(*, L, R, step, eta_g=1.0, sigma_g2=0.0, n_clients=2, budget=1.0,
                        centers=None, **extra):
    r"""Values for every hypothesis of the printed statement, on an FL instance meeting them:
    ``n_clients`` scalar quadratics :math:`f_i=\frac L2x^2-b_ix` (equal Hessians, so
    Assumption 4.3 holds for all x with the exact spread), :math:`b_i=\pm\sqrt{\sigma_g^2}`
    alternately (:math:`\lambda` uniform, ``n_clients`` even, so the weighted spread is
    :math:`\sigma_g^2`), deterministic local steps (:math:`\sigma_l=0`), the given R,
    :math:`\eta_l` (``step``), :math:`\eta_g` and budget; ``extra`` adds a step's own values.
    ``centers`` (N, d) instead gives :math:`f_i=\frac L2\|x\|^2-b_i^\top x` with
    :math:`b_i` the centers and :math:`\sigma_g^2` their exact uniform-weight spread: from
    x = 0 the round's pseudo-gradients are then proportional to the :math:`b_i` (shared
    Hessian), so any vectors z are the round of such an instance up to one scale."""
    from flbounds.problems import Quadratic

    if centers is not None:
        b = np.asarray(centers, dtype=float)
        n_clients, d = b.shape
        sigma_g2 = float(np.mean(np.sum((b - b.mean(axis=0)) ** 2, axis=1)))
        problem = Quadratic(np.tile(float(L) * np.eye(d), (n_clients, 1, 1)), b)
    elif n_clients < 2 or n_clients % 2:
        raise ValueError(f"n_clients must be even and >= 2, got {n_clients}")
    else:
        c = np.sqrt(float(sigma_g2))
        b = np.where(np.arange(n_clients) % 2 == 0, c, -c)[:, None]
        problem = Quadratic(np.full((n_clients, 1, 1), float(L)), b)
    return dict(problem=problem, L=float(L), lam=np.full(n_clients, 1.0 / n_clients),
                sigma_g2=float(sigma_g2), sigma_l2=0.0, local_noise=0.0, R=R, step=step,
                eta_g=eta_g, budget=budget, n_clients=n_clients, **extra)


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


@bound("kvib.thm4_1", ref="Thm 4.1, explicit form of App. C.2",
       constants=(nonnegative("M", "E f(x_0) - f(x_inf)"), positive("L"),
                  integer("T", "rounds"), nonnegative("sigma2", "sigma_l^2/R + 6 sigma_g^2"),
                  nonnegative("beta1", "mean sub-optimality Q(S^t)"),
                  positive("gamma", "gamma^t = (alpha (N-K)/K + N) W, constant here")),
       check=_thm41_check, quantity="min_t E||grad f(x_t)||^2",
       steps=lambda L, **_: {"eta <= 1/(8L)": 1 / (8 * L)},
       corrected=lambda **c: _thm41_value(**c, last=16.0))
def thm4_1_bound(**c):
    """RHS / rho; corrected: the step choice of Lemma B.5 gives 16 L M/T as the last term."""
    return _thm41_value(**c)
