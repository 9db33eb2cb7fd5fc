"""The kernels' numba cache: its location (read-only installs included) and one compilation
per kernel when several processes start on an empty cache."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numba
import pytest

import flbounds.kernels as kernels
from flbounds.kernels import _cache

# a fresh process calls one small kernel and reports where its cache is and what numba did
_PROBE = """
import json, numpy as np
import flbounds.kernels as k
from flbounds.kernels.losses import quadratic_losses as f
A = np.eye(2)[None].copy(); b = np.zeros((1, 2)); X = np.ones((1, 2))
out = np.zeros(1); f(A, b, X, np.zeros(1, dtype=np.int64), out)
print(json.dumps({"dir": str(k.CACHE_DIR), "misses": sum(f.stats.cache_misses.values()),
                  "hits": sum(f.stats.cache_hits.values()), "out": float(out[0])}))
"""


def _package_copy(root: Path, *, read_only: bool) -> Path:
    """A package ``flbounds`` holding only the kernels' cache code and ``losses.py``; with
    ``read_only`` its ``__pycache__`` is a file, so no folder can be made there (a
    permission bit would not stop a root user)."""
    src = Path(kernels.__file__).parent
    dst = root / "pkg" / "flbounds" / "kernels"
    dst.mkdir(parents=True)
    (dst.parent / "__init__.py").write_text("")
    for name in ("__init__.py", "_cache.py", "losses.py"):
        shutil.copyfile(src / name, dst / name)
    if read_only:
        (dst / "__pycache__").write_text("not a folder")
    return root / "pkg"


def _probe(pkg: Path, env_extra: dict) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env.update(PYTHONPATH=str(pkg), PYTHONDONTWRITEBYTECODE="1", **env_extra)
    return subprocess.Popen([sys.executable, "-c", _PROBE], env=env, text=True, cwd=pkg,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _report(proc: subprocess.Popen) -> dict:
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert err == ""            # no warning about the cache, on any run
    return json.loads(out)


def test_candidates_in_order(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "n"), "XDG_CACHE_HOME": str(tmp_path / "x")}
    dirs = _cache.candidate_dirs("abc", env, package=tmp_path / "p")
    assert dirs[:3] == [tmp_path / "n" / "kernels-abc", tmp_path / "p" / "__pycache__" /
                        "kernels-abc", tmp_path / "x" / "flbounds" / "numba-abc"]
    assert dirs[3].name == "numba-abc"
    no_env = _cache.candidate_dirs("abc", {}, package=tmp_path / "p")
    assert no_env[0] == tmp_path / "p" / "__pycache__" / "kernels-abc"
    assert no_env[1] == Path.home() / ".cache" / "flbounds" / "numba-abc"


def test_unwritable_candidates_are_skipped(tmp_path):
    (tmp_path / "n").write_text("a file, not a folder")
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "__pycache__").write_text("a file too")
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "n"), "XDG_CACHE_HOME": str(tmp_path / "x")}
    assert _cache.cache_dir("abc", env, package=tmp_path / "p") == \
        tmp_path / "x" / "flbounds" / "numba-abc"
    shutil.rmtree(tmp_path / "x")
    (tmp_path / "x").write_text("no user cache either")
    last = _cache.cache_dir("abc", env, package=tmp_path / "p")
    assert last == _cache.candidate_dirs("abc", env, package=tmp_path / "p")[3]


def test_the_digest_follows_the_sources(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    before = _cache.sources_digest(tmp_path)
    (tmp_path / "a.py").write_text("x = 2\n")
    assert _cache.sources_digest(tmp_path) != before


def test_read_only_install_caches_in_the_user_folder(tmp_path):
    pkg = _package_copy(tmp_path, read_only=True)
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    first = _report(_probe(pkg, env))
    second = _report(_probe(pkg, env))
    assert Path(first["dir"]).parent == tmp_path / "xdg" / "flbounds"
    assert Path(first["dir"]).name.startswith("numba-")
    assert (first["misses"], first["hits"]) == (1, 0)
    assert (second["misses"], second["hits"]) == (0, 1)     # cached across processes
    assert first["out"] == second["out"] == 1.0


def test_numba_cache_dir_is_honoured(tmp_path):
    pkg = _package_copy(tmp_path, read_only=False)
    report = _report(_probe(pkg, {"NUMBA_CACHE_DIR": str(tmp_path / "nc")}))
    assert Path(report["dir"]).parent == tmp_path / "nc"
    assert list(Path(report["dir"]).glob("**/*.nbi"))


@pytest.mark.parametrize("processes", [3])
def test_processes_starting_together_compile_a_kernel_once(tmp_path, processes):
    """Processes started at once on an empty cache: one compiles, the others load its
    result (without the compile lock each would compile, as each finds no cache)."""
    pkg = _package_copy(tmp_path, read_only=False)
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "nc")}
    reports = [_report(p) for p in [_probe(pkg, env) for _ in range(processes)]]
    assert sum(r["misses"] for r in reports) == 1
    assert sum(r["hits"] for r in reports) == processes - 1


def test_kernel_lock_is_reentrant_and_only_for_library_kernels(tmp_path):
    with _cache.kernel_lock(tmp_path, "flbounds.kernels.x.f"):
        with _cache.kernel_lock(tmp_path, "flbounds.kernels.x.f"):   # no self-deadlock
            pass
    assert (tmp_path / "locks" / "flbounds.kernels.x.f.lock").exists()

    class Foreign:
        py_func = staticmethod(lambda: None)

    assert _cache._kernel_name(Foreign()) is None
    from flbounds.kernels.losses import quadratic_losses
    assert _cache._kernel_name(quadratic_losses) == "flbounds.kernels.losses.quadratic_losses"


def test_waiting_for_another_compilation_is_reported(tmp_path, monkeypatch):
    """A process finding the kernel's lock held (here: another open file, which flock treats
    as another owner) waits for it and reports the wait to the compile log's hook."""
    waits = []
    monkeypatch.setattr(_cache, "_on_wait", lambda name, seconds: waits.append(name))
    (tmp_path / "locks").mkdir()
    with open(tmp_path / "locks" / "flbounds.kernels.x.f.lock", "a+b") as other:
        fcntl.flock(other, fcntl.LOCK_EX)
        done = threading.Event()

        def compile_f():
            with _cache.kernel_lock(tmp_path, "flbounds.kernels.x.f"):
                done.set()

        thread = threading.Thread(target=compile_f)
        thread.start()
        assert not done.wait(0.2)          # held by the other owner: still waiting
        fcntl.flock(other, fcntl.LOCK_UN)
        thread.join(600)
    assert done.is_set() and waits == ["flbounds.kernels.x.f"]


def test_kernels_numba_never_caches_take_no_lock(monkeypatch):
    """An overload's implementation (numba caches none) compiles anew in every process
    anyway: waiting for another process's compilation of it would only idle."""
    locked = []
    real_lock = _cache.kernel_lock

    def recording_lock(folder, name):
        locked.append(name)
        return real_lock(folder, name)

    monkeypatch.setattr(_cache, "kernel_lock", recording_lock)

    def probe(x):
        return x + 1

    probe.__module__ = "flbounds.kernels.probe_uncached"
    jitted = numba.njit(probe)
    assert _cache._kernel_name(jitted).startswith("flbounds.kernels.probe_uncached.")
    assert jitted(1) == 2
    assert locked == []


def test_compile_log_names_each_compile_and_load(tmp_path):
    """FLBOUNDS_COMPILE_LOG: the first process logs a compile of the kernel, the second a
    load from the cache; nothing else changes (same output, same cache statistics)."""
    pkg = _package_copy(tmp_path, read_only=False)
    log = tmp_path / "compiles.jsonl"
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "nc"), "FLBOUNDS_COMPILE_LOG": str(log)}
    first = _report(_probe(pkg, env))
    second = _report(_probe(pkg, env))
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["kernel"], r["what"]) for r in lines] == [
        ("flbounds.kernels.losses.quadratic_losses", "compile"),
        ("flbounds.kernels.losses.quadratic_losses", "load")]
    assert all(r["seconds"] >= r["self_seconds"] >= 0 for r in lines)
    assert (first["misses"], second["hits"]) == (1, 1)
    assert first["out"] == second["out"] == 1.0


def test_library_kernels_compile_at_the_kernel_level():
    """A library kernel compiles at ``KERNEL_OPT`` (unless ``NUMBA_OPT`` is set), one listed in
    ``KEEP_NUMBA_LEVEL`` and any other numba function at numba's own level, and numba's
    setting is back after each."""
    from numba.core import config, event

    levels = {}

    class Record(event.Listener):
        def on_start(self, ev):
            levels[ev.data["dispatcher"].py_func.__name__] = int(config.OPT)

        def on_end(self, ev):
            pass

    def ours(x):
        return x + 1

    def theirs(x):
        return x + 2

    def kept(x):
        return x + 3

    ours.__module__ = "flbounds.kernels.probe_level"
    kept.__module__ = kernels.KEEP_NUMBA_LEVEL[0] + "probe"
    before = config.OPT
    with event.install_listener("numba:compile", Record()):
        assert numba.njit(ours)(1) == 2 and numba.njit(theirs)(1) == 3
        assert numba.njit(kept)(1) == 4
    expected = int(before) if os.environ.get("NUMBA_OPT") else kernels.KERNEL_OPT
    assert levels == {"ours": expected, "theirs": int(before), "kept": int(before)}
    assert config.OPT is before


@pytest.mark.parametrize("user_opt", ["3", str(kernels.KERNEL_OPT)])
def test_the_cache_folder_records_the_level(tmp_path, user_opt):
    """Kernels compiled at ``NUMBA_OPT`` do not serve a run at the default levels (nor the
    reverse): the two runs use two folders, also when ``NUMBA_OPT`` equals ``KERNEL_OPT``
    (the default keeps the replicate groups at numba's level 3, ``NUMBA_OPT`` does not)."""
    pkg = _package_copy(tmp_path, read_only=False)
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "nc")}
    default = _report(_probe(pkg, env))
    at_user = _report(_probe(pkg, {**env, "NUMBA_OPT": user_opt}))
    assert Path(default["dir"]).name.endswith(f"-o{kernels.KERNEL_OPT}")
    assert Path(at_user["dir"]).name.endswith(f"-numba-o{user_opt}")
    assert (default["misses"], at_user["misses"]) == (1, 1)


def test_the_level_is_borrowed_under_numba_compiler_lock():
    """Another thread compiling meanwhile would see (and might save and restore) the borrowed
    level: while it is set, numba's compiler lock is held, so no other thread can compile."""
    from numba.core import config
    from numba.core.compiler_lock import global_compiler_lock

    def other_thread_gets_the_lock():
        got = []

        def try_lock():
            got.append(global_compiler_lock._lock.acquire(blocking=False))
            if got[0]:
                global_compiler_lock._lock.release()

        thread = threading.Thread(target=try_lock)
        thread.start()
        thread.join(600)
        return got[0]

    before = config.OPT
    with _cache._opt_level(0):
        assert int(config.OPT) == 0
        assert not other_thread_gets_the_lock()
    assert config.OPT is before and other_thread_gets_the_lock()


# two processes need ridge's local descent through different round loops
_DESCENT = {
    "fedavg": """
import numpy as np
from flbounds.algorithms.fedavg import fedavg
from flbounds.problems.generators import random_ridge
pb = random_ridge(np.random.default_rng(0), 6, 8, 3, lam=0.1)
plan = np.random.default_rng(1).random((4, 6)) < 0.5
print(fedavg(pb, plan, step=0.01, local_steps=3).x[-1].tolist())
""",
    "sampler": """
import numpy as np
from flbounds.algorithms.sampler_rounds import drawn_local_updates
from flbounds.problems.generators import random_ridge
pb = random_ridge(np.random.default_rng(0), 6, 8, 3, lam=0.1)
mask = np.random.default_rng(1).random((2, 6)) < 0.5
print(drawn_local_updates(pb, np.ones((2, 3)), 3, 0.01, mask)[mask].tolist())
""",
    "logistic": """
import numpy as np
from flbounds.algorithms.sampler_rounds import drawn_local_updates
from flbounds.problems.generators import random_logistic
pb = random_logistic(np.random.default_rng(0), 6, 8, 3, lam=0.1)
mask = np.random.default_rng(1).random((2, 6)) < 0.5
print(drawn_local_updates(pb, np.ones((2, 3)), 3, 0.01, mask)[mask].tolist())
"""}


def _run_script(script, env):
    done = subprocess.run([sys.executable, "-c", script], env=env, text=True,
                          capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_closure_over_kernels_is_compiled_once_for_every_process(tmp_path):
    """The local descent closes over the kind's gradient and hint kernels; numba's own cache
    key pickles them, differently in every process, so each process compiled it anew. Keyed
    by their names, the second process loads what the first compiled, and computes what a
    fresh compilation computes; another kind (logistic) is compiled, not loaded."""
    log = tmp_path / "compiles.jsonl"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(NUMBA_CACHE_DIR=str(tmp_path / "nc"), FLBOUNDS_COMPILE_LOG=str(log))
    out = {name: _run_script(script, env) for name, script in _DESCENT.items()}
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    descent = [(r["what"], r["pid"], r["signature"].split("(")[1])
               for r in lines if ".local_steps." in r["kernel"]]
    assert [(what, kind) for what, _, kind in descent] == [
        ("compile", "RidgeData"), ("load", "RidgeData"), ("compile", "LogisticData")]
    assert len({pid for _, pid, _ in descent}) == 3
    fresh = dict(env, NUMBA_CACHE_DIR=str(tmp_path / "fresh"))
    fresh.pop("FLBOUNDS_COMPILE_LOG")
    assert _run_script(_DESCENT["sampler"], fresh) == out["sampler"]


def test_stable_closure_key_names_the_kernels_it_holds():
    from flbounds.kernels import gradients
    from flbounds.kernels.local_steps import _local_descent

    def impl_for(data_cls):
        return _local_descent(numba.typeof(data_cls(*_tiny(data_cls))), None, None, None, None)

    ridge, logistic = (impl_for(c) for c in (gradients.RidgeData, gradients.LogisticData))
    names = [line.split(" ")[0] for line in _cache.stable_closure_key(ridge).splitlines()]
    assert names == ["flbounds.kernels.gradients._ridge_gradient",
                     "flbounds.kernels.gradients._hint_samples"]
    assert "'fastmath', False" in _cache.stable_closure_key(ridge)      # the jit options too
    assert _cache.stable_closure_key(logistic).startswith(
        "flbounds.kernels.gradients._logistic_gradient ")

    def local(x):
        return x

    def closure_over_a_python_function(x):
        return local(x)

    closure_over_a_python_function.__module__ = "flbounds.kernels.probe_closure"
    assert _cache.stable_closure_key(closure_over_a_python_function) is None
    assert _cache.stable_closure_key(_cache.stable_closure_key) is None    # no closure

    # a second dispatcher of the same function, with other options: not the module's name
    other = numba.njit(fastmath=True)(gradients._ridge_gradient.py_func)

    def closure_over_another_dispatcher(x):
        return other(x)

    closure_over_another_dispatcher.__module__ = "flbounds.kernels.probe_closure"
    assert _cache.stable_closure_key(closure_over_another_dispatcher) is None


def _tiny(data_cls):
    import numpy as np

    features, labels = np.ones((1, 2, 2)), np.ones((1, 2))
    return (features, labels, 0.1) if data_cls.__name__ == "RidgeData" else \
        (features, labels, 0.1, 0.0)
