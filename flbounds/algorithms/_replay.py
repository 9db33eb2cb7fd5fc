"""A pre-drawn uniform plan handed out as an ISP sampler's source of randomness would give it
(the batched sampler's replicates; :mod:`flbounds.algorithms.sampler_rounds`)."""

import numpy as np


class ReplayUniforms:
    """Hands out the rows of a pre-drawn uniform plan (T, N) in place of a Generator.

    Only ``random(N)`` (what ISP samplers call, once per round) and ``random((count, N))``
    (the next count rows) exist; asking for another size or more rows than the plan holds
    raises ``ValueError``.
    """

    def __init__(self, uniforms: np.ndarray):
        self._uniforms = uniforms
        self._next = 0

    def random(self, size):
        n_clients = self._uniforms.shape[1]
        if size == n_clients or size == (n_clients,):
            return self.rows(1)[0]
        if isinstance(size, tuple) and len(size) == 2 and size[1] == n_clients:
            return self.rows(size[0])
        raise ValueError(f"the replayed plan holds rows of {n_clients} uniforms, "
                         f"asked for size {size!r}")

    def rows(self, count: int, copy: bool = True) -> np.ndarray:
        """The next ``count`` rows (count, N), as ``count`` calls of ``random(N)`` would;
        ``copy`` False: a view of the plan (for readers only, such as the compiled loop)."""
        if count < 0 or self._next + count > self._uniforms.shape[0]:
            raise ValueError(f"cannot hand out {count} more rows of the replayed plan")
        block = self._uniforms[self._next:self._next + count]
        self._next += count
        return block.copy() if copy else block
