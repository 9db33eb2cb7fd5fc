"""``flbounds figures [NAME ...]``: draw the papers' figures.

Each figure writes PNG, PDF, the plotted numbers (``.npz``) and a JSON record (parameters,
seed, versions, claims illustrated, duration) into ``--out``; the durations recorded there
give the next run its ETA. Figures log through :mod:`logging` (``-v`` shows their debug
lines); stdout carries only the final list of what was written.
"""

from __future__ import annotations

import json
import logging
import sys
import traceback
from pathlib import Path

from flbounds.ledger.api.registry import PROFILES
from flbounds.ledger.engine.outputs import OutputError, output_folder

from ._common import DEFAULT_RESULTS, SEED_HELP, UsageError, non_negative_int
from ._progress import Eta, ProgressBar, numba_first_run_notice

HELP = "draw the papers' figures"
EXAMPLES = """examples:
  flbounds figures                         every figure, quick profile
  flbounds figures focus_contraction       one figure (PNG 300 dpi, PDF, data, record)
  flbounds figures kvib --out figs -v      a paper's figures with their debug log"""
log = logging.getLogger("flbounds.figures")


def add_arguments(p) -> None:
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="figure names or prefixes (default: all)")
    p.add_argument("--out", type=Path, default=DEFAULT_RESULTS / "figures", metavar="DIR",
                   help=f"output folder (default: {DEFAULT_RESULTS / 'figures'})")
    p.add_argument("--profile", choices=PROFILES, default="quick",
                   help="quick: small instances, seconds per figure; full: the papers' sizes")
    p.add_argument("--seed", type=non_negative_int, default=0, help=SEED_HELP)
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("-v", "--verbose", action="store_true", help="the figures' debug log")


def stored_durations(out_dir: Path, profile: str) -> dict[str, float]:
    """Seconds each figure took on its last run with ``profile`` (from ``<name>.json``)."""
    durations = {}
    for path in Path(out_dir).glob("*.json") if Path(out_dir).is_dir() else ():
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(meta, dict) and meta.get("profile") == profile and "elapsed_s" in meta:
            durations[meta.get("name", path.stem)] = float(meta["elapsed_s"])
    return durations


class _StderrHandler(logging.Handler):
    """Writes to whatever ``sys.stderr`` is now (a live progress bar redirects it)."""

    def emit(self, record) -> None:
        print(self.format(record), file=sys.stderr, flush=True)


def _configure_logging(verbose: bool, quiet: bool) -> None:
    """The figures' log on stderr: warnings by default, errors with ``--quiet``, all with -v."""
    level = logging.DEBUG if verbose else logging.ERROR if quiet else logging.WARNING
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    for name in ("figures", "flbounds"):
        logger = logging.getLogger(name)
        for old in [h for h in logger.handlers if isinstance(h, _StderrHandler)]:
            logger.removeHandler(old)
        logger.addHandler(handler)
        logger.setLevel(level)
        logger.propagate = False


def select_figures(names):
    """Figure name -> module for ``names`` (prefixes; all when empty); ValueError if unknown."""
    from flbounds.ledger.api.figures import select_figures as select

    return select(names)


def run(args) -> int:
    try:
        chosen = select_figures(args.names)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        output_folder(args.out, "--out")     # a file, no permission, ...: before any work
    except OutputError as exc:
        raise UsageError(str(exc)) from None
    _configure_logging(args.verbose, args.quiet)
    eta = Eta(list(chosen), stored_durations(args.out, args.profile))
    written, failed = [], []
    with ProgressBar(len(chosen), "figures", eta=eta, quiet=args.quiet) as bar:
        notice = numba_first_run_notice()
        if notice:
            bar.message(notice)
        for name, module in chosen.items():
            try:
                paths = module.main(["--out", str(args.out), "--profile", args.profile,
                                     "--seed", str(args.seed)])
            except Exception as exc:  # one broken figure does not stop the others
                log.debug("%s", traceback.format_exc())
                failed.append(name)
                bar.advance(name, "failed", note=f"{name} failed: {type(exc).__name__}: {exc}")
                continue
            written.append((name, paths))
            bar.advance(name, "drew")
    for name, paths in written:
        print(f"{name}: {', '.join(str(p) for p in paths)}")
    if failed:
        print(f"{len(failed)} of {len(chosen)} figures failed: {', '.join(failed)} "
              "(rerun with -v for the tracebacks)", file=sys.stderr)
        return 1
    return 0
