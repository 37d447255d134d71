"""The memory protocol JSON Schemas (``schemas/memory/v1``): well-formed, catalogued, linked to
the specification, and right about concrete valid and invalid instances."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from dshkit import schemas
from dshkit.spec_index import parse_requirements

REPO = Path(__file__).resolve().parents[1]
SPEC_MEMORY = REPO / "spec" / "memory"
PREFIX = schemas.SCHEMA_BASE + "memory/v1/"

FILES: tuple[str, ...] = (
    "add-input.json",
    "approval-payload.json",
    "audit-row.json",
    "budget-row.json",
    "budgets-report.json",
    "consolidate-input.json",
    "entry-input.json",
    "entry.json",
    "error.json",
    "export-envelope.json",
    "harness-call.json",
    "mcp-tools.json",
    "migrate-report.json",
    "proposal-input.json",
    "proposal.json",
    "query-filter.json",
    "query-result.json",
    "recall-result.json",
    "remove-input.json",
    "replace-input.json",
    "seed-input.json",
    "store-metadata.json",
    "write-context.json",
    "write-result.json",
)

ID1 = "0d6e2a9f-8b3c-4f51-8e7d-a4c1b0f93e26"
ID2 = "26c5d8e1-4b9a-4e7f-8d03-f1a6c2b9e548"
ID3 = "3f2b8c1e-5a7d-4e19-8c02-6d4a1b9e7f30"
LABEL = "allowed-once (via writePolicy auto from global)"
BUCKETS: tuple[tuple[str, str], ...] = (
    ("user", "user-global"),
    ("user", "workspace"),
    ("agent", "user-global"),
    ("agent", "workspace"),
)


# -- instance builders ----------------------------------------------------------------------


def entry(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": ID1,
        "track": "agent",
        "scope": "workspace",
        "workspaceKey": "/home/ana/shop",
        "agentKey": "coder",
        "text": "Prices are stored in cents",
        "source": "dshkit",
        "tags": ["domain"],
        "version": 1,
        "createdAt": 1700000000000,
        "updatedAt": 1700000000000,
        "lastRecalled": None,
        "recallCount": 0,
        "sessionId": "s-7",
    }
    base.update(changes)
    return base


def without(mapping: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k not in keys}


def usage(track: str = "agent", scope: str = "workspace", used: int = 26,
          limit: int = 4000) -> dict[str, Any]:
    return {"track": track, "scope": scope, "used": used, "limit": limit}


def report(rows: int = 4) -> list[dict[str, Any]]:
    limits = (2000, 2000, 4000, 4000)
    return [usage(t, s, 0, lim) for (t, s), lim in zip(BUCKETS, limits, strict=True)][:rows]


def write_context(**session: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"id": "s-7",
                            "header": {"cwd": "/home/ana/shop", "agentPreset": "Coder"}}
    body.update(session)
    return {"agent": {"session": body}}


def envelope(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "plugin": "dshkit",
        "schema": "memory-export-v1",
        "exportedAt": "2023-11-14T22:15:23.456Z",
        "budgets": report(),
        "entries": [entry()],
    }
    base.update(changes)
    return base


def audit_row(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "seq": 1,
        "ts": 1700000000000,
        "action": "add",
        "track": "agent",
        "scope": "workspace",
        "entryId": ID1,
        "text": "Prices are stored in cents",
        "outcome": LABEL,
        "source": "dshkit",
        "sessionId": "s-7",
        "entry": entry(),
        "entryIds": None,
    }
    base.update(changes)
    return base


def payload(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"action": "add", "track": "agent", "scope": "workspace",
                            "text": "Prefers pnpm", "source": "dshkit", "targets": []}
    base.update(changes)
    return base


ERRORS: dict[str, dict[str, Any]] = {
    "INVALID_INPUT": {"field": "/track", "reason": "track must be one of user, agent"},
    "WRITE_REQUIRES_AGENT": {},
    "BUDGET_EXCEEDED": {"track": "user", "scope": "user-global", "used": 12, "limit": 12,
                        "needed": 16},
    "ENTRY_NOT_FOUND": {"track": "user", "scope": "workspace", "match": "tea"},
    "AMBIGUOUS_MATCH": {"track": "user", "scope": "user-global", "match": "dark",
                        "candidates": 2, "sample": ["Prefers dark mode", "Likes DARK roast"]},
    "WRITE_DENIED": {"outcome": "rejected"},
    "STALE_WRITE": {"entryId": ID1, "expectedVersion": 3, "actualVersion": None},
    "PROPOSAL_NOT_FOUND": {"id": ID1},
    "STORE_CORRUPT": {"path": "/tmp/m.db", "reason": "not an SQLite database file"},
    "STORE_UNSUPPORTED_VERSION": {"path": "/tmp/m.db", "found": 5, "supported": 4},
    "STORE_BUSY": {"path": "/tmp/m.db"},
    "STORE_WRITE_FAILED": {"path": "/tmp/m.db", "reason": "database or disk is full"},
    "ENVELOPE_UNSUPPORTED": {"schema": "memory-export-v2"},
    "IMPORT_CONFLICT": {"ids": [ID1]},
    "SOURCE_INVALID": {"path": "/tmp/memento.db", "reason": "not a SQLite database"},
    "SOURCE_UNSUPPORTED_VERSION": {"path": "/tmp/memento.db", "found": 5,
                                   "supported": [1, 2, 3, 4]},
}


def error(code: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"code": code, "message": f"{code.lower()} happened",
            "details": ERRORS[code] if details is None else details}


# -- cases: (schema reference, instance, valid?) ----------------------------------------------

Case = tuple[str, str, Any, bool]


def _cases() -> Iterator[Case]:
    e = "entry.json"
    yield "entry: valid stored entry", e, entry(), True
    yield "entry: recalled entry", e, entry(lastRecalled=1700000090000, recallCount=4), True
    yield "entry: user-global with empty workspace key", e, entry(
        scope="user-global", workspaceKey=""), True
    yield "entry: upper-case UUID", e, entry(id=ID1.upper()), False
    yield "entry: UUID version 1", e, entry(id="0d6e2a9f-8b3c-1f51-8e7d-a4c1b0f93e26"), False
    yield "entry: UUID bad variant", e, entry(id="0d6e2a9f-8b3c-4f51-7e7d-a4c1b0f93e26"), False
    yield "entry: UUID with trailing newline", e, entry(id=ID1 + "\n"), False
    yield "entry: bad track", e, entry(track="team"), False
    yield "entry: bad scope", e, entry(scope="global"), False
    yield "entry: 16 tags", e, entry(tags=[f"t{i}" for i in range(16)]), True
    yield "entry: 17 tags", e, entry(tags=[f"t{i}" for i in range(17)]), False
    yield "entry: duplicate tags", e, entry(tags=["a", "a"]), False
    yield "entry: untrimmed tag", e, entry(tags=["a "]), False
    yield "entry: tag with no-break space edge", e, entry(tags=["\u00a0a"]), False
    yield "entry: tag with NUL", e, entry(tags=["a\u0000b"]), False
    yield "entry: 33-character tag", e, entry(tags=["x" * 33]), False
    # G8: 17 astral characters are 34 UTF-16 units but 17 code points; the schema's
    # maxLength is a necessary bound only, the provider refuses this tag.
    yield "entry: 17-emoji tag passes the schema", e, entry(tags=["\U0001f600" * 17]), True
    yield "entry: whitespace-only text", e, entry(text=" \t\u3000"), False
    yield "entry: text with NUL", e, entry(text="a\u0000b"), False
    yield "entry: text with DEL", e, entry(text="a\u007fb"), False
    yield "entry: text with TAB, LF and CR", e, entry(text="a\tb\nc\r\nd"), True
    yield "entry: empty text", e, entry(text=""), False
    yield "entry: empty source", e, entry(source=""), False
    yield "entry: 65-character source", e, entry(source="s" * 65), False
    yield "entry: missing sessionId", e, without(entry(), "sessionId"), False
    yield "entry: null sessionId", e, entry(sessionId=None), True
    yield "entry: extra member", e, entry(colour="red"), False
    yield "entry: user-global with a workspace key", e, entry(
        scope="user-global", workspaceKey="/w"), False
    yield "entry: version 0", e, entry(version=0), False
    yield "entry: negative recallCount", e, entry(recallCount=-1), False
    yield "entry: fractional createdAt", e, entry(createdAt=1.5), False
    yield "entry: boolean version", e, entry(version=True), False
    yield "entry: upper-case agent key", e, entry(agentKey="Coder"), False
    yield "entry: backslash in workspace key", e, entry(workspaceKey="C:\\Work"), False
    yield "entry: lower-case drive key", e, entry(workspaceKey="c:/Work/Proj"), True

    ei = "entry-input.json"
    yield "entry-input: minimal", ei, {"track": "user", "scope": "workspace", "text": "x"}, True
    yield "entry-input: full with nulls", ei, {
        "track": "user", "scope": "workspace", "text": "x", "tags": None, "source": None,
        "workspaceKey": None, "agentKey": None}, True
    yield "entry-input: raw tags", ei, {
        "track": "user", "scope": "workspace", "text": "x", "tags": ["b", " a ", "a", "b"]}, True
    yield "entry-input: explicit keys", ei, {
        "track": "agent", "scope": "workspace", "text": "x", "workspaceKey": "C:\\Work",
        "agentKey": "  Coder "}, True
    yield "entry-input: unknown member", ei, {
        "track": "user", "scope": "workspace", "text": "x", "tag": "pref"}, False
    yield "entry-input: bad track", ei, {"track": "team", "scope": "workspace", "text": "x"}, False
    yield "entry-input: missing text", ei, {"track": "user", "scope": "workspace"}, False
    yield "entry-input: tags not an array", ei, {
        "track": "user", "scope": "workspace", "text": "x", "tags": "pref"}, False
    yield "entry-input: empty source", ei, {
        "track": "user", "scope": "workspace", "text": "x", "source": ""}, False

    yield "add-input: valid", "add-input.json", {
        "track": "agent", "scope": "workspace", "text": "Prices are stored in cents",
        "tags": ["domain"]}, True
    yield "add-input: match is not a member", "add-input.json", {
        "track": "agent", "scope": "workspace", "text": "x", "match": "y"}, False

    ri = "replace-input.json"
    yield "replace-input: valid", ri, {
        "track": "agent", "scope": "workspace", "match": "TABS", "text": "Indent with 4 spaces",
        "tags": [], "source": "memory-tool"}, True
    yield "replace-input: missing match", ri, {
        "track": "agent", "scope": "workspace", "text": "x"}, False
    yield "replace-input: empty match", ri, {
        "track": "agent", "scope": "workspace", "match": "", "text": "x"}, False
    yield "replace-input: keys are not members", ri, {
        "track": "agent", "scope": "workspace", "match": "a", "text": "x",
        "workspaceKey": "/w"}, False

    yield "remove-input: valid", "remove-input.json", {
        "track": "user", "scope": "workspace", "match": " "}, True
    yield "remove-input: text is not a member", "remove-input.json", {
        "track": "user", "scope": "workspace", "match": "a", "text": "x"}, False

    ci = "consolidate-input.json"
    base_ci: dict[str, Any] = {"track": "agent", "scope": "workspace", "text": "merged"}
    yield "consolidate-input: two matches", ci, {**base_ci, "matches": ["a", "b"]}, True
    yield "consolidate-input: 20 matches", ci, {
        **base_ci, "matches": [f"m{i}" for i in range(20)]}, True
    yield "consolidate-input: 21 matches", ci, {
        **base_ci, "matches": [f"m{i}" for i in range(21)]}, False
    yield "consolidate-input: no match", ci, {**base_ci, "matches": []}, False
    yield "consolidate-input: empty match", ci, {**base_ci, "matches": ["a", ""]}, False

    si = "seed-input.json"
    one = {"track": "user", "scope": "user-global", "text": "Name: Ana"}
    yield "seed-input: one entry", si, [one], True
    yield "seed-input: 1000 entries", si, [one] * 1000, True
    yield "seed-input: empty batch", si, [], False
    yield "seed-input: 1001 entries", si, [one] * 1001, False
    yield "seed-input: bad element", si, [one, {"track": "user", "scope": "x", "text": "y"}], False

    wc = "write-context.json"
    yield "write-context: valid", wc, write_context(), True
    yield "write-context: never policy", wc, write_context(approvalPolicy="never"), True
    yield "write-context: open session object", wc, write_context(title="t", createdAt=1), True
    yield "write-context: no agent", wc, {}, False
    yield "write-context: agent not an object", wc, {"agent": "coder"}, False
    yield "write-context: unknown approval policy", wc, write_context(approvalPolicy="maybe"), False

    qf = "query-filter.json"
    yield "query-filter: empty", qf, {}, True
    yield "query-filter: all members", qf, {
        "track": "agent", "scope": "workspace", "text": "ruff", "limit": 2}, True
    yield "query-filter: nulls", qf, {
        "track": None, "scope": None, "text": None, "limit": None}, True
    yield "query-filter: limit above 1000 is clamped, not refused", qf, {"limit": 5000}, True
    yield "query-filter: limit 0", qf, {"limit": 0}, False
    yield "query-filter: boolean limit", qf, {"limit": True}, False
    yield "query-filter: fractional limit", qf, {"limit": 1.5}, False
    yield "query-filter: bad scope", qf, {"scope": "global"}, False
    yield "query-filter: unknown member", qf, {"colour": "red"}, False
    qo = "query-filter.json#/$defs/options"
    yield "query options: recall with reader", qo, {"reader": write_context(), "recall": True}, True
    yield "query options: null reader", qo, {"reader": None}, True
    yield "query options: recall not boolean", qo, {"recall": "yes"}, False
    yield "query options: unknown member", qo, {"session": "s"}, False

    qr = "query-result.json"
    yield "query-result: valid", qr, {
        "entries": [entry(recallCount=3)], "total": 3, "truncated": True}, True
    yield "query-result: missing truncated", qr, {"entries": [], "total": 0}, False
    yield "query-result: negative total", qr, {
        "entries": [], "total": -1, "truncated": False}, False

    rr = "recall-result.json"
    memory = {"entries": [entry(recallCount=1)], "total": 1, "truncated": False}
    hit = {"sessionId": "a", "createdAt": 5, "matches": 2, "snippets": ["x\ny", "z\u2026"]}
    failed = {"code": "SESSION_QUERY_INDEX_FAILED", "message": "no index"}
    yield "recall-result: with history", rr, {
        "memory": memory, "history": {"available": True, "sessions": [hit]}}, True
    yield "recall-result: no index", rr, {
        "memory": memory, "history": {"available": False, "sessions": []}}, True
    yield "recall-result: index failed", rr, {
        "memory": memory, "history": {"available": False, "sessions": [], "error": failed}}, True
    yield "recall-result: sessions while unavailable", rr, {
        "memory": memory, "history": {"available": False, "sessions": [hit]}}, False
    yield "recall-result: error while available", rr, {
        "memory": memory, "history": {"available": True, "sessions": [], "error": failed}}, False
    yield "recall-result: session without hits", rr, {
        "memory": memory, "history": {"available": True, "sessions": [
            {**hit, "matches": 0, "snippets": []}]}}, False
    yield "recall-result: missing history", rr, {"memory": memory}, False

    yield "budget-row: valid", "budget-row.json", usage(), True
    yield "budget-row: over the limit", "budget-row.json", usage(used=110, limit=100), True
    yield "budget-row: limit 0", "budget-row.json", usage(limit=0), False
    yield "budget-row: negative used", "budget-row.json", usage(used=-1), False
    yield "budget-row: batch track", "budget-row.json", usage(track="batch"), False

    br = "budgets-report.json"
    yield "budgets-report: four rows", br, report(), True
    yield "budgets-report: three rows", br, report(3), False
    yield "budgets-report: five rows", br, [*report(), usage()], False
    yield "budgets-report: wrong order", br, [report()[1], report()[0], *report()[2:]], False

    ap = "approval-payload.json"
    yield "approval-payload: add", ap, payload(), True
    yield "approval-payload: replace", ap, payload(
        action="replace", text="from:\nIndent with tabs\n\nto:\nIndent with 4 spaces",
        source="memory-tool", targets=[{"id": ID1, "version": 3}]), True
    yield "approval-payload: remove", ap, payload(
        action="remove", text="Uses yarn", source="mem0", targets=[{"id": ID2, "version": 1}]), True
    yield "approval-payload: consolidate", ap, payload(
        action="consolidate", text="remove: a\na\nremove: b\nb\nnew text: ab",
        targets=[{"id": ID1, "version": 1}, {"id": ID2, "version": 2}]), True
    yield "approval-payload: seed over several buckets", ap, payload(
        action="seed", track="batch", scope="batch", count=2,
        text="user/user-global: Name: Ana\nagent/workspace: CI runs on push"), True
    yield "approval-payload: seed without a shared source", ap, without(payload(
        action="seed", count=1, text="agent/workspace: x"), "source"), True
    yield "approval-payload: add with a count", ap, payload(count=1), False
    yield "approval-payload: add with a target", ap, payload(
        targets=[{"id": ID1, "version": 1}]), False
    yield "approval-payload: add without source", ap, without(payload(), "source"), False
    yield "approval-payload: seed without count", ap, payload(action="seed"), False
    yield "approval-payload: half batch", ap, payload(
        action="seed", count=1, track="batch", scope="workspace"), False
    yield "approval-payload: batch on add", ap, payload(track="batch", scope="batch"), False
    yield "approval-payload: replace with two targets", ap, payload(
        action="replace", targets=[{"id": ID1, "version": 1}, {"id": ID2, "version": 1}]), False
    yield "approval-payload: target with upper-case id", ap, payload(
        action="remove", targets=[{"id": ID1.upper(), "version": 1}]), False

    ar = "audit-row.json"
    rp = "audit-row.json#/$defs/replayable"
    legacy = audit_row(entry=None)
    recalled = audit_row(action="recalled", track=None, scope=None, entryId=None, text="ruff",
                         outcome="ok", entry=None, entryIds=[ID2, ID1])
    snapshot = audit_row(action="snapshot", track=None, scope=None, entryId=None, text="",
                         outcome="ok", entry=None)
    failed = audit_row(action="replace-failed", entryId=None, entry=None,
                       text="from:\na\n\nto:\nb",
                       outcome="allowed-once (via gate, writePolicy ask from global); "
                               "not applied: STALE_WRITE")
    denied = audit_row(action="seed-denied", track=None, scope=None, entryId=None, entry=None,
                       text="user/user-global: a\nagent/workspace: b",
                       outcome="rejected (via session never)")
    yield "audit-row: add", ar, audit_row(), True
    yield "audit-row: add, replayable", rp, audit_row(), True
    yield "audit-row: row from store version 2", ar, legacy, True
    yield "audit-row: row from store version 2 is not replayable", rp, legacy, False
    yield "audit-row: recalled", rp, recalled, True
    yield "audit-row: snapshot", rp, snapshot, True
    yield "audit-row: replace-failed", rp, failed, True
    yield "audit-row: seed-denied", rp, denied, True
    yield "audit-row: recalled with an approval outcome", ar, {**recalled, "outcome": LABEL}, False
    yield "audit-row: recalled with an entry", ar, {**recalled, "entry": entry()}, False
    yield "audit-row: failed row without the code", ar, {**failed, "outcome": LABEL}, False
    yield "audit-row: add without a label", ar, audit_row(outcome="ok"), False
    yield "audit-row: add without entry id", ar, audit_row(entryId=None), False
    yield "audit-row: batch track", ar, {**denied, "track": "batch", "scope": "batch"}, False
    yield "audit-row: unknown action", ar, audit_row(action="consolidate"), False
    yield "audit-row: seq 0", ar, audit_row(seq=0), False
    yield "audit-row: missing entryIds", ar, without(audit_row(), "entryIds"), False

    for code in ERRORS:
        yield f"error: {code}", "error.json", error(code), True
    yield "error: store corrupt without path", "error.json", error(
        "STORE_CORRUPT", {"reason": "tags column is not a JSON array of strings"}), True
    yield "error: envelope without schema", "error.json", error(
        "ENVELOPE_UNSUPPORTED", {"schema": None}), True
    yield "error: unknown code", "error.json", {
        "code": "MEMORY_DISABLED", "message": "m", "details": {}}, False
    yield "error: budget without needed", "error.json", error(
        "BUDGET_EXCEEDED", without(ERRORS["BUDGET_EXCEEDED"], "needed")), False
    yield "error: budget with a batch bucket", "error.json", error(
        "BUDGET_EXCEEDED", {**ERRORS["BUDGET_EXCEEDED"], "track": "batch"}), False
    yield "error: details on WRITE_REQUIRES_AGENT", "error.json", error(
        "WRITE_REQUIRES_AGENT", {"path": "/"}), False
    yield "error: denied with the approving outcome", "error.json", error(
        "WRITE_DENIED", {"outcome": "allowed-once"}), False
    yield "error: six samples", "error.json", error(
        "AMBIGUOUS_MATCH", {**ERRORS["AMBIGUOUS_MATCH"], "candidates": 6,
                            "sample": ["s"] * 6}), False
    yield "error: one candidate is not ambiguous", "error.json", error(
        "AMBIGUOUS_MATCH", {**ERRORS["AMBIGUOUS_MATCH"], "candidates": 1}), False
    yield "error: stale write version 0", "error.json", error(
        "STALE_WRITE", {**ERRORS["STALE_WRITE"], "actualVersion": 0}), False
    yield "error: supported envelope is not unsupported", "error.json", error(
        "ENVELOPE_UNSUPPORTED", {"schema": "memory-export-v1"}), False
    yield "error: field is not a pointer", "error.json", error(
        "INVALID_INPUT", {"field": "track", "reason": "r"}), False
    yield "error: unsupported version supports 3", "error.json", error(
        "STORE_UNSUPPORTED_VERSION", {"path": "/p", "found": 5, "supported": 3}), False
    yield "error: extra top-level member", "error.json", {**error("STORE_BUSY"), "usage": 1}, False
    yield "error: empty message", "error.json", {**error("STORE_BUSY"), "message": ""}, False

    ee = "export-envelope.json"
    de = "export-envelope.json#/$defs/dshkitExport"
    memento_entry = without(entry(scope="user-global", workspaceKey="/home/ana/shop",
                                  source="dsh-memento"), "sessionId")
    memento = envelope(plugin="dsh-memento", entries=[memento_entry])
    yield "export-envelope: dshkit export", de, envelope(), True
    yield "export-envelope: dshkit export at the root", ee, envelope(), True
    yield "export-envelope: empty store", de, envelope(entries=[]), True
    yield "export-envelope: dsh-memento export is importable", ee, memento, True
    yield "export-envelope: dsh-memento export is not a dshkit export", de, memento, False
    yield "export-envelope: more than 1000 entries is a valid export", ee, envelope(
        entries=[entry()] * 1001), True
    yield "export-envelope: wrong schema string", ee, envelope(schema="memory-export-v2"), False
    yield "export-envelope: three budget rows", ee, envelope(budgets=report(3)), False
    yield "export-envelope: exportedAt without milliseconds", ee, envelope(
        exportedAt="2023-11-14T22:15:23Z"), False
    yield "export-envelope: exportedAt not UTC", ee, envelope(
        exportedAt="2023-11-14T22:15:23.456+01:00"), False
    yield "export-envelope: empty plugin", ee, envelope(plugin=""), False
    yield "export-envelope: unknown member", ee, envelope(version=1), False
    yield "export-envelope: entry text of spaces", ee, envelope(entries=[entry(text="  ")]), False

    wr = "write-result.json"
    yield "write-result: add", wr, {"entry": entry(), "usage": usage()}, True
    yield "write-result: replace", "write-result.json#/$defs/replaceResult", {
        "previous": entry(), "entry": entry(version=2), "usage": usage()}, True
    yield "write-result: consolidate", "write-result.json#/$defs/consolidateResult", {
        "removed": [entry(id=ID2), entry(id=ID3)], "entry": entry(), "usage": usage()}, True
    yield "write-result: seed", "write-result.json#/$defs/seedResult", {
        "added": 1, "entries": [entry()]}, True
    yield "write-result: entry without usage", wr, {"entry": entry()}, False
    yield "write-result: seed of nothing", wr, {"added": 0, "entries": []}, False
    yield "write-result: replace without previous", "write-result.json#/$defs/replaceResult", {
        "entry": entry(), "usage": usage()}, False

    sm = "store-metadata.json"
    meta = {"applicationId": 1146309453, "userVersion": 4, "path": "/tmp/memory.db"}
    yield "store-metadata: valid", sm, meta, True
    yield "store-metadata: old version", sm, {**meta, "userVersion": 3}, False
    yield "store-metadata: foreign application id", sm, {**meta, "applicationId": 0}, False
    yield "store-metadata: extra member", sm, {**meta, "journalMode": "wal"}, False

    hc = "harness-call.json"
    call = {"op": "add",
            "input": {"track": "agent", "scope": "workspace",
                      "text": "Prices are stored in cents", "tags": ["domain"]},
            "write": write_context()}
    response = {"ok": True, "result": {"entry": entry(), "usage": usage()}}
    failure = {"ok": False, "error": error("WRITE_REQUIRES_AGENT")}
    yield "harness: add call", f"{hc}#/$defs/call", call, True
    yield "harness: add call at the root", hc, call, True
    yield "harness: add response", f"{hc}#/$defs/response", response, True
    yield "harness: add result", f"{hc}#/$defs/result-add", response["result"], True
    yield "harness: failure response", f"{hc}#/$defs/response", failure, True
    yield "harness: invalid input is passed verbatim", f"{hc}#/$defs/call", {
        "op": "add", "input": 42, "write": {}}, True
    yield "harness: query call", f"{hc}#/$defs/call", {
        "op": "query", "input": {"text": "cents"},
        "opts": {"reader": write_context(), "recall": True}}, True
    yield "harness: bare query", f"{hc}#/$defs/call", {"op": "query"}, True
    yield "harness: close", f"{hc}#/$defs/call", {"op": "close"}, True
    yield "harness: close result", f"{hc}#/$defs/result-close", None, True
    yield "harness: approve_proposal call", f"{hc}#/$defs/call", {
        "op": "approve_proposal", "input": {"id": ID1}, "write": write_context()}, True
    yield "harness: proposals call without write", f"{hc}#/$defs/call", {
        "op": "proposals", "input": {"status": "pending"}}, True
    yield "harness: propose call without write", f"{hc}#/$defs/call", {
        "op": "propose", "input": {}}, False

    pending = {"id": ID1, "kind": "compaction-summary", "track": "agent", "scope": "workspace",
               "workspaceKey": "/home/ana/shop", "agentKey": "coder", "text": "Uses nox",
               "source": "dshkit", "sessionId": "s-7", "status": "pending",
               "createdAt": 1700000000000, "decidedAt": None, "entryId": None}
    approved = {**pending, "status": "approved", "decidedAt": 1700000001000, "entryId": ID2}
    pr = "proposal.json"
    yield "proposal: pending", pr, pending, True
    yield "proposal: approved", pr, approved, True
    yield "proposal: dismissed", pr, {**approved, "status": "dismissed", "entryId": None}, True
    yield "proposal: pending with a decision time", pr, {**pending, "decidedAt": 1}, False
    yield "proposal: decided without a decision time", pr, {**approved, "decidedAt": None}, False
    yield "proposal: dismissed with an entry", pr, {**approved, "status": "dismissed"}, False
    yield "proposal: unknown status", pr, {**pending, "status": "expired"}, False
    yield "proposal: upper-case kind", pr, {**pending, "kind": "Summary"}, False
    yield "proposal: propose result", f"{pr}#/$defs/proposeResult", {
        "proposal": pending, "created": False}, True
    yield "proposal: approve result", f"{pr}#/$defs/approveResult", {
        "proposal": approved, "entry": entry(), "usage": usage()}, True
    yield "proposal: dismiss result without proposal", f"{pr}#/$defs/dismissResult", {}, False

    pi = "proposal-input.json"
    proposed = {"kind": "compaction-summary", "track": "agent", "scope": "workspace",
                "text": "Uses nox"}
    yield "proposal-input: valid", pi, proposed, True
    yield "proposal-input: with source and keys", pi, {
        **proposed, "source": "compaction", "workspaceKey": "/w", "agentKey": "coder"}, True
    yield "proposal-input: tags are not proposed", pi, {**proposed, "tags": ["a"]}, False
    yield "proposal-input: no kind", pi, {k: v for k, v in proposed.items() if k != "kind"}, False
    yield "proposal-input: text over 2000", pi, {**proposed, "text": "x" * 2001}, False
    yield "proposal-input: filter", f"{pi}#/$defs/filter", {"status": "pending", "limit": 8}, True
    yield "proposal-input: filter limit 0", f"{pi}#/$defs/filter", {"limit": 0}, False
    yield "proposal-input: decision", f"{pi}#/$defs/decision", {"id": ID1}, True
    yield "proposal-input: empty decision id", f"{pi}#/$defs/decision", {"id": ""}, False
    yield "harness: unknown op", f"{hc}#/$defs/call", {"op": "open"}, False
    yield "harness: add without write", f"{hc}#/$defs/call", without(call, "write"), False
    yield "harness: budgets with input", f"{hc}#/$defs/call", {"op": "budgets", "input": {}}, False
    yield "harness: snapshot with input", f"{hc}#/$defs/call", {
        "op": "snapshot", "write": write_context(), "input": {}}, False
    yield "harness: response with a bad error", f"{hc}#/$defs/response", {
        "ok": False, "error": {"code": "ENTRY_NOT_FOUND", "message": "m", "details": {}}}, False
    yield "harness: success without result", f"{hc}#/$defs/response", {"ok": True}, False
    yield "harness: response with result and error", f"{hc}#/$defs/response", {
        **response, "error": error("STORE_BUSY")}, False
    ho = f"{hc}#/$defs/options"
    yield "harness options: full", ho, {
        "budgets": {"user": {"userGlobal": 12, "workspace": 2000},
                    "agent": {"userGlobal": 4000, "workspace": 4000}},
        "writePolicy": "ask",
        "writePolicies": {"agent/user-global": "auto", "source:claude": "auto"},
        "auditRetentionDays": 0}, True
    yield "harness options: none", ho, {}, True
    yield "harness options: zero limit", ho, {
        "budgets": {"user": {"userGlobal": 0, "workspace": 1},
                    "agent": {"userGlobal": 1, "workspace": 1}}}, False
    yield "harness options: partial budgets", ho, {"budgets": {"user": {"userGlobal": 1}}}, False
    yield "harness options: bad policy", ho, {"writePolicy": "always"}, False
    yield "harness options: upper-case source key", ho, {
        "writePolicies": {"source:Claude": "auto"}}, False
    yield "harness options: source key with a newline", ho, {
        "writePolicies": {"source:claude\n": "auto"}}, False
    yield "harness options: bad bucket key", ho, {"writePolicies": {"user/global": "off"}}, False
    yield "harness options: negative retention", ho, {"auditRetentionDays": -1}, False
    mr = "migrate-report.json"
    migrated = {"source": "/m.db", "sourceVersion": 3, "added": 1, "skipped": [],
                "ledgerRows": 1, "proposals": {"read": 1, "carried": 0},
                "losses": [{"kind": "entry", "id": "x", "field": "/text", "reason": "blank"},
                           {"kind": "proposals", "ids": ["p"],
                            "reason": "this dshkit store has no proposals table"}]}
    yield "migrate report: valid", mr, migrated, True
    yield "migrate report: version 5", mr, {**migrated, "sourceVersion": 5}, False
    yield "migrate report: unknown loss kind", mr, {**migrated, "losses": [
        {"kind": "budget", "reason": "x"}]}, False
    yield "error: import conflict without ids", "error.json", error("IMPORT_CONFLICT", {}), False
    yield "error: source version 4", "error.json", error(
        "SOURCE_UNSUPPORTED_VERSION", {"path": "/m.db", "found": 4, "supported": [1, 2, 3, 4]}), \
        False

    mt = "mcp-tools.json"
    yield "mcp: tool call", mt, {"name": "memory_search", "arguments": {"text": "ruff"}}, True
    yield "mcp: write-shaped tool call", mt, {"name": "memory_add", "arguments": {}}, False
    yield "mcp: search input", f"{mt}#/$defs/memory_search-input", {
        "text": None, "track": "agent", "limit": 5}, True
    yield "mcp: search input, limit 0", f"{mt}#/$defs/memory_search-input", {"limit": 0}, False
    yield "mcp: list input, negative offset", f"{mt}#/$defs/memory_list-input", {
        "offset": -1}, False
    yield "mcp: read input without id", f"{mt}#/$defs/memory_read-input", {}, False
    yield "mcp: stats input with a member", f"{mt}#/$defs/memory_stats-input", {"x": 1}, False
    yield "mcp: list result", f"{mt}#/$defs/memory_list-result", {
        "entries": [entry()], "total": 2, "offset": 0, "nextOffset": 1}, True
    yield "mcp: list result, nextOffset 0", f"{mt}#/$defs/memory_list-result", {
        "entries": [], "total": 0, "offset": 0, "nextOffset": 0}, False
    yield "mcp: read result, invisible", f"{mt}#/$defs/memory_read-result", {"entry": None}, True
    yield "mcp: stats result", f"{mt}#/$defs/memory_stats-result", {"total": 0, "buckets": [
        {"track": t, "scope": s, "count": 0, "used": 0, "limit": 1}
        for t in ("user", "agent") for s in ("user-global", "workspace")]}, True
    yield "mcp: stats result, three buckets", f"{mt}#/$defs/memory_stats-result", {
        "total": 0, "buckets": []}, False
    yield "mcp: tool error", f"{mt}#/$defs/tool-error", {"error": error("STORE_BUSY")}, True


CASES: tuple[Case, ...] = tuple(_cases())


# -- schema files -----------------------------------------------------------------------------


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def test_every_memory_schema_is_packaged() -> None:
    packaged = {uri for uri in schemas.schema_uris() if uri.startswith(PREFIX)}
    assert packaged == {PREFIX + name for name in FILES}


def test_every_memory_schema_is_catalogued() -> None:
    memory = [item for item in schemas.catalog() if item["layer"] == "memory"]
    assert sorted(item["path"] for item in memory) == sorted(f"memory/v1/{n}" for n in FILES)
    for item in memory:
        document = schemas.load(item["path"])
        assert item["$id"] == document["$id"] == schemas.SCHEMA_BASE + item["path"]
        assert item["title"] == document["title"]
    ids = [item["$id"] for item in schemas.catalog()]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("name", FILES)
def test_schema_is_valid_draft_2020_12(name: str) -> None:
    document = schemas.load(f"memory/v1/{name}")
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert document["$id"] == PREFIX + name
    assert document["title"]
    assert document["description"]
    Draft202012Validator.check_schema(document)


@pytest.mark.parametrize("name", FILES)
def test_every_reference_resolves_offline(name: str) -> None:
    uri = PREFIX + name
    resolver = schemas.registry().resolver(base_uri=uri)
    refs = list(_refs(schemas.load(uri)))
    for ref in refs:
        resolver.lookup(ref)
    schemas.validator(uri)


def _memory_requirement_ids() -> set[str]:
    ids: set[str] = set()
    for path in sorted(SPEC_MEMORY.glob("*.md")):
        for requirement in parse_requirements(path.read_text(encoding="utf-8"), path.name):
            ids.add(requirement.id)
    return ids


@pytest.mark.parametrize("name", FILES)
def test_x_requirements_name_memory_requirements(name: str) -> None:
    document = schemas.load(f"memory/v1/{name}")
    listed = document["x-requirements"]
    assert isinstance(listed, list)
    assert listed
    assert len(listed) == len(set(listed))
    unknown = sorted(set(listed) - _memory_requirement_ids())
    assert unknown == []


# -- instances ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("schema", "instance", "valid"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_instance(schema: str, instance: Any, valid: bool) -> None:
    found = schemas.errors(f"memory/v1/{schema}", copy.deepcopy(instance))
    messages = [f"{list(e.absolute_path)}: {e.message[:120]}" for e in found]
    assert (not found) is valid, messages


def test_every_schema_has_a_valid_and_an_invalid_case() -> None:
    for name in FILES:
        mine = [valid for _, schema, _, valid in CASES if schema.split("#")[0] == name]
        assert True in mine, name
        assert False in mine, name


def test_one_error_example_per_code() -> None:
    document = schemas.load("memory/v1/error.json")
    assert sorted(document["properties"]["code"]["enum"]) == sorted(ERRORS)
    assert sorted(document["$defs"]["details"]) == sorted(ERRORS)


# -- the examples in the specification are valid instances ---------------------------------------


def _json_blocks(chapter: str) -> list[str]:
    text = (SPEC_MEMORY / chapter).read_text(encoding="utf-8")
    return re.findall(r"```json\n(.*?)\n```", text, re.DOTALL)


def test_error_examples_in_the_specification() -> None:
    blocks = [b for b in _json_blocks("errors.md") if b.startswith('{"code": "INVALID_INPUT"')]
    assert len(blocks) == 1
    lines = blocks[0].splitlines()
    assert sorted(json.loads(line)["code"] for line in lines) == sorted(ERRORS)
    for line in lines:
        assert schemas.errors("memory/v1/error.json", json.loads(line)) == [], line


def test_export_example_in_the_specification() -> None:
    blocks = [b for b in _json_blocks("export.md") if '"plugin": "dshkit"' in b]
    assert len(blocks) == 1
    example = json.loads(blocks[0])
    assert schemas.errors("memory/v1/export-envelope.json#/$defs/dshkitExport", example) == []


def test_approval_payload_examples_in_the_specification() -> None:
    blocks = [b for b in _json_blocks("approval.md") if b.startswith('{"action"')]
    assert [json.loads(b)["action"] for b in blocks] == [
        "add", "replace", "remove", "consolidate", "seed"]
    for block in blocks:
        assert schemas.errors("memory/v1/approval-payload.json", json.loads(block)) == [], block


def test_harness_examples_in_the_specification() -> None:
    checked = 0
    for block in _json_blocks("provider.md"):
        for text in block.split("\n") if block.startswith('{"op": "query"') else [block]:
            value = json.loads(text)
            if "op" in value:
                ref = "memory/v1/harness-call.json#/$defs/call"
            elif "ok" in value:
                ref = "memory/v1/harness-call.json#/$defs/response"
            else:
                ref = "memory/v1/write-context.json"
            assert schemas.errors(ref, value) == [], text
            checked += 1
    assert checked >= 5
