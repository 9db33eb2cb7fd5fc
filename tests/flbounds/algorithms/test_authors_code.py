"""FedAU, MIFA, FedProx and FedNova against NumPy twins of their authors' code.

Each twin below follows the control flow of the authors' released code line by line (their
loops, their order of updates, their aggregation), with the training data replaced by a
gradient oracle of quadratic clients and the mini-batches by full batches (one batch per
epoch: a local epoch is one gradient step). Each test runs flbounds' algorithm on the twin's
own instance (its sampler or a fixed participation plan) and compares the iterates to
``AGREE``. Where the code departs from the method flbounds implements, the twin keeps the
code's behaviour and the test says how the two instances are matched; the departures are
listed in ``docs/guide/fl-vocabulary.md``.

Repositories read (``fetch`` of the newest snapshot):

- FedAU: ``github.com/IBM/fedau`` at 6e9cce9b2e568666b5c3e0fab8f092a539884d7b, ``main.py``
  (``-weighting adaptive``), ``model/model.py`` (plain ``torch.optim.SGD``).
- MIFA: ``github.com/hmgxr128/MIFA_code`` at c1099d97a3d47bd8ed94bb1daeb28d20a3b89aa4,
  ``src/trainers/fdu.py`` (``FDUTrainer``), ``src/optimizers/gd.py`` (``GD``,
  ``inverse_prop_decay_learning_rate``), ``src/models/worker.py`` (``local_train``).
- FedProx: ``github.com/litian96/FedProx`` at d2a4501f319f1594b732d88315c5ca1a72855f50,
  ``flearn/trainers/fedprox.py``, ``flearn/optimizer/pgd.py``
  (``PerturbedGradientDescent``), ``flearn/trainers/fedbase.py`` (``select_clients``,
  ``aggregate``).
- FedNova: ``github.com/JYWa/FedNova`` at 47b4e096dfb19dc43c728896fff335a5befb645d,
  ``distoptim/FedNova.py`` (``FedNova.step``, ``FedNova.average``), ``train_LocalSGD.py``
  (``weight_decay=1e-4``, ``update_learning_rate``).
"""

import numpy as np
import pytest

from flbounds.algorithms import aggregation, fedau, fedavg_family, fednova, fedprox, local_prox
from flbounds.algorithms import mifa as flb_mifa
from flbounds.problems import Quadratic, random_quadratics

#: the twins and flbounds evaluate the same float64 arithmetic in other orders (Python sums
#: against NumPy reductions, x + lr*mean(table) against x - mean(x - z)): a few roundings of
#: O(1) numbers per round, over <= 40 contractive rounds
AGREE = 1e-12
N, D = 6, 3


@pytest.fixture(scope="module")
def problem():
    return random_quadratics(np.random.default_rng(39), N, D, mu=0.5, L=2.0)


def _oracle(problem):
    """``grad(i, w)``: the gradient of client i (its full local data set) at w."""
    A, b = np.asarray(problem.A), np.asarray(problem.b)
    return lambda i, w: A[i] @ w - b[i]


# ------------------------------------------------------------------------------ FedAU


def ibm_fedau(grad, n_nodes, plan, lr, lr_global, iters_per_round, k_value, w0):
    """``main.py`` of IBM/fedau with ``-weighting adaptive``: nodes in order; a participant
    trains from ``w_global``, scales its update by the mean of its recorded intervals (none
    yet: unscaled) and then records ``not_participate + 1``; a non-participant counts and
    records ``k_value`` when the count reaches it; the sum of the (zero for non-participants)
    updates is divided by ``accumulated`` = every node, then ``w_global += lr_global * .``.
    The local step size stays ``lr`` (the code halves it from iteration 50000 on)."""
    w_global = np.array(w0, dtype=float)
    not_participate = [0] * n_nodes
    intervals = [[] for _ in range(n_nodes)]
    out, used = [w_global.copy()], []
    for mask in plan:
        accumulated, weights, w_accumulate = 0, np.full(n_nodes, np.nan), None
        for n in range(n_nodes):
            if mask[n]:
                w = w_global.copy()
                for _ in range(iters_per_round):
                    w = w - lr * grad(n, w)
                w_tmp = w - w_global
                if len(intervals[n]) > 0:
                    agg_weight = np.mean(intervals[n])
                    w_tmp = w_tmp * agg_weight
                    weights[n] = agg_weight
                else:
                    weights[n] = 1.0
                intervals[n].append(not_participate[n] + 1)
                not_participate[n] = 0
            else:
                not_participate[n] += 1
                if not_participate[n] >= k_value:
                    intervals[n].append(not_participate[n])
                    not_participate[n] = 0
                w_tmp = 0.0
            w_accumulate = w_tmp if accumulated == 0 else w_accumulate + w_tmp
            accumulated += 1
        w_global = w_global + lr_global * (w_accumulate / accumulated)
        out.append(w_global.copy())
        used.append(weights)
    return np.array(out), np.array(used)


def _bernoulli_plan(seed, rounds, p):
    return np.random.default_rng(seed).random((rounds, N)) < p


@pytest.mark.parametrize("k_value", [3, 100000])
def test_fedau_is_the_authors_code(problem, k_value):
    """Heterogeneous Bernoulli participation, a cut-off that binds (K = 3) and the code's
    default (K = 100000, never reached); the weights round r uses are flbounds' row r."""
    plan = _bernoulli_plan(1, 40, np.linspace(0.15, 0.8, N))
    want, used = ibm_fedau(_oracle(problem), N, plan, 0.1, 1.7, 3, k_value, np.zeros(D))
    got = fedau(problem, plan, step=0.1, local_steps=3, server_step=1.7,
                max_interval=k_value)
    np.testing.assert_allclose(got.x, want, rtol=0, atol=AGREE)
    # a running mean against np.mean of the list: the same weights to a rounding
    np.testing.assert_allclose(got.omega[:-1][plan], used[plan], rtol=1e-15)


def test_fedau_current_round_weights_are_not_the_authors_code(problem):
    """The other reading (round r's own interval counted in its weight) differs from the code
    on the same instance: the check above can fail."""
    plan = _bernoulli_plan(1, 40, np.linspace(0.15, 0.8, N))
    want, _ = ibm_fedau(_oracle(problem), N, plan, 0.1, 1.7, 3, 3, np.zeros(D))
    got = fedau(problem, plan, step=0.1, local_steps=3, server_step=1.7, max_interval=3,
                weights_from="current")
    assert np.abs(got.x - want).max() > 1e3 * AGREE


# ------------------------------------------------------------------------------- MIFA


def gu_mifa(grad, n_clients, plan, lr0, local_step, w0):
    """``FDUTrainer.train`` of hmgxr128/MIFA_code: until every client has been available
    once, nothing is trained; in that round the table is filled with every client's update
    ``(1/lr)(soln - latest)`` (all N clients, from the initial model); afterwards each round
    refreshes the table for the available clients, steps ``latest += lr * sum(table) / N``
    and decays ``lr = lr0 / (truth_round + 2)`` (``inverse_prop_decay_learning_rate``).
    Returns the models after the training rounds and the final table."""
    latest = np.array(w0, dtype=float)
    lr, truth_round, initialized, seen = lr0, 0, False, set()
    table, out = [], []

    def local_train(i):
        w = latest.copy()
        for _ in range(local_step):  # K epochs of one full batch
            w = w - lr * grad(i, w)
        return w

    for mask in plan:
        selected = np.flatnonzero(mask)
        if initialized:
            solns = [local_train(c) for c in selected]
            for idx, c in enumerate(selected):
                table[c] = 1 / lr * (solns[idx] - latest)
            latest = latest + lr * sum(table) / n_clients
            lr = lr0 / (truth_round + 1 + 1)
            out.append(latest.copy())
            truth_round += 1
        else:
            seen |= set(selected.tolist())
            if len(seen) == n_clients:
                initialized = True
                table = [1 / lr * (local_train(i) - latest) for i in range(n_clients)]
    return np.array(out), np.array(table)


def test_mifa_is_the_authors_code(problem):
    """The code's instance: every client available in round 0 (its initialization round),
    then Bernoulli availability. The code's first training round recomputes, for the
    available clients, the same updates at the initial model the table holds, so it is
    flbounds' full round 0; code round t >= 1 (step lr0 / (t + 1)) is flbounds' round t on
    the code's availability row t + 1."""
    tau, lr0, rounds = 3, 0.3, 30
    plan = _bernoulli_plan(2, rounds + 1, np.linspace(0.2, 0.7, N))
    plan[0] = True
    want, table = gu_mifa(_oracle(problem), N, plan, lr0, tau, np.zeros(D))
    ours = np.vstack([np.ones(N, dtype=bool), plan[2:]])
    got = flb_mifa(problem, ours, step=lr0 / (1.0 + np.arange(rounds)), local_steps=tau)
    np.testing.assert_allclose(got.x[1:], want, rtol=0, atol=AGREE)
    # the code's table holds (z - x) / eta = -tau G_i
    np.testing.assert_allclose(-tau * got.memory, table, rtol=0, atol=AGREE)


# ----------------------------------------------------------------------------- FedProx


def li_fedprox(grad, n_samples, rounds, clients_per_round, lr, mu, num_epochs, w0):
    """``Server.train`` of litian96/FedProx (``drop_percent = 0``: every selected device runs
    ``num_epochs``): ``select_clients`` draws ``clients_per_round`` devices uniformly
    without replacement from a generator seeded by the round; each runs the PGD optimizer,
    ``var -= lr * (grad + mu * (var - vstar))`` with ``vstar`` the latest model, one full
    batch per epoch; ``aggregate`` averages the solutions weighted by the devices' sample
    counts. Returns the models and the selections (the plan)."""
    latest = np.array(w0, dtype=float)
    out, plan = [latest.copy()], []
    n_clients = len(n_samples)
    for i in range(rounds):
        # np.random.seed(round); np.random.choice(...) with a generator of its own
        indices = np.random.RandomState(i).choice(range(n_clients), clients_per_round,
                                                  replace=False)
        vstar = latest.copy()
        csolns = []
        for c in indices:
            var = latest.copy()
            for _ in range(num_epochs):
                var = var - lr * (grad(c, var) + mu * (var - vstar))
            csolns.append((n_samples[c], var))
        total_weight, base = 0.0, np.zeros_like(latest)
        for w, soln in csolns:
            total_weight += w
            base = base + w * soln
        latest = base / total_weight
        out.append(latest.copy())
        mask = np.zeros(n_clients, dtype=bool)
        mask[indices] = True
        plan.append(mask)
    return np.array(out), np.array(plan)


def test_fedprox_is_the_authors_code(problem):
    """Unequal sample counts: flbounds' FedAvg-family round with the proximal step and
    sample-count aggregation; equal counts: the code's weighted average is the plain mean and
    ``fedprox`` (Algorithm 2's average) matches too."""
    grad, n_samples = _oracle(problem), np.array([50, 120, 35, 80, 200, 65])
    want, plan = li_fedprox(grad, n_samples, 25, 3, 0.1, 0.4, 4, np.zeros(D))
    got = fedavg_family(problem, plan, local_prox(0.4), step=0.1, local_steps=4,
                        aggregation=aggregation.sample_counts(n_samples))
    np.testing.assert_allclose(got.x, want, rtol=0, atol=AGREE)
    equal, plan = li_fedprox(grad, np.full(N, 70), 25, 3, 0.1, 0.4, 4, np.zeros(D))
    np.testing.assert_allclose(fedprox(problem, plan, step=0.1, local_steps=4, mu=0.4).x,
                               equal, rtol=0, atol=AGREE)
    # the code's weighting is not the plain mean once the counts differ
    assert np.abs(fedprox(problem, plan, step=0.1, local_steps=4, mu=0.4).x - want).max() \
        > 1e3 * AGREE


# ----------------------------------------------------------------------------- FedNova


def jywa_fednova(grad, ratios, taus, rounds, lr_target, w0, *, weight_decay=1e-4, mu=0.0,
                 momentum=0.0, nesterov=False, gmf=0.0):
    """``FedNova.step`` / ``FedNova.average`` of JYWa/FedNova (dampening 0), all clients every
    round (one process each), client i running ``taus[i]`` steps (local epochs times its
    batches). A step adds ``weight_decay * p`` to the gradient, applies the momentum buffer
    (``buf = d_p`` at the first step, then ``momentum * buf + d_p``; Nesterov ``d_p +
    momentum * buf``), then adds ``mu (p - old_init)``, accumulates ``cum_grad += lr d_p`` and
    counts the normalizing vector ``a_i`` (``local_counter``, ``local_normalizing_vec``);
    ``average`` all-reduces ``tau_eff`` (``sum ratio_i local_steps_i`` if ``mu`` else ``sum
    ratio_i a_i``) and ``sum_i ratio_i (tau_eff / a_i) cum_grad_i``, and moves ``old_init``
    by it (or, with ``gmf``, by ``lr`` times the global buffer ``gmf buf + reduced / lr``, first
    ``reduced / lr``); the local buffers are zeroed. ``update_learning_rate``: lr / 10 from
    round R / 2, lr / 100 from 3R / 4."""
    old_init = np.array(w0, dtype=float)
    out, lr, global_buf = [old_init.copy()], lr_target, None
    for rnd in range(rounds):
        if rnd == int(rounds / 2):
            lr = lr_target / 10
        if rnd == int(rounds * 0.75):
            lr = lr_target / 100
        cum, vecs, steps = [], [], []
        for i, tau in enumerate(taus):
            p, cum_grad, vec, local_steps = old_init.copy(), np.zeros_like(old_init), 0.0, 0
            counter, buf = 0.0, None
            for _ in range(tau):
                d_p = grad(i, p) + weight_decay * p
                if momentum != 0:
                    buf = d_p.copy() if buf is None else buf * momentum + d_p
                    d_p = d_p + momentum * buf if nesterov else buf
                if mu != 0:
                    d_p = d_p + mu * (p - old_init)
                cum_grad = cum_grad + lr * d_p
                p = p - lr * d_p
                if momentum != 0:
                    counter = counter * momentum + 1
                    vec += counter
                etamu = lr * mu
                if etamu != 0:
                    vec = vec * (1 - etamu) + 1
                if momentum == 0 and etamu == 0:
                    vec += 1
                local_steps += 1
            cum.append(cum_grad)
            vecs.append(vec)
            steps.append(local_steps)
        tau_eff = sum((steps[i] if mu != 0 else vecs[i]) * ratios[i] for i in range(len(taus)))
        reduced = sum(cum[i] * (ratios[i] * (tau_eff / vecs[i])) for i in range(len(taus)))
        if gmf != 0:
            global_buf = reduced / lr if global_buf is None else gmf * global_buf + reduced / lr
            old_init = old_init - lr * global_buf
        else:
            old_init = old_init - reduced
        out.append(old_init.copy())
    return np.array(out)


def test_fednova_is_the_authors_code(problem):
    """Unequal data ratios and local steps, the script's weight decay 1e-4 (an L2 term: the
    clients A_i + 1e-4 I for flbounds) and its step decay; full participation."""
    rng = np.random.default_rng(3)
    counts = rng.integers(20, 200, N)
    ratios = counts / counts.sum()
    taus = np.array([2, 5, 3, 8, 1, 4])
    want = jywa_fednova(_oracle(problem), ratios, taus, 24, 0.2, np.zeros(D))
    decayed = Quadratic(np.asarray(problem.A) + 1e-4 * np.eye(D), problem.b, weights=ratios)
    steps = np.where(np.arange(24) < 12, 0.2, np.where(np.arange(24) < 18, 0.02, 0.002))
    got = fednova(decayed, np.ones((24, N), dtype=bool), step=steps, local_steps=taus)
    np.testing.assert_allclose(got.x, want, rtol=0, atol=AGREE)
    np.testing.assert_allclose(got.tau_eff, np.full(24, ratios @ taus), rtol=1e-15)


@pytest.mark.parametrize("variant", [
    dict(momentum=0.9), dict(momentum=0.5, nesterov=True), dict(mu=0.3),
    dict(momentum=0.6, mu=0.2), dict(gmf=0.7), dict(momentum=0.8, gmf=0.5, mu=0.1)])
def test_fednova_variants_are_the_authors_code(problem, variant):
    """Local momentum (heavy ball and Nesterov), the proximal term, their combination and the
    server momentum ``gmf`` on the same instance as above; the normalizers and tau_eff follow
    the code's recurrences."""
    rng = np.random.default_rng(4)
    counts = rng.integers(20, 200, N)
    ratios = counts / counts.sum()
    taus = np.array([2, 5, 3, 8, 1, 4])
    want = jywa_fednova(_oracle(problem), ratios, taus, 24, 0.1, np.ones(D), **variant)
    decayed = Quadratic(np.asarray(problem.A) + 1e-4 * np.eye(D), problem.b, weights=ratios)
    steps = np.where(np.arange(24) < 12, 0.1, np.where(np.arange(24) < 18, 0.01, 0.001))
    names = dict(mu="prox", gmf="server_momentum")
    got = fednova(decayed, np.ones((24, N), dtype=bool), step=steps, local_steps=taus,
                  x0=np.ones(D), **{names.get(k, k): v for k, v in variant.items()})
    np.testing.assert_allclose(got.x, want, rtol=0, atol=AGREE)
    plain = fednova(decayed, np.ones((24, N), dtype=bool), step=steps, local_steps=taus,
                    x0=np.ones(D))
    assert np.abs(plain.x - want).max() > 1e3 * AGREE     # the variant changes the iterates


def test_fednova_variant_arguments_are_checked(problem):
    plan = np.ones((3, N), dtype=bool)
    for kwargs, name in ((dict(momentum=1.0), "momentum"), (dict(momentum=-0.1), "momentum"),
                         (dict(server_momentum=1.5), "server_momentum"),
                         (dict(prox=-1.0), "prox"), (dict(prox=20.0), "prox"),
                         (dict(nesterov=True), "nesterov")):
        with pytest.raises(ValueError, match=name):
            fednova(problem, plan, step=0.1, local_steps=2, **kwargs)
