"""MEM-STO-001 durability, and the reference store's word index (MEM-MAT-001).

The default durability is ``synchronous = NORMAL`` in WAL mode; ``durability="full"`` (the
``--durability full`` option of ``dshkit memory``) asks for ``FULL``; nothing else is
accepted, and a refused value touches no file. The word index that finds the entries holding
a needle must select exactly what testing every folded text would select.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memory_support import WRITE, budgets, open_store, raises_code

import dshkit.reference.memory as memory_package
from dshkit import cli
from dshkit.conformance import memory_model as model
from dshkit.reference.memory import open_provider
from dshkit.reference.memory.mirror import Mirror, row_of
from dshkit.reference.memory.provider import Provider
from dshkit.reference.memory.text import fold
from dshkit.reference.memory.words import Words

SYNCHRONOUS = {1: "NORMAL", 2: "FULL"}  # PRAGMA synchronous reads back a number


def synchronous(provider: Provider) -> str:
    mode = provider.store.conn.execute("PRAGMA synchronous").fetchone()[0]
    journal = provider.store.conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert journal == "wal"
    return SYNCHRONOUS[mode]


@pytest.mark.parametrize(("durability", "expected"), [(None, "NORMAL"), ("normal", "NORMAL"),
                                                      ("full", "FULL")])
def test_durability_sets_synchronous(tmp_path: Path, durability: str | None,
                                     expected: str) -> None:
    kwargs: dict[str, Any] = {} if durability is None else {"durability": durability}
    provider = open_provider(tmp_path / "memory.db", **kwargs)
    try:
        assert synchronous(provider) == expected
    finally:
        provider.close()


@pytest.mark.parametrize("durability", ["off", "FULL", "", None, 2])
def test_other_durability_values_are_refused_before_the_file_is_touched(
        tmp_path: Path, durability: Any) -> None:
    path = tmp_path / "new" / "memory.db"
    with raises_code("INVALID_INPUT") as info:
        open_provider(path, durability=durability)
    assert info.value.details["field"] == "/durability"
    assert not path.parent.exists()


@pytest.mark.parametrize("flag", [[], ["--durability", "normal"], ["--durability", "full"]])
def test_cli_durability_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str], flag: list[str]) -> None:
    seen: list[str] = []

    def opening(*args: Any, **kwargs: Any) -> Provider:
        provider = open_provider(*args, **kwargs)
        seen.append(synchronous(provider))
        return provider

    monkeypatch.setattr(memory_package, "open_provider", opening)
    code = cli.main(["memory", "--db", str(tmp_path / "memory.db"), "--yes", *flag, "add",
                     "--track", "user", "--scope", "user-global", "--text", "tea", "--json"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["entry"]["text"] == "tea"
    assert seen == ["FULL" if flag[-1:] == ["full"] else "NORMAL"]


def test_cli_refuses_an_unknown_durability(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    assert cli.main(["memory", "--db", str(path), "--durability", "off", "list"]) == 2
    assert not path.exists()


def test_full_and_normal_stores_are_the_same_file(tmp_path: Path) -> None:
    """Durability is a connection setting: a store written with one opens with the other."""
    path = tmp_path / "memory.db"
    first = open_store(path, budgets=budgets(100, 100, 100, 100))
    try:
        added = first.add({"track": "user", "scope": "user-global", "text": "tea"}, WRITE)
    finally:
        first.close()
    second = open_provider(path, durability="full")
    try:
        assert second.list_entries() == [added["entry"]]
    finally:
        second.close()


# -- the word index ----------------------------------------------------------------------------

# Characters that str.split() separates words on (spaces, tabs, line breaks, U+001C..U+001F,
# U+0085, U+00A0, U+2028, U+3000) and characters it does not, with case pairs and a NUL.
ALPHABET = st.sampled_from(["a", "b", "A", "B", "é", "É", "😀", "茶", " ", "\t", "\n", "\x1c",
                            "\x1f", "\x85", "\xa0", "\u2028", "\u3000", "\x00", "-"])
TEXTS = st.text(ALPHABET, min_size=1, max_size=16)
NEEDLES = st.text(ALPHABET, min_size=1, max_size=7)


LAYERS = [("user", "user-global", "", ""), ("user", "workspace", "a", "/w"),
          ("agent", "user-global", "b", ""), ("agent", "workspace", "", "/v")]
SELECTIONS = st.sampled_from([{}, {"keys": ("/w", "a")}, {"keys": ("/v", "b")},
                              {"track": "agent"}, {"track": "user", "scope": "workspace"}])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), TEXTS), min_size=1, max_size=40),
       st.lists(st.tuples(NEEDLES, SELECTIONS), min_size=1, max_size=6),
       st.lists(st.tuples(st.integers(0, 39), st.integers(0, 3), TEXTS | st.none()),
                max_size=10))
def test_word_index_selects_what_a_scan_selects(
        texts: list[tuple[int, str]], needles: list[tuple[str, dict[str, Any]]],
        changes: list[tuple[int, int, str | None]]) -> None:
    """Selections through the index (built at the first needle, then kept up to date by puts
    and removes, including texts that change words and entries that change layers) equal the
    substring test on every visible text. (The index serves from 0 rows here; the provider's
    mirror uses it for large selections only.)"""
    entries = {f"id{n}": _entry(f"id{n}", LAYERS[layer], text)
               for n, (layer, text) in enumerate(texts)}
    mirror = Mirror((row_of(e) for e in entries.values()), index_from=0)
    for step, (index, layer, text) in enumerate([(0, 0, None), *changes]):
        key = f"id{index}"
        if step and text is None:
            mirror.remove(key)
            entries.pop(key, None)
        elif step and text is not None:
            entries[key] = _entry(key, LAYERS[layer], text)
            mirror.put(row_of(entries[key]))
        for needle, selection in needles:
            want = sorted(i for i, e in entries.items() if fold(needle) in fold(e["text"])
                          and _selected(e, selection))
            got = mirror.select(needle=needle, **selection)
            assert sorted(row.id for row in got) == want, (needle, selection)


def _selected(entry: dict[str, Any], selection: dict[str, Any]) -> bool:
    keys = selection.get("keys")
    return (selection.get("track", entry["track"]) == entry["track"]
            and selection.get("scope", entry["scope"]) == entry["scope"]
            and (keys is None or model.visible(entry, keys[0], keys[1])))


def test_word_index_search_reports_when_a_scan_is_cheaper() -> None:
    words = Words()
    for n in range(50):
        words.add(f"id{n}", f"common word{n} x{n}")
    assert words.search("x7", 1000) == {"id7"}
    assert words.search("comm", 10) is None  # 50 postings: over the budget
    assert words.search("word", 100) == {f"id{n}" for n in range(50)}
    assert words.search("\x00", 100) is None


def test_word_index_drops_words_no_entry_holds() -> None:
    """Words whose entries are gone leave the search strings once they are the majority."""
    words = Words()
    for n in range(3000):
        words.add(f"id{n}", f"t{n}")
    for n in range(3000):
        words.remove(f"id{n}", f"t{n}")
    words.add("kept", "t1 kept")
    assert words.search("t1", 10_000) == {"kept"}
    assert words.search("kept", 10) == {"kept"}


def _entry(entry_id: str, layer: tuple[str, str, str, str], text: str) -> dict[str, Any]:
    track, scope, agent, workspace = layer
    return {"id": entry_id, "track": track, "scope": scope, "workspaceKey": workspace,
            "agentKey": agent, "text": text, "recallCount": 0, "updatedAt": 1, "createdAt": 1}


# -- the entries the mirror returns -------------------------------------------------------------


def test_rows_updated_behind_the_store_on_its_own_connection_are_seen(tmp_path: Path) -> None:
    """The mirror also holds the returned columns, so a change made on the store's connection
    without the store (seen in ``total_changes``) makes it load the table again."""
    provider = open_store(tmp_path / "memory.db", budgets=budgets(100, 100, 100, 100))
    try:
        provider.add({"track": "user", "scope": "user-global", "text": "green tea"}, WRITE)
        assert provider.query({"text": "tea"})["total"] == 1
        provider.store.conn.execute("UPDATE entries SET text = 'black coffee', version = 7")
        page = provider.query({"text": "coffee"})
        assert [(e["text"], e["version"]) for e in page["entries"]] == [("black coffee", 7)]
        assert provider.query({"text": "tea"})["total"] == 0
        assert provider.budgets()[0]["used"] == len("black coffee")
    finally:
        provider.close()


def test_recalls_and_replaces_return_what_a_fresh_provider_reads(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    reader = {"agent": {"session": {"id": "reader", "header": {"cwd": "C:/conformance/ws",
                                                                "agentPreset": "conformance"}}}}
    provider = open_store(path, budgets=budgets(1000, 1000, 1000, 1000))
    try:
        for text in ("tea one", "tea two", "coffee", "Tea three"):
            provider.add({"track": "agent", "scope": "workspace", "text": text}, WRITE)
        provider.query({"text": "TEA", "limit": 2}, {"reader": reader, "recall": True})
        provider.replace({"track": "agent", "scope": "workspace", "match": "coffee",
                          "text": "coffee, now with tea", "tags": ["drinks"]}, WRITE)
        provider.query({"text": "tea"}, {"reader": reader, "recall": True})
        mine = [provider.query({"text": "tea", "limit": 3}), provider.query({"limit": 10}),
                provider.budgets()]
    finally:
        provider.close()
    fresh = open_store(path, budgets=budgets(1000, 1000, 1000, 1000))
    try:
        assert mine == [fresh.query({"text": "tea", "limit": 3}), fresh.query({"limit": 10}),
                        fresh.budgets()]
        assert fresh.query({"text": "tea", "limit": 3})["entries"][0]["recallCount"] == 2
    finally:
        fresh.close()


def test_returned_entries_are_fresh_values(tmp_path: Path) -> None:
    """MEM-PRV-003: changing a returned entry (its tags included) changes nothing stored."""
    provider = open_store(tmp_path / "memory.db", budgets=budgets(100, 100, 100, 100))
    try:
        provider.add({"track": "user", "scope": "user-global", "text": "tea", "tags": ["a"]},
                     WRITE)
        first = provider.query({"text": "tea"})["entries"][0]
        first["tags"].append("b")
        first["text"] = "changed"
        again = provider.query({"text": "tea"})["entries"][0]
        assert (again["text"], again["tags"]) == ("tea", ["a"])
    finally:
        provider.close()
