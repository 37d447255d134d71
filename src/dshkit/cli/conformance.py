"""``dshkit conformance``: run the conformance kit against an implementation (default: the
reference) and report; the options are those of :mod:`dshkit.conformance.console`."""

from __future__ import annotations

import argparse

from .report import Reporter


def configure(parser: argparse.ArgumentParser) -> None:
    from ..conformance import console

    parser.description = ("Run the dshkit conformance vectors against an implementation "
                          "(default: the reference) and report: console summary, JSON, JUnit "
                          "XML, Markdown.")
    console.add_arguments(parser)


def run(args: argparse.Namespace, out: Reporter) -> int:
    from ..conformance import console

    return console.execute(args)
