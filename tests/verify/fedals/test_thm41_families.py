"""Thm 4.1's ridge claims run their (lambda, zeta, weights) cells on common datasets: the
statistics built from the noise alone are those of the labelled samples, every cell of the
grid is reported once, in grid order, and the claims still fail on a planted bug."""

import numpy as np
import pytest

from flbounds.ledger import get
from flbounds.theory.data_models import RidgeModel
from verify.fedals import instances
from verify.fedals.thm4_1 import claims


@pytest.mark.parametrize("sizes", [7, [7, 12, 30]])
def test_labels_built_from_the_noise_are_the_sampled_ones(sizes):
    theta_star = np.random.default_rng(1).standard_normal((3, instances.DIM))
    direct = RidgeModel(theta_star, instances.NOISE_SD, 0.3).sample(
        np.random.default_rng(2), 5, sizes, keep_samples=False)
    noise = RidgeModel(np.zeros_like(theta_star), instances.NOISE_SD, 0.0).sample(
        np.random.default_rng(2), 5, sizes, keep_samples=False)
    built = instances._with_optima(noise, theta_star)
    np.testing.assert_array_equal(built.gram, direct.gram)
    np.testing.assert_allclose(built.xy, direct.xy, rtol=0, atol=1e-13)
    np.testing.assert_allclose(built.yy, direct.yy, rtol=1e-13, atol=1e-13)


def test_family_settings_share_datasets_and_keep_their_own_models():
    rng = np.random.default_rng(3)
    base = rng.standard_normal(instances.DIM)
    settings = [dict(lam=1.0, zeta=2.0, weights="dirichlet"),
                dict(lam=0.1, zeta=0.0, weights="uniform")]
    out = list(instances.ridge_family(rng, base, n_samples=20, n_clients=4, unequal=True,
                                      n_draws=50, settings=settings))
    assert [o[0] for o in out] == settings[::-1]                  # by increasing lambda
    (_, m0, w0, d0, s0), (_, m1, w1, d1, s1) = out
    assert (m0.lam, m1.lam) == (0.1, 1.0)
    np.testing.assert_array_equal(m0.theta_star, np.broadcast_to(base, (4, instances.DIM)))
    np.testing.assert_allclose(w0, 0.25)
    assert w1.sum() == pytest.approx(1.0) and not np.allclose(w1, 0.25)
    assert d0.gap.shape == d1.gap.shape == (50,)
    assert np.isfinite([s0.bound, s1.bound, s0.bound_se, s1.bound_se]).all()


def test_bound_reports_every_cell_once_in_grid_order():
    res = get("fedals.thm41.bound").check(seed=0)
    assert res.verdict == "holds", res.reason
    keys = ("n_samples", "lam", "n_clients", "zeta", "weights", "unequal")
    listed = [tuple(sorted(c.items())) for c in claims._thm41_cells(
        **{k: v for k, v in claims.THM41_QUICK.items() if k != "n_draws"})]
    got = [tuple(sorted((k, r[k]) for k in keys)) for r in res.details["cells"]]
    assert got == listed and res.details["n_cells"] == len(listed)


def test_bound_fails_when_the_bound_is_planted_too_small(monkeypatch):
    real = instances.summarize_bound

    def shrunk(*args, **kwargs):
        s = real(*args, **kwargs)
        return s._replace(bound=s.bound / 50)

    monkeypatch.setattr(instances, "summarize_bound", shrunk)
    assert get("fedals.thm41.bound").check(seed=0).verdict == "violated"


def test_proof_steps_fail_when_the_local_erm_is_off(monkeypatch):
    res = get("fedals.thm41.proof_steps").check(seed=0)
    assert res.verdict == "holds", res.reason
    names = res.details["checks"]
    assert len(names) == 6 * 8 and names[0].startswith("(16)")   # 6 checks x (lam, K, zeta)
    real = instances._erm_map

    def off(noise, lam):
        a, c = real(noise, lam)
        return a, c + 0.5

    monkeypatch.setattr(instances, "_erm_map", off)
    assert get("fedals.thm41.proof_steps").check(seed=0).verdict == "violated"


def test_the_erm_map_gives_the_local_erm():
    theta_star = np.random.default_rng(4).standard_normal((3, instances.DIM))
    noise = RidgeModel(np.zeros_like(theta_star), instances.NOISE_SD, 0.0).sample(
        np.random.default_rng(5), 6, [8, 9, 20], keep_samples=False)
    model = RidgeModel(theta_star, instances.NOISE_SD, 0.05)
    a, c = instances._erm_map(noise, model.lam)
    np.testing.assert_allclose(np.einsum("tkij,kj->tki", a, theta_star) + c,
                               model.erm(instances._with_optima(noise, theta_star)),
                               rtol=1e-11, atol=1e-11)


def test_proof_steps_read_the_bounds_families_where_their_datasets_are_the_same(tmp_path,
                                                                                 monkeypatch):
    """At the bound's n_draws and K (the full profile's case), the proof steps read the
    bound's family runs from the run store: nothing is drawn again, the checks are those of
    the bound's datasets (the instances the bound reports), and they still hold."""
    from flbounds.ledger.engine.runs import RUN_STORE_ENV, RUNS_FILE
    shared = dict(n_draws=claims.THM41_QUICK["n_draws"], n_clients=[4, 16])
    tasks = get("fedals.thm41.proof_steps").cell_plan(0, "quick")
    assert all("bound" not in t for t in tasks)       # quick: datasets of its own
    monkeypatch.setenv(RUN_STORE_ENV, str(tmp_path / RUNS_FILE))
    # the bound stores the families the steps read: here those of the overridden steps
    monkeypatch.setattr(claims, "STEPS_QUICK", dict(claims.STEPS_QUICK, **shared))
    bound = get("fedals.thm41.bound").check(seed=0)
    assert bound.verdict == "holds", bound.reason

    def no_draws(*args, **kwargs):
        raise AssertionError("the proof steps drew datasets again")

    monkeypatch.setattr(claims, "ridge_family", no_draws)
    steps = get("fedals.thm41.proof_steps").check(seed=0, **shared)
    assert steps.verdict == "holds", steps.reason
    assert len(steps.details["checks"]) == 6 * 8
    bound_cells = {(r["lam"], r["n_clients"], r["zeta"]): r for r in bound.details["cells"]
                   if r["n_samples"] == 40 and r["weights"] == "uniform" and not r["unequal"]}
    assert all((lam, K, zeta) in bound_cells for lam in (0.1, 1.0) for K in (4, 16)
               for zeta in (0.0, 1.0))


def test_the_compiled_round_gives_the_numbers_of_one_round_batch():
    """``_ridge_round`` (one compiled pass from the noise moments and the ERM maps) against
    ``one_round_batch`` on the labelled datasets: every field to rounding."""
    from flbounds.theory.generalization import one_round_batch
    rng = np.random.default_rng(6)
    K = 5
    noise = RidgeModel(np.zeros((K, instances.DIM)), instances.NOISE_SD, 0.0)
    data0, copy0 = (noise.sample(rng, 200, [8, 9, 20, 11, 7], keep_samples=False)
                    for _ in range(2))
    model = RidgeModel(2.0 * rng.standard_normal((K, instances.DIM)), instances.NOISE_SD, 0.1)
    w = rng.dirichlet(np.ones(K))
    maps, maps_c = instances._erm_map(data0, model.lam), instances._erm_map(copy0, model.lam)
    theta, theta_c = (np.einsum("tkij,kj->tki", a, model.theta_star) + c
                      for a, c in (maps, maps_c))
    ref = one_round_batch(model, w, instances._with_optima(data0, model.theta_star),
                          instances._with_optima(copy0, model.theta_star), theta, theta_c,
                          local_is_erm=True)
    got = instances._ridge_round(model, w, data0, copy0, maps, maps_c)
    for name in ref._fields:
        np.testing.assert_allclose(getattr(got, name), getattr(ref, name), rtol=0,
                                   atol=1e-12, err_msg=name)


def test_noise_statistics_by_their_sufficient_statistics_are_the_qr_identity():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((9, instances.DIM))
    e = rng.standard_normal(9)
    q, r = np.linalg.qr(X)
    q, r = q * np.sign(np.diag(r)), r * np.sign(np.diag(r))[:, None]   # positive diagonal
    a = q.T @ e
    np.testing.assert_allclose(np.linalg.cholesky(X.T @ X), r.T, atol=1e-12)
    np.testing.assert_allclose(r.T @ a, X.T @ e, atol=1e-12)
    np.testing.assert_allclose(a @ a + np.sum((e - q @ a) ** 2), e @ e, rtol=1e-12)


def test_noise_statistics_have_the_law_of_sampled_noise():
    T, n, d = 40000, 8, instances.DIM
    stats = instances._noise_moments(np.random.default_rng(6), T, [n, 12], 2, d)
    assert stats.gram.shape == (T, 2, d, d) and stats.xy.shape == (T, 2, d)
    yy, xy2 = stats.yy[:, 0], n * stats.xy[:, 0, 0] ** 2
    # E e'e/n = sigma^2, Var = 2 sigma^4 / n; E n xy_0^2 = sigma^2 E gram_00 = sigma^2 / d
    assert abs(yy.mean() - instances.NOISE_SD ** 2) < 5 * np.sqrt(2.0 / n / T)
    # e'e/n = sigma^2 chi^2_n / n: 4th central moment 12 n (n + 4) sigma^8 / n^4, so the SE of
    # the sample variance is sqrt((mu_4 - var^2) / T)
    var, mu4 = 2 * instances.NOISE_SD ** 4 / n, 12 * n * (n + 4) * instances.NOISE_SD ** 8 / n ** 4
    assert abs(yy.var() - var) < 5 * np.sqrt((mu4 - var ** 2) / T)
    assert abs(xy2.mean() - instances.NOISE_SD ** 2 / d) < 5 * xy2.std() / np.sqrt(T)
    with pytest.raises(ValueError, match="n_samples"):
        instances._noise_moments(np.random.default_rng(0), 3, d, 1, d)
