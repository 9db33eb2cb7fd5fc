r"""Lemma 4 of FOCUS, corrected (the factor N + 1 of ``focus.lemma4.corrected``), with q read
as conditioned on a non-empty round: it fails (FOCUS).

Assumption 1 defines :math:`q_i=\mathbb E[\mathbb I_i/\sum_j\mathbb I_j]`, undefined on an
empty round. Two readings: an empty round counts 0 (:math:`\sum_iq_i=P(S\ne\emptyset)`, the
library's :meth:`aggregation_weights`), or the expectation is conditioned on a non-empty round
(:math:`\sum_iq_i=1`, what the proofs use when they write :math:`q^\top\mathbb EW_{S_r}=
q^\top` "since :math:`\sum_iq_i=1`"). Under Bernoulli participation the second divides every
q by :math:`1-P(S=\emptyset)`, which raises Lemma 4's step bound and its contraction
:math:`1-q_{\min}/3`; but a round without participants contracts nothing. The attack of
``focus.lemma4.corrected``, searching both readings, found the corrected bound exceeded under
the conditioned one (ratio 1.035, N = 6, p ~ 0.01, tau = 7); on the one-dimensional
rare-participation family of :mod:`.counterexample` the witness is small: two identical
clients :math:`f_i(x)=x^2/2`, p = 0.1, tau = 1, Lemma 4's largest step, the state after one
full round and three empty ones.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.participation import Bernoulli, subset_distribution
from flbounds.problems import Quadratic

from ..instances import consistent_state, lemma4_step
from ..one_round import ROUNDING, _expect_all
from . import LEMMA4, lemma4_rhs
from .corrected import corrected_constant

#: the witness (N, p, empty rounds) and the smallest instance (one client)
WITNESS = (2, 0.1, 3)
SMALLEST = (1, 0.1, 1)


def conditioned_q(p) -> np.ndarray:
    """q of Bernoulli(p) conditioned on a non-empty round (sum 1)."""
    process = Bernoulli(np.asarray(p, dtype=float))
    return process.aggregation_weights() / (1.0 - process.empty_probability())


def conditioned_sides(n_clients: int, p: float, empty_rounds: int, local_steps: int = 1):
    r"""(LHS, RHS, q_min, step) of the corrected eq. (97) with the conditioned q, on identical
    clients :math:`f_i(x)=x^2/2` at Lemma 4's largest step (for that q), from the state after
    one full round and ``empty_rounds`` empty ones (as :func:`.counterexample.lemma4_parts`);
    exact expectation over the :math:`2^N` sets."""
    problem = Quadratic(np.ones((n_clients, 1, 1)), np.zeros((n_clients, 1)))
    masks, probs = subset_distribution(Bernoulli(np.full(n_clients, p)))
    q_min = float(conditioned_q(np.full(n_clients, p)).min())
    step = lemma4_step(problem.L, n_clients, local_steps, q_min)
    x_prev = np.array([1.0 - n_clients * empty_rounds * step])
    state = consistent_state(problem, np.ones((n_clients, 1)), x_prev, step)
    lhs, grad = _expect_all(problem, state, masks, probs, step, local_steps,
                            (lambda s: s.consensus_error(),
                             lambda s: float(np.sum(problem.gradient(s.x) ** 2))))
    rhs = lemma4_rhs(q_min=q_min, n=n_clients, step=step, consensus=state.consensus_error(),
                     grad=grad, constant=corrected_constant(q_min, n_clients))
    return lhs, rhs, q_min, step


def conditioned_instance(n_clients: int, p: float, local_steps: int = 1) -> dict:
    """The values Lemma 4's hypotheses read, with the conditioned q."""
    problem = Quadratic(np.ones((n_clients, 1, 1)), np.zeros((n_clients, 1)))
    q = conditioned_q(np.full(n_clients, p))
    return dict(q=q, problem=problem, mu=1.0, L=1.0, tau=local_steps,
                step=lemma4_step(1.0, n_clients, local_steps, float(q.min())))


@claim("focus.lemma4.corrected_conditioned_q", ref="Lemma 4, eq. (97) corrected; Assumption 1 "
       "(q conditioned on a non-empty round)", kind="statement", expected="violated",
       result=LEMMA4, parts=("rate",),
       statement="The corrected eq. (97) (constant 16 (N+1)/(3 q_min)) with q_i = E[1_i/|S| | "
                 "S nonempty] (sum q = 1): E||1 x_{r+1} - X_{(r+1)tau}||^2 <= (1 - q_min/3)"
                 "||1 x_r - X_{r tau}||^2 + 16 (N+1) eta^2 N^2/(3 q_min) E||grad F(x_{r+1})||^2.",
       quick=dict(), full=dict())
def corrected_conditioned_q(*, rng):
    r"""The witness (module docstring): N = 2, p = 0.1, :math:`\tau=1`, three empty rounds,
    exact expectation over the four sets. Measured LHS, theoretical RHS; expected
    **violated** (ratio 1.075; with the library's reading of q, an empty round counting 0,
    the same state gives 0.24, and ``focus.lemma4.corrected`` holds). Details: the ratio at
    the smallest instance (one client, p = 0.1, one empty round: 1.21) and the witness's
    ratio under the other reading. Tolerance: rounding, 1e-12 relative."""
    n, p, k = WITNESS
    lhs, rhs, q_min, step = conditioned_sides(n, p, k)
    small = conditioned_sides(*SMALLEST)
    return Evidence(measured=lhs, theoretical=rhs, relation="<=",
                    instance=conditioned_instance(n, p),
                    tolerance=Tolerance.rounding(ROUNDING * rhs, "exact enumeration of 2^N "
                                                 "sets; relative rounding of sums"),
                    details={"ratio": lhs / rhs, "q_min_conditioned": q_min, "step": step,
                             "witness": {"N": n, "p": p, "empty_rounds": k, "tau": 1},
                             "smallest_instance": {"N": SMALLEST[0], "p": SMALLEST[1],
                                                   "empty_rounds": SMALLEST[2],
                                                   "ratio": small[0] / small[1]}})
