"""``dshkit reference``: render the session reference snapshot of some logs, with its
accounting. Only the logs named on the command line can be referenced: the resolver never
looks for a session anywhere else (spec REF-RES-001)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .reference.projection import (
    ReferenceConfig,
    SessionReferenceError,
    SurfaceSnapshot,
    encode_uri,
    format_mention,
    parse_text,
    prepare,
    snapshot_of_log,
    snapshots_resolver,
)
from .reference.projection.errors import INVALID_CONFIG, READ_FAILED
from .reference.query import SessionQueryError, load_session
from .reference.query.errors import PERSISTENCE_FAILED

EXIT_OK, EXIT_REFUSED, EXIT_USAGE = 0, 1, 2
DEFAULT_TARGET = "dshkit-cli"


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "reference", help="render the cross-session reference snapshot of session logs",
        description="Project each session log into the bounded, read-only snapshot a "
        "referencing session would receive, and print it with its accounting.")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="session log file")
    parser.add_argument("--budget", type=int, default=None, metavar="BYTES",
                        help="UTF-8 byte budget of each source (default 65536)")
    parser.add_argument("--label", action="append", default=[], metavar="LABEL",
                        help="display label of the n-th PATH (repeatable; default: its id)")
    parser.add_argument("--text", default=None, metavar="TEXT",
                        help="a message whose mentions select the sources (only the given "
                        "PATHs can be resolved)")
    parser.add_argument("--target", default=DEFAULT_TARGET, metavar="ID",
                        help="id of the referencing session (a source with this id is refused)")
    parser.add_argument("--max-references", type=int, default=3, metavar="N",
                        help="sources per message, 1 to 3 (default 3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


class _ReadError(Exception):
    def __init__(self, error: SessionReferenceError, io: bool) -> None:
        super().__init__(error.message)
        self.error, self.io = error, io


def _load(paths: list[str]) -> dict[str, SurfaceSnapshot]:
    snapshots: dict[str, SurfaceSnapshot] = {}
    for path in paths:
        try:
            loaded = load_session(path)
        except SessionQueryError as exc:
            error = SessionReferenceError(READ_FAILED,
                                          f"failed to read referenced session: {exc.message}")
            raise _ReadError(error, exc.code == PERSISTENCE_FAILED) from None
        snapshots.setdefault(loaded.session_id,
                             snapshot_of_log(loaded.header, loaded.events))
    return snapshots


def _references(args: argparse.Namespace, ids: list[str]) -> tuple[list[Any], str | None]:
    if args.text is not None:
        parsed = parse_text(args.text)
        return list(parsed.references), parsed.text
    refs: list[Any] = []
    for index, session_id in enumerate(ids):
        ref: dict[str, Any] = {"sessionId": session_id}
        if index < len(args.label):
            ref["label"] = args.label[index]
        refs.append(ref)
    return refs, None


def _fail(error: SessionReferenceError, args: argparse.Namespace, code: int) -> int:
    if args.json:
        sys.stdout.write(json.dumps({"valid": False, "error": error.to_json()},
                                    ensure_ascii=False) + "\n")
    else:
        print(f"{error.code}: {error.message}", file=sys.stderr)
    return code


def _accounting(entry: dict[str, Any], size: int, budget: int) -> str:
    return (f"- {entry['sessionId']} ({json.dumps(entry['label'], ensure_ascii=False)}): "
            f"{entry['retainedMessages']}/{entry['originalMessages']} messages kept, "
            f"{entry['omittedMessages']} dropped, {entry['omittedBytes']} bytes omitted, "
            f"{size}/{budget} bytes, captured through seq {entry['capturedThroughSeq']}, "
            f"compacted: {'yes' if entry['compacted'] else 'no'}, "
            f"truncated: {'yes' if entry['truncated'] else 'no'}")


def run(args: argparse.Namespace) -> int:
    try:
        config = ReferenceConfig(max_references=args.max_references,
                                 max_reference_bytes=args.budget if args.budget is not None
                                 else ReferenceConfig().max_reference_bytes)
        snapshots = _load(args.paths)
        references, text = _references(args, list(snapshots))
        prepared = prepare(args.target, [{"type": "text", "text": text or ""}], references,
                           snapshots_resolver(snapshots), config)
    except _ReadError as exc:
        return _fail(exc.error, args, EXIT_USAGE if exc.io else EXIT_REFUSED)
    except SessionReferenceError as exc:
        return _fail(exc, args, EXIT_USAGE if exc.code == INVALID_CONFIG else EXIT_REFUSED)
    budget = config.max_reference_bytes
    rows = [{**source.entry(), "size": source.retained.size, "budget": budget,
             "uri": encode_uri(source.reference.session_id),
             "mention": format_mention(source.reference.session_id, source.reference.label)}
            for source in prepared.sources]
    if args.json:
        out: dict[str, Any] = {"valid": True}
        if text is not None:
            out["text"] = text
        out.update({"message": prepared.additional_context, "prompt": prepared.prompt,
                    "references": rows})
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        return EXIT_OK
    if prepared.prompt is None:
        print("no session references")
        return EXIT_OK
    print(prepared.prompt)
    print()
    print("accounting:")
    for row in rows:
        print(_accounting(row, row["size"], budget))
    return EXIT_OK
