"""The claim ledger: evidence, results, the registry, the runner, the store and the reports.

The plugin API for a new paper is :func:`paper`, :func:`claim`, :class:`Evidence` and
:class:`Tolerance`; a package registers its claim modules under the entry-point group
``flbounds.claims`` (see ``README.md``, "Checking your own paper").
"""

from .papers import Paper, paper
from .plugins import PluginLoadWarning
from .registry import (
    PAPERS,
    Claim,
    claim,
    claim_seed_sequence,
    declare_hypotheses,
    get,
    load_all,
    select,
)
from .result import CheckResult, Evidence, Tolerance
from .runner import run_claims
from .store import ResultStore

__all__ = ["PAPERS", "CheckResult", "Claim", "Evidence", "Paper", "PluginLoadWarning",
           "ResultStore", "Tolerance", "claim", "claim_seed_sequence", "declare_hypotheses",
           "get", "load_all", "paper", "run_claims", "select"]
