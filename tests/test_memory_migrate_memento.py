"""Importing a dsh-memento SQLite store directly (spec chapter ``memory/migrate-memento``)."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from memory_support import (
    WRITE,
    FrozenClock,
    Json,
    budgets,
    ledger,
    open_store,
    raises_code,
)

from dshkit.conformance.memento_fixture import materialise
from dshkit.conformance.memory_model import replay
from dshkit.reference.memory.memento_store import read_memento_store
from dshkit.reference.memory.migrate import migrate_memento

ID1 = "11111111-1111-4111-8111-111111111111"
ID2 = "22222222-2222-4222-9222-222222222222"
P1 = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"


def _entry(entry_id: str, version: int, **over: Any) -> Json:
    row: Json = {"id": entry_id, "track": "agent", "scope": "workspace",
                 "workspace_key": "/home/ana/shop", "text": "Prices are stored in cents",
                 "source": "dsh-memento", "created_at": 1000, "updated_at": 2000,
                 "session_id": "s-1"}
    if version >= 3:
        row.update(agent_key="coder", last_recalled=3000, recall_count=4)
    if version >= 4:
        row.update(tags='["domain"]', version=2)
    row.update(over)
    return row


def _audit(action: str, ts: int = 1000, **over: Any) -> Json:
    return {"ts": ts, "action": action, "track": "agent", "scope": "workspace",
            "entry_id": ID1, "text": "Prices are stored in cents", "outcome": "allowed-once",
            "source": "dsh-memento", "session_id": "s-1", **over}


def _proposal(version: int) -> Json:
    row: Json = {"id": P1, "kind": "compaction", "track": "agent", "scope": "workspace",
                 "workspace_key": "/home/ana/shop", "text": "maybe remember this",
                 "source": "compaction", "session_id": "s-1", "status": "pending",
                 "created_at": 1500, "decided_at": None}
    if version >= 3:
        row["agent_key"] = "coder"
    return row


def _source(tmp_path: Path, version: int, **tables: Any) -> Path:
    rows = {"entries": [_entry(ID1, version)], "audit": [_audit("add"), _audit("proposal")]}
    if version >= 2:
        rows["proposals"] = [_proposal(version)]
    rows.update(tables)
    return materialise(tmp_path / f"memento-v{version}.db", version, rows)


def _fingerprint(path: Path) -> tuple[bytes, int, list[str]]:
    names = sorted(os.listdir(path.parent))
    return hashlib.sha256(path.read_bytes()).digest(), path.stat().st_mtime_ns, names


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_the_source_is_left_byte_for_byte(tmp_path: Path, version: int) -> None:
    """MEM-MIG-001."""
    (tmp_path / "src").mkdir()
    source = _source(tmp_path / "src", version)
    before = _fingerprint(source)
    provider = open_store(tmp_path / "dest.db", clock=FrozenClock())
    try:
        migrate_memento(provider, source, WRITE)
    finally:
        provider.close()
    assert _fingerprint(source) == before


def test_a_source_with_a_wal_is_refused_and_left_alone(tmp_path: Path) -> None:
    """MEM-MIG-001."""
    source = _source(tmp_path, 4)
    Path(f"{source}-wal").write_bytes(b"")
    before = _fingerprint(source)
    with raises_code("SOURCE_INVALID") as info:
        read_memento_store(source)
    assert "-wal" in info.value.details["reason"]
    assert _fingerprint(source) == before


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_entries_keep_identity_and_counters(tmp_path: Path, version: int) -> None:
    """MEM-MIG-004."""
    source = _source(tmp_path, version)
    with open_store(tmp_path / "dest.db", clock=FrozenClock()) as provider:
        report = migrate_memento(provider, source, WRITE)
        [entry] = provider.list_entries()
    assert report["added"] == 1 and report["sourceVersion"] == version
    assert entry == {
        "id": ID1, "track": "agent", "scope": "workspace", "workspaceKey": "/home/ana/shop",
        "agentKey": "coder" if version >= 3 else "", "text": "Prices are stored in cents",
        "source": "dsh-memento", "tags": ["domain"] if version >= 4 else [],
        "version": 2 if version >= 4 else 1, "createdAt": 1000, "updatedAt": 2000,
        "lastRecalled": 3000 if version >= 3 else None,
        "recallCount": 4 if version >= 3 else 0, "sessionId": "s-1"}


def test_user_global_entries_lose_the_writers_workspace_key(tmp_path: Path) -> None:
    """MEM-MIG-004."""
    source = _source(tmp_path, 4, entries=[_entry(ID1.upper(), 4, scope="user-global",
                                                  track="user")])
    with open_store(tmp_path / "dest.db") as provider:
        migrate_memento(provider, source, WRITE)
        [entry] = provider.list_entries()
    assert entry["id"] == ID1 and entry["workspaceKey"] == ""


def test_the_ledger_is_carried_and_unknown_actions_reported(tmp_path: Path) -> None:
    """MEM-MIG-006."""
    source = _source(tmp_path, 4, audit=[_audit("add", 900), _audit("proposal", 950),
                                         _audit("settings-rejected", 960), _audit("snapshot",
                                                                                  970)])
    with open_store(tmp_path / "dest.db", clock=FrozenClock()) as provider:
        report = migrate_memento(provider, source, WRITE)
        rows = ledger(provider)
        entries = provider.list_entries()
    assert [r["action"] for r in rows] == ["add", "proposal", "snapshot", "seed", "add"]
    assert [r["ts"] for r in rows[:3]] == [900, 950, 970]
    assert rows[0]["entry"] is None and rows[0]["entryId"] == ID1
    assert report["ledgerRows"] == 3
    dropped = next(x for x in report["losses"] if x.get("action") == "settings-rejected")
    assert (dropped["kind"], dropped["rows"]) == ("audit-action", 1)
    assert not any(x.get("action") == "proposal" for x in report["losses"])
    # MEM-AUD-005 holds from the migration's own seed row on
    start = next(i for i, r in enumerate(rows) if r["action"] == "seed")
    assert replay(rows[start:]) == entries


def test_proposals_are_read_and_carried(tmp_path: Path) -> None:
    """MEM-MIG-007 (more in test_memory_migrate_memento_proposals.py)."""
    source = _source(tmp_path, 3)
    assert read_memento_store(source).proposals[0]["agent_key"] == "coder"
    with open_store(tmp_path / "dest.db") as provider:
        report = migrate_memento(provider, source, WRITE)
        [stored] = provider.proposals()
    assert report["proposals"] == {"read": 1, "carried": 1}
    assert not any(x["kind"] in ("proposal", "proposals") for x in report["losses"])
    assert (stored["id"], stored["agentKey"], stored["workspaceKey"]) == (
        P1, "coder", "/home/ana/shop")


def test_a_newer_store_is_refused_with_found_and_supported(tmp_path: Path) -> None:
    """MEM-MIG-002."""
    source = materialise(tmp_path / "m.db", 4, {}, schema_version="5")
    with raises_code("SOURCE_UNSUPPORTED_VERSION") as info:
        read_memento_store(source)
    assert info.value.details == {"path": str(source), "found": 5, "supported": [1, 2, 3, 4]}


@pytest.mark.parametrize("content", [b"", b"not a database at all", b"SQLite format 3\x00junk"])
def test_garbage_is_refused(tmp_path: Path, content: bytes) -> None:
    """MEM-MIG-002."""
    source = tmp_path / "m.db"
    source.write_bytes(content)
    with raises_code("SOURCE_INVALID"):
        read_memento_store(source)
    assert source.read_bytes() == content and os.listdir(tmp_path) == ["m.db"]


def test_a_missing_file_and_a_dshkit_store_are_refused(tmp_path: Path) -> None:
    """MEM-MIG-002."""
    with raises_code("SOURCE_INVALID") as info:
        read_memento_store(tmp_path / "nope.db")
    assert "does not exist" in info.value.details["reason"]
    assert not (tmp_path / "nope.db").exists()
    open_store(tmp_path / "dshkit.db").close()
    with raises_code("SOURCE_INVALID") as info:
        read_memento_store(tmp_path / "dshkit.db")
    assert "meta" in info.value.details["reason"]


@pytest.mark.parametrize("value", ["0", "x", "-1", "2.5"])
def test_a_broken_schema_version_is_refused(tmp_path: Path, value: str) -> None:
    """MEM-MIG-002."""
    source = materialise(tmp_path / "m.db", 4, {}, schema_version=value)
    with raises_code("SOURCE_INVALID"):
        read_memento_store(source)


def test_unknown_columns_tables_and_bad_entries_are_reported(tmp_path: Path) -> None:
    """MEM-MIG-008."""
    rows = {"entries": [_entry(ID1, 4), _entry(ID2, 4, text="   "),
                        _entry("not-a-uuid", 4, created_at=5)],
            "audit": []}
    source = materialise(tmp_path / "m.db", 4, rows, extra=(
        "ALTER TABLE entries ADD COLUMN facet TEXT", "CREATE TABLE embeddings (id TEXT)"))
    with open_store(tmp_path / "dest.db") as provider:
        report = migrate_memento(provider, source, WRITE)
        assert [e["id"] for e in provider.list_entries()] == [ID1]
    kinds = [(x["kind"], x.get("column") or x.get("table") or x.get("id"))
             for x in report["losses"]]
    assert ("unknown-table", "embeddings") in kinds
    assert ("unknown-column", "facet") in kinds
    assert ("entry", ID2) in kinds and ("entry", "not-a-uuid") in kinds
    bad = next(x for x in report["losses"] if x.get("id") == ID2)
    assert bad["field"] == "/text"


def test_again_is_a_no_op_and_other_content_is_a_conflict(tmp_path: Path) -> None:
    """MEM-MIG-003."""
    source = _source(tmp_path, 4)
    dest = tmp_path / "dest.db"
    with open_store(dest) as provider:
        migrate_memento(provider, source, WRITE)
        before = ledger(provider)
        again = migrate_memento(provider, source, WRITE)
        assert again["added"] == 0 and again["skipped"] == [ID1]
        assert ledger(provider) == before
    other = materialise(tmp_path / "other.db", 4, {"entries": [_entry(ID1, 4, text="changed")]})
    with open_store(dest) as provider:
        with raises_code("IMPORT_CONFLICT") as info:
            migrate_memento(provider, other, WRITE)
        assert info.value.details == {"ids": [ID1]}
        assert ledger(provider) == before


def test_over_budget_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    """MEM-MIG-009."""
    source = _source(tmp_path, 4)
    with open_store(tmp_path / "dest.db", budgets=budgets(100, 100, 100, 5)) as provider:
        with raises_code("BUDGET_EXCEEDED"):
            migrate_memento(provider, source, WRITE)
        assert provider.list_entries() == [] and ledger(provider) == []


def test_a_denied_migration_changes_nothing_but_its_row(tmp_path: Path) -> None:
    """MEM-MIG-010."""
    source = _source(tmp_path, 4)
    with open_store(tmp_path / "dest.db", write_policy="off") as provider:
        with raises_code("WRITE_DENIED"):
            migrate_memento(provider, source, WRITE)
        assert provider.list_entries() == []
        assert [r["action"] for r in ledger(provider)] == ["seed-denied"]


def test_a_failure_inside_the_transaction_rolls_everything_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MEM-MIG-010."""
    from dshkit.reference.memory import proposals as pro

    source = _source(tmp_path, 4)

    def broken(store: Any, rows: Any) -> list[Json]:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(pro, "import_records", broken)
    with open_store(tmp_path / "dest.db") as provider:
        with pytest.raises(sqlite3.OperationalError):
            migrate_memento(provider, source, WRITE)
        assert provider.list_entries() == [] and ledger(provider) == []


def test_reports_and_refusals_follow_their_schemas(tmp_path: Path) -> None:
    """MEM-MIG-008."""
    from dshkit import schemas

    rows = {"entries": [_entry(ID1, 4), _entry(ID2, 4, source="")],
            "audit": [_audit("add"), _audit("proposal"), _audit("settings-rejected")],
            "proposals": [_proposal(4), {**_proposal(4), "id": "p-2", "session_id": "s-2"}]}
    source = materialise(tmp_path / "m.db", 4, rows, extra=(
        "ALTER TABLE audit ADD COLUMN note TEXT", "INSERT INTO meta VALUES ('owner', 'x')"))
    with open_store(tmp_path / "dest.db") as provider:
        report = migrate_memento(provider, source, WRITE)
        assert {x["kind"] for x in report["losses"]} == {
            "unknown-column", "meta", "entry", "audit-action", "proposal"}
        assert schemas.errors("memory/v1/migrate-report.json", report) == []
        again = migrate_memento(provider, source, WRITE)
        assert schemas.errors("memory/v1/migrate-report.json", again) == []
        other = materialise(tmp_path / "o.db", 4, {"entries": [_entry(ID1, 4, text="x")]})
        with raises_code("IMPORT_CONFLICT") as info:
            migrate_memento(provider, other, WRITE)
        assert schemas.errors("memory/v1/error.json", info.value.to_json()) == []
    for broken in (materialise(tmp_path / "n.db", 4, {}, schema_version="7"),
                   tmp_path / "missing.db"):
        with pytest.raises(Exception) as caught:
            read_memento_store(broken)
        assert schemas.errors("memory/v1/error.json", caught.value.to_json()) == []  # type: ignore[attr-defined]
