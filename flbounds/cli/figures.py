"""``flbounds figures [NAME ...]``: draw the papers' figures."""

from __future__ import annotations

import time
from pathlib import Path

from flbounds.ledger.registry import PROFILES

from ._common import DEFAULT_RESULTS, UsageError, non_negative_int

HELP = "draw the papers' figures"


def add_arguments(p) -> None:
    p.add_argument("names", nargs="*", metavar="NAME")
    p.add_argument("--out", type=Path, default=DEFAULT_RESULTS / "figures", metavar="DIR")
    p.add_argument("--profile", choices=PROFILES, default="quick")
    p.add_argument("--seed", type=non_negative_int, default=0)


def run(args) -> int:
    from flbounds.ledger.figures import select_figures

    try:
        chosen = select_figures(args.names)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    for name, module in chosen.items():
        start = time.perf_counter()
        paths = module.main(["--out", str(args.out), "--profile", args.profile,
                             "--seed", str(args.seed)])
        print(f"{name}: {', '.join(str(p) for p in paths)} "
              f"({time.perf_counter() - start:.1f}s)")
    return 0
