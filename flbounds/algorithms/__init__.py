"""Algorithms as pure functions of (problem, plan, hyper-parameters), returning NamedTuple traces.

Randomness is data: participation plans, sampled indices and gradient noise are passed in,
never drawn here.
"""
from .safari import SafariPlan, SafariTrace, safari, safari_plan  # noqa: F401
