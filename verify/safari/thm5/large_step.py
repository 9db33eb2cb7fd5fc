r"""Theorem 5 of SAFARI at its largest step: a counterexample to the printed statement, found
by the full-budget attack (``flbounds falsify safari.thm5.anisotropic_homogeneous_bound
--budget 5000 --seed 0``: ratio 1.0000748 at mu = 9.68, L/mu = 1.0006, eta_s = 0.99999995
x 2/(L + mu), q = 0.01, K = 7, R = 2535) and shrunk by hand to one round.

At L = mu and eta_s = 2/(L + mu) = 1/mu the coupling gives eta_bar = 1 and eta_c K mu = 2,
so the bound's first term vanishes, while a client round with K = 1 maps x_r - x* to its
negative (eta_c mu = 2): E||x_1 - x*||^2 >= q ||x_0 - x*||^2 against a bound that, without
noise, is 0. The printed q-condition admits such q: with identical clients G_4 = G_3/(2 mu)
and it reads 724 q <= (1 - q)(mu - 2), i.e. q <= (mu - 2)/(mu + 722) (0.0109 at mu = 10).
Its constants are not the ones the proof's (81)-(82) give (spec 7.A.15,
``safari.thm5.q_condition_constants``): with 1/(L mu) for the printed 1/(L + mu), D' = 0
at eta_s = 2/(L + mu) and no q > 0 is admitted. The printed 1/(L + mu) makes the condition
depend on the units (it admits q > 0 here only because mu > 2). The proof's (77) also
uses the local-drift lemma, valid for eta_c <= 1/(8LK), a condition Theorem 5 does not
print; the witness has eta_c = 1/5 = 16/(8LK).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath as mp
import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim

from . import THM5
from .attacks import (
    DIGITS,
    EXTENDED,
    WITNESS,
    _anisotropic_instance,
    anisotropic_bound,
    corrected_edge,
    sides,
)

#: The point the full-budget attack found (before shrinking), for the rounding check.
FOUND = {"mu": 9.679225084058391, "kappa": 1.0005904568601705, "q": 0.010037602363294427,
         "c": 0.9999999521193399, "K": 7, "m": 12, "R": 2535,
         "sigma2": 0.00011375817663132582, "sigma_s2": 2.579263700439416,
         "e0": [-4.968325234720098, -0.3890430116219594]}


def witness_sides(point=None) -> tuple[Fraction, Fraction]:
    """Both sides at ``point`` (default: the shrunk witness) in exact rational arithmetic
    from the point's binary floats."""
    return sides(**(point or WITNESS), number=Fraction)


def _mp_recursion_ratio(point) -> float:
    """The ratio with the second-moment recursion run round by round (no closed form) in
    DIGITS-digit arithmetic: an independent evaluation of the left side."""
    from .attacks import _point

    with mp.workdps(DIGITS):
        p = _point(dict(point))
        L, mu, eta_s, q = (mp.mpf(p["L"]), mp.mpf(point["mu"]), mp.mpf(p["eta_s"]),
                           mp.mpf(point["q"]))
        K, m = point["K"], point["m"]
        eta_c = 4 * L * eta_s / (K * (L + mu))
        total = mp.mpf(0)
        for a, e in zip((L, mu), point["e0"], strict=True):
            S = sum((1 - eta_c * a) ** (2 * j) for j in range(K))
            con = q * (1 - eta_c * a) ** (2 * K) + (1 - q) * (1 - eta_s * a) ** 2
            inj = (q * eta_c ** 2 * mp.mpf(point["sigma2"]) / 2 * S / m
                   + (1 - q) * eta_s ** 2 * mp.mpf(point["sigma_s2"]) / 2)
            M = mp.mpf(e) ** 2
            for _ in range(point["R"]):
                M = con * M + inj
            total += M
        _, bound = sides(**point)
        return float(total / bound)


@claim("safari.thm5.large_step_printed", ref="Thm 5 (as printed), proof (77)-(83)",
       kind="statement", expected="violated", result=THM5, parts=("bound", "bound_linear"),
       statement="Theorem 5 as printed at its largest step: L = mu = 10 (identical clients "
                 "with Hessian diag(10, 10)), eta_s = 2/(L + mu) = 1/10, K = 1 (eta_c = 1/5 "
                 "by the coupling), m = 1, q = 1/100, sigma^2 = 1e-4, sigma_s^2 = 1, "
                 "x_0 - x* = (1, 0), R = 1: E||x_1 - x*||^2 <= (1 - eta_bar) ||x_0 - x*||^2 + "
                 "delta_bar.",
       quick=dict(), full=dict())
def large_step_printed(*, rng):
    r"""Exact rational arithmetic (both sides from the witness's binary floats): E||x_1 -
    x*||^2 = q[(1 - eta_c mu)^2 + eta_c^2 sigma^2] + (1 - q) eta_s^2 sigma_s^2 = 0.0199004
    against delta_bar = 0.0099024 (eta_bar = 1 exactly): ratio 2.0097, beyond any rounding.
    Every hypothesis of both readings of the q-condition is evaluated on the instance and
    true (printed closed form, part ``bound``; the proof's linear form, part
    ``bound_linear``), as are Assumptions 3-5, strong convexity, eta_s <= 2/(L + mu) (with
    equality) and the coupling. Details: the attack's own witness, whose ratio 1.0000748 is
    the same in float64 and in a 50-digit round-by-round recursion (|difference| < 1e-13),
    so it is not rounding; the proof's q-condition (D' = 0, no q > 0 admitted) and the
    drift lemma's step (eta_c = 16/(8LK)), either of which excludes the witness;
    corrected statement: safari.thm5.large_step_corrected. Expected **violated**."""
    exact, bound = witness_sides()
    inst = _anisotropic_instance(**WITNESS)
    L, mu, eb = inst["L"], inst["mu"], inst["eta_bar"]
    g3, g4 = 1.0, float(inst["G4"][0])
    n_print = 4 * eb / mu ** 2 * (1 + 30 * L * eb / mu * (1 + 2 * L * eb / mu)) * g3 - 4 / mu * g4
    d_print = (1 / (L + mu) - (L + mu) ** 2 * eb / (4 * L ** 2 * mu ** 2)) * g3
    d_proof = (1 / (L * mu) - (L + mu) ** 2 * eb / (4 * L ** 2 * mu ** 2)) * g3
    return Evidence(measured=float(exact), theoretical=float(bound), relation="<=",
                    tolerance=Tolerance.exact("rational arithmetic (fractions.Fraction) on "
                                              "the witness's binary floats"),
                    instance=inst,
                    details={"ratio": float(exact / bound), "ratio_exact": str(exact / bound),
                             "witness": WITNESS, "eta_c": inst["step_client"],
                             "eta_bar": eb,
                             "q_condition_printed": {"N": n_print, "D": d_print,
                                                     "q_max": d_print / (n_print + d_print)},
                             "q_condition_proof": {"D": d_proof,
                                                   "admits_q": bool(d_proof > 0)},
                             "drift_step": {"eta_c": inst["step_client"],
                                            "limit_1_over_8LK": 1 / (8 * L),
                                            "holds": bool(inst["step_client"] <= 1 / (8 * L))},
                             "attack_witness": {
                                 "point": FOUND,
                                 "ratio_float64": _float64_ratio(FOUND),
                                 "ratio_50_digit_recursion": _mp_recursion_ratio(FOUND),
                                 "ratio_50_digit_closed_form": anisotropic_bound(**FOUND)}})


def _float64_ratio(point) -> float:
    """The ratio in float64 (both sides as the ledger's float formulas compute them)."""
    from .attacks import _point, exact_final_error, thm5

    p = _point(dict(point))
    e0 = point["e0"]
    exact = exact_final_error(L=p["L"], mu=point["mu"], q=point["q"], eta_s=p["eta_s"],
                              K=point["K"], m=point["m"], R=point["R"],
                              sigma2=point["sigma2"], sigma_s2=point["sigma_s2"], e0=e0)
    bound = thm5(mu=point["mu"], L=p["L"], local_steps=point["K"], n_sampled=point["m"],
                 q=point["q"], R=point["R"], dist0=float(e0[0] ** 2 + e0[1] ** 2),
                 sigma2=point["sigma2"], sigma_s2=point["sigma_s2"], sigma_G2=0.0,
                 step=p["eta_s"])
    return float(exact / bound)


def sample_points(rng, n: int) -> list[dict]:
    """``n`` points drawn from the attack space (log-uniform where the space is; half of
    them with L = mu, half with q <= 0.1, a quarter at the drift limit, so that the corners
    of the counterexample are visited)."""
    pts = []
    for _ in range(n):
        kappa = 1.0 if rng.random() < 0.5 else float(np.exp(rng.uniform(0, np.log(20))))
        pts.append({
            "mu": float(np.exp(rng.uniform(np.log(0.01), np.log(10)))), "kappa": kappa,
            "q": float(rng.uniform(0.01, 0.1) if rng.random() < 0.5 else rng.uniform(0.01, 1)),
            "c": float(np.exp(rng.uniform(np.log(1e-4), 0))),
            "K": int(rng.integers(1, 11)), "m": int(rng.integers(1, 17)),
            "R": int(np.exp(rng.uniform(0, np.log(10_000)))),
            "sigma2": float(np.exp(rng.uniform(np.log(1e-4), np.log(10)))),
            "sigma_s2": float(np.exp(rng.uniform(np.log(1e-4), np.log(10)))),
            "e0": [float(x) for x in rng.uniform(-5, 5, 2)]})
        if rng.random() < 0.25:        # eta_c at 1/(8LK): c = (L + mu)^2/(16 L^2)
            pts[-1]["c"] = min(1.0, (1 + 1 / kappa) ** 2 / 16)
    return pts


@claim("safari.thm5.large_step_corrected", ref="Thm 5 with the proof's hypotheses",
       kind="statement", expected="holds", result=THM5, parts=("bound_corrected",),
       corrects="safari.thm5.large_step_printed",
       statement="Theorem 5's bound E||x_R - x*||^2 <= (1 - eta_bar)^R ||x_0 - x*||^2 + "
                 "delta_bar under the hypotheses its proof uses: the q-condition with the "
                 "constants (81)-(82) give (16 eta_bar/mu^2 on G_3, 1/(L mu) for the printed "
                 "1/(L + mu)) at every round, and eta_c <= 1/(8LK) (local-drift lemma); "
                 "identical clients with Hessian diag(L, mu) across the attack's domain.",
       quick=dict(n_points=400), full=dict(n_points=4000))
def large_step_corrected(*, rng, n_points):
    r"""Derivation: with the proof's constants the q-condition is exactly the requirement
    that the bracket of (81) and the G_4 term of (82) sum to at most 0, so (83) follows
    from the server round (58) and the client round (77), and the geometric sum gives the
    bound; (77) rests on the local-drift lemma, hence eta_c <= 1/(8LK). The shrunk witness
    of safari.thm5.large_step_printed fails both added hypotheses. Measured: the exact
    E||x_R - x*||^2 (closed form, 50-digit arithmetic) against the bound on the witness
    family at the corrected edge (L = mu = 10, K = 1, eta_c = 1/(8LK), q the largest the
    proof's condition admits) and on ``n_points`` points drawn from the attack's space,
    kept when every hypothesis of part ``bound_corrected`` holds (each kept point's instance
    is judged by the ledger). Tolerance 1e-12 x the bound: both sides carry < 1e-28
    relative rounding (see the attack's derivation). Details: the largest ratio and its
    point (tightness)."""
    edge = corrected_edge()
    if not all(THM5.evaluate(_anisotropic_instance(**edge), ["bound_corrected"]).values()):
        raise ValueError(f"the corrected edge point {edge} is outside part bound_corrected")
    points = [edge] + sample_points(rng, n_points)
    kept, exact, bound, instances = [], [], [], []
    for point in points:
        inst = _anisotropic_instance(**point)
        if not all(THM5.evaluate(inst, ["bound_corrected"]).values()):
            continue
        with mp.workdps(DIGITS):
            lhs, rhs = sides(**point)
            exact.append(float(lhs))
            bound.append(float(rhs))
        kept.append(point)
        instances.append(inst)
    ratios = np.asarray(exact) / np.asarray(bound)
    worst = int(np.argmax(ratios))
    return Evidence(measured=exact, theoretical=bound, relation="<=",
                    tolerance=Tolerance.rounding(1e-12 * np.asarray(bound), EXTENDED),
                    instance=instances,
                    details={"kept": len(kept), "drawn": len(points),
                             "max_ratio": float(ratios[worst]), "worst_point": kept[worst],
                             "edge_ratio": float(ratios[0]), "edge_point": kept[0]})
