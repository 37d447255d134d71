"""``dshkit memory``: the management surface of the reference memory store.

Writes go through the same approval pipeline as any provider call. On the command line the
approver is the person at the terminal: the payload is shown and a yes/no answer asked; without
a terminal the answer is "unavailable" (fail closed) unless ``--yes`` is given.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from .reference.json.inputs import UNREADABLE, JsonInputError, read_json
from .reference.memory import MemoryProtocolError, open_provider
from .reference.memory.provider import Provider
from .reference.memory.store import default_path

EXIT_OK, EXIT_REFUSED, EXIT_USAGE = 0, 1, 2
_STORE_CODES = {"STORE_CORRUPT", "STORE_UNSUPPORTED_VERSION", "STORE_BUSY"}


def _common(parser: argparse.ArgumentParser, suppress: bool) -> None:
    """Options accepted before and after the operation name."""

    def default(value: Any) -> Any:
        return argparse.SUPPRESS if suppress else value

    parser.add_argument("--db", default=default(None), help="store path (default: "
                        "$DSHKIT_MEMORY_DB or $DSHKIT_HOME/memory/memory.db)")
    parser.add_argument("--json", action="store_true", default=default(False), help="print JSON")
    parser.add_argument("--yes", action="store_true", default=default(False),
                        help="approve writes without asking")
    parser.add_argument("--policy", choices=["ask", "auto", "off"], default=default("ask"),
                        help="writePolicy (default ask)")
    parser.add_argument("--session-id", default=default("dshkit-cli"))
    parser.add_argument("--cwd", default=default(None),
                        help="workspace directory (default: current)")
    parser.add_argument("--agent-preset", default=default(None))
    parser.add_argument("--durability", choices=["normal", "full"], default=default("normal"),
                        help="commit durability (MEM-STO-001): normal (default) survives a "
                        "crash of the process, full also a power loss, at one fsync per write")


def add_parser(sub: Any) -> None:
    memory = sub.add_parser("memory", help="manage a dshkit memory store")
    _common(memory, suppress=False)
    shared = argparse.ArgumentParser(add_help=False)
    _common(shared, suppress=True)
    ops = memory.add_subparsers(dest="op", required=True, metavar="OPERATION")

    def add_op(name: str, **kwargs: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = ops.add_parser(name, parents=[shared], **kwargs)
        return parser

    def bucket(p: argparse.ArgumentParser) -> None:
        p.add_argument("--track", required=True, choices=["user", "agent"])
        p.add_argument("--scope", required=True, choices=["user-global", "workspace"])

    add = add_op("add", help="add an entry")
    bucket(add)
    add.add_argument("--text", required=True)
    add.add_argument("--tags", help="comma-separated tags")
    add.add_argument("--source")
    replace = add_op("replace", help="replace the entry containing --match")
    bucket(replace)
    replace.add_argument("--match", required=True)
    replace.add_argument("--text", required=True)
    replace.add_argument("--tags")
    replace.add_argument("--source")
    remove = add_op("remove", help="remove the entry containing --match")
    bucket(remove)
    remove.add_argument("--match", required=True)
    consolidate = add_op("consolidate", help="merge entries into one")
    bucket(consolidate)
    consolidate.add_argument("--match", action="append", required=True, dest="matches")
    consolidate.add_argument("--text", required=True)
    consolidate.add_argument("--tags")
    consolidate.add_argument("--source")
    seed = add_op("seed", help="add a JSON array of entry inputs under one approval")
    seed.add_argument("file", help="JSON file, or - for stdin")
    query = add_op("query", help="search entries")
    query.add_argument("--track", choices=["user", "agent"])
    query.add_argument("--scope", choices=["user-global", "workspace"])
    query.add_argument("--text")
    query.add_argument("--limit", type=int)
    add_op("list", help="every entry")
    add_op("budgets", help="usage and limits")
    audit = add_op("audit", help="the audit ledger, newest first")
    audit.add_argument("--limit", type=int, default=100)
    add_op("snapshot", help="the frozen snapshot of --session-id")
    exp = add_op("export", help="print the memory-export-v1 envelope (or, with --adapter, "
                 "another tool's format)")
    exp.add_argument("--adapter", metavar="FMT", help="mem0, hermes, hermes-bullets, claude-md, "
                     "mcp-graph or dshkit (through dshkit adapt export)")
    exp.add_argument("--output", metavar="PATH", help="with --adapter: write here")
    imp = add_op("import", help="import a memory-export-v1 envelope (or, with --adapter, "
                 "another tool's file) through one approved seed")
    imp.add_argument("file", help="JSON file, or - for stdin")
    imp.add_argument("--adapter", metavar="FMT", help="read FILE in this format (through "
                     "dshkit adapt import --into-db)")
    add_op("migrate", help="open the store, migrating it to the current version")


def _tags(raw: str | None) -> list[str] | None:
    return None if raw is None else [t for t in raw.split(",")]


def _read_input(args: argparse.Namespace) -> Any:
    """The JSON file of ``seed`` and ``import`` (None for the other operations), read before
    the store is opened: an unusable input is INVALID_INPUT (field "/") and touches nothing."""
    if args.op not in ("seed", "import"):
        return None
    try:
        return read_json(args.file)
    except JsonInputError as exc:
        reason = exc.describe() if exc.code == UNREADABLE else f"{args.file}: {exc.describe()}"
        raise MemoryProtocolError("INVALID_INPUT", f"invalid input at /: {reason}",
                                  {"field": "/", "reason": reason}) from None


def _terminal_gate(auto_yes: bool) -> Any:
    def gate(payload: dict[str, Any], write: dict[str, Any]) -> str:
        if auto_yes:
            return "allowed-once"
        if not sys.stdin.isatty():
            return "unavailable"
        sys.stderr.write(f"memory {payload['action']} {payload['track']}/{payload['scope']}:\n"
                         f"{payload['text']}\nApprove? [y/N] ")
        sys.stderr.flush()
        answer = sys.stdin.readline().strip().lower()
        return "allowed-once" if answer in ("y", "yes") else "rejected"

    return gate


def _write_context(args: argparse.Namespace) -> dict[str, Any]:
    header: dict[str, Any] = {"cwd": args.cwd if args.cwd is not None else os.getcwd()}
    if args.agent_preset is not None:
        header["agentPreset"] = args.agent_preset
    return {"agent": {"session": {"id": args.session_id, "header": header}}}


def _run(provider: Provider, args: argparse.Namespace, value: Any) -> Any:
    write = _write_context(args)
    op = args.op
    if op == "add":
        item: dict[str, Any] = {"track": args.track, "scope": args.scope, "text": args.text}
        if args.tags is not None:
            item["tags"] = _tags(args.tags)
        if args.source is not None:
            item["source"] = args.source
        return provider.add(item, write)
    if op in ("replace", "consolidate"):
        item = {"track": args.track, "scope": args.scope, "text": args.text}
        if op == "replace":
            item["match"] = args.match
        else:
            item["matches"] = args.matches
        if args.tags is not None:
            item["tags"] = _tags(args.tags)
        if args.source is not None:
            item["source"] = args.source
        return provider.replace(item, write) if op == "replace" else provider.consolidate(
            item, write)
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
    if op in ("list",):
        return "\n".join(f"{e['id']} {e['track']}/{e['scope']}: {e['text']}" for e in result)
    if op == "query":
        lines = [f"{e['id']} {e['track']}/{e['scope']}: {e['text']}" for e in result["entries"]]
        lines.append(f"({len(result['entries'])} of {result['total']})")
        return "\n".join(lines)
    if op == "audit":
        return "\n".join(f"{r['seq']} {r['action']} {r['track']}/{r['scope']} {r['outcome']}: "
                         f"{r['text']}" for r in result)
    return json.dumps(result, ensure_ascii=False, indent=2)


def _adapter_argv(args: argparse.Namespace) -> list[str] | None:
    """The ``dshkit adapt`` command an ``--adapter`` import or export stands for."""
    fmt = getattr(args, "adapter", None)
    if fmt is None:
        return None
    db = str(args.db) if args.db is not None else str(default_path())
    flags = ["--json"] if args.json else []
    if args.op == "export":
        output = ["--output", args.output] if args.output else []
        return ["export", fmt, "--db", db, *output, *flags]
    context = ["--session-id", args.session_id, "--policy", args.policy,
               "--durability", args.durability]
    if args.cwd is not None:
        context += ["--cwd", args.cwd]
    if args.agent_preset is not None:
        context += ["--agent-preset", args.agent_preset]
    return ["import", fmt, args.file, "--into-db", db, *context,
            *(["--yes"] if args.yes else []), *flags]


def run(args: argparse.Namespace) -> int:
    via_adapter = _adapter_argv(args)
    if via_adapter is not None:
        from .adapters_cli import delegate

        return delegate(via_adapter)
    try:
        value = _read_input(args)
    except MemoryProtocolError as exc:
        _fail(exc, args)
        return EXIT_USAGE
    try:
        provider = open_provider(args.db, gate=_terminal_gate(args.yes),
                                 write_policy=args.policy, durability=args.durability)
    except MemoryProtocolError as exc:
        return _fail(exc, args)
    try:
        result = _run(provider, args, value)
    except MemoryProtocolError as exc:
        return _fail(exc, args)
    finally:
        provider.close()
    if args.json:
        sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
    else:
        print(_human(args.op, result))
    return EXIT_OK


def _fail(exc: MemoryProtocolError, args: argparse.Namespace) -> int:
    if args.json:
        sys.stdout.write(json.dumps({"error": exc.to_json()}, ensure_ascii=False) + "\n")
    else:
        print(f"{exc.code}: {exc.message}", file=sys.stderr)
    return EXIT_USAGE if exc.code in _STORE_CODES else EXIT_REFUSED
