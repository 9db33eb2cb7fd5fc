r"""K-Vib Theorem 4.1: gaps between the statement and its App. C.2 proof (K-Vib; spec section 6
items 7 and 8, audit part B).

Notation of the proof: :math:`\eta=R\eta_l\eta_g`, :math:`\sigma^2=\sigma_l^2/R+6\sigma_g^2`
(eq. 32), :math:`\gamma^t=(\alpha_*^t\frac{N-K}K+N)W` (Def. C.1), and the averaged descent
inequality that the last step tunes,

.. math::
    \rho\min_t\mathbb E\|\nabla f(x^t)\|^2\le\Psi(\eta)=\frac{r_0}{T\eta}+b\eta+e\eta^2,\quad
    r_0=2M,\ b=\beta_1+\tfrac54L\sigma^2,\ e=\tfrac58\sigma^2\beta_2,\ \eta\le\tfrac1{8L}.

Each printed slip is a ``proof-step`` claim with a computed counterexample; the corrected step
is its companion. None of these slips is shown to falsify the O-statement of Theorem 4.1 (its
constants are absorbed by the O), except that the printed exponent of
:math:`\sigma^2\beta_2` is not what the proof gives. The step
":math:`10RL^2\eta_l^2` dominates :math:`2/R`" is ``kvib.thm4_1.proof_drops_2_over_r``; the
summed eq. (36) on FL runs is ``kvib.thm4_1.descent_chain``.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from scipy.optimize import minimize_scalar

from flbounds.algorithms.fedavg_sampler import local_updates
from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.problems import Quadratic
from flbounds.sampling import optimal_factor

from . import THM4_1, admissible_instance, thm41_rhs

# ----------------------------------------------------------------------------- helpers


def _psi_min(r0: float, b: float, e: float, T: float, eta_max: float) -> float:
    r""":math:`\min_{0<\eta\le\eta_{\max}}\Psi(\eta)` by Brent's bounded search in
    :math:`u=\log\eta` on [-120, min(log eta_max, 120)] (Psi is convex in u)."""
    def psi(log_eta):
        eta = np.exp(log_eta)
        return r0 / (T * eta) + b * eta + e * eta * eta
    top = min(np.log(eta_max), 120.0)
    res = minimize_scalar(psi, bounds=(-120.0, top), method="bounded", options={"xatol": 1e-12})
    return float(min(res.fun, psi(top)))


def _sampling_term_exponents():
    r"""Exponents of :math:`s=\sigma^2\beta_2`, M and T in :math:`\min_\eta(2M/(T\eta)+e\eta^2)`,
    :math:`e=5s/8`, derived with sympy (stationary point, then d log / d log)."""
    M, T, s, eta = sp.symbols("M T s eta", positive=True)
    psi = 2 * M / (T * eta) + sp.Rational(5, 8) * s * eta**2
    eta_star = sp.solve(sp.diff(psi, eta), eta)[0]
    value = sp.simplify(psi.subs(eta, eta_star))
    exps = [sp.simplify(sp.diff(sp.log(value), v) * v) for v in (s, M, T)]
    return value, [sp.nsimplify(x) for x in exps]


# ----------------------------------------------------------------------------- item 7


@claim("kvib.thm4_1.sampling_term_exponent_printed", ref="Thm 4.1, eq. (7) vs App. C.2 last step",
       kind="proof-step", expected="violated", result=THM4_1, parts=("sampling_term",),
       statement="The proof's last step (Lemma B.5 tuning of eta) yields the statement's term "
                 "O((M (sigma^2 beta_2)^2 / T)^{2/3}), i.e. exponent 4/3 of sigma^2 beta_2.",
       quick=dict(n_grid=5), full=dict(n_grid=21))
def sampling_term_exponent_printed(*, rng, n_grid):
    r"""The printed Sampling-Utility term :math:`O((M(\sigma^2\beta_2)^2/T)^{2/3})` scales like
    :math:`(\sigma^2\beta_2)^{4/3}`. The proof balances :math:`2M/(T\eta)` against
    :math:`\frac58\sigma^2\beta_2\eta^2`, whose minimum is
    :math:`\frac3{2^{5/3}}(5\sigma^2\beta_2)^{1/3}(2M/T)^{2/3}` (the App. C form
    :math:`(5\sigma^2\beta_2)^{1/3}(2M/T)^{2/3}` up to Lemma B.5's factor), exponent **1/3**.
    Measured: the log-log slope in :math:`s=\sigma^2\beta_2` of the numerically minimised
    :math:`\min_{\eta\le1/(8L)}\Psi` (b = 0, M = 1, T = 1e4, s over [1e-3, 1e3]); sympy's
    exact exponent is in ``details``. Compared with the printed 4/3 ("=="): expected
    **violated** (1/3 vs 4/3). Every hypothesis of the statement holds at each grid point
    (the exponent is the same for every admissible choice): two identical-Hessian scalar
    quadratics with L = 1/5, so the step cap :math:`1/(8L)=0.625` lies above every minimiser
    :math:`\eta_s=(8M/(5sT))^{1/3}\le0.55` and the minimum is the unconstrained one;
    :math:`\sigma_g^2=s`, :math:`\sigma_l=0`, N = 2, K = 1, :math:`\beta_2=NW=1` (the low
    end of :math:`\gamma^t`'s range), R = 2, :math:`\eta_g=1`,
    :math:`\eta_l=\eta_s/R`. Smallest instance: two grid points fix a slope (the exponent
    is exact at every s). Tolerance: the bounded scalar minimiser's error (xatol 1e-12 in
    log eta) moves the slope by < 1e-6."""
    value, exps = _sampling_term_exponents()
    s = np.logspace(-3, 3, n_grid)
    L, M, T = 0.2, 1.0, 1e4
    mins = [_psi_min(2.0 * M, 0.0, 0.625 * si, T, 1 / (8 * L)) for si in s]
    slope = float(np.polyfit(np.log(s), np.log(mins), 1)[0])
    eta_s = np.cbrt(8 * M / (5 * s * T))
    instance = [admissible_instance(L=L, R=2, step=e / 2, sigma_g2=si, M=M, T=T, s=si)
                for si, e in zip(s, eta_s, strict=True)]
    return Evidence(measured=slope, theoretical=4 / 3, relation="==", instance=instance,
                    tolerance=Tolerance.rounding(1e-6, "bounded minimiser in log eta"),
                    details={"sympy_min_value": str(value),
                             "sympy_exponents_s_M_T": [str(x) for x in exps],
                             "printed_exponents_s_M_T": ["4/3", "2/3", "-2/3"]})


@claim("kvib.thm4_1.sampling_term_exponent_corrected", ref="Thm 4.1 proof, App. C.2 last step "
       "(corrected: (sigma^2 beta_2)^{1/3} (M/T)^{2/3})", kind="proof-step", expected="holds",
       corrects="kvib.thm4_1.sampling_term_exponent_printed",
       result=THM4_1, parts=("sampling_term",),
       statement="min_eta [2M/(T eta) + 5/8 sigma^2 beta_2 eta^2] <= (5 sigma^2 beta_2)^{1/3} "
                 "(2M/T)^{2/3}, and it scales as (sigma^2 beta_2)^{1/3}.",
       quick=dict(n_instances=200), full=dict(n_instances=5000))
def sampling_term_exponent_corrected(*, rng, n_instances):
    r"""Companion of ``kvib.thm4_1.sampling_term_exponent_printed``: the corrected term
    :math:`(\sigma^2\beta_2)^{1/3}(M/T)^{2/3}` (spec section 6 item 7). Random log-uniform
    (M, T, s); measured [max of min Psi / corrected term, |slope in s - 1/3|] with the
    slope from sympy's exact derivation. Expected **holds**: the ratio is exactly
    :math:`3/2^{5/3}\approx0.945` and the exponent exactly 1/3. Tolerance as above (minimiser)."""
    _, exps = _sampling_term_exponents()
    worst, instances = 0.0, []
    for _ in range(n_instances):
        M, T, s = 10.0 ** rng.uniform(-3, 3), 10.0 ** rng.uniform(0, 6), 10.0 ** rng.uniform(-4, 4)
        instances.append((M, T, s))
        best = _psi_min(2 * M, 0.0, 0.625 * s, T, 1e50)
        worst = max(worst, best / ((5 * s) ** (1 / 3) * (2 * M / T) ** (2 / 3)))
    M, T, s = np.array(instances).T
    return Evidence(measured=[worst, abs(float(exps[0]) - 1 / 3)], theoretical=[1.0, 0.0],
                    instance=dict(M=M, T=T, s=s),
                    relation="<=", tolerance=Tolerance.rounding(1e-6, "bounded minimiser"),
                    details={"max_ratio": worst, "exact_ratio": 3 / 2 ** (5 / 3)})


@claim("kvib.thm4_1.rho_positive_not_implied", ref="Thm 4.1 statement vs App. C.2 "
       "(rho = min_t (1 - 10 gamma^t eta^2)/16 > 0)", kind="proof-step", expected="violated",
       result=THM4_1, parts=("rho",),
       statement="The proof's step size (Lemma B.5 with d = 8L, hence eta = R eta_l eta_g <= "
                 "1/(8L), the statement's condition) makes 1 - 10 gamma^t eta^2 > 0, so the "
                 "proof may divide by rho.",
       quick=dict(n_rounds=100), full=dict(n_rounds=100))
def rho_positive_not_implied(*, rng, n_rounds):
    r"""The statement drops :math:`\rho` and asks only :math:`\eta_l\eta_g\le1/(8RL)`, but
    :math:`\rho>0` needs :math:`\eta<1/\sqrt{10\max_t\gamma^t}`, and :math:`\gamma^t\ge NW\ge1`;
    when :math:`L<\sqrt{10}/8` the step :math:`\eta=1/(8L)` breaks it, and Lemma B.5 picks
    exactly that step when :math:`b=\beta_1+\frac54L\sigma^2` and :math:`e` vanish.
    Instance (every hypothesis met): N = 2, K = 1, :math:`\lambda=(1/2,1/2)`, identical scalar
    quadratics :math:`f_i=\frac L2x^2-x` with L = 1/4 (:math:`\sigma_g=\sigma_l=0`), uniform
    ISP (optimal for identical clients, so :math:`\beta_1=0`), R = 2, :math:`\eta_g=1`,
    :math:`x^0=0`, T = ``n_rounds``. The proof's step is then
    :math:`\eta=\min\{\infty,\infty,1/(8L)\}=1/2`; :math:`\gamma^0` comes from the round-0
    pseudo-gradients with the exact :math:`\alpha_*` (Def. C.1; here 1, so
    :math:`\gamma^0=3/2`). Measured :math:`10\gamma^0\eta^2=3.75` (needs < 1). Expected
    **violated**: :math:`\rho<0`, and the final inequality no longer bounds the gradient norm.
    The theorem's existence claim is not refuted (a smaller step,
    :math:`\eta<1/\sqrt{10\max_t\gamma^t}`, restores the proof); what fails is the proof's
    choice under the statement's condition. Exact up to rounding."""
    L, local_steps, lam, k = 0.25, 2, np.full(2, 0.5), 1.0
    problem = Quadratic(np.full((2, 1, 1), L), np.ones((2, 1)))
    grads = problem.client_gradients(np.zeros((2, 1)))
    sigma2 = 6 * float(lam @ np.sum((grads - lam @ grads) ** 2, axis=1))   # sigma_l = 0
    M = problem.loss(np.zeros(1)) - problem.loss(problem.x_star)
    r0, b, e, d = 2 * M, 1.25 * L * sigma2, None, 8 * problem.L
    g = local_updates(problem, np.zeros(1), local_steps=local_steps, step=1.0 / d / local_steps)
    alpha = optimal_factor(lam * np.linalg.norm(g, axis=1), k)
    gamma = (alpha * (2 - k) / k + 2) * lam.max()
    e = 0.625 * sigma2 * gamma
    eta = min(np.sqrt(r0 / (b * n_rounds)) if b > 0 else np.inf,
              np.cbrt(r0 / (e * n_rounds)) if e > 0 else np.inf, 1 / d)
    value = 10 * gamma * eta**2
    instance = dict(problem=problem, L=problem.L, lam=lam, sigma_g2=sigma2 / 6, sigma_l2=0.0,
                    local_noise=0.0, R=local_steps, eta_g=1.0, step=eta / local_steps,
                    budget=k, n_clients=2)
    return Evidence(measured=value, theoretical=1.0, relation="<=", instance=instance,
                    tolerance=Tolerance.rounding(1e-12, "a few flops"),
                    details={"L": problem.L, "sigma2": sigma2, "M": M, "eta_lemma_b5": eta,
                             "alpha_star": alpha, "gamma0": gamma, "rho": (1 - value) / 16,
                             "needed_eta_bound": 1 / np.sqrt(10 * gamma),
                             "smallest_instance": "T plays no role (b = e = 0 makes Lemma "
                                                  "B.5's step 1/(8L) at every T, so T = 1 "
                                                  "fails alike); gamma >= NW >= 1, so N = 1 "
                                                  "(K = 1, gamma = 1: 10 gamma eta^2 = 2.5) "
                                                  "fails too, at any L < sqrt(10)/8; N = 2 "
                                                  "is kept to show a sampled round"})


def _t1_coefficients(R, L, step, sigma_l2, sigma_g2, grad2):
    """Eq. (31) right side (with the 2 sigma_l^2/R term kept) and its three parts."""
    return (60 * R**2 * L**2 * step**2 * grad2 + (10 * R * L**2 * step**2 + 2 / R) * sigma_l2
            + 60 * R**2 * L**2 * step**2 * sigma_g2)


@claim("kvib.thm4_1.sigma2_constant_printed", ref="Thm 4.1 statement (sigma^2 = sigma_l^2/R + "
       "sigma_g^2) vs App. C.2 eqs. (31)-(32)", kind="proof-step", expected="violated",
       result=THM4_1, parts=("eq31_32",),
       statement="The proof supports the sigma^2 of Thm 4.1's statement (sigma_l^2/R + "
                 "sigma_g^2): eq. (31) implies eq. (32), T_1 <= 15/16 ||grad f||^2 + 10 L^2 "
                 "sigma^2 eta^2/eta_g^2, with that sigma^2.",
       quick=dict(), full=dict())
def sigma2_constant_printed(*, rng):
    r"""With :math:`\sigma_l=0`, eq. (31) leaves :math:`60R^2L^2\eta_l^2(\|\nabla f\|^2+
    \sigma_g^2)`; the first part is :math:`\le\frac{15}{16}\|\nabla f\|^2` under
    :math:`\eta_l\le1/(8RL)`, but the second is 6 times :math:`10L^2\sigma^2\eta^2/\eta_g^2=
    10R^2L^2\eta_l^2\sigma^2` when :math:`\sigma^2=\sigma_g^2` (the statement's definition).
    The proof itself is consistent: below eq. (32) it defines
    :math:`\sigma^2=\sigma_l^2/R+6\sigma_g^2`, and with that definition the step holds (with
    equality on this instance, details ``eq32_rhs_proof_sigma2 = eq31_rhs``). The finding is
    therefore a mismatch between the statement's and the proof's :math:`\sigma^2` (a factor 6
    on :math:`\sigma_g^2`): the proof does not support the statement's constant. Instance:
    R = 2, L = 1, :math:`\eta_l=1/16`, :math:`\eta_g=1`, :math:`\sigma_g^2=1`,
    :math:`\sigma_l=0`, :math:`\nabla f=0` (at :math:`x=x^*` of two scalar quadratics with
    L = 1 and gradient spread 1, N = 2, K = 1: every hypothesis of the statement holds, the
    step at its limit :math:`\eta_l\eta_g=1/(8RL)`; the ratio is 6 for every admissible
    choice, so this smallest one, R = 2, N = 2, d = 1, is kept). Measured: (31)'s RHS / (32)'s
    RHS (<= 1 needed) = 6.
    Expected **violated** (kind proof-step: inside the O-statement a constant 6 is absorbed,
    so the theorem's rate is not affected). Exact up to rounding."""
    R, L, step, eta_g = 2, 1.0, 1.0 / 16, 1.0
    eta = R * step * eta_g
    lhs = _t1_coefficients(R, L, step, 0.0, 1.0, 0.0)
    rhs = 10 * L**2 * (0.0 / R + 1.0) * eta**2 / eta_g**2
    return Evidence(measured=lhs / rhs, theoretical=1.0, relation="<=",
                    instance=admissible_instance(L=L, R=R, step=step, eta_g=eta_g, sigma_g2=1.0),
                    tolerance=Tolerance.rounding(1e-12, "a few flops"),
                    details={"eq31_rhs": lhs, "eq32_rhs_statement_sigma2": rhs,
                             "eq32_rhs_proof_sigma2": 10 * L**2 * 6.0 * eta**2 / eta_g**2})


@claim("kvib.thm4_1.sigma2_constant_corrected", ref="Thm 4.1 proof, App. C.2 eqs. (31)-(32) "
       "(sigma^2 = sigma_l^2/R + 6 sigma_g^2, 2 sigma_l^2/R kept)", kind="proof-step",
       corrects="kvib.thm4_1.sigma2_constant_printed",
       expected="holds", result=THM4_1, parts=("eq31_32",),
       outside={"step": "the corrected step needs only eta_l <= 1/(8RL) and eta_g >= 1, "
                        "wider than the statement's eta_l eta_g <= 1/(8RL); checked on both"},
       statement="For eta_l <= 1/(8RL), eta_g >= 1: eq. (31)'s RHS <= 15/16 ||grad f||^2 + "
                 "10 L^2 sigma^2 eta^2/eta_g^2 + 2 sigma_l^2/R with sigma^2 = sigma_l^2/R + "
                 "6 sigma_g^2.",
       quick=dict(n_instances=2000), full=dict(n_instances=200000))
def sigma2_constant_corrected(*, rng, n_instances):
    r"""Companion of ``kvib.thm4_1.sigma2_constant_printed`` (and of
    ``kvib.thm4_1.proof_drops_2_over_r``, whose dropped :math:`2\sigma_l^2/R` is kept here, as
    the spec's resolution says). Random R in 1..100, log-uniform L, :math:`\eta_l\le1/(8RL)`,
    :math:`\eta_g\in[1,3]`, :math:`\sigma_l^2,\sigma_g^2,\|\nabla f\|^2`. Measured: max of
    LHS/RHS - 1 (<= 0). Expected **holds** (the :math:`\|\nabla f\|^2` coefficient is
    :math:`60/64` at the extreme step, the :math:`\sigma` terms match term by term).
    Tolerance: a few ulp of the ratio."""
    # every instance at once: one generator call per quantity (the instances are i.i.d.)
    R = rng.integers(1, 101, n_instances)
    L = 10.0 ** rng.uniform(-3, 3, n_instances)
    step = rng.uniform(0, 1, n_instances) / (8 * R * L)
    eta_g = rng.uniform(1, 3, n_instances)
    sl2, sg2, g2 = 10.0 ** rng.uniform(-3, 3, (3, n_instances))
    eta = R * step * eta_g
    lhs = _t1_coefficients(R, L, step, sl2, sg2, g2)
    rhs = 15 / 16 * g2 + 10 * L**2 * (sl2 / R + 6 * sg2) * eta**2 / eta_g**2 + 2 * sl2 / R
    worst = float(np.max(lhs / rhs - 1))
    R = R.astype(float)
    return Evidence(measured=worst, theoretical=0.0, relation="<=",
                    instance=dict(R=R, L=L, step=step, eta_g=eta_g),
                    tolerance=Tolerance.rounding(1e-12, "a few ulp of the ratio"))


@claim("kvib.thm4_1.last_term_printed", ref="Thm 4.1 proof, App. C.2 last display (2LM/T)",
       kind="proof-step", expected="violated", result=THM4_1, parts=("last_step",),
       statement="Tuning eta <= 1/(8L) in Psi(eta) = 2M/(T eta) + b eta + e eta^2 gives "
                 "Psi <= (2M(4 beta_1 + 5 L sigma^2)/T)^{1/2} + (5 sigma^2 beta_2)^{1/3} "
                 "(2M/T)^{2/3} + 2LM/T.",
       quick=dict(), full=dict())
def last_term_printed(*, rng):
    r"""Lemma B.5 with :math:`r_0=2M`, :math:`d=8L` gives the last term :math:`dr_0/T=16LM/T`,
    not :math:`2LM/T`. Instance where the other terms vanish: :math:`\sigma=0`,
    :math:`\beta_1=0` (e.g. full participation of identical deterministic clients), M = 1,
    L = 1, T = 100. Then :math:`\Psi(\eta)=2M/(T\eta)` is decreasing and its minimum over the
    admissible :math:`\eta\le1/(8L)` is :math:`16LM/T=0.16` (computed numerically), while the
    printed right side is :math:`2LM/T=0.02`. No admissible step attains the printed value.
    Every hypothesis of the statement holds: two identical scalar quadratics (L = 1,
    :math:`\sigma_g=\sigma_l=0`), N = 2, K = 1 with the uniform ISP (optimal for identical
    clients: :math:`\beta_1=0`, :math:`\beta_2=NW=1`), R = 2, :math:`\eta_g=1` and
    :math:`\eta_l=1/16`, i.e. the minimising :math:`\eta=1/(8L)`; the ratio is 8 for every
    admissible (M, L, T) in this regime, so T, N and d cannot shrink it further.
    Expected **violated** (proof-step; a constant inside the O-statement). Tolerance: the
    bounded minimiser (< 1e-9 relative)."""
    M, L, T = 1.0, 1.0, 100.0
    best = _psi_min(2 * M, 0.0, 0.0, T, 1 / (8 * L))
    printed = thm41_rhs(M=M, L=L, T=T, sigma2=0.0, beta1=0.0, gamma=1.0)  # = 2LM/T here
    return Evidence(measured=best, theoretical=printed, relation="<=",
                    instance=admissible_instance(L=L, R=2, step=1 / (16 * L), M=M, T=T, sigma2=0.0,
                                                 beta1=0.0, beta2=1.0),
                    tolerance=Tolerance.rounding(1e-9 * printed, "bounded minimiser"),
                    details={"min_psi": best, "printed_rhs": printed,
                             "corrected_rhs": 16 * L * M / T})


@claim("kvib.thm4_1.last_term_corrected", ref="Thm 4.1 proof, App. C.2 last display "
       "(corrected: 16LM/T)", kind="proof-step", expected="holds",
       corrects="kvib.thm4_1.last_term_printed",
       result=THM4_1, parts=("last_step",),
       statement="Lemma B.5's eta (r0 = 2M, b = beta_1 + 5/4 L sigma^2, e = 5/8 sigma^2 beta_2, "
                 "d = 8L) gives Psi(eta) <= (2M(4 beta_1 + 5 L sigma^2)/T)^{1/2} + "
                 "(5 sigma^2 beta_2)^{1/3} (2M/T)^{2/3} + 16 LM/T.",
       quick=dict(n_instances=5000), full=dict(n_instances=500000))
def last_term_corrected(*, rng, n_instances):
    r"""Companion of ``kvib.thm4_1.last_term_printed``: the App. C explicit form with the
    substitution carried out exactly (the first two terms equal Lemma B.5's
    :math:`2\sqrt{br_0/T}` and :math:`2e^{1/3}(r_0/T)^{2/3}`). Random log-uniform
    (M, L, :math:`\sigma^2`, :math:`\beta_1`, :math:`\beta_2`, T), including the
    :math:`\sigma\to0` regime. Measured: max of :math:`\Psi(\eta_{B.5})`/RHS - 1 (<= 0).
    Expected **holds**. Tolerance: a few ulp."""
    M, L, s2, b1, b2 = (10.0 ** rng.uniform(-4, 4, n_instances) for _ in range(5))
    s2 = np.where(rng.random(n_instances) < 0.2, 0.0, s2)
    T = 10.0 ** rng.uniform(0, 6, n_instances)
    r0, b, e, d = 2 * M, b1 + 1.25 * L * s2, 0.625 * s2 * b2, 8 * L
    with np.errstate(divide="ignore"):
        eta = np.minimum(np.minimum(np.sqrt(r0 / (b * T)), np.cbrt(r0 / (e * T))), 1 / d)
    psi = r0 / (T * eta) + b * eta + e * eta**2
    rhs = thm41_rhs(M=M, L=L, T=T, sigma2=s2, beta1=b1, gamma=b2, last=16.0)
    return Evidence(measured=float(np.max(psi / rhs - 1)), theoretical=0.0, relation="<=",
                    instance=dict(M=M, L=L, T=T, sigma2=s2, beta1=b1, beta2=b2),
                    tolerance=Tolerance.rounding(1e-12, "a few ulp of the ratio"))
