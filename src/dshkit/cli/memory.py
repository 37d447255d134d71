"""``dshkit memory``: the management surface of the reference memory store.

Writes go through the same approval pipeline as any provider call; the approver is the person
at the terminal (:mod:`.approval`). ``import``/``export`` with ``--format`` read or write
another tool's format through the adapters (:mod:`.adapt`, called as functions).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..adapters import FORMATS
from . import adapt, exits
from .options import add_db, add_json, add_write_context, output_path
from .report import Reporter, from_error, usage

_STORE_CODES = {"STORE_CORRUPT", "STORE_UNSUPPORTED_VERSION", "STORE_BUSY",
                "STORE_WRITE_FAILED"}
_DB_HELP = "store path (default: $DSHKIT_MEMORY_DB or $DSHKIT_HOME/memory/memory.db)"
FORMAT_LIST = ", ".join(FORMATS)


def _common(parser: argparse.ArgumentParser, suppress: bool) -> None:
    """Options accepted before and after the operation name."""
    add_db(parser, _DB_HELP, suppress=suppress)
    add_json(parser, suppress=suppress)
    add_write_context(parser, suppress=suppress)


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
    ops = memory.add_subparsers(dest="op", required=True, metavar="OPERATION")

    def add_op(name: str, **kwargs: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = ops.add_parser(name, parents=[shared], **kwargs)
        return parser

    add = add_op("add", help="add an entry")
    _bucket(add)
    _entry_fields(add)
    replace = add_op("replace", help="replace the entry containing --match")
    _bucket(replace)
    replace.add_argument("--match", required=True, help="text the entry to replace contains")
    _entry_fields(replace)
    remove = add_op("remove", help="remove the entry containing --match")
    _bucket(remove)
    remove.add_argument("--match", required=True, help="text the entry to remove contains")
    consolidate = add_op("consolidate", help="merge entries into one")
    _bucket(consolidate)
    consolidate.add_argument("--match", action="append", required=True, dest="matches",
                             help="text of one entry to merge (repeatable)")
    _entry_fields(consolidate)
    seed = add_op("seed", help="add a JSON array of entry inputs under one approval")
    seed.add_argument("path", metavar="FILE", help="JSON file, or - for stdin")
    query = add_op("query", help="search entries")
    query.add_argument("--track", choices=["user", "agent"], help="only this track")
    query.add_argument("--scope", choices=["user-global", "workspace"], help="only this scope")
    query.add_argument("--text", help="only entries matching this text")
    query.add_argument("--limit", type=int, metavar="N", help="at most N entries")
    add_op("list", help="every entry")
    add_op("budgets", help="usage and limits")
    audit = add_op("audit", help="the audit ledger, newest first")
    audit.add_argument("--limit", type=int, default=100, metavar="N",
                       help="at most N rows (default 100)")
    add_op("snapshot", help="the frozen snapshot of --session-id")
    exp = add_op("export", help="print the memory-export-v1 envelope (or, with --format, "
                 "another tool's format)")
    _format(exp, "write this format instead of the envelope")
    exp.add_argument("-o", "--output", metavar="PATH", type=output_path, help="with --format: write here "
                     "instead of stdout")
    adapt.add_flags(exp, ("write",))
    adapt.add_option_lists(exp, ("write",))
    imp = add_op("import", help="import a memory-export-v1 envelope (or, with --format, "
                 "another tool's file) through one approved seed")
    imp.add_argument("path", metavar="FILE", help="JSON file, or - for stdin")
    _format(imp, "read FILE in this format instead of the envelope")
    adapt.add_flags(imp, ("read",))
    adapt.add_option_lists(imp, ("read",))
    add_op("migrate", help="open the store, migrating it to the current version")


def _tags(raw: str | None) -> list[str] | None:
    return None if raw is None else list(raw.split(","))


def _read_input(args: argparse.Namespace) -> Any:
    """The JSON file of ``seed`` and ``import`` (None for the other operations), read before
    the store is opened: an unusable input is INVALID_INPUT (field "/") and touches nothing."""
    from ..reference.json.inputs import UNREADABLE, JsonInputError, read_json
    from ..reference.memory import MemoryProtocolError

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
    if op == "add":
        return provider.add(_item(args), write)
    if op == "replace":
        return provider.replace({**_item(args), "match": args.match}, write)
    if op == "consolidate":
        return provider.consolidate({**_item(args), "matches": args.matches}, write)
    if op == "remove":
        return provider.remove({"track": args.track, "scope": args.scope, "match": args.match},
                               write)
    if op == "seed":
        return provider.seed(value, write)
    if op == "query":
        filt = {k: v for k, v in (("track", args.track), ("scope", args.scope),
                                  ("text", args.text), ("limit", args.limit)) if v is not None}
        return provider.query(filt)
    if op == "list":
        return provider.list_entries()
    if op == "budgets":
        return provider.budgets()
    if op == "audit":
        return provider.audit_list(args.limit)
    if op == "snapshot":
        return provider.snapshot(write)
    if op == "export":
        return provider.export()
    if op == "import":
        return provider.import_envelope(value, write)
    if op == "migrate":
        version = provider.store.conn.execute("PRAGMA user_version").fetchone()[0]
        return {"path": str(provider.store.path), "version": version}
    raise AssertionError(op)


def _human(op: str, result: Any) -> str:
    if op == "snapshot":
        return str(result) if result else "(empty snapshot)"
    if op == "budgets":
        return "\n".join(f"{r['track']}/{r['scope']}: {r['used']}/{r['limit']}" for r in result)
    if op == "list":
        return "\n".join(f"{e['id']} {e['track']}/{e['scope']}: {e['text']}" for e in result)
    if op == "query":
        lines = [f"{e['id']} {e['track']}/{e['scope']}: {e['text']}" for e in result["entries"]]
        lines.append(f"({len(result['entries'])} of {result['total']})")
        return "\n".join(lines)
    if op == "audit":
        return "\n".join(f"{r['seq']} {r['action']} {r['track']}/{r['scope']} {r['outcome']}: "
                         f"{r['text']}" for r in result)
    return json.dumps(result, ensure_ascii=False, indent=2)


def _via_adapter(args: argparse.Namespace, out: Reporter) -> int | None:
    """``import``/``export`` with ``--format``: the adapters, called as functions."""
    fmt = getattr(args, "format", None)
    if fmt is None:
        given = [name for name, value in vars(args).items() if value and (
            name == "output" or name.startswith("opt_") or name.endswith("_options"))]
        if given:
            raise usage("an adapter option (--output, --read-option, --write-option or a "
                        "format flag) goes with --format FMT", "--format", given=given)
        return None
    from ..adapters import AdapterError
    from ..reference.memory.store import default_path

    db = str(args.db) if args.db is not None else str(default_path())
    side = "write" if args.op == "export" else "read"
    try:
        options = adapt.side_options(args, side)
    except AdapterError as exc:
        raise adapt.refusal_of(exc, f"--{side}-option") from None
    if args.op == "export":
        return adapt.export_store(out, fmt, db, options, args.output)
    return adapt.import_file(out, fmt, args.path, options, adapt.Seed(db, args))


def run(args: argparse.Namespace, out: Reporter) -> int:
    if args.op in ("import", "export"):
        done = _via_adapter(args, out)
        if done is not None:
            return done
    value = _read_input(args)
    from ..reference.memory import MemoryProtocolError, open_provider
    from .approval import terminal_gate

    def refused(exc: MemoryProtocolError) -> Exception:
        code = exits.USAGE if exc.code in _STORE_CODES else exits.INVALID
        return from_error(exc.to_json(), code, flag="--db" if code == exits.USAGE else None)

    try:
        provider = open_provider(args.db, gate=terminal_gate(args.yes, _shown(args, value)),
                                 write_policy=args.policy, durability=args.durability)
    except MemoryProtocolError as exc:
        raise refused(exc) from None
    try:
        result = _run(provider, args, value)
    except MemoryProtocolError as exc:
        raise refused(exc) from None
    finally:
        provider.close()
    if out.json:
        out.emit(result)
    else:
        out.say(_human(args.op, result))
    return exits.OK
