r"""Client selection as set-function maximization: the objectives, their maximizers and the
selection rules, one validated face.

- objectives (:mod:`.facility`, :mod:`.families`): facility location with the phantom-client
  offset, SubTrunc's truncated objective, UnionFL's penalized objective, and the test families
  and combinators (modular, coverage, matroid rank, truncation, sums, compositions);
- maximizers (:mod:`.maximize`): greedy, lazy greedy, stochastic greedy with an explicit
  random plan, distorted greedy, brute force;
- property checks (:mod:`.properties`): exhaustive and sampled submodularity / monotonicity
  margins;
- selection rules (:mod:`.rules`): random, DivFL, SubTrunc, UnionFL and Power-of-Choice as
  pure functions of one round's information.

Every constructor and function validates its input (``ValueError`` naming the argument).
"""

from .base import SetFunction, all_subsets_values
from .facility import (
    FacilityLocation,
    SubTruncObjective,
    UnionFLObjective,
    facility_location,
    phi_values,
    subtrunc,
    unionfl,
)
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
from .properties import Margins, exhaustive_margins, sampled_margins
from .rules import RULES, SelectionRule, gradient_distances, select_clients, window_union

__all__ = ["RULES", "Composed", "ConcaveOfModular", "FacilityLocation", "GreedyTrace",
           "LinearCombination", "Margins", "Modular", "PartitionMatroidRank", "SelectionRule",
           "SetFunction", "SubTruncObjective", "TableFunction", "Truncated", "UnionFLObjective",
           "WeightedCoverage", "all_subsets_values", "brute_force_max", "distorted_greedy",
           "exhaustive_margins", "facility_location", "gradient_distances", "greedy",
           "greedy_trace", "lazy_greedy", "lazy_greedy_trace", "phi_values", "sampled_margins",
           "select_clients", "stochastic_greedy", "stochastic_greedy_plan",
           "stochastic_sample_size", "subtrunc", "unionfl", "window_union"]
