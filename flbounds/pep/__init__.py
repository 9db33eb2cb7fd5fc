r"""Performance estimation: the worst case of an FL round over a whole function class.

A performance-estimation problem (Drori and Teboulle 2014; Taylor, Hendrickx and Glineur
2017) computes the exact worst case of a first-order method over, e.g., every L-smooth
mu-strongly convex function, as a small semidefinite program over the Gram matrix of the
iterates and gradients. The SDPs are built with PEPit (its function classes and interpolation
conditions) and solved with Clarabel, SCS as the fallback; a solve is accepted only with an
``optimal`` status and a primal-dual gap within tolerance (:mod:`flbounds.pep.sdp`), so an
inaccurate solve raises :class:`PEPSolveError` instead of returning a number.

Public functions return a frozen :class:`WorstCase` (``worst``, ``printed``, ``gap``, SDP size,
solve time, solver). The library looks no paper's bound up: every step is an argument (there
is no default step), and where the comparison is a theorem's printed rate, ``printed`` is the
value the caller passes (``printed=``; None without one), e.g. from the theorem's bound
(``flbounds.ledger.api.bounds.get(id)``, as ``flbounds bound`` shows it). :func:`gd_rate` reports
gradient descent's classical rate.

- :func:`gd_rate` (the sanity case), :func:`fedavg_rate`, :func:`focus_rate` (one-round
  Lyapunov contraction), :func:`focus_rounds_rate` (R rounds from the proof's start).
- :func:`focus_pl_rate`: one FOCUS round under PL, a relaxation (an upper bound on the PL
  class's worst case, :mod:`flbounds.pep.pl`). FOCUS's Lyapunov weight is an argument
  (``consensus_weight``) of both, like the step.
- :func:`fedavg_descent_rate`: one FedAvg round's weighted squared gradient against its
  decrease over L-smooth non-convex :math:`f` (a one-round descent inequality's
  deterministic part, weights the caller's; :mod:`flbounds.pep.descent`).
- :func:`safari_rate` (SAFARI, one strongly convex round, optionally under a constraint on
  the round's state) and :func:`safari_nonconvex_rate` (R non-convex rounds), identical
  clients without noise (:mod:`flbounds.pep.server_steps`); :func:`safari_hetero_rate` (one
  round, heterogeneous clients with :math:`\sigma_G^2 \le s`: a relaxation, an upper bound;
  :mod:`flbounds.pep.server_hetero`). Both steps are arguments.
- :func:`~flbounds.pep.witness.fedavg_witness` and
  :func:`~flbounds.pep.witness.focus_rounds_witness` (quadratic clients fitted to an optimal
  Gram matrix, :func:`~flbounds.pep.witness.quadratic_instance`, then replayed through
  ``flbounds.algorithms`` by :func:`~flbounds.pep.witness.replay_fedavg` /
  :func:`~flbounds.pep.witness.replay_focus_rounds`); SAFARI's 1-D witnesses in
  :mod:`flbounds.pep.server_steps_witness` and :mod:`flbounds.pep.server_hetero_witness`.

Any FL round as a description (:mod:`flbounds.pep.describe`, its built-in local updates and
server steps in :mod:`flbounds.pep.steps`): client and server state, a local update (gradient
steps, tracking, control variates, a proximal step, or a user-written step over PEPit
points), push with an aggregation rule (:class:`Uniform`, :class:`Sum`,
:class:`Unbiased`, :class:`FixedWeights`, :class:`Normalized`), a server step, and a
participation law whose expectation is exact through the moments of the round's random
coefficients (:mod:`flbounds.pep.expect`); :func:`worst_case` builds and solves its PEP
(:mod:`flbounds.pep.engine`). FedAvg, FOCUS, SCAFFOLD and FedAvg with server momentum are
written that way in :mod:`flbounds.pep.described`, SAFARI (a :class:`Mixture` of a client
round and a server step), FedAU, MIFA and K-Vib's sampled step in
:mod:`flbounds.pep.described_server`; :mod:`flbounds.pep.scenarios` unrolls described rounds
over their random branches (several rounds, function values at the next state, relaxations
imposed where gradients are taken), from which every rate above is built, and solves a
random round's worst case (:func:`mixture_worst_case`);
:mod:`flbounds.pep.replay` runs the same descriptions on arrays (a quadratic problem, one
participating set at a time), which the tests compare with ``flbounds.algorithms``;
:func:`replay_measure` is its exact ratio over the participation argument :func:`worst_case`
takes, and :func:`worst_instance` the worst case's instance (quadratic clients and a start
fitted to the solved Gram matrix, a :class:`FittedInstance`) that it replays. Before any SDP is
built, :func:`worst_case` and :func:`build` name the argument at fault and run the round and
the measure once on random vectors (:mod:`flbounds.pep.inputs`), so a point read that the
state lacks or a message not sent is a ``ValueError`` naming it.
:mod:`flbounds.pep.bridge` writes a FedAvg-family algorithm once, as a :class:`LocalRule`
(:func:`gradient_steps`, :func:`proximal_steps`, :func:`control_variates`), and gives both its
simulated run (:func:`simulate`, :func:`local_update`) and its described round
(:func:`pep_round`).

Clients in symmetry classes (same inclusion probability, aggregation weight and function
class; :class:`Classes`): ``worst_case(..., classes=...)`` or :func:`worst_case_symmetric`
solve the same PEP with one representative per class, an SDP whose size does not grow with
N (:mod:`flbounds.pep.symmetric`, derivation in its docstring; the smooth non-convex class
included, certified bounds in :mod:`flbounds.pep.certify_symmetric` and, without a-priori
bounds, :mod:`flbounds.pep.certify_symmargin`, sampling with replacement in
:mod:`flbounds.pep.counts`, replayed by :mod:`flbounds.pep.replay`);
:func:`~flbounds.pep.symmetric_witness.symmetric_witness` rebuilds one quadratic per class
for any described round and replays its description at the full N;
:func:`~flbounds.pep.symmetric_witness.fedavg_symmetric_witness`,
:func:`~flbounds.pep.symmetric_witness.focus_symmetric_witness` and
:func:`~flbounds.pep.symmetric_witness.scaffold_symmetric_witness` replay through
``flbounds.algorithms``.

Rates over many rounds (:mod:`flbounds.pep.lyapunov_search`): :func:`lyapunov_rate` searches the
quadratic Lyapunov function of a described round's state with the best certified contraction
(Taylor, Van Scoy and Lessard 2018; exact expectation over the participation) and brackets it
from below by a replayed witness (:class:`LyapunovRate`); :func:`safari_bracket` does the
same for SAFARI's round. :mod:`flbounds.pep.atlas` tabulates them against the participation
probability (``flbounds atlas``).
"""

from .bridge import (
    LocalRule,
    control_variates,
    gradient_steps,
    local_update,
    pep_round,
    proximal_steps,
    simulate,
)
from .classlaw import Classes, class_law
from .descent import fedavg_descent_rate
from .describe import (
    Branch,
    FixedWeights,
    Local,
    Measure,
    Mixture,
    Normalized,
    Round,
    Server,
    Setting,
    Sum,
    Unbiased,
    Uniform,
    client_mean,
    client_sum,
    distance,
    gradient_at,
    lyapunov,
    model_copy,
    single,
    two_runs,
)
from .described import (
    fedavg_round,
    focus_lyapunov,
    focus_round,
    momentum_lyapunov,
    momentum_round,
    scaffold_lyapunov,
    scaffold_round,
)
from .described_server import (
    fedau_round,
    kvib_round,
    mifa_lyapunov,
    mifa_round,
    safari_round,
    server_gradient_round,
)
from .engine import build
from .entry import worst_case
from .fedavg import fedavg_rate
from .gd import gd_contraction, gd_rate
from .lyapunov_search import LyapunovRate, lyapunov_rate, safari_bracket
from .moments import SubsetMoments, moments_from_subsets, participation_moments
from .pl import focus_pl_rate
from .replay import replay_measure
from .result import WorstCase
from .scenarios import mixture_worst_case
from .sdp import GAP_ABS, GAP_REL, PEPSolveError, SolveInfo, gap_tolerance, solve
from .second_moment import FittedInstance, witness_rate, worst_instance
from .server_hetero import safari_hetero_rate
from .server_steps import safari_nonconvex_rate, safari_rate
from .steps import (
    local_control_variate,
    local_custom,
    local_gd,
    local_prox,
    local_tracking,
    server_control_variate,
    server_model_step,
    server_momentum,
    server_tracking,
)
from .symmetric import worst_case_symmetric
from .tracking import focus_rate, focus_rounds_rate

__all__ = ["GAP_ABS", "GAP_REL", "Classes", "LyapunovRate", "PEPSolveError", "SolveInfo",
           "SubsetMoments", "WorstCase", "class_law", "lyapunov_rate", "safari_bracket",
           "witness_rate", "worst_case_symmetric", "FittedInstance", "replay_measure",
           "worst_instance",
           "Branch", "FixedWeights", "Local", "Measure", "Mixture", "Normalized", "Round",
           "Server", "Setting", "Sum",
           "Unbiased", "Uniform", "build", "client_mean", "client_sum", "distance",
           "fedavg_round", "focus_lyapunov", "focus_round", "gradient_at",
           "local_control_variate", "local_custom", "local_gd", "local_prox", "local_tracking",
           "lyapunov", "momentum_lyapunov", "momentum_round", "scaffold_lyapunov",
           "scaffold_round", "server_control_variate", "server_model_step", "server_momentum",
           "server_tracking", "two_runs", "worst_case", "fedau_round", "kvib_round",
           "mifa_lyapunov", "mifa_round", "model_copy", "safari_round", "server_gradient_round",
           "mixture_worst_case", "single",
           "fedavg_rate", "focus_pl_rate", "focus_rate", "focus_rounds_rate", "gap_tolerance",
           "gd_contraction", "gd_rate", "fedavg_descent_rate", "moments_from_subsets",
           "participation_moments", "safari_hetero_rate", "safari_nonconvex_rate", "safari_rate",
           "solve",
           "LocalRule", "control_variates", "gradient_steps", "local_update", "pep_round",
           "proximal_steps", "simulate"]
