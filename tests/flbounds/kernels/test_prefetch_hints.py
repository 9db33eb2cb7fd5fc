"""Hints of the next clients' data: only for data large enough to leave the caches, and never
a different number."""

import numpy as np
import pytest

from flbounds.kernels import rounds
from flbounds.kernels.gradients import (
    AHEAD,
    HINT_BYTES,
    HINT_MIN,
    LogisticData,
    QuadraticData,
    RidgeData,
    ScalarPLData,
    hint_ahead,
)
from flbounds.kernels.replicates import local_update_blocks
from flbounds.kernels.rounds import FocusRecord, FocusState, RoundSettings
from flbounds.problems import random_logistic, random_quadratics, random_ridge


def _ridge(n_clients, samples, dim):
    return RidgeData(np.zeros((n_clients, samples, dim)), np.zeros((n_clients, samples)), 0.1)


def test_hints_only_for_large_data_of_large_clients():
    big = -(-HINT_BYTES // (8 * 20 * 50))             # clients of 20 x 50 filling HINT_BYTES
    assert hint_ahead(_ridge(big, 20, 50)) == AHEAD
    assert hint_ahead(_ridge(big - 1, 20, 50)) is None          # all of it fits in L2
    tiny = HINT_BYTES // (8 * 3 * 3) + 1
    assert hint_ahead(_ridge(tiny, 3, 3)) is None               # 9 < HINT_MIN values each
    A = np.zeros((-(-HINT_BYTES // (8 * 256)), 16, 16))
    assert hint_ahead(QuadraticData(A, np.zeros(A.shape[:2]), A)) == AHEAD
    assert hint_ahead(LogisticData(np.zeros((big, 20, 50)), np.ones((big, 20)), 0.1, 0.0)) \
        == AHEAD
    assert hint_ahead(ScalarPLData(np.zeros(10**6))) is None
    assert HINT_MIN <= 20 * 50


@pytest.mark.parametrize("make", [
    lambda rng: random_quadratics(rng, 30, 16, mu=0.5, L=2.0),     # fused kernels
    lambda rng: random_quadratics(rng, 30, 9, mu=0.5, L=2.0),
    lambda rng: random_ridge(rng, 30, 12, 10, lam=0.1),
    lambda rng: random_logistic(rng, 30, 12, 10, lam=0.1),
], ids=["quadratic16", "quadratic9", "ridge", "logistic"])
def test_hints_change_no_bits(make):
    """The same runs with hints (ahead = 2) and without (None): FedAvg, FOCUS and the
    replicate blocks give the same bits, in serial and in chunked rounds."""
    rng = np.random.default_rng(5)
    problem = make(rng)
    data, n, d = problem.kernel_data, problem.n_clients, problem.dim
    plan = rng.random((6, n)) < 0.5
    x0 = rng.standard_normal(d) * 0.1
    runs = []
    for ahead in (None, AHEAD):
        out = []
        for min_work in (-1, 0):                       # serial, every round in chunks
            settings = RoundSettings(0.05, 3, 2, min_work, ahead)
            xs = np.empty((7, d))
            rounds.fedavg_rounds(data, plan, settings, x0, xs)
            state = FocusState(x0.copy(), np.zeros(d), np.zeros((n, d)), np.zeros((n, d)))
            record = FocusRecord(np.empty((7, d)), np.empty((7, d)), np.empty((7, d)))
            rounds.focus_rounds(data, plan, np.zeros((0, 1, 1, d)), settings, state, record)
            out += [xs, record.xs, record.ys, state.g]
        blocks = np.empty((3, n, d))
        local_update_blocks(data, np.tile(x0, (3, 1)), RoundSettings(0.05, 3, 1, -1, ahead),
                            blocks)
        out.append(blocks)
        runs.append(np.concatenate([a.ravel() for a in out]))
    assert np.array_equal(runs[0].view(np.int64), runs[1].view(np.int64))
