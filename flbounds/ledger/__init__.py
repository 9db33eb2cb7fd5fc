"""The claim ledger, in three layers that import only downwards.

- :mod:`.api`, the plugin API: :func:`paper`, :func:`result` (a numbered result with its
  parts and :func:`hypothesis` predicates), :func:`bound` (its printed bound), :func:`claim`,
  :class:`Evidence` and :class:`Tolerance`; a package registers its claim modules under the
  entry-point group ``flbounds.claims`` (see ``docs/guide/plugins.md``);
- :mod:`.engine`: the runner, the worker pool and Dask, the results store and its leases;
- :mod:`.reports`: the HTML ledger, the Markdown table, the coverage table.

This module re-exports the names plugins and scripts use; import them from here.
:func:`get` resolves any task id: a claim's, or ``attack:<claim id>``; ``bounds.get(id)``
finds a printed bound (``flbounds bound``).
"""

from .api import (
    PAPERS,
    CheckResult,
    Claim,
    Evidence,
    Hypothesis,
    Paper,
    Part,
    PluginLoadWarning,
    Result,
    Tolerance,
    bound,
    bounds,
    claim,
    claim_seed_sequence,
    hypothesis,
    integer,
    load_all,
    nonnegative,
    paper,
    positive,
    probabilities,
    probability,
    result,
    select,
    vector,
)
from .engine.runner import run_claims
from .engine.store import ResultStore
from .engine.tasks import get

__all__ = ["PAPERS", "CheckResult", "Claim", "Evidence", "Hypothesis", "Paper", "Part",
           "PluginLoadWarning", "Result", "ResultStore", "Tolerance", "bound", "bounds", "claim",
           "claim_seed_sequence", "get", "hypothesis",
           "integer", "load_all", "nonnegative", "paper", "positive", "probabilities",
           "probability", "result", "run_claims", "select", "vector"]

