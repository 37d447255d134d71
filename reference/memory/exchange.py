"""The ``memory-export-v1`` envelope (spec chapter ``memory/export``)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from .errors import MemoryProtocolError, invalid
from .inputs import BUCKETS, MAX_SEED, check_bucket, check_source, check_text, normalise_tags
from .keys import agent_key, workspace_key

SCHEMA = "memory-export-v1"
PLUGIN = "dshkit"
ENVELOPE_FIELDS = ("plugin", "schema", "exportedAt", "budgets", "entries")
#: MEM-EXP-005: optional members, after the required ones.
OPTIONAL_FIELDS = ("ledger",)
ENTRY_FIELDS = ("id", "track", "scope", "workspaceKey", "agentKey", "text", "source", "tags",
                "version", "createdAt", "updatedAt", "lastRecalled", "recallCount", "sessionId")
KEPT = ("track", "scope", "text", "tags", "source")
_EXPORTED_AT = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$")
_ANY_CASE_UUID4 = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$")


def iso_utc(ms: int) -> str:
    moment = datetime.fromtimestamp(ms // 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"


def export_envelope(entries: list[dict[str, Any]], budgets: list[dict[str, Any]],
                    now: int, ledger: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """MEM-EXP-001; the ``ledger`` section only when asked for (MEM-EXP-005)."""
    out = {"plugin": PLUGIN, "schema": SCHEMA, "exportedAt": iso_utc(now), "budgets": budgets,
           "entries": entries}
    if ledger is not None:
        out["ledger"] = ledger
    return out


def envelope_entries(envelope: Any) -> list[dict[str, Any]]:
    """MEM-EXP-002/003: the seed inputs an envelope imports as (content kept, identity reset)."""
    return [{key: item[key] for key in KEPT} for item in checked_entries(envelope)]


def restored_entries(envelope: Any) -> list[dict[str, Any]]:
    """MEM-CLI-004: the entries a restore writes, every member kept, in the stored form: ids
    lower-cased, keys normalised, a missing ``sessionId`` null, a ``user-global`` entry's
    workspace key ``""``. Two entries with one id are refused (field ``/entries/i/id``)."""
    out: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(checked_entries(envelope)):
        entry_id = item["id"].lower()
        if entry_id in seen:
            raise invalid(f"/entries/{index}/id", f"the same id as /entries/{seen[entry_id]}")
        seen[entry_id] = index
        workspace = "" if item["scope"] == "user-global" else workspace_key(item["workspaceKey"])
        out.append({**{key: item.get(key) for key in ENTRY_FIELDS}, "id": entry_id,
                    "workspaceKey": workspace, "agentKey": agent_key(item["agentKey"])})
    return out


def checked_entries(envelope: Any) -> list[dict[str, Any]]:
    """MEM-EXP-002: check an envelope member by member, in order, with pointers into the
    envelope (MEM-ERR-003); return its entries as found.

    dsh-memento's envelopes are accepted: any non-empty plugin, no ``sessionId``, any-case ids,
    any keys. Text, tags and source must follow dshkit's rules, because import keeps them.
    """
    if not isinstance(envelope, dict):
        raise invalid("/", "an export envelope must be an object")
    if envelope.get("schema") != SCHEMA:
        raise MemoryProtocolError(
            "ENVELOPE_UNSUPPORTED", f"export envelope schema {envelope.get('schema')!r} is not "
            f"supported; this reader imports only {SCHEMA}", {"schema": envelope.get("schema")})
    _only(envelope, ENVELOPE_FIELDS + OPTIONAL_FIELDS, "")
    for key in ENVELOPE_FIELDS:
        if key not in envelope:
            raise invalid(f"/{key}", "required")
    if not isinstance(envelope["plugin"], str) or envelope["plugin"] == "":
        raise invalid("/plugin", "plugin must be a non-empty string")
    if not isinstance(envelope["exportedAt"], str) or not _EXPORTED_AT.match(
            envelope["exportedAt"]):
        raise invalid("/exportedAt", "exportedAt must be YYYY-MM-DDTHH:MM:SS.mmmZ")
    rows = envelope["budgets"]
    if not isinstance(rows, list) or len(rows) != len(BUCKETS):
        raise invalid("/budgets", "budgets must be the four budget rows")
    for index, (row, bucket) in enumerate(zip(rows, BUCKETS, strict=True)):
        where = f"/budgets/{index}"
        if not isinstance(row, dict):
            raise invalid(where, "must be an object")
        _only(row, ("track", "scope", "used", "limit"), where)
        if (row.get("track"), row.get("scope")) != bucket:
            raise invalid(where, f"row {index} must be {bucket[0]}/{bucket[1]}")
        _integer(row.get("used"), 0, f"{where}/used")
        _integer(row.get("limit"), 1, f"{where}/limit")
    entries = envelope["entries"]
    if not isinstance(entries, list):
        raise invalid("/entries", "entries must be an array")
    out: list[dict[str, Any]] = [_entry(item, f"/entries/{index}")
                                 for index, item in enumerate(entries)]
    if not 1 <= len(out) <= MAX_SEED:
        raise invalid("/entries", f"entries must be an array of 1 to {MAX_SEED} entries")
    if "ledger" in envelope:  # MEM-EXP-005: a record of the exporting store, not imported
        ledger = envelope["ledger"]
        if not isinstance(ledger, list):
            raise invalid("/ledger", "ledger must be an array of audit rows")
        for index, row in enumerate(ledger):
            if not isinstance(row, dict):
                raise invalid(f"/ledger/{index}", "must be an object")
    return out


def _entry(item: Any, where: str) -> Any:
    if not isinstance(item, dict):
        raise invalid(where, "must be an object")
    _only(item, ENTRY_FIELDS, where)
    for key in ENTRY_FIELDS[:-1]:  # sessionId may be missing (dsh-memento 0.4)
        if key not in item:
            raise invalid(f"{where}/{key}", "required")
    if not isinstance(item["id"], str) or not _ANY_CASE_UUID4.match(item["id"]):
        raise invalid(f"{where}/id", "id must be a UUID v4")
    check_bucket(item, where)
    for key in ("workspaceKey", "agentKey"):
        if not isinstance(item[key], str):
            raise invalid(f"{where}/{key}", "must be a string")
    check_text(item["text"], f"{where}/text")
    if item["source"] is None:
        raise invalid(f"{where}/source", "source must be a non-empty string")
    check_source(item["source"], f"{where}/source")
    tags = item["tags"]
    if not isinstance(tags, list) or normalise_tags(tags, f"{where}/tags") != tags:
        raise invalid(f"{where}/tags", "tags must be stored tags: trimmed, distinct")
    _integer(item["version"], 1, f"{where}/version")
    _integer(item["createdAt"], 0, f"{where}/createdAt")
    _integer(item["updatedAt"], 0, f"{where}/updatedAt")
    if item["lastRecalled"] is not None:
        _integer(item["lastRecalled"], 0, f"{where}/lastRecalled")
    _integer(item["recallCount"], 0, f"{where}/recallCount")
    if item.get("sessionId") is not None and not isinstance(item["sessionId"], str):
        raise invalid(f"{where}/sessionId", "must be a string or null")
    return item


def _only(data: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    for key in data:
        if key not in allowed:
            raise invalid(f"{where}/{key}", f"unknown field {key!r}")


def _integer(value: Any, low: int, pointer: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise invalid(pointer, f"must be an integer of at least {low}")
