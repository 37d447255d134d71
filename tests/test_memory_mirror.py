"""The reference store's in-memory selection mirror stays equal to the table (MEM-BUD-001,
MEM-QRY-001..003, MEM-MAT-001..005, MEM-WRT-004, MEM-STO-006).

Queries, matches, snapshots and budgets are computed on a mirror of the entries. These tests
change the table in every way the mirror has to follow: its own writes, rolled-back writes,
commits by another provider or a raw ``sqlite3`` connection, and a change behind the store's
back on its own connection. After each, every read must agree with a fresh provider.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memory_support import WRITE, Json, RecordingGate, budgets, make_write, open_store, raises_code

from dshkit.conformance import memory_model as model
from dshkit.reference.memory.errors import MemoryProtocolError
from dshkit.reference.memory.inputs import check_text
from dshkit.reference.memory.mirror import Mirror, row_of
from dshkit.reference.memory.provider import Provider
from dshkit.reference.memory.text import fold
from dshkit.reference.text import has_lone_surrogate, js_trim, units

BIG = budgets(10_000, 10_000, 10_000, 10_000)
UG: Json = {"track": "user", "scope": "user-global"}
AW: Json = {"track": "agent", "scope": "workspace"}
OTHER = make_write("other", "/elsewhere", "reviewer")


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[Provider, Provider]]:
    """Two providers (two connections) on one store."""
    first = open_store(tmp_path / "memory.db", budgets=BIG)
    second = open_store(tmp_path / "memory.db", budgets=BIG)
    yield first, second
    first.close()
    second.close()


def reads(provider: Provider, writer: Json = WRITE) -> Json:
    """Everything the mirror answers, for comparison with a fresh provider."""
    return {
        "budgets": provider.budgets(),
        "all": provider.query({"limit": 1000}),
        "mine": provider.query({"text": "TEA", "limit": 3}, {"reader": writer}),
        "bucket": provider.query({"track": "agent", "scope": "workspace"}, {"reader": writer}),
        "visible": [e["id"] for e in provider.query({"limit": 1000},
                                                    {"reader": writer})["entries"]],
    }


def fresh_reads(path: Path, writer: Json = WRITE) -> Json:
    provider = open_store(path, budgets=BIG)
    try:
        return reads(provider, writer)
    finally:
        provider.close()


def fill(provider: Provider) -> list[Json]:
    texts = ["tea 😀 first", "Tea second", "coffee", "green TEA", "𝄞 music"]
    out = [provider.add({**(UG if n % 2 else AW), "text": text}, WRITE)["entry"]
           for n, text in enumerate(texts)]
    out.append(provider.add({**UG, "text": "tea of another agent"}, OTHER)["entry"])
    return out


def test_own_writes_keep_the_mirror_exact(tmp_path: Path) -> None:
    provider = open_store(tmp_path / "memory.db", budgets=BIG)
    try:
        fill(provider)
        provider.replace({**UG, "match": "second", "text": "Tea second, longer now 😀"}, WRITE)
        provider.remove({**AW, "match": "coffee"}, WRITE)
        provider.consolidate({**AW, "matches": ["first", "music"], "text": "tea, merged"}, WRITE)
        provider.query({"text": "tea"}, {"reader": WRITE, "recall": True})
        provider.seed([{**UG, "text": "seeded tea"}, {**AW, "text": "seeded too"}], WRITE)
        assert reads(provider) == fresh_reads(tmp_path / "memory.db")
    finally:
        provider.close()


def test_another_connection_commits_are_seen(pair: tuple[Provider, Provider]) -> None:
    first, second = pair
    fill(first)
    assert reads(first) == reads(second)  # both mirrors loaded
    second.add({**UG, "text": "tea from the second handle"}, WRITE)
    second.replace({**UG, "match": "green", "text": "GREEN tea, replaced elsewhere"}, WRITE)
    second.query({"text": "tea"}, {"reader": WRITE, "recall": True})
    assert reads(first) == reads(second)
    first.remove({**UG, "match": "GREEN tea"}, WRITE)
    assert reads(first) == reads(second)


def test_raw_sqlite_changes_are_seen(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    provider = open_store(path, budgets=BIG)
    try:
        entries = fill(provider)
        before = provider.budgets()
        with closing(sqlite3.connect(path)) as conn, conn:
            conn.execute("UPDATE entries SET text = 'tea tea tea tea tea tea', recall_count = 9 "
                         "WHERE id = ?", (entries[2]["id"],))
            conn.execute("DELETE FROM entries WHERE id = ?", (entries[0]["id"],))
        assert provider.budgets() != before
        assert reads(provider) == fresh_reads(path)
        top = provider.query({"text": "tea"})["entries"][0]
        assert top["id"] == entries[2]["id"] and top["recallCount"] == 9
        with raises_code("ENTRY_NOT_FOUND"):
            provider.remove({**AW, "match": "first"}, WRITE)
    finally:
        provider.close()


def test_a_rolled_back_write_leaves_no_trace(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "memory.db"
    provider = open_store(path, budgets=BIG)
    try:
        fill(provider)
        before = reads(provider)
        real_audit = provider.store.audit

        def failing_audit(row: dict[str, Any]) -> int:
            if row["action"] == "add":
                raise sqlite3.OperationalError("disk I/O error (simulated)")
            return real_audit(row)

        monkeypatch.setattr(provider.store, "audit", failing_audit)
        with pytest.raises(sqlite3.OperationalError):
            provider.add({**UG, "text": "tea that never lands"}, WRITE)
        monkeypatch.undo()
        assert reads(provider) == before == fresh_reads(path)
    finally:
        provider.close()


def test_rows_changed_behind_the_store_are_reloaded(tmp_path: Path) -> None:
    """A change made on the store's own connection without the store is found at the next
    selection: the rows it picked are missing, so the mirror is loaded again."""
    path = tmp_path / "memory.db"
    provider = open_store(path, budgets=BIG)
    try:
        fill(provider)
        provider.query({"text": "tea"})
        provider.store.conn.execute("DELETE FROM entries WHERE text LIKE '%tea%'")
        assert provider.query({"text": "tea"}) == {"entries": [], "total": 0,
                                                   "truncated": False}
    finally:
        provider.close()


def test_a_gate_writing_through_the_same_provider_makes_the_write_stale(tmp_path: Path) -> None:
    """MEM-WRT-004: the re-resolution is skipped only when nobody committed since the first
    resolution; a commit on the same connection (the approver itself writing) counts."""
    holder: list[Provider] = []

    def meddle(payload: Json) -> None:
        if payload["action"] == "replace":  # the approver's own write is auto (source dshkit)
            holder[0].replace({**UG, "match": "second", "text": "Tea second, by the approver"},
                              WRITE)

    gate = RecordingGate(hook=meddle)
    provider = open_store(tmp_path / "memory.db", budgets=BIG, gate=gate, write_policy="ask",
                          write_policies={"source:dshkit": "auto"})
    holder.append(provider)
    try:
        provider.add({**UG, "text": "Tea second"}, WRITE)
        target = provider.query({"text": "Tea second"})["entries"][0]
        with raises_code("STALE_WRITE") as info:
            provider.replace({**UG, "match": "Tea second", "text": "mine", "source": "manual"},
                             WRITE)
        assert info.value.details == {"entryId": target["id"], "expectedVersion": 1,
                                      "actualVersion": 2}
    finally:
        provider.close()


# -- the mirror's own rules ----------------------------------------------------------------

TEXT = st.text(st.characters(codec="utf-8") | st.sampled_from(
    ["A", "Z", "a", "É", "Σ", "\u017f", "\u212a", "İ", "😀", "\ud800", "\udfff"]), max_size=30)


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_fold_and_units_match_their_definitions(text: str) -> None:
    """MEM-MAT-001 (only A-Z change) and MEM-BUD-001 (UTF-16 code units), by their
    character-by-character definitions, lone surrogates included."""
    assert fold(text) == "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)
    assert units(text) == sum(2 if ord(c) > 0xFFFF else 1 for c in text)
    assert fold(text) == model.ascii_fold(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["user", "agent"]),
                          st.sampled_from(["user-global", "workspace"]),
                          st.sampled_from(["", "/w", "/v"]), st.sampled_from(["", "a", "b"]),
                          TEXT.filter(lambda t: "\ud800" not in t and "\udfff" not in t),
                          st.integers(0, 3), st.integers(0, 5)), max_size=12),
       st.sampled_from(["", "a", "É", "TEA", "😀"]), st.sampled_from([None, ("/w", "a")]))
def test_mirror_selection_is_the_model_filter(rows: list[tuple[Any, ...]], needle: str,
                                              keys: tuple[str, str] | None) -> None:
    entries = [{"id": f"id{n}", "track": t, "scope": s, "workspaceKey": w, "agentKey": a,
                "text": x, "recallCount": r, "updatedAt": u, "createdAt": n}
               for n, (t, s, w, a, x, r, u) in enumerate(rows)]
    mirror = Mirror(row_of(e) for e in entries)
    got = sorted(row.id for row in mirror.select(keys=keys, needle=needle))
    want = sorted(e["id"] for e in entries
                  if (not needle or model.ascii_fold(needle) in model.ascii_fold(e["text"]))
                  and (keys is None or model.visible(e, keys[0], keys[1])))
    assert got == want
    assert mirror.usage == {k: v for k, v in _usage(entries).items()}


def _usage(entries: list[Json]) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = {}
    for e in entries:
        key = (e["track"], e["scope"])
        out[key] = out.get(key, 0) + model.units(e["text"])
    return out


def test_ledger_entry_snapshot_is_compact_json(tmp_path: Path) -> None:
    """MEM-STO-009 is unchanged: audit.entry is the JSON text of the 14-member entry."""
    path = tmp_path / "memory.db"
    provider = open_store(path, budgets=BIG)
    try:
        entry = provider.add({**UG, "text": "x"}, WRITE)["entry"]
    finally:
        provider.close()
    with closing(sqlite3.connect(path)) as conn:
        stored = conn.execute("SELECT entry FROM audit WHERE action = 'add'").fetchone()[0]
    assert json.loads(stored) == entry


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from(["a", "\t", "\n", "\r", "\x00", "\x1f", "\x7f", "\x80", "é",
                                "\ud800", "\udfff", "😀", " "]), max_size=12))
def test_text_checks_match_their_definitions(text: str) -> None:
    """MEM-ENT-003: the first forbidden control character is reported; lone surrogates are
    refused after that."""
    assert has_lone_surrogate(text) == any(0xD800 <= ord(c) <= 0xDFFF for c in text)
    bad = [c for c in text if (ord(c) < 0x20 and c not in "\t\n\r") or ord(c) == 0x7F]
    try:
        check_text(text, "/text")
    except MemoryProtocolError as exc:
        reason = exc.details["reason"]
        if js_trim(text) == "":
            return
        if bad:
            assert f"U+{ord(bad[0]):04X}" in str(reason)
        else:
            assert has_lone_surrogate(text)
        return
    assert js_trim(text) != "" and not bad and not has_lone_surrogate(text)
