"""The lockstep digits runs (many FedAvg and SAFARI runs on several federations, the steps of
one kind and batch size stacked) equal the unbatched ``safari_digits`` runs bit for bit."""

import numpy as np
import pytest

from verify.safari.digits_experiment import (
    GainSetting,
    Replicate,
    _grad,
    digits_federation,
    digits_plan,
    gain,
    gains,
    lockstep_runs,
    safari_digits,
)


def _replicates(n_server, n_fed=3):
    rng = np.random.default_rng(4)
    reps = []
    for k in range(n_fed):
        fed = digits_federation(rng, classes_per_client=1 + 2 * k, n_server=n_server + 17 * k)
        plan = digits_plan(rng, fed, n_rounds=12, q=0.6, n_excluded=k, n_sampled=3)
        reps += [Replicate(fed, plan, np.ones(12, dtype=bool)),
                 Replicate(fed, plan, plan.client_round)]
    return reps


@pytest.mark.parametrize("server_steps, n_server", [(None, 60), (1, 60), (None, 0)])
def test_lockstep_runs_equal_single_runs(server_steps, n_server):
    reps = _replicates(n_server)
    kw = dict(step_client=0.1, step_server=0.1, batch=16, tail=5, server_steps=server_steps)
    runs = lockstep_runs(reps, **kw)
    assert runs.shape == (5, len(reps), 65, 10)
    for b, rep in enumerate(reps):
        one = safari_digits(rep.fed, rep.plan._replace(client_round=rep.client_round), **kw)
        assert np.array_equal(runs[:, b], one)
    assert not np.array_equal(runs[:, 0], runs[:, 1])  # FedAvg and SAFARI do differ


def test_lockstep_runs_fail_on_a_planted_change(monkeypatch):
    """The equality can fail: a stacked gradient off by one part in 10^12 (single runs
    untouched) makes the lockstep runs differ from the single ones."""
    from verify.safari import digits_experiment

    def planted(W, X, y, grad=digits_experiment._grad):
        return grad(W, X, y) * (1 + 1e-12) if X.ndim == 3 else grad(W, X, y)

    reps = _replicates(60, n_fed=1)
    monkeypatch.setattr(digits_experiment, "_grad", planted)
    runs = lockstep_runs(reps, step_client=0.1, tail=3)
    one = safari_digits(reps[1].fed, reps[1].plan, step_client=0.1, tail=3)
    assert not np.array_equal(runs[:, 1], one)


def test_gains_are_gain_one_after_the_other():
    settings = [GainSetting(2, 1, 50), GainSetting(5, 0, 0, q=0.5)]
    together = gains([(c, s) for c in np.random.default_rng(7).spawn(2) for s in settings],
                     n_rounds=6, tail=2)
    one_by_one = [gain(c, **s._asdict(), n_rounds=6, tail=2)
                  for c in np.random.default_rng(7).spawn(2) for s in settings]
    assert np.array_equal(together, np.array(one_by_one))


def test_lockstep_runs_check_their_input():
    reps = _replicates(60, n_fed=1)
    with pytest.raises(ValueError, match="reps"):
        lockstep_runs([])
    with pytest.raises(ValueError, match="tail"):
        lockstep_runs(reps, tail=13)
    with pytest.raises(ValueError, match="server_steps"):
        lockstep_runs(reps, server_steps=0)
    short = reps[0]._replace(client_round=np.ones(5, dtype=bool))
    with pytest.raises(ValueError, match="same rounds"):
        lockstep_runs([reps[1], short])
    other = reps[0].fed._replace(X=reps[0].fed.X + 1.0)
    with pytest.raises(ValueError, match="same data"):
        lockstep_runs([reps[0], reps[1]._replace(fed=other)])


def test_grad_is_the_cross_entropy_gradient():
    """Single and stacked: X^T (softmax(X W) - onehot(y)) / n, the stack row by row."""
    rng = np.random.default_rng(8)
    W, X, y = rng.normal(size=(3, 65, 10)), rng.random((3, 7, 65)), rng.integers(0, 10, (3, 7))
    stacked = _grad(W.copy(), X, y)
    for b in range(3):
        Z = X[b] @ W[b]
        P = np.exp(Z - Z.max(axis=1, keepdims=True))
        P /= P.sum(axis=1, keepdims=True)
        P[np.arange(7), y[b]] -= 1.0
        want = X[b].T @ P / 7
        np.testing.assert_allclose(_grad(W[b].copy(), X[b], y[b]), want, rtol=1e-12,
                                   atol=1e-15)
        assert np.array_equal(stacked[b], _grad(W[b].copy(), X[b], y[b]))
