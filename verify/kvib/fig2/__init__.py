r"""Figure 2 of K-Vib (FedAvg with unbiased samplers on FedProx Synthetic(0, 0)): the result,
its parts and its hypothesis; its claims are the sibling modules of this folder.

Panels: dynamic regret, gradient variance and test loss of K-Vib against uniform ISP/RSP,
Vrb, Mabs and Avare, N = 100, K = 10 (App. F). Instances carry ``n_clients``, ``budget`` and
``synthetic`` (the (alpha, beta) of FedProx Synthetic).
"""

from __future__ import annotations

from flbounds.ledger import hypothesis, result


@hypothesis("setting", "FedProx Synthetic(0, 0), N = 100 clients, K = 10 (App. F)")
def setting(*, n_clients, budget, synthetic):
    return bool(n_clients == 100 and budget == 10 and tuple(synthetic) == (0.0, 0.0))


FIG2 = result(
    "kvib.fig2", ref="Figure 2", title="regret, variance and test loss on Synthetic(0, 0)",
    parts={"variance": "K-Vib's global estimates have the smallest variance (dynamic regret) "
                       "among the samplers",
           "test_loss": "K-Vib reaches a lower test loss than the baselines"},
    hypotheses=(setting,))
