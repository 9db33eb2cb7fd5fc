"""The papers' published numbers (worked examples, tables, printed constants) as claims.

A claim plugin of its own (entry point ``paper_checks`` of the group ``flbounds.claims``);
its claims belong to the papers that ``verify`` declares, so it imports ``verify`` first.
"""

import verify  # noqa: F401  (declares the five papers)
