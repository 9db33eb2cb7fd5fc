"""The compiled greedy path (flbounds.selection.fast) against the generic Python loop:
identical selections, identical gain bits and evaluation counts, ties included."""

import numpy as np
import pytest

import flbounds.selection.maximize as maximize
from flbounds.selection import (
    FacilityLocation,
    Modular,
    SelectionRule,
    SubTruncObjective,
    UnionFLObjective,
    greedy,
    greedy_trace,
    select_clients,
    stochastic_greedy,
    stochastic_greedy_plan,
)
from flbounds.selection.fast import fl_mode


@pytest.fixture
def generic(monkeypatch):
    """Run a callable with the compiled path switched off."""
    def run(fn, *args, **kwargs):
        with monkeypatch.context() as m:
            m.setattr(maximize, "fl_mode", lambda f, k: -1)
            return fn(*args, **kwargs)
    return run


def _dissim(rng, n, ties):
    if ties:  # few distinct values: many equal gains
        d = rng.integers(0, 3, size=(n, n)).astype(float)
    else:
        d = rng.exponential(size=(n, n))
    d = (d + d.T) / 2
    np.fill_diagonal(d, 0.0)
    return d


def _objectives(rng, n, ties):
    d = _dissim(rng, n, ties)
    w = rng.integers(0, 3, size=n) / 2.0 if ties else rng.exponential(size=n)
    recent = rng.random(n) < 0.4
    return [FacilityLocation(d), FacilityLocation(d, offset=float(d.sum())),
            SubTruncObjective(d, w, lam=0.7, b=1.1), SubTruncObjective(d, w, lam=0.0, b=0.3),
            SubTruncObjective(d, w, lam=2.5, b=50.0),
            UnionFLObjective(d, recent, mu=1.0), UnionFLObjective(d, recent, mu=0.25)]


def _modular(rng, n, ties):
    """Weights of mixed magnitudes and signs (a sum's order shows in its bits) or with ties."""
    if ties:
        return Modular(rng.integers(-1, 2, size=n) / 3.0)
    return Modular(rng.normal(size=n) * 10.0 ** rng.integers(-6, 7, size=n))


def _bits(values):
    return np.asarray(values, dtype=np.float64).view(np.uint64).tolist()


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_greedy_trace_identical(generic, seed, ties):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 13))
    for f in [*_objectives(rng, n, ties), _modular(rng, n, ties)]:
        for k in range(n + 1):
            new, old = greedy_trace(f, k), generic(greedy_trace, f, k)
            assert new.selected == old.selected
            assert _bits(new.gains) == _bits(old.gains)
            assert new.n_evaluations == old.n_evaluations
            assert greedy(f, k) == old.selected


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_stochastic_greedy_identical(generic, seed, ties):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 13))
    for f in [*_objectives(rng, n, ties), _modular(rng, n, ties)]:
        for k in range(n + 1):
            for r in sorted({1, max(1, n // 3), n}):
                keys = stochastic_greedy_plan(rng, n, k)
                if ties:  # equal keys: the lower index first
                    keys = np.floor(keys * 3) / 3
                new = stochastic_greedy(f, k, sample_size=r, keys=keys)
                assert new == generic(stochastic_greedy, f, k, sample_size=r, keys=keys)


@pytest.mark.parametrize("name", ["random", "divfl", "subtrunc", "unionfl", "poc"])
@pytest.mark.parametrize("ties", [False, True])
def test_select_clients_identical(generic, name, ties):
    rng = np.random.default_rng(7)
    for _ in range(5):
        n = int(rng.integers(2, 40))
        grads = rng.integers(-1, 2, size=(n, 3)).astype(float) if ties else rng.normal(
            size=(n, 6))
        history = [rng.choice(n, size=min(n, 3), replace=False) for _ in range(6)]
        for k in (0, 1, n // 2, n):
            args = dict(k=k, grads=grads, losses=rng.exponential(size=n),
                        data_fractions=np.full(n, 1 / n), history=history,
                        keys=rng.random((k + 1, n)))
            rule = SelectionRule(name, lam=0.95, window=3, sample_size=int(rng.integers(1, 12)))
            assert select_clients(rule, **args) == generic(select_clients, rule, **args)


def test_subclasses_and_nonfinite_keys_take_the_generic_path():
    class Custom(FacilityLocation):
        pass

    assert fl_mode(Custom(np.zeros((2, 2))), 1) == -1
    assert fl_mode(Modular(np.ones(9)), 8) == -1 and fl_mode(Modular(np.ones(9)), 7) == 3
    f = FacilityLocation(np.array([[0.0, 1.0], [1.0, 0.0]]))
    keys = np.array([[np.nan, 0.5]])
    assert stochastic_greedy(f, 1, sample_size=1, keys=keys) == [1]
