"""Where the kernels' numba cache lives, and one compilation per kernel across processes.

Location: the first writable folder among ``$NUMBA_CACHE_DIR/kernels-<digest>`` (when that
variable is set), the package's ``__pycache__/kernels-<digest>``, the user cache
``$XDG_CACHE_HOME/flbounds/numba-<digest>`` (``~/.cache`` when unset) and finally the
temporary folder. A read-only install therefore still caches its kernels, keyed by the
digest; numba's own fallback (a user-wide folder without the digest) would serve stale
machine code after a kernel changes.

Compilation: numba compiles a kernel in every process that calls it before the cache holds
it, so a pool of workers started on an empty cache compiles each kernel once per worker.
:func:`install_compile_hooks` makes numba take a per-kernel file lock around each
compilation of a library kernel; a second process asking for the same kernel waits, then
finds it in the cache and loads it. Kernels call kernels, never in a cycle, so the locks
taken while one compilation triggers another cannot deadlock.

Cache keys: numba keys a cached closure by a pickle of the values it closes over, and a
pickled numba function differs from process to process (its random id), so an overload's
implementation that closes over kernels (the local descent of each problem kind) was compiled
anew in every worker. :func:`install_stable_cache_keys` keys such a closure by the qualified
names of the kernels it holds instead; the cache folder is keyed by the digest of every kernel
source, so those names fix the code.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: every process compiles for itself
    fcntl = None

__all__ = ["cache_dir", "candidate_dirs", "install_compile_hooks", "install_stable_cache_keys",
           "sources_digest"]

_PACKAGE = Path(__file__).parent


def sources_digest(folder: Path = _PACKAGE) -> str:
    """First 16 hex digits of the SHA-256 of every kernel source (names and contents)."""
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def candidate_dirs(digest: str, env: Mapping[str, str] = os.environ,
                   package: Path = _PACKAGE) -> list[Path]:
    """The cache folders to try, in order (see the module docstring)."""
    out = []
    if env.get("NUMBA_CACHE_DIR"):
        out.append(Path(env["NUMBA_CACHE_DIR"]) / f"kernels-{digest}")
    out.append(package / "__pycache__" / f"kernels-{digest}")
    user = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    out.append(Path(user) / "flbounds" / f"numba-{digest}")
    out.append(Path(tempfile.gettempdir()) / f"flbounds-{_user_tag()}" / f"numba-{digest}")
    return out


def _user_tag() -> str:
    getuid = getattr(os, "getuid", None)
    return str(getuid()) if getuid is not None else os.environ.get("USERNAME", "user")


def writable(folder: Path) -> bool:
    """True when ``folder`` exists or can be made, and a file can be created in it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


def cache_dir(digest: str, env: Mapping[str, str] = os.environ,
              package: Path = _PACKAGE) -> Path | None:
    """The first writable candidate folder; ``None`` when none is (numba then warns)."""
    return next((d for d in candidate_dirs(digest, env, package) if writable(d)), None)


# -- one compilation per kernel ------------------------------------------------------------

_held: dict[str, int] = {}
_guard = threading.RLock()
#: called with (kernel name, seconds) after waiting for another process's compilation
#: (set by :func:`log_compiles`)
_on_wait = None


@contextlib.contextmanager
def kernel_lock(folder: Path, name: str) -> Iterator[None]:
    """An exclusive lock on ``name`` shared by every process using ``folder``; re-entrant
    within a process (a compilation may compile the same kernel for another signature)."""
    with _guard:
        if _held.get(name):
            _held[name] += 1
            try:
                yield
            finally:
                _held[name] -= 1
            return
        locks = folder / "locks"
        locks.mkdir(exist_ok=True)
        with open(locks / f"{name}.lock", "a+b") as handle:
            _acquire(handle, name)
            _held[name] = 1
            try:
                yield
            finally:
                _held.pop(name, None)
                fcntl.flock(handle, fcntl.LOCK_UN)


def _acquire(handle, name: str) -> None:
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:          # another process is compiling this kernel: wait
        start = time.perf_counter()
        fcntl.flock(handle, fcntl.LOCK_EX)
        if _on_wait is not None:
            _on_wait(name, time.perf_counter() - start)


def _kernel_name(dispatcher) -> str | None:
    func = getattr(dispatcher, "py_func", None)
    module = getattr(func, "__module__", "") or ""
    if not module.startswith(__package__ + "."):
        return None
    return f"{module}.{func.__qualname__}"


def _new_library_compile(dispatcher, sig) -> str | None:
    """The kernel's name when ``dispatcher.compile(sig)`` is a library kernel's and will
    compile or load a specialisation it does not hold yet; None otherwise (not ours, or
    already there: numba returns it at once)."""
    from numba.core import sigutils

    name = _kernel_name(dispatcher)
    if name is None or tuple(sigutils.normalize_signature(sig)[0]) in dispatcher.overloads:
        return None
    return name


def install_compile_hooks(folder: Path | None, opt: int | None,
                          keep: tuple[str, ...] = ()) -> bool:
    """Wrap numba's ``Dispatcher.compile`` so a library kernel compiles at LLVM optimisation
    level ``opt`` (None: numba's own, ``NUMBA_OPT`` or 3; also for kernels whose name starts
    with one of ``keep``) and, when ``folder`` is set, under :func:`kernel_lock`. Other numba
    functions pass straight through. Returns False when there is nothing to do or it was
    installed already."""
    from numba.core.caching import NullCache
    from numba.core.dispatcher import Dispatcher

    original = Dispatcher.compile
    share = folder is not None and fcntl is not None
    if not (share or opt is not None) or getattr(original, "_flbounds_hooks", False):
        return False

    def compile(self, sig):
        name = _new_library_compile(self, sig)
        if name is None:
            return original(self, sig)
        locked = share and not isinstance(self._cache, NullCache)   # an overload's impl
        level = None if name.startswith(keep) else opt
        with _opt_level(level), (kernel_lock(folder, name) if locked
                                 else contextlib.nullcontext()):
            return original(self, sig)

    compile._flbounds_hooks = True
    compile.__doc__ = original.__doc__
    Dispatcher.compile = compile
    return True


def _stable_cell(value) -> str | None:
    """A closure cell's name that is the same in every process: the qualified name of a
    library kernel bound to that name at module level, with its jit options; None for
    anything else (a dispatcher made in a loop or a factory, or one of several wrapping the
    same function with other options, has no name of its own)."""
    func = getattr(value, "py_func", None)
    name = _kernel_name(value)
    if func is None or func.__closure__ is not None or name is None:
        return None
    if getattr(sys.modules.get(func.__module__), func.__qualname__, None) is not value:
        return None
    return f"{name} {sorted(value.targetoptions.items())!r}"


def stable_closure_key(py_func) -> str | None:
    """The names of the kernels a library closure closes over (one per line), when every
    cell holds such a kernel; None otherwise (numba's own key applies)."""
    cells = py_func.__closure__
    if not cells or not (py_func.__module__ or "").startswith(__package__ + "."):
        return None
    names = [_stable_cell(cell.cell_contents) for cell in cells]
    return None if None in names else "\n".join(names)


def install_stable_cache_keys() -> bool:
    """Make numba's on-disk cache key of a library closure over library kernels
    (:func:`stable_closure_key`) the same in every process, so one process finds what another
    compiled; every other function keeps numba's key. False if installed already, or if
    this numba keys its cache otherwise (then each process compiles such closures itself)."""
    from numba.core.caching import Cache

    original = getattr(Cache, "_index_key", None)
    if original is None or getattr(original, "_flbounds_stable", False):
        return False

    def _index_key(self, sig, codegen, *args, **kwargs):
        names = stable_closure_key(self._py_func)
        if names is None or args or kwargs:     # a numba whose key takes more: its own
            return original(self, sig, codegen, *args, **kwargs)
        code = self._py_func.__code__.co_code
        return (sig, codegen.magic_tuple(), (hashlib.sha256(code).hexdigest(),
                                             hashlib.sha256(names.encode()).hexdigest()))

    _index_key._flbounds_stable = True
    _index_key.__doc__ = original.__doc__
    Cache._index_key = _index_key
    return True


@contextlib.contextmanager
def _opt_level(opt: int | None) -> Iterator[None]:
    """numba reads ``config.OPT`` each time it builds an LLVM pass pipeline, so setting it
    for the length of one compilation changes that compilation only. Held under numba's
    compiler lock (re-entrant; numba takes it for every compilation anyway), so no other
    thread compiles at the borrowed level or saves it as its own; taken before
    :func:`kernel_lock`, in every thread, so the two locks cannot deadlock."""
    from numba.core import config
    from numba.core.compiler_lock import global_compiler_lock

    with global_compiler_lock:
        saved = config.OPT
        if opt is not None:
            config.OPT = type(saved)(opt)
        try:
            yield
        finally:
            config.OPT = saved


# -- where first-run time goes -------------------------------------------------------------

def log_compiles(path: Path) -> bool:
    """Append one JSON line per library-kernel specialisation this process compiles or
    loads from the cache to ``path``: kernel, argument types, ``"compile"`` or ``"load"``,
    seconds (a compile's total includes the kernels it compiles on the way;
    ``self_seconds`` does not), the process and the wall-clock time at the end; and one
    ``"wait"`` line whenever the process waited for another's compilation of a kernel
    (:func:`kernel_lock`). For profiling a first run (``FLBOUNDS_COMPILE_LOG``)."""
    import json

    from numba.core import event
    from numba.core.dispatcher import Dispatcher

    original = Dispatcher.compile
    if getattr(original, "_flbounds_log", False):
        return False
    frames: list[list[float]] = []     # [start, seconds of nested calls, compiled?]

    def write(name, sig, what, seconds, inner):
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"kernel": name, "signature": str(sig), "what": what,
                                     "seconds": seconds, "self_seconds": seconds - inner,
                                     "pid": os.getpid(), "time": time.time()}) + "\n")

    def waited(name, seconds):
        if frames:                   # waiting inside a compilation is not compiling
            frames[-1][1] += seconds
        write(name, "", "wait", seconds, seconds)

    class _Compiled(event.Listener):
        def on_start(self, ev):
            if frames:
                frames[-1][2] = 1.0

        def on_end(self, ev):
            pass

    def compile(self, sig):
        name = _new_library_compile(self, sig)
        if name is None:
            return original(self, sig)
        frames.append([time.perf_counter(), 0.0, 0.0])
        try:
            return original(self, sig)
        finally:
            start, inner, compiled = frames.pop()
            seconds = time.perf_counter() - start
            if frames:
                frames[-1][1] += seconds
            write(name, sig, "compile" if compiled else "load", seconds, inner)

    global _on_wait
    _on_wait = waited
    event.register("numba:compile", _Compiled())
    compile._flbounds_log = True
    compile._flbounds_hooks = getattr(original, "_flbounds_hooks", False)
    compile.__doc__ = original.__doc__
    Dispatcher.compile = compile
    return True
