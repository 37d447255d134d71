"""Bring a dsh-memento store's image into a dshkit store (spec chapter ``memory/migrate-memento``).

The mapping (:func:`plan`) is pure: it turns a :class:`~.memento_store.MementoImage` into the
entries, ledger rows and proposal records to write, and the loss report of what does not map.
:func:`migrate_memento` then writes them through the provider's approval and commit pipeline,
in one transaction.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..text import units
from . import approval
from . import proposals as pro
from .errors import MemoryProtocolError
from .inputs import BUCKETS, check_source, check_text, normalise_tags
from .keys import agent_key, workspace_key
from .memento_store import MementoImage, read_memento_store
from .provider import Provider, _one_bucket, _restore_additions, _same_content
from .store import Store

Entry = dict[str, Any]

#: MEM-MIG-006: the dsh-memento audit actions that are also dshkit actions (MEM-AUD-001);
#: dsh-memento's ``proposal`` row has the shape of dshkit's (MEM-PRO-008).
CARRIED_ACTIONS = frozenset((
    "add", "replace", "remove", "consolidate-remove", "consolidate-add", "seed", "add-denied",
    "replace-denied", "remove-denied", "consolidate-denied", "seed-denied", "recalled",
    "snapshot", "proposal", "proposal-approved", "proposal-dismissed"))
_UUID4 = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$")
_TRACKS = {b[0] for b in BUCKETS}
_SCOPES = {b[1] for b in BUCKETS}


@dataclass(frozen=True, slots=True)
class Plan:
    """What a migration writes, and what it leaves behind (the loss report)."""

    version: int
    entries: tuple[Entry, ...]
    ledger: tuple[dict[str, Any], ...]
    proposals: tuple[dict[str, Any], ...]
    losses: tuple[dict[str, Any], ...]


def plan(image: MementoImage) -> Plan:
    """MEM-MIG-004..008: the pure mapping of a source image."""
    losses: list[dict[str, Any]] = []
    losses += [{"kind": "unknown-table", "table": t, "reason": "not a dsh-memento table; not "
                "read"} for t in image.unknown_tables]
    losses += [{"kind": "unknown-column", "table": t, "column": c, "reason": "not a column "
                f"of dsh-memento schema version {image.version}; not read"}
               for t, c in image.unknown_columns]
    losses += [{"kind": "meta", "key": k, "reason": "dshkit keeps no such setting"}
               for k, _ in image.meta if k != "schema_version"]
    entries: list[Entry] = []
    seen: set[str] = set()
    for row in image.entries:
        entry, loss = _entry(row, image.version)
        if loss is None and entry["id"] in seen:
            loss = _entry_loss(row, "/id", "the same id, in another case, as an earlier entry")
        if loss is not None:
            losses.append(loss)
        else:
            seen.add(entry["id"])
            entries.append(entry)
    ledger: list[dict[str, Any]] = []
    dropped: dict[str, int] = {}
    for row in image.audit:
        if row["action"] in CARRIED_ACTIONS:
            ledger.append(_audit(row))
        else:
            dropped[str(row["action"])] = dropped.get(str(row["action"]), 0) + 1
    losses += [{"kind": "audit-action", "action": action, "rows": count,
                "reason": "dshkit has no audit action of this name (MEM-AUD-001)"}
               for action, count in sorted(dropped.items())]
    proposals: list[dict[str, Any]] = []
    seen_proposals: set[str] = set()
    for row in image.proposals:
        record, loss = _proposal(row, image.version)
        if loss is None and record["id"] in seen_proposals:
            loss = _proposal_loss(row, "/id", "the same id, in another case, as an earlier "
                                              "proposal")
        if loss is not None:
            losses.append(loss)
        else:
            seen_proposals.add(record["id"])
            proposals.append(record)
    return Plan(image.version, tuple(entries), tuple(ledger), tuple(proposals), tuple(losses))


def _entry_loss(row: dict[str, Any], field: str, reason: str) -> dict[str, Any]:
    return {"kind": "entry", "id": row.get("id"), "field": field, "reason": reason}


def _entry(row: dict[str, Any], version: int) -> tuple[Entry, dict[str, Any] | None]:
    """One source entry in dshkit's stored form, or the reason it cannot be carried."""
    entry_id = row["id"]
    if not isinstance(entry_id, str) or not _UUID4.match(entry_id):
        return {}, _entry_loss(row, "/id", "not a UUID v4")
    if row["track"] not in _TRACKS or row["scope"] not in _SCOPES:
        return {}, _entry_loss(row, "/track", "not a dshkit bucket")
    checks: list[tuple[str, Callable[[], Any]]] = [
        ("/text", lambda: check_text(row["text"], "/text")),
        ("/source", lambda: check_source(row["source"], "/source")),
        ("/tags", lambda: normalise_tags(_tags(row.get("tags", "[]")), "/tags")),
    ]
    values: dict[str, Any] = {}
    for field, check in checks:
        try:
            values[field] = check()
        except MemoryProtocolError as exc:
            return {}, _entry_loss(row, field, str(exc.details.get("reason", exc.message)))
    ints = {"createdAt": row["created_at"], "updatedAt": row["updated_at"],
            "version": row.get("version", 1), "recallCount": row.get("recall_count", 0),
            "lastRecalled": row.get("last_recalled")}
    for name, value in ints.items():
        low = 1 if name == "version" else 0
        if value is None and name == "lastRecalled":
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            return {}, _entry_loss(row, f"/{name}", f"must be an integer of at least {low}")
    session = row["session_id"]
    if session is not None and not isinstance(session, str):
        return {}, _entry_loss(row, "/sessionId", "must be a string or null")
    scope = row["scope"]
    keys = {"workspaceKey": "" if scope == "user-global" else workspace_key(row["workspace_key"]),
            "agentKey": agent_key(row.get("agent_key", "") if version >= 3 else "")}
    return {"id": entry_id.lower(), "track": row["track"], "scope": scope, **keys,
            "text": values["/text"], "source": values["/source"], "tags": values["/tags"],
            "version": ints["version"], "createdAt": ints["createdAt"],
            "updatedAt": ints["updatedAt"], "lastRecalled": ints["lastRecalled"],
            "recallCount": ints["recallCount"], "sessionId": session}, None


def _tags(raw: Any) -> Any:
    import json

    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw  # normalise_tags refuses it: not an array


def _audit(row: dict[str, Any]) -> dict[str, Any]:
    """MEM-MIG-006: the row as dshkit's, without the entry snapshots dsh-memento never kept."""
    return {"ts": row["ts"], "action": row["action"], "track": row["track"],
            "scope": row["scope"], "entryId": row["entry_id"], "text": row["text"],
            "outcome": row["outcome"], "source": row["source"], "sessionId": row["session_id"],
            "entry": None, "entryIds": None}


def _proposal_loss(row: dict[str, Any], field: str, reason: str) -> dict[str, Any]:
    return {"kind": "proposal", "id": row.get("id"), "field": field, "reason": reason}


def _proposal(row: dict[str, Any], version: int) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """MEM-MIG-007: one source proposal as the record ``proposals.import_records`` takes, keys
    normalised as an entry's (MEM-MIG-004), or the reason it cannot be carried."""
    proposal_id = row["id"]
    if not isinstance(proposal_id, str) or not _UUID4.match(proposal_id):
        return {}, _proposal_loss(row, "/id", "not a UUID v4")
    if row["track"] not in _TRACKS or row["scope"] not in _SCOPES:
        return {}, _proposal_loss(row, "/track", "not a dshkit bucket")
    kind = row["kind"]
    if not isinstance(kind, str) or not pro.KIND.match(kind):
        return {}, _proposal_loss(row, "/kind", "not 1 to 64 characters a-z, 0-9 and '-'")
    scope = row["scope"]
    record = {"id": proposal_id.lower(), "kind": kind, "track": row["track"], "scope": scope,
              "workspaceKey": "" if scope == "user-global"
              else workspace_key(row["workspace_key"]),
              "agentKey": agent_key(row.get("agent_key", "") if version >= 3 else ""),
              "text": row["text"], "source": row["source"], "sessionId": row["session_id"],
              "status": row["status"], "createdAt": row["created_at"],
              "decidedAt": row["decided_at"]}
    checks: list[tuple[str, Callable[[], Any]]] = [
        ("/text", lambda: check_text(record["text"], "/text")),
        ("/source", lambda: check_source(record["source"], "/source")),
        ("/", lambda: pro.check_record(record, "")),
    ]
    for field, check in checks:
        try:
            check()
        except MemoryProtocolError as exc:
            where = str(exc.details.get("field", field)) if field == "/" else field
            return {}, _proposal_loss(row, where, str(exc.details.get("reason", exc.message)))
    if units(record["text"]) > pro.MAX_PROPOSAL_UNITS:
        return {}, _proposal_loss(row, "/text", f"longer than {pro.MAX_PROPOSAL_UNITS} units")
    return record, None


def _proposal_conflicts(store: Store, records: tuple[dict[str, Any], ...]) -> tuple[
        list[str], list[dict[str, Any]]]:
    """MEM-MIG-003/007 for proposals: the ids that conflict with a stored proposal (same id,
    or same (sessionId, kind), other content), and the records not stored yet."""
    conflicts: list[str] = []
    new: list[dict[str, Any]] = []
    for record in records:
        stored = pro.get(store, record["id"])
        if stored is not None:
            if stored != pro.check_record(record, ""):
                conflicts.append(record["id"])
        elif record["sessionId"] is not None \
                and pro.by_key(store, record["sessionId"], record["kind"]) is not None:
            conflicts.append(record["id"])
        else:
            new.append(record)
    return conflicts, new


def to_write(store: Store, mapped: Plan) -> list[Entry]:
    """The planned entries whose id is not stored yet: those a migration adds."""
    return [e for e in mapped.entries if store.entry(e["id"]) is None]


def migrate_memento(provider: Provider, source: str | Path | MementoImage,
                    write: Any) -> dict[str, Any]:
    """MEM-MIG-001..010: read the source (a path, or an image read before), map it, and write
    it into ``provider``'s store under one approval and in one transaction; returns the
    migration report."""
    ctx = provider._context(write)
    image = source if isinstance(source, MementoImage) else read_memento_store(source)
    mapped = plan(image)
    store = provider.store
    state = store.state()
    stored = {e["id"]: store.entry(e["id"]) for e in mapped.entries}
    conflicts = [e["id"] for e in mapped.entries
                 if (old := stored[e["id"]]) is not None and not _same_content(old, e)]
    proposal_conflicts, new_proposals = _proposal_conflicts(store, mapped.proposals)
    if conflicts or proposal_conflicts:
        ids = conflicts + proposal_conflicts
        raise MemoryProtocolError(
            "IMPORT_CONFLICT", f"{len(ids)} entries or proposals of the dsh-memento store have "
            f"the id of a stored one with other content (first {ids[0]}); nothing was changed",
            {"ids": ids})
    skipped = [e["id"] for e in mapped.entries if stored[e["id"]] is not None]
    writes = [e for e in mapped.entries if stored[e["id"]] is None]
    losses = list(mapped.losses)
    ledger_empty = not store.audit_rows(limit=1)
    carry_ledger = bool(writes) and ledger_empty
    if mapped.ledger and not carry_ledger:
        losses.append({"kind": "ledger", "rows": len(mapped.ledger), "reason": (
            "the destination's ledger is not empty" if not ledger_empty
            else "no entry was written")})
    report = {"source": image.path, "sourceVersion": image.version, "added": 0,
              "skipped": skipped, "ledgerRows": 0,
              "proposals": {"read": len(image.proposals), "carried": 0},
              "losses": losses}
    if not writes:
        if not new_proposals:
            return report
        # Proposals change no entry and are not gated (MEM-PRO-002): no approval, no row.
        with store.transaction():
            carried = pro.import_records(store, mapped.proposals)
        return {**report, "proposals": {"read": len(image.proposals), "carried": len(carried)}}
    additions = _restore_additions(writes, [])
    provider._check_budget(additions)
    payload, common_source, buckets = approval.seed_payload(
        [(e["track"], e["scope"], e["text"], e["source"]) for e in writes], [])
    decision = provider._approve("seed", ctx, payload, write, common_source,
                                 _one_bucket(buckets), None)

    def apply() -> dict[str, Any]:
        if store.state() != state:
            for entry in writes:
                if store.entry(entry["id"]) is not None:
                    raise MemoryProtocolError(
                        "IMPORT_CONFLICT", f"entry {entry['id']} was stored after the "
                        "migration was approved; nothing was changed, retry",
                        {"ids": [entry["id"]]})
            if carry_ledger and store.audit_rows(limit=1):
                raise MemoryProtocolError(
                    "STORE_BUSY", "the destination's ledger changed after the migration was "
                    "approved; nothing was changed, retry", {"path": str(store.path)})
        provider._check_budget(additions)
        if carry_ledger:
            for row in mapped.ledger:
                store.audit(row)
        now = provider.clock()
        provider._audit("seed", ctx, payload=payload, outcome=decision.label, ts=now)
        for entry in writes:
            store.insert(entry)
            provider._audit("add", ctx, entry=entry, outcome=decision.label, ts=now)
        # A proposal stored meanwhile with other content is an IMPORT_CONFLICT here too.
        carried = pro.import_records(store, mapped.proposals)
        return {**report, "added": len(writes),
                "ledgerRows": len(mapped.ledger) if carry_ledger else 0,
                "proposals": {"read": len(image.proposals), "carried": len(carried)}}

    return provider._commit("seed", ctx, payload, decision, apply, None)
