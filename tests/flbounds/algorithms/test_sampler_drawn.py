"""FedAvg with a sampler computing only the drawn clients' updates (``diagnostics=False``)
or recording only the variance terms (``diagnostics="variance"``).

The iterates and sample sizes must equal those of the full run (every client's update, the
exact variance terms) bit for bit, for every sampler of the library (ISP, RSP, multinomial
bandits, the full-information oracle), with and without stragglers, on the compiled problems
and on a problem outside :mod:`flbounds.problems` (the NumPy path); the other fields are NaN.
"""

import numba
import numpy as np
import pytest

from flbounds.algorithms import fedavg_sampler, sampler_rounds
from flbounds.algorithms.batched_sampler import fedavg_sampler_batched, sampler_uniforms
from flbounds.algorithms.sampler_rounds import ReplayUniforms, needs_every_client
from flbounds.kernels import rounds
from flbounds.problems import random_logistic, random_quadratics, random_ridge
from flbounds.sampling import Avare, KVib, Mabs, OracleISP, UniformISP, UniformRSP, Vrb
from tests import reference as ref

N, K, T = 24, 5, 10
SAMPLERS = {"uniform_isp": lambda: UniformISP(N, K), "kvib": lambda: KVib(N, K, T, G=1.0),
            "oracle": lambda: OracleISP(N, K), "uniform_rsp": lambda: UniformRSP(N, K),
            "vrb": lambda: Vrb(N, K, T, G=1.0), "mabs": lambda: Mabs(N, K, T, G=1.0),
            "avare": lambda: Avare(N, K, G=1.0)}


class _NumpyQuadratic:
    """A problem outside flbounds.problems: f_i(x) = 0.5 ||x - c_i||^2 scaled by s_i."""

    def __init__(self, rng):
        self.n_clients, self.dim = N, 4
        self.c, self.s = rng.normal(size=(N, 4)), rng.uniform(0.5, 1.5, N)

    def client_losses(self, X, *, clients):
        return 0.5 * self.s[clients] * np.sum((X - self.c[clients]) ** 2, axis=1)

    def client_gradients(self, X, *, clients):
        return self.s[clients, None] * (X - self.c[clients])


def _problem(kind):
    rng = np.random.default_rng(7)
    if kind == "quadratic":
        return random_quadratics(rng, N, 5, mu=0.1, L=1.0)
    if kind == "ridge":
        return random_ridge(rng, N, 6, 5, lam=0.1)
    if kind == "logistic":
        return random_logistic(rng, N, 6, 5, lam=0.1)
    return _NumpyQuadratic(rng)


def _run(problem, sampler, stragglers, diagnostics):
    kw = {}
    if stragglers:
        kw = dict(availability=np.random.default_rng(3).random((T, N)) < 0.6,
                  avail_probs=np.full(N, 0.6))
    return fedavg_sampler(problem, sampler, np.random.default_rng(11), n_rounds=T,
                          local_steps=3, step=0.3, diagnostics=diagnostics, **kw)


@pytest.mark.parametrize("kind", ["quadratic", "ridge", "logistic", "numpy"])
@pytest.mark.parametrize("name", sorted(SAMPLERS))
@pytest.mark.parametrize("stragglers", [False, True])
def test_drawn_clients_only_same_iterates(kind, name, stragglers):
    problem = _problem(kind)
    full = _run(problem, SAMPLERS[name](), stragglers, True)
    lean_sampler = SAMPLERS[name]()
    lean = _run(problem, lean_sampler, stragglers, False)
    assert np.array_equal(full.x, lean.x)
    assert np.array_equal(full.sizes, lean.sizes)
    assert full.sizes.sum() > 0 and np.isfinite(full.variance).all()
    for field in ("loss", "grad_sq", "variance", "opt_variance", "q_gap", "sum_sq"):
        assert np.isnan(getattr(lean, field)).all()
    if name == "kvib":  # the sampler's state after the run is the same too
        reference = SAMPLERS[name]()
        _run(problem, reference, stragglers, True)
        assert np.array_equal(reference.omega, lean_sampler.omega)


def test_only_the_oracle_needs_every_client():
    assert [name for name, make in SAMPLERS.items() if needs_every_client([make()])] \
        == ["oracle"]


def test_diagnostics_must_be_a_bool():
    for bad in ("no", None, 1):
        with pytest.raises(ValueError, match="diagnostics"):
            fedavg_sampler(_problem("ridge"), UniformISP(N, K), np.random.default_rng(0),
                           n_rounds=2, local_steps=1, step=0.1, diagnostics=bad)


@pytest.mark.parametrize("name", ["kvib", "oracle", "vrb"])
def test_variance_mode_records_the_same_variance_terms(name):
    problem = _problem("ridge")
    full = _run(problem, SAMPLERS[name](), True, True)
    some = _run(problem, SAMPLERS[name](), True, "variance")
    for field in ("x", "sizes", "variance", "opt_variance", "q_gap", "sum_sq"):
        assert np.array_equal(getattr(full, field), getattr(some, field))
    assert np.isnan(some.loss).all() and np.isnan(some.grad_sq).all()


@pytest.mark.parametrize("diagnostics", [False, "variance"])
def test_batched_modes_match_the_full_batched_run(diagnostics):
    problem = _problem("quadratic")
    # 6 replicates drawing 16 of 24 clients: both the block path (a client drawn by >= 4
    # replicates) and the one-point path of update_masked run
    plan = sampler_uniforms(np.random.default_rng(4).spawn(6), n_rounds=T, n_clients=N)
    runs = [fedavg_sampler_batched(problem, [KVib(N, 16, T, G=1.0) for _ in range(6)], plan,
                                   local_steps=2, step=0.2, diagnostics=mode)
            for mode in (True, diagnostics)]
    fields = ("x", "sizes") if diagnostics is False else ("x", "sizes", "variance", "sum_sq")
    for field in fields:
        assert np.array_equal(getattr(runs[0], field), getattr(runs[1], field))


@pytest.mark.parametrize("dim", [8, 16])
def test_register_resident_drawn_updates_equal_the_full_run(dim):
    """Quadratics with d = 8 or 16: a drawn client's local phase runs in the fused register
    kernel (one replicate, and a client drawn by fewer than 4 of several replicates); the
    iterates and K-Vib's state equal those of the full run, whose updates come from the block
    gradients (d >= 8: the feedback norm's sum follows NumPy's pairwise order, not a plain
    left-to-right sum)."""
    problem = random_quadratics(np.random.default_rng(5), N, dim, mu=0.1, L=1.0)
    for name in ("uniform_isp", "kvib"):
        samplers = [SAMPLERS[name]() for _ in range(2)]
        full = _run(problem, samplers[0], False, True)
        assert np.array_equal(full.x, _run(problem, samplers[1], False, False).x)
        if name == "kvib":
            assert np.array_equal(samplers[0].omega, samplers[1].omega)
    plan = sampler_uniforms(np.random.default_rng(4).spawn(6), n_rounds=T, n_clients=N)
    samplers = [[KVib(N, 16, T, G=0.01) for _ in range(6)] for _ in range(2)]
    runs = [fedavg_sampler_batched(problem, group, plan, local_steps=2, step=0.2,
                                   diagnostics=mode)
            for group, mode in zip(samplers, (True, False), strict=True)]
    assert np.array_equal(runs[0].x, runs[1].x)
    for full, lean in zip(*samplers, strict=True):
        assert np.array_equal(full.omega, lean.omega)


def _no_python_rounds(*args):
    raise AssertionError("a Python round ran where the compiled loop should")


@pytest.mark.parametrize("kind", ["quadratic", "ridge", "logistic"])
@pytest.mark.parametrize("name", ["uniform_isp", "kvib"])
def test_the_compiled_loop_runs_the_lean_rounds(monkeypatch, kind, name):
    """Uniform ISP and K-Vib on the compiled problems: all rounds in one compiled loop (no
    Python round), the same iterates as the full run, and the Generator left where the
    per-round draws leave it."""
    problem = _problem(kind)
    full_rng, lean_rng = np.random.default_rng(11), np.random.default_rng(11)
    full = fedavg_sampler(problem, SAMPLERS[name](), full_rng, n_rounds=T, local_steps=3,
                          step=0.3)
    monkeypatch.setattr(sampler_rounds, "_drawn_round", _no_python_rounds)
    lean = fedavg_sampler(problem, SAMPLERS[name](), lean_rng, n_rounds=T, local_steps=3,
                          step=0.3, diagnostics=False)
    assert np.array_equal(full.x, lean.x) and np.array_equal(full.sizes, lean.sizes)
    assert full_rng.random() == lean_rng.random()


@pytest.mark.parametrize("n_reps", [1, 6])
def test_chunks_of_rounds_change_nothing(monkeypatch, n_reps):
    """The loop takes the uniforms a chunk of rounds at a time: chunks of 3 rounds (the last
    one shorter) give the run of one chunk."""
    problem = _problem("ridge")
    plan = sampler_uniforms(np.random.default_rng(4).spawn(n_reps), n_rounds=T, n_clients=N)

    def go():
        samplers = [KVib(N, 8, T, G=1.0) for _ in range(n_reps)]
        trace = fedavg_sampler_batched(problem, samplers, plan, local_steps=2, step=0.2,
                                       diagnostics=False)
        return trace, np.stack([s.omega for s in samplers])

    whole, omega = go()
    monkeypatch.setattr(sampler_rounds, "CHUNK_VALUES", 3 * n_reps * N)
    chunked, omega_chunked = go()
    assert np.array_equal(whole.x, chunked.x) and np.array_equal(omega, omega_chunked)
    assert np.array_equal(whole.sizes, chunked.sizes)


@pytest.mark.parametrize("kind, dim", [("quadratic", 5), ("quadratic", 8), ("ridge", 5),
                                       ("logistic", 5)])
@pytest.mark.parametrize("name", ["uniform_isp", "kvib"])
def test_rounds_on_threads_give_the_serial_bits(monkeypatch, kind, dim, name):
    """One replicate's compiled rounds with every round in chunks (the work threshold at 0),
    on one and on two threads: the same iterates, sizes and K-Vib weights as the serial run
    (the threshold below 0), whether the local phases run one client at a time or, for a
    quadratic with d = 8, in the register kernels."""
    rng = np.random.default_rng(7)
    problem = {"quadratic": lambda: random_quadratics(rng, N, dim, mu=0.1, L=1.0),
               "ridge": lambda: random_ridge(rng, N, 6, dim, lam=0.1),
               "logistic": lambda: random_logistic(rng, N, 6, dim, lam=0.1)}[kind]()

    def go(cut, threads):
        monkeypatch.setattr(rounds, "PARALLEL_MIN_WORK", cut)
        numba.set_num_threads(threads)
        sampler = SAMPLERS[name]()
        trace = fedavg_sampler(problem, sampler, np.random.default_rng(11), n_rounds=T,
                               local_steps=3, step=0.3, diagnostics=False)
        return trace.x, trace.sizes, getattr(sampler, "omega", np.zeros(1))

    before = numba.get_num_threads()
    try:
        want = go(-1, 1)
        for threads in (1, 2):
            if threads <= numba.config.NUMBA_NUM_THREADS:
                got = go(0, threads)
                assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))
    finally:
        numba.set_num_threads(before)
    assert want[1].sum() > T


def test_replayed_plan_hands_out_rows_until_exhausted():
    plan = np.random.default_rng(2).random((4, N))
    replay = ReplayUniforms(plan)
    assert np.array_equal(replay.random((3, N)), plan[:3])
    assert np.array_equal(replay.random(N), plan[3])
    with pytest.raises(ValueError, match="more rows"):
        replay.rows(1)


@pytest.mark.parametrize("n_clients, budget, n_reps", [(1, 1, 1), (6, 6, 1), (6, 0.3, 1),
                                                       (6, 0.3, 3), (9, 2, 4)])
def test_compiled_loop_corners_match_the_python_rounds(monkeypatch, n_clients, budget,
                                                       n_reps):
    """One client, every client drawn (K = N), rounds with nobody drawn (K = 0.3), several
    replicates: the compiled loop against the Python rounds of the same mode."""
    problem = random_ridge(np.random.default_rng(2), n_clients, 4, 9, lam=0.1)
    rounds = 20       # K-Vib needs rounds * K >= N
    plan = sampler_uniforms(np.random.default_rng(6).spawn(n_reps), n_rounds=rounds,
                            n_clients=n_clients)

    def go():
        samplers = [KVib(n_clients, budget, rounds, G=0.5) for _ in range(n_reps)]
        trace = fedavg_sampler_batched(problem, samplers, plan, local_steps=2, step=0.2,
                                       diagnostics=False)
        return trace, np.stack([s.omega for s in samplers])

    compiled, omega = go()
    monkeypatch.setattr(sampler_rounds, "_loop_compiles", lambda *args: False)
    python, omega_python = go()
    assert np.array_equal(compiled.x, python.x) and np.array_equal(omega, omega_python)
    assert np.array_equal(compiled.sizes, python.sizes)
    if budget < 1:
        assert (compiled.sizes == 0).any()


@pytest.mark.parametrize("kind", ["quadratic", "ridge", "logistic"])
def test_compiled_loop_matches_the_numpy_twin(kind):
    """The compiled loop against ``tests/reference.py``'s per-round NumPy loop (einsum
    gradients, NumPy sums: other orders, so equal to rounding, ~ d n eps per gradient over
    T * 3 gradients)."""
    problem = _problem(kind)
    plan = sampler_uniforms([np.random.default_rng(12)], n_rounds=T, n_clients=N)
    got = fedavg_sampler_batched(problem, [UniformISP(N, K)], plan, local_steps=3, step=0.3,
                                 server_step=0.9, diagnostics=False)
    want = ref.fedavg_uniform_isp(problem, plan[0], K, 0.3, 3, 0.9, np.zeros(problem.dim))
    np.testing.assert_allclose(got.x[0], want, rtol=1e-11, atol=1e-12)
    assert got.sizes[0].sum() > 0


@pytest.mark.parametrize("name", ["oracle", "kvib", "uniform_isp"])
@pytest.mark.parametrize("diagnostics", [True, False])
def test_zero_rounds_leave_the_sampler_as_it_was(name, diagnostics):
    sampler = SAMPLERS[name]()
    before = sampler.probabilities().copy()
    trace = fedavg_sampler(_problem("ridge"), sampler, np.random.default_rng(0), n_rounds=0,
                           local_steps=2, step=0.1, diagnostics=diagnostics)
    assert trace.x.shape == (1, 5) and np.array_equal(sampler.probabilities(), before)
