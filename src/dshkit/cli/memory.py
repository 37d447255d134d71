"""``dshkit memory``: the management surface of the reference memory store.

Writes go through the same approval pipeline as any provider call; the approver is the person
at the terminal (:mod:`.approval`). ``import``/``export`` with ``--format`` read or write
another tool's format through the adapters (:mod:`.adapt`, called as functions).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..adapters import FORMATS
from . import adapt, exits, memory_migrate, memory_proposals, memory_recall, store_guard
from .atomic import write_atomic
from .new_store import Target, write_target
from .options import DEFAULT_SESSION_ID, add_db, add_json, add_write_context, output_path
from .report import Refusal, Reporter, from_error, usage

_STORE_CODES = {"STORE_CORRUPT", "STORE_UNSUPPORTED_VERSION", "STORE_BUSY",
                "STORE_WRITE_FAILED"}
#: The operations that may create the store: the writes that add entries (MEM-CLI-002).
_CREATING = ("add", "seed", "import")
_DB_HELP = "store path (default: $DSHKIT_MEMORY_DB or $DSHKIT_HOME/memory/memory.db)"
FORMAT_LIST = ", ".join(FORMATS)


#: Operations that never ask the approval gate (they read, or write only audit rows): they take
#: no --yes and no --policy. ``serve`` writes nothing at all: no --session-id, no --durability.
UNGATED = frozenset({"query", "recall", "list", "budgets", "audit", "snapshot", "export"})
SERVES = "serve"


def _common(parser: argparse.ArgumentParser, suppress: bool, *, gated: bool = True,
            writes: bool = True) -> None:
    """Options accepted before and after the operation name."""
    add_db(parser, _DB_HELP, suppress=suppress)
    add_json(parser, suppress=suppress)
    add_write_context(parser, suppress=suppress, gated=gated, writes=writes)


def _bucket(p: argparse.ArgumentParser) -> None:
    p.add_argument("--track", required=True, choices=["user", "agent"],
                   help="user (about the person) or agent (about the work)")
    p.add_argument("--scope", required=True, choices=["user-global", "workspace"],
                   help="user-global, or workspace (keyed by --cwd)")


def _entry_fields(p: argparse.ArgumentParser) -> None:
    p.add_argument("--text", required=True, help="the entry text")
    p.add_argument("--tags", metavar="A,B", help="comma-separated tags")
    p.add_argument("--source", help="source recorded on the entry (default: the store's)")


def _format(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--format", metavar="FMT", choices=FORMATS, help=f"{what} ({FORMAT_LIST}; "
                   "through the adapters)")
    p.add_argument("--adapter", dest="format", choices=FORMATS, help=argparse.SUPPRESS)


def configure(memory: argparse.ArgumentParser) -> None:
    _common(memory, suppress=False)
    shared = argparse.ArgumentParser(add_help=False)
    _common(shared, suppress=True)
    ungated = argparse.ArgumentParser(add_help=False)
    _common(ungated, suppress=True, gated=False)
    served = argparse.ArgumentParser(add_help=False)
    _common(served, suppress=True, gated=False, writes=False)
    ops = memory.add_subparsers(dest="op", required=True, metavar="OPERATION")

    def add_op(name: str, **kwargs: Any) -> argparse.ArgumentParser:
        parent = served if name == SERVES else ungated if name in UNGATED else shared
        parser: argparse.ArgumentParser = ops.add_parser(name, parents=[parent], **kwargs)
        return parser

    add = add_op("add", help="add an entry")
    _bucket(add)
    _entry_fields(add)
    replace = add_op("replace", help="replace the entry containing --match (or with --id)")
    _bucket(replace)
    _target(replace, "replace", repeat=False)
    _entry_fields(replace)
    remove = add_op("remove", help="remove the entry containing --match (or with --id)")
    _bucket(remove)
    _target(remove, "remove", repeat=False)
    consolidate = add_op("consolidate", help="merge entries into one")
    _bucket(consolidate)
    _target(consolidate, "merge", repeat=True)
    _entry_fields(consolidate)
    seed = add_op("seed", help="add a JSON array of entry inputs under one approval")
    seed.add_argument("path", metavar="FILE", help="JSON file, or - for stdin")
    query = add_op("query", help="search entries")
    query.add_argument("--track", choices=["user", "agent"], help="only this track")
    query.add_argument("--scope", choices=["user-global", "workspace"], help="only this scope")
    query.add_argument("--text", help="only entries matching this text")
    query.add_argument("--limit", type=int, metavar="N", help="at most N entries")
    query.add_argument("--agent-key", metavar="KEY", help="only entries of this agent key and "
                       "shared ones (dsh-memento's agentKey); with --session-id the query is a "
                       "recall of that session")
    memory_recall.configure(add_op("recall", help="memory plus snippets of earlier sessions "
                                   "of this project (--sessions)"))
    add_op("list", help="every entry")
    add_op("budgets", help="usage and limits")
    audit = add_op("audit", help="the audit ledger, newest first (oldest first with --after "
                   "or --all)")
    audit.add_argument("--limit", type=int, metavar="N", help="at most N rows (default 100)")
    audit.add_argument("--after", type=int, metavar="SEQ", help="the rows past SEQ, oldest "
                       "first (0: from the start)")
    audit.add_argument("--all", action="store_true", help="the whole ledger, oldest first")
    add_op("snapshot", help="the frozen snapshot of --session-id")
    exp = add_op("export", help="print the memory-export-v1 envelope (or, with --format, "
                 "another tool's format)")
    _format(exp, "write this format instead of the envelope")
    exp.add_argument("-o", "--output", metavar="PATH", type=output_path,
                     help="write here instead of stdout")
    exp.add_argument("--ledger", action="store_true", help="add the audit ledger to the "
                     "envelope (MEM-EXP-005)")
    adapt.add_flags(exp, ("write",))
    adapt.add_option_lists(exp, ("write",))
    imp = add_op("import", help="restore a memory-export-v1 envelope as it was exported (or, "
                 "with --format, seed another tool's file) under one approval")
    imp.add_argument("path", metavar="FILE", help="JSON file, or - for stdin")
    imp.add_argument("--replace", action="store_true", help="overwrite a stored entry whose "
                     "id the envelope has with other content (else IMPORT_CONFLICT)")
    imp.add_argument("--fresh", action="store_true", help="import the entries as new entries "
                     "of this session (new ids and timestamps; MEM-EXP-003) instead of "
                     "restoring them")
    _format(imp, "read FILE in this format instead of the envelope")
    adapt.add_flags(imp, ("read",))
    adapt.add_option_lists(imp, ("read",))
    migrate = add_op("migrate", help="open the store, migrating it to the current version; "
                     "with --from-memento, import a dsh-memento store into it")
    memory_migrate.add_option(migrate)
    serve = add_op("serve", help="serve the store read-only to MCP clients on stdio, as the "
                   "session of --cwd and --agent-preset (spec memory/mcp)")
    serve.add_argument("--sessions", metavar="PATH", help="session history for the "
                       "memory_recall tool: session logs (a directory or a log file, indexed in "
                       "memory) or a session query index file, opened read-only")
    memory_proposals.configure(add_op)
    memory.set_defaults(session_id=None)  # a query is a recall only when --session-id is given


def _target(p: argparse.ArgumentParser, verb: str, repeat: bool) -> None:
    """--match TEXT or --id ID (MEM-CLI-003), one of the two, repeatable for consolidate."""
    group = p.add_mutually_exclusive_group(required=True)
    action = "append" if repeat else "store"
    more = " (repeatable)" if repeat else ""
    group.add_argument("--match", action=action, dest="targets", metavar="TEXT",
                       help=f"text the entry to {verb} contains{more}")
    group.add_argument("--id", action=action, dest="ids", metavar="ID",
                       help=f"exact id of the entry to {verb}{more}")


def _tags(raw: str | None) -> list[str] | None:
    return None if raw is None else list(raw.split(","))


def _read_input(args: argparse.Namespace) -> Any:
    """The JSON file of ``seed`` and ``import`` (None for the other operations), read before
    the store is opened: an unusable input is INVALID_INPUT (field "/") and touches nothing."""
    from ..reference.json.inputs import UNREADABLE, JsonInputError, read_json
    from ..reference.memory import MemoryProtocolError

    if args.op == "migrate" and args.from_memento is not None:
        return memory_migrate.read_source(args)
    if args.op not in ("seed", "import"):
        return None
    try:
        return read_json(args.path)
    except JsonInputError as exc:
        reason = exc.describe() if exc.code == UNREADABLE else f"{args.path}: {exc.describe()}"
        error = MemoryProtocolError("INVALID_INPUT", f"invalid input at /: {reason}",
                                    {"field": "/", "reason": reason})
        raise from_error(error.to_json(), exits.USAGE, path=args.path) from None


def _item(args: argparse.Namespace) -> dict[str, Any]:
    item: dict[str, Any] = {"track": args.track, "scope": args.scope, "text": args.text}
    if args.tags is not None:
        item["tags"] = _tags(args.tags)
    if args.source is not None:
        item["source"] = args.source
    return item


def _shown(args: argparse.Namespace, value: Any) -> list[Any] | None:
    """The entry inputs a write adds, for the approval prompt (TOOL-CLI-013)."""
    from ..reference.memory import MemoryProtocolError
    from ..reference.memory.exchange import envelope_entries

    if args.op in ("add", "replace", "consolidate"):
        return [_item(args)]
    if args.op == "seed":
        return value if isinstance(value, list) else None
    if args.op == "import":
        try:
            return envelope_entries(value)
        except MemoryProtocolError:
            return None  # refused by the provider before it asks
    return None


def _run(provider: Any, args: argparse.Namespace, value: Any) -> Any:
    from .options import write_context

    write = write_context(args)
    op = args.op
    if op in ("replace", "remove", "consolidate"):
        by_id = args.ids is not None
        named = args.ids if by_id else args.targets
        if op == "consolidate":
            return provider.consolidate({**_item(args), "matches": named}, write, by_id=by_id)
        if op == "replace":
            return provider.replace({**_item(args), "match": named}, write, by_id=by_id)
        return provider.remove({"track": args.track, "scope": args.scope, "match": named},
                               write, by_id=by_id)
    if op == "add":
        return provider.add(_item(args), write)
    if op == "seed":
        return provider.seed(value, write)
    if op == "query":
        filt = {k: v for k, v in (("track", args.track), ("scope", args.scope),
                                  ("text", args.text), ("limit", args.limit)) if v is not None}
        opts = {k: v for k, v in (("sessionId", args.session_id),
                                  ("agentKey", args.agent_key)) if v is not None}
        return provider.query(filt, opts)
    if op == "recall":
        return memory_recall.call(provider, args, args.recall_index)
    if op == "list":
        return provider.list_entries()
    if op == "budgets":
        return provider.budgets()
    if op == "audit":
        return _audit(provider, args)
    if op == "snapshot":
        return provider.snapshot(write)
    if op == "export":
        return provider.export(ledger=args.ledger)
    if op == "import":
        if args.fresh:
            return provider.import_envelope(value, write)
        return provider.import_envelope(value, write, restore=True, replace=args.replace)
    if op == "migrate" and args.from_memento is not None:
        return memory_migrate.run(provider, value, write)
    if op == "proposals":
        return memory_proposals.run(provider, args, write)
    if op == "migrate":
        version = provider.store.conn.execute("PRAGMA user_version").fetchone()[0]
        return {"path": str(provider.store.path), "version": version}
    raise AssertionError(op)


def _audit(provider: Any, args: argparse.Namespace) -> list[dict[str, Any]]:
    """MEM-AUD-008 through the command line: --after is one page of the cursor, --all every
    page of it."""
    if args.all:
        if args.after is not None or args.limit is not None:
            raise usage("--all reads the whole ledger: leave out --after and --limit", "--all")
        rows: list[dict[str, Any]] = []
        while True:
            page = provider.audit_list(1000, after=rows[-1]["seq"] if rows else 0)
            rows += page
            if len(page) < 1000:
                return rows
    limit = 100 if args.limit is None else args.limit
    return list(provider.audit_list(limit, after=args.after))


def _line(text: str) -> str:
    return " ".join(text.split()) if "\n" in text or "\r" in text else text


def _written(op: str, result: Any) -> str | None:
    """The one-line confirmation of a write without --json."""
    if op in ("add", "replace", "remove"):
        entry, usage_row = result["entry"], result["usage"]
        done = {"add": "added", "replace": "replaced", "remove": "removed"}[op]
        return (f"{done} {entry['id']} {entry['track']}/{entry['scope']}: "
                f"{_line(entry['text'])} ({usage_row['used']}/{usage_row['limit']} units)")
    if op == "consolidate":
        entry = result["entry"]
        return (f"consolidated {len(result['removed'])} entries into {entry['id']} "
                f"{entry['track']}/{entry['scope']}: {_line(entry['text'])}")
    if op == "seed" or (op == "import" and "skipped" not in result):
        return f"added {result['added']} entries"
    if op == "import":
        return (f"added {result['added']}, replaced {result['replaced']}, skipped "
                f"{len(result['skipped'])} (already stored with the same content)")
    return None


def _human(op: str, result: Any) -> str:
    if op == "migrate" and "losses" in result:
        return memory_migrate.human(result)
    written = _written(op, result)
    if written is not None:
        return written
    if op == "snapshot":
        return str(result) if result else "(empty snapshot)"
    if op == "proposals":
        return memory_proposals.human(result)
    if op == "budgets":
        return "\n".join(f"{r['track']}/{r['scope']}: {r['used']}/{r['limit']}" for r in result)
    if op == "list":
        return "\n".join(f"{e['id']} {e['track']}/{e['scope']}: {e['text']}"
                         for e in result) or "no entries"
    if op == "query":
        lines = [f"{e['id']} {e['track']}/{e['scope']}: {e['text']}" for e in result["entries"]]
        lines.append(f"({len(result['entries'])} of {result['total']})")
        return "\n".join(lines)
    if op == "recall":
        return memory_recall.render(result)
    if op == "audit":
        return "\n".join(f"{r['seq']} {r['action']} {r['track']}/{r['scope']} {r['outcome']}: "
                         f"{r['text']}" for r in result) or "no audit rows"
    return json.dumps(result, ensure_ascii=False, indent=2)


def _via_adapter(args: argparse.Namespace, out: Reporter, db: str) -> int | None:
    """``import``/``export`` with ``--format``: the adapters, called as functions."""
    fmt = getattr(args, "format", None)
    if fmt is None:
        given = [name for name, value in vars(args).items() if value and (
            name.startswith("opt_") or name.endswith("_options"))]
        if given:
            raise usage("an adapter option (--read-option, --write-option or a format flag) "
                        "goes with --format FMT", "--format", given=given)
        return None
    own = [flag for flag, name in (("--ledger", "ledger"), ("--replace", "replace"),
                                   ("--fresh", "fresh")) if getattr(args, name, False)]
    if own:
        raise usage(f"{own[0]} applies to the memory-export-v1 envelope, not to --format "
                    f"{fmt}", own[0])
    from ..adapters import AdapterError

    side = "write" if args.op == "export" else "read"
    try:
        options = adapt.side_options(args, side)
    except AdapterError as exc:
        raise adapt.refusal_of(exc, f"--{side}-option") from None
    if args.op == "export":
        return adapt.export_store(out, fmt, db, options, args.output)
    return adapt.import_file(out, fmt, args.path, options, adapt.Seed(db, args))


def _check_flags(args: argparse.Namespace) -> None:
    """Every option given does something (issue 17): the write options given before a
    reading operation's name are refused, as they are after it."""
    if args.op in UNGATED or args.op == SERVES:
        if args.yes:
            raise usage(f"memory {args.op} asks no approval: leave out --yes", "--yes")
        if args.policy != "ask":
            raise usage(f"memory {args.op} asks no approval: leave out --policy", "--policy")
    if args.op == SERVES:
        if args.durability != "normal":
            raise usage("memory serve writes nothing: leave out --durability", "--durability")
        if args.session_id not in (None, DEFAULT_SESSION_ID):
            raise usage("memory serve records no session: leave out --session-id (the "
                        "memory_recall tool takes sessionId as an argument)", "--session-id")
    if args.op == "proposals":
        memory_proposals.check(args)
    if args.op == "import" and args.fresh and args.replace:
        raise usage("--fresh imports new entries, which never conflict: leave out --replace",
                    "--replace")


def _guard_store(args: argparse.Namespace, path: Path) -> None:
    """MEM-CLI-002: only an approved write creates a store; nothing else creates a file or a
    folder."""
    if _creating(args):
        store_guard.guard_write(args, path)
    else:
        store_guard.require_store(path)


def _creating(args: argparse.Namespace) -> bool:
    return args.op in _CREATING or (args.op == "migrate" and args.from_memento is not None)


def _cli_wording(refusal: Refusal) -> Refusal:
    """The provider's messages, told in this command's flags."""
    if refusal.code == "WRITE_DENIED" and refusal.details.get("outcome") == "unavailable":
        if "no store was created" not in refusal.message:
            refusal.message = store_guard.denial("unavailable")
    elif refusal.code == "AMBIGUOUS_MATCH":
        refusal.message += ", or name one entry with --id (ids: dshkit memory list)"
    elif refusal.code == "PROPOSAL_NOT_FOUND":
        refusal.message += memory_proposals.NOT_FOUND_HINT
    elif refusal.code == "IMPORT_CONFLICT":
        refusal.message += ("; pass --replace to overwrite them with the envelope's entries, "
                            "or --fresh to import the envelope as new entries")
    return refusal


def run(args: argparse.Namespace, out: Reporter) -> int:
    try:
        return _run_checked(args, out)
    except Refusal as refusal:
        raise _cli_wording(refusal) from None


def _run_checked(args: argparse.Namespace, out: Reporter) -> int:
    from ..reference.memory.store import default_path

    _check_flags(args)
    if args.session_id is None and args.op not in ("query", "recall"):
        args.session_id = DEFAULT_SESSION_ID
    path = Path(args.db) if args.db is not None else default_path()
    _guard_store(args, path)
    args.recall_index = memory_recall.index_source(args, out) if args.op == "recall" else None
    if args.op == "serve":
        from .memory_serve import serve

        return serve(args, out, path)
    if args.op in ("import", "export"):
        done = _via_adapter(args, out, str(path))
        if done is not None:
            return done
    value = _read_input(args)
    from ..reference.memory import MemoryProtocolError, open_provider
    from .approval import terminal_gate

    def refused(exc: MemoryProtocolError, target: Target) -> Exception:
        code = exits.USAGE if exc.code in _STORE_CODES else exits.INVALID
        error = exc.to_json()
        if isinstance(error.get("details"), dict):
            error["details"] = {k: target.real_path(v) for k, v in error["details"].items()}
        return from_error(error, code, flag="--db" if code == exits.USAGE else None)

    with write_target(path, create=_creating(args)) as target:
        try:
            provider = open_provider(target.open_path,
                                     gate=terminal_gate(args.yes, _shown(args, value)),
                                     write_policy=args.policy, durability=args.durability)
        except MemoryProtocolError as exc:
            raise refused(exc, target) from None
        try:
            result = _run(provider, args, value)
        except MemoryProtocolError as exc:
            raise refused(exc, target) from None
        finally:
            provider.close()
    if args.op == "export" and args.output:
        write_atomic(Path(args.output), json.dumps(result, ensure_ascii=False, indent=2) + "\n",
                     "--output")
        if out.json:
            out.emit({"written": [args.output], "entries": len(result["entries"])})
        else:
            out.note(f"wrote {args.output}")
        return exits.OK
    if out.json:
        out.emit(result)
    else:
        out.say(_human(args.op, result))
    return exits.OK
