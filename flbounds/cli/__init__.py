"""The ``flbounds`` command line: one module per sub-command.

Exit codes: 0 every verdict as expected; 1 an unexpected verdict or an error; 2 usage (unknown
claim or figure, bad option, unreachable scheduler), always with a one-line message.

Each sub-command module defines ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``;
:data:`COMMANDS` lists them in the order ``flbounds --help`` shows.
"""

from __future__ import annotations

import importlib
import sys
import warnings

from ._common import DEFAULT_RESULTS, Parser, UsageError, show_warning

#: sub-command name -> module under ``flbounds.cli`` (a new command is one module + one line)
COMMANDS = {
    "list": "list",
    "check": "check",
    "figures": "figures",
    "report": "report",
    "show": "show",
    "falsify": "falsify",
    "replay": "replay",
    "bound": "bound",
}

__all__ = ["COMMANDS", "DEFAULT_RESULTS", "UsageError", "build_parser", "main"]


def _module(name: str):
    return importlib.import_module(f"{__name__}.{COMMANDS[name]}")


def build_parser() -> Parser:
    parser = Parser(prog="flbounds", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for name in COMMANDS:
        module = _module(name)
        module.add_arguments(sub.add_parser(name, help=module.HELP))
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        with warnings.catch_warnings():
            warnings.showwarning = show_warning
            args = build_parser().parse_args(argv)
            return _module(args.command).run(args)
    except UsageError as exc:
        print(f"flbounds: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. 'flbounds list | head': the reader left, not an error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("flbounds: interrupted (finished results are stored; rerun with --resume)",
              file=sys.stderr)
        return 130
