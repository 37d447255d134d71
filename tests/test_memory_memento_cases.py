# ruff: noqa: RUF001  (the ported cases keep memento's CJK punctuation verbatim)
"""dsh-memento's 22 protocol conformance cases (research §12.3), ported to the dshkit provider.

Golden setup (research §12.1): a fresh store per case, budgets 2000/2000/4000/4000, writePolicy
"auto" unless the case injects a gate, and the suite's write context (session
``conformance-session``, cwd ``C:/conformance/ws``, agentPreset ``conformance``).

Expectations are the memento ones, tightened where dshkit's contract decides more, and adapted
only where dshkit deliberately differs; every adaptation cites its MEM id in a comment.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from memory_support import (
    ENTRY_KEYS,
    UUID4,
    WRITE,
    RecordingGate,
    actions,
    budgets,
    open_store,
    raises_code,
)

from dshkit.reference.memory.provider import Provider

UG: dict[str, Any] = {"track": "user", "scope": "user-global"}
SMALL = budgets(100, 100, 100, 100)


@pytest.fixture
def provider(tmp_path: Path) -> Iterator[Provider]:
    store = open_store(tmp_path / "memory.db")
    yield store
    store.close()


# -- A: entry model ----------------------------------------------------------------------------

def test_A1_add_returns_every_v1_field(provider: Provider) -> None:
    entry = provider.add({**UG, "text": "用户偏好：中文回复", "tags": ["pref", "comms"]},
                         WRITE)["entry"]
    assert set(entry) == ENTRY_KEYS  # all 14 stored fields (MEM-ENT-001..008)
    assert re.match(UUID4, entry["id"])  # MEM-ENT-001: lower-case only (memento: /i)
    assert (entry["track"], entry["scope"]) == ("user", "user-global")
    # MEM-KEY-003 (Divergence G1): user-global entries carry workspaceKey "", not the cwd key.
    assert entry["workspaceKey"] == ""
    assert entry["agentKey"] == "conformance"
    assert entry["text"] == "用户偏好：中文回复"
    # MEM-ENT-005: the default source is "dshkit" (memento: "dsh-memento").
    assert entry["source"] == "dshkit"
    assert entry["tags"] == ["pref", "comms"]
    assert entry["version"] == 1
    assert isinstance(entry["createdAt"], int) and isinstance(entry["updatedAt"], int)
    assert entry["updatedAt"] >= entry["createdAt"]
    assert entry["lastRecalled"] is None
    assert entry["recallCount"] == 0
    assert entry["sessionId"] == "conformance-session"
    assert provider.list_entries() == [entry]


def test_A2_invalid_track_fails_and_stores_nothing(provider: Provider) -> None:
    with raises_code("INVALID_INPUT") as info:
        provider.add({"track": "team", "scope": "user-global", "text": "x"}, WRITE)
    # MEM-ENT-002 / MEM-ERR-001: details {field, reason} with the pointer "/track".
    assert info.value.details["field"] == "/track"
    assert set(info.value.details) == {"field", "reason"}
    assert provider.list_entries() == []
    assert provider.audit_list() == []  # MEM-AUD-005: validation failures are not audited


def test_A3_invalid_scope_fails(provider: Provider) -> None:
    with raises_code("INVALID_INPUT") as info:
        provider.add({"track": "user", "scope": "global", "text": "x"}, WRITE)
    assert info.value.details["field"] == "/scope"  # MEM-ENT-002
    assert provider.list_entries() == []


def test_A4_empty_text_fails_and_stores_nothing(provider: Provider) -> None:
    with raises_code("INVALID_INPUT") as info:
        provider.add({**UG, "text": ""}, WRITE)
    assert info.value.details["field"] == "/text"  # MEM-ENT-003
    assert provider.list_entries() == []


def test_A5_write_without_agent_requires_agent(provider: Provider) -> None:
    with raises_code("WRITE_REQUIRES_AGENT") as info:
        provider.add({**UG, "text": "x"}, {})
    assert info.value.details == {}  # MEM-ERR-001: details {} when none
    # MEM-WRT-001: no gate call, no audit row, nothing stored.
    assert provider.audit_list() == []
    assert provider.list_entries() == []


def test_A6_tags_normalised_and_bad_tags_refused(provider: Provider) -> None:
    entry = provider.add({**UG, "text": "带标签", "tags": ["a ", "a", "b"]}, WRITE)["entry"]
    assert entry["tags"] == ["a", "b"]
    bad_tags: list[tuple[list[str], str]] = [
        (["x" * 33], "/tags/0"),
        ([f"t{i}" for i in range(17)], "/tags"),
        (["bad\u0000tag"], "/tags/0"),
    ]
    for tags, field in bad_tags:
        with raises_code("INVALID_INPUT") as info:
            provider.add({**UG, "text": "y", "tags": tags}, WRITE)
        assert info.value.details["field"] == field  # MEM-ENT-004 pointers
    assert len(provider.list_entries()) == 1


def test_A7_query_ascii_case_insensitive_and_cjk(provider: Provider) -> None:
    provider.add({**UG, "text": "项目约定：测试先于实现"}, WRITE)
    provider.add({"track": "agent", "scope": "user-global", "text": "Project convention: TDD"},
                 WRITE)
    assert provider.query({"text": "测试先于实现"})["total"] == 1
    assert provider.query({"text": "project"})["total"] == 1
    assert provider.query({"text": "PROJECT"})["total"] == 1


# -- B: write semantics ------------------------------------------------------------------------

def test_B1_replace_keeps_id_and_bumps_version(provider: Provider) -> None:
    first = provider.add({**UG, "text": "旧记忆：喜欢咖啡"}, WRITE)["entry"]
    result = provider.replace({**UG, "match": "喜欢咖啡", "text": "喜欢茶"}, WRITE)
    previous, entry = result["previous"], result["entry"]
    assert previous["id"] == entry["id"] == first["id"]
    assert entry["version"] == first["version"] + 1
    assert entry["text"] == "喜欢茶"
    assert previous == first  # the pre-update row
    assert len(provider.list_entries()) == 1


def test_B2_ambiguous_replace_reports_candidates(provider: Provider) -> None:
    provider.add({**UG, "text": "咖啡机型号 A"}, WRITE)
    provider.add({**UG, "text": "咖啡机型号 B"}, WRITE)
    before = provider.list_entries()
    with raises_code("AMBIGUOUS_MATCH") as info:
        provider.replace({**UG, "match": "咖啡机", "text": "x"}, WRITE)
    details = info.value.details
    assert details["candidates"] == 2
    # MEM-MAT-004: the full details object, sample in (createdAt, id) order.
    assert details == {"track": "user", "scope": "user-global", "match": "咖啡机",
                       "candidates": 2, "sample": [e["text"] for e in before]}
    assert provider.list_entries() == before


def test_B3_zero_hits_entry_not_found(provider: Provider) -> None:
    provider.add({**UG, "text": "存在的条目"}, WRITE)
    with raises_code("ENTRY_NOT_FOUND") as info:
        provider.replace({**UG, "match": "不存在的", "text": "x"}, WRITE)
    # MEM-MAT-003: details {track, scope, match} and the stable message.
    assert info.value.details == {"track": "user", "scope": "user-global", "match": "不存在的"}
    assert info.value.message == 'no entry in user/user-global contains "不存在的"; nothing was ' \
                                 "changed"
    with raises_code("ENTRY_NOT_FOUND"):
        provider.remove({**UG, "match": "不存在的"}, WRITE)


def test_B4_remove_then_rerun_not_found(provider: Provider) -> None:
    provider.add({**UG, "text": "待删除的临时事实"}, WRITE)
    removed = provider.remove({**UG, "match": "临时事实"}, WRITE)
    assert removed["entry"]["text"] == "待删除的临时事实"
    assert provider.list_entries() == []
    with raises_code("ENTRY_NOT_FOUND"):  # MEM-WRT-010
        provider.remove({**UG, "match": "临时事实"}, WRITE)


def test_B5_consolidate_atomic_merge(provider: Provider) -> None:
    agent_ug: dict[str, Any] = {"track": "agent", "scope": "user-global"}
    provider.add({**agent_ug, "text": "约定一：早会 9 点"}, WRITE)
    provider.add({**agent_ug, "text": "约定二：晚检 6 点"}, WRITE)
    result = provider.consolidate(
        {**agent_ug, "matches": ["约定一", "约定二"], "text": "约定：早会 9 点，晚检 6 点"}, WRITE)
    assert len(result["removed"]) == 2
    assert result["entry"]["version"] == 1
    stored = provider.list_entries()
    assert len(stored) == 1
    assert stored[0]["text"] == "约定：早会 9 点，晚检 6 点"
    with raises_code("ENTRY_NOT_FOUND"):
        provider.consolidate({**agent_ug, "matches": ["约定一"], "text": "x"}, WRITE)
    assert provider.list_entries() == stored


def test_B6_seed_batch_fresh_ids_version_1(provider: Provider) -> None:
    result = provider.seed([{**UG, "text": "种子一"},
                            {"track": "agent", "scope": "workspace", "text": "种子二"}], WRITE)
    assert result["added"] == 2
    assert all(entry["version"] == 1 for entry in result["entries"])
    assert len({entry["id"] for entry in result["entries"]}) == 2
    # MEM-AUD-001: one seed row before the per-entry add rows.
    assert actions(provider) == ["seed", "add", "add"]


def test_B7_replace_payload_carries_old_and_new_text(tmp_path: Path) -> None:
    gate = RecordingGate()
    # MEM-GATE-004: under "auto" the gate is not called (memento's golden gate always is), so
    # the gate case runs with writePolicy "ask".
    own = open_store(tmp_path / "own.db", gate=gate, write_policy="ask")
    try:
        first = own.add({**UG, "text": "旧文本需要被替换"}, WRITE)["entry"]
        gate.seen.clear()
        own.replace({**UG, "match": "旧文本", "text": "新文本已经替换"}, WRITE)
        assert len(gate.seen) == 1
        payload = gate.seen[0]
        assert "旧文本需要被替换" in payload["text"] and "新文本已经替换" in payload["text"]
        # MEM-GATE-007: the exact payload, with the resolved target for the optimistic guard.
        assert payload == {"action": "replace", "track": "user", "scope": "user-global",
                           "text": "from:\n旧文本需要被替换\n\nto:\n新文本已经替换",
                           "source": "dshkit",
                           "targets": [{"id": first["id"], "version": 1}]}
    finally:
        own.close()


# -- C: budget model ---------------------------------------------------------------------------

def test_C1_over_budget_add_reports_used_limit_needed(tmp_path: Path) -> None:
    own = open_store(tmp_path / "c1.db", budgets=SMALL)
    try:
        with raises_code("BUDGET_EXCEEDED") as info:
            own.add({**UG, "text": "x" * 150}, WRITE)
        details = info.value.details
        assert details["limit"] == 100
        assert details["needed"] >= 150
        # MEM-BUD-004: the exact details and message ("units", memento says "chars").
        assert details == {"track": "user", "scope": "user-global", "used": 0, "limit": 100,
                           "needed": 150}
        assert info.value.message == (
            "memory budget exceeded: user/user-global at 0/100 units, this write needs 150 "
            "units; consolidate or remove entries, then retry")
        assert own.list_entries() == []
    finally:
        own.close()


def test_C2_seed_over_budget_refuses_whole_batch(tmp_path: Path) -> None:
    own = open_store(tmp_path / "c2.db", budgets=SMALL)
    try:
        with raises_code("BUDGET_EXCEEDED"):
            own.seed([{**UG, "text": "小条目"}, {**UG, "text": "y" * 120}], WRITE)
        assert own.list_entries() == []
        # MEM-WRT-002 (Divergence G4): seed pre-checks the budget before approval, so nothing
        # was approved and nothing is audited.
        assert own.audit_list() == []
    finally:
        own.close()


def test_C3_budgets_report_per_bucket(tmp_path: Path) -> None:
    own = open_store(tmp_path / "c3.db", budgets=budgets(100, 200, 300, 400))
    try:
        text = "十个字符的条目xx"
        own.add({**UG, "text": text}, WRITE)
        rows = own.budgets()
        row = next(r for r in rows if r["track"] == "user" and r["scope"] == "user-global")
        assert row["limit"] == 100
        assert row["used"] == len(text.encode("utf-16-le")) // 2 == 9
        # MEM-BUD-005: exactly the four rows in the fixed order.
        assert rows == [
            {"track": "user", "scope": "user-global", "used": 9, "limit": 100},
            {"track": "user", "scope": "workspace", "used": 0, "limit": 200},
            {"track": "agent", "scope": "user-global", "used": 0, "limit": 300},
            {"track": "agent", "scope": "workspace", "used": 0, "limit": 400},
        ]
    finally:
        own.close()


# -- D: audit reconstruction -------------------------------------------------------------------

def test_D1_allowed_write_leaves_audit_row(provider: Provider) -> None:
    entry = provider.add({**UG, "text": "审计可见的条目"}, WRITE)["entry"]
    row = next(r for r in provider.audit_list(10) if r["action"] == "add")
    assert row["text"] == "审计可见的条目"
    assert row["entryId"] == entry["id"]
    assert isinstance(row["outcome"], str) and row["outcome"]
    # MEM-GATE-008 (Divergence G12): the label names the deciding key.
    assert row["outcome"] == "allowed-once (via writePolicy auto from global)"
    # MEM-AUD-002: dshkit rows also carry the entry snapshot.
    assert row["entry"] == entry
    assert row["sessionId"] == "conformance-session"


def test_D2_denied_write_fails_and_leaves_denied_row(tmp_path: Path) -> None:
    # MEM-GATE-004: the gate is only consulted under "ask".
    own = open_store(tmp_path / "d2.db", gate=RecordingGate("rejected"), write_policy="ask")
    try:
        with raises_code("WRITE_DENIED") as info:
            own.add({**UG, "text": "不会被写进去"}, WRITE)
        assert info.value.details == {"outcome": "rejected"}
        assert own.list_entries() == []
        rows = own.audit_list(10)
        assert [r["action"] for r in rows] == ["add-denied"]
        assert rows[0]["outcome"] == "rejected (via gate, writePolicy ask from global)"
    finally:
        own.close()


def test_D3_recall_query_leaves_recalled_row(provider: Provider) -> None:
    # MEM-QRY-007: memento's own call, opts {sessionId}, is a recall for that session; it is
    # audited also when it finds nothing (MEM-QRY-005).
    result = provider.query({"text": "任何词"}, {"sessionId": "conformance-session"})
    assert result == {"entries": [], "total": 0, "truncated": False}
    rows = provider.audit_list(10)
    assert any(r["action"] == "recalled" for r in rows)
    row = next(r for r in rows if r["action"] == "recalled")
    assert row["entryIds"] == [] and row["text"] == "任何词"
    assert row["sessionId"] == "conformance-session"


def test_D3_reader_form_is_the_same_recall(provider: Provider) -> None:
    """MEM-QRY-005/007: dshkit's {reader, recall} spelling lands the same row."""
    provider.query({"text": "任何词"}, {"reader": WRITE, "recall": True})
    provider.query({"text": "任何词"}, {"sessionId": "conformance-session"})
    first, second = provider.audit_list(2)
    assert {k: v for k, v in first.items() if k not in ("seq", "ts")} == \
        {k: v for k, v in second.items() if k not in ("seq", "ts")}


# -- E: export envelope ------------------------------------------------------------------------

def test_E1_export_envelope_shape(provider: Provider) -> None:
    entry = provider.add({**UG, "text": "导出往返条目", "tags": ["export"]}, WRITE)["entry"]
    # dshkit has export() (MEM-EXP-001); memento's case assembles the envelope by hand.
    envelope = provider.export()
    assert envelope["plugin"] == "dshkit"  # MEM-EXP-001 (memento: "dsh-memento")
    assert envelope["schema"] == "memory-export-v1"
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", envelope["exportedAt"])
    assert isinstance(envelope["budgets"], list) and len(envelope["budgets"]) == 4
    assert envelope["budgets"] == provider.budgets()
    assert envelope["entries"][0]["text"] == "导出往返条目"
    assert envelope["entries"][0]["tags"] == ["export"]
    assert envelope["entries"][0]["version"] == 1
    # MEM-EXP-001 (Divergence G10): every field including sessionId.
    assert envelope["entries"] == [entry]
    assert set(envelope) == {"plugin", "schema", "exportedAt", "budgets", "entries"}
    assert provider.audit_list() != [] and "export" not in actions(provider)


def test_E2_provider_never_emits_invalid_entries(provider: Provider) -> None:
    entry = provider.add({**UG, "text": "合法条目"}, WRITE)["entry"]
    assert isinstance(entry["version"], int) and entry["version"] >= 1
    assert isinstance(entry["createdAt"], int) and isinstance(entry["updatedAt"], int)
    assert entry["updatedAt"] >= entry["createdAt"]
    replaced = provider.replace({**UG, "match": "合法条目", "text": "改写后的条目"},
                                WRITE)["entry"]
    assert replaced["version"] == entry["version"] + 1
    assert replaced["updatedAt"] >= entry["updatedAt"]
    assert replaced["createdAt"] == entry["createdAt"]
