"""Former name of :mod:`flbounds.participation.matrices` (kept as a re-export)."""

from flbounds.participation.matrices import average_matrix, pull_matrix, push_matrix  # noqa: F401
