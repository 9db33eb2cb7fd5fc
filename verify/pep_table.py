"""The README's table "Worst case over the function class": ``python -m verify.pep_table``.

Each row is one printed rate at stated constants next to its exact worst case over the class
(``flbounds.pep``) and their ratio; the printed steps and values come from the printed-bound
registry (``flbounds bound``), so the table, the claims and the calculator share one formula.
Prints a Markdown table (``--json`` for the rows).
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from flbounds import pep
from flbounds.ledger import bounds
from verify.focus.pep_conditions import thm1a_lyapunov_weight, thm1b_consensus_weight
from verify.kvib.pep_conditions import eq36_descent_rate
from verify.safari.pep_conditions import (
    one_round_bound,
    thm4_client_step,
    thm5_state_constraint,
    thm5_steps,
)


def _focus_row(p, tau):
    thm = bounds.get("focus.thm1a").evaluate(mu=1.0, L=2.0, p=np.asarray(p, dtype=float),
                                             tau=tau)
    res = pep.focus_rate(1.0, 2.0, p, tau, thm.step, printed=thm.value,
                         consensus_weight=thm1a_lyapunov_weight(1.0, 2.0, len(p), thm.step))
    how = " (certified upper bound)" if res.status.startswith("certified") else ""
    return (f"FOCUS Thm 1(a), one round of Psi{how}",
            f"mu=1 L=2 p={','.join(f'{x:g}' for x in p)} tau={tau}, printed step "
            f"{res.params['step']:.3g}", res.printed, res.worst)


def _focus_rounds_row(p, tau, rounds):
    thm = bounds.get("focus.thm1a").evaluate(mu=1.0, L=2.0, p=np.asarray(p), tau=tau)
    step = thm.step
    res = pep.focus_rounds_rate(1.0, 2.0, p, tau, step, rounds, printed=thm.value**rounds)
    return (f"FOCUS Thm 1(a), {rounds} rounds from the proof's start",
            f"mu=1 L=2 p={','.join(f'{x:g}' for x in p)} tau={tau}, printed step {step:.3g}",
            res.printed, res.worst)


def _fedavg_row(n, tau, fraction, process, label):
    thm = bounds.get("focus.cor3.rate")
    step = fraction * thm.evaluate(mu=1.0, L=2.0, tau=tau).admissible_step
    printed = thm.evaluate(mu=1.0, L=2.0, tau=tau, step=step).value
    res = pep.fedavg_rate(1.0, 2.0, n, tau, step, process, homogeneous=True)
    return (f"FedAvg, identical clients: (66) with delta_q = sigma_G = 0{label}",
            f"mu=1 L=2 N={n} tau={tau} step={step:.3g}, {process!r}", printed, res.worst)


def _safari_rows():
    step4 = 1 / (16 * 30**0.5)
    thm5 = bounds.get("safari.thm5").evaluate(
        mu=1.0, L=2.0, local_steps=3, n_sampled=1, q=0.5, R=1, dist0=1.0, sigma2=0.0,
        sigma_s2=0.0, sigma_G2=0.0, step=0.02).value
    thm4 = bounds.get("safari.thm4").evaluate(
        L=2.0, local_steps=3, n_sampled=1, q=0.5, R=2, delta_f=1.0, sigma2=0.0, sigma_s2=0.0,
        sigma_G2=0.0, step=step4).value
    eta_c5, _ = thm5_steps(1.0, 2.0, 3, 0.02)
    s5 = pep.safari_rate(1.0, 2.0, 0.5, 3, eta_c5, 0.02, printed=thm5,
                         state_constraint=thm5_state_constraint(1.0, 2.0, 0.5, 3, 0.02))
    s4 = pep.safari_nonconvex_rate(2.0, 0.5, 3, thm4_client_step(3, step4), step4, 2,
                                   printed=thm4)
    return [("SAFARI Thm 5, one round, identical clients, q-condition imposed",
             "mu=1 L=2 q=0.5 K=3 eta_s=0.02", s5.printed, s5.worst),
            ("SAFARI Thm 4, 2 rounds, identical clients (upper bound: F* relaxed)",
             f"L=2 q=0.5 K=3 eta_s={s4.params['step_server']:.3g} (printed step)", s4.printed,
             s4.worst),
            _safari_hetero_row()]


def _safari_hetero_row():
    step = 0.1 / 3
    eta_c, _ = thm5_steps(1.0, 2.0, 2, step)
    res = pep.safari_hetero_rate(1.0, 2.0, 0.5, 2, eta_c, step, 3, n_sampled=1, eligible=[0, 1],
                                 sigma_g2_ratio=1.0,
                                 state_constraint=thm5_state_constraint(1.0, 2.0, 0.5, 2, step))
    return ("SAFARI Thm 5, one round (83), 3 heterogeneous clients, client 3 never sampled "
            "(upper bound: A5 at evaluated points)",
            "mu=1 L=2 q=0.5 K=2 eta_s=0.0333 m=1, dist0^2 <= 1, sigma_G^2 <= 1",
            one_round_bound(1.0, 2.0, 0.5, 2, step, 1.0), res.worst)


def _relaxed_rows():
    thm = bounds.get("focus.thm1b").evaluate(beta=1.0, L=2.0, p=np.array([0.5, 0.8]), tau=2)
    pl = pep.focus_pl_rate(1.0, 2.0, (0.5, 0.8), 2, thm.step, printed=thm.value,
                           consensus_weight=thm1b_consensus_weight(2.0, thm.step))
    kv = eq36_descent_rate(1.0, 3, 1 / 8)
    return [("FOCUS Thm 1(b), one round of Phi under PL (relaxation: upper bound)",
             f"beta=1 L=2 p=0.5,0.8 tau=2, step {pl.params['step']:.3g}", pl.printed,
             pl.worst),
            ("K-Vib eq. (36), one round, Q = sigma = 0 (LHS / descent term)",
             "L=1 R=3 eta=1/(8L)", kv.printed, kv.worst)]


def rows():
    """(theorem, constants, printed, worst case) for every row of the table."""
    from flbounds.participation import Bernoulli, UniformWithoutReplacement

    gd = pep.gd_rate(1.0, 2.0, 0.3)
    return [
        ("gradient descent (sanity: tight rate)", "mu=1 L=2 step=0.3", gd.printed, gd.worst),
        _focus_row((0.3, 0.5, 0.7, 0.9), 3),
        _focus_row((0.2, 0.9), 3),
        _focus_row((0.4, 0.5, 0.6, 0.7, 0.8, 0.9), 3),
        _focus_rounds_row((0.5, 0.8), 2, 2),
        _fedavg_row(3, 3, 1.0, UniformWithoutReplacement(3, 2), ""),
        _fedavg_row(3, 1, 0.25, UniformWithoutReplacement(3, 2), ""),
        _fedavg_row(3, 3, 1.0, Bernoulli([0.1, 0.1, 0.1]),
                    " (outside: empty rounds, W(S) undefined)"),
        *_safari_rows(),
        *_relaxed_rows(),
    ]


def markdown(table) -> str:
    lines = ["| theorem | constants | printed | worst case | ratio |", "|---|---|---|---|---|"]
    for name, constants, printed, worst in table:
        lines.append(f"| {name} | {constants} | {printed:.6f} | {worst:.6f} | "
                     f"{worst / printed:.4f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m verify.pep_table",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    table = rows()
    if args.json:
        print(json.dumps([dict(theorem=a, constants=b, printed=c, worst=d, ratio=d / c)
                          for a, b, c, d in table], indent=1))
    else:
        print(markdown(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
