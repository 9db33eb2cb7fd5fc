"""The test suite: tests/flbounds/<package>/ mirrors the library, tests/verify/<paper>/ one
paper's claims, tests/figures/ and tests/benchmarks/ the scripts; helpers shared by several
folders (reference, strategies, fuzz_strategies, ledger_rows, mutation/) stay at this level."""
