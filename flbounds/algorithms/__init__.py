"""Algorithms as pure functions of (problem, plan, hyper-parameters), returning NamedTuple traces.

Randomness is data: participation plans, sampled indices and gradient noise are passed in,
never drawn here. Steps are numbers or schedules (:mod:`~flbounds.algorithms.schedules`);
FedAvg's server rule is a parameter (:mod:`~flbounds.algorithms.aggregation`) and it takes
plans of counts (sampling with replacement, :class:`flbounds.participation.WithReplacement`).
"""

from . import aggregation as aggregation
from . import schedules as schedules
from .baselines import ScaffoldTrace as ScaffoldTrace
from .baselines import fedau as fedau
from .baselines import mifa as mifa
from .baselines import proxskip as proxskip
from .baselines import scaffold as scaffold
from .batched import fedavg_batched as fedavg_batched
from .batched import focus_batched as focus_batched
from .batched_safari import safari_batched as safari_batched
from .batched_safari import safari_plans as safari_plans
from .batched_sampler import fedavg_sampler_batched as fedavg_sampler_batched
from .batched_sampler import sampler_uniforms as sampler_uniforms
from .fedals import fedals, intended_schedule, local_sgd_fedavg, printed_schedule  # noqa: F401
from .fedavg import fedavg as fedavg
from .fedavg_sampler import fedavg_sampler as fedavg_sampler
from .fedawe import fedawe as fedawe
from .focus import FocusState as FocusState
from .focus import FocusTrace as FocusTrace
from .focus import focus as focus
from .focus import sg_focus as sg_focus
from .local_sgd import local_sgd_gossip as local_sgd_gossip
from .matrix_forms import fedavg_matrix as fedavg_matrix
from .matrix_forms import fedavg_virtual as fedavg_virtual
from .matrix_forms import focus_matrix as focus_matrix
from .safari import SafariPlan, SafariTrace, safari, safari_plan  # noqa: F401
