"""A dsh-memento migration carries the source's proposals and its ``proposal`` audit rows
(spec chapter ``memory/migrate-memento``, MEM-MIG-006/007/010)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from memory_support import WRITE, FrozenClock, Json, ledger, open_store, raises_code

from dshkit.conformance.memento_fixture import materialise
from dshkit.reference.memory import proposals as pro
from dshkit.reference.memory.memento_store import read_memento_store
from dshkit.reference.memory.migrate import migrate_memento, plan

ID1 = "11111111-1111-4111-8111-111111111111"
P1 = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
P2 = "bbbbbbbb-bbbb-4bbb-9bbb-bbbbbbbbbbbb"
P3 = "cccccccc-cccc-4ccc-accc-cccccccccccc"


def _entry(version: int = 4, **over: Any) -> Json:
    row: Json = {"id": ID1, "track": "agent", "scope": "workspace",
                 "workspace_key": "/home/ana/shop", "text": "Prices are stored in cents",
                 "source": "dsh-memento", "created_at": 1000, "updated_at": 2000,
                 "session_id": "s-1"}
    if version >= 3:
        row.update(agent_key="coder", last_recalled=None, recall_count=0)
    if version >= 4:
        row.update(tags="[]", version=1)
    return {**row, **over}


def _proposal(pid: str, version: int = 4, **over: Any) -> Json:
    row: Json = {"id": pid, "kind": "compaction-summary", "track": "agent",
                 "scope": "workspace", "workspace_key": "/home/ana/shop/", "text": "maybe",
                 "source": "compaction", "session_id": f"s-{pid[0]}", "status": "pending",
                 "created_at": 1500, "decided_at": None}
    if version >= 3:
        row["agent_key"] = "Coder"
    return {**row, **over}


def _pro_row(pid: str, ts: int = 1600) -> Json:
    """dsh-memento's own ``proposal`` audit row (index.mjs handleSessionEvent)."""
    return {"ts": ts, "action": "proposal", "track": "agent", "scope": "workspace",
            "entry_id": pid, "text": "maybe", "outcome": "pending", "source": "compaction",
            "session_id": f"s-{pid[0]}"}


def _source(path: Path, version: int = 4, **tables: Any) -> Path:
    rows: dict[str, Any] = {"entries": [_entry(version)], "audit": []}
    rows.update(tables)
    return materialise(path, version, rows)


def _three() -> list[Json]:
    return [_proposal(P1),
            _proposal(P2, status="approved", decided_at=1700, created_at=1600),
            _proposal(P3, status="dismissed", decided_at=1800, created_at=1700,
                      scope="user-global", track="user")]


def test_proposals_are_carried_in_every_state_with_normalised_keys(tmp_path: Path) -> None:
    """MEM-MIG-007: pending, approved and dismissed kept; keys as for entries."""
    source = _source(tmp_path / "m.db", proposals=[{**p, "id": p["id"].upper()}
                                                  for p in _three()])
    with open_store(tmp_path / "dest.db", clock=FrozenClock()) as provider:
        report = migrate_memento(provider, source, WRITE)
        stored = provider.proposals({"status": None})
    assert report["proposals"] == {"read": 3, "carried": 3}
    assert not any(x["kind"] in ("proposal", "proposals") for x in report["losses"])
    assert [(p["id"], p["status"], p["decidedAt"]) for p in stored] == [
        (P1, "pending", None), (P2, "approved", 1700), (P3, "dismissed", 1800)]
    assert stored[0] == {
        "id": P1, "kind": "compaction-summary", "track": "agent", "scope": "workspace",
        "workspaceKey": "/home/ana/shop", "agentKey": "coder", "text": "maybe",
        "source": "compaction", "sessionId": "s-a", "status": "pending", "createdAt": 1500,
        "decidedAt": None, "entryId": None}
    assert (stored[2]["workspaceKey"], stored[2]["agentKey"]) == ("", "coder")


def test_version_2_proposals_have_an_empty_agent_key(tmp_path: Path) -> None:
    """MEM-MIG-007."""
    source = _source(tmp_path / "m.db", 2, proposals=[_proposal(P1, 2)])
    with open_store(tmp_path / "dest.db") as provider:
        report = migrate_memento(provider, source, WRITE)
        [stored] = provider.proposals()
    assert report["proposals"] == {"read": 1, "carried": 1}
    assert stored["agentKey"] == ""


def test_an_identical_rerun_carries_nothing_and_loses_nothing(tmp_path: Path) -> None:
    """MEM-MIG-007: carried counts the proposals inserted; identical ones are skipped."""
    source = _source(tmp_path / "m.db", proposals=_three())
    with open_store(tmp_path / "dest.db") as provider:
        migrate_memento(provider, source, WRITE)
        rows = ledger(provider)
        again = migrate_memento(provider, source, WRITE)
        assert ledger(provider) == rows
        assert len(provider.proposals({"status": None})) == 3
    assert again["proposals"] == {"read": 3, "carried": 0}
    assert not any(x["kind"] in ("proposal", "proposals") for x in again["losses"])


def test_new_proposals_alone_are_carried_without_an_approval(tmp_path: Path) -> None:
    """MEM-MIG-010: proposals are not gated writes (MEM-PRO-002), so a migration whose
    entries are all stored writes its new proposals without asking."""
    with open_store(tmp_path / "dest.db") as provider:
        migrate_memento(provider, _source(tmp_path / "a.db"), WRITE)
        rows = ledger(provider)
    with open_store(tmp_path / "dest.db", write_policy="off") as provider:
        report = migrate_memento(provider, _source(tmp_path / "b.db", proposals=_three()),
                                 WRITE)
        assert ledger(provider) == rows  # nothing asked, nothing audited
        assert [p["id"] for p in provider.proposals({"status": None})] == [P1, P2, P3]
    assert (report["added"], report["proposals"]) == (0, {"read": 3, "carried": 3})


def test_a_denied_migration_carries_no_proposal(tmp_path: Path) -> None:
    """MEM-MIG-010."""
    source = _source(tmp_path / "m.db", proposals=_three())
    with open_store(tmp_path / "dest.db", write_policy="off") as provider:
        with raises_code("WRITE_DENIED"):
            migrate_memento(provider, source, WRITE)
        assert provider.proposals({"status": None}) == []


@pytest.mark.parametrize("other", [
    {"id": P1, "text": "something else"},
    {"id": P2},  # another id for the same (sessionId, kind)
])
def test_a_conflicting_proposal_refuses_and_changes_nothing(tmp_path: Path,
                                                            other: Json) -> None:
    """MEM-MIG-003/007: IMPORT_CONFLICT before the approval, nothing changed."""
    first = _source(tmp_path / "a.db", proposals=[_proposal(P1)])
    second = _source(tmp_path / "b.db", entries=[_entry(id="22222222-2222-4222-9222-"
                                                        "222222222222")],
                     proposals=[_proposal(P1, **{**other, "session_id": "s-a"})])
    with open_store(tmp_path / "dest.db") as provider:
        migrate_memento(provider, first, WRITE)
        before = (provider.list_entries(), ledger(provider),
                  provider.proposals({"status": None}))
        with raises_code("IMPORT_CONFLICT") as info:
            migrate_memento(provider, second, WRITE)
        after = (provider.list_entries(), ledger(provider),
                 provider.proposals({"status": None}))
    assert info.value.details == {"ids": [other["id"]]}
    assert after == before


def test_a_malformed_proposal_is_one_loss_item_and_the_rest_is_carried(tmp_path: Path) -> None:
    """MEM-MIG-007: validated in the pure plan; one loss item per proposal."""
    bad = [_proposal("p-1"), _proposal(P2, track="team"), _proposal(P3, text="  \n"),
           _proposal("dddddddd-dddd-4ddd-8ddd-dddddddddddd", status="approved"),
           _proposal("eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee", source=""),
           _proposal("ffffffff-ffff-4fff-8fff-ffffffffffff", kind="Compaction Summary"),
           _proposal(P1.upper(), session_id="s-z"), _proposal(P1, session_id="s-y")]
    image = read_memento_store(_source(tmp_path / "m.db", proposals=bad))
    mapped = plan(image)
    losses = [x for x in mapped.losses if x["kind"] == "proposal"]
    # source order is (created_at, id): the upper-case id sorts first and is carried
    assert [(x["id"], x["field"]) for x in losses] == [
        (P1, "/id"), (P2, "/track"), (P3, "/text"),
        ("dddddddd-dddd-4ddd-8ddd-dddddddddddd", "/decidedAt"),
        ("eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee", "/source"),
        ("ffffffff-ffff-4fff-8fff-ffffffffffff", "/kind"), ("p-1", "/id")]
    assert all(isinstance(x["reason"], str) and x["reason"] for x in losses)
    assert [p["id"] for p in mapped.proposals] == [P1]
    with open_store(tmp_path / "dest.db") as provider:
        report = migrate_memento(provider, image, WRITE)
        assert [p["id"] for p in provider.proposals({"status": None})] == [P1]
    assert report["proposals"] == {"read": 8, "carried": 1}


def test_dsh_mementos_proposal_audit_rows_are_carried(tmp_path: Path) -> None:
    """MEM-MIG-006 with MEM-PRO-008: the row shapes are the same."""
    source = _source(tmp_path / "m.db", proposals=[_proposal(P1)], audit=[
        {**_pro_row(P1), "seq": 1},
        {"seq": 2, "ts": 1700, "action": "settings-rejected", "track": "", "scope": "",
         "entry_id": None, "text": "x", "outcome": "", "source": "", "session_id": None}])
    with open_store(tmp_path / "dest.db", clock=FrozenClock()) as provider:
        report = migrate_memento(provider, source, WRITE)
        rows = ledger(provider)
    assert report["ledgerRows"] == 1
    assert [x.get("action") for x in report["losses"]] == ["settings-rejected"]
    assert {k: v for k, v in rows[0].items() if k != "seq"} == {
        "ts": 1600, "action": "proposal", "track": "agent", "scope": "workspace",
        "entryId": P1, "text": "maybe", "outcome": "pending", "source": "compaction",
        "sessionId": "s-a", "entry": None, "entryIds": None}


def test_a_failure_while_carrying_proposals_rolls_everything_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MEM-MIG-010: one transaction."""
    import sqlite3

    def broken(store: Any, records: Any) -> list[Json]:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(pro, "import_records", broken)
    source = _source(tmp_path / "m.db", proposals=[_proposal(P1)],
                     audit=[{**_pro_row(P1), "seq": 1}])
    with open_store(tmp_path / "dest.db") as provider:
        with pytest.raises(sqlite3.OperationalError):
            migrate_memento(provider, source, WRITE)
        assert provider.list_entries() == [] and ledger(provider) == []
