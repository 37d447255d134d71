"""``dshkit reference``: render the session reference snapshot of some logs, with its
accounting. Only the logs named on the command line can be referenced: the resolver never
looks for a session anywhere else (spec REF-RES-001)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from . import exits
from .options import DEFAULT_SESSION_ID, add_json
from .progress import names as _names
from .progress import working
from .report import Reporter, from_error, usage

MENTION_HELP = """\
A mention is @[label](dsh-session:<base64url of the JSON string of the session id>), for
example @[big](dsh-session:InMtYmlnIg) names session "s-big" (`\\` and `]` in the label are
escaped with a backslash). `dshkit reference --mention ID [--label L]` prints one. A bare
`@name` is not a mention. Without --text and --ref, every PATH is referenced."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Project each session log into the bounded, read-only snapshot a "
                          "referencing session would receive, and print it with its accounting.")
    parser.epilog = MENTION_HELP
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("paths", nargs="*", metavar="PATH", help="session log file")
    parser.add_argument("--session-id", action="append", default=[], metavar="ID",
                        help="session id of the n-th PATH (repeatable; default: the header's "
                        "id, or the file name of a log without a header)")
    parser.add_argument("--cwd", action="append", default=[], metavar="DIR",
                        help="working directory of the n-th PATH (repeatable; default: the "
                        "header's cwd)")
    parser.add_argument("--ref", action="append", default=[], metavar="ID",
                        help="reference this session id (repeatable; only the given PATHs "
                        "can be resolved); the label is the --label of its PATH")
    parser.add_argument("--mention", metavar="ID",
                        help="print the mention text of session ID (with --label: its label) "
                        "and exit; no PATH is read")
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


def _per_path(values: list[str], paths: list[str], flag: str) -> list[str | None]:
    if len(values) > len(paths):
        raise usage(f"{flag} was given {len(values)} times for {len(paths)} PATH(s); give it at "
                    "most once per PATH, in the same order", flag=flag)
    return [*values, *([None] * (len(paths) - len(values)))]


def _load(args: argparse.Namespace) -> dict[str, Any]:
    from ..reference.projection import SessionReferenceError, snapshot_of_log
    from ..reference.projection.errors import READ_FAILED
    from ..reference.query import SessionQueryError, load_session
    from ..reference.query.errors import CORRUPT_SESSION, PERSISTENCE_FAILED

    paths: list[str] = args.paths
    ids = _per_path(args.session_id, paths, "--session-id")
    cwds = _per_path(args.cwd, paths, "--cwd")
    snapshots: dict[str, Any] = {}
    for path, given_id, cwd in zip(paths, ids, cwds, strict=True):
        try:
            loaded = load_session(path)
        except SessionQueryError as exc:
            io = exc.code == PERSISTENCE_FAILED
            note = ("; dshkit reads a log as a loader does, at level load "
                    "(spec/query/documents.md#QRY-SRC-001)"
                    if exc.code == CORRUPT_SESSION else "")
            error = SessionReferenceError(READ_FAILED,
                                          f"failed to read referenced session: {exc.message}"
                                          f"{note}")
            raise from_error(error.to_json(), exits.USAGE if io else exits.INVALID,
                             path=path) from None
        session_id = given_id or loaded.session_id
        header = {**loaded.header, "id": session_id}
        if cwd is not None:
            header["cwd"] = cwd
        snapshots.setdefault(session_id, snapshot_of_log(header, loaded.events))
    return snapshots


def _references(args: argparse.Namespace, ids: list[str]) -> tuple[list[Any], str | None]:
    from ..reference.projection import parse_text

    if args.text is not None and args.ref:
        raise usage("give the references either as mentions in --text or with --ref, not both",
                    flag="--ref")
    if args.text is not None:
        parsed = parse_text(args.text)
        return list(parsed.references), parsed.text
    labels = dict(zip(ids, args.label, strict=False))
    refs: list[Any] = []
    for session_id in args.ref or ids:
        ref: dict[str, Any] = {"sessionId": session_id}
        if session_id in labels:
            ref["label"] = labels[session_id]
        refs.append(ref)
    return refs, None


def _accounting(entry: dict[str, Any], size: int, budget: int) -> str:
    cwd = f", cwd {entry['cwd']}" if entry.get("cwd") is not None else ""
    return (f"- {entry['sessionId']} ({json.dumps(entry['label'], ensure_ascii=False)}): "
            f"{entry['retainedMessages']}/{entry['originalMessages']} messages kept, "
            f"{entry['omittedMessages']} dropped, {entry['omittedBytes']} bytes omitted, "
            f"{size}/{budget} bytes, captured through seq {entry['capturedThroughSeq']}, "
            f"compacted: {'yes' if entry['compacted'] else 'no'}, "
            f"truncated: {'yes' if entry['truncated'] else 'no'}{cwd}")


def _cwd(snapshots: dict[str, Any], session_id: str) -> str | None:
    snapshot = snapshots.get(session_id)
    cwd = snapshot.session.get("cwd") if snapshot is not None else None
    return cwd if isinstance(cwd, str) else None


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

    if args.mention is not None:
        if args.paths:
            raise usage("--mention reads no PATH; leave the PATHs out", flag="--mention")
        label = args.label[0] if args.label else None
        mention = format_mention(args.mention, label)
        if out.json:
            out.emit({"valid": True, "sessionId": args.mention, "label": label,
                      "uri": encode_uri(args.mention), "mention": mention})
        else:
            out.say(mention)
        return exits.OK
    if not args.paths:
        raise usage("give at least one session log PATH (or --mention ID)", flag="PATH")
    try:
        config = ReferenceConfig(max_references=args.max_references,
                                 max_reference_bytes=args.budget if args.budget is not None
                                 else ReferenceConfig().max_reference_bytes)
        with working(out, f"projecting {_names(args.paths)}"):
            snapshots = _load(args)
        references, text = _references(args, list(snapshots))
        prepared = prepare(args.target, [{"type": "text", "text": text or ""}], references,
                           snapshots_resolver(snapshots), config)
    except SessionReferenceError as exc:
        config_error = exc.code == INVALID_CONFIG
        raise from_error(exc.to_json(), exits.USAGE if config_error else exits.INVALID,
                         flag="--budget or --max-references" if config_error else None) from None
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
        out.say("no session references" + (
            "; --text holds no mention: a mention is @[label](dsh-session:<base64url of the "
            "JSON string of the id>), see `dshkit reference --mention ID`"
            if args.text is not None else ""))
        return exits.OK
    out.say(prepared.prompt)
    out.say("")
    out.say("accounting:")
    for row in rows:
        out.say(_accounting({**row, "cwd": _cwd(snapshots, row["sessionId"])}, row["size"],
                            budget))
    return exits.OK
