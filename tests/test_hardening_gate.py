"""The approval gate cannot be bypassed (issue 9).

Every public path that changes the memory store is enumerated, by introspection where it can
be: the provider's public names, the public names of ``dshkit.reference.memory``, every
``dshkit`` command that takes a store path, and every module of the package that opens a
store. A new method, attribute, command, store option or store-opening module fails
:func:`test_every_provider_name_is_classified`, :func:`test_every_store_command_is_classified`
or :func:`test_only_known_modules_open_a_store` until it is classified here.

Each write path, with no approver, a failing, rejecting or evasive one, policy ``off`` or a
session that never approves (even under policy ``auto``), fails closed: ``WRITE_DENIED``, the
store's content is identical row for row and value for value (schema, header, entries, every
earlier audit row), and exactly one ``…-denied`` audit row is added (MEM-GATE-006). With an
approver it is asked exactly once, every new audit row carries the approval, and the ledger
replays to the entries (MEM-AUD-005). Reads change nothing; ``query`` with ``recall`` and
``snapshot`` only append their audit rows and count recalls (MEM-QRY-005, MEM-SNP-001);
migration changes the schema only (MEM-STO-005).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pkgutil
import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import dshkit
import dshkit.reference.memory as memory_package
from dshkit.cli import build_parser
from dshkit.conformance.memento_fixture import materialise
from dshkit.conformance.memory_model import replay
from dshkit.reference.memory import MemoryProtocolError, open_provider
from dshkit.reference.memory.provider import Provider
from dshkit.reference.memory.store import create_store_at_version

Write = dict[str, Any]


def _write(**session: Any) -> Write:
    return {"agent": {"session": {"id": "gate", "header": {"cwd": "/ws/gate",
                                                           "agentPreset": "h"}, **session}}}


WRITE = _write()
#: Provider methods that change entries: each goes through the gate.
GATED = {"add", "replace", "remove", "consolidate", "seed", "import_envelope", "migrate_memento",
         "approve_proposal"}
#: Provider methods that append audit rows without changing an entry's content: recall
#: counters (MEM-QRY-005) and the frozen snapshot (MEM-SNP-001); not gated by the spec.
AUDITED_ONLY = {"query", "snapshot", "propose", "dismiss_proposal"}
READS = {"budgets", "list_entries", "audit_list", "export", "close", "proposals"}
#: The action of a gated call's denial row: an approval of a proposal is an ``add``.
DENIED_AS = {"import_envelope": "seed", "migrate_memento": "seed", "approve_proposal": "add"}
#: Instance attributes: the configuration the provider was opened with and its storage layer.
#: ``store`` is below the gate (the pipeline's own storage, not part of the protocol surface
#: of MEM-PRV-001); code in the same process can reach the database file in any case, so the
#: gate guards the protocol calls, which are what a model's tools and the CLI use.
STATE = {"store", "limits", "gate", "policy", "clock", "ids"}
#: ``dshkit memory`` operations that change entries, that only audit, and that read.
#: ``proposals`` is gated for its ``approve`` (its ``list`` reads, its ``dismiss`` only audits).
CLI_GATED = {"add", "replace", "remove", "consolidate", "seed", "import", "proposals"}
CLI_AUDITED_ONLY = {"snapshot"}
CLI_READS = {"query", "list", "budgets", "audit", "export"}
CLI_MIGRATES = {"migrate"}
#: Served read-only to MCP clients; its write proof is tests/test_memory_mcp.py.
CLI_SERVES = {"serve"}
#: ``recall``: the query of ``query`` (a read; with --session-id it counts and audits the
#: recall, MEM-RCL-004) plus a session query index it only reads (MEM-RCL-016).
CLI_RECALLS = {"recall"}
#: Every dshkit command (node of the parser tree) with an option that names a database, and
#: what it does to that database. ``memory import --format`` and ``memory export
#: --format`` call the functions behind ``adapt import --db`` and ``adapt export``.
STORE_COMMANDS: dict[tuple[str, ...], str] = {
    **{("memory", op): "gated" for op in CLI_GATED},
    **{("memory", op): "audited-only" for op in CLI_AUDITED_ONLY},
    **{("memory", op): "read" for op in CLI_READS},
    **{("memory", op): "migrate" for op in CLI_MIGRATES},
    **{("memory", op): "read-only MCP server" for op in CLI_SERVES},
    **{("memory", op): "query, and reads a session query index" for op in CLI_RECALLS},
    ("memory",): "options of the operations",
    ("adapt", "import"): "gated",  # --db
    ("adapt", "export"): "read",
    # the same option name for the session query index, another database: the modules
    # behind these commands never open a memory store (test_only_known_modules_open_a_store)
    **{("query", op): "query index" for op in ("index", "search", "read", "trace")},
}
STORE_OPTIONS = {"db", "into_db"}
#: Modules of the dshkit package that open a memory store, and why.
STORE_OPENERS = {
    "dshkit.reference.memory.store": "defines open_store and create_store_at_version",
    "dshkit.reference.memory.provider": "open_provider: the protocol pipeline",
    "dshkit.cli.memory": "dshkit memory",
    "dshkit.cli.adapt": "dshkit adapt import --db, adapt export",
    "dshkit.conformance.implementations.reference.memory": "the kit's reference binding of the memory suite, on its own temporary stores",
    "dshkit.reference.memory.readonly": "read_store: the read-only view of dshkit memory serve, which never writes (tests/test_memory_mcp.py)",
}
_OPENS = re.compile(r"\b(open_provider|open_store|create_store_at_version|Provider|Store)\s*\(")

ENVELOPE_ENTRY = {"id": "00000000-0000-4000-8000-000000000001", "track": "user",
                  "scope": "user-global", "workspaceKey": "", "agentKey": "",
                  "text": "imported fact", "source": "dshkit", "tags": [], "version": 1,
                  "createdAt": 0, "updatedAt": 0, "lastRecalled": None, "recallCount": 0,
                  "sessionId": None}


def _envelope() -> dict[str, Any]:
    return {"plugin": "dshkit", "schema": "memory-export-v1",
            "exportedAt": "2026-01-01T00:00:00.000Z",
            "budgets": [{"track": t, "scope": s, "used": 0, "limit": 2000} for t, s in (
                ("user", "user-global"), ("user", "workspace"), ("agent", "user-global"),
                ("agent", "workspace"))],
            "entries": [ENVELOPE_ENTRY]}


CALLS: dict[str, Callable[[Provider, Write], Any]] = {
    "add": lambda p, w: p.add({"track": "user", "scope": "user-global", "text": "new"}, w),
    "replace": lambda p, w: p.replace({"track": "user", "scope": "user-global",
                                       "match": "alpha", "text": "changed"}, w),
    "remove": lambda p, w: p.remove({"track": "user", "scope": "user-global",
                                     "match": "alpha"}, w),
    "consolidate": lambda p, w: p.consolidate({"track": "user", "scope": "user-global",
                                               "matches": ["alpha", "beta"], "text": "both"},
                                              w),
    "seed": lambda p, w: p.seed([{"track": "agent", "scope": "workspace", "text": "seeded"}],
                                w),
    "import_envelope": lambda p, w: p.import_envelope(_envelope(), w),
    "migrate_memento": lambda p, w: p.migrate_memento(_memento_source(p), w),
    "approve_proposal": lambda p, w: p.approve_proposal(
        {"id": p.proposals({"status": "pending"})[0]["id"]}, w),
}
def _memento_source(provider: Provider) -> Path:
    """A dsh-memento store of one new entry, next to the provider's store."""
    return materialise(provider.store.path.parent / "memento.db", 4, {"entries": [{
        "id": "9b7c2f4e-0a1d-4c3b-8e5f-6a7b8c9d0e1f", "track": "agent", "scope": "workspace",
        "workspace_key": "/w", "text": "from dsh-memento", "source": "dsh-memento",
        "created_at": 1, "updated_at": 1, "session_id": None}]})


READ_CALLS: dict[str, Callable[[Provider], Any]] = {
    "budgets": lambda p: p.budgets(),
    "list_entries": lambda p: p.list_entries(),
    "audit_list": lambda p: p.audit_list(),
    "export": lambda p: p.export(),
    "close": lambda p: p.close(),
    "query": lambda p: p.query({"text": "fact"}),  # without recall: a read
    "proposals": lambda p: p.proposals(),
}


def _prepared(path: Path) -> None:
    provider = open_provider(path, write_policy="auto")
    try:
        for text in ("alpha fact", "beta fact"):
            provider.add({"track": "user", "scope": "user-global", "text": text}, WRITE)
        provider.propose({"kind": "compaction-summary", "track": "agent", "scope": "workspace",
                          "text": "proposed fact"}, WRITE)
    finally:
        provider.close()


def _state(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    provider = open_provider(path, write_policy="off")
    try:
        return provider.list_entries(), provider.store.audit_rows(order="ORDER BY seq ASC")
    finally:
        provider.close()


def _raw(path: Path) -> dict[str, Any]:
    """The store's content as SQLite holds it: schema, header, every row of every table, with
    SQLite's own types (so 1 and 1.0, '' and NULL differ)."""
    conn = sqlite3.connect(path)
    try:
        tables = [row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {
            "schema": conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master "
                                   "ORDER BY type, name").fetchall(),
            "header": [conn.execute(f"PRAGMA {name}").fetchone()[0]
                       for name in ("application_id", "user_version")],
            **{table: conn.execute(f'SELECT * FROM "{table}" ORDER BY rowid').fetchall()
               for table in tables},
        }
    finally:
        conn.close()


def _assert_denied(before: dict[str, Any], after: dict[str, Any], action: str) -> None:
    """Nothing changed but one appended ``action`` audit row (and the counter AUTOINCREMENT
    keeps for it)."""
    assert after["schema"] == before["schema"] and after["header"] == before["header"]
    assert after["entries"] == before["entries"]
    assert after["proposals"] == before["proposals"]  # a denied approval leaves it pending
    assert after["audit"][:len(before["audit"])] == before["audit"]
    added = after["audit"][len(before["audit"]):]
    assert [row[2] for row in added] == [action], added
    assert set(after) == set(before)


# -- the inventory ------------------------------------------------------------------------------


def test_every_provider_name_is_classified(tmp_path: Path) -> None:
    public = {name for name in dir(Provider) if not name.startswith("_")}
    assert public == GATED | AUDITED_ONLY | READS, public ^ (GATED | AUDITED_ONLY | READS)
    assert set(CALLS) == GATED and set(READ_CALLS) == READS | {"query"}
    provider = open_provider(tmp_path / "memory.db")
    try:
        attributes = {name for name in vars(provider) if not name.startswith("_")}
    finally:
        provider.close()
    assert attributes == STATE, attributes ^ STATE
    assert set(memory_package.__all__) == {"MemoryProtocolError", "Provider", "open_provider"}


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
              ) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _commands(child, (*path, name))


def test_every_store_command_is_classified() -> None:
    """Every command of the whole ``dshkit`` parser that takes a store path is listed, and
    the ``dshkit memory`` operations are exactly the classified ones."""
    takes_store = {path for path, parser in _commands(build_parser(every=True))
                   if any(a.dest in STORE_OPTIONS for a in parser._actions)}
    assert takes_store == set(STORE_COMMANDS), takes_store ^ set(STORE_COMMANDS)
    memory = dict(_commands(build_parser(every=True)))[("memory",)]
    ops = {path[1] for path, _ in _commands(memory, ("memory",)) if len(path) == 2}
    assert ops == (CLI_GATED | CLI_AUDITED_ONLY | CLI_READS | CLI_MIGRATES | CLI_SERVES
                   | CLI_RECALLS)
    convert = dict(_commands(build_parser(every=True)))[("convert",)]
    assert not any(a.dest in STORE_OPTIONS for a in convert._actions)  # files only


def test_only_known_modules_open_a_store() -> None:
    """A module that opens a memory store without a store option (a default path) would
    escape the parser check: every module of the package is read for the calls that open one."""
    openers = set()
    for module in pkgutil.walk_packages(dshkit.__path__, "dshkit."):
        spec = importlib.util.find_spec(module.name)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            continue
        if _OPENS.search(Path(spec.origin).read_text(encoding="utf-8")):
            openers.add(module.name)
    assert openers == set(STORE_OPENERS), openers ^ set(STORE_OPENERS)


# -- the provider ------------------------------------------------------------------------------


def _failing(payload: dict[str, Any], write: dict[str, Any]) -> str:
    raise RuntimeError("approver crashed")


#: name → (gate, write_policy, write context)
DENIALS: dict[str, tuple[Any, str, Write]] = {
    "no-approver": (None, "ask", WRITE),
    "failing": (_failing, "ask", WRITE),
    "rejecting": (lambda payload, write: "rejected", "ask", WRITE),
    "evasive": (lambda payload, write: "Allowed-Once", "ask", WRITE),
    "not-a-string": (lambda payload, write: True, "ask", WRITE),
    "policy-off": (lambda payload, write: "allowed-once", "off", WRITE),
    "session-never": (lambda payload, write: "allowed-once", "auto",
                      _write(approvalPolicy="never")),
}


@pytest.mark.parametrize("op", sorted(GATED))
@pytest.mark.parametrize("denial", sorted(DENIALS))
def test_provider_write_without_approval_fails_closed(op: str, denial: str,
                                                       tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    _prepared(db)
    before = _raw(db)
    gate, policy, write = DENIALS[denial]
    provider = open_provider(db, gate=gate, write_policy=policy)
    try:
        with pytest.raises(MemoryProtocolError) as info:
            CALLS[op](provider, write)
    finally:
        provider.close()
    assert info.value.code == "WRITE_DENIED"
    _assert_denied(before, _raw(db), f"{DENIED_AS.get(op, op)}-denied")


@pytest.mark.parametrize("op", sorted(GATED))
def test_provider_write_with_approval_is_audited(op: str, tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    _prepared(db)
    _, rows_before = _state(db)
    seen: list[dict[str, Any]] = []

    def approve(payload: dict[str, Any], write: dict[str, Any]) -> str:
        seen.append(payload)
        return "allowed-once"

    provider = open_provider(db, gate=approve, write_policy="ask")
    try:
        CALLS[op](provider, WRITE)
    finally:
        provider.close()
    assert len(seen) == 1  # exactly one approval per write
    entries, rows = _state(db)
    added = rows[len(rows_before):]
    assert added and all(r["outcome"].startswith("allowed-once (via gate") for r in added)
    assert replay(rows) == entries  # every change has its audit row


@pytest.mark.parametrize("op", sorted(READ_CALLS))
def test_reads_change_nothing(op: str, tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    _prepared(db)
    before = _raw(db)
    provider = open_provider(db, write_policy="ask")  # no approver: nothing could be approved
    try:
        READ_CALLS[op](provider)
    finally:
        provider.close()
    assert _raw(db) == before


def test_recall_and_snapshot_only_audit(tmp_path: Path) -> None:
    """Not gated (MEM-QRY-005, MEM-SNP-001): they append their own audit rows and count
    recalls; no entry's content changes, and the ledger still replays to the entries."""
    db = tmp_path / "memory.db"
    _prepared(db)
    entries_before, rows_before = _state(db)
    provider = open_provider(db, write_policy="ask")
    try:
        provider.query({"text": "fact"}, {"reader": WRITE, "recall": True})
        provider.snapshot(WRITE)
    finally:
        provider.close()
    entries, rows = _state(db)
    content = ("id", "track", "scope", "text", "tags", "source", "version", "updatedAt")
    assert [{k: e[k] for k in content} for e in entries] == [
        {k: e[k] for k in content} for e in entries_before]
    assert [e["recallCount"] for e in entries] == [e["recallCount"] + 1 for e in entries_before]
    assert [r["action"] for r in rows[len(rows_before):]] == ["recalled", "snapshot"]
    assert replay(rows) == entries


# -- the command line --------------------------------------------------------------------------


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    package_root = Path(dshkit.__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(package_root), os.environ.get("PYTHONPATH", "")) if p)}
    env.pop("DSHKIT_MEMORY_DB", None)
    return subprocess.run([sys.executable, "-m", "dshkit", *args], cwd=cwd, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=120,
                          check=False)


SESSION = ["--cwd", "/ws/gate", "--agent-preset", "h"]
CLI_ARGS: dict[str, list[str]] = {
    "add": ["add", "--track", "user", "--scope", "user-global", "--text", "new"],
    "replace": ["replace", "--track", "user", "--scope", "user-global", "--match", "alpha",
                "--text", "changed"],
    "remove": ["remove", "--track", "user", "--scope", "user-global", "--match", "alpha"],
    "consolidate": ["consolidate", "--track", "user", "--scope", "user-global", "--match",
                    "alpha", "--match", "beta", "--text", "both"],
    "seed": ["seed", "seed.json"],
    "import": ["import", "envelope.json"],
    "import --adapter": ["import", "mem0.json", "--adapter", "mem0"],
    "proposals approve": ["proposals", "approve", "{pending}"],
}
#: The approval a gated command gives with ``--yes`` (and nothing else) on the command line.
CLI_ACTION = {"import": "seed", "import --adapter": "seed", "proposals approve": "add"}


def _cli_args(op: str, db: Path) -> list[str]:
    """``{pending}``: the id of the proposal :func:`_prepared` made."""
    provider = open_provider(db, write_policy="off")
    try:
        pending = [p["id"] for p in provider.proposals({"status": "pending"})]
    finally:
        provider.close()
    return [pending[0] if arg == "{pending}" else arg for arg in CLI_ARGS[op]]


def _inputs(tmp_path: Path) -> None:
    (tmp_path / "seed.json").write_text(json.dumps(
        [{"track": "agent", "scope": "workspace", "text": "seeded"}]), "utf-8")
    (tmp_path / "envelope.json").write_text(json.dumps(_envelope()), "utf-8")
    (tmp_path / "mem0.json").write_text(json.dumps([{"id": "m1", "memory": "from mem0"}]),
                                        "utf-8")


def _error_code(done: subprocess.CompletedProcess[bytes]) -> str:
    out = json.loads(done.stdout)
    return str(out.get("error", out)["code"])


@pytest.mark.parametrize("op", sorted(CLI_ARGS))
def test_memory_cli_without_a_terminal_fails_closed(op: str, tmp_path: Path) -> None:
    assert {name.split()[0] for name in CLI_ARGS} == CLI_GATED
    db = tmp_path / "memory.db"
    _prepared(db)
    _inputs(tmp_path)
    before = _raw(db)
    args = _cli_args(op, db)
    done = _cli(["memory", "--db", str(db), "--json", *SESSION, *args], tmp_path)
    assert done.returncode == 1, done
    assert _error_code(done) == "WRITE_DENIED"
    _assert_denied(before, _raw(db), f"{CLI_ACTION.get(op, op)}-denied")
    # with --yes the same command writes, and the ledger accounts for it
    entries_before, _ = _state(db)
    done = _cli(["memory", "--db", str(db), "--json", "--yes", *SESSION, *args], tmp_path)
    assert done.returncode == 0, done
    entries, rows = _state(db)
    assert entries != entries_before and replay(rows) == entries


def test_adapt_import_into_db_fails_closed(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    _prepared(db)
    _inputs(tmp_path)
    before = _raw(db)
    done = _cli(["adapt", "import", "mem0", "mem0.json", "--into-db", str(db), "--json"],
                tmp_path)
    assert done.returncode == 1, done
    assert _error_code(done) == "WRITE_DENIED"
    _assert_denied(before, _raw(db), "seed-denied")
    done = _cli(["adapt", "import", "mem0", "mem0.json", "--into-db", str(db), "--json",
                 "--yes"], tmp_path)
    assert done.returncode == 0, done
    entries, rows = _state(db)
    assert [e["text"] for e in entries][-1] == "from mem0" and replay(rows) == entries


def test_cli_reads_change_nothing(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    _prepared(db)
    before = _raw(db)
    for args in (["memory", "--db", str(db), "--json", op] for op in sorted(CLI_READS)):
        assert _cli(args, tmp_path).returncode == 0
    done = _cli(["adapt", "export", "mem0", "--db", str(db), "--json"], tmp_path)
    assert done.returncode == 0, done
    assert _raw(db) == before


# -- migration ----------------------------------------------------------------------------------


@pytest.mark.parametrize("via", ["provider", "cli"])
@pytest.mark.parametrize("version", [1, 2, 3])
def test_migration_changes_no_entry(version: int, via: str, tmp_path: Path) -> None:
    """Migration is the one store change outside the gate: it alters the schema only, so it
    adds, changes and removes no entry and no audit row (MEM-STO-005)."""
    db = tmp_path / "memory.db"
    create_store_at_version(db, version)
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO entries (id, track, scope, text, source, created_at, "
                     "updated_at) VALUES ('e1', 'user', 'user-global', 'old', 'dshkit', 1, 1)")
        conn.execute("INSERT INTO audit (ts, action, entry_id, text) VALUES (1, 'add', 'e1', "
                     "'old')")
    conn.close()
    before = _raw(db)
    if via == "provider":
        open_provider(db, write_policy="off").close()  # migrates on open
    else:
        done = _cli(["memory", "--db", str(db), "--json", "migrate"], tmp_path)
        assert done.returncode == 0 and json.loads(done.stdout)["version"] == 4, done
    after = _raw(db)
    assert after["header"] == [before["header"][0], 4]
    assert "proposals" not in before and after["proposals"] == []
    # the old columns keep their values, the new ones get the data rule's values
    new_columns = {"entries": {1: (1, 0, None), 2: (), 3: ()}[version],
                   "audit": {1: (None, None), 2: (None, None), 3: ()}[version]}
    for table, added in new_columns.items():
        width = len(before[table][0])
        assert [row[:width] for row in after[table]] == before[table]
        assert {row[width:] for row in after[table]} == {added}
    entries, rows = _state(db)
    assert [(e["id"], e["text"], e["version"]) for e in entries] == [("e1", "old", 1)]
    assert [(r["action"], r["entryId"]) for r in rows] == [("add", "e1")]
