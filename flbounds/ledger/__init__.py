"""The claim ledger: evidence, results, the registry, the runner, the store and the reports.

The plugin API for a new paper is :func:`paper`, :func:`result` (a numbered result with
its parts and :func:`hypothesis` predicates), :func:`bound` (its printed bound),
:func:`claim`, :class:`Evidence` and :class:`Tolerance`; a package registers its claim
modules under the entry-point group ``flbounds.claims`` (see ``README.md``, "Checking your
own paper").
"""

from .bounds import bound, integer, nonnegative, positive, probabilities, probability, vector
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
from .results import Hypothesis, Part, Result, hypothesis, result
from .runner import run_claims
from .store import ResultStore

__all__ = ["PAPERS", "CheckResult", "Claim", "Evidence", "Hypothesis", "Paper", "Part",
           "PluginLoadWarning", "Result", "ResultStore", "Tolerance", "bound", "claim",
           "claim_seed_sequence", "declare_hypotheses", "get", "hypothesis", "integer",
           "load_all", "nonnegative", "paper", "positive", "probabilities", "probability",
           "result", "run_claims", "select", "vector"]
