r"""Learning-theory constructions of the SAFARI paper (``000``): the impossibility event.

Theorem 1 of [000] builds a two-point distribution with :math:`P(x_2) = 4\epsilon`,
:math:`\epsilon = (1-\omega)/8`, :math:`\omega = m/M`, and draws :math:`Mn` samples. The
adversarial participation process keeps :math:`mn` of them, preferring :math:`x_1`; the
training set carries no information about :math:`x_2` on the event
:math:`\hat s < (1-\omega)Mn`, where :math:`\hat s \sim \mathrm{Bin}(Mn, 4\epsilon)` counts the
:math:`x_2` draws.

References
----------
[000] Server-assisted federated learning under incomplete client participation, Theorem 1 and
      Appendix A (``shared/papers/000_e0ee0ed9d3888010.txt``).
"""

from __future__ import annotations

import math
import numbers

from scipy import stats


def _check_sizes(n_clients, n_participating, n_samples) -> None:
    for name, value in (("n_clients", n_clients), ("n_participating", n_participating),
                        ("n_samples", n_samples)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if n_clients < 1:
        raise ValueError(f"n_clients must be >= 1, got {n_clients}")
    if not 0 <= n_participating < n_clients:
        raise ValueError(f"n_participating must satisfy 0 <= m < M = {n_clients} "
                         f"(incomplete participation), got {n_participating}")
    if n_samples < 1:
        raise ValueError(f"n_samples must be >= 1, got {n_samples}")


def impossibility_event_probability(n_clients: int, n_participating: int,
                                    n_samples: int) -> float:
    r"""Exact :math:`P[\mathrm{Bin}(Mn, (1-\omega)/2) < (1-\omega)Mn]`, :math:`\omega = m/M`.

    This is :math:`P[S \in \mathcal S]`, the probability that the participating clients' data
    hold only copies of :math:`x_1`, so that the two targets :math:`f_1, f_2` are
    indistinguishable to any learner ([000], Theorem 1, Appendix A).

    Parameters
    ----------
    n_clients : int
        :math:`M \ge 1`.
    n_participating : int
        :math:`m`, with :math:`0 \le m < M` (incomplete participation).
    n_samples : int
        :math:`n \ge 1` samples per client.

    Returns
    -------
    float
        The probability, from the exact binomial CDF (no Chernoff approximation).
    """
    _check_sizes(n_clients, n_participating, n_samples)
    total = n_clients * n_samples
    threshold = (n_clients - n_participating) * n_samples  # (1 - omega) M n, an integer
    p_x2 = (n_clients - n_participating) / (2 * n_clients)  # 4 eps = (1 - omega) / 2
    return float(stats.binom.cdf(threshold - 1, total, p_x2))


def impossibility_chernoff_bound(n_clients: int, n_participating: int, n_samples: int) -> float:
    r"""The paper's Chernoff bound :math:`\exp(-(1-\omega)Mn/6)` on the complement event.

    :math:`P[\hat s \ge 2 \cdot 4\epsilon Mn] \le \exp(-4\epsilon Mn/3)` with
    :math:`4\epsilon = (1-\omega)/2` ([000], Appendix A).
    """
    _check_sizes(n_clients, n_participating, n_samples)
    return math.exp(-(n_clients - n_participating) * n_samples / 6.0)
