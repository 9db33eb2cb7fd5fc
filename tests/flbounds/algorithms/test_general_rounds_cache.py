"""FedAvg's general rounds (a schedule, counts or an aggregation rule) run the one round loop
of the custom local updates with the gradient step compiled in: cached on disk like every
library kernel, and the same bits as a user-written gradient step run through that loop."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numba
import numpy as np

from flbounds.algorithms import fedavg
from flbounds.algorithms.custom import fedavg_family, local_update
from flbounds.problems import random_quadratics

# a fresh process runs FedAvg with a step schedule (the general loop) and reports what numba
# did with fedavg_general_loop and the cached round loop it calls
_PROBE = """
import json, numpy as np
from flbounds.algorithms import fedavg
from flbounds.kernels.custom_rounds import gradient_rounds
from flbounds.kernels.scheduled import fedavg_general_loop
from flbounds.problems import random_quadratics
p = random_quadratics(np.random.default_rng(0), 4, 3, mu=1.0, L=2.0)
plan = np.random.default_rng(1).random((20, 4)) < 0.5
x = fedavg(p, plan, step=np.linspace(0.1, 0.01, 20), local_steps=3).x
stats = [f.stats for f in (fedavg_general_loop, gradient_rounds)]
print(json.dumps({"misses": [sum(s.cache_misses.values()) for s in stats],
                  "hits": [sum(s.cache_hits.values()) for s in stats], "x": x[-1].tolist()}))
"""


def _probe(cache_dir) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                         text=True, check=True)
    assert "Cannot cache" not in out.stderr, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_general_loop_is_cached_across_processes(tmp_path):
    first, second = _probe(tmp_path), _probe(tmp_path)
    assert first["misses"][0] == 1 and first["hits"][0] == 0
    # the second process loads the caller from the cache: nothing is compiled again
    assert second["misses"] == [0, 0] and second["hits"][0] == 1
    assert first["x"] == second["x"]


@numba.njit(fastmath=False)
def _user_gradient_step(z, g, x, state, eta, params):
    for p in range(z.shape[0]):
        z[p] -= eta * g[p]


def test_fedavg_general_rounds_equal_a_user_gradient_step_bit_for_bit():
    problem = random_quadratics(np.random.default_rng(3), 5, 4, mu=1.0, L=3.0)
    plan = np.random.default_rng(4).random((30, 5)) < 0.6
    steps = np.linspace(0.2, 0.02, 30)
    built_in = fedavg(problem, plan, step=steps, local_steps=4).x
    user = fedavg_family(problem, plan, local_update(_user_gradient_step), step=steps,
                         local_steps=4).x
    assert np.array_equal(built_in, user)
