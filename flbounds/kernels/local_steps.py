"""A client's local gradient steps in one compiled call.

FedAvg's local phase (and the sampler's, FedAvg's from a replicate's model) is, once the
client's data are loaded, ``local_steps`` rounds of: hint a slice of a coming participant's
data, take the client's gradient at ``z``, move ``z``. Through
:func:`~flbounds.kernels.gradients.client_gradient` and
:func:`~flbounds.kernels.gradients.prefetch_slice` each step made two numba calls, and a call
passes each array as a dozen machine words: about 20 ns a step, 5-7% of a ridge or logistic
participant at n = 20, d = 50. :func:`local_descent` runs all the steps in one call, the
kind's gradient and hint written into its loop
(:data:`~flbounds.kernels.gradients.KIND_STEPS`). It is compiled once per problem kind in a
process, not written into every round loop that uses it: numba's inlining of the same code
into each entry point took twice as long to compile (the ridge and logistic round loops, 22
against 39 s on an empty cache). The implementation closes over the kind's compiled
gradient and hint; its disk-cache key names them
(:func:`~flbounds.kernels._cache.install_stable_cache_keys`), so a process finds what another
compiled. Same operations in the same order as the per-step calls: the same bits.
"""

from numba.extending import overload

from flbounds.kernels.gradients import CACHED, kind_steps


def local_descent(data, c, settings, work, nxt):
    """``settings.local_steps`` GD steps of size ``settings.step`` of client ``c`` (loaded
    into ``work[0]`` by :func:`~flbounds.kernels.gradients.load_client`) from ``z = work[1]``
    in place, ``work = (scratch, z, grad)``; step t hints slice t of client ``nxt``'s data
    (none if ``nxt < 0``). Compiled only."""
    raise NotImplementedError("local_descent is only callable from compiled code")


@overload(local_descent, jit_options=CACHED)
def _local_descent(data, c, settings, work, nxt):
    steps = kind_steps(data)
    if steps is None:
        return None
    gradient, hint = steps[1:]

    def impl(data, c, settings, work, nxt):
        scratch, z, grad = work
        for t in range(settings.local_steps):
            if nxt >= 0:
                hint(data, nxt, t, settings.local_steps)
            gradient(data, c, z, scratch, grad)
            for p in range(z.shape[0]):
                z[p] -= settings.step * grad[p]

    return impl
