"""The dshkit export envelope ``memory-export-v1`` as the lossless hub of every conversion
(spec chapter ``adapters/index``, section "The hub format")."""

from __future__ import annotations

import copy
from typing import Any

from dshkit.reference.memory.errors import MemoryProtocolError
from dshkit.reference.memory.exchange import envelope_entries, export_envelope
from dshkit.reference.memory.inputs import BUCKETS, MAX_SEED
from dshkit.reference.memory.provider import DEFAULT_BUDGETS

from .budget import check_budgets, limits_of, usage_of
from .entries import derived_id, read_entries
from .errors import OPTION, PAYLOAD, AdapterError
from .jsonio import load_json
from .model import AdaptResult, ExportResult
from .options import Options

FORMAT = "dshkit"
IMPORT_OPTIONS: frozenset[str] = frozenset()
EXPORT_OPTIONS = frozenset({"now", "budgets"})
_PLACEHOLDER = {"id": "00000000-0000-4000-8000-000000000000", "track": "user",
                "scope": "user-global", "workspaceKey": "", "agentKey": "", "text": "x",
                "source": "dshkit", "tags": [], "version": 1, "createdAt": 0, "updatedAt": 0,
                "lastRecalled": None, "recallCount": 0, "sessionId": None}


def adapt(payload: Any, *, options: dict[str, Any] | None = None) -> AdaptResult:
    """Every entry of the envelope, checked as the protocol's import checks it (MEM-EXP-002);
    ids, keys and bookkeeping are renewed on import by definition, so nothing is lost."""
    Options(options, IMPORT_OPTIONS)
    envelope = load_json(payload)
    if not isinstance(envelope, dict) or not isinstance(envelope.get("entries"), list):
        return AdaptResult(_checked(envelope, 0))
    entries = envelope["entries"]
    out: list[dict[str, Any]] = []
    chunks = [entries[i:i + MAX_SEED] for i in range(0, len(entries), MAX_SEED)] or [[]]
    for number, chunk in enumerate(chunks):
        part = dict(envelope)
        part["entries"] = chunk or [copy.deepcopy(_PLACEHOLDER)]
        found = _checked(part, number * MAX_SEED)
        out += found if chunk else []
    return AdaptResult([{k: e[k] for k in ("track", "scope", "text", "tags", "source")}
                        for e in out])


def _checked(envelope: Any, offset: int) -> list[dict[str, Any]]:
    try:
        return envelope_entries(envelope)
    except MemoryProtocolError as exc:
        pointer = str(exc.details.get("field", "/schema"))
        prefix = "/entries/"
        if offset and pointer.startswith(prefix):
            index, _, rest = pointer[len(prefix):].partition("/")
            if index.isdigit():
                pointer = f"{prefix}{int(index) + offset}" + (f"/{rest}" if rest else "")
        raise AdapterError(PAYLOAD, exc.message, pointer=pointer) from None


def export(entries: Any, *, options: dict[str, Any] | None = None) -> ExportResult:
    """A ``memory-export-v1`` envelope (plugin ``dshkit``) that imports into a store with the
    given limits; refused with the numbers when it would not fit (ADP-HUB-002)."""
    opts = Options(options, EXPORT_OPTIONS)
    now = opts.now()
    limits = limits_of(opts.raw.get("budgets", DEFAULT_BUDGETS))
    items = read_entries(entries)
    usage = usage_of(items)
    check_budgets(usage, limits, {})
    stored = []
    for index, entry in enumerate(items):
        created = entry.created_at if entry.created_at is not None else now
        updated = entry.updated_at if entry.updated_at is not None else created
        workspace = entry.member("workspaceKey")
        agent = entry.member("agentKey")
        version = entry.member("version")
        stored.append({
            "id": entry.id or derived_id(index, entry), "track": entry.track,
            "scope": entry.scope,
            "workspaceKey": workspace if isinstance(workspace, str) else "",
            "agentKey": agent if isinstance(agent, str) else "", "text": entry.text,
            "source": entry.source, "tags": list(entry.tags),
            "version": version if isinstance(version, int) and version >= 1 else 1,
            "createdAt": created, "updatedAt": max(updated, created),
            "lastRecalled": entry.member("lastRecalled"),
            "recallCount": entry.member("recallCount") or 0,
            "sessionId": entry.member("sessionId")})
    budgets = [{"track": t, "scope": s, "used": usage.get((t, s), 0), "limit": limits[(t, s)]}
               for t, s in BUCKETS]
    try:
        envelope = export_envelope(stored, budgets, now)
    except (ValueError, OverflowError, OSError):
        raise AdapterError(OPTION, "option 'now' is out of the range of dates",
                           key="now") from None
    return ExportResult(envelope, "json")
