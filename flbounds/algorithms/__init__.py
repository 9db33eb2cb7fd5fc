"""Algorithms as pure functions of (problem, plan, hyper-parameters), returning NamedTuple traces.

Randomness is data: participation plans, sampled indices and gradient noise are passed in,
never drawn here.
"""
from .fedals import fedals, intended_schedule, local_sgd_fedavg, printed_schedule  # noqa: F401
