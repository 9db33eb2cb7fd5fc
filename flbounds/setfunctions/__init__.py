"""Set functions (facility location, SubTrunc, UnionFL, test families) and their maximizers."""

from .base import SetFunction, all_subsets_values
from .facility import FacilityLocation, SubTruncObjective, UnionFLObjective, phi_values
from .families import (
    Composed,
    ConcaveOfModular,
    LinearCombination,
    Modular,
    PartitionMatroidRank,
    TableFunction,
    Truncated,
    WeightedCoverage,
)
from .maximize import (
    GreedyTrace,
    brute_force_max,
    distorted_greedy,
    greedy,
    greedy_trace,
    lazy_greedy,
    lazy_greedy_trace,
    stochastic_greedy,
    stochastic_greedy_plan,
    stochastic_sample_size,
)

__all__ = ["Composed", "ConcaveOfModular", "FacilityLocation", "GreedyTrace",
           "LinearCombination", "Modular", "PartitionMatroidRank", "SetFunction",
           "SubTruncObjective", "TableFunction", "Truncated", "UnionFLObjective",
           "WeightedCoverage", "all_subsets_values", "brute_force_max", "distorted_greedy",
           "greedy", "greedy_trace", "lazy_greedy", "lazy_greedy_trace", "phi_values",
           "stochastic_greedy", "stochastic_greedy_plan", "stochastic_sample_size"]
