"""The compiled paths' draws are read exactly: the sampler loop's draws from the iterates of
the separable problem equal U < p, and the bandit kernels' counts equal NumPy's multinomial
draw on the same uniforms (so the draw-law claims test the draws themselves; the planted 1%
biases are in tests/mutation/catalogue.py)."""

import numpy as np

from flbounds.algorithms import fedavg_sampler_batched
from flbounds.sampling import UniformISP
from verify.kvib import draw_laws_compiled as dlc
from verify.kvib.draw_laws import K, N


def test_loop_draws_read_from_the_iterates_are_u_below_p():
    rng = np.random.default_rng(3)
    uniforms = rng.random((7, 20, N))
    trace = fedavg_sampler_batched(dlc.separable_problem(), [UniformISP(N, K) for _ in range(7)],
                                   uniforms, **dlc._RUN)
    assert np.array_equal(dlc.drawn_masks(trace.x), (uniforms < K / N).reshape(-1, N))


def _numpy_counts(uniforms, q):
    cdf = np.cumsum(q)
    cdf /= cdf[-1]
    idx = np.searchsorted(cdf, uniforms[:, 0, :], side="right")
    return np.stack([np.bincount(row, minlength=N) for row in idx])


def test_bandit_counts_equal_numpys_multinomial_draw():
    for name, (mix, draws_of) in dlc.BANDITS.items():
        counts = draws_of(np.random.default_rng(5), 40, mix)
        uniforms = np.random.default_rng(5).random((40, 1, K))
        assert np.array_equal(counts, _numpy_counts(uniforms, dlc.bandit_law(mix))), name


def test_a_planted_wrong_law_is_rejected():
    """The claim's test against a law 3% off for client 2 (the draws are right)."""
    rng = np.random.default_rng(0)
    p = np.full(N, K / N)
    masks = dlc._loop_batched(rng, 200_000, None)
    wrong = p.copy()
    wrong[2] *= 1.03
    inclusion, pairwise = dlc._isp_law(wrong)
    assert dlc._judge(masks.astype(np.int64), inclusion, pairwise).rejected
    inclusion, pairwise = dlc._isp_law(p)
    assert not dlc._judge(masks.astype(np.int64), inclusion, pairwise).rejected
