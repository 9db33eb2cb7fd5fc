"""Compiling the kernels prints no numba warning.

A user's first run compiles every kernel it needs; a warning numba prints then (an IR
assumption it could not verify, a reflected list, an object-mode fallback) reaches the user's
terminal and usually marks code numba handles poorly. The hinted paths are compiled only for
data large enough to be hinted (:func:`flbounds.kernels.gradients.hint_ahead`), so the calls
use such data: quadratic clients with d = 16 (the register kernels) and ridge clients.
"""

import os
import subprocess
import sys
from pathlib import Path

CALLS = r"""
import warnings
import numpy as np
import numba
from flbounds.algorithms import fedavg, focus
from flbounds.algorithms.batched_sampler import fedavg_sampler_batched, sampler_uniforms
from flbounds.kernels.gradients import hint_ahead
from flbounds.problems import random_quadratics, random_ridge
from flbounds.sampling import UniformISP

warnings.simplefilter("always", numba.NumbaWarning)
rng = np.random.default_rng(0)
for problem in (random_quadratics(rng, 2100, 16, mu=0.2, L=1.0),
                random_ridge(rng, 1100, 20, 25, lam=0.1)):
    assert hint_ahead(problem.kernel_data) is not None
    plan = rng.random((2, problem.n_clients)) < 0.3
    fedavg(problem, plan, step=0.1, local_steps=2)
    focus(problem, plan, step=0.1, local_steps=2)
    uniforms = sampler_uniforms(rng.spawn(1), n_rounds=2, n_clients=problem.n_clients)
    fedavg_sampler_batched(problem, [UniformISP(problem.n_clients, 30)], uniforms,
                           local_steps=2, step=0.1, diagnostics=False)
print("compiled")
"""


def test_compiling_the_hinted_kernels_prints_no_numba_warning(tmp_path):
    root = Path(__file__).resolve().parents[3]
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "nc"))
    proc = subprocess.run([sys.executable, "-c", CALLS], cwd=root, capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 0 and "compiled" in proc.stdout, proc.stderr[-3000:]
    assert "Warning" not in proc.stderr, proc.stderr[-3000:]
