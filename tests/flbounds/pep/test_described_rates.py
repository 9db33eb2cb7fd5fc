"""The rates built from descriptions (flbounds.pep.server_steps, server_hetero, descent, pl,
tracking.focus_rounds_rate) reproduce the values of the hand-built SDPs they replace.

``BEFORE``: each case's worst case computed by the hand-built builders (the tree at
a26d03c, before the descriptions), with its solve time there in seconds. The SDPs are the
same problems written in another order, so the accepted solves agree within the accuracy an
accepted solve guarantees (``gap_tolerance``: 1e-6 relative, :mod:`flbounds.pep.sdp`).
"""

import pytest

from flbounds import pep
from flbounds.ledger import bounds
from flbounds.pep import gap_tolerance
from verify.focus.pep_conditions import thm1b_consensus_weight
from verify.safari.pep_conditions import thm4_client_step, thm5_state_constraint, thm5_steps

ETA_C5 = thm5_steps(1.0, 2.0, 3, 0.02)[0]
C5 = thm5_state_constraint(1.0, 2.0, 0.5, 3, 0.02)
STEP4 = 1 / (16 * 30**0.5)
ETA_CH = thm5_steps(1.0, 2.0, 2, 0.1 / 3)[0]
CH = thm5_state_constraint(1.0, 2.0, 0.5, 2, 0.1 / 3)
PL_STEP = bounds.get("focus.thm1b").evaluate(beta=1.0, L=2.0, p=[0.5, 0.8], tau=2).step
PL_WEIGHT = thm1b_consensus_weight(2.0, PL_STEP)

CASES = {
    "safari_rate/thm5": lambda: pep.safari_rate(1.0, 2.0, 0.5, 3, ETA_C5, 0.02,
                                                state_constraint=C5),
    "safari_rate/free": lambda: pep.safari_rate(1.0, 2.0, 0.5, 3, 0.05, 0.02),
    "safari_rate/q0.3": lambda: pep.safari_rate(1.0, 2.0, 0.3, 2, 0.1, 0.05),
    "safari_rate/q0": lambda: pep.safari_rate(1.0, 2.0, 0.0, 2, 0.1, 0.3),
    "safari_rate/expanding": lambda: pep.safari_rate(1.0, 2.0, 0.5, 1, 16 / 9, 2 / 3,
                                                     state_constraint=(1.0, 1.0)),
    "safari_rate/drop": lambda: pep.safari_rate(1.0, 2.0, 0.5, 3, ETA_C5, 0.02,
                                                drop_server_step=True),
    "safari_nonconvex_rate/thm4": lambda: pep.safari_nonconvex_rate(
        2.0, 0.5, 3, thm4_client_step(3, STEP4), STEP4, 2),
    "safari_nonconvex_rate/q0.3R3": lambda: pep.safari_nonconvex_rate(2.0, 0.3, 2, 0.02, 0.03,
                                                                      3),
    "safari_nonconvex_rate/q1": lambda: pep.safari_nonconvex_rate(2.0, 1.0, 1, 0.02, 0.01, 2),
    "safari_nonconvex_rate/drop": lambda: pep.safari_nonconvex_rate(
        2.0, 0.5, 2, 0.02, 0.03, 2, drop_server_step=True),
    "safari_hetero_rate/table": lambda: pep.safari_hetero_rate(
        1.0, 2.0, 0.5, 2, ETA_CH, 0.1 / 3, 3, n_sampled=1, eligible=[0, 1],
        sigma_g2_ratio=1.0, state_constraint=CH),
    "safari_hetero_rate/full": lambda: pep.safari_hetero_rate(1.0, 2.0, 0.5, 2, ETA_CH,
                                                              0.1 / 3, 2, sigma_g2_ratio=0.5),
    "safari_hetero_rate/q0": lambda: pep.safari_hetero_rate(1.0, 2.0, 0.0, 2, ETA_CH, 0.1 / 3,
                                                            2, sigma_g2_ratio=0.5),
    "safari_hetero_rate/zero": lambda: pep.safari_hetero_rate(
        1.0, 2.0, 0.5, 2, ETA_CH, 0.1 / 3, 3, sigma_g2_ratio=0.0, state_constraint=CH),
    "safari_hetero_rate/drop": lambda: pep.safari_hetero_rate(
        1.0, 2.0, 0.5, 2, ETA_CH, 0.1 / 3, 2, sigma_g2_ratio=0.5, drop_server_step=True),
    "focus_rounds_rate/table": lambda: pep.focus_rounds_rate(1.0, 2.0, (0.5, 0.8), 2, 0.00726,
                                                             2),
    "focus_rounds_rate/quadratic": lambda: pep.focus_rounds_rate(
        1.0, 2.0, (0.5, 0.8), 2, 0.05, 1, function_class="quadratic"),
    "focus_rounds_rate/R3N1": lambda: pep.focus_rounds_rate(1.0, 2.0, (0.6,), 2, 0.1, 3),
    "fedavg_descent_rate/eq36": lambda: pep.fedavg_descent_rate(
        1.0, 3, 1 / 24, gradient_weight=(1 - 10 / 64) / 16, descent_weight=16.0),
    "fedavg_descent_rate/global": lambda: pep.fedavg_descent_rate(
        2.0, 2, 0.1, step_global=1.5, gradient_weight=0.3, descent_weight=2.0),
    "focus_pl_rate/table": lambda: pep.focus_pl_rate(1.0, 2.0, (0.5, 0.8), 2, PL_STEP,
                                                     consensus_weight=PL_WEIGHT),
    "focus_pl_rate/half_step": lambda: pep.focus_pl_rate(
        1.0, 2.0, (0.5, 0.8), 2, PL_STEP / 2, consensus_weight=thm1b_consensus_weight(
            2.0, PL_STEP / 2)),
}

#: name -> (worst case of the hand-built builder, its seconds)
BEFORE = {
    "safari_rate/thm5": (0.9291815873079642, 6.7),
    "safari_rate/free": (0.8477459446473345, 0.1),
    "safari_rate/q0.3": (0.8285799998950323, 0.1),
    "safari_rate/q0": (0.4900000091164609, 0.1),
    "safari_rate/expanding": (1.9839926035602272e-11, 0.1),
    "safari_rate/drop": (0.9489815893782885, 0.1),
    "safari_nonconvex_rate/thm4": (22.375030671292198, 1.1),
    "safari_nonconvex_rate/q0.3R3": (8.680555235239511, 5.3),
    "safari_nonconvex_rate/q1": (26.509805294483158, 0.1),
    "safari_nonconvex_rate/drop": (13.0102127247133, 0.2),
    "safari_hetero_rate/table": (0.9190631156512822, 0.5),
    "safari_hetero_rate/full": (0.8840961117861773, 0.2),
    "safari_hetero_rate/q0": (0.9344444452022519, 0.2),
    "safari_hetero_rate/zero": (0.8840856236533761, 0.1),
    "safari_hetero_rate/drop": (0.9168738945492997, 0.2),
    "focus_rounds_rate/table": (0.9430275120765241, 0.3),
    "focus_rounds_rate/quadratic": (0.8099999988371462, 0.2),
    "focus_rounds_rate/R3N1": (0.5161690716543393, 0.3),
    "fedavg_descent_rate/eq36": (0.029249992808278898, 0.1),
    "fedavg_descent_rate/global": (0.7610349861603114, 0.1),
    "focus_pl_rate/table": (0.9819369315413121, 6.9),
    "focus_pl_rate/half_step": (0.9908022261911847, 11.7),
}
SLOW = {name for name, (_, seconds) in BEFORE.items() if seconds > 8}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n
                                  for n in BEFORE])
def test_description_reproduces_the_hand_built_value(name):
    worst, _ = BEFORE[name]
    res = CASES[name]()
    assert res.worst == pytest.approx(worst, abs=gap_tolerance(worst))


def test_every_case_has_a_before_value():
    assert set(CASES) == set(BEFORE)


#: the SAFARI cases of CASES without a state constraint, as (q, K, eta_c, eta_s, drop): a
#: Mixture through the one entry point flbounds.pep.worst_case
SAFARI_MIXTURES = {
    "safari_rate/free": (0.5, 3, 0.05, 0.02, False),
    "safari_rate/q0.3": (0.3, 2, 0.1, 0.05, False),
    "safari_rate/q0": (0.0, 2, 0.1, 0.3, False),
    "safari_rate/drop": (0.5, 3, ETA_C5, 0.02, True),
}


@pytest.mark.parametrize("name", sorted(SAFARI_MIXTURES))
def test_worst_case_of_the_safari_mixture_reproduces_the_pinned_rate(name):
    q, K, eta_c, eta_s, drop = SAFARI_MIXTURES[name]
    worst, _ = BEFORE[name]
    res = pep.worst_case(pep.safari_round(q, K, eta_c, eta_s, drop_server_step=drop),
                         pep.Setting(1, 1.0, 2.0, identical=True), pep.distance())
    assert res.worst == pytest.approx(worst, abs=gap_tolerance(worst))
    # branches of probability 0 are left out of the SDP (flbounds.pep.scenarios.branches)
    assert [b["probability"] for b in res.params["branches"]] == [w for w in (q, 1 - q) if w]
