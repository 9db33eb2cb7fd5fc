"""Claims of SubTrunc / UnionFL (submodular fair client selection)."""
