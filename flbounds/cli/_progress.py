"""Terminal progress for long commands: a live bar with ETA, or plain lines, or nothing.

:class:`ProgressBar` is shared by ``check``, ``figures`` and ``falsify``. On a terminal it
draws a live ``rich`` bar on stderr (items done / total, elapsed, ETA, the last item); when
stderr is not a terminal it writes one plain line per finished item; with ``quiet`` it is
silent. Colour follows ``rich``'s rules, so ``NO_COLOR`` turns it off. The ETA comes from
:class:`Eta`: the stored durations of the items still to run, scaled by how fast the run
has gone so far (which also absorbs the number of parallel workers).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Mapping, Sequence

__all__ = ["Eta", "ProgressBar", "claims_progress", "clock", "numba_first_run_notice",
           "summary_table"]


def clock(seconds: float | None) -> str:
    """``mm:ss`` (or ``h:mm:ss``); ``--:--`` when unknown."""
    if seconds is None:
        return "--:--"
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours:d}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


class Eta:
    """Remaining time from stored per-item durations.

    Parameters
    ----------
    names
        The items of this run.
    durations
        Stored duration in seconds per item name (items never run before get the median of
        the known ones). With no stored duration at all the estimate is count based.
    """

    def __init__(self, names: Sequence[str], durations: Mapping[str, float] = None):
        durations = durations or {}
        known = [float(durations[n]) for n in names if n in durations]
        fill = statistics.median(known) if known else None
        self._weights = {n: float(durations.get(n, fill)) if fill is not None else 1.0
                         for n in names}
        self._by_count = fill is None
        self._left = dict(self._weights)
        self._done_weight = 0.0

    def finish(self, name: str) -> None:
        """Mark ``name`` as done (unknown names are ignored)."""
        weight = self._left.pop(name, None)
        if weight is not None:
            self._done_weight += weight

    def seconds(self, elapsed: float) -> float | None:
        """Estimated seconds left after ``elapsed`` seconds of this run (None: no estimate)."""
        left = sum(self._left.values())
        if left == 0:
            return 0.0
        if self._done_weight > 0 and elapsed > 0:
            return left * elapsed / self._done_weight
        return None if self._by_count else left


class ProgressBar:
    """Progress of ``total`` items on stderr; use as a context manager.

    Parameters
    ----------
    total
        Number of items.
    what
        Plural noun for the items ("claims", "figures", "evaluations").
    eta
        Remaining-time estimator (default: count based).
    quiet
        Write nothing.
    stream
        Where to write (default ``sys.stderr``); the live bar needs a terminal.
    done
        Items already finished before this run (e.g. resumed from the results store).
    plain_every
        Off a terminal, write a line every ``plain_every`` items (and for the last item and
        every note); e.g. 100 for the evaluations of an adversarial search.
    """

    def __init__(self, total: int, what: str = "items", *, eta: Eta | None = None,
                 quiet: bool = False, stream=None, done: int = 0, plain_every: int = 1):
        if plain_every < 1:
            raise ValueError(f"plain_every must be >= 1, got {plain_every}")
        self.total, self.what, self.done = int(total), what, int(done)
        self.plain_every = int(plain_every)
        self.quiet = quiet
        self.stream = stream if stream is not None else sys.stderr
        self.eta = eta
        self.start = time.perf_counter()
        self._live = None
        self._task = None

    @property
    def live(self) -> bool:
        """True when a live bar is drawn (a terminal, not quiet)."""
        return not self.quiet and _is_terminal(self.stream)

    def __enter__(self) -> ProgressBar:
        if self.live:
            self._start_live()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def _start_live(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.table import Column

        console = Console(file=self.stream)
        # the last item's name gives way first on a narrow terminal
        last = Column(no_wrap=True, overflow="ellipsis", max_width=36)
        bar = BarColumn(bar_width=20, table_column=Column(min_width=20))
        self._live = Progress(TextColumn("[bold]{task.description}"), bar,
                              MofNCompleteColumn(table_column=Column(no_wrap=True,
                                                                     min_width=7)),
                              TimeElapsedColumn(table_column=Column(no_wrap=True, min_width=7)),
                              TextColumn("ETA {task.fields[eta]}",
                                         table_column=Column(no_wrap=True, min_width=9)),
                              TextColumn("{task.fields[last]}", style="dim", table_column=last),
                              console=console, transient=True,
                              # the parent shares the cores with the workers: drawing ten times
                              # a second (rich's default) cost about 0.5 s of CPU over a quick run
                              refresh_per_second=2)
        self._task = self._live.add_task(self.what, total=self.total, completed=self.done,
                                         eta=self._eta_text(), last="")
        self._live.start()

    def _eta_text(self) -> str:
        elapsed = time.perf_counter() - self.start
        if self.eta is not None:
            return clock(self.eta.seconds(elapsed))
        if self.done == 0:
            return clock(None)
        return clock(elapsed / self.done * (self.total - self.done))

    def advance(self, name: str, status: str = "", *, note: str = "") -> None:
        """One item finished: ``status`` (e.g. a verdict) and an optional ``note`` line that
        stays on screen (e.g. an unexpected verdict)."""
        self.done += 1
        if self.eta is not None:
            self.eta.finish(name)
        if self.quiet:
            return
        elapsed = time.perf_counter() - self.start
        if self._live is not None:
            if note:
                self._live.console.print(note, markup=False, highlight=False)
            self._live.update(self._task, completed=self.done, eta=self._eta_text(),
                              last=f"{status} {name}".strip())
            return
        if not note and self.done % self.plain_every and self.done != self.total:
            return
        width = len(str(self.total))
        line = (f"[{self.done:>{width}}/{self.total}] {clock(elapsed)} "
                f"eta {self._eta_text()} {status + ' ' if status else ''}{name}")
        print(line + (f"\n  {note}" if note else ""), file=self.stream, flush=True)

    def claim_done(self, done: int, total: int, result, elapsed: float) -> None:
        """The runner's ``progress`` callback (``run_claims(..., progress=bar.claim_done)``).

        The runner calls it for each task this run finishes, not for those resumed from the
        store: they were counted as done when the bar started (``done``), so the count goes on
        from there; the runner's ``done`` counts resumed tasks as it meets them."""
        note = "" if result.as_expected else (f"UNEXPECTED {result.id}: {result.verdict} "
                                              f"(expected {result.expected})")
        self.advance(result.id, f"{result.verdict} {result.elapsed_s:.1f}s", note=note)

    def message(self, text: str) -> None:
        """A line above the bar (or a plain line); nothing when quiet."""
        if self.quiet:
            return
        if self._live is not None:
            self._live.console.print(text, markup=False, highlight=False)
        else:
            print(text, file=self.stream, flush=True)


def _is_terminal(stream) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def inlined(dispatcher) -> bool:
    """True for an ``@njit(inline="always")`` kernel: numba inlines it into each kernel that
    calls it, in that caller's cache entry, so it has a cache index of its own only when
    Python calls it directly (most never are, and stay without one after every run)."""
    options = getattr(dispatcher, "targetoptions", None) or {}
    return options.get("inline") == "always"


def uncached_kernels(dispatchers) -> list[str]:
    """Names of ``@njit(cache=True)`` dispatchers that have no on-disk cache index yet;
    inlined kernels (:func:`inlined`) are not counted: they are cached inside their callers."""
    missing = []
    for dispatcher in dispatchers:
        if inlined(dispatcher):
            continue
        cache = getattr(dispatcher, "_cache", None)
        index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
        if index is not None and not os.path.exists(index):
            missing.append(dispatcher.__name__)
    return missing


def _library_kernels():
    """The library's kernels that numba compiles and caches on their own (not inlined)."""
    import importlib
    import pkgutil

    from numba.core.registry import CPUDispatcher

    import flbounds.kernels as kernels

    found = []
    for info in pkgutil.iter_modules(kernels.__path__):
        module = importlib.import_module(f"{kernels.__name__}.{info.name}")
        found += [v for v in vars(module).values() if isinstance(v, CPUDispatcher)
                  and v.__module__ == module.__name__ and not inlined(v)]
    return found


def numba_first_run_notice() -> str | None:
    """A one-line notice when the library's numba kernels have no cache yet (first run)."""
    try:
        kernels = _library_kernels()
    except ImportError:  # pragma: no cover - the kernels always import in a working install
        return None
    missing = uncached_kernels(kernels)
    # a few kernels serve only benchmarks or the full profile and stay uncached after a
    # quick run; a first run is one where a large share has no cache yet
    if len(missing) < max(1, len(kernels) // 4):
        return None
    return (f"first run: {len(missing)} of the library's {len(kernels)} compiled numba kernels "
            "are not cached yet; those the selected claims use compile on first use, once, "
            "shared by the workers, and are kept for later runs")


def claims_progress(claims, results_dir, profile: str, *, seed: int = 0, resume: bool = False,
                    quiet: bool = False) -> ProgressBar:
    """A started :class:`ProgressBar` for ``claims``, its ETA from the results store.

    With ``resume`` the tasks already stored (as the runner will skip them) count as done
    and are left out of the ETA.
    """
    from flbounds.ledger import ResultStore
    from flbounds.ledger.api.taskkey import task_key
    from flbounds.ledger.engine.history import stored_history

    durations, finished = stored_history(ResultStore(results_dir), profile)
    stored = finished if resume else set()
    todo = [c.id for c in claims if not resume or task_key(c, profile, seed) not in stored]
    bar = ProgressBar(len(claims), "claims", eta=Eta(todo, durations), quiet=quiet,
                      done=len(claims) - len(todo)).__enter__()
    notice = numba_first_run_notice()
    if notice:
        bar.message(notice)
    return bar


def summary_table(results, elapsed: float, *, verbose: bool = False) -> str:
    """End-of-run summary: verdicts per paper, then every unexpected verdict with its margin
    (:func:`~flbounds.cli._margin.margin`) and reproducer; the traceback of each claim that
    raised with ``verbose`` (else a pointer to ``-v``)."""
    from flbounds.ledger.api.result import shown_verdicts
    from flbounds.ledger.reports.report import by_paper, fmt

    from ._margin import margin, traceback_lines

    VERDICTS = shown_verdicts(results)
    head = ("paper", "claims", *VERDICTS, "as expected")
    rows = []
    for key, group in by_paper(results).items():
        counts = [sum(r.verdict == v for r in group) for v in VERDICTS]
        rows.append((key, len(group), *counts,
                     f"{sum(r.as_expected for r in group)}/{len(group)}"))
    totals = [sum(r.verdict == v for r in results) for v in VERDICTS]
    rows.append(("total", len(results), *totals,
                 f"{sum(r.as_expected for r in results)}/{len(results)}"))
    widths = [max(len(str(row[i])) for row in (head, *rows)) for i in range(len(head))]

    def line(cells):
        return "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    rule = line(["-" * w for w in widths])
    out = [line(head), rule, *(line(r) for r in rows[:-1]), rule, line(rows[-1])]
    unexpected = [r for r in results if not r.as_expected]
    verdict = "all as expected" if not unexpected else f"{len(unexpected)} UNEXPECTED"
    out.append(f"{len(results)} claims in {elapsed:.1f}s: {verdict}")
    for r in unexpected:
        out.append(f"  UNEXPECTED {r.id}: {r.verdict} (expected {r.expected}); measured "
                   f"{fmt(r.measured)} {r.relation} {fmt(r.theoretical)}"
                   + (f"; {r.reason.splitlines()[0]}" if r.reason else ""))
        if margin(r):
            out.append(f"    margin: {margin(r)}")
        out.append(f"    reproduce: {r.reproducer}")
    raised = [r for r in results if getattr(r, "traceback", "")]
    for r in raised if verbose else ():
        out += [f"  traceback of {r.id}:", *traceback_lines(r, "    ")]
    if raised and not verbose:
        out.append(f"  {len(raised)} claim(s) raised: -v prints their tracebacks")
    return "\n".join(out)
