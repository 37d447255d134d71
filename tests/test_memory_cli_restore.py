"""The reference provider's keywords behind ``dshkit memory``: ``by_id`` of replace, remove and
consolidate (MEM-CLI-003) and ``restore``/``replace`` of ``import_envelope`` (MEM-CLI-004),
called in-process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from memory_support import (
    WRITE,
    CountingIds,
    FrozenClock,
    Json,
    RecordingGate,
    budgets,
    ledger,
    make_write,
    open_store,
    raises_code,
)

from dshkit.conformance.memory_model import replay
from dshkit.reference.memory.provider import Provider

UG: Json = {"track": "user", "scope": "user-global"}
AW: Json = {"track": "agent", "scope": "workspace"}


def _filled(path: Path, **options: Any) -> Provider:
    provider = open_store(path, ids=CountingIds(), clock=FrozenClock(), **options)
    provider.seed([{**UG, "text": "prefers tea"}, {**UG, "text": "prefers tea"},
                   {**AW, "text": "uses pnpm", "tags": ["js"]}], WRITE)
    return provider


@pytest.mark.requirement("MEM-CLI-003")
def test_by_id_is_stale_when_the_entry_changed_after_approval(tmp_path: Path) -> None:
    _filled(tmp_path / "a.db").close()
    other = open_store(tmp_path / "a.db")
    first = other.list_entries()[0]

    def meddle(payload: Json) -> None:
        other.replace({**UG, "match": first["id"], "text": "prefers green tea"}, WRITE,
                      by_id=True)

    asking = open_store(tmp_path / "a.db", write_policy="ask", gate=RecordingGate(hook=meddle))
    with raises_code("STALE_WRITE") as info:
        asking.remove({**UG, "match": first["id"]}, WRITE, by_id=True)
    assert info.value.details == {"entryId": first["id"], "expectedVersion": 1,
                                  "actualVersion": 2}
    assert len(asking.list_entries()) == 3
    asking.close()
    other.close()


@pytest.mark.requirement("MEM-CLI-003")
def test_by_id_sees_only_the_writers_visible_set(tmp_path: Path) -> None:
    provider = _filled(tmp_path / "a.db")
    workspace_entry = next(e for e in provider.list_entries() if e["scope"] == "workspace")
    elsewhere = make_write(cwd="/somewhere/else")
    with raises_code("ENTRY_NOT_FOUND") as info:
        provider.remove({**AW, "match": workspace_entry["id"]}, elsewhere, by_id=True)
    assert info.value.details == {**AW, "match": workspace_entry["id"]}
    assert provider.remove({**AW, "match": workspace_entry["id"]}, WRITE,
                           by_id=True)["entry"]["id"] == workspace_entry["id"]
    provider.close()


@pytest.mark.requirement("MEM-CLI-004")
def test_restore_keeps_every_member_and_the_ledger_replays(tmp_path: Path) -> None:
    source = _filled(tmp_path / "a.db")
    source.query({"text": "pnpm"}, {"sessionId": "s-2"})
    envelope = source.export()
    target = open_store(tmp_path / "b.db", clock=FrozenClock(1_800_000_000_000))
    result = target.import_envelope(envelope, make_write(cwd="/other"), restore=True)
    assert (result["added"], result["replaced"], result["skipped"]) == (3, 0, [])
    assert target.list_entries() == envelope["entries"]
    assert replay(ledger(target)) == target.list_entries()  # MEM-AUD-005
    again = target.import_envelope(envelope, WRITE, restore=True)
    assert again == {"added": 0, "replaced": 0, "entries": [],
                     "skipped": [e["id"] for e in envelope["entries"]]}
    source.close()
    target.close()


@pytest.mark.requirement("MEM-CLI-004")
def test_restore_refusals(tmp_path: Path) -> None:
    source = _filled(tmp_path / "a.db")
    envelope = source.export()
    entries = envelope["entries"]
    with raises_code("INVALID_INPUT") as info:
        source.import_envelope({**envelope, "entries": [entries[0], entries[0]]}, WRITE,
                               restore=True)
    assert info.value.details["field"] == "/entries/1/id"
    with raises_code("INVALID_INPUT") as info:
        source.import_envelope(envelope, WRITE, replace=True)
    assert info.value.details["field"] == "/replace"
    changed = [{**entries[0], "text": "prefers coffee"}, *entries[1:]]
    before = ledger(source)
    with raises_code("IMPORT_CONFLICT") as info:
        source.import_envelope({**envelope, "entries": changed}, WRITE, restore=True)
    assert info.value.details == {"ids": [entries[0]["id"]]}
    assert ledger(source) == before and source.list_entries() == entries
    small = open_store(tmp_path / "c.db", budgets=budgets(5, 2000, 4000, 4000))
    with raises_code("BUDGET_EXCEEDED"):
        small.import_envelope(envelope, WRITE, restore=True)
    assert small.list_entries() == [] and ledger(small) == []
    source.close()
    small.close()


@pytest.mark.requirement("MEM-CLI-004")
def test_restore_of_a_memento_envelope_uses_the_stored_form(tmp_path: Path) -> None:
    source = _filled(tmp_path / "a.db")
    envelope = source.export()
    memento = [{k: v for k, v in e.items() if k != "sessionId"} for e in envelope["entries"]]
    memento[0] = {**memento[0], "id": memento[0]["id"].upper(), "workspaceKey": "/w",
                  "agentKey": "  Coder "}
    target = open_store(tmp_path / "b.db")
    target.import_envelope({**envelope, "plugin": "dsh-memento", "entries": memento}, WRITE,
                           restore=True)
    first = target.list_entries()[0]
    assert first["id"] == envelope["entries"][0]["id"]
    assert (first["workspaceKey"], first["agentKey"], first["sessionId"]) == ("", "coder", None)
    source.close()
    target.close()


@pytest.mark.requirement("MEM-CLI-004")
def test_restore_checks_its_plan_again_after_approval(tmp_path: Path) -> None:
    source = _filled(tmp_path / "a.db")
    envelope = source.export()
    entries = envelope["entries"]
    target_path = tmp_path / "b.db"
    with open_store(target_path) as first:
        first.import_envelope({**envelope, "entries": [{**entries[0], "text": "old"}]}, WRITE,
                              restore=True)

    def meddle(payload: Json) -> None:  # the replaced target changes under the approval
        with open_store(target_path) as other:
            other.replace({**UG, "match": entries[0]["id"], "text": "newer"}, WRITE,
                          by_id=True)

    with open_store(target_path, write_policy="ask", gate=RecordingGate(hook=meddle)) as p:
        with raises_code("STALE_WRITE") as info:
            p.import_envelope(envelope, WRITE, restore=True, replace=True)
        assert info.value.details == {"entryId": entries[0]["id"], "expectedVersion": 1,
                                      "actualVersion": 2}
        assert [e["text"] for e in p.list_entries()] == ["newer"]

    def appear(payload: Json) -> None:  # an entry planned as new is stored meanwhile
        with open_store(target_path) as other:
            other.import_envelope({**envelope, "entries": [entries[2]]}, WRITE, restore=True)

    with open_store(target_path, write_policy="ask", gate=RecordingGate(hook=appear)) as p:
        with raises_code("IMPORT_CONFLICT") as info:
            p.import_envelope(envelope, WRITE, restore=True, replace=True)
        assert info.value.details == {"ids": [entries[2]["id"]]}
        assert [e["text"] for e in p.list_entries()] == ["newer", entries[2]["text"]]
        assert p.audit_list(1)[0]["action"] == "seed-failed"
    source.close()
