r"""Figure 1 of SAFARI: the supports of D, P and Q, and its threshold illustration
(setting in :mod:`verify.safari._thresholds`)."""

from __future__ import annotations

from flbounds.ledger import Evidence, Tolerance, claim, result

from ._thresholds import _errors
from .instances import mean_and_se

FIGURE1 = result(
    "safari.figure1", ref="Figure 1", title="supports of the client, server and pooled data",
    parts={"supports": "supp D can miss part of supp P, while supp Q = supp P (Q mixes in P): "
                       "a learner on client data alone cannot see the part D misses"})


@claim("safari.thm1.threshold_fl_floor", ref="Thm 1 / Fig. 1 (thresholds)",
       kind="remark", expected="holds", result=FIGURE1,
       statement="Illustration (holds by construction): FL-only ERM (n_T = 0) with t* = 0.8 "
                 "outside supp D = U[0.2, 0.6] has eps_P >= 0.8 - 0.6 = 0.2 on every run, "
                 "whatever n_S, so E eps_P keeps the floor 0.05 of the construction.",
       quick=dict(sizes=[100, 1000, 10000], n_reps=100),
       full=dict(sizes=[100, 1000, 10000, 100000], n_reps=500))
def threshold_fl_floor(*, rng, sizes, n_reps):
    """An illustration of Theorem 1's message on the threshold family, not a test that could
    fail: all client labels are 0, so ERM returns the largest client point (< 0.6) and
    eps_P = 0.8 - t_hat > 0.2 whatever n_S is; the spec's gate E eps_P > 0.05 (V3.i) is met
    by construction. Measured: the smallest eps_P over runs at each n_S against the
    construction's 0.2 (exact: a deterministic inequality per run); the means (spec's gate)
    and their SEs are in details."""
    err = _errors(rng, sizes, n_reps, client_ratio=1, target=0.8, fixed_server=0)
    mean, se = mean_and_se(err)
    return Evidence(measured=err.min(axis=0), theoretical=[0.2] * len(sizes), relation=">=",
                    tolerance=Tolerance.exact("per-run inequality eps_P = 0.8 - t_hat, t_hat "
                                              "< 0.6"),
                    details={"n_S": sizes, "mean_eps_P": mean, "se": se, "spec_floor": 0.05})


