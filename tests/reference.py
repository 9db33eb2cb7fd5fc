"""Slow pure-NumPy twins of the numba kernels in ``flbounds.kernels``.

Each twin takes the same data as its kernel (minus ``out``) and returns the result.
"""

import numpy as np
from scipy.special import expit


def quadratic_losses(A, b, X, clients):
    A, b = A[clients], b[clients]
    return 0.5 * np.einsum("jp,jpq,jq->j", X, A, X) - np.einsum("jp,jp->j", b, X)


def quadratic_gradients(A, b, X, clients):
    return np.einsum("jpq,jq->jp", A[clients], X) - b[clients]


def _residuals(features, targets, X, clients):
    return np.einsum("jkp,jp->jk", features[clients], X) - targets[clients]


def ridge_losses(features, targets, lam, X, clients):
    r = _residuals(features, targets, X, clients)
    return 0.5 * np.mean(r**2, axis=1) + 0.5 * lam * np.sum(X**2, axis=1)


def ridge_gradients(features, targets, lam, X, clients):
    r = _residuals(features, targets, X, clients)
    n = features.shape[1]
    return np.einsum("jkp,jk->jp", features[clients], r) / n + lam * X


def _margins(features, labels, X, clients):
    return labels[clients] * np.einsum("jkp,jp->jk", features[clients], X)


def logistic_losses(features, labels, lam, rho, X, clients):
    m = _margins(features, labels, X, clients)
    penalty = np.sum(X**2 / (1.0 + X**2), axis=1)
    return np.logaddexp(0.0, -m).mean(axis=1) + 0.5 * lam * np.sum(X**2, axis=1) + rho * penalty


def logistic_gradients(features, labels, lam, rho, X, clients):
    m = _margins(features, labels, X, clients)
    weights = -labels[clients] * expit(-m) / features.shape[1]
    data = np.einsum("jkp,jk->jp", features[clients], weights)
    return data + lam * X + 2.0 * rho * X / (1.0 + X**2) ** 2


def scalar_pl_losses(c, X, clients):
    x = X[:, 0]
    return x**2 + 3.0 * np.sin(x) ** 2 + c[clients] * x


def scalar_pl_gradients(c, X, clients):
    x = X[:, 0]
    return (2.0 * x + 6.0 * np.sin(x) * np.cos(x) + c[clients])[:, None]


# ------------------------------------------------------------------ algorithm twins
# Per-participant NumPy loops over ``problem.client_gradients``, written from the papers'
# pseudocode independently of the compiled round loops.


def fedavg(problem, plan, step, local_steps, x0):
    """FedAvg ([002] (2a)-(2c)): participants run GD from x, the server averages; an empty
    round leaves x unchanged. Returns the server iterates (R + 1, d)."""
    xs = [np.array(x0, dtype=float)]
    for mask in plan:
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            xs.append(xs[-1].copy())
            continue
        Z = np.tile(xs[-1], (idx.size, 1))
        for _ in range(local_steps):
            Z = Z - step * problem.client_gradients(Z, clients=idx)
        xs.append(Z.mean(axis=0))
    return np.array(xs)



def fedavg_uniform_isp(problem, uniforms, budget, step, local_steps, server_step, x0):
    """FedAvg with a uniform ISP sampler ([003] Algorithm 1, lambda = 1/N): client i joins
    round t iff ``uniforms[t, i] < K/N``; x <- x - server_step * sum_S (x - x_i) / (N K/N).
    ``step``: a number or one local step per round (T,). Returns the server iterates
    (T + 1, d)."""
    n = problem.n_clients
    prob = budget / n
    xs = [np.array(x0, dtype=float)]
    for t, row in enumerate(uniforms):
        idx = np.flatnonzero(row < prob)
        x = xs[-1]
        Z = np.tile(x, (idx.size, 1))
        eta = step[t] if np.ndim(step) else step
        for _ in range(local_steps):
            Z = Z - eta * problem.client_gradients(Z, clients=idx)
        xs.append(x - server_step * ((x - Z) / n).sum(axis=0) / prob)
    return np.array(xs)

def focus(problem, plan, step, local_steps, x0, noise=None, g0=None):
    """FOCUS / SG-FOCUS (Algorithms 1-2 of [002]) as printed: the push is accumulated step by
    step, v <- v + h_t - g_i, g_i <- h_t. Returns (xs, ys, g) with g the final memory."""
    n, d = problem.n_clients, problem.dim
    g = np.zeros((n, d)) if g0 is None else np.array(g0, dtype=float)
    x, y = np.array(x0, dtype=float), g.sum(axis=0)
    xs, ys = [x.copy()], [y.copy()]
    for r, mask in enumerate(plan):
        push = np.zeros(d)
        for i in np.flatnonzero(mask):
            z, v = x.copy(), np.zeros(d)
            for t in range(local_steps):
                if t > 0:
                    z = z - step * v
                h = problem.client_gradients(z[None], clients=[i])[0]
                if noise is not None:
                    h = h + noise[r, i, t]
                v = v + h - g[i]
                g[i] = h
            push += v
        y = y + push
        x = x - step * y
        xs.append(x.copy())
        ys.append(y.copy())
    return np.array(xs), np.array(ys), g


def safari(problem, plan, step_client, step_server, x0):
    """SAFARI (Algorithm 1 of [000]): a FedAvg local-SGD round on client rounds, one server SGD
    step on F otherwise. Returns (xs, local_grad_norm2) as the algorithm's trace."""
    x = np.array(x0, dtype=float)
    xs, g2 = [x.copy()], []
    for r in range(len(plan.client_round)):
        if plan.client_round[r]:
            ends, gsum = [], np.zeros_like(x)
            for c, i in enumerate(plan.clients[r]):
                z = x.copy()
                for k in range(plan.client_noise.shape[2]):
                    grad = problem.client_gradients(z[None], clients=[i])[0]
                    gsum += grad
                    z = z - step_client * (grad + plan.client_noise[r, c, k])
                ends.append(z)
            x = np.mean(ends, axis=0)
            g2.append(float(np.sum((gsum / len(ends)) ** 2)))
        else:
            x = x - step_server * (problem.gradient(x) + plan.server_noise[r])
            g2.append(np.nan)
        xs.append(x.copy())
    return np.array(xs), np.array(g2)


def safari_plan(rng, *, n_rounds, q, eligible, n_sampled, local_steps, dim, client_noise_std,
                server_noise_std):
    """SAFARI's plan as the papers' setting reads, straight from ``rng``: keys for a uniform
    m-subset of ``eligible`` per round, the client noises, the server noises, then the coins
    (the order :func:`flbounds.algorithms.safari_plan` promises)."""
    keys = rng.random((n_rounds, len(eligible)))
    clients = np.asarray(eligible)[np.argsort(keys, axis=1)[:, :n_sampled]]
    client_noise = rng.standard_normal((n_rounds, n_sampled, local_steps, dim)) * (
        client_noise_std / np.sqrt(dim))
    server_noise = rng.standard_normal((n_rounds, dim)) * (server_noise_std / np.sqrt(dim))
    coins = rng.random(n_rounds) < q
    return coins, clients, client_noise, server_noise


# ------------------------------------------------------------------ baselines with state
# One participant at a time, from the papers' algorithms.


def _local(problem, x, i, steps_here, direction=None):
    """GD from x on client i with the given steps; ``direction(z)`` overrides the gradient."""
    z = np.array(x, dtype=float)
    for eta in steps_here:
        g = problem.client_gradients(z[None], clients=[i])[0]
        z = z - eta * (g if direction is None else direction(z, g))
    return z


def fedau(problem, plan, steps, local_steps, server_step, max_interval, x0):
    """FedAU (Wang and Ji, ICLR 2024, Algorithm 1): omega_i the running mean of the closed
    participation intervals (cut at max_interval), x += eta_g / N sum_S omega_i Delta_i.
    Returns (xs, omegas)."""
    n = problem.n_clients
    x = np.array(x0, dtype=float)
    intervals = [[] for _ in range(n)]
    running = np.zeros(n, dtype=int)
    omega = np.ones(n)
    xs, omegas = [x.copy()], [omega.copy()]
    for r, mask in enumerate(plan):
        for i in range(n):
            running[i] += 1
            if mask[i] or running[i] == max_interval:
                intervals[i].append(running[i])
                running[i] = 0
                omega[i] = np.mean(intervals[i])
        step_sum = np.zeros_like(x)
        for i in np.flatnonzero(mask):
            step_sum += omega[i] * (_local(problem, x, i, [steps[r]] * local_steps) - x)
        x = x + server_step * step_sum / n
        xs.append(x.copy())
        omegas.append(omega.copy())
    return np.array(xs), np.array(omegas)


def mifa(problem, plan, steps, local_steps, x0):
    """MIFA (Gu et al., NeurIPS 2021, Algorithm 1): G_i <- (x - z_i) / (eta_t K) for the
    participants, x <- x - eta_t mean_i G_i. Returns (xs, final G)."""
    n = problem.n_clients
    x = np.array(x0, dtype=float)
    G = np.zeros((n, x.size))
    xs = [x.copy()]
    for r, mask in enumerate(plan):
        for i in np.flatnonzero(mask):
            G[i] = (x - _local(problem, x, i, [steps[r]] * local_steps)) / (steps[r] * local_steps)
        x = x - steps[r] * local_steps * G.mean(axis=0)
        xs.append(x.copy())
    return np.array(xs), G


def _proximal(mu, anchor):
    return lambda z, g: g + mu * (z - anchor)


def fedprox(problem, plan, steps, local_steps, mu, x0):
    """FedProx (Li et al., MLSys 2020, Algorithm 2) with tau GD steps on
    f_i(z) + mu/2 |z - x|^2, plain average. Returns xs."""
    x = np.array(x0, dtype=float)
    xs = [x.copy()]
    for r, mask in enumerate(plan):
        idx = np.flatnonzero(mask)
        if idx.size:
            ends = [_local(problem, x, i, [steps[r]] * local_steps, _proximal(mu, x.copy()))
                    for i in idx]
            x = np.mean(ends, axis=0)
        xs.append(x.copy())
    return np.array(xs)


def fednova(problem, plan, steps, taus, server_step, x0):
    """FedNova (Wang et al., NeurIPS 2020): d_i = (x - z_i) / (eta tau_i), weights p_i
    normalized over S, x <- x - eta_g eta tau_eff sum_S w_i d_i. Returns (xs, tau_eff)."""
    p = problem.weights
    x = np.array(x0, dtype=float)
    xs, effs = [x.copy()], []
    for r, mask in enumerate(plan):
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            xs.append(x.copy())
            effs.append(np.nan)
            continue
        w = p[idx] / p[idx].sum()
        d = [(x - _local(problem, x, i, [steps[r]] * taus[i])) / (steps[r] * taus[i])
             for i in idx]
        eff = float(w @ taus[idx])
        x = x - server_step * steps[r] * eff * (w @ np.array(d))
        xs.append(x.copy())
        effs.append(eff)
    return np.array(xs), np.array(effs)


def fedavg_momentum(problem, plan, steps, local_steps, beta, server_step, x0):
    """FedAvg whose clients take heavy-ball local steps m_i <- beta m_i + g, z <- z - eta m_i,
    keeping m_i across rounds; x <- x + eta_g (mean_S z_i - x). Returns (xs, final m)."""
    x = np.array(x0, dtype=float)
    m = np.zeros((problem.n_clients, x.size))
    xs = [x.copy()]
    for r, mask in enumerate(plan):
        idx = np.flatnonzero(mask)
        if idx.size:
            ends = []
            for i in idx:
                z = x.copy()
                for _ in range(local_steps):
                    m[i] = beta * m[i] + problem.client_gradients(z[None], clients=[i])[0]
                    z = z - steps[r] * m[i]
                ends.append(z)
            x = x + server_step * (np.mean(ends, axis=0) - x)
        xs.append(x.copy())
    return np.array(xs), m
