r"""Participation processes: random plans and their EXACT per-round moments.

A process turns an explicit ``np.random.Generator`` into a plan, a bool array of shape
``(n_rounds, n_clients)`` whose row :math:`r` is the participating set :math:`S_r`
(:class:`WithReplacement`, Li et al.'s Scheme I, gives int64 counts instead, with their exact
moments :meth:`~WithReplacement.count_means` and
:meth:`~WithReplacement.count_second_moments`). Every
process also reports, exactly (closed form, exact recursion or enumeration; never the
nominal weights):

.. math::

    \pi_i = P(i \in S), \qquad
    q_i = E\left[\frac{1\{i \in S\}}{|S|} ; S \neq \emptyset\right] \ (0/0 := 0), \qquad
    \sum_i q_i = 1 - P(S = \emptyset).

For the non-i.i.d. processes (:class:`Cyclic`, :class:`MarkovOnOff`) these are the long-run
(stationary, per-round) averages.

References
----------
.. [1] B. Ying, Z. Li, H. Yang, "Exact and Linear Convergence for Federated Learning under
   Arbitrary Client Participation is Attainable", NeurIPS 2025, Assumption 1 and its cases
   (spec/002_focus.md, section 1.5).
.. [2] P. S. Efraimidis, P. G. Spirakis, "Weighted random sampling with a reservoir",
   Inf. Process. Lett. 97(5), 2006.
.. [3] L. N. Trefethen, "Approximation Theory and Approximation Practice", SIAM 2013, Thm 19.3.
"""

from ._base import MAX_CLIENTS_SUBSETS, MAX_CLIENTS_WEIGHTED, all_masks
from .compose import Excluding, SubsetWeights, exact_weights_from_subsets, subset_distribution
from .fixed_size import Cyclic, UniformWithoutReplacement, WeightedWithoutReplacement
from .independent import Bernoulli, MarkovOnOff
from .matrices import average_matrix, pull_matrix, push_matrix
from .with_replacement import WithReplacement

__all__ = [
    "MAX_CLIENTS_SUBSETS",
    "MAX_CLIENTS_WEIGHTED",
    "Bernoulli",
    "Cyclic",
    "Excluding",
    "MarkovOnOff",
    "SubsetWeights",
    "UniformWithoutReplacement",
    "WeightedWithoutReplacement",
    "WithReplacement",
    "all_masks",
    "average_matrix",
    "pull_matrix",
    "push_matrix",
    "exact_weights_from_subsets",
    "subset_distribution",
]

