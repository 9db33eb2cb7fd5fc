r"""SAFARI (Algorithm 1 of [000]): worst cases of its mixed client/server rounds.

A SAFARI round is, with probability :math:`q`, a FedAvg client round (each sampled client runs
:math:`K` local steps with :math:`\eta_c` from :math:`x_r`, the server averages) and otherwise
one server step :math:`x_{r+1} = x_r - \eta_s \nabla F(x_r)`. The expectation over the coin is
exact (a weighted sum over the two branches, or over the :math:`2^R` coin sequences).

What the classes express (and what they do not)
------------------------------------------------
The theorems carry additive floors from gradient noise (:math:`\sigma^2, \sigma_s^2`) and from
heterogeneity (:math:`\sigma_G^2`, uniform in :math:`x`); a PEP normalised by the initial
distance or gap computes a *rate*, so both SDPs here are the deterministic, homogeneous case
(:math:`\sigma = \sigma_s = \sigma_G = 0`, every client the same :math:`F`; then
:math:`\delta = \bar\delta = 0` and the sampled set does not matter), where each theorem reduces
to a pure rate that the PEP bounds over the whole class:

- :func:`safari_rate` (Theorem 5, strongly convex): the worst one-round
  :math:`E\|x_{r+1} - x^\star\|^2 / \|x_r - x^\star\|^2` over L-smooth mu-strongly convex
  :math:`F`, against the printed per-round factor :math:`1 - \bar\eta`,
  :math:`\bar\eta = 2\eta_s L\mu/(L+\mu)`, :math:`\eta_c = 4L\eta_s/(K(L+\mu))`. The theorem's
  per-round q-condition is a hypothesis on the state (through :math:`G_3 = \|\nabla F(x_r)\|^2`
  and :math:`G_4 = F(x_r) - F^\star` here); in the proof's linear form
  :math:`qN \le (1-q)D` it is linear in the Gram matrix and function values, so it is imposed
  as a constraint of the SDP: the supremum runs only over states meeting it.
- :func:`safari_nonconvex_rate` (Theorem 4): the worst
  :math:`\frac1R\sum_{r=1}^R E\|\nabla F(x_r)\|^2 / (F(x_0) - F^\star)` over L-smooth
  (non-convex) :math:`F`, against the printed :math:`2/(R\eta_s)` (with
  :math:`\delta = 0`). :math:`F^\star` is relaxed to a free scalar below every computed value
  (any instance meets it with its true infimum), so the SDP value is an *upper* bound on the
  class's worst case: "worst <= printed" certifies the printed bound. With
  :math:`\sigma_G = 0` the q-condition holds for every :math:`q` (its numerator is
  :math:`\le 0` once :math:`2L\eta_s \le 1/2`, checked).

Heterogeneous clients (:math:`\sigma_G > 0`) for Theorem 5 are in
:mod:`flbounds.pep.server_hetero` (:func:`~flbounds.pep.server_hetero.safari_hetero_rate`): the
right side is affine in :math:`(\|x_r - x^\star\|^2, \sigma_G^2)`, so the SDP normalises both
(:math:`\sigma_G^2 \le s`, Assumption 5 imposed at the evaluated points, a relaxation).
Theorem 4 with :math:`\sigma_G > 0` is not built: its q-condition bounds :math:`\sigma_G^2` by
:math:`G_1, G_2`, maxima over the rounds, so "q-condition holds" is a disjunction over the
rounds (not a convex constraint on the Gram matrix); the audit's min reading would be a
conjunction, expressible, but at :math:`N K 2^R` gradients, and the heterogeneous violation of
Theorem 4 (``safari.thm4.printed_bound``) lives in the :math:`\sigma_G` floor after
:math:`10^5` rounds, which no PEP of a few rounds reaches.

References
----------
[000] Server-assisted FL under incomplete client participation, Algorithm 1, Theorems 4-5,
Appendix A (eqs. (28), (50), (76)-(81)).
"""

from __future__ import annotations

from flbounds.validation import check_int, check_positive

from .anchor import anchored_minimizer, origin, zero
from .gd import check_class
from .result import WorstCase, make_result
from .rounds import gd_steps
from .sdp import solve, solve_first


def check_round_args(mu, L, q, local_steps, step_server, q_condition):
    """Validated ``(mu, L, q, K, step_server)`` of a strongly convex SAFARI round."""
    mu, L = check_class(mu, L)
    if not mu > 0:
        raise ValueError(f"mu must be > 0, got {mu}")
    q = _check_q(q)
    K = check_int(local_steps, "local_steps", minimum=1)
    step = check_positive(step_server, "step_server")
    if q_condition not in ("printed", "corrected", None):
        raise ValueError(f"q_condition must be 'printed', 'corrected' or None, got "
                         f"{q_condition!r}")
    return mu, L, q, K, step


def _check_q(q):
    q = float(q)
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must be in [0, 1], got {q}")
    return q


def thm5_steps(mu, L, local_steps, step_server):
    r"""(:math:`\eta_c`, :math:`\bar\eta`) Theorem 5 couples to :math:`\eta_s`."""
    eta_c = 4 * L * step_server / (local_steps * (L + mu))
    return eta_c, eta_c * local_steps * mu / 2


def q_condition_coefficients(mu, L, q, eta_bar, corrected=False):
    r"""Coefficients ``(a, b, d)`` of Theorem 5's q-condition in the proof's linear form.

    :math:`qN \le (1-q)D` with :math:`N = \alpha G_3 - 4G_4/\mu`, :math:`D = dG_3` is
    :math:`a G_3 - b G_4 \le 0` with :math:`a = q\alpha - (1-q)d`, :math:`b = 4q/\mu`; the proof
    also needs :math:`d > 0` (printed constants ``c = 4``, ``e = L + mu``; corrected ``16``,
    ``L mu``, as ``verify.safari.closed_forms.thm5_q_condition``).
    """
    c, e = (16.0, L * mu) if corrected else (4.0, L + mu)
    alpha = c * eta_bar / mu**2 * (1 + 30 * L * eta_bar / mu * (1 + 2 * L * eta_bar / mu))
    d = 1 / e - (L + mu) ** 2 * eta_bar / (4 * L**2 * mu**2)
    return q * alpha - (1 - q) * d, 4 * q / mu, d


def safari_rate(mu, L, q, local_steps, step_server, *, printed=None, q_condition="printed",
                drop_server_step=False) -> WorstCase:
    r"""Worst one-round :math:`E\|x_{r+1}-x^\star\|^2/\|x_r-x^\star\|^2` of SAFARI (Theorem 5).

    Parameters
    ----------
    mu, L : float
        ``0 < mu <= L``: :math:`F` (every client) L-smooth and mu-strongly convex.
    q : float
        Probability of a client round, in [0, 1].
    local_steps : int
        :math:`K \ge 1`.
    step_server : float
        :math:`\eta_s > 0`; the theorem asks :math:`\eta_s \le 2/(L+\mu)` (not enforced here:
        the claims record steps beyond it as outside the hypotheses).
    printed : float, optional
        The per-round factor to report beside the worst case (e.g. Theorem 5's
        :math:`1 - \bar\eta` with zero noise, zero heterogeneity,
        :math:`\|x_0 - x^\star\|^2 = 1`, R = 1); None: none.
    q_condition : {"printed", "corrected", None}
        Impose the per-round q-condition (proof's linear form, printed or corrected
        constants) on the state, or nothing.
    drop_server_step : bool
        A deliberately wrong round (server rounds leave :math:`x` unchanged), for the tests
        that show the tightness claim catches it.

    Returns
    -------
    WorstCase
        ``printed`` is the caller's ``printed``.
    """
    from PEPit import PEP
    from PEPit.functions import SmoothStronglyConvexFunction

    mu, L, q, K, step = check_round_args(mu, L, q, local_steps, step_server, q_condition)
    eta_c, eta_bar = thm5_steps(mu, L, K, step)
    problem = PEP()
    func = problem.declare_function(SmoothStronglyConvexFunction, mu=mu, L=L)
    x_star = anchored_minimizer([func])
    x = problem.set_initial_point()
    problem.set_initial_condition((x - x_star) ** 2 <= 1)
    grad = func.gradient(x)
    if q_condition is not None:
        a, b, _ = q_condition_coefficients(mu, L, q, eta_bar, q_condition == "corrected")
        problem.add_constraint(a * grad**2 - b * (func(x) - func(x_star)) <= 0)
    x_server = x if drop_server_step else x - step * grad
    metric = (1 - q) * (x_server - x_star) ** 2
    if q > 0:
        metric = metric + q * (gd_steps(func, x, eta_c, K) - x_star) ** 2
    problem.set_performance_metric(metric)
    return make_result(solve(problem), printed=printed,
                       metric="E||x_{r+1} - x*||^2 / ||x_r - x*||^2 (one SAFARI round)",
                       params=dict(mu=mu, L=L, q=q, local_steps=K, step_server=step,
                                   step_client=eta_c, eta_bar=eta_bar,
                                   q_condition=q_condition))


def thm4_q_condition_trivial(L, step_server):
    r"""With :math:`\sigma_G = 0` Theorem 4's q-condition reads :math:`qX \le (1-q)D` with
    :math:`X = -4G_2(1/(2K^2) - 2L\eta^p/K^2)` and :math:`D = (1 - L\eta_s)G_1`: it holds for
    every q and every trajectory iff :math:`2L\eta_s^p \le 1/2` and :math:`L\eta_s \le 1`, for
    the printed (p = 2) and the proof's (p = 1) power alike."""
    return 2 * L * step_server <= 0.5 and 2 * L * step_server**2 <= 0.5 and L * step_server <= 1


def safari_nonconvex_rate(L, q, local_steps, step_server, n_rounds, *, printed=None,
                          drop_server_step=False) -> WorstCase:
    r"""Worst :math:`\frac1R\sum_{r=1}^R E\|\nabla F(x_r)\|^2/(F(x_0)-F^\star)` of SAFARI
    (Theorem 4, :math:`\eta_c = 2\eta_s/K`) over L-smooth :math:`F`, exact over the
    :math:`2^R` coin sequences.

    Parameters
    ----------
    L : float
        Smoothness (> 0).
    q : float
        Probability of a client round, in [0, 1].
    local_steps : int
        :math:`K \ge 1`.
    step_server : float
        :math:`\eta_s > 0` (the theorem: :math:`\eta_s \le 1/(8\sqrt{30}L)`).
    n_rounds : int
        :math:`R \ge 1` (the SDP has :math:`\sim 2^R K` gradients: R <= 6 is quick).
    printed : float, optional
        The bound to report beside the worst case (e.g. Theorem 4's :math:`2/(R\eta_s)` with
        zero noise and heterogeneity, :math:`F(x_0) - F^\star = 1`); None: none.
    drop_server_step : bool
        Deliberately wrong round, for the tests.

    Returns
    -------
    WorstCase
        An upper bound on the class's worst case (module docstring); ``printed`` is the
        caller's ``printed``.
    """
    from PEPit import PEP, Expression
    from PEPit.functions import SmoothFunction

    L = check_positive(L, "L")
    q = _check_q(q)
    K = check_int(local_steps, "local_steps", minimum=1)
    step = check_positive(step_server, "step_server")
    R = check_int(n_rounds, "n_rounds", minimum=1)
    eta_c = 2 * step / K

    def build(pinned, scale):
        problem = PEP()
        func = problem.declare_function(SmoothFunction, L=L)
        # F* relaxed to a scalar (pinned at 0 by the shift symmetry, or free); the start at
        # the origin or free (translation symmetry, .anchor)
        f_low = zero() if pinned else Expression(is_leaf=True)
        x0 = origin() if pinned else problem.set_initial_point()
        problem.set_initial_condition(func(x0) - f_low <= scale)
        metric, visited = _coin_tree(func, x0, q, K, eta_c, step, R, drop_server_step)
        for point in visited:
            problem.add_constraint(f_low <= func(point))
        problem.set_performance_metric(metric)
        return problem

    # initial gap bounded by eta_s, not 1: gradients O(1) instead of O(1/sqrt(eta_s))
    # (flbounds.pep.sdp, 'Scale'); equivalent forms tried in order (solve_first)
    info = solve_first([(lambda: build(True, step), step), (lambda: build(False, step), step),
                        (lambda: build(True, step / 10), step / 10)])
    return make_result(info, printed=printed,
                       metric="(1/R) sum_{r=1}^R E||grad F(x_r)||^2 / (F(x_0) - F*)",
                       params=dict(L=L, q=q, local_steps=K, step_server=step, step_client=eta_c,
                                   n_rounds=R,
                                   q_condition_trivial=thm4_q_condition_trivial(L, step)))


def _coin_tree(func, x0, q, K, eta_c, step, R, drop_server_step):
    """(1/R) sum_r E||grad F(x_r)||^2 over every coin sequence, and every point visited. Each
    prefix of coins is expanded once, so a node's gradient is computed once."""
    metric, visited, level = None, [x0], [((), 1.0, x0)]
    for _ in range(R):
        children = []
        for coins, prob, x in level:
            for client, weight in ((True, q), (False, 1 - q)):
                if weight == 0.0:
                    continue
                children.append((coins + (client,), prob * weight,
                                 _round(func, x, client, K, eta_c, step, drop_server_step,
                                        visited)))
        for _, prob, x in children:
            term = (prob / R) * func.gradient(x) ** 2
            metric = term if metric is None else metric + term
        level = children
    return metric, visited


def _round(func, x, client, K, eta_c, step, drop_server_step, visited):
    """One round from ``x``: K local steps (client round) or one server step."""
    if client:
        for _ in range(K):
            x = x - eta_c * func.gradient(x)
            visited.append(x)
        return x
    if drop_server_step:
        return x
    x = x - step * func.gradient(x)
    visited.append(x)
    return x


__all__ = ["q_condition_coefficients", "safari_nonconvex_rate", "safari_rate",
           "thm4_q_condition_trivial", "thm5_steps"]
