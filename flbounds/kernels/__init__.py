"""Numba kernels: contiguous float64 arrays in, caller-owned outputs, no RNG, cache=True."""
