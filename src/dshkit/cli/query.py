"""``dshkit query``: build a session search index from logs, search it, and read events.

``index`` brings a dedicated SQLite FTS5 database up to date with the logs given (only
those: nothing else is ever indexed); ``search`` ranks sessions, or the events of one
session with ``--session``; ``read`` and ``trace`` work on one event of one log.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..reference.query import (
    SessionQueryError,
    SessionSearchEngine,
    build_documents,
    load_session,
    read_event,
    trace_event,
)
from ..reference.query.errors import (
    CORRUPT_SESSION,
    INDEX_FAILED,
    INVALID_CONFIG,
    INVALID_CURSOR,
    INVALID_FILTER,
    INVALID_LIMIT,
    INVALID_QUERY,
    INVALID_WINDOW,
    PERSISTENCE_FAILED,
)
from ..reference.query.extract import extract_text
from ..reference.query.search import MATCH_MODES, OPEN_AT, SearchConfig
from ..reference.query.source import LoadedSession
from ..reference.query.store import JOURNAL_MODES
from ..reference.query.timestamps import iso, timestamp_range
from ..reference.query.tools import format_event_search, format_session_search
from . import exits
from .options import add_db, add_json, integer
from .progress import names as _names
from .progress import working
from .report import Reporter, from_error

_USAGE_CODES = {INVALID_CONFIG, INVALID_CURSOR, INVALID_FILTER, INVALID_LIMIT, INVALID_QUERY,
                INVALID_WINDOW, PERSISTENCE_FAILED}


def configure(query: argparse.ArgumentParser) -> None:
    query.description = __doc__
    ops = query.add_subparsers(dest="op", required=True, metavar="OPERATION")

    index = ops.add_parser("index", help="index logs (files, or directories of *.jsonl)")
    index.add_argument("paths", nargs="+", metavar="DIR_OR_FILE",
                       help="session log, or a directory of *.jsonl logs")
    add_db(index, "index database (created when missing)", required=True)
    index.add_argument("--journal-mode", choices=JOURNAL_MODES, default="wal",
                       help="SQLite journal mode of a new index (default wal)")
    add_json(index)

    search = ops.add_parser("search", help="full-text search of an index")
    search.add_argument("text", metavar="TEXT", help="the search text")
    add_db(search, "index database (built by dshkit query index)", required=True)
    search.add_argument("--session", metavar="ID", help="search the events of this session")
    search.add_argument("--session-id", action="append", metavar="ID",
                        help="only these sessions (repeatable)")
    search.add_argument("--cwd", action="append", metavar="DIR",
                        help="only sessions with this cwd (repeatable)")
    search.add_argument("--no-cwd", action="store_true", help="also sessions without a cwd")
    search.add_argument("--parent", action="append", metavar="ID",
                        help="only children of this session (repeatable)")
    search.add_argument("--root", action="store_true", help="also (or only) root sessions")
    search.add_argument("--created-from", metavar="ISO",
                        help="only sessions created at or after this time (ISO 8601)")
    search.add_argument("--created-to", metavar="ISO",
                        help="only sessions created at or before this time (ISO 8601)")
    search.add_argument("--type", action="append", metavar="TYPE", dest="types",
                        help="only events of this type (repeatable)")
    search.add_argument("--surface", action="append", choices=("current", "shadowed",
                                                               "log-only"),
                        help="only events on this surface (repeatable; default: current and "
                        "log-only, never shadowed)")
    search.add_argument("--seq-from", type=integer(0), metavar="N", help="only events from this seq")
    search.add_argument("--seq-to", type=integer(0), metavar="N", help="only events up to this seq")
    search.add_argument("--time-from", metavar="ISO",
                        help="only events at or after this time (ISO 8601)")
    search.add_argument("--time-to", metavar="ISO",
                        help="only events at or before this time (ISO 8601)")
    search.add_argument("--limit", type=integer(1), metavar="N", help="results per page")
    search.add_argument("--cursor", metavar="CURSOR", help="continue a previous search")
    search.add_argument("--match", choices=MATCH_MODES, default="auto",
                        help="token (FTS5 phrase), literal (substring scan) or auto (literal "
                        "for CJK text, else token)")
    search.add_argument("--open-at", choices=OPEN_AT, default="startup",
                        help="never: search disabled (answers SESSION_QUERY_SEARCH_DISABLED)")
    add_json(search)

    for name, text in (("read", "print one event and its neighbours"),
                       ("trace", "print what replaced an event and what it replaced")):
        op = ops.add_parser(name, help=text)
        op.add_argument("session", metavar="SESSION", help="session id (with --db) or log file")
        op.add_argument("seq", type=integer(0), metavar="SEQ", help="seq of the event")
        add_db(op, "index database that knows the session")
        add_json(op)
        if name == "read":
            op.add_argument("--before", type=integer(0), default=0, metavar="N",
                            help="events before SEQ to print (default 0)")
            op.add_argument("--after", type=integer(0), default=0, metavar="N",
                            help="events after SEQ to print (default 0)")

    documents = ops.add_parser("documents", help="print the searchable documents of a log")
    documents.add_argument("path", metavar="PATH", help="session log file")
    add_json(documents)


#: Why a log whose surface folds is still refused: DSH's document builder reads only the surface.
LOAD_LEVEL_NOTE = ("; dshkit reads a log as a loader does, at level load, before it builds "
                   "documents (spec/query/documents.md#QRY-SRC-001)")


def explained(error: SessionQueryError) -> dict[str, Any]:
    """The error's JSON form, its message saying why a corrupt (not unfoldable) log is refused."""
    out = error.to_json()
    if error.code == CORRUPT_SESSION:
        out["message"] = f"{error.message}{LOAD_LEVEL_NOTE}"
    return out


def _refusal(error: SessionQueryError) -> Exception:
    missing = error.detail.get("missing") is True
    usage = error.code in _USAGE_CODES or missing
    return from_error(explained(error), exits.USAGE if usage else exits.INVALID,
                      flag="--db" if missing else None)


def _existing(db: str) -> str:
    """Searching and reading never create an index: a missing one is an I/O error."""
    if db != ":memory:" and not Path(db).exists():
        raise SessionQueryError(INDEX_FAILED, f"no session-search index at {db}; build one "
                                "with: dshkit query index DIR_OR_FILE --db " + db,
                                path=db, missing=True)
    return db


def run(args: argparse.Namespace, out: Reporter) -> int:
    handlers = {"index": _index, "search": _search, "read": _read, "trace": _trace,
                "documents": _documents}
    try:
        return handlers[args.op](args, out)
    except SessionQueryError as exc:
        raise _refusal(exc) from None


def _index(args: argparse.Namespace, out: Reporter) -> int:
    config = SearchConfig(path=args.db, journal_mode=args.journal_mode)
    with SessionSearchEngine(config) as engine, working(out, f"indexing {_names(args.paths)}"):
        report = engine.index_paths(args.paths)
    failed = [outcome for outcome in report.files if outcome.error is not None]
    if out.json and failed:
        first = failed[0]
        assert first.error is not None
        return out.refuse(from_error(explained(first.error), exits.INVALID, path=first.path,
                                     report={"valid": False, **report.to_json()}))
    if out.json:
        out.emit({"valid": True, **report.to_json()})
    else:
        for outcome in report.files:
            if outcome.error is not None:
                out.note(f"{outcome.path}: failed: {outcome.error.code}: "
                         f"{explained(outcome.error)['message']}")
            else:
                extra = f", {outcome.documents} documents" if outcome.status == "indexed" else ""
                out.say(f"{outcome.path}: {outcome.status} (session {outcome.session_id}{extra})")
        for session_id in report.removed:
            out.say(f"removed session {session_id} (its log is gone)")
    return exits.INVALID if report.failed else exits.OK


def _event_filters(args: argparse.Namespace) -> list[dict[str, Any]]:
    filters: list[dict[str, Any]] = []
    seq = {k: v for k, v in (("from", args.seq_from), ("to", args.seq_to)) if v is not None}
    if seq:
        filters.append({"kind": "seq", **seq})
    times = timestamp_range("time", args.time_from, args.time_to)
    if times is not None:
        filters.append({"kind": "time", **times})
    if args.types:
        filters.append({"kind": "type", "values": args.types})
    if args.surface:
        filters.append({"kind": "surface", "values": args.surface})
    return filters


def _session_filters(args: argparse.Namespace) -> list[dict[str, Any]]:
    filters: list[dict[str, Any]] = []
    if args.session_id:
        filters.append({"kind": "id", "values": args.session_id})
    created = timestamp_range("created_at", args.created_from, args.created_to)
    if created is not None:
        filters.append({"kind": "created-at", **created})
    if args.parent or args.root:
        filters.append({"kind": "parent", "values": [*(args.parent or []),
                                                     *([None] if args.root else [])]})
    if args.cwd or args.no_cwd:
        filters.append({"kind": "cwd", "values": [*(args.cwd or []),
                                                  *([None] if args.no_cwd else [])]})
    return filters


def _search(args: argparse.Namespace, out: Reporter) -> int:
    request: dict[str, Any] = {"query": args.text}
    if args.limit is not None:
        request["limit"] = args.limit
    if args.cursor is not None:
        request["cursor"] = args.cursor
    config = SearchConfig(path=args.db if args.open_at == "never" else _existing(args.db),
                          open_at=args.open_at)
    with SessionSearchEngine(config) as engine:
        if args.session is not None:
            page = engine.search_events({**request, "sessionId": args.session,
                                         "filters": _event_filters(args)}, match=args.match)
            title = engine.session_row(args.session)["title"] if not out.json else None
            text = format_event_search(args.session, title, page.items)
        else:
            page = engine.search_sessions({**request, "sessionFilters": _session_filters(args),
                                           "eventFilters": _event_filters(args)},
                                          match=args.match)
            text = format_session_search(page.items)
    if out.json:
        out.emit({"valid": True, **page.to_json()})
    else:
        out.say(text)
        if page.next_cursor is not None:
            out.say(f"\nMore results: --cursor {page.next_cursor}")
    return exits.OK


def _session(args: argparse.Namespace) -> LoadedSession:
    if args.db is not None:
        engine = SessionSearchEngine(SearchConfig(path=_existing(args.db)))
        try:
            row = engine.session_row(args.session)
            path = row["path"]
        finally:
            engine.close()
        if path is None:
            raise SessionQueryError(PERSISTENCE_FAILED,
                                    f'session "{args.session}" has no log file on record')
        return load_session(path)
    if not Path(args.session).is_file():
        raise SessionQueryError(PERSISTENCE_FAILED, f"{args.session} is not a log file (give "
                                "--db to look a session id up in an index)")
    return load_session(args.session)


def _neighbour(record: dict[str, Any], event: dict[str, Any]) -> str:
    line = f"- seq {record['seq']} | {record['type']} | {iso(record['time'])}"
    text = extract_text(event)
    if not text:
        return line + " | (no semantic text)"
    return line + "\n  " + text.replace("\n", "\n  ")


def _read(args: argparse.Namespace, out: Reporter) -> int:
    session = _session(args)
    window = read_event(session.session_id, session.events, args.seq, args.before, args.after)
    if out.json:
        out.emit({"valid": True, **window.to_json()})
        return exits.OK
    lines = [f"Session {session.session_id} \u2014 {session.title or 'untitled'}",
             f"Target event seq {args.seq}:", "```json",
             json.dumps(window.target, ensure_ascii=False, indent=2), "```"]
    pairs = list(zip(window.records, window.events, strict=True))
    before = [p for p in pairs if p[0].seq < args.seq]
    after = [p for p in pairs if p[0].seq > args.seq]
    for heading, group in (("Before:", before), ("After:", after)):
        if group:
            lines += ["", heading, *(_neighbour(r.to_json(), e) for r, e in group)]
    out.say("\n".join(lines))
    return exits.OK


def _trace(args: argparse.Namespace, out: Reporter) -> int:
    session = _session(args)
    trace = trace_event(session.session_id, session.events, args.seq)
    if out.json:
        out.emit({"valid": True, **trace.to_json()})
        return exits.OK

    def seqs(values: tuple[int, ...]) -> str:
        return ", ".join(map(str, values)) or "none"

    target = trace.target
    out.say("\n".join([
        f"Session {session.session_id} \u2014 {session.title or 'untitled'}",
        f"Target: seq {target.seq} | {target.type} | {target.surface} | {iso(target.time)}",
        f"Replaced by: {trace.replaced_by if trace.replaced_by is not None else 'none'}",
        f"Replacement chain: {seqs(trace.replacement_chain)}",
        f"Events replaced by target: {seqs(trace.replaced_event_seqs)}",
        f"Events cited directly as sources: {seqs(trace.source_event_seqs)}",
        f"Direct derived events: {seqs(trace.derived_event_seqs)}"]))
    return exits.OK


def _documents(args: argparse.Namespace, out: Reporter) -> int:
    session = load_session(args.path)
    documents = build_documents(session.session_id, session.events)
    if out.json:
        out.emit({"valid": True, "sessionId": session.session_id,
               "documents": [d.to_json() for d in documents]})
        return exits.OK
    for d in documents:
        text = d.text if len(d.text) <= 100 else d.text[:97] + "..."
        out.say(f"seq {d.seq} | {d.type} | {d.surface} | {text.replace(chr(10), ' / ')}")
    return exits.OK
