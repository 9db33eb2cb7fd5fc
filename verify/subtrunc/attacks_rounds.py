r"""Attack surfaces of SubTrunc's one-round bounds, Lemma 1 (eq. (27)) and Lemma 2 (eq. (44)
and its proof steps (56), (57), (59)), exact on client quadratics
(:mod:`verify.subtrunc.quadratic_rounds`): every expectation the bounds speak of is a closed
form of the local iterates' means and covariances, and the selection law is enumerated, so
each point's ratio is deterministic and a witness replays.

The space: n <= 16 planar clients :math:`f_i(w) = \frac12 (w - c_i)^\top A_i (w - c_i)` with
their own curvature axes and eigenvalues (scaled so L = 1; Lemma 2 allows indefinite
:math:`A_i`, Lemma 1's Assumption 2 asks :math:`f_i \ge 0`, so :math:`A_i \succeq 0` there),
heterogeneous minimizers :math:`c_i`, any :math:`w_k`, E <= 20 local steps,
:math:`\eta = s/(3LE)` with s up to 1.5 (s > 1 is outside :math:`\eta LE \le 1/3`: the
lemmas' own predicates reject it), Gaussian noise with :math:`E\|\xi\|^2 = \sigma^2` over nine
decades, split between each client's curvature axes. Lemma 1's selection: any budget
:math:`1 \le \kappa \le n`; the law a mixture of the uniform law on :math:`\kappa`-subsets
(enumerated, :func:`~verify.subtrunc.quadratic_rounds.uniform_law`) and one searched subset,
or the subset DivFL, SubTrunc (lam, b searched, the truncation) or UnionFL (U_t and mu
searched) selects with the library's greedy (r = n), or the law of their stochastic greedy,
eq. (17), with 1 <= r <= n, enumerated exactly
(:func:`~verify.subtrunc.quadratic_rounds.stochastic_greedy_law`; kappa capped so that at
most 100 partial selections are visited: every kappa up to n = 6, kappa <= 2 at n = 16);
Assumption 3's gamma is the exact :math:`\max_\tau E\|b_\tau\|^2` of that law, the smallest
the lemma admits. As
:math:`\eta \to 0` both sides of (27) tend to :math:`f(w_k)`, so Lemma 1's ratio tends to 1
there (the small-step limit, not a tight constant). Two reductions keep the space small
without losing worst cases: client minima :math:`f_i^* = 0` (a floor :math:`h \ge 0` adds
:math:`\bar h` to both sides of (27), moving the ratio towards 1), and a deterministic
:math:`w_k` (both sides are linear in the law of :math:`w_k` for a fixed gamma).
"""

from __future__ import annotations

import numpy as np

from flbounds.falsify import Box, Integers, attack_surface
from flbounds.selection import (
    FacilityLocation,
    SelectionRule,
    SubTruncObjective,
    UnionFLObjective,
    gradient_distances,
    phi_values,
    select_clients,
    window_union,
)

from .assumptions import gaussian_noise
from .lemma1 import lemma1_rhs
from .lemma2 import eq44_rhs
from .quadratic_rounds import (
    ClientQuadratics,
    average_gradient_moments,
    consensus,
    law_moments,
    local_moments,
    partial_selections,
    planar_clients,
    point_law,
    selected_round,
    stochastic_greedy_law,
    uniform_law,
)

N_MAX, E_MAX = 16, 20
EXACT = ("rounding: closed-form second moments, E <= 20 steps of 2 x 2 recursions and sums of "
         "<= 16^2 terms in float64, relative error < 1e-12")


def _clients(*, eig, angle, centers, noise_frac, sigma2, n):
    hessians, noise = planar_clients(np.asarray(eig)[:n], np.asarray(angle)[:n],
                                     np.asarray(noise_frac)[:n], sigma2)
    return ClientQuadratics(hessians, np.asarray(centers, dtype=float)[:n]), noise


def _step(step_frac, local_steps):
    """eta = s/(3 L E) with L = 1."""
    return step_frac / (3 * local_steps)


# ---- Lemma 2: eq. (44) and the proof steps (56), (57), (59) ----

def lemma2_sides(*, eig, angle, centers, w0, n, local_steps, step_frac, sigma2, noise_frac):
    """Everything Lemma 2's bounds compare, exactly: a dict of per-tau arrays and sums."""
    prob, noise = _clients(eig=eig, angle=angle, centers=centers, noise_frac=noise_frac,
                           sigma2=sigma2, n=n)
    E, step = int(local_steps), _step(step_frac, local_steps)
    mom = local_moments(prob, w0, step=step, local_steps=E, noise_covs=noise)
    u_mean, u_var = average_gradient_moments(mom)
    u_sq = np.sum(u_mean ** 2, axis=1) + u_var                   # E||u_t||^2, t = 0..E
    error = np.sum((u_mean[0] - u_mean) ** 2, axis=1) + u_var      # E||grad f(w_k) - u_t||^2
    local_sq = np.sum(mom.grad_means ** 2, axis=2) + mom.grad_vars  # E||grad f_i(w_t)||^2
    return dict(E=E, step=step, n=n, sigma2=sigma2, u_sq=u_sq, error=error,
                consensus=consensus(mom), local_sq=local_sq,
                grad_sq=float(np.sum(mom.grad_means[0] ** 2)))


def step56_rhs(*, step, tau, local_sq_sum, n, sigma2):
    """(56): eta^2 tau sum_i sum_{t<tau} (E||grad f_i(w_t)||^2 + sigma^2)."""
    return step ** 2 * tau * (local_sq_sum + n * tau * sigma2)


def step57_rhs(*, step, tau, grad_sq, n, sigma2):
    """(57): (9 eta^2 tau^2/8) sum_i (2 ||grad f_i(w_k)||^2 + sigma^2)."""
    return 9 * step ** 2 * tau ** 2 / 8 * (2 * grad_sq + n * sigma2)


def step59_rhs(*, step, L, tau, u_sq_sum, grad_sq, n, sigma2):
    """(59): 2 eta^2 L^2 tau sum_{t<tau} E||u_t||^2 + (9 eta^2 L^2 tau^2/(2n)) sum_i
    ||grad f_i(w_k)||^2 + eta^2 L^2 tau sigma^2 (2/n + 9 tau/4)."""
    c = step ** 2 * L ** 2
    return (2 * c * tau * u_sq_sum + 9 * c * tau ** 2 / (2 * n) * grad_sq
            + c * tau * sigma2 * (2 / n + 9 * tau / 4))


def _lemma2_instance(*, eig, angle, centers, w0, n, local_steps, step_frac, sigma2,
                     noise_frac):
    """The values Lemma 2's hypotheses read (A1 with L = 1, the noise, eta L E <= 1/3)."""
    prob, _ = _clients(eig=eig, angle=angle, centers=centers, noise_frac=noise_frac,
                       sigma2=sigma2, n=n)
    return dict(problem=prob, L=1.0, step=_step(step_frac, local_steps),
                local_steps=int(local_steps), **gaussian_noise(sigma2))


LEMMA2_SPACE = {"eig": Box(-1, 1, shape=(N_MAX, 2)), "angle": Box(0, np.pi, shape=N_MAX),
                "centers": Box(-3, 3, shape=(N_MAX, 2)), "w0": Box(-3, 3, shape=2),
                "n": Integers(1, N_MAX), "local_steps": Integers(1, E_MAX),
                "step_frac": Box(0.01, 1.5), "sigma2": Box(1e-6, 1e3, log=True),
                "noise_frac": Box(0, 1, shape=N_MAX)}


def _lemma2_point(n, local_steps, *, eig=(1.0, -1.0), centers=0.0, w0=(0.0, 0.0),
                  sigma2=1.0, noise_frac=1.0, spread=0.0):
    """A fixed point: clients sharing ``eig`` (the first client's scaled by ``1 - spread``
    steps), minimizers ``centers`` (a scalar or (n, 2)), at the step limit."""
    scale = 1 - spread * np.arange(N_MAX)[:, None] / N_MAX
    return {"eig": np.broadcast_to(eig, (N_MAX, 2)) * scale,
            "angle": np.linspace(0, np.pi / 2, N_MAX),
            "centers": np.broadcast_to(centers, (N_MAX, 2)), "w0": np.asarray(w0),
            "n": n, "local_steps": local_steps, "step_frac": 1.0, "sigma2": sigma2,
            "noise_frac": np.full(N_MAX, noise_frac)}


HETEROGENEOUS = np.stack([np.cos(np.arange(N_MAX)), np.sin(2.0 * np.arange(N_MAX))], -1) * 2
LEMMA2_FIXED = [_lemma2_point(1, 10, noise_frac=0.0), _lemma2_point(16, 10, sigma2=1e-3),
                _lemma2_point(16, 5, eig=(1.0, 0.3), centers=HETEROGENEOUS, w0=(1.0, -1.0),
                              spread=0.5, noise_frac=0.5)]
LEMMA2_NOTE = ("n <= 16 planar quadratics, indefinite allowed, heterogeneous minimizers and "
               "curvature axes, E <= 20, eta up to 1/(3 L E) (1.5 x rejected), sigma^2 over 9 "
               "decades split between the curvature axes; exact second moments")


def _lemma2_surface(claim_id, full, note=LEMMA2_NOTE):
    """The attack surface of one Lemma 2 bound: the shared space, fixed points, predicates;
    ``full`` evaluations in the full profile."""
    return attack_surface(claim_id, space=LEMMA2_SPACE, fixed=LEMMA2_FIXED,
                          instance=_lemma2_instance, tolerance=1e-12, tolerance_why=EXACT,
                          budget={"quick": 200, "full": full}, note=note)


# The full budgets: seeds 0 and 1 at 1500 evaluations each come within 1e-3 of their final
# best ratio from evaluation (seed 0 / seed 1) 9 / 363 (eq. (44), best 0.0956 / 0.0652),
# 24 / 80 ((56), 0.99998 / 0.99997), 1 / 1 ((57), 0.8333 both; (59), 0.2353 both); each
# budget is at least twice that.


@_lemma2_surface("subtrunc.lemma2.gradient_error", full=800)
def gradient_error(**point):
    """sum_tau E||grad f(w_k) - u_tau||^2 over eq. (44)'s right side."""
    s = lemma2_sides(**point)
    E = s["E"]
    rhs = eq44_rhs(step=s["step"], L=1.0, E=E, n=s["n"], u_sq=float(np.sum(s["u_sq"][:E])),
                   grad_sq=s["grad_sq"], sigma2=s["sigma2"])
    return float(np.sum(s["error"][:E])) / rhs


@_lemma2_surface("subtrunc.lemma2.proof_step_56", full=200)
def consensus_step(**point):
    """max over tau = 1..E of sum_i E||w^(i)_tau - w_bar_tau||^2 over (56)'s right side."""
    s = lemma2_sides(**point)
    taus = np.arange(1, s["E"] + 1)
    local_sums = np.cumsum(s["local_sq"][:-1].sum(axis=1))       # sum_i sum_{t<tau}
    rhs = step56_rhs(step=s["step"], tau=taus, local_sq_sum=local_sums, n=s["n"],
                     sigma2=s["sigma2"])
    return float(np.max(s["consensus"][1:] / rhs))


@_lemma2_surface("subtrunc.lemma2.proof_step_57", full=200)
def consensus_lemma3(**point):
    """max over tau = 1..E of sum_i E||w^(i)_tau - w_bar_tau||^2 over (57)'s right side."""
    s = lemma2_sides(**point)
    taus = np.arange(1, s["E"] + 1)
    rhs = step57_rhs(step=s["step"], tau=taus, grad_sq=s["grad_sq"], n=s["n"],
                     sigma2=s["sigma2"])
    return float(np.max(s["consensus"][1:] / rhs))


@_lemma2_surface("subtrunc.lemma2.proof_step_59", full=200,
                 note=LEMMA2_NOTE + "; tau = 0 (both sides 0) carries no ratio: E = 1 is "
                 "skipped (nan)")
def gradient_error_step(**point):
    """max over tau = 1..E-1 of E||grad f(w_k) - u_tau||^2 over (59)'s right side."""
    s = lemma2_sides(**point)
    if s["E"] < 2:
        return float("nan")
    taus = np.arange(1, s["E"])
    rhs = step59_rhs(step=s["step"], L=1.0, tau=taus, u_sq_sum=np.cumsum(s["u_sq"])[:-2],
                     grad_sq=s["grad_sq"], n=s["n"], sigma2=s["sigma2"])
    return float(np.max(s["error"][1:s["E"]] / rhs))


# ---- Lemma 1: eq. (27) with the selection law ----

RULE_NAMES = ("uniform/subset mixture", "DivFL", "SubTrunc", "UnionFL",
              "DivFL stochastic", "SubTrunc stochastic", "UnionFL stochastic")
#: most partial selections a stochastic-greedy law is enumerated over (kappa is capped so)
MAX_PARTIAL = 100


def _budget(k_frac, n, rule=0):
    """1 <= kappa <= n from a fraction (kappa = ceil(k_frac n), at least 1); for a
    stochastic-greedy rule at most the kappa whose law has <= MAX_PARTIAL partial selections
    (every kappa up to n = 6, kappa <= 3 at n = 9..13, <= 2 at n = 14..16)."""
    k = max(1, min(n, int(np.ceil(k_frac * n))))
    while rule >= 4 and k > 1 and partial_selections(n, k) > MAX_PARTIAL:
        k -= 1
    return k


def _objective(name, grads, losses, recent, *, lam, b, mu):
    """The set function a rule maximizes (as :func:`flbounds.selection.select_clients`)."""
    dissim = gradient_distances(grads)
    if name == "divfl":
        return FacilityLocation(dissim)
    if name == "subtrunc":
        return SubTruncObjective(dissim, phi_values(losses, "log1p"), lam=lam, b=b)
    return UnionFLObjective(dissim, recent, mu=mu)


def selection_law(prob, w0, *, n, k, rule, pick, mix, lam, b, mu, r_frac):
    """(pi, Pi) of the round's selection law (see the module docstring)."""
    if rule == 0:
        top = np.argsort(-np.asarray(pick)[:n], kind="stable")[:k]
        pi_u, Pi_u = uniform_law(n, k)
        pi_s, Pi_s = point_law(top, n)
        return mix * pi_u + (1 - mix) * pi_s, mix * Pi_u + (1 - mix) * Pi_s
    name = ("divfl", "subtrunc", "unionfl")[(rule - 1) % 3]
    W = np.broadcast_to(np.asarray(w0, dtype=float), (n, 2))
    grads, losses = prob.gradients(W), prob.values(W)
    history = [np.flatnonzero(np.asarray(pick)[:n] > 0.5)]
    if rule >= 4:
        f = _objective(name, grads, losses, window_union(history, n, 1), lam=float(lam),
                       b=float(b), mu=float(mu))
        return law_moments(*stochastic_greedy_law(f, k, max(1, int(np.ceil(r_frac * n)))))
    sel = SelectionRule(name, lam=float(lam), b=float(b), mu=float(mu), window=1,
                        sample_size=n)
    chosen = select_clients(sel, k=k, grads=grads, losses=losses,
                            data_fractions=np.full(n, 1 / n), history=history,
                            keys=np.zeros((k + 1, n)))
    return point_law(chosen, n)


def _key(point):
    return tuple((name, np.asarray(value).tobytes()) for name, value in sorted(point.items()))


_LAST: dict = {}


def lemma1_sides(**point):
    """(E f(w_{k+1}), eq. (27)'s right side at gamma = max_tau E||b_tau||^2, gamma, problem)."""
    f_next, gamma, prob = _round(**point)
    E = int(point["local_steps"])
    rhs = lemma1_rhs(prob, np.asarray(point["w0"], dtype=float), local_steps=E,
                     step=_step(point["step_frac"], E), sigma2=point["sigma2"], gamma=gamma)
    return f_next, rhs, gamma, prob


def _round(**point):
    """(E f(w_{k+1}), gamma, problem) of the round; the last point's are kept (the instance
    and the ratio of one point share them)."""
    key = _key(point)
    if _LAST.get("key") != key:
        _LAST.update(key=key, value=_exact_round(**point))
    return _LAST["value"]


def _exact_round(*, eig, angle, centers, w0, n, k_frac, local_steps, step_frac, sigma2,
                 noise_frac, rule, pick, mix, lam, b, mu, r_frac):
    prob, noise = _clients(eig=eig, angle=angle, centers=centers,
                           noise_frac=noise_frac, sigma2=sigma2, n=n)
    E, step, k = int(local_steps), _step(step_frac, local_steps), _budget(k_frac, n,
                                                                               int(rule))
    pi, Pi = selection_law(prob, w0, n=n, k=k, rule=int(rule), pick=pick, mix=mix, lam=lam,
                           b=b, mu=mu, r_frac=r_frac)
    mom = local_moments(prob, w0, step=step, local_steps=E, noise_covs=noise)
    f_next, bias_sq = selected_round(prob, mom, pi, Pi, k, sigma2)
    return f_next, float(bias_sq.max()), prob


def _lemma1_instance(**point):
    """The values Lemma 1's hypotheses read: A1 (L = 1), A2 (f_i >= 0: A_i PSD, minimum 0),
    A3 with the law's exact bias (gamma = bias_sq), the noise, eta L E <= 1/3."""
    _, gamma, prob = _round(**point)
    return dict(problem=prob, L=1.0, step=_step(point["step_frac"], point["local_steps"]),
                local_steps=int(point["local_steps"]), bias_sq=gamma, gamma=gamma,
                **gaussian_noise(point["sigma2"]))


LEMMA1_SPACE = dict(LEMMA2_SPACE, eig=Box(0, 1, shape=(N_MAX, 2)), k_frac=Box(0, 1),
                    rule=Integers(0, len(RULE_NAMES) - 1), pick=Box(0, 1, shape=N_MAX),
                    mix=Box(0, 1), lam=Box(0, 5), b=Box(0.05, 3),
                    mu=Box(0.01, 10, log=True), r_frac=Box(0, 1))


def _lemma1_point(n, k_frac, rule, local_steps, *, mix=1.0, **kw):
    point = _lemma2_point(n, local_steps, **kw)
    point["eig"] = np.abs(point["eig"])
    return dict(point, k_frac=k_frac, rule=rule, pick=np.linspace(1, 0, N_MAX), mix=mix,
                lam=1.0, b=1.1, mu=1.0, r_frac=0.5)


LEMMA1_FIXED = [
    _lemma1_point(16, 0.0, 0, 10, eig=(1.0, 0.0), w0=(1.0, 0.0)),
    _lemma1_point(2, 0.5, 0, 1, mix=0.0, eig=(1.0, 1.0), centers=HETEROGENEOUS,
                  sigma2=1e-6),
    _lemma1_point(8, 0.4, 1, 5, eig=(1.0, 0.3), centers=HETEROGENEOUS, spread=0.5),
    dict(_lemma1_point(8, 0.4, 2, 5, eig=(1.0, 0.3), centers=HETEROGENEOUS, spread=0.5),
         lam=5.0, b=3.0),
    dict(_lemma1_point(8, 0.4, 3, 5, eig=(1.0, 0.3), centers=HETEROGENEOUS, spread=0.5),
         pick=np.tile([1.0, 0.0], N_MAX // 2), mu=10.0),
    dict(_lemma1_point(6, 0.5, 5, 5, eig=(1.0, 0.3), centers=HETEROGENEOUS, spread=0.5),
         lam=5.0, b=3.0, r_frac=0.3)]


@attack_surface("subtrunc.lemma1.one_round", space=LEMMA1_SPACE, fixed=LEMMA1_FIXED,
                # full budget: seeds 0 and 1 at 1500 evaluations reach 0.9999730663 / 0.9999832582,
                # within 1e-3 of it from evaluation 67 / 102; 250 >= twice that
                budget={"quick": 200, "full": 250},
                instance=_lemma1_instance, tolerance=1e-12, tolerance_why=EXACT,
                note="n <= 16 convex planar quadratics (f_i >= 0), heterogeneous, E <= 20, eta "
                     "up to 1/(3 L E), sigma^2 over 9 decades, 1 <= kappa <= n; selection: "
                     "uniform kappa-subsets mixed with one searched subset, or DivFL, "
                     "SubTrunc (lam, b), UnionFL (U_t, mu) greedy (r = n) or the exact law "
                     "of their stochastic greedy (1 <= r <= n, kappa capped); gamma the exact "
                     "max_tau E||b_tau||^2 of the law")
def one_round(**point):
    """E f(w_{k+1}) over eq. (27)'s right side with gamma = max_tau E||b_tau||^2."""
    f_next, rhs, _, _ = lemma1_sides(**point)
    return float(f_next / rhs)
