"""Claims of [004] SubTrunc / UnionFL (submodular fair client selection)."""
