"""Pending memory proposals: candidate entries a person approves or dismisses (spec chapter
``memory/proposals``).

This module owns the ``proposals`` table: the proposal object, input validation, reads, the
status changes, and the as-is import of another store's proposal records. The provider
(``provider.py``) drives it: an approval is a write of the normal pipeline.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

from ..text import units
from .errors import MemoryProtocolError, invalid
from .inputs import SCOPES, TRACKS, Context, NewEntry, check_keys, new_entry
from .keys import visible
from .store import PROPOSAL_COLUMNS, Store

Proposal = dict[str, Any]

STATUSES = ("pending", "approved", "dismissed")
PENDING, APPROVED, DISMISSED = STATUSES
#: MEM-PRO-003: the longest proposal text, in UTF-16 code units.
MAX_PROPOSAL_UNITS = 2000
#: MEM-PRO-009: the most pending proposals a snapshot shows.
MAX_PENDING_SHOWN = 8
DEFAULT_LIST_LIMIT = 100
MAX_LIST_LIMIT = 1000
PROPOSE_KEYS = {"kind", "track", "scope", "text", "source", "workspaceKey", "agentKey"}
_KIND = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
#: MEM-PRO-001: the form of a proposal's ``kind``.
KIND = _KIND
#: camelCase member ← column, in column order.
MEMBERS = ("id", "kind", "track", "scope", "workspaceKey", "agentKey", "text", "source",
           "sessionId", "status", "createdAt", "decidedAt", "entryId")
_SELECT = f"SELECT {', '.join(PROPOSAL_COLUMNS)} FROM proposals"
_INSERT = (f"INSERT INTO proposals ({', '.join(PROPOSAL_COLUMNS)}) VALUES "
           f"({', '.join('?' * len(PROPOSAL_COLUMNS))})")


def from_row(row: tuple[Any, ...]) -> Proposal:
    return dict(zip(MEMBERS, row, strict=True))


def not_found(proposal_id: str) -> MemoryProtocolError:
    """MEM-PRO-007."""
    return MemoryProtocolError(
        "PROPOSAL_NOT_FOUND", f'no pending proposal visible to this session has id '
        f'"{proposal_id}" (it is missing, already approved or dismissed, or belongs to another '
        "workspace or agent); nothing was changed", {"id": proposal_id})


def new_proposal(data: Any, ctx: Context) -> tuple[str, NewEntry]:
    """MEM-PRO-002/003: the kind and the entry-to-be of a ``propose`` input."""
    if not isinstance(data, dict):
        raise invalid("/", "a proposal input must be an object")
    check_keys(data, PROPOSE_KEYS)
    kind = data.get("kind")
    if not isinstance(kind, str) or not _KIND.match(kind):
        raise invalid("/kind", "kind must be 1 to 64 characters a-z, 0-9 and '-', starting "
                               "with a letter or digit")
    new = new_entry({k: v for k, v in data.items() if k != "kind"}, ctx)
    if units(new.text) > MAX_PROPOSAL_UNITS:
        raise invalid("/text", f"a proposal text is at most {MAX_PROPOSAL_UNITS} units "
                               f"(UTF-16 code units); this one has {units(new.text)}")
    if ctx.session_id is None:
        raise invalid("/agent/session/id", "a proposal needs the session id (its idempotence "
                                           "key is the session id and the kind)")
    return kind, new


def proposal_id(data: Any) -> str:
    """The ``{"id"}`` input of approve and dismiss."""
    if not isinstance(data, dict):
        raise invalid("/", "the input must be an object {\"id\": ...}")
    check_keys(data, {"id"})
    value = data.get("id")
    if not isinstance(value, str) or value == "":
        raise invalid("/id", "id must be a non-empty string")
    return value


def list_filter(data: Any) -> tuple[str | None, int]:
    """MEM-PRO-006: ``{"status"?, "limit"?}``."""
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise invalid("/", "the filter must be an object")
    check_keys(data, {"status", "limit"})
    status = data.get("status")
    if status is not None and status not in STATUSES:
        raise invalid("/status", f"status must be one of {', '.join(STATUSES)}")
    limit = data.get("limit", DEFAULT_LIST_LIMIT)
    if limit is None:
        limit = DEFAULT_LIST_LIMIT
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIST_LIMIT:
        raise invalid("/limit", f"limit must be an integer from 1 to {MAX_LIST_LIMIT}")
    return status, limit


def get(store: Store, proposal_id: str) -> Proposal | None:
    row = store.conn.execute(f"{_SELECT} WHERE id = ?", (proposal_id,)).fetchone()
    return None if row is None else from_row(row)


def by_key(store: Store, session_id: str, kind: str) -> Proposal | None:
    row = store.conn.execute(f"{_SELECT} WHERE session_id = ? AND kind = ?",
                             (session_id, kind)).fetchone()
    return None if row is None else from_row(row)


def pending_visible(store: Store, proposal_id: str, ctx: Context) -> Proposal:
    """The pending proposal ``proposal_id`` that the writer can see, or PROPOSAL_NOT_FOUND."""
    proposal = get(store, proposal_id)
    if proposal is None or proposal["status"] != PENDING \
            or not visible(proposal, ctx.workspace, ctx.agent):
        raise not_found(proposal_id)
    return proposal


def select(store: Store, status: str | None, keys: tuple[str, str] | None,
           limit: int | None) -> list[Proposal]:
    """Proposals of ``status`` (all when None) in (createdAt, id) order; with ``keys`` =
    (workspace, agent) only those visible to that session (filtered before the limit)."""
    where, params = ("WHERE status = ?", (status,)) if status is not None else ("", ())
    rows = store.conn.execute(f"{_SELECT} {where} ORDER BY created_at, id", params)
    out: list[Proposal] = []
    for row in rows:
        proposal = from_row(row)
        if keys is not None and not visible(proposal, *keys):
            continue
        out.append(proposal)
        if limit is not None and len(out) >= limit:
            break
    return out


def insert(store: Store, proposal: Proposal) -> None:
    store.execute(_INSERT, tuple(proposal[m] for m in MEMBERS))


def decide(store: Store, proposal: Proposal, status: str, now: int,
           entry_id: str | None = None) -> Proposal:
    decided = {**proposal, "status": status, "decidedAt": now, "entryId": entry_id}
    store.execute("UPDATE proposals SET status = ?, decided_at = ?, entry_id = ? WHERE id = ? "
                  "AND status = 'pending'", (status, now, entry_id, proposal["id"]))
    return decided


# -- the as-is import of another store's records ------------------------------------------------

#: The members of an imported record (dsh-memento's proposal object); ``source`` and
#: ``entryId`` are optional.
IMPORT_MEMBERS = ("id", "kind", "track", "scope", "workspaceKey", "agentKey", "sessionId",
                  "text", "status", "createdAt", "decidedAt")
IMPORT_SOURCE = "dsh-memento"


def import_records(store: Store, records: Iterable[Mapping[str, Any]]) -> list[Proposal]:
    """Bring proposal records across as they are, inside the CALLER's open transaction
    (``with store.transaction(): ...``): no gate, no audit row, no new id or time.

    Each record has the members of :data:`IMPORT_MEMBERS` (``source`` defaults to
    ``"dsh-memento"``; ``entryId`` to null). A record whose id is stored with the same members
    is skipped; one whose id, or whose (sessionId, kind), is stored with other members is an
    ``IMPORT_CONFLICT``; a malformed one ``INVALID_INPUT`` (field ``/<index>/<member>``). The
    caller's transaction rolls back on either. Returns the proposals inserted, in input order.
    """
    if not store.conn.in_transaction:
        raise RuntimeError("import_records runs inside the caller's store.transaction()")
    inserted: list[Proposal] = []
    for index, record in enumerate(records):
        proposal = _imported(record, f"/{index}")
        stored = get(store, proposal["id"])
        if stored is not None:
            if stored == proposal:
                continue
            raise _conflict(proposal["id"])
        if proposal["sessionId"] is not None \
                and by_key(store, proposal["sessionId"], proposal["kind"]) is not None:
            raise _conflict(proposal["id"])
        try:
            insert(store, proposal)
        except sqlite3.IntegrityError:
            raise _conflict(proposal["id"]) from None
        inserted.append(proposal)
    return inserted


def _conflict(proposal_id: str) -> MemoryProtocolError:
    return MemoryProtocolError(
        "IMPORT_CONFLICT", f"proposal {proposal_id} conflicts with a stored proposal of the "
        "same id, or of the same session and kind, and other content; nothing was changed",
        {"ids": [proposal_id]})


def check_record(record: Any, base: str) -> Proposal:
    """The stored form of one record of :func:`import_records`, or INVALID_INPUT
    (field ``<base>/<member>``); reads nothing."""
    return _imported(record, base)


def _imported(record: Any, base: str) -> Proposal:
    if not isinstance(record, Mapping):
        raise invalid(base, "a proposal record must be an object")
    check_keys(dict(record), {*IMPORT_MEMBERS, "source", "entryId"}, base)

    def text(name: str, *, empty: bool = False, optional: bool = False) -> Any:
        value = record.get(name)
        if value is None and optional:
            return None
        if not isinstance(value, str) or (value == "" and not empty):
            raise invalid(f"{base}/{name}", f"{name} must be a {'' if empty else 'non-empty '}"
                                            "string")
        return value

    def epoch(name: str, optional: bool = False) -> Any:
        value = record.get(name)
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise invalid(f"{base}/{name}", f"{name} must be a non-negative integer (epoch ms)")
        return value

    out: Proposal = {
        "id": text("id"), "kind": text("kind"), "track": record.get("track"),
        "scope": record.get("scope"), "workspaceKey": text("workspaceKey", empty=True),
        "agentKey": text("agentKey", empty=True), "text": text("text"),
        "source": text("source") if record.get("source") is not None else IMPORT_SOURCE,
        "sessionId": text("sessionId", empty=True, optional=True),
        "status": record.get("status"), "createdAt": epoch("createdAt"),
        "decidedAt": epoch("decidedAt", optional=True),
        "entryId": text("entryId", optional=True),
    }
    if out["track"] not in TRACKS:
        raise invalid(f"{base}/track", f"track must be one of {', '.join(TRACKS)}")
    if out["scope"] not in SCOPES:
        raise invalid(f"{base}/scope", f"scope must be one of {', '.join(SCOPES)}")
    if out["status"] not in STATUSES:
        raise invalid(f"{base}/status", f"status must be one of {', '.join(STATUSES)}")
    if (out["status"] == PENDING) != (out["decidedAt"] is None):
        raise invalid(f"{base}/decidedAt", "decidedAt is null exactly when status is pending")
    return out
