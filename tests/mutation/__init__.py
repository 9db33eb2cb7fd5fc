"""Mutation harness: planted bugs in the library's core, and which claims notice them.

``python -m tests.mutation [--paper P] [--only ID] [--workers N] [--list] [--json PATH]``.
Not part of the default test run (no ``test_*`` module here); the catalogue itself is checked
cheaply by ``tests/test_mutation_catalogue.py``.
"""
