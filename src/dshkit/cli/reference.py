"""``dshkit reference``: render the session reference snapshot of some logs, with its
accounting. Only the logs named on the command line can be referenced: the resolver never
looks for a session anywhere else (spec REF-RES-001)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from . import exits
from .options import DEFAULT_SESSION_ID, add_json
from .report import Reporter, from_error


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Project each session log into the bounded, read-only snapshot a "
                          "referencing session would receive, and print it with its accounting.")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="session log file")
    parser.add_argument("--budget", type=int, default=None, metavar="BYTES",
                        help="UTF-8 byte budget of each source (default 65536)")
    parser.add_argument("--label", action="append", default=[], metavar="LABEL",
                        help="display label of the n-th PATH (repeatable; default: its id)")
    parser.add_argument("--text", default=None, metavar="TEXT",
                        help="a message whose mentions select the sources (only the given "
                        "PATHs can be resolved)")
    parser.add_argument("--target", default=DEFAULT_SESSION_ID, metavar="ID",
                        help="id of the referencing session (a source with this id is refused)")
    parser.add_argument("--max-references", type=int, default=3, metavar="N",
                        help="sources per message, 1 to 3 (default 3)")
    add_json(parser)


def _load(paths: list[str]) -> dict[str, Any]:
    from ..reference.projection import SessionReferenceError, snapshot_of_log
    from ..reference.projection.errors import READ_FAILED
    from ..reference.query import SessionQueryError, load_session
    from ..reference.query.errors import PERSISTENCE_FAILED

    snapshots: dict[str, Any] = {}
    for path in paths:
        try:
            loaded = load_session(path)
        except SessionQueryError as exc:
            io = exc.code == PERSISTENCE_FAILED
            error = SessionReferenceError(READ_FAILED,
                                          f"failed to read referenced session: {exc.message}")
            raise from_error(error.to_json(), exits.USAGE if io else exits.INVALID,
                             path=path) from None
        snapshots.setdefault(loaded.session_id,
                             snapshot_of_log(loaded.header, loaded.events))
    return snapshots


def _references(args: argparse.Namespace, ids: list[str]) -> tuple[list[Any], str | None]:
    from ..reference.projection import parse_text

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


def _accounting(entry: dict[str, Any], size: int, budget: int) -> str:
    return (f"- {entry['sessionId']} ({json.dumps(entry['label'], ensure_ascii=False)}): "
            f"{entry['retainedMessages']}/{entry['originalMessages']} messages kept, "
            f"{entry['omittedMessages']} dropped, {entry['omittedBytes']} bytes omitted, "
            f"{size}/{budget} bytes, captured through seq {entry['capturedThroughSeq']}, "
            f"compacted: {'yes' if entry['compacted'] else 'no'}, "
            f"truncated: {'yes' if entry['truncated'] else 'no'}")


def run(args: argparse.Namespace, out: Reporter) -> int:
    from ..reference.projection import (
        ReferenceConfig,
        SessionReferenceError,
        encode_uri,
        format_mention,
        prepare,
        snapshots_resolver,
    )
    from ..reference.projection.errors import INVALID_CONFIG

    try:
        config = ReferenceConfig(max_references=args.max_references,
                                 max_reference_bytes=args.budget if args.budget is not None
                                 else ReferenceConfig().max_reference_bytes)
        snapshots = _load(args.paths)
        references, text = _references(args, list(snapshots))
        prepared = prepare(args.target, [{"type": "text", "text": text or ""}], references,
                           snapshots_resolver(snapshots), config)
    except SessionReferenceError as exc:
        usage = exc.code == INVALID_CONFIG
        raise from_error(exc.to_json(), exits.USAGE if usage else exits.INVALID,
                         flag="--budget or --max-references" if usage else None) from None
    budget = config.max_reference_bytes
    rows = [{**source.entry(), "size": source.retained.size, "budget": budget,
             "uri": encode_uri(source.reference.session_id),
             "mention": format_mention(source.reference.session_id, source.reference.label)}
            for source in prepared.sources]
    if out.json:
        result: dict[str, Any] = {"valid": True}
        if text is not None:
            result["text"] = text
        result.update({"message": prepared.additional_context, "prompt": prepared.prompt,
                       "references": rows})
        out.emit(result)
        return exits.OK
    if prepared.prompt is None:
        out.say("no session references")
        return exits.OK
    out.say(prepared.prompt)
    out.say("")
    out.say("accounting:")
    for row in rows:
        out.say(_accounting(row, row["size"], budget))
    return exits.OK
