"""The faster paths of SubTrunc's simulations give the numbers of their plain twins, bit for
bit: blocks of points or paths, the step-major noise of Theorem 1's runs, FedAvg without the
random rule's unused gradients, and runs read back from a check's shared runs."""

import numpy as np
import pytest

import verify.subtrunc.lemma1 as lemma1
import verify.subtrunc.lemma2 as lemma2
from flbounds.ledger.engine.runs import RUN_STORE_ENV, share_runs
from flbounds.selection import SelectionRule, select_clients
from verify.softmax import softmax_rows
from verify.subtrunc import _fl_kernels, _mc_kernels, fairness, toy_problems
from verify.subtrunc.fl_experiment import (
    client_gradients,
    client_losses_and_gradients,
    client_test_accuracy,
    make_federated_data,
    run_fedavg,
)
from verify.subtrunc.lemma2 import _proof_paths
from verify.subtrunc.thm1.end_to_end import run_biased_fedavg


def _same(a, b):
    return np.array_equal(np.asarray(a), np.asarray(b))


# Blocks of points change the column count of each BLAS product; its numbers per column are
# the same at the claims' sizes (checked here: quick 400 and 1500 points, full 20000 and
# 40000), which is what these tests pin.
def test_least_squares_gradients_in_blocks_are_the_one_block_numbers(monkeypatch):
    rng = np.random.default_rng(0)
    prob = toy_problems.random_least_squares(rng, 20, 5)
    for points in (400, 1500, 20000, 40000):
        W = rng.normal(size=(points, 20, 5))
        monkeypatch.setattr(toy_problems, "GRADIENT_BLOCK", 10**9)
        whole = prob.gradients(W)
        monkeypatch.undo()
        assert _same(prob.gradients(W), whole), points
    start = np.broadcast_to(W[0], (300, 20, 5))      # one point for many paths
    assert _same(prob.gradients(start), np.broadcast_to(whole[0], (300, 20, 5)))


def test_affine_gradients_are_the_least_squares_gradients(monkeypatch):
    """The affine form gives LeastSquares.gradients to rounding, and the same numbers in
    blocks of points as in one block."""
    rng = np.random.default_rng(0)
    for n, d in ((20, 5), (1, 5), (20, 10)):
        prob = toy_problems.random_least_squares(rng, n, d)
        form = toy_problems.affine_form(prob)
        for points in (300, 16000):
            W = rng.normal(size=(points, n, d))
            fast = toy_problems.affine_gradients(form, W)
            assert np.allclose(fast, prob.gradients(W), rtol=1e-12, atol=1e-12)
            monkeypatch.setattr(toy_problems, "GRADIENT_BLOCK", 10**9)
            assert _same(toy_problems.affine_gradients(form, W), fast), (n, d, points)
            monkeypatch.undo()
        lead = rng.normal(size=(3, 7, n, d))
        assert _same(toy_problems.affine_gradients(form, lead),
                     toy_problems.affine_gradients(form, lead.reshape(21, n, d)).reshape(
                         lead.shape))


def test_lemma2_paths_in_blocks_are_the_one_block_paths(monkeypatch):
    prob = toy_problems.random_least_squares(np.random.default_rng(1), lemma2.N_CLIENTS,
                                             lemma2.DIM)
    w = np.ones(lemma2.DIM)

    def paths():
        return lemma2.local_paths(prob, w, local_steps=3, step=0.01,
                                  rng=np.random.default_rng(2), n_paths=1500)

    blocks = paths()
    monkeypatch.setattr(lemma2, "PATH_BLOCK", 10**9)
    assert all(_same(a, b) for a, b in zip(paths(), blocks, strict=True))


def test_lemma2_gradient_means_are_the_paths_reduced():
    prob = toy_problems.random_least_squares(np.random.default_rng(1), lemma2.N_CLIENTS,
                                             lemma2.DIM)
    w = np.ones(lemma2.DIM)
    kw = dict(local_steps=3, step=0.01, n_paths=1500)
    _, grads = lemma2.local_paths(prob, w, rng=np.random.default_rng(2), **kw)
    u, first = lemma2.gradient_means(prob, w, rng=np.random.default_rng(2), **kw)
    assert _same(u, grads.mean(axis=2)) and _same(first, grads[0, 0])
    assert _same(u[:, 0], grads[:, 0].mean(axis=1))


def test_proof_step_diffs_streamed_are_those_of_the_kept_paths():
    prob = toy_problems.random_least_squares(np.random.default_rng(1), lemma2.N_CLIENTS,
                                             lemma2.DIM)
    w, step = np.ones(lemma2.DIM), 0.02
    iterates, grads = lemma2.local_paths(prob, w, local_steps=4, step=step,
                                         rng=np.random.default_rng(2), n_paths=1500)
    kept = _proof_paths._point_diffs(prob, step, iterates, grads, 4)
    streamed = _proof_paths._point_diffs_streamed(prob, step, w, np.random.default_rng(2),
                                                  1500, 4)
    assert streamed == kept


@pytest.mark.parametrize("rule", lemma1.RULES, ids=lambda r: r.name)
def test_lemma1_round_in_blocks_is_the_one_block_round(rule, monkeypatch):
    prob = toy_problems.random_least_squares(np.random.default_rng(3), 20, 5)

    def round_():
        return lemma1.one_round(prob, np.ones(5), k=5, local_steps=3, step=0.01, sigma2=1.0,
                                rule=rule, rng=np.random.default_rng(4), n_paths=1500)

    blocks = round_()
    monkeypatch.setattr(lemma1, "PATH_BLOCK", 10**9)
    monkeypatch.setattr(toy_problems, "GRADIENT_BLOCK", 10**9)
    assert all(_same(a, b) for a, b in zip(round_(), blocks, strict=True))


def _biased_fedavg_twin(prob, w0, *, K, E, sigma2, gamma, noise):
    """Theorem 1's run reading the seed-major noise step by step (the plain loop)."""
    seeds, _, _, n, d = noise.shape
    step = 1.0 / (prob.L * E * np.sqrt(K))
    w = np.broadcast_to(w0, (seeds, d)).copy()
    out = np.empty((seeds, K))
    gradients = toy_problems.gradients_of(prob)
    for k in range(K):
        full_grad = gradients(np.broadcast_to(w[:, None, :], (seeds, n, d))).mean(axis=1)
        norm = np.linalg.norm(full_grad, axis=1, keepdims=True)
        out[:, k] = norm[:, 0] ** 2
        bias = -np.sqrt(gamma) * np.where(norm > 0, full_grad / np.maximum(norm, 1e-300),
                                          np.eye(d)[0])
        local = np.broadcast_to(w[:, None, :], (seeds, n, d)).copy()
        for tau in range(E):
            local -= step * (gradients(local) + np.sqrt(sigma2 / d) * noise[:, k, tau])
        w = local.mean(axis=1) - step * E * bias
    return out


@pytest.mark.parametrize("family", ["least_squares", "cosine"])
def test_theorem1_run_is_its_plain_twin(family):
    rng = np.random.default_rng(5)
    make = {"least_squares": toy_problems.random_least_squares,
            "cosine": toy_problems.random_cosine}[family]
    prob = make(rng, 4, 3)
    noise = rng.normal(size=(6, 9, 3, 4, 3))
    kw = dict(K=9, E=3, sigma2=0.7, gamma=0.3, noise=noise)
    assert _same(run_biased_fedavg(prob, np.ones(3), **kw),
                 _biased_fedavg_twin(prob, np.ones(3), **kw))
    # settings side by side on one plan: each is its own run on that plan
    side = run_biased_fedavg(prob, np.ones(3), K=9, E=3, sigma2=[0.7, 2.0, 0.0],
                             gamma=[0.3, 0.0, 5.0], noise=noise)
    for row, (s2, g) in zip(side, [(0.7, 0.3), (2.0, 0.0), (0.0, 5.0)], strict=True):
        assert np.allclose(row, _biased_fedavg_twin(prob, np.ones(3), K=9, E=3, sigma2=s2,
                                                    gamma=g, noise=noise),
                           rtol=1e-12, atol=1e-14)


def _fedavg_twin(data, rule, *, plan, k=10, local_steps=5, step=0.5):
    """FedAvg as first written: every round's gradients, the clients' data indexed per step."""
    n, _, p = data.features.shape
    W = np.zeros((p, data.n_classes))
    fractions = data.mask.sum(axis=1) / data.mask.sum()
    history, counts = [], np.zeros(n, dtype=np.int64)
    for t in range(plan.shape[0]):
        losses, grads = client_losses_and_gradients(W, data)
        sel = np.array(select_clients(rule, k=k, grads=grads.reshape(n, -1), losses=losses,
                                      data_fractions=fractions, history=history,
                                      keys=plan[t]))
        history.append(sel)
        counts[sel] += 1
        local = np.broadcast_to(W, (k, *W.shape)).copy()
        for _ in range(local_steps):
            local -= step * client_gradients(local, data, sel)
        W = local.mean(axis=0)
    return client_test_accuracy(W, data), counts


@pytest.mark.parametrize("rule", [SelectionRule("random"), SelectionRule("divfl"),
                                  SelectionRule("subtrunc", lam=0.95),
                                  SelectionRule("unionfl", window=2), SelectionRule("poc")],
                         ids=lambda r: r.name)
@pytest.mark.parametrize("source", ["synthetic", "digits"])
def test_fedavg_is_its_plain_twin(rule, source):
    r = np.random.default_rng(6)
    data = make_federated_data(source, r, n_clients=30)
    plan = r.random((6, 11, 30))
    run = run_fedavg(data, rule, plan=plan)
    acc, counts = _fedavg_twin(data, rule, plan=plan)
    assert _same(run.accuracy, acc) and _same(run.counts, counts)


def test_fl_runs_read_back_from_the_shared_runs_are_the_computed_runs(tmp_path, monkeypatch):
    monkeypatch.delenv(RUN_STORE_ENV, raising=False)
    rules = [SelectionRule("subtrunc", lam=0.5)]

    def runs():
        fairness._CACHE.clear()
        return fairness.fl_runs_at(7, "synthetic", rules, n_seeds=2, n_rounds=3)[0]

    plain = runs()
    with share_runs(tmp_path):
        first, again = runs(), runs()
    for a, b, c in zip(plain, first, again, strict=True):
        assert a.metrics == b.metrics == c.metrics
        assert _same(a.accuracy, c.accuracy) and _same(a.counts, c.counts)
    fairness._CACHE.clear()


def test_proof_paths_read_back_from_the_shared_runs_are_the_computed_paths(tmp_path,
                                                                          monkeypatch):
    monkeypatch.delenv(RUN_STORE_ENV, raising=False)
    rng = np.random.default_rng(np.random.SeedSequence(11))
    kw = dict(n_points=2, n_paths=30, local_steps=3)

    def diffs():
        _proof_paths._CACHE.clear()
        return _proof_paths.proof_step_diffs(rng, **kw)

    plain = diffs()
    with share_runs(tmp_path):
        diffs()
        prob, step, again = diffs()
    assert step == plain[1] and prob.L == plain[0].L
    for name, (means, ses) in plain[2].items():
        assert _same(again[name][0], means) and _same(again[name][1], ses)
    _proof_paths._CACHE.clear()


def _numpy_losses_and_gradients(W, data, clients=None, reg=1e-3):
    """The softmax gradients in NumPy operations alone (the form the kernels replace)."""
    X = data.features if clients is None else data.features[clients]
    y = data.labels if clients is None else data.labels[clients]
    mask = data.mask if clients is None else data.mask[clients]
    W = np.asarray(W)
    probs = softmax_rows(X @ np.broadcast_to(W, (X.shape[0], *W.shape[-2:])))
    rows = np.arange(X.shape[0])[:, None], np.arange(X.shape[1])[None, :]
    count = mask.sum(axis=1)
    picked = probs[rows[0], rows[1], y]
    loss = -(np.log(np.maximum(picked, 1e-300)) * mask).sum(axis=1) / count
    loss += reg / 2 * (W ** 2).sum(axis=(-2, -1))
    probs[rows[0], rows[1], y] -= 1.0
    probs *= mask[..., None]
    return loss, np.swapaxes(X, 1, 2) @ probs / count[:, None, None] + reg * W


@pytest.mark.parametrize("source", ["synthetic", "digits"])
def test_compiled_softmax_steps_are_the_numpy_numbers(source):
    """The compiled row max, pairwise row sum, division, label and mask steps give NumPy's
    bits, for one shared model and for one model per client."""
    r = np.random.default_rng(3)
    data = make_federated_data(source, r)
    p = data.features.shape[2]
    for scale in (0.01, 1.0, 30.0):
        W = r.normal(size=(p, data.n_classes)) * scale
        for a, b in zip(client_losses_and_gradients(W, data),
                        _numpy_losses_and_gradients(W, data), strict=True):
            assert _same(a, b), scale
        sel = np.array([3, 17, 42, 99])
        many = r.normal(size=(sel.size, p, data.n_classes)) * scale
        assert _same(client_gradients(many, data, sel),
                     _numpy_losses_and_gradients(many, data, sel)[1])


@pytest.mark.parametrize("classes", [1, 3, 7, 8, 9, 10, 16, 17, 31, 64, 128])
def test_compiled_row_sums_are_numpy_pairwise_sums(classes):
    r = np.random.default_rng(classes)
    logits = r.normal(size=(20, 9, classes)) * 20
    labels = r.integers(classes, size=(20, 9))
    mask = (r.random((20, 9)) < 0.8).astype(float)
    picked = np.empty((20, 9))
    got = _fl_kernels.residuals(logits.copy(), labels, mask, picked)
    probs = softmax_rows(logits.copy())
    rows = np.arange(20)[:, None], np.arange(9)[None, :]
    assert _same(picked, probs[rows[0], rows[1], labels])
    probs[rows[0], rows[1], labels] -= 1.0
    assert _same(got, probs * mask[..., None])
    with pytest.raises(ValueError, match="logits"):
        _fl_kernels.residuals(np.zeros((1, 1, 129)), np.zeros((1, 1), dtype=np.int64),
                              np.ones((1, 1)))


def test_compiled_selected_means_are_the_numpy_masked_sums():
    """Lemma 1's per-rule mean of the selected clients' updates: the NumPy form's bits, on
    the client-major updates the round uses, signed zeros and all-unselected rows included."""
    r = np.random.default_rng(8)
    paths, n, d, k = 300, 20, 5, 5
    u = np.empty((n, paths, d)).transpose(1, 0, 2)
    u[...] = np.exp(3 * r.normal(size=(paths, n, d))) * r.choice([-1.0, 1.0], (paths, n, d))
    u[:5] = -0.0
    masks = r.random((4, paths, n)) < 0.25
    masks[:, :3] = False
    got = _mc_kernels.selected_means(u, masks, k, np.empty((4, paths, d)))
    for j in range(4):
        assert _same(got[j], (u * masks[j, :, :, None]).sum(axis=1) / k)
        assert _same(np.signbit(got[j]), np.signbit((u * masks[j, :, :, None]).sum(axis=1)))
