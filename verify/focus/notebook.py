r"""The authors' reference notebook for Figure 4 of FOCUS (``figures/focus.ipynb`` of
``github.com/BichengYing/FedASL`` at 72ea664): two places where the code differs from what it
names. Not a result of the paper: a result of its own (``focus.notebook``), as for FedALS'
released code.

- **MIFA's update.** The notebook's ``MIFA.pull_model`` stores ``x_prev = self.x`` (the
  client's *old local model*) before overwriting ``self.x`` with the server model, and
  ``push_model`` returns ``x_prev - x``. MIFA [Gu et al., 2021] stores
  :math:`G_i = x_r - x^{(r)}_{\tau,i}`, measured from the model the client just pulled. The
  notebook's update therefore carries the server's drift since the client's last visit. Under
  full participation the stale parts telescope (both give :math:`x_{r+1}` = the mean of the
  clients' local models) and the two coincide; under partial participation the notebook's
  curve diverges (Figure 4's "we do not understand why MIFA diverges"; the notebook's own
  data blow up to ~7e30, our draw of them to ~5e52 after 500 rounds).
- **The q_i bars.** The inset of the "Arbitrary Participation" panel is a bar chart labelled
  :math:`q_i` of the categorical weights ``prob`` it samples with
  (``np.random.choice(16, 4, replace=False, p=prob)``). Successive sampling without
  replacement includes client i with probability :math:`\pi_i \ne 4\,\mathrm{prob}_i`, so its
  averaging weight :math:`q_i = \pi_i/4` (Assumption 1) is not the bar.

:func:`notebook_mifa` mirrors the notebook's arithmetic (column vectors, gradients
:math:`A_i^\top(A_i x - b_i)` on the client's rows, the server table ``server_g``);
``pull_fixed=True`` is the one-line fix (``x_prev`` = the pulled model). Instances carry
``problem`` (the least-squares clients), ``step``, ``local_steps``, ``plan``; the bars'
instances carry ``w`` and ``m``.
"""

from __future__ import annotations

import numpy as np

from flbounds.algorithms import mifa
from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.participation import Cyclic, UniformWithoutReplacement, WeightedWithoutReplacement
from flbounds.problems import Quadratic
from flbounds.tolerances import EPS

from ..predicates import at_most
from .assumption1 import case3

#: the notebook's Figure 4 set-up: 16 clients of 500 rows, d = 50, noise 0.1, tau = 3
NB_CLIENTS, NB_ROWS, NB_DIM, NB_NOISE, NB_TAU = 16, 500, 50, 0.1, 3
NB_UNIFORM_STEP, NB_M = 1.5e-4, 4  # the "Uniform Participation" panel: 4 of 16, eta = 1.5e-4
#: the smallest instance that shows the MIFA defect: two one-row clients (a_1 = 1, a_2 = sqrt 2,
#: b_i = a_i, so x* = 1), one client per round in turn, tau = 1, eta = 0.1, 50 rounds
SMALL_ROWS = (np.array([[1.0]]), np.array([[np.sqrt(2.0)]]))
SMALL_STEP, SMALL_ROUNDS = 0.1, 50


def notebook_weights() -> np.ndarray:
    """The notebook's ``prob``: ``np.random.seed(5); prob = rand(16) + 0.01; prob /= sum``,
    drawn from a legacy ``RandomState(5)`` (same stream, no global seed)."""
    prob = np.random.RandomState(5).rand(NB_CLIENTS) + 0.01
    return prob / prob.sum()


def notebook_data(rng):
    """The notebook's ``generate_linear`` with a Generator: rows scaled by U(0.5, 1), x_o ~
    N(0, I), b = A x_o + 0.1 N(0, 1), client i holding rows i::16. Returns (rows, targets)."""
    n = NB_ROWS * NB_CLIENTS
    A = ((rng.random(n) + 1) / 2)[:, None] * rng.standard_normal((n, NB_DIM))
    b = A @ rng.standard_normal((NB_DIM, 1)) + NB_NOISE * rng.standard_normal((n, 1))
    return [A[i::NB_CLIENTS] for i in range(NB_CLIENTS)], [b[i::NB_CLIENTS]
                                                         for i in range(NB_CLIENTS)]


def least_squares(rows, targets) -> Quadratic:
    """f_i(x) = ||A_i x - b_i||^2 / 2 as flbounds' quadratic (A_i'A_i, A_i'b_i): same
    gradients, a constant apart in value."""
    return Quadratic(np.stack([a.T @ a for a in rows]),
                     np.stack([(a.T @ t).ravel() for a, t in zip(rows, targets, strict=True)]))


def notebook_mifa(rows, targets, plan, *, step, local_steps, pull_fixed=False) -> np.ndarray:
    """The notebook's MIFA (class ``MIFA`` and its branch of ``run_exp``), from x = 0.

    Each participant i: ``pull_model`` (x_prev = its old local model, or with ``pull_fixed``
    the pulled server model), ``local_update`` (tau steps x -= eta A_i'(A_i x - b_i)),
    ``push_model`` (x_prev - x into column i of ``server_g``); then the server steps
    x -= mean of ``server_g`` over all clients. Returns the iterates, shape (R + 1, d).
    """
    n_clients, dim = len(rows), rows[0].shape[1]
    local = np.zeros((n_clients, dim, 1))
    server_g = np.zeros((dim, n_clients))
    x = np.zeros((dim, 1))
    out = [x.ravel().copy()]
    for mask in np.asarray(plan, dtype=bool):
        for i in np.flatnonzero(mask):
            x_prev = x.copy() if pull_fixed else local[i].copy()
            z = x.copy()
            for _ in range(local_steps):
                z = z - step * rows[i].T.dot(rows[i].dot(z) - targets[i])
            local[i] = z
            server_g[:, [i]] = x_prev - z
        x = x - np.mean(server_g, axis=1, keepdims=True)
        out.append(x.ravel().copy())
    return np.array(out)


@hypothesis("stable_local", "the local GD steps are stable: eta L <= 1 (L the largest "
                            "eigenvalue of the A_i'A_i), as in every panel of the notebook")
def stable_local(*, problem, step):
    return at_most(step * problem.L, 1.0)


NOTEBOOK = result(
    "focus.notebook", ref="Reference notebook (figures/focus.ipynb)", kind="section",
    title="the authors' Figure 4 notebook (not in the paper; where it differs)",
    parts={"mifa": "the MIFA baseline of Figure 4 (class MIFA, run_exp) computes MIFA "
                   "[Gu et al., 2021]: each participant's update measured from the model it "
                   "pulls",
           "q_bars": "the bar chart labelled q_i of the Arbitrary Participation panel shows the "
                     "averaging weights q_i = pi_i/m of the panel's sampling (m = 4 of 16, "
                     "without replacement, categorical weights prob)"},
    hypotheses=(stable_local.only("mifa"), case3.only("q_bars")))


def _mifa_cases(rng, n_rounds):
    """(name, rows, targets, plan, step, tau): the smallest instance (a deterministic plan)
    and the notebook's uniform panel (4 of 16 drawn from ``rng``)."""
    small_targets = tuple(r.copy() for r in SMALL_ROWS)
    small_plan = Cyclic(2, 1).plan(None, SMALL_ROUNDS)
    rows, targets = notebook_data(rng)
    plan = UniformWithoutReplacement(NB_CLIENTS, NB_M).plan(rng, n_rounds)
    return [("smallest", SMALL_ROWS, small_targets, small_plan, SMALL_STEP, 1),
            ("notebook_uniform", rows, targets, plan, NB_UNIFORM_STEP, NB_TAU)]


def _mifa_rows(rng, n_rounds, pull_fixed):
    rows_out, measured, tolerance, instances = [], [], [], []
    for name, rows, targets, plan, step, tau in _mifa_cases(rng, n_rounds):
        problem = least_squares(rows, targets)
        ref = mifa(problem, plan, step=step, local_steps=tau, x0=np.zeros(problem.dim)).x
        got = notebook_mifa(rows, targets, plan, step=step, local_steps=tau,
                            pull_fixed=pull_fixed)
        scale = max(1.0, float(np.abs(ref).max()))
        # one rounding per gradient evaluation: A'(Ax - b) vs (A'A)x - A'b, 16 ulp each,
        # accumulated over R tau steps of a stable (eta L <= 1) iteration
        tolerance.append(16 * plan.shape[0] * tau * EPS * scale)
        diff = float(np.nanmax(np.abs(got - ref))) if np.all(np.isfinite(got)) else np.inf
        measured.append(diff)
        x_star = problem.x_star
        rows_out.append(dict(
            case=name, n_clients=len(rows), dim=problem.dim, tau=tau, step=step,
            n_rounds=int(plan.shape[0]), per_round=int(plan.sum(axis=1).max()),
            relative_error_final=float(np.linalg.norm(got[-1] - x_star) / np.linalg.norm(x_star)),
            mifa_relative_error_final=float(np.linalg.norm(ref[-1] - x_star)
                                            / np.linalg.norm(x_star)),
            max_abs_diff=diff))
        instances.append(dict(problem=problem, step=step, local_steps=tau))
    return rows_out, np.array(measured), np.array(tolerance), instances


@claim("focus.code.notebook_mifa_stale_model", ref="Reference notebook, class MIFA (Fig. 4)",
       kind="code", expected="violated", result=NOTEBOOK, parts=("mifa",),
       statement="The notebook's MIFA baseline computes MIFA's iterates: each participant's "
                 "stored update is measured from the server model it pulled.",
       quick=dict(n_rounds=500), full=dict(n_rounds=500))
def notebook_mifa_stale_model(*, rng, n_rounds):
    """Mirror of the notebook's MIFA against flbounds.algorithms.mifa on the same plan.
    Smallest instance: N = 2 one-row clients (a = 1, sqrt 2; x* = 1), d = 1, one client per
    round in turn, tau = 1, eta = 0.1: MIFA converges, the notebook's iterates grow by about
    x30 every 10 rounds (relative error ~3e5 after 50 rounds). The notebook's own uniform
    panel (N = 16, d = 50, 4 of 16, tau = 3, eta = 1.5e-4, 500 rounds, our draw of its data)
    blows up the same way. measured: max_r ||x_nb - x_MIFA||_inf per instance; theoretical 0;
    tolerance: rounding (16 ulp per gradient step, R tau steps, times max|x|). Expected
    ``violated``; focus.code.notebook_mifa_fixed shows the one-line fix removes it."""
    rows, measured, tol, instances = _mifa_rows(rng, n_rounds, pull_fixed=False)
    return Evidence(measured=measured, theoretical=np.zeros(measured.size), relation="==",
                    tolerance=Tolerance.rounding(tol, "16 ulp per gradient step, R tau steps, "
                                                 "times max|x| of MIFA's iterates"),
                    instance=instances,
                    details={"rows": rows,
                             "smallest_instance": {"clients": "a_1 = 1, a_2 = sqrt 2, b = a",
                                                   "plan": "client 1, 2, 1, 2, ...",
                                                   "tau": 1, "step": SMALL_STEP,
                                                   "n_rounds": SMALL_ROUNDS},
                             "defect": "MIFA.pull_model: x_prev = self.x (old local model) "
                                       "instead of the pulled server model"})


@claim("focus.code.notebook_mifa_fixed", ref="Reference notebook, class MIFA, one line fixed",
       kind="code", expected="holds", corrects="focus.code.notebook_mifa_stale_model",
       result=NOTEBOOK, parts=("mifa",),
       statement="With pull_model's x_prev set to the pulled server model, the notebook's MIFA "
                 "computes MIFA's iterates (flbounds.algorithms.mifa) to rounding.",
       quick=dict(n_rounds=500), full=dict(n_rounds=500))
def notebook_mifa_fixed(*, rng, n_rounds):
    """Same instances and plans as focus.code.notebook_mifa_stale_model; the only change is
    x_prev = x (pulled). measured: max_r ||x_nb - x_MIFA||_inf (about 1e-16 relative: the
    gradient is A'(Ax - b) in the notebook, (A'A)x - A'b in flbounds); tolerance: 16 ulp per
    gradient step over R tau steps, times max|x|. Expected ``holds``."""
    rows, measured, tol, instances = _mifa_rows(rng, n_rounds, pull_fixed=True)
    return Evidence(measured=measured, theoretical=np.zeros(measured.size), relation="==",
                    tolerance=Tolerance.rounding(tol, "16 ulp per gradient step, R tau steps, "
                                                 "times max|x| of MIFA's iterates"),
                    instance=instances, details={"rows": rows})


@claim("focus.code.notebook_q_bars", ref="Reference notebook, Fig. 4 inset 'q_i'",
       kind="code", expected="violated", result=NOTEBOOK, parts=("q_bars",),
       statement="The bars labelled q_i in the Arbitrary Participation panel (the sampling "
                 "weights prob) are the averaging weights q_i = pi_i/4 of the panel's "
                 "sampling, i.e. its inclusion probabilities are pi_i = 4 prob_i.",
       quick=dict(), full=dict())
def notebook_q_bars(*, rng):
    """Exact inclusion probabilities pi_i of successive sampling of 4 of 16 without
    replacement with the notebook's prob (RandomState(5), as its np.random.seed(5)), against
    the 4 prob_i the bars imply: off by up to 0.033 (q_i = pi_i/4 vs prob_i: up to 8.1e-3).
    Smallest reproducing instance: N = 3, m = 2, w = (0.2, 0.3, 0.5) (pi = (0.486, 0.675,
    0.839) vs 2w = (0.4, 0.6, 1.0)); m = 1 has pi = w. The label is the paper's own: its
    Case 3 calls the categorical sampling weights q_i, the symbol of the averaging weights
    (focus.assumption1.case3_weights_are_q), so the notebook's 'q_i' inherits the paper's
    notation clash rather than adding one. Tolerance: rounding of the exact subset
    recursion."""
    cases = [(notebook_weights(), NB_M), (np.array([0.2, 0.3, 0.5]), 2)]
    pis = [WeightedWithoutReplacement(w, m).inclusion_probabilities() for w, m in cases]
    return Evidence(measured=np.concatenate(pis),
                    theoretical=np.concatenate([m * w for w, m in cases]), relation="==",
                    tolerance=Tolerance.rounding(1e-12, "subset recursion over <= 2^16 sets"),
                    instance=[dict(w=w, m=m) for w, m in cases],
                    details={"prob": cases[0][0], "pi": pis[0],
                             "max_abs_pi_minus_m_prob": float(np.abs(pis[0] - NB_M
                                                                     * cases[0][0]).max()),
                             "max_abs_q_minus_prob": float(np.abs(pis[0] / NB_M
                                                                  - cases[0][0]).max()),
                             "smallest_instance": {"w": cases[1][0], "m": 2, "pi": pis[1]}})
