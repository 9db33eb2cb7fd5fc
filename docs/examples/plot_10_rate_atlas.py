r"""
The rate atlas: worst-case contraction against participation
============================================================

How fast can FedAvg, SCAFFOLD, FOCUS, FedAU and MIFA contract, round after round, in the
worst case over every client in the class (every L-smooth, mu-strongly convex function), as
clients participate less often? For each participation probability :math:`p` (every client
independently, ``Bernoulli([p] * N)``, the expectation exact),
:func:`flbounds.pep.atlas.compute_atlas` brackets the per-round rate of
:math:`E\|x_R - x^\star\|^2`:

- the upper end, ``certified``: the best contraction of a quadratic Lyapunov function of the
  round's whole state (model, trackers, control variates, MIFA's memory), searched by
  :func:`flbounds.pep.lyapunov_rate` and checked by a one-round solve, whose multipliers give
  a rigorous upper bound, the reported number, whatever the solve's accuracy (where that
  leaves the bracket open, the lifted one, ``values=True``, which also weighs every client's
  gradient and value at the model);
- the lower end, ``witness``: the exact per-round growth of :math:`E\|\xi_R\|^2` on the worst
  quadratic instance found, replayed on arrays.

Clients share their minimizer. FedAU's weights are their steady state under Bernoulli(p)
participation, :math:`\omega_i = 1/p` (the mean interval between two participations). Two
more series sit at the papers' own steps with the printed rates beside them: FOCUS at
Theorem 1(a)'s step, and SAFARI under Theorem 5's coupled steps (with :math:`q = p`).
``flbounds atlas`` computes the same table and figure at the quick or full profile.
"""

from figures.pep_atlas import plot
from flbounds.ledger.api.bounds import get
from flbounds.ledger.api.registry import load_all
from flbounds.pep.atlas import arrays, compute_atlas, markdown

load_all()   # the papers' plugins register the printed bounds the atlas looks up with get
table = compute_atlas(mu=1.0, L=4.0, n_clients=2, local_steps=2, ps=(0.25, 0.5, 1.0),
                      printed=get)
print(markdown(table))

# %%
# The figure shows the contraction gap :math:`1 - \rho` per round (larger is faster) on a log
# scale: solid lines the certified rate, dotted the witness; where they meet, the worst case
# over many rounds is known exactly. On the right, the printed rates (dashed) lie below the
# certified worst cases: the theorems hold here, with room to spare.
c = table["constants"]
fig = plot({**arrays(table), **{k: c[k] for k in ("n_clients", "local_steps", "step", "mu",
                                                   "L")}})
