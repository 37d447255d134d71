"""``dshkit conformance``: run the conformance kit against an implementation (default: the
reference) and report; the options are those of :mod:`dshkit.conformance.console`."""

from __future__ import annotations

import argparse
from typing import Any

from .conformance import console


def add_parser(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "conformance", help="run the conformance kit against an implementation",
        description="Run the dshkit conformance vectors against an implementation (default: "
                    "the reference) and report: console summary, JSON, JUnit XML, Markdown.")
    console.add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    return console.execute(args)
