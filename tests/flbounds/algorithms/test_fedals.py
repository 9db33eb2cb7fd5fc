"""FedALS schedules, the alpha = 1 == FedAvg identity and the SCAFFOLD variants."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flbounds.algorithms.fedals import (
    communication_cost,
    fedals,
    fedals_periods,
    intended_schedule,
    local_sgd_fedavg,
    printed_schedule,
    weighted_average,
)


def _quadratic(rng, K=3, d=4):
    A = np.stack([np.diag(rng.uniform(0.5, 2.0, d)) for _ in range(K)])
    b = rng.standard_normal((K, d))

    def grad(theta, noise):
        return np.einsum("kij,...kj->...ki", A, theta - b) + noise
    x_star = np.linalg.solve(A.sum(0), np.einsum("kij,kj->i", A, b))
    return grad, x_star


@settings(max_examples=40, deadline=None)
@given(n_rounds=st.integers(1, 60), tau=st.integers(1, 7), alpha=st.integers(1, 12))
def test_printed_schedule_never_averages_body_for_integer_alpha(n_rounds, tau, alpha):
    sched = printed_schedule(n_rounds, tau, alpha)
    assert sched.shape == (n_rounds * tau, 2)
    assert not sched[:, 1].any()
    assert sched[:, 0].sum() == n_rounds


@settings(max_examples=40, deadline=None)
@given(n_steps=st.integers(1, 300), tau=st.integers(1, 9), alpha=st.integers(1, 9))
def test_intended_schedule_counts(n_steps, tau, alpha):
    head, body = fedals_periods(tau, alpha)
    code = intended_schedule(n_steps, [head, body], convention="code")
    end = intended_schedule(n_steps, [head, body], convention="end")
    assert code[:, 0].sum() == -(-n_steps // head) and code[:, 1].sum() == -(-n_steps // body)
    assert end[:, 0].sum() == n_steps // head and end[:, 1].sum() == n_steps // body
    assert np.all(code[:, 0] >= code[:, 1])        # every body sync is also a head sync


def test_alpha_one_equals_reference_fedavg_bitwise():
    rng = np.random.default_rng(0)
    grad, _ = _quadratic(rng)
    tau, R = 4, 25
    noise = rng.standard_normal((tau * R, 2, 3, 4))   # replicate axis of 2
    theta0 = np.zeros((2, 3, 4))
    w = np.array([0.2, 0.3, 0.5])
    sync = intended_schedule(tau * R, [tau, tau])
    tr = fedals(grad, theta0, noise, step=0.1, sync=sync, groups=[slice(0, 1), slice(1, 4)],
                weights=w)
    ref = local_sgd_fedavg(grad, theta0, noise, step=0.1, local_steps=tau, n_rounds=R, weights=w)
    assert np.array_equal(tr.output, ref)


def test_scaffold_exact_and_alpha_one_matches_single_group():
    rng = np.random.default_rng(1)
    grad, x_star = _quadratic(rng)
    zero = np.zeros((3, 4))
    plan = [0.0] * 2000
    for alpha in (1, 3):
        periods = list(fedals_periods(5, alpha))
        sync = intended_schedule(2000, periods)
        tr = fedals(grad, zero, plan, step=0.1, sync=sync, groups=[slice(2, 4), slice(0, 2)],
                    control="scaffold", periods=periods)
        assert np.linalg.norm(tr.output - x_star) < 1e-10
    single = fedals(grad, zero, plan, step=0.1, sync=intended_schedule(2000, [5]),
                    groups=[slice(0, 4)], control="scaffold", periods=[5])
    two = fedals(grad, zero, plan, step=0.1, sync=intended_schedule(2000, [5, 5]),
                 groups=[slice(0, 2), slice(2, 4)], control="scaffold", periods=[5, 5])
    np.testing.assert_allclose(single.output, two.output, rtol=0, atol=1e-14)


def test_consensus_zero_after_sync():
    rng = np.random.default_rng(2)
    grad, _ = _quadratic(rng)
    sync = intended_schedule(7, [7, 3])          # last step syncs group 0 only
    noise = rng.standard_normal((7, 3, 4))
    tr = fedals(grad, np.zeros((3, 4)), noise, step=0.1, sync=sync,
                groups=[slice(0, 2), slice(2, 4)], record_consensus=True)
    assert np.ptp(tr.clients[:, 0:2], axis=0).max() == 0.0
    assert np.ptp(tr.clients[:, 2:4], axis=0).max() > 0.0
    assert len(tr.consensus[0]) == 1 and len(tr.consensus[1]) == 2


def test_communication_cost_and_weighted_average():
    assert communication_cost(20000, 5, 1, 650, 292304) == 2343632000
    assert communication_cost(20000, 5, 100, 650, 292304) == 28584320
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(weighted_average(x, np.array([0.5, 0.25, 0.25])),
                               0.5 * x[0] + 0.25 * x[1] + 0.25 * x[2])


def test_bad_inputs():
    grad, _ = _quadratic(np.random.default_rng(3))
    sync = intended_schedule(4, [2])
    with pytest.raises(ValueError, match="groups"):
        fedals(grad, np.zeros((3, 4)), [0] * 4, step=0.1, sync=sync, groups=[slice(0, 3)])
    with pytest.raises(ValueError, match="weights"):
        fedals(grad, np.zeros((3, 4)), [0] * 4, step=0.1, sync=sync, groups=[slice(0, 4)],
               weights=[0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match="step"):
        fedals(grad, np.zeros((3, 4)), [0] * 4, step=-1.0, sync=sync, groups=[slice(0, 4)])
    with pytest.raises(ValueError, match="periods"):
        fedals(grad, np.zeros((3, 4)), [0] * 4, step=0.1, sync=sync, groups=[slice(0, 4)],
               control="scaffold")
    with pytest.raises(ValueError, match="alpha"):
        fedals_periods(5, 0)
    with pytest.raises(ValueError, match="convention"):
        intended_schedule(10, [2], convention="other")


def _one_step_controls(control, c_k, theta, prev, eta_p):
    """Slow reference of one control refresh (uniform weights) for the printed variants."""
    K = c_k.shape[0]
    drift = (prev - theta) / eta_p
    if control == "printed":
        return c_k.sum(0) - c_k + drift, None
    bar = c_k.sum(0) / K
    sign = -1.0 if control in ("printed_alg4", "printed_alg4_mean") else 1.0
    return sign * (c_k - bar) + drift, bar


@pytest.mark.parametrize("control", ["printed", "printed_alg4", "sign_flipped_alg4",
                                     "printed_alg4_mean", "scaffold"])
def test_control_variants_first_refresh_match_formula(control):
    # two steps, one sync after step 2: with c_k = 0 initially the refreshed c_k is drift
    # /(eta P) for every variant; a second period exercises the sign and the server term.
    rng = np.random.default_rng(5)
    grad, _ = _quadratic(rng)
    sync = intended_schedule(4, [2])
    plan = [0.0] * 4
    tr2 = fedals(grad, np.zeros((3, 4)), plan, step=0.1, sync=sync[:2], groups=[slice(0, 4)],
                 control=control, periods=[2])
    tr4 = fedals(grad, np.zeros((3, 4)), plan, step=0.1, sync=sync, groups=[slice(0, 4)],
                 control=control, periods=[2])
    # replay by hand: first period
    theta = np.zeros((3, 4))
    c_k = np.zeros((3, 4))
    server = np.zeros(4)
    for period in range(2):
        start = theta.copy()
        for _ in range(2):
            theta = theta - 0.1 * (grad(theta, 0.0) - c_k + server)
        if control == "scaffold":
            c_k = c_k - c_k.mean(0) + (start - theta) / 0.2
            server = c_k.mean(0)
        else:
            c_k, _ = _one_step_controls(control, c_k, theta, start, 0.2)
            server = c_k.mean(0) if control == "printed_alg4_mean" else c_k.sum(0)
        theta = np.repeat(theta.mean(0)[None], 3, axis=0)
        if period == 0:
            np.testing.assert_allclose(tr2.output, theta[0], rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(tr4.output, theta[0], rtol=1e-13, atol=1e-13)


def test_record_every_history():
    grad, _ = _quadratic(np.random.default_rng(6))
    sync = intended_schedule(10, [5])
    tr = fedals(grad, np.zeros((3, 4)), [0.0] * 10, step=0.1, sync=sync, groups=[slice(0, 4)],
                record_every=5)
    assert tr.history.shape == (2, 4)
    np.testing.assert_array_equal(tr.history[-1], tr.output)
    with pytest.raises(ValueError, match="record_every"):
        fedals(grad, np.zeros((3, 4)), [0.0] * 10, step=0.1, sync=sync,
               groups=[slice(0, 4)], record_every=0)


def test_the_fused_step_gives_numpys_numbers():
    """theta -= step * direction, fused for large arrays: bit for bit numpy's, also for the
    arrays that fall back (small, non-contiguous)."""
    import importlib
    impl = importlib.import_module("flbounds.algorithms.fedals")
    rng = np.random.default_rng(4)
    for shape, transpose in (((3, 5, 7), False), ((2, 5, impl.FUSED_STEP_MIN // 10 + 3), False),
                             ((2, 5, impl.FUSED_STEP_MIN // 10 + 3), True)):
        theta = rng.standard_normal(shape)
        direction = rng.standard_normal(shape[::-1]).T if transpose else \
            rng.standard_normal(shape)
        step = np.float64(0.0537)
        want = theta - step * direction
        impl._descend(theta, step, direction)
        np.testing.assert_array_equal(theta, want)


def test_a_fused_descend_replaces_the_gradient_step():
    rng = np.random.default_rng(5)
    grad, _ = _quadratic(rng)
    noise = rng.standard_normal((30, 2, 3, 4))
    sync = intended_schedule(30, [3, 6])
    groups = [slice(0, 1), slice(1, 4)]

    def descend(theta, step, batch):
        theta -= step * grad(theta, batch)

    plain = fedals(grad, np.zeros((2, 3, 4)), noise, step=0.1, sync=sync, groups=groups)
    fused = fedals(None, np.zeros((2, 3, 4)), noise, step=0.1, sync=sync, groups=groups,
                   descend=descend)
    assert np.array_equal(fused.output, plain.output)
    assert np.array_equal(fused.clients, plain.clients)

    def corrected(theta, step, batch, c_k, c):
        theta -= step * (grad(theta, batch) - c_k + c[..., None, :])

    for control in ("scaffold", "printed_alg4"):
        plain = fedals(grad, np.zeros((2, 3, 4)), noise, step=0.1, sync=sync, groups=groups,
                       control=control, periods=[3, 6])
        fused = fedals(None, np.zeros((2, 3, 4)), noise, step=0.1, sync=sync, groups=groups,
                       control=control, periods=[3, 6], descend=corrected)
        assert np.array_equal(fused.clients, plain.clients)


def test_the_compiled_average_gives_numpys_numbers():
    """Groups of large C-contiguous arrays are averaged by a compiled pass: the same numbers
    as :func:`weighted_average` written back to every client (uneven weights, every group)."""
    import importlib
    impl = importlib.import_module("flbounds.algorithms.fedals")
    rng = np.random.default_rng(6)
    theta = rng.standard_normal((2, 5, impl.FUSED_STEP_MIN // 10 + 3))
    w = rng.uniform(0.1, 1.0, 5)
    w /= w.sum()
    for sl in (slice(0, 7), slice(7, theta.shape[-1]), slice(0, theta.shape[-1])):
        want = theta.copy()
        want[..., sl] = weighted_average(theta[..., sl], w)[..., None, :]
        got = theta.copy()
        impl._average_group(got, w, sl)
        assert np.array_equal(got, want)


def test_the_compiled_control_refresh_gives_numpys_numbers():
    """SCAFFOLD's refresh of a group of large C-contiguous arrays is compiled: the numbers
    of its NumPy form (the printed variants keep NumPy, and agree with it too)."""
    import importlib
    impl = importlib.import_module("flbounds.algorithms.fedals")
    rng = np.random.default_rng(7)
    shape = (2, 5, impl.FUSED_STEP_MIN // 10 + 3)
    c_k, theta, prev = (rng.standard_normal(shape) for _ in range(3))
    w = rng.uniform(0.1, 1.0, 5)
    w /= w.sum()
    for sl in (slice(0, 7), slice(7, shape[-1])):
        drift = (prev[..., sl] - theta[..., sl]) / 0.3
        want_k = c_k.copy()
        want_k[..., sl] = 1.0 * (c_k[..., sl] - weighted_average(c_k[..., sl], w)[..., None, :]) \
            + drift
        want_c = np.zeros(shape[:1] + shape[2:])
        want_c[..., sl] = weighted_average(want_k[..., sl], w)
        got_k, got_c = c_k.copy(), np.zeros_like(want_c)
        impl._refresh_controls(got_k, got_c, theta, prev, sl, w, 0.3,
                               impl._CONTROL_RULES["scaffold"])
        assert np.array_equal(got_k, want_k) and np.array_equal(got_c, want_c)
