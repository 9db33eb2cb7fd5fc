"""The library's own calls compile each kernel once per kind of data, no more.

Numba compiles a kernel anew for every distinct tuple of argument types. Two sources of
needless duplicates: a literal constant passed from compiled code (``0`` or ``True`` is typed
``Literal[int](0)`` / ``Literal[bool](True)``, so ``f(a, 0)`` and ``f(a, n)`` are two
compilations) and the same array once writable, once read-only. After representative calls of
the public algorithms (FedAvg, FOCUS with recorded sums, SAFARI single and batched, FedAvg
with K-Vib / the oracle batched and with only the drawn clients, the bandit baselines' batched
costs) in a fresh process with an empty cache, no kernel of :mod:`flbounds.kernels` may hold
a literal-typed signature or two signatures that differ only in array mutability.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CALLS = r"""
import json, re
import numpy as np
import numba
from flbounds.algorithms import fedavg, focus, fedavg_sampler
from flbounds.algorithms.batched import fedavg_batched
from flbounds.algorithms.batched_sampler import fedavg_sampler_batched, sampler_uniforms
from flbounds.algorithms.safari import safari, safari_plan
from flbounds.algorithms.batched_safari import safari_batched
from flbounds.problems import random_quadratics, random_ridge
from flbounds.sampling import KVib, OracleISP, UniformISP
from flbounds.sampling.online import Assumption51Feedback
from flbounds.sampling.online_batched import baseline_costs

rng = np.random.default_rng(0)
n, T = 12, 4
for problem in (random_quadratics(rng, n, 3, mu=0.2, L=1.0), random_ridge(rng, n, 4, 3, lam=0.1)):
    plan = rng.random((T, n)) < 0.5
    fedavg(problem, plan, step=0.1, local_steps=2)
    fedavg_batched(problem, [plan, ~plan], step=0.1, local_steps=2)
    focus(problem, plan, step=0.1, local_steps=2, record_sum=True)
    kw = dict(n_rounds=T, q=0.5, eligible=np.arange(n), n_sampled=3, local_steps=2,
              dim=problem.dim, client_noise_std=0.1, server_noise_std=0.1)
    plans = [safari_plan(r, **kw) for r in rng.spawn(2)]
    safari(problem, plans[0], step_client=0.05, step_server=0.05)
    safari_batched(problem, plans, step_client=0.05, step_server=0.05)
    for make in (lambda: KVib(n, 3, T, G=1.0), lambda: OracleISP(n, 3)):
        uniforms = sampler_uniforms(rng.spawn(2), n_rounds=T, n_clients=n)
        fedavg_sampler_batched(problem, [make(), make()], uniforms, local_steps=2, step=0.1)
    fedavg_sampler(problem, KVib(n, 3, T, G=1.0), rng, n_rounds=T, local_steps=2, step=0.1,
                   diagnostics=False)
feedback = Assumption51Feedback.generate(rng, 200)
for kind in ("vrb", "mabs"):
    baseline_costs(kind, feedback, (3,), 5, rng.spawn(2), G=feedback.G)

out = {}
for name, module in list(__import__("sys").modules.items()):
    if not name.startswith("flbounds.kernels."):
        continue
    for attr, obj in vars(module).items():
        if isinstance(obj, numba.core.registry.CPUDispatcher) and obj.__module__ == name:
            out[f"{name}.{attr}"] = [str(sig) for sig in obj.signatures]
print(json.dumps(out))
"""


def _signatures(cache):
    """Signatures after the calls, compiled into the empty numba cache ``cache``: a kernel
    loaded from a filled cache does not register the signatures of the kernels it calls."""
    root = Path(__file__).resolve().parents[3]
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    proc = subprocess.run([sys.executable, "-c", CALLS], cwd=root, capture_output=True,
                          text=True, check=True, env=env)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _mutability_blind(sig: str) -> str:
    return sig.replace("readonly ", "").replace(", True, aligned", ", False, aligned")


@pytest.mark.slow
def test_one_specialisation_per_kind_of_data(tmp_path):
    sigs = _signatures(tmp_path)
    compiled = {name: s for name, s in sigs.items() if s}
    # the calls reached the kernels and their callees (helpers inlined at numba's IR level,
    # inline="always", have no dispatcher of their own and are not counted)
    assert len(compiled) > 30
    literal = {name: s for name, s in compiled.items() if any("Literal" in x for x in s)}
    assert not literal
    twins = {name: s for name, s in compiled.items()
             if len({_mutability_blind(x) for x in s}) != len(s)}
    assert not twins
    # two kinds of data (quadratic, ridge): at most two compilations of a data kernel
    assert max(len(s) for s in compiled.values()) <= 2, {
        name: len(s) for name, s in compiled.items() if len(s) > 2}


def test_a_literal_argument_is_detected():
    """The check can fail: a compiled caller passing the literal 0 adds a signature."""
    code = (
        "import numba, numpy as np\n"
        "@numba.njit\n"
        "def f(a, n):\n    return a[n]\n"
        "@numba.njit\n"
        "def g(a):\n    return f(a, 0) + f(a, a.shape[0] - 1)\n"
        "g(np.ones(3)); print([str(s) for s in f.signatures])\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert "Literal[int](0)" in proc.stdout
