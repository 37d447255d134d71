"""The ``dshkit`` command line. Exit codes: 0 valid, 1 invalid, 2 usage or I/O error,
3 internal error (always reported as a structured message, never a traceback)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from . import (
    __version__,
    adapters_cli,
    compact_cli,
    conformance_cli,
    goal_cli,
    memory_cli,
    query_cli,
    reference_cli,
)
from .reference.problems import Problem
from .reference.session.folding import FoldReport, fold_path
from .reference.session.levels import Level
from .reference.session.recovery import repair_path
from .reference.session.single_pass import validate_and_fold
from .reference.session.validation import validate_path

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
_IO_CODES = frozenset({"IO_ERROR"})


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dshkit", description="Validate, fold and repair DeepSeek Harness session logs.")
    parser.add_argument("--version", action="version", version=f"dshkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    validate = sub.add_parser("validate", help="check logs against a conformance level")
    validate.add_argument("paths", nargs="+", metavar="PATH", help="log file, or - for stdin")
    validate.add_argument("--level", choices=[lv.value for lv in Level], default="load",
                          help="conformance level (default: load, the strictest)")
    validate.add_argument("--json", action="store_true", help="one JSON object per file")
    validate.add_argument("--session-id", help="session id for legacy message ids "
                          "(default: the header's id)")
    validate.add_argument("--typed", action="store_true",
                          help="also check the closed payload shapes of the 48 known types "
                               "(reported beside the verdict, never changing it)")
    validate.add_argument("--fold", action="store_true",
                          help="also fold the log as a loader does, in the same pass "
                               "(level load only)")

    fold = sub.add_parser("fold", help="print the surface a model would see")
    fold.add_argument("path", metavar="PATH")
    fold.add_argument("--json", action="store_true")
    fold.add_argument("--no-repair", action="store_true",
                      help="fold exactly what is stored (no closers, no legacy migration)")
    fold.add_argument("--session-id")

    repair = sub.add_parser("repair", help="close an unclosed turn")
    repair.add_argument("path", metavar="PATH")
    repair.add_argument("--json", action="store_true")
    repair.add_argument("--write", action="store_true",
                        help="append the closers to the file atomically")
    memory_cli.add_parser(sub)
    reference_cli.add_parser(sub)
    query_cli.add_parser(sub)
    compact_cli.add_parser(sub)
    goal_cli.add_parser(sub)
    adapters_cli.add_parser(sub)
    adapters_cli.add_convert_alias(sub)
    conformance_cli.add_parser(sub)
    return parser


def _describe(problem: Problem) -> str:
    where = []
    if problem.line is not None:
        where.append(f"line {problem.line}")
    if problem.seq is not None:
        where.append(f"seq {problem.seq}")
    if problem.pointer:
        where.append(problem.pointer)
    location = f" ({', '.join(where)})" if where else ""
    return f"{problem.code} [{problem.requirement}]{location}: {problem.message}"


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")


def _exit_for(errors: Sequence[Problem]) -> int:
    if not errors:
        return EXIT_OK
    return EXIT_USAGE if any(p.code in _IO_CODES for p in errors) else EXIT_INVALID


def _cmd_validate(args: argparse.Namespace) -> int:
    if args.fold and args.level != Level.LOAD.value:
        print("dshkit validate: --fold needs --level load", file=sys.stderr)
        return EXIT_USAGE
    worst = EXIT_OK
    for path in args.paths:
        fold: FoldReport | None = None
        if args.fold:
            both = validate_and_fold(path, session_id=args.session_id, typed=args.typed)
            report, fold = both.validation, both.fold
        else:
            report = validate_path(path, Level(args.level), session_id=args.session_id,
                                   typed=args.typed)
        if args.json:
            _emit(report.to_json() if fold is None else {**report.to_json(),
                                                         "fold": fold.to_json()})
        elif report.valid:
            torn = f", torn tail of {report.torn.lines} line(s) dropped" if report.torn else ""
            print(f"{path}: valid at level {args.level} ({report.events} events{torn})")
        else:
            failed = report.failed_level.value if report.failed_level else args.level
            for problem in report.errors:
                print(f"{path}: invalid at level {args.level}: {_describe(problem)} "
                      f"(fails level {failed})")
        if not args.json and report.typed:
            for problem in report.typed:
                print(f"{path}: typed layer: {_describe(problem)}")
        if not args.json and fold is not None:
            print(f"{path}: {_fold_summary(fold)}")
        worst = max(worst, _exit_for(report.errors))
    return worst


def _fold_summary(fold: FoldReport) -> str:
    if not fold.valid:
        return f"cannot fold: {_describe(fold.errors[0])}"
    closers = f", {len(fold.closers)} repair closer(s)" if fold.closers else ""
    return (f"fold: {len(fold.nodes)} surface node(s), {len(fold.shadowed)} shadowed, "
            f"{len(fold.messages)} message(s){closers}")


def _cmd_fold(args: argparse.Namespace) -> int:
    report = fold_path(args.path, repair=not args.no_repair, session_id=args.session_id)
    if args.json:
        _emit(report.to_json())
    elif not report.valid:
        for problem in report.errors:
            print(f"{args.path}: cannot fold: {_describe(problem)}")
    else:
        print(f"nodes: {list(report.nodes)}")
        print(f"shadowed: {list(report.shadowed)}")
        if report.closers:
            print(f"repair closers (in memory): {[c['seq'] for c in report.closers]}")
        for message in report.messages:
            print(f"- {message.get('role')} {message.get('id')}: {_summary(message)}")
    return _exit_for(report.errors)


def _summary(message: dict[str, Any]) -> str:
    parts = []
    for block in message.get("content") or []:
        if isinstance(block, dict):
            text = block.get("text")
            parts.append(text if isinstance(text, str) else f"[{block.get('type')}]")
    line = " ".join(parts).replace("\n", " ")
    return line if len(line) <= 100 else line[:97] + "..."


def _cmd_repair(args: argparse.Namespace) -> int:
    report = repair_path(args.path, write=args.write)
    if args.json:
        _emit(report.to_json())
    elif not report.valid:
        for problem in report.errors:
            print(f"{args.path}: cannot repair: {_describe(problem)}")
    else:
        if not report.closers:
            print(f"{args.path}: balanced; no closers needed")
        for event in report.closers:
            print(json.dumps(event, ensure_ascii=False, separators=(",", ":")))
        if report.written:
            print(f"{args.path}: repaired in place", file=sys.stderr)
    return _exit_for(report.errors)


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    handlers = {"validate": _cmd_validate, "fold": _cmd_fold, "repair": _cmd_repair,
                "memory": memory_cli.run, "reference": reference_cli.run,
                "query": query_cli.run, "compact": compact_cli.run, "goal": goal_cli.run,
                "adapt": adapters_cli.run,
                "convert": adapters_cli.run_convert_alias, "conformance": conformance_cli.run}
    try:
        return handlers[args.command](args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # the CLI never shows a traceback
        _emit({"code": "INTERNAL_ERROR", "message": f"{type(exc).__name__}: {exc}",
               "hint": "this is a dshkit bug; please report it with the input"})
        return EXIT_INTERNAL


if __name__ == "__main__":
    raise SystemExit(main())
