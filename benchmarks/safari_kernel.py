"""SAFARI on quadratic clients: the compiled loop against the NumPy twin, same plan.

Both run Algorithm 1 of [000] on the two-group instance (M = 10, m = 5, K = 5, d = 2) with the
same random plan: ``flbounds.algorithms.safari`` (one compiled call) and the per-client NumPy
loop of ``tests/reference.py`` (the slow twin the tests check the kernel against). The table
reports time per run, rounds per second and the speed-up, and checks that both trajectories
agree to 1e-12.
"""

from __future__ import annotations

import numpy as np

from benchmarks._common import best_time, parse_args, write
from flbounds.algorithms.safari import safari, safari_plan
from tests import reference
from verify.safari.instances import ELIGIBLE, LOCAL_STEPS, N_SAMPLED, two_group_problem

NAME = "safari_kernel"


def main(argv=None):
    args = parse_args(argv, __doc__.splitlines()[0])
    prob = two_group_problem()
    rows = []
    for n_rounds in ((200, 2000) if args.profile == "quick" else (200, 2000, 20000)):
        plan = safari_plan(np.random.default_rng(0), n_rounds=n_rounds, q=0.8,
                           eligible=ELIGIBLE, n_sampled=N_SAMPLED, local_steps=LOCAL_STEPS,
                           dim=2, client_noise_std=0.1, server_noise_std=0.1)
        x0 = np.array([0.0, 2.0])
        kw = dict(step_client=0.004, step_server=0.01, x0=x0)
        fast = safari(prob, plan, **kw)
        slow = reference.safari(prob, plan, 0.004, 0.01, x0)[0]
        agree = bool(np.allclose(fast.x, slow, rtol=1e-12, atol=1e-12))
        t_fast = best_time(lambda: safari(prob, plan, **kw))  # noqa: B023
        t_slow = best_time(lambda: reference.safari(prob, plan, 0.004, 0.01, x0),  # noqa: B023
                           repeat=1)
        rows.append(dict(rounds=n_rounds, numba_s=t_fast, numpy_s=t_slow,
                         numba_rounds_per_s=n_rounds / t_fast, speedup=t_slow / t_fast,
                         agree_1e12=agree))
    return write(args.out, NAME, "SAFARI kernel vs NumPy twin (two-group instance)", rows,
                 ["rounds", "numba_s", "numpy_s", "numba_rounds_per_s", "speedup",
                  "agree_1e12"], notes=__doc__)


if __name__ == "__main__":
    main()
