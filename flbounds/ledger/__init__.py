"""The claim ledger: evidence, results, the registry, the runner, the store and the reports."""

from .registry import PAPERS, Claim, claim, claim_seed_sequence, get, load_all, select
from .result import CheckResult, Evidence, Tolerance
from .runner import run_claims
from .store import ResultStore

__all__ = ["PAPERS", "CheckResult", "Claim", "Evidence", "ResultStore", "Tolerance", "claim",
           "claim_seed_sequence", "get", "load_all", "run_claims", "select"]
