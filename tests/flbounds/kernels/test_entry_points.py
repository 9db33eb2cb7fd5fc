"""FedAvg and FOCUS have a serial entry point besides the chunk-capable one: same bits, and a
one-thread run never compiles the parallel chunk kernels (a first run's compile time)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from flbounds.kernels import rounds
from flbounds.kernels.rounds import FocusRecord, FocusState, RoundSettings
from flbounds.problems import random_quadratics, random_ridge

# a fresh one-thread process runs FedAvg and FOCUS on a quadratic and a ridge problem
_ONE_THREAD = """
import numpy as np
from flbounds import algorithms
from flbounds.problems import random_quadratics, random_ridge
rng = np.random.default_rng(0)
plan = rng.random((4, 6)) < 0.7
for problem in (random_quadratics(rng, 6, 3, mu=1.0, L=2.0),
                random_ridge(rng, 6, 4, 3, lam=0.1)):
    algorithms.fedavg(problem, plan, step=0.05, local_steps=2)
    algorithms.focus(problem, plan, step=0.05, local_steps=2)
"""


def _problems():
    rng = np.random.default_rng(3)
    return [random_quadratics(rng, 40, 5, mu=1.0, L=3.0), random_ridge(rng, 40, 6, 5, lam=0.1)]


@pytest.mark.parametrize("kind", [0, 1], ids=["quadratic", "ridge"])
def test_serial_entry_points_equal_the_chunked_rounds_bit_for_bit(kind):
    problem = _problems()[kind]
    data = problem.kernel_data
    plan = np.random.default_rng(4).random((5, problem.n_clients)) < 0.6
    chunked = RoundSettings(0.05, 3, 2, 0)            # every round in chunks
    serial = RoundSettings(0.05, 3, 2, -1)
    assert not rounds.serial_only(chunked) and rounds.serial_only(serial)
    x0 = np.linspace(-1, 1, problem.dim)
    xs = [np.empty((6, problem.dim)) for _ in range(2)]
    rounds.fedavg_rounds(data, plan, chunked, x0, xs[0])
    rounds.fedavg_loop(data, plan, chunked, x0, xs[1], None)
    assert np.array_equal(xs[0], xs[1])

    out = []
    serial_focus = lambda *args: rounds.focus_loop(*args, None)  # noqa: E731
    for kernel in (rounds.focus_rounds, serial_focus):
        n, d = problem.n_clients, problem.dim
        state = FocusState(x0.copy(), np.zeros(d), np.zeros((n, d)), np.zeros((n, d)))
        record = FocusRecord(np.empty((6, d)), np.empty((6, d)), np.empty((6, d)))
        kernel(data, plan, np.zeros((0, 1, 1, d)), chunked, state, record)
        out.append(np.concatenate([record.xs, record.ys, record.g_sums, state.g,
                                   state.models]))
    assert np.array_equal(out[0], out[1])


def test_one_thread_process_compiles_no_chunk_kernel(tmp_path):
    log = tmp_path / "compiles.jsonl"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(NUMBA_NUM_THREADS="1", NUMBA_CACHE_DIR=str(tmp_path / "nc"),
               FLBOUNDS_COMPILE_LOG=str(log))
    root = Path(__file__).resolve().parents[3]
    proc = subprocess.run([sys.executable, "-c", _ONE_THREAD], env=env, cwd=root, text=True,
                          capture_output=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    kernels = {json.loads(line)["kernel"] for line in log.read_text().splitlines()}
    assert "flbounds.kernels.rounds.fedavg_loop" in kernels
    assert "flbounds.kernels.rounds.focus_loop" in kernels
    assert not [k for k in kernels if k.endswith("_chunks") or k.endswith("_span")]
    assert "flbounds.kernels.rounds.fedavg_rounds" not in kernels
