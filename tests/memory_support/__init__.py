"""Shared helpers of the memory-protocol tests (golden setup, clocks, ids, ledger access)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from dshkit.reference.memory import MemoryProtocolError, open_provider
from dshkit.reference.memory.provider import Provider

Json = dict[str, Any]

#: dsh-memento's golden budgets (research §12.1): 2000/2000/4000/4000.
GOLDEN_BUDGETS: Json = {"user": {"userGlobal": 2000, "workspace": 2000},
                        "agent": {"userGlobal": 4000, "workspace": 4000}}
UUID4 = r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"
ENTRY_KEYS = frozenset({"id", "track", "scope", "workspaceKey", "agentKey", "text", "source",
                        "tags", "version", "createdAt", "updatedAt", "lastRecalled",
                        "recallCount", "sessionId"})


def budgets(user_global: int, user_workspace: int, agent_global: int,
            agent_workspace: int) -> Json:
    return {"user": {"userGlobal": user_global, "workspace": user_workspace},
            "agent": {"userGlobal": agent_global, "workspace": agent_workspace}}


def make_write(session_id: str | None = "conformance-session", cwd: Any = "C:/conformance/ws",
               preset: Any = "conformance", approval_policy: str | None = None) -> Json:
    """A write context; the defaults are the dsh-memento suite's (research §12.1)."""
    header: Json = {}
    if cwd is not None:
        header["cwd"] = cwd
    if preset is not None:
        header["agentPreset"] = preset
    session: Json = {"header": header}
    if session_id is not None:
        session["id"] = session_id
    if approval_policy is not None:
        session["approvalPolicy"] = approval_policy
    return {"agent": {"session": session}}


WRITE = make_write()


class FrozenClock:
    """Returns ``now`` until told otherwise: every read in one step sees the same time."""

    def __init__(self, start: int = 1_700_000_000_000) -> None:
        self.now = start

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int = 1000) -> int:
        self.now += ms
        return self.now


class TickingClock:
    """Every read is one millisecond later than the previous one."""

    def __init__(self, start: int = 1_700_000_000_000) -> None:
        self._next = itertools.count(start)

    def __call__(self) -> int:
        return next(self._next)


class CountingIds:
    """Deterministic lower-case UUID v4 strings: ...-4000-8000-<counter>."""

    def __init__(self) -> None:
        self._next = itertools.count(1)

    def __call__(self) -> str:
        return f"00000000-0000-4000-8000-{next(self._next):012x}"


def open_store(path: Path, **options: Any) -> Provider:
    """``open_provider`` with the golden defaults (auto policy, golden budgets)."""
    options.setdefault("budgets", GOLDEN_BUDGETS)
    options.setdefault("write_policy", "auto")
    return open_provider(path, **options)


@contextmanager
def raises_code(code: str) -> Iterator[pytest.ExceptionInfo[MemoryProtocolError]]:
    """Expect a :class:`MemoryProtocolError` with ``code`` (and a well-formed error object)."""
    with pytest.raises(MemoryProtocolError) as info:
        yield info
    error = info.value
    assert error.code == code, f"expected {code}, got {error!r}"
    assert isinstance(error.message, str) and error.message
    assert isinstance(error.details, dict)
    assert error.to_json() == {"code": code, "message": error.message, "details": error.details}


def ledger(provider: Provider) -> list[Json]:
    """Every audit row, oldest first (audit_list is capped at 1000 rows)."""
    return provider.store.audit_rows(order="ORDER BY seq ASC")


def actions(provider: Provider, limit: int = 1000) -> list[str]:
    """Audit actions, oldest first."""
    return [str(row["action"]) for row in reversed(provider.audit_list(limit))]


class RecordingGate:
    """An approver that records every payload and answers from a script (default approve)."""

    def __init__(self, *answers: object, hook: Callable[[Json], None] | None = None) -> None:
        self.answers = list(answers)
        self.seen: list[Json] = []
        self.hook = hook

    def __call__(self, payload: Json, write: Json) -> object:
        self.seen.append(payload)
        if self.hook is not None:
            self.hook(payload)
        answer = self.answers.pop(0) if self.answers else "allowed-once"
        if isinstance(answer, BaseException):
            raise answer
        return answer


@contextmanager
def umask(value: int) -> Iterator[None]:
    """The process umask set to ``value`` for a block (file-mode tests)."""
    old = os.umask(value)
    try:
        yield
    finally:
        os.umask(old)
