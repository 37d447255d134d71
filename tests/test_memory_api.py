"""The provider as a third party drives it (issue 17, part 2): gate failures with their cause,
awaitable gates, cancelling a pending write, the context manager, batch order, dsh-memento's
query options, the ledger cursor and the ledger section of an export."""

from __future__ import annotations

import asyncio
import sqlite3
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from memory_support import (
    WRITE,
    Json,
    RecordingGate,
    budgets,
    make_write,
    open_store,
    raises_code,
)

from dshkit.conformance.memory_model import replay
from dshkit.reference.memory import MemoryProtocolError, open_provider
from dshkit.reference.memory.cancel import CancelToken
from dshkit.reference.memory.provider import Provider

UG: Json = {"track": "user", "scope": "user-global"}
AW: Json = {"track": "agent", "scope": "workspace"}
ROOMY = budgets(2000, 2000, 4000, 100_000)


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


@pytest.fixture
def provider(store_path: Path) -> Iterator[Provider]:
    with open_store(store_path) as opened:
        yield opened


# -- the context manager (MEM-PKG-003) ---------------------------------------------------------

@pytest.mark.requirement("MEM-PKG-003")
def test_with_block_closes_the_provider(store_path: Path) -> None:
    with open_provider(store_path, write_policy="auto") as provider:
        assert isinstance(provider, Provider)
        provider.add({**UG, "text": "inside"}, WRITE)
    with pytest.raises(sqlite3.ProgrammingError):
        provider.store.conn.execute("SELECT 1")
    with open_provider(store_path) as again:
        assert [e["text"] for e in again.list_entries()] == ["inside"]


@pytest.mark.requirement("MEM-PKG-003")
def test_with_block_closes_and_lets_the_exception_through(store_path: Path) -> None:
    with pytest.raises(KeyError), open_provider(store_path) as provider:
        raise KeyError("boom")
    with pytest.raises(sqlite3.ProgrammingError):
        provider.store.conn.execute("SELECT 1")


# -- gates (MEM-GATE-004, MEM-GATE-010, MEM-PKG-001) -------------------------------------------

def test_no_gate_says_how_to_approve(store_path: Path) -> None:
    with open_provider(store_path) as provider, raises_code("WRITE_DENIED") as info:
        provider.add({**UG, "text": "x"}, WRITE)
    assert info.value.details == {"outcome": "unavailable"}
    assert "no approval gate is configured" in info.value.message
    assert "gate=" in info.value.message and 'write_policy="auto"' in info.value.message
    with open_provider(store_path) as provider:
        [row] = provider.audit_list()
    assert row["outcome"] == "unavailable (via no gate, writePolicy ask from global)"


def test_a_gate_that_says_unavailable_is_told_apart_from_no_gate(store_path: Path) -> None:
    with open_provider(store_path, gate=RecordingGate("unavailable")) as provider:
        with raises_code("WRITE_DENIED") as info:
            provider.add({**UG, "text": "x"}, WRITE)
        [row] = provider.audit_list()
    assert "no approval gate" not in info.value.message
    assert row["outcome"] == "unavailable (via gate, writePolicy ask from global)"


@pytest.mark.requirement("MEM-PKG-001")
def test_async_gate_is_awaited(store_path: Path) -> None:
    seen: list[Json] = []

    async def gate(payload: Json, write: Json) -> str:
        seen.append(payload)
        await asyncio.sleep(0)
        return "allowed-once" if payload["text"] == "yes" else "rejected"

    with open_provider(store_path, gate=gate) as provider:
        assert provider.add({**UG, "text": "yes"}, WRITE)["entry"]["text"] == "yes"
        with raises_code("WRITE_DENIED") as info:
            provider.add({**UG, "text": "no"}, WRITE)
        assert info.value.details == {"outcome": "rejected"}
        assert [r["outcome"] for r in provider.audit_list()] == [
            "rejected (via gate, writePolicy ask from global)",
            "allowed-once (via gate, writePolicy ask from global)"]
    assert [p["text"] for p in seen] == ["yes", "no"]


@pytest.mark.requirement("MEM-PKG-001")
def test_async_gate_that_raises_is_a_gate_error(store_path: Path) -> None:
    async def gate(payload: Json, write: Json) -> str:
        raise ConnectionError("approver offline")

    with open_provider(store_path, gate=gate) as provider, raises_code("WRITE_DENIED") as info:
        provider.add({**UG, "text": "x"}, WRITE)
    assert info.value.details == {"outcome": "gate-error", "errorType": "ConnectionError",
                                  "cause": "approver offline"}


@pytest.mark.requirement("MEM-PKG-001")
def test_async_gate_inside_a_running_loop_is_a_gate_error_not_a_leak(store_path: Path) -> None:
    async def gate(payload: Json, write: Json) -> str:
        return "allowed-once"

    async def main() -> MemoryProtocolError:
        with open_provider(store_path, gate=gate) as provider:
            try:
                provider.add({**UG, "text": "x"}, WRITE)
            except MemoryProtocolError as exc:
                return exc
        raise AssertionError("the write was not denied")

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "coroutine ... was never awaited" would fail here
        error = asyncio.run(main())
    assert error.details["outcome"] == "gate-error"
    assert error.details["errorType"] == "RuntimeError"
    assert "worker thread" in error.details["cause"]

    async def threaded() -> Json:
        with open_provider(store_path, gate=gate) as provider:
            result: Json = await asyncio.to_thread(provider.add, {**UG, "text": "y"}, WRITE)
            return result

    assert asyncio.run(threaded())["entry"]["text"] == "y"


@pytest.mark.requirement("MEM-PKG-001")
def test_a_gate_that_is_not_callable_is_refused_at_open(store_path: Path) -> None:
    with raises_code("INVALID_INPUT") as info:
        open_provider(store_path, gate="allowed-once")  # type: ignore[arg-type]
    assert info.value.details["field"] == "/gate"
    assert not store_path.exists()


# -- cancelling a pending write (MEM-PKG-002) --------------------------------------------------

@pytest.mark.requirement("MEM-PKG-002")
def test_cancelled_before_approval_never_asks(store_path: Path) -> None:
    gate = RecordingGate()
    token = CancelToken()
    token.cancel()
    with open_provider(store_path, gate=gate) as provider:
        with raises_code("WRITE_DENIED") as info:
            provider.add({**UG, "text": "x"}, WRITE, cancel=token)
        assert info.value.details == {"outcome": "cancelled"}
        assert gate.seen == [] and provider.list_entries() == []
        [row] = provider.audit_list()
    assert (row["action"], row["outcome"]) == ("add-denied", "cancelled (via cancel token)")


@pytest.mark.requirement("MEM-PKG-002")
def test_cancelled_while_the_gate_waits_discards_the_approval(store_path: Path) -> None:
    token = CancelToken()
    gate = RecordingGate("allowed-once", hook=lambda payload: token.cancel())
    with open_provider(store_path, gate=gate) as provider:
        provider.add({**UG, "text": "keep me"}, WRITE)  # its own token: not cancelled
        with raises_code("WRITE_DENIED") as info:
            provider.replace({**UG, "match": "keep", "text": "changed"}, WRITE, cancel=token)
        assert info.value.details == {"outcome": "cancelled"}
        assert [e["text"] for e in provider.list_entries()] == ["keep me"]
        assert provider.audit_list(1)[0]["action"] == "replace-denied"


class _FlipsOnRead:
    """A duck-typed token that is cancelled from its ``after``-th read on: the last check,
    inside the commit transaction, is the one that finds it."""

    def __init__(self, after: int) -> None:
        self.reads = 0
        self.after = after

    @property
    def cancelled(self) -> bool:
        self.reads += 1
        return self.reads >= self.after


@pytest.mark.requirement("MEM-PKG-002")
@pytest.mark.parametrize("op", ["add", "seed", "import"])
def test_cancelled_at_commit_changes_nothing(store_path: Path, op: str) -> None:
    token: Any = _FlipsOnRead(3)  # before the gate, after it, then at commit
    with open_provider(store_path, write_policy="auto") as provider:
        with raises_code("WRITE_DENIED") as info:
            if op == "add":
                provider.add({**UG, "text": "x"}, WRITE, cancel=token)
            elif op == "seed":
                provider.seed([{**UG, "text": "x"}, {**AW, "text": "y"}], WRITE, cancel=token)
            else:
                other = open_store(store_path.with_name("other.db"))
                other.add({**UG, "text": "x"}, WRITE)
                envelope = other.export()
                other.close()
                provider.import_envelope(envelope, WRITE, cancel=token)
        assert token.reads == 3
        assert info.value.details == {"outcome": "cancelled"}
        assert provider.list_entries() == []
        [row] = provider.audit_list()
    action = "add" if op == "add" else "seed"
    assert (row["action"], row["outcome"]) == (f"{action}-denied", "cancelled (via cancel token)")


@pytest.mark.requirement("MEM-PKG-002")
def test_a_cancelled_write_with_bad_input_is_invalid_and_unaudited(provider: Provider) -> None:
    token = CancelToken()
    token.cancel()
    with raises_code("INVALID_INPUT"):
        provider.add({**UG, "text": ""}, WRITE, cancel=token)
    assert provider.audit_list() == []


@pytest.mark.requirement("MEM-PKG-002")
def test_cancelling_after_commit_has_no_effect(provider: Provider) -> None:
    token = CancelToken()
    entry = provider.add({**UG, "text": "x"}, WRITE, cancel=token)["entry"]
    token.cancel()
    assert provider.list_entries() == [entry]


# -- batch order (MEM-WRT-013) -----------------------------------------------------------------

def test_a_seed_lists_in_batch_order_with_random_ids(store_path: Path) -> None:
    texts = [f"entry {n:02d} {'zyxwvutsrq'[n % 10]}" for n in range(40)]
    with open_provider(store_path, write_policy="auto") as provider:
        result = provider.seed([{**AW, "text": t} for t in texts], WRITE)
        assert [e["text"] for e in result["entries"]] == texts
        assert [e["text"] for e in provider.list_entries()] == texts
        assert [e["text"] for e in provider.export()["entries"]] == texts
        envelope = provider.export()
    with open_provider(store_path.with_name("copy.db"), write_policy="auto") as copy:
        copy.import_envelope({**envelope, "entries": envelope["entries"][::-1]}, WRITE)
        assert [e["text"] for e in copy.list_entries()] == texts[::-1]


# -- dsh-memento's query options (MEM-QRY-007) -------------------------------------------------

def test_memento_options_filter_by_agent_only_and_recall(provider: Provider) -> None:
    alpha = make_write("s-a", "/w/a", "alpha")
    provider.add({**AW, "text": "alpha here"}, alpha)
    provider.add({**AW, "text": "alpha elsewhere"}, make_write("s-a", "/w/b", "alpha"))
    provider.add({**AW, "text": "beta here"}, make_write("s-b", "/w/a", "beta"))
    texts = sorted(e["text"] for e in provider.query({}, {"agentKey": "Alpha"})["entries"])
    assert texts == ["alpha elsewhere", "alpha here"]  # no workspace rule, as in dsh-memento
    assert [e["text"] for e in provider.query({}, {"reader": alpha})["entries"]] == [
        "alpha here"]  # a reader applies the full visibility rule
    assert provider.audit_list() == [r for r in provider.audit_list() if r["action"] == "add"]
    page = provider.query({"limit": 1}, {"sessionId": "s-memento"})
    assert page["total"] == 3 and page["entries"][0]["recallCount"] == 1
    row = provider.audit_list(1)[0]
    assert (row["action"], row["sessionId"], row["entryIds"]) == (
        "recalled", "s-memento", [page["entries"][0]["id"]])


# -- the ledger cursor and the ledger section (MEM-AUD-005, MEM-AUD-008, MEM-EXP-005) ----------

def _big_store(provider: Provider) -> None:
    """More than 1,000 ledger rows: a seed of 1000 (1001 rows) and ~150 more changes."""
    provider.seed([{**AW, "text": f"fact {n:04d};"} for n in range(1000)], WRITE)
    for n in range(0, 100, 2):
        provider.replace({**AW, "match": f"fact {n:04d};", "text": f"fact {n:04d}; revised"},
                         WRITE)
    for n in range(1, 60, 2):
        provider.remove({**AW, "match": f"fact {n:04d};"}, WRITE)
    for word in ("revised", "fact 0009", "nothing"):
        provider.query({"text": word}, {"reader": WRITE, "recall": True})
    provider.consolidate({**AW, "matches": ["fact 0200;", "fact 0300;"], "text": "merged"},
                         WRITE)
    with raises_code("WRITE_DENIED"):
        provider.add({**UG, "text": "refused"}, make_write(approval_policy="never"))


def _ledger(provider: Provider, page: int = 1000) -> list[Json]:
    """MEM-AUD-008: the whole ledger, ``page`` rows at a time."""
    rows: list[Json] = []
    while chunk := provider.audit_list(page, after=rows[-1]["seq"] if rows else 0):
        rows.extend(chunk)
    return rows


def test_the_whole_ledger_through_the_cursor_rebuilds_the_store(store_path: Path) -> None:
    with open_provider(store_path, write_policy="auto", budgets=ROOMY) as provider:
        _big_store(provider)
        rows: list[Json] = []
        after = 0
        while page := provider.audit_list(1000, after=after):
            rows.extend(page)
            after = page[-1]["seq"]
        assert len(rows) > 1000
        assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1))
        assert _ledger(provider, page=97) == rows
        assert replay(rows) == provider.list_entries()
        newest = provider.audit_list(1000)
        assert newest == rows[::-1][:1000]  # the newest-first listing is unchanged


def test_the_ledger_section_of_an_export_rebuilds_its_entries(store_path: Path) -> None:
    with open_provider(store_path, write_policy="auto", budgets=ROOMY) as provider:
        _big_store(provider)
        plain = provider.export()
        envelope = provider.export(ledger=True)
        assert "ledger" not in plain
        assert envelope["ledger"] == _ledger(provider)
        assert len(envelope["ledger"]) > 1000
        assert replay(envelope["ledger"]) == envelope["entries"] == provider.list_entries()
        assert provider.audit_list(1)[0]["action"] == "add-denied"  # exports are not audited
        with raises_code("INVALID_INPUT") as info:
            provider.export(ledger=1)  # type: ignore[arg-type]
        assert info.value.details["field"] == "/ledger"


def test_an_export_retries_when_a_writer_commits_in_between(store_path: Path) -> None:
    with open_provider(store_path, write_policy="auto") as provider, \
            open_provider(store_path, write_policy="auto") as writer:
        provider.add({**UG, "text": "first"}, WRITE)
        calls = 0
        original = provider.list_entries

        def interleaved() -> list[Json]:
            nonlocal calls
            calls += 1
            if calls == 1:
                writer.add({**UG, "text": f"during {calls}"}, WRITE)
            return original()

        provider.list_entries = interleaved  # type: ignore[method-assign]
        envelope = provider.export(ledger=True)
        assert calls == 2
        assert replay(envelope["ledger"]) == envelope["entries"]
        # both entries, in list order: two writes in one millisecond are ordered by their ids
        assert sorted(e["text"] for e in envelope["entries"]) == ["during 1", "first"]
