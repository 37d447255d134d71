"""``dshkit compliance build``: render the published conformance reports as a static site
(:mod:`dshkit.conformance.site`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from . import exits
from .options import add_json
from .report import Refusal, Reporter, io_error


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Render the conformance kit's reports of several implementations as "
                          "a static compliance site: a matrix of implementations by "
                          "capability, a page per implementation, requirement and case, and "
                          "SVG badges.")
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    build = sub.add_parser("build", help="build the site", description=parser.description)
    build.add_argument("--out", required=True, type=Path, metavar="DIR",
                       help="the folder to write the site to (its impl/, req/, case/ and "
                       "badges/ folders are replaced, nothing else is removed)")
    build.add_argument("--reports", type=Path, default=Path("compliance/reports"),
                       metavar="DIR", help="the folder of kit reports (<name>.json, with "
                       "optional <name>.meta.json sidecars; default compliance/reports)")
    build.add_argument("--spec", type=Path, default=Path("spec"), metavar="DIR",
                       help="the specification's Markdown, for its Divergence notes "
                       "(default spec; without it the notes are not shown)")
    build.add_argument("--spec-site", metavar="PATH",
                       help="where the built spec site is, relative to --out (for example "
                       "..); requirement links are then relative, else the published URLs")
    add_json(build)


def run(args: argparse.Namespace, out: Reporter) -> int:
    from ..conformance.site import SiteError, build_site

    try:
        built = build_site(args.out, args.reports, args.spec if args.spec.is_dir() else None,
                           args.spec_site)
    except SiteError as exc:
        raise Refusal(exc.code, exc.message, exit_code=exits.USAGE, path=exc.path,
                      flag="--reports") from None
    except OSError as exc:
        raise io_error(str(args.out), str(exc.strerror or exc), "--out") from None
    if out.json:
        out.emit({"out": str(built.out), "implementations": list(built.implementations),
                  "pages": built.pages, "badges": built.badges})
    else:
        out.say(f"{built.out}: {built.pages} pages and {built.badges} badges for "
                f"{len(built.implementations)} implementations "
                f"({', '.join(built.implementations)}); open {built.out / 'index.html'}")
    return exits.OK
