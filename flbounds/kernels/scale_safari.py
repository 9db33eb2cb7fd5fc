"""SAFARI (Algorithm 1 of [000]) on quadratic clients over a replicate axis, in one call.

Replicate b runs :func:`flbounds.kernels.safari_quadratic.safari_quadratic_rounds` on its own
slice of the stacked plan, so its iterates are those of the unbatched kernel bit for bit.
Replicates run under ``numba.prange``; each replicate's rounds are serial, so the numbers do not
depend on the number of threads. Kernels never draw random numbers and never validate.
"""

from numba import njit, prange

from flbounds.kernels.safari_quadratic import safari_quadratic_rounds


@njit(cache=True, fastmath=False, parallel=True)
def safari_quadratic_batch(A, b, A_mean, b_mean, x0, client_round, clients, client_noise,
                           server_noise, step_client, step_server, out_x, out_g2):
    """All replicates: ``client_round`` (B, R), ``clients`` (B, R, m), ``client_noise``
    (B, R, m, K, d), ``server_noise`` (B, R, d); outputs ``out_x`` (B, R+1, d), ``out_g2``
    (B, R)."""
    for rep in prange(client_round.shape[0]):
        safari_quadratic_rounds(A, b, A_mean, b_mean, x0, client_round[rep], clients[rep],
                                client_noise[rep], server_noise[rep], step_client,
                                step_server, out_x[rep], out_g2[rep])
