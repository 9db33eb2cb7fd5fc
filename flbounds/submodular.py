r"""The set functions of SubTrunc / UnionFL and their maximizers under their public names.

.. math::

    G(S) = \sum_i \bigl(\max_j d_{ij} - \min_{j \in S} d_{ij}\bigr),\quad G(\emptyset) = 0,
    \qquad W(S) = G(S) + \lambda \min\Bigl(b, \sum_{i\in S}\phi(f_i)\Bigr),
    \qquad h_t(S) = G(S) - \mu |U_t \cap S|.

A re-export of :mod:`flbounds.selection`, where the objectives, maximizers and selection
rules live (and validate their input).
"""

from flbounds.selection import (  # noqa: F401
    Composed,
    ConcaveOfModular,
    FacilityLocation,
    GreedyTrace,
    LinearCombination,
    Modular,
    PartitionMatroidRank,
    SubTruncObjective,
    TableFunction,
    Truncated,
    UnionFLObjective,
    WeightedCoverage,
    brute_force_max,
    distorted_greedy,
    facility_location,
    greedy,
    greedy_trace,
    lazy_greedy,
    lazy_greedy_trace,
    phi_values,
    stochastic_greedy,
    stochastic_greedy_plan,
    stochastic_sample_size,
    subtrunc,
    unionfl,
)

__all__ = ["Composed", "ConcaveOfModular", "FacilityLocation", "GreedyTrace",
           "LinearCombination", "Modular", "PartitionMatroidRank", "SubTruncObjective",
           "TableFunction", "Truncated", "UnionFLObjective", "WeightedCoverage",
           "brute_force_max", "distorted_greedy", "facility_location", "greedy",
           "greedy_trace", "lazy_greedy", "lazy_greedy_trace", "phi_values",
           "stochastic_greedy", "stochastic_greedy_plan", "stochastic_sample_size",
           "subtrunc", "unionfl"]
