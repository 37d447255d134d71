"""The ``memory-export-v1`` envelope (spec chapter ``memory/export``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from .errors import MemoryProtocolError, invalid
from .inputs import MAX_SEED

SCHEMA = "memory-export-v1"
PLUGIN = "dshkit"
_KEPT = ("track", "scope", "text", "tags", "source")
_IGNORED = ("id", "workspaceKey", "agentKey", "version", "createdAt", "updatedAt", "lastRecalled",
            "recallCount", "sessionId")


def iso_utc(ms: int) -> str:
    moment = datetime.fromtimestamp(ms // 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"


def export_envelope(entries: list[dict[str, Any]], budgets: list[dict[str, Any]],
                    now: int) -> dict[str, Any]:
    """MEM-EXP-001."""
    return {"plugin": PLUGIN, "schema": SCHEMA, "exportedAt": iso_utc(now), "budgets": budgets,
            "entries": entries}


def envelope_entries(envelope: Any) -> list[dict[str, Any]]:
    """MEM-EXP-002/003: the seed inputs an envelope imports as (content kept, identity reset)."""
    if not isinstance(envelope, dict):
        raise invalid("/", "an export envelope must be an object")
    schema = envelope.get("schema")
    if schema != SCHEMA:
        raise MemoryProtocolError(
            "ENVELOPE_UNSUPPORTED", f"export envelope schema {schema!r} is not supported; this "
            f"reader imports only {SCHEMA}", {"schema": schema})
    for key in envelope:
        if key not in ("plugin", "schema", "exportedAt", "budgets", "entries"):
            raise invalid(f"/{key}", f"unknown envelope field {key!r}")
    plugin = envelope.get("plugin")
    if not isinstance(plugin, str) or plugin == "":
        raise invalid("/plugin", "plugin must be a non-empty string")
    if not isinstance(envelope.get("exportedAt"), str):
        raise invalid("/exportedAt", "exportedAt must be an ISO-8601 string")
    if not isinstance(envelope.get("budgets"), list):
        raise invalid("/budgets", "budgets must be an array")
    entries = envelope.get("entries")
    if not isinstance(entries, list) or not 1 <= len(entries) <= MAX_SEED:
        raise invalid("/entries", f"entries must be an array of 1 to {MAX_SEED} entries")
    _check_schema(envelope)
    out = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise invalid(f"/entries/{index}", "an entry must be an object")
        for key in entry:
            if key not in _KEPT and key not in _IGNORED:
                raise invalid(f"/entries/{index}/{key}", f"unknown entry field {key!r}")
        out.append({key: entry[key] for key in _KEPT if key in entry})
    return out


def _check_schema(envelope: dict[str, Any]) -> None:
    """The envelope against ``memory/v1/export-envelope.json`` (the first error, with its
    JSON pointer)."""
    from ...schemas import validator

    errors = sorted(validator("memory/v1/export-envelope.json").iter_errors(envelope),
                    key=lambda e: list(e.absolute_path))
    if errors:
        error = errors[0]
        where = "".join(f"/{part}" for part in error.absolute_path) or "/"
        raise invalid(where, error.message)
