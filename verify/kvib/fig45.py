r"""Figures 4 and 5 of K-Vib (FEMNIST; AGNews and CCNews): the result, its parts and a synthetic
re-run of their common effect. Training a CNN on FEMNIST or language models at the paper's
scale is out of the CPU budget; what the figures' text states about samplers is that K-Vib's
advantage grows with the data imbalance across clients (FEMNIST v1, "10% of clients hold 82%
of the images": 3x faster; v2, "20% hold 90%": 2x; Sec. 6.3: "the improvement is related to
the degree of data variance across clients").

The stand-in: the online problem of Sec. 5 with the client weights of each FEMNIST version,
:math:`\lambda_i\propto\exp(s\,\Phi^{-1}((i+\frac12)/N))` with s solved so that the top 10%
(v1), 20% (v2), 50% (v3) of N = 100 clients hold 82%, 90%, 98% of the data; feedback
:math:`\pi_t(i)=\lambda_i(1+\frac12/\sqrt t)` (equal update norms, so the imbalance is the
data's), K = 5% of N. K-Vib's gain over uniform ISP is :math:`1-\sum_t\ell_t(\tilde p^t)/
\sum_t\ell_t(K/N)` (the variance term that drives Theorem 4.1's rate), per seed. The
paper's effect: gain(v1) > gain(v2) > gain(v3).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

from flbounds.ledger import Evidence, Tolerance, claim, result
from flbounds.sampling.online import Assumption51Feedback, kvib_online

from .conditions import online_budgets, online_feedback
from .online_claims import interval_rule

#: FEMNIST versions (Fig. 4(a)): the fraction of clients holding a share of the images
LEVELS = {"v1": (0.1, 0.82), "v2": (0.2, 0.90), "v3": (0.5, 0.98)}
#: family-wise level of the rule, fixed before the runs
ALPHA = 0.05

FIG4 = result(
    "kvib.fig4", ref="Figure 4", title="Federated EMNIST experiments",
    parts={"imbalance": "Sec. 6.2: K-Vib's advantage is larger the more unbalanced the data "
                        "(3x faster on FEMNIST v1, 2x on v2)",
           "training": ("(b) training loss and test accuracy of FedAvg with each sampler on "
                        "FEMNIST", "CNN training on FEMNIST at the paper's scale is out of the "
                        "CPU budget; its sampler effect is re-run on the synthetic stand-in "
                        "(part imbalance)")},
    hypotheses=(online_feedback.only("imbalance"), online_budgets.only("imbalance")))
FIG5 = result(
    "kvib.fig5", ref="Figure 5", title="federated text dataset experiments",
    parts={"imbalance": "Sec. 6.3: K-Vib's improvement is related to the degree of data "
                        "variance across clients",
           "training": ("training loss on AGNews (DistillBert) and CCNews (Pythia-70M)",
                        "language-model training is out of the CPU budget; the sampler effect "
                        "is re-run with Figure 4's (part imbalance)")},
    hypotheses=(online_feedback.only("imbalance"), online_budgets.only("imbalance")))


def level_weights(n_clients: int, top: float, share: float) -> np.ndarray:
    """Lognormal-quantile weights (sum 1) whose top ``top`` fraction of clients holds
    ``share`` of the total."""
    z = norm.ppf((np.arange(n_clients) + 0.5) / n_clients)

    def top_share(s):
        w = np.sort(np.exp(s * z))[::-1]
        return w[:int(round(top * n_clients))].sum() / w.sum() - share

    w = np.exp(brentq(top_share, 1e-3, 20.0) * z)
    return w / w.sum()


def level_feedback(n_clients: int, level: str) -> Assumption51Feedback:
    lam = level_weights(n_clients, *LEVELS[level])
    return Assumption51Feedback(lam, np.ones(n_clients), np.full(n_clients, 0.5))


def _gains(rng, fb, budget, n_rounds, n_seeds):
    """Per seed: 1 - sum_t l_t(K-Vib) / sum_t l_t(uniform ISP) (uniform's cost is exact)."""
    uniform = sum(fb.n_clients / budget * float(np.sum(fb.values(t) ** 2))
                  for t in range(1, n_rounds + 1))
    return np.array([1.0 - kvib_online(fb, n_rounds, budget, child, G=fb.G).costs.sum()
                     / uniform for child in rng.spawn(n_seeds)])


@claim("kvib.fig4_5.gain_grows_with_imbalance", ref="Figs. 4-5; Secs. 6.2-6.3 (advantage and "
       "data imbalance)", kind="reproduction", expected="inconclusive",
       parts=(FIG4.part("imbalance"), FIG5.part("imbalance")),
       statement="On the synthetic stand-in of FEMNIST v1-v3, K-Vib's gain over uniform ISP "
                 "falls as the imbalance falls: gain(v1) > gain(v2) > gain(v3).",
       quick=dict(n_clients=100, n_rounds=1000, n_seeds=6),
       full=dict(n_clients=100, n_rounds=4000, n_seeds=20))
def gain_grows_with_imbalance(*, rng, n_clients, n_rounds, n_seeds):
    """A synthetic re-run of an empirical effect (kind ``reproduction``, never a paper error).
    Rule fixed before the runs (:func:`.online_claims.interval_rule`, level :data:`ALPHA`,
    Bonferroni over the two steps): seed-bootstrap intervals of gain(v1) - gain(v2) and
    gain(v2) - gain(v3); reproduced when both lie above 0, not reproduced when one lies
    wholly below 0, otherwise inconclusive with the half-widths. The three calibrated
    imbalances are close (lognormal s = 2.39, 2.26, 2.13): the FEMNIST descriptions differ
    in which top fraction they quote more than in how unbalanced they are. Measured: gain
    v2 > v3 resolved, v1 against v2 not (quick 0.310, 0.312, 0.282; full 0.464, 0.459,
    0.446): **inconclusive** at both profiles, with the half-widths in the reason."""
    budget = max(1, round(0.05 * n_clients))
    gains, feedbacks = {}, {}
    for level in LEVELS:
        feedbacks[level] = level_feedback(n_clients, level)
        gains[level] = _gains(rng, feedbacks[level], budget, n_rounds, n_seeds)
    boot = {lvl: gains[lvl][rng.integers(0, n_seeds, (2000, n_seeds))].mean(axis=1)
            for lvl in LEVELS}
    rule = interval_rule({"v1 - v2": boot["v1"] - boot["v2"], "v2 - v3": boot["v2"] - boot["v3"]},
                         0.0, alpha=ALPHA, effect=">=")
    return Evidence(instance=[dict(feedback=fb, n_rounds=n_rounds, budget=budget,
                                   n_clients=n_clients) for fb in feedbacks.values()],
                    measured=rule["measured"], theoretical=0.0, relation=">=",
                    undecided=rule["undecided"],
                    tolerance=Tolerance(0.0, "seed bootstrap, Bonferroni",
                                        f"two-sided {1 - ALPHA:g} family-wise intervals of "
                                        "the gain differences"),
                    details={"mean_gain": {k: float(v.mean()) for k, v in gains.items()},
                             "intervals": rule["intervals"], "half_widths": rule["half_widths"],
                             "budget": budget, "levels": LEVELS})
