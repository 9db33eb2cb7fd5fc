r"""Unbiased client sampling: estimators, exact variances, optimal probabilities, samplers.

- :mod:`.estimators`: ISP and RSP (uniform subsets, multinomial) estimators and their exact
  variances ([003, Lemma 2.1 / B.7]);
- :mod:`.optimal`: the water-filling solver for the variance-optimal ISP probabilities
  ([003, Lemma 2.2 / B.8]) and the optimal variance;
- :mod:`.exact`: exact enumeration of small designs (means and variances without Monte Carlo);
- samplers driven by feedback (``probabilities``, ``sample(rng)``, ``update(feedback)``):
  :mod:`.fixed` (uniform ISP / RSP, the full-information oracle), :mod:`.ftrl` (K-Vib,
  FTRL with uniform mixing), :mod:`.bandits` (Vrb, Mabs, Avare), on the common types of
  :mod:`.adaptive`;
- :mod:`.online`: the online-learning harness (feedback sequences, costs, static and dynamic
  regret).

References
----------
K-Vib: Zeng et al., "Enhanced Federated Optimization: Adaptive Unbiased Client Sampling with
Reduced Variance" (K-Vib).
"""

from .adaptive import Draw, Feedback, isp_draw, multinomial_draw
from .bandits import Avare, Mabs, Vrb
from .estimators import (
    isp_estimate,
    isp_variance,
    mix_uniform,
    multinomial_estimate,
    multinomial_variance,
    rsp_bound,
    rsp_uniform_variance,
    uniform_isp_variance,
)
from .fixed import OracleISP, UniformISP, UniformRSP
from .ftrl import KVib, kvib_theta
from .optimal import (
    isp_objective,
    optimal_factor,
    optimal_isp_objective,
    optimal_isp_probabilities,
    optimal_isp_variance,
)

__all__ = ["Avare", "Draw", "Feedback", "KVib", "Mabs", "OracleISP", "UniformISP",
           "UniformRSP", "Vrb", "isp_draw", "isp_estimate", "isp_objective", "isp_variance",
           "kvib_theta", "mix_uniform", "multinomial_draw", "multinomial_estimate",
           "multinomial_variance", "optimal_factor", "optimal_isp_objective",
           "optimal_isp_probabilities", "optimal_isp_variance", "rsp_bound",
           "rsp_uniform_variance", "uniform_isp_variance"]
