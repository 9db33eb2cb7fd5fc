r"""Theorem 1 of SAFARI (impossibility): the result, its parts, its hypotheses and its printed
event probability. Claims: :mod:`.exact` (the proof's probabilities, exactly),
:mod:`.monte_carlo` (the construction with four learners), :mod:`.attacks`; the threshold
illustration is in :mod:`verify.safari.figure1`.

Statement: let H be a non-trivial hypothesis space and L a learner for an FL system. There
exist a participation process F with system capacity omega = m/M, a distribution P and a
target f in H with min_h R_P(h, f) = 0 such that

.. math::  P_{S\sim P}[R_P(\mathcal L(\mathcal F(S)), f) > (1-\omega)/8] > 1/20,

a bound independent of n: FL with incomplete participation is not PAC-learnable.

Instances carry ``M``, ``m``, ``n`` (clients, participants, samples per client) and
``targets`` (the two targets' labels at (x_1, x_2)).
"""

from __future__ import annotations

from flbounds.ledger import bound, hypothesis, integer, result
from flbounds.pac import impossibility_event_probability
from flbounds.theory.impossibility import TARGETS


@hypothesis("partial", "incomplete participation: m < M clients take part (omega = m/M < 1)")
def partial_participation(*, M, m):
    return 0 <= m < M


@hypothesis("nontrivial", "H is non-trivial: two targets f_1, f_2 in H agree on x_1 and "
                          "disagree on x_2")
def nontrivial(*, targets):
    (a1, a2), (b1, b2) = targets["f1"], targets["f2"]
    return a1 == b1 and a2 != b2


@hypothesis("samples", "(1 - omega) M n = (M - m) n >= 1 (the proof's step to e^{-1/6})")
def enough_samples(*, M, m, n):
    return (M - m) * n >= 1


def grid_instances(grid) -> list[dict]:
    """One instance per (M, m, n) of a grid, with the construction's two targets."""
    return [dict(M=M, m=m, n=n, targets=TARGETS) for M, m, n in grid]


THM1 = result(
    "safari.thm1", ref="Theorem 1", title="impossibility: FL with incomplete participation is "
    "not PAC learnable",
    parts={"bound": "some F, P and f in H have P_S[R_P(L(F(S)), f) > (1 - omega)/8] > 1/20",
           "not_pac": "the bound does not depend on n: the error does not vanish as n grows "
                      "(not PAC-learnable)",
           "chernoff": "proof: s_hat ~ B(Mn, eps) and P[s_hat >= (1 - omega)Mn] <= "
                       "exp(-(1 - omega)Mn/6) <= e^{-1/6} <= 17/20",
           "event": "proof: P[S in calS] > 3/20 for the event calS = {s_hat < (1 - omega)Mn}",
           "bad_error": "proof: on calS the training set is mn copies of x_1 for both targets, "
                        "so R(h_S, f_1) + R(h_S, f_2) = P(x_2) = 4 eps",
           "safl": "after Theorem 1 (Sec. 3): server data drawn from P remove the failure "
                   "(SA-FL restores learnability)"},
    hypotheses=(partial_participation, nontrivial,
                enough_samples.only("chernoff", "event")))


def _check_m(*, n_clients, n_participating, **_):
    if not n_participating < n_clients:
        raise ValueError(f"n_participating must be < n_clients, got {n_participating} >= "
                         f"{n_clients}")


@bound("safari.thm1", ref="Thm 1 (not PAC-learnable), Appendix A",
       constants=(integer("n_clients", "M clients"),
                  integer("n_participating", "m participating (m < M)", low=0),
                  integer("n_samples", "n samples per client")),
       check=_check_m, quantity="P[participating data hold only copies of x_1]")
def thm1(*, n_clients, n_participating, n_samples):
    """Exact binomial probability of the indistinguishability event."""
    return impossibility_event_probability(n_clients, n_participating, n_samples)
