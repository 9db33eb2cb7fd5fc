"""The ledger's plugin API, its lowest layer: what a claim plugin declares and returns.

Papers (:mod:`.papers`), numbered results with their parts and hypothesis predicates
(:mod:`.results`), printed bounds (:mod:`.bounds`), claims and their registry
(:mod:`.registry`), the evidence a claim returns and the row it becomes (:mod:`.result`),
plugin discovery (:mod:`.plugins`, :mod:`.figures`) and the task keys of ``--resume``
(:mod:`.taskkey`). Nothing here imports the engine or the reports; a plugin imports these
names from :mod:`flbounds.ledger`.
"""

from . import bounds
from .bounds import bound, integer, nonnegative, positive, probabilities, probability, vector
from .papers import Paper, paper
from .plugins import PluginLoadWarning
from .registry import (
    PAPERS,
    Claim,
    claim,
    claim_seed_sequence,
    get,
    load_all,
    select,
)
from .result import CheckResult, Evidence, Tolerance
from .results import Hypothesis, Part, Result, hypothesis, result

__all__ = ["PAPERS", "CheckResult", "Claim", "Evidence", "Hypothesis", "Paper", "Part",
           "PluginLoadWarning", "Result", "Tolerance", "bound", "bounds", "claim",
           "claim_seed_sequence", "get", "hypothesis", "integer", "load_all",
           "nonnegative", "paper", "positive", "probabilities", "probability", "result", "select",
           "vector"]
