"""Run the benchmarks and collect their tables into ``<out>/BENCHMARKS.md``.

Each benchmark writes ``<out>/<name>.md`` (stamped with the date and machine line) and
``<name>.json``; the summary gathers every benchmark's latest table in ``<out>``, so
benchmarks may be run in separate invocations (e.g. the long full-profile wall-time run on
its own) and still land in one file.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import time

import benchmarks
from benchmarks._common import DEFAULT_OUT, OUT_HELP, PROFILE_HELP, machine_line, out_folder


def available() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__)
                  if not m.name.startswith("_"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__, add_help=False,
        epilog=f"benchmarks: {', '.join(available())}. Options a benchmark has of its own "
               "follow its name: python -m benchmarks NAME --help lists them.")
    parser.add_argument("names", nargs="*", help="benchmark names or prefixes (default: all)")
    parser.add_argument("--out", help=OUT_HELP)     # checked after --help (out_folder)
    parser.add_argument("--profile", choices=("quick", "full"), default="quick",
                        help=PROFILE_HELP)
    parser.add_argument("-h", "--help", action="store_true",
                        help="this help; after one benchmark's name, that benchmark's options")
    args, extra = parser.parse_known_args(argv)
    if extra and len(args.names) != 1:
        parser.error(f"options {extra} need exactly one benchmark name")
    names = [n for n in available()
             if not args.names or any(n.startswith(p) for p in args.names)]
    if not names:
        parser.error(f"no benchmark matches {args.names}; known: {', '.join(available())}")
    if args.help:
        if args.names and len(names) > 1:
            parser.error(f"--help: {' '.join(args.names)} matches several benchmarks: "
                         f"{', '.join(names)}")
        if args.names:
            sys.argv[0] = f"python -m benchmarks {names[0]}"     # the benchmark's usage line
            importlib.import_module(f"benchmarks.{names[0]}").main(["--help"])
        parser.print_help()
        return 0
    try:
        args.out = out_folder(args.out or str(DEFAULT_OUT))
    except argparse.ArgumentTypeError as exc:
        parser.error(f"argument --out: {exc}")
    for name in names:
        start = time.perf_counter()
        sys.argv[0] = f"python -m benchmarks {name}"    # the benchmark's usage line
        module = importlib.import_module(f"benchmarks.{name}")
        module.main(["--out", str(args.out), "--profile", args.profile, *extra])
        print(f"{name}: {time.perf_counter() - start:.1f}s", file=sys.stderr)
    sections = [(args.out / f"{name}.md").read_text() for name in available()
                if (args.out / f"{name}.md").is_file()]
    summary = args.out / "BENCHMARKS.md"
    summary.write_text(f"# flbounds benchmarks\n\n{machine_line()}\n\n" + "\n".join(sections))
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
