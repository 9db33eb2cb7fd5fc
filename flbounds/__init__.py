"""flbounds: claim-by-claim verification of federated-learning theory under partial participation.

The library lives in the submodules, organised by concept (problems, participation, sampling,
selection, algorithms, kernels, theory, stats, validation, tolerances, ledger, cli); the
theorem checks live in the top-level packages ``verify`` and ``paper_checks`` and are run
through :mod:`flbounds.ledger` or the ``flbounds`` command line.
"""

__version__ = "0.1.0"
