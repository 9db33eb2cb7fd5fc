"""Theorem checks, one module (or sub-package) per paper; every module registers its claims.

Importing a module here registers its claims with :func:`flbounds.ledger.claim`;
:func:`flbounds.ledger.load_all` imports them all.
"""
