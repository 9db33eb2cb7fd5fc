"""Algorithms as pure functions of (problem, plan, hyper-parameters), returning NamedTuple traces.

Randomness is data: participation plans, sampled indices and gradient noise are passed in,
never drawn here. Steps are numbers or schedules (:mod:`~flbounds.algorithms.schedules`);
FedAvg's server rule is a parameter (:mod:`~flbounds.algorithms.aggregation`) and it takes
plans of counts (sampling with replacement, :class:`flbounds.participation.WithReplacement`).
SCAFFOLD, FedAU, MIFA, FedProx and FedNova return their state (control variates, weight
estimates, memories, inexactness, normalized updates) in their traces. A researcher's own local
step runs in :func:`fedavg_family` (:mod:`~flbounds.algorithms.custom`) with the same plans,
aggregation rules, schedules and server step.
"""

from . import aggregation as aggregation
from . import schedules as schedules
from .baselines import FedAUTrace as FedAUTrace
from .baselines import MifaTrace as MifaTrace
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
from .custom import CustomTrace as CustomTrace
from .custom import LocalUpdate as LocalUpdate
from .custom import fedavg_family as fedavg_family
from .custom import fedavg_family_batched as fedavg_family_batched
from .custom import local_update as local_update
from .fedals import fedals, intended_schedule, local_sgd_fedavg, printed_schedule  # noqa: F401
from .fedavg import fedavg as fedavg
from .fedavg_sampler import fedavg_sampler as fedavg_sampler
from .fedawe import fedawe as fedawe
from .fednova import FedNovaTrace as FedNovaTrace
from .fednova import fednova as fednova
from .fedprox import FedProxTrace as FedProxTrace
from .fedprox import fedprox as fedprox
from .focus import FocusState as FocusState
from .focus import FocusTrace as FocusTrace
from .focus import focus as focus
from .focus import sg_focus as sg_focus
from .local_sgd import local_sgd_gossip as local_sgd_gossip
from .local_updates import local_gd as local_gd
from .local_updates import local_momentum as local_momentum
from .local_updates import local_prox as local_prox
from .local_updates import local_scaffold as local_scaffold
from .matrix_forms import fedavg_matrix as fedavg_matrix
from .matrix_forms import fedavg_virtual as fedavg_virtual
from .matrix_forms import focus_matrix as focus_matrix
from .safari import SafariPlan, SafariTrace, safari, safari_plan  # noqa: F401
