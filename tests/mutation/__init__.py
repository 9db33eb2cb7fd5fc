"""Mutation harness: planted bugs in the library's core, and which claims notice them.

``python -m tests.mutation [--paper P] [--only IDS] [--workers N] [--list] [--json PATH]``
(``--help`` for the rest). Each mutant of :mod:`tests.mutation.catalogue` is applied to a
fresh scratch copy of the tree, and the quick claims of each paper it affects run there
(:mod:`tests.mutation.harness`). A mutant is *killed* for a paper when at least one of that
paper's claims leaves its expected verdict with a verdict (holds / violated /
not-applicable); it *crashed* when the only departures are errors (exceptions, timeouts);
otherwise it *survived*. To save time the claims run in two stages, those known to be cheap
first (``timings.json``, an unmutated quick run), the rest only if the first stage did not
kill; the killing claims listed are those of the stage that killed (``--all-claims`` runs
everything).

Not part of the default test run (no ``test_*`` module here); the catalogue itself is checked
cheaply by ``tests/test_mutation_catalogue.py``.
"""
