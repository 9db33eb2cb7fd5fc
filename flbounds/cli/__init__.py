"""The ``flbounds`` command line: one module per sub-command.

Exit codes: 0 every verdict as expected; 1 an unexpected verdict or an error; 2 usage (unknown
claim or figure, bad option, unreachable scheduler), always with a one-line message.

Each sub-command module defines ``HELP``, ``EXAMPLES`` (the end of its ``--help``),
``add_arguments(parser)`` and ``run(args) -> int``;
:data:`COMMANDS` lists them in the order ``flbounds --help`` shows.
"""

from __future__ import annotations

import argparse
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
    "findings": "findings",
    "show": "show",
    "falsify": "falsify",
    "replay": "replay",
    "bound": "bound",
    "atlas": "atlas",
}

__all__ = ["COMMANDS", "DEFAULT_RESULTS", "UsageError", "build_parser", "main"]


def _module(name: str):
    return importlib.import_module(f"{__name__}.{COMMANDS[name]}")


DESCRIPTION = """\
Check, claim by claim, the theorems of federated-learning papers on partial client
participation: every numbered result's parts, its hypotheses evaluated on each instance,
its printed bound, worst cases and counterexamples."""
EXAMPLES = """examples:
  flbounds check --profile quick --workers 2    every claim, a table per paper
  flbounds show focus.lemma4                    one result: parts, hypotheses, claims
  flbounds check focus.lemma4 --json out.json   one result's claims, rows as JSON
  flbounds bound focus.thm1a mu=1 L=2 p=0.3,0.5 tau=3
  flbounds falsify focus.lemma4.rare_participation --budget 300
  flbounds report                               the HTML ledger of the stored results
  flbounds findings focus                       what fails in a paper, and by how much
  flbounds atlas                                worst-case rates against participation

exit codes: 0 every verdict as expected, 1 an unexpected verdict or an error, 2 usage"""


def build_parser() -> Parser:
    from flbounds import __version__

    parser = Parser(prog="flbounds", description=DESCRIPTION, epilog=EXAMPLES,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"flbounds {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for name in COMMANDS:
        module = _module(name)
        module.add_arguments(sub.add_parser(
            name, help=module.HELP, description=module.HELP, epilog=module.EXAMPLES,
            formatter_class=argparse.RawDescriptionHelpFormatter))
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
