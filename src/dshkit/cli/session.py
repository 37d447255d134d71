"""``dshkit validate``, ``fold`` and ``repair``: the session log commands."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from ..reference.session.levels import Level
from . import exits
from .options import add_json
from .problems import describe, exit_for, refusal
from .progress import names as _names
from .progress import working
from .report import Reporter, usage

if TYPE_CHECKING:
    from ..reference.session.folding import FoldReport
    from ..reference.session.recovery import RepairReport


FORM_HELP = ("the input's form: dsh (a header line, then records, plain or zstd), jsonl "
             "(events one per line, no header) or array (a JSON array of events); by "
             "default: zstd frames are dsh, input starting with [ is array, a first line "
             "with type \"session\" (or a cut one starting {\"type\":\"session\") is dsh, "
             "anything else jsonl (spec: SES-FILE-015)")


def add_form(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--form", choices=("dsh", "jsonl", "array"), help=FORM_HELP)


def configure_validate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="log file, or - for stdin")
    parser.add_argument("--level", choices=[lv.value for lv in Level], default="load",
                        help="conformance level: append, seed, invariants, or load (default): "
                             "the file as DSH's loader reads it (header, format version, "
                             "committed region: a crash's torn tail is dropped and reported, "
                             "legacy migration, repair)")
    add_form(parser)
    add_json(parser)
    parser.add_argument("--session-id", metavar="ID", help="session id for legacy message ids "
                        "(default: the header's id)")
    parser.add_argument("--typed", action="store_true",
                        help="also check the closed payload shapes of the 48 known types "
                             "(reported beside the verdict, never changing it)")
    parser.add_argument("--fold", action="store_true",
                        help="also fold the log as a loader does, in the same pass "
                             "(level load only)")


def run_validate(args: argparse.Namespace, out: Reporter) -> int:
    if args.fold and args.level != Level.LOAD.value:
        raise usage("--fold needs --level load", flag="--level")
    worst = exits.OK
    for path in args.paths:
        fold: FoldReport | None = None
        if args.fold:
            from ..reference.session.single_pass import validate_and_fold

            with working(out, f"validating and folding {_names([path])}"):
                both = validate_and_fold(path, session_id=args.session_id, typed=args.typed,
                                         form=args.form)
            report, fold = both.validation, both.fold
        else:
            from ..reference.session.validation import validate_path

            with working(out, f"validating {_names([path])} at level {args.level}"):
                report = validate_path(path, Level(args.level), session_id=args.session_id,
                                       typed=args.typed, form=args.form)
        if out.json:
            body = report.to_json() if fold is None else {**report.to_json(),
                                                          "fold": fold.to_json()}
            if report.errors:
                out.emit(refusal(report.errors[0], path, body).envelope(out.command))
            else:
                out.emit(body)
        elif report.valid:
            torn = f", torn tail of {report.torn.lines} line(s) dropped" if report.torn else ""
            out.say(f"{path}: valid at level {args.level} ({report.events} events{torn})")
        else:
            failed = report.failed_level.value if report.failed_level else args.level
            for problem in report.errors:
                out.say(f"{path}: invalid at level {args.level}: {describe(problem)} "
                        f"(fails level {failed})")
        if not out.json and report.typed:
            for problem in report.typed:
                out.say(f"{path}: typed layer: {describe(problem)}")
        if not out.json and fold is not None:
            out.say(f"{path}: {_fold_summary(fold)}")
        worst = max(worst, exit_for(report.errors))
    return worst


def _fold_summary(fold: FoldReport) -> str:
    if not fold.valid:
        return f"cannot fold: {describe(fold.errors[0])}"
    closers = f", {len(fold.closers)} repair closer(s)" if fold.closers else ""
    return (f"fold: {len(fold.nodes)} surface node(s), {len(fold.shadowed)} shadowed, "
            f"{len(fold.messages)} message(s){closers}")


def configure_fold(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="log file, or - for stdin")
    add_form(parser)
    add_json(parser)
    parser.add_argument("--no-repair", action="store_true",
                        help="fold exactly what is stored (no closers, no legacy migration)")
    parser.add_argument("--session-id", metavar="ID", help="session id for legacy message ids "
                        "(default: the header's id)")


def run_fold(args: argparse.Namespace, out: Reporter) -> int:
    from ..reference.session.folding import fold_path

    with working(out, f"folding {_names([args.path])}"):
        report = fold_path(args.path, repair=not args.no_repair, session_id=args.session_id,
                           form=args.form)
    if _refused_or_emitted(out, args.path, report, "fold"):
        return exit_for(report.errors)
    if not out.json:
        out.say(f"nodes: {list(report.nodes)}")
        out.say(f"shadowed: {list(report.shadowed)}")
        if report.closers:
            out.say(f"repair closers (in memory): {[c['seq'] for c in report.closers]}")
        for message in report.messages:
            out.say(f"- {message.get('role')} {message.get('id')}: {_summary(message)}")
    return exits.OK


def _refused_or_emitted(out: Reporter, path: str, report: FoldReport | RepairReport,
                        verb: str) -> bool:
    """The shared tail of fold and repair: with ``--json`` the report or its refusal is
    written (True); without it a refusal is told line by line (True); False leaves a valid
    report to the command's own text."""
    if out.json:
        if report.errors:
            out.refuse(refusal(report.errors[0], path, report.to_json()))
        else:
            out.emit(report.to_json())
        return True
    if report.valid:
        return False
    for problem in report.errors:
        out.say(f"{path}: cannot {verb}: {describe(problem)}")
    return True


def _summary(message: dict[str, Any]) -> str:
    parts = []
    for block in message.get("content") or []:
        if isinstance(block, dict):
            text = block.get("text")
            parts.append(text if isinstance(text, str) else f"[{block.get('type')}]")
    line = " ".join(parts).replace("\n", " ")
    return line if len(line) <= 100 else line[:97] + "..."


def configure_repair(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="log file")
    add_json(parser)
    parser.add_argument("--write", action="store_true",
                        help="append the closers to the file atomically")


def run_repair(args: argparse.Namespace, out: Reporter) -> int:
    from ..reference.session.recovery import repair_path

    report = repair_path(args.path, write=args.write)
    if _refused_or_emitted(out, args.path, report, "repair"):
        return exit_for(report.errors)
    if not out.json:
        if not report.closers:
            out.say(f"{args.path}: balanced; no closers needed")
        for event in report.closers:
            out.say(json.dumps(event, ensure_ascii=False, separators=(",", ":")))
        if report.written:
            out.note(f"{args.path}: repaired in place")
    return exits.OK
