"""Sphinx directive ``flbounds-cli``: the command-line reference, read from the parsers.

Each sub-command of :data:`flbounds.cli.COMMANDS` gets a section with its one-line help and
its ``--help`` text as the parser formats it, so the page cannot drift from the command.
"""

from __future__ import annotations

import os

from docutils import nodes
from docutils.parsers.rst import Directive


class CliReference(Directive):
    has_content = False

    def run(self):
        from flbounds.cli import COMMANDS, build_parser

        os.environ.setdefault("COLUMNS", "96")
        parser = build_parser()
        sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        out = []
        top = nodes.section(ids=["flbounds"])
        top += nodes.title(text="flbounds")
        top += nodes.literal_block(text=parser.format_help())
        out.append(top)
        for name in COMMANDS:
            section = nodes.section(ids=[f"flbounds-{name}"])
            section += nodes.title(text=f"flbounds {name}")
            section += nodes.literal_block(text=sub.choices[name].format_help())
            out.append(section)
        return out


def setup(app):
    app.add_directive("flbounds-cli", CliReference)
    return {"parallel_read_safe": True, "version": "1"}
