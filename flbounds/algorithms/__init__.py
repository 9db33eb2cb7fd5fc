"""Algorithms as pure functions of (problem, plan, hyper-parameters), returning NamedTuple traces.

Randomness is data: participation plans, sampled indices and gradient noise are passed in,
never drawn here.
"""

from .fedavg_sampler import fedavg_sampler  # noqa: E402,F401
