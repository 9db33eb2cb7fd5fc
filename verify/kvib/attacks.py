r"""Attack surfaces of K-Vib's variance and sampling bounds (K-Vib).

Each surface maximises measured/bound of one claim over instances that meet the claim's
hypotheses (``instance=``: the attacked claim's result predicates reject a point, the same
judgement the claim's own evidence gets), with the library calls the claim itself makes
(:mod:`flbounds.sampling`) and the claim modules' own helpers. Weights are searched on a log
scale (1e-2 .. 1e2), the number of clients N in 2..8 (vectors are cut to their first N
entries) and the budget K as a real number, as in the claims' random instances.
"""

from __future__ import annotations

import numpy as np

from flbounds.falsify import Box, Integers, Simplex, attack_surface
from flbounds.sampling import (
    isp_variance,
    optimal_factor,
    optimal_isp_objective,
    optimal_isp_variance,
    rsp_bound,
)
from flbounds.sampling.online import Assumption51Feedback, ftrl_full_information, regrets

from .closed_forms import _lemma_b1_sum
from .conditions import feedback_max
from .lemma_b5 import lemma_b5_bound as printed_lemma_b5
from .proof_gaps_online import _pmin_terms
from .thm4_1 import admissible_instance, thm41_rhs
from .thm4_1.proof_gaps import _psi_min, _t1_coefficients
from .thm_d1 import thm_d1_bound_value

N_MAX = 8
WEIGHTS = Box(1e-2, 1e2, log=True, shape=N_MAX)
SUMS = ("rounding: a ratio of two float64 sums of <= 8 positive terms errs by < 20 eps; "
        "1e-12 leaves margin")


#: the full budget of these surfaces unless a convergence record set it (:data:`RECORDED`)
FULL = 20000
#: Full budgets set from convergence records: each attack run at its former full budget
#: (20,000) with seeds 0 and 1; the new budget is at least twice the evaluation by which both
#: runs were within 1e-3 (relative) of their own best ratio, and at least twice the quick
#: budget. Entry: (budget, "that evaluation, seed 0 / seed 1; the best ratios, seed 0 / 1").
RECORDED = {
    "kvib.app_d2.floor_inequality": (2000, "1 / 1; best 1 / 1"),
    "kvib.corollary_b1_b2.split_indices": (2000, "2 / 24; best 1 / 1"),
    "kvib.corollary_b1_b2.uncapped_values": (2000, "69 / 172; best 1 / 1"),
    "kvib.def_c1.gamma_range": (2000, "124 / 118; best 1 / 1"),
    "kvib.eq5.rsp_optimum_bound": (2500, "1,057 / 561; best 0.875 / 0.875"),
    "kvib.lemma2_1.isp_le_rsp_bound": (2000, "41 / 41; best 1 / 1"),
    "kvib.lemma_b1.sum_bound": (11000, "2,604 / 5,415; best 0.05501509978 / 0.05458610716"),
    # expected violated: the best at 11,000 is far above 1 for both seeds (record's numbers)
    "kvib.eq8.display_every_coupling": (11000, "5,496 / 3,751; best 470,499.7 / 536,693.6"),
    "kvib.lemma_b5.step_size": (2000, "6 / 59; best 0.9999995491 / 0.9999995491"),
    "kvib.sec3.optimal_variance_monotone_in_k": (2000, "55 / 106; best 1 / 1"),
    # expected violated: the best at 2,000 is 5.99997 for both seeds (threshold 1 + 1e-12)
    "kvib.thm4_1.sigma2_constant_printed": (2000, "11 / 3; best 5.99997 / 5.99997"),
    "kvib.thm4_1.sigma2_constant_corrected": (2000, "1 / 1; best 1 / 1"),
    "kvib.thm4_1.last_term_corrected": (2000, "23 / 31; best 0.9999999999 / 0.9999806754"),
    "kvib.thm4_1.eq33_factor_two": (4000, "1,980 / 1,670; best 0.9998920007 / 0.9998244632"),
    "kvib.thm4_1.bound_a_measured": (2000, "19 / 9; best 0.03333333333 / 0.03333333333"),
    "kvib.thm4_1.descent_round_repaired": (2000,
                                           "169 / 147; best 0.03512358424 / 0.03512358325"),
    # expected violated: the best at 2,000 is 7.99999987 / 7.99999989 (threshold 1 + 1e-9)
    "kvib.thm4_1.last_term_printed": (2000, "166 / 92; best 7.999999887 / 7.999999887"),
}
# recorded, budget kept (within 1e-3 of their best only after half of 20,000 evaluations):
# kvib.eq5.beyond_one (12,259 / 3,982; best 0.874999044 / 0.874999988),
# kvib.thm5_1.tbfp_bound (18,894 / 19,540; best 0.07557119717 / 0.07417366683),
# kvib.thm4_1.descent_round_printed (19,124 / 19,820; best 8,501,218 / 10,020,960)


def _surface(claim_id, **kwargs):
    """These ratios cost about a millisecond or less: larger budgets than the default (the
    full one from :data:`RECORDED` where a convergence record set it)."""
    full = RECORDED[claim_id][0] if claim_id in RECORDED else FULL
    return attack_surface(claim_id, budget={"quick": 1000, "full": full}, **kwargs)


def _budget(n, k_frac):
    """K in [1, N): the claims' real-valued budget."""
    return 1.0 + k_frac * (n - 1)


def _regime_p(n, k, w):
    """p = floor + (K - N floor) w on the floor (K-1)/(N-1) of Lemma B.7 (w on the simplex)."""
    floor = (k - 1) / (n - 1)
    return floor + (k - n * floor) * w[:n] / w[:n].sum()


@_surface("kvib.lemma2_1.isp_le_rsp_bound",
                space={"a": WEIGHTS, "n": Integers(2, N_MAX), "k_frac": Box(0, 1),
                       "w": Simplex(N_MAX)},
                instance=lambda *, a, n, k_frac, w: dict(p=_regime_p(n, _budget(n, k_frac), w),
                                                         budget=_budget(n, k_frac)),
                tolerance=1e-12, tolerance_why=SUMS,
                fixed=[{"a": [1, 3, 6, 1, 1, 1, 1, 1], "n": 3, "k_frac": 0.5,
                        "w": [1 / 3, 1 / 3, 1 / 3, 0, 0, 0, 0, 0]}],
                note="p on Lemma B.7's admissible set p_i >= (K-1)/(N-1); fixed: uniform "
                     "p = K/N at a = (1, 3, 6), K = 2")
def isp_le_rsp(*, a, n, k_frac, w):
    """ISP variance / RSP bound of eq. (3) at an admissible p."""
    p = _regime_p(n, _budget(n, k_frac), w)
    return isp_variance(p, a[:n]) / rsp_bound(p, a[:n])


@_surface("kvib.appC1.uncapped_bounds",
                space={"a": WEIGHTS, "n": Integers(2, N_MAX), "k_frac": Box(0, 1)},
                instance=lambda *, a, n, k_frac: dict(a=a[:n], budget=_budget(n, k_frac)),
                tolerance=1e-12, tolerance_why=SUMS,
                fixed=[{"a": [1, 1.5, 2, 1, 1, 1, 1, 1], "n": 3, "k_frac": 0.5}])
def uncapped_bounds(*, a, n, k_frac):
    """max of delta_*/((N-K)/(NK) (sum a)^2) and alpha_*/((sum a)^2/(N sum a^2))."""
    a, k = a[:n], _budget(n, k_frac)
    b1 = (n - k) / (n * k) * a.sum() ** 2
    cs = a.sum() ** 2 / (n * np.sum(a * a))
    return max(optimal_isp_variance(a, k) / b1, optimal_factor(a, k) / cs)


@_surface("kvib.def_c1.gamma_range",
                space={"a": WEIGHTS, "n": Integers(2, N_MAX), "k_frac": Box(0, 1)},
                instance=lambda *, a, n, k_frac: dict(a=a[:n], budget=_budget(n, k_frac)),
                tolerance=1e-12, tolerance_why=SUMS,
                fixed=[{"a": [1, 3, 6, 1, 1, 1, 1, 1], "n": 3, "k_frac": 0.5}])
def alpha_at_most_one(*, a, n, k_frac):
    """alpha_* = delta_*/delta_U (bound 1; gamma^t's range follows from it)."""
    return optimal_factor(a[:n], _budget(n, k_frac))


@_surface("kvib.lemma_b1.sum_bound", space={"c": Box(0, 1, shape=40)},
                instance=lambda *, c: dict(c=c),
                tolerance=0.0, tolerance_why="a float sum far from the bound",
                fixed=[{"c": np.ones(40)}])
def lemma_b1(*, c):
    """sum_t c_t^4/(c^2_{1:t})^{3/2} / 44 over 40 terms in [0, 1]."""
    return _lemma_b1_sum(c) / 44.0


@_surface("kvib.sec3.optimal_variance_monotone_in_k",
                space={"a": WEIGHTS, "n": Integers(2, N_MAX), "k_frac": Box(0, 1),
                       "dk": Box(0, 1)},
                instance=lambda *, a, n, k_frac, dk: dict(
                    a=a[:n], budget=np.array([_budget(n, k_frac),
                                              _budget(n, k_frac) + dk * (n - _budget(n, k_frac))])),
                tolerance=1e-12, tolerance_why=SUMS,
                fixed=[{"a": [1, 3, 6, 1, 1, 1, 1, 1], "n": 3, "k_frac": 0.0, "dk": 0.5}])
def variance_monotone(*, a, n, k_frac, dk):
    """min_p V_ISP at K' = K + dk (N - K) over its value at K (must not increase)."""
    a, k = a[:n], _budget(n, k_frac)
    low = optimal_isp_variance(a, k)
    high = optimal_isp_variance(a, k + dk * (n - k))
    return high / low if low > 0 else (0.0 if high <= 0 else np.inf)


@_surface("kvib.corollary_b1_b2.uncapped_values",
                space={"a": WEIGHTS, "n": Integers(2, N_MAX), "k_frac": Box(0, 1),
                       "floor_frac": Box(0, 0.999)},
                instance=lambda *, a, n, k_frac, floor_frac: dict(
                    a=a[:n], budget=_budget(n, k_frac), p_min=floor_frac * _budget(n, k_frac) / n),
                tolerance=1e-12, tolerance_why=SUMS,
                fixed=[{"a": [1, 1.5, 2, 1, 1, 1, 1, 1], "n": 3, "k_frac": 0.5,
                        "floor_frac": 0.5}])
def corollary_b2(*, a, n, k_frac, floor_frac):
    """Optimum with a floor p_min = floor_frac K/N over K (sum a)^2/(K - N p_min)^2."""
    a, k = a[:n], _budget(n, k_frac)
    p_min = floor_frac * k / n
    return optimal_isp_objective(a, k, p_min=p_min) / (k * a.sum() ** 2 / (k - n * p_min) ** 2)


def _feasible_eq5(*, a, n, k_frac):
    """Eq. (5)'s p = K a/sum a is a probability vector (a condition of the comparison this
    surface attacks, not a hypothesis of Section 3)."""
    k = _budget(n, k_frac)
    return bool(np.all(k * a[:n] / a[:n].sum() <= 1)) or "p = K a/sum a exceeds 1"


@_surface("kvib.eq5.rsp_optimum_bound",
                space={"a": WEIGHTS, "n": Integers(2, N_MAX), "k_frac": Box(0, 1)},
                validator=_feasible_eq5,
                instance=lambda *, a, n, k_frac: dict(a=a[:n], budget=_budget(n, k_frac)),
                tolerance=1e-12, tolerance_why=SUMS,
                fixed=[{"a": [1, 1.5, 2, 1, 1, 1, 1, 1], "n": 3, "k_frac": 0.5}])
def eq5_bound(*, a, n, k_frac):
    """ISP / RSP bound at p = K a/sum a (eq. 5)."""
    a, k = a[:n], _budget(n, k_frac)
    p = k * a / a.sum()
    return isp_variance(p, a) / rsp_bound(p, a)


T1_SPACE = {"R": Integers(1, 100), "L": Box(1e-3, 1e3, log=True), "step_frac": Box(0, 1),
            "eta_g": Box(1, 3), "sigma_g2": Box(1e-3, 1e3, log=True),
            "grad2": Box(1e-3, 1e3, log=True)}
T1_FIXED = [{"R": 2, "L": 1.0, "step_frac": 1.0, "eta_g": 1.0, "sigma_g2": 1.0,
             "grad2": 1e-3}]
FLOPS = "rounding: a few flops per side, relative error < 1e-14"


def _t1_instance(*, R, L, step_frac, eta_g, sigma_g2, grad2):
    """The values Theorem 4.1's predicates read at a point: the statement's (an FL instance
    with gradient spread sigma_g^2 and eta_l eta_g <= 1/(8RL)) and eq. (31)-(32)'s."""
    return admissible_instance(L=L, R=R, step=step_frac / (8 * R * L * eta_g), eta_g=eta_g,
                               sigma_g2=sigma_g2)


def _t1_sides(R, L, step_frac, eta_g, sigma_g2, grad2, sigma_g_factor):
    step = step_frac / (8 * R * L * eta_g)  # the statement's eta_l eta_g <= 1/(8RL)
    eta = R * step * eta_g
    lhs = _t1_coefficients(R, L, step, 0.0, sigma_g2, grad2)
    rhs = 15 / 16 * grad2 + 10 * L**2 * sigma_g_factor * sigma_g2 * eta**2 / eta_g**2
    return lhs, rhs


@_surface("kvib.thm4_1.sigma2_constant_printed", space=T1_SPACE, fixed=T1_FIXED,
                instance=_t1_instance,
                tolerance=1e-12, tolerance_why=FLOPS, shrink=True,
                note="sigma_l = 0, so only the sigma_g^2 constant is attacked")
def sigma2_printed(*, R, L, step_frac, eta_g, sigma_g2, grad2):
    """Eq. (31)'s right side over eq. (32)'s with the statement's sigma^2 = sigma_g^2."""
    lhs, rhs = _t1_sides(R, L, step_frac, eta_g, sigma_g2, grad2, 1.0)
    return lhs / rhs


@_surface("kvib.thm4_1.sigma2_constant_corrected", space=T1_SPACE, fixed=T1_FIXED,
                instance=_t1_instance,
                tolerance=1e-12, tolerance_why=FLOPS,
                note="inside the statement's step eta_l eta_g <= 1/(8RL) (the claim also "
                     "checks the wider eta_l <= 1/(8RL), eta_g >= 1)")
def sigma2_corrected(*, R, L, step_frac, eta_g, sigma_g2, grad2):
    """The same with the proof's sigma^2 = 6 sigma_g^2."""
    lhs, rhs = _t1_sides(R, L, step_frac, eta_g, sigma_g2, grad2, 6.0)
    return lhs / rhs


LOG4 = Box(1e-4, 1e4, log=True)
B5_SPACE = {"r0": LOG4, "b": LOG4, "e": LOG4, "d": LOG4, "T": Box(1.0, 1e6, log=True)}
ULP = "rounding: a few ulp of the ratio (as the claim)"


def _b5_psi(r0, b, e, d, T):
    """Lemma B.5's step and Psi at it: eta = min{(r0/(bT))^1/2, (r0/(eT))^1/3, 1/d}."""
    r0 = np.float64(r0)  # b = 0 or e = 0 gives an infinite candidate, not an exception
    with np.errstate(divide="ignore"):
        eta = min(np.sqrt(r0 / (b * T)), np.cbrt(r0 / (e * T)), 1 / d)
    return eta, r0 / (T * eta) + b * eta + e * eta**2


@_surface("kvib.lemma_b5.step_size", space=B5_SPACE, tolerance=1e-12,
                instance=lambda **point: point,
                tolerance_why=ULP,
                fixed=[{"r0": 1.0, "b": 1.0, "e": 1.0, "d": 1.0, "T": 100.0}])
def lemma_b5(*, r0, b, e, d, T):
    """Psi(eta) over 2 (b r0/T)^1/2 + 2 e^1/3 (r0/T)^2/3 + d r0/T."""
    _, psi = _b5_psi(r0, b, e, d, T)
    return psi / printed_lemma_b5(r0=r0, b=b, e=e, d=d, T=T)


LAST_SPACE = {"M": LOG4, "L": LOG4, "s2": Box(0, 1e4), "b1": LOG4, "b2": LOG4,
              "T": Box(1.0, 1e6, log=True)}
LAST_FIXED = [{"M": 1.0, "L": 1.0, "s2": 0.0, "b1": 1e-4, "b2": 1.0, "T": 100.0}]


def _last_instance(*, M, L, s2, b1, b2, T):
    """The values Theorem 4.1's predicates read at a point: the statement's (an FL instance
    with gradient spread s2, R = 2, eta_g = 1, the step at its limit 1/(8L)) and the tuning
    constants of the last step."""
    return admissible_instance(L=L, R=2, step=1 / (16 * L), sigma_g2=s2, M=M, T=T,
                               sigma2=s2, beta1=b1, beta2=b2)


def _last_rhs(M, L, s2, b1, b2, T, last):
    return thm41_rhs(M=M, L=L, T=T, sigma2=s2, beta1=b1, gamma=b2, last=last)


@_surface("kvib.thm4_1.last_term_printed", space=LAST_SPACE, fixed=LAST_FIXED,
                instance=_last_instance,
                tolerance=1e-9, tolerance_why="bounded minimiser of Psi (< 1e-9 relative, as "
                "the claim)", shrink=True)
def last_term_printed(*, M, L, s2, b1, b2, T):
    """min over admissible eta <= 1/(8L) of Psi over the printed right side (last term 2LM/T)."""
    best = _psi_min(2 * M, b1 + 1.25 * L * s2, 0.625 * s2 * b2, T, 1 / (8 * L))
    return best / _last_rhs(M, L, s2, b1, b2, T, 2.0)


@_surface("kvib.thm4_1.last_term_corrected", space=LAST_SPACE, fixed=LAST_FIXED,
                instance=_last_instance,
                tolerance=1e-12, tolerance_why=ULP)
def last_term_corrected(*, M, L, s2, b1, b2, T):
    """Psi at Lemma B.5's step over the corrected right side (last term 16LM/T)."""
    _, psi = _b5_psi(2 * M, b1 + 1.25 * L * s2, 0.625 * s2 * b2, 8 * L, T)
    return psi / _last_rhs(M, L, s2, b1, b2, T, 16.0)


@_surface("kvib.app_d2.floor_inequality", space={"x": Box(1e-9, 0.5)},
                instance=lambda *, x: dict(x=x),
                tolerance=1e-14, tolerance_why="a few ulp at values <= 4 (as the claim)",
                fixed=[{"x": x} for x in (1e-3, 0.25, 0.5)])
def floor_inequality(*, x):
    """(1/(1-x)^2 - 1) over 6x on (0, 1/2]."""
    return (1 / (1 - x) ** 2 - 1) / (6 * x)


D1_N = 2 * N_MAX


def _d1_point(base, decay, lam, n, T, k_frac):
    """Feedback, budget and G of one Theorem D.1 point: pi_t(i) = lam_i (b_i + c_i/sqrt t),
    c = decay b with decay in [-1, 1] (from above or below), lam on the simplex, K in [1, N)
    (K = N caps every client: zbar = 0), G the largest feedback over the T rounds."""
    lam = np.asarray(lam, dtype=float)[:n]
    base = np.asarray(base, dtype=float)[:n]
    fb = Assumption51Feedback(lam / lam.sum(), base, np.asarray(decay)[:n] * base)
    return fb, _budget(n, 0.999 * k_frac), feedback_max(fb, T)


def _d1_instance(*, base, decay, lam, n, T, k_frac):
    """The values Theorem D.1's predicates read at a point (gamma = G^2, as the run)."""
    fb, k, G = _d1_point(base, decay, lam, n, T, k_frac)
    return dict(feedback=fb, n_rounds=T, budget=k, n_clients=n, gamma=G**2, G=G)


#: Theorem D.1's search space (its attacks share it) and the claim's own instance
D1_SPACE = {"base": Box(1e-3, 1e3, log=True, shape=D1_N), "decay": Box(-1, 1, shape=D1_N),
            "lam": Simplex(D1_N, floor=1e-3), "n": Integers(2, D1_N), "T": Integers(1, 100),
            "k_frac": Box(0, 1)}
D1_FIXED = {"base": np.concatenate([2.0 ** np.arange(N_MAX), np.ones(N_MAX)]),
            "decay": np.full(D1_N, 0.5), "lam": np.full(D1_N, 1 / D1_N), "n": 4, "T": 10,
            "k_frac": 0.5}


@attack_surface("kvib.thm_d1.printed_last_term",
          space=D1_SPACE,
          tolerance=1e-9, tolerance_why="deterministic runs (as the claim)",
          budget={"quick": 300, "full": 5000}, instance=lambda **point: _d1_instance(**point),
          fixed=[D1_FIXED],
          note="full-information FTRL (gamma = G^2, G the largest feedback over the run); N "
               "up to 16; Assumption 5.1 feedback from above or below (decay in [-1, 1]), "
               "any lambda on the simplex; T up to 100; K in [1, N); an instance with every "
               "round capped (zbar = 0, vacuous bound) is rejected")
def printed_last_term(*, base, decay, lam, n, T, k_frac):
    """Regret_S over eq. (51) as printed (last term 22 N G^2/zbar)."""
    fb, k, G = _d1_point(base, decay, lam, n, T, k_frac)
    tr = ftrl_full_information(fb, T, k, G * G)
    zbar = float(tr.z.min())
    if zbar <= 0:
        return np.nan  # the bound is +inf: not an instance of the statement's regime
    root = float(np.sum(np.sqrt(fb.squared_sums(T))))
    bound = thm_d1_bound_value(N=n, G=G, zbar=zbar, K=k, root=root)
    return regrets(tr.costs, fb, k).static / bound


@attack_surface("kvib.thm_d1.full_information",
          space=D1_SPACE,
          tolerance=1e-9, tolerance_why="deterministic runs (as the claim)",
          budget={"quick": 300, "full": 5000}, instance=lambda **point: _d1_instance(**point),
          fixed=[D1_FIXED],
          note="as kvib.thm_d1.printed_last_term, against eq. (51) with the derivation's last "
               "term 22 N^2 G^2/zbar")
def corrected_last_term(*, base, decay, lam, n, T, k_frac):
    """Regret_S over eq. (51) with the corrected last term."""
    fb, k, G = _d1_point(base, decay, lam, n, T, k_frac)
    tr = ftrl_full_information(fb, T, k, G * G)
    zbar = float(tr.z.min())
    if zbar <= 0:
        return np.nan
    root = float(np.sum(np.sqrt(fb.squared_sums(T))))
    bound = thm_d1_bound_value(N=n, G=G, zbar=zbar, K=k, root=root, last_factor=n)
    return regrets(tr.costs, fb, k).static / bound



@attack_surface("kvib.thm_d1.pmin_both_branches",
          space={"base": Box(1e-3, 1e3, log=True, shape=D1_N),
                 "decay": Box(-1, 1, shape=D1_N), "lam": Simplex(D1_N, floor=1e-3),
                 "n": Integers(2, D1_N), "T": Integers(1, 10**6), "k_frac": Box(0, 1)},
          tolerance=1e-12, tolerance_why="a few ulp of the ratio (as the claim)",
          budget={"quick": 300, "full": 5000}, instance=lambda **point: _d1_instance(**point),
          fixed=[{"base": np.concatenate([[1.0, 0.01, 0.01], np.ones(D1_N - 3)]),
                  "decay": np.zeros(D1_N), "lam": np.full(D1_N, 1 / D1_N), "n": 3, "T": 1,
                  "k_frac": 0.0}],
          note="the constants of an actual Assumption 5.1 feedback (from above or below, any "
               "lambda), N up to 16, T up to 10^6, K in [1, N); fixed: the printed step's "
               "counterexample, where the first branch K/(2N) is taken")
def pmin_both(*, base, decay, lam, n, T, k_frac):
    """Eq. (50)'s terms at p_min over the corrected right side (+ 2 N^2 G^2/K)."""
    fb, k, G = _d1_point(base, decay, lam, n, T, k_frac)
    root = float(np.sum(np.sqrt(fb.squared_sums(T))))
    p_min = min(k / (2 * n), G * k / (np.sqrt(6) * root))
    rhs = 2 * np.sqrt(6) * n * G * root / k + 2 * n**2 * G**2 / k
    return _pmin_terms(n, k, G, root, p_min) / rhs
