"""An executable, in-memory model of the dshkit memory protocol v1 (``ctx.memory``).

Importable as ``dshkit.conformance.memory_model``. Pure Python, no dependencies, written from
the specification (``spec/memory``, requirement ids ``MEM-…``), not from the reference
provider: the kit and the test suite drive an implementation and this model with the same calls
and compare results, errors, budgets, the audit ledger and the approval payloads.

The model has the provider surface (MEM-PRV-001): ``add``, ``replace``, ``remove``,
``consolidate``, ``seed``, ``query``, ``budgets``, ``list_entries``, ``audit_list``,
``snapshot``, ``export``, ``import_envelope`` and ``close``, with the same JSON inputs and
outputs, and an injectable ``gate``, ``clock`` and ``ids``. Failures raise :class:`ModelError`
carrying the canonical ``{code, message, details}`` (MEM-ERR-001). :func:`replay` is the
reconstruction algorithm of MEM-AUD-005; :meth:`MemoryModel.reopen` models reopening a store
with other settings (budgets, policies, retention).

Where the specification leaves a detail open the model says so in a ``Contract silent``
comment and does what the reference provider does.
"""

from __future__ import annotations

import copy
import re
import time
import unicodedata
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

Entry = dict[str, Any]
AuditRow = dict[str, Any]
Gate = Callable[[dict[str, Any], Any], object]
Clock = Callable[[], int]
IdFactory = Callable[[], str]

TRACKS = ("user", "agent")
SCOPES = ("user-global", "workspace")
#: MEM-BUD-005: the fixed bucket order of every report.
BUCKETS: tuple[tuple[str, str], ...] = (
    ("user", "user-global"), ("user", "workspace"), ("agent", "user-global"),
    ("agent", "workspace"))
DEFAULT_BUDGETS: dict[str, dict[str, int]] = {
    "user": {"userGlobal": 2000, "workspace": 2000},
    "agent": {"userGlobal": 4000, "workspace": 4000}}
DEFAULT_SOURCE = "dshkit"
POLICIES = ("ask", "auto", "off")
APPROVED = "allowed-once"
MAX_TAGS, MAX_TAG_UNITS, MAX_SOURCE_UNITS = 16, 32, 64
MAX_CONSOLIDATE, MAX_SEED = 20, 1000
DEFAULT_QUERY_LIMIT, MAX_QUERY_LIMIT = 20, 1000
SAMPLE_SIZE, SAMPLE_UNITS, EXCERPT_UNITS = 5, 200, 300
ELLIPSIS = "\u2026"
EXPORT_SCHEMA, EXPORT_PLUGIN = "memory-export-v1", "dshkit"
ENTRY_FIELDS = ("id", "track", "scope", "workspaceKey", "agentKey", "text", "source", "tags",
                "version", "createdAt", "updatedAt", "lastRecalled", "recallCount", "sessionId")
AUDIT_FIELDS = ("seq", "ts", "action", "track", "scope", "entryId", "text", "outcome", "source",
                "sessionId", "entry", "entryIds")

#: ECMAScript WhiteSpace and LineTerminator code points (what String.prototype.trim removes).
JS_WHITESPACE = frozenset(
    "\u0009\u000a\u000b\u000c\u000d\u0020\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")
LINE_BREAKS = ("\r\n", "\n", "\r", "\u0085", "\u2028", "\u2029")
SNAPSHOT_HEADER = ("[Memory snapshot: frozen at session start. Changes made during this session "
                   "do not update it; use the memory tool to read or change memory.]")
SNAPSHOT_TITLES: dict[tuple[str, str], str] = {
    ("user", "user-global"): "User profile (global preferences, communication style, landmines)",
    ("user", "workspace"): "User preferences for this workspace",
    ("agent", "user-global"): "Environment facts and conventions (cross-workspace)",
    ("agent", "workspace"): "Workspace facts, conventions, and lessons",
}
#: MEM-PRO-009: dsh-memento's heading of the pending proposals.
PROPOSALS_TITLE = ("Pending memory proposals (reviewed by the user; approve or dismiss via the "
                   "/memory proposals command)")
PROPOSAL_STATUSES = ("pending", "approved", "dismissed")
MAX_PROPOSAL_UNITS, PROPOSALS_SHOWN = 2000, 8  # MEM-PRO-003, MEM-PRO-009
_KIND = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
_POLICY_KEY = re.compile(r"^(?:(?:user|agent)/(?:user-global|workspace)|source:[a-z0-9-]+)$")
_UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


class ModelError(Exception):
    """A protocol error: the canonical ``{code, message, details}`` (MEM-ERR-001)."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details: dict[str, Any] = details if details is not None else {}

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details}

    def __repr__(self) -> str:
        return f"ModelError({self.code!r}, {self.message!r}, {self.details!r})"


def _invalid(pointer: str, reason: str) -> ModelError:
    return ModelError("INVALID_INPUT", f"invalid input at {pointer or '/'}: {reason}",
                      {"field": pointer, "reason": reason})


# -- strings -----------------------------------------------------------------------------------

def units(text: str) -> int:
    """Length in UTF-16 code units: ``len(s.encode("utf-16-le")) // 2`` for valid text."""
    return sum(2 if ord(ch) > 0xFFFF else 1 for ch in text)


def cut_units(text: str, limit: int) -> str:
    """The longest prefix of at most ``limit`` units; never ends inside a surrogate pair."""
    used = 0
    for index, ch in enumerate(text):
        width = 2 if ord(ch) > 0xFFFF else 1
        if used + width > limit:
            return text[:index]
        used += width
    return text


def excerpt(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` units, plus "…" (U+2026) when it was longer."""
    return text if units(text) <= limit else cut_units(text, limit) + ELLIPSIS


def js_trim(text: str) -> str:
    start, end = 0, len(text)
    while start < end and text[start] in JS_WHITESPACE:
        start += 1
    while end > start and text[end - 1] in JS_WHITESPACE:
        end -= 1
    return text[start:end]


def ascii_fold(text: str) -> str:
    """MEM-MAT-001: A-Z to a-z, nothing else."""
    return "".join(chr(ord(ch) + 32) if "A" <= ch <= "Z" else ch for ch in text)


def one_line(text: str) -> str:
    """MEM-SNP-002: every line break (CRLF counts once) becomes one space."""
    for brk in LINE_BREAKS:
        text = text.replace(brk, " ")
    return text


def _is_surrogate(ch: str) -> bool:
    return 0xD800 <= ord(ch) <= 0xDFFF


def _has_control(text: str) -> bool:
    return any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text)


# -- keys and visibility (MEM-KEY-001..004) ----------------------------------------------------

def workspace_key(cwd: object) -> str:
    """MEM-KEY-001: the portable, lexical normalisation of a working directory."""
    if not isinstance(cwd, str) or cwd == "":
        return ""
    path = unicodedata.normalize("NFC", cwd.replace("\\", "/"))
    drive = ""
    if len(path) >= 2 and path[1] == ":" and path[0].isascii() and path[0].isalpha():
        drive, path = path[0].lower() + ":", path[2:]
    rooted = path.startswith("/")
    stack: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if stack and stack[-1] != "..":
                stack.pop()
            elif not rooted:
                stack.append("..")  # a relative path keeps its leading ".." segments
            continue  # ".." at the root stays at the root
        stack.append(segment)
    body = ("/" if rooted else "") + "/".join(stack)
    if body == "" and not drive:
        body = "."  # Contract silent: a relative path that cancels out; reference gives "."
    return drive + body


def agent_key(preset: object) -> str:
    """MEM-KEY-002: ECMAScript trim, NFC, ASCII lower-case."""
    if not isinstance(preset, str):
        return ""
    return ascii_fold(unicodedata.normalize("NFC", js_trim(preset)))


def visible(entry: Mapping[str, Any], workspace: str, agent: str) -> bool:
    """MEM-KEY-004."""
    return (entry["agentKey"] in ("", agent)) and (
        entry["scope"] == "user-global" or entry["workspaceKey"] == workspace)


@dataclass(frozen=True, slots=True)
class Writer:
    """The writer (or reader) context derived from ``write.agent.session``."""

    session_id: str | None
    workspace: str
    agent: str
    approval_policy: str | None


def writer_of(write: object) -> Writer:
    """MEM-WRT-001: no ``write.agent`` object → WRITE_REQUIRES_AGENT."""
    agent = write.get("agent") if isinstance(write, dict) else None
    if not isinstance(agent, dict):
        raise ModelError("WRITE_REQUIRES_AGENT", "a memory write needs the owning agent "
                         "(write.agent with its session); nothing was changed", {})
    session = agent.get("session")
    session = session if isinstance(session, dict) else {}
    header = session.get("header")
    header = header if isinstance(header, dict) else {}
    sid, policy = session.get("id"), session.get("approvalPolicy")
    return Writer(sid if isinstance(sid, str) else None, workspace_key(header.get("cwd")),
                  agent_key(header.get("agentPreset")),
                  policy if isinstance(policy, str) else None)


# -- input validation (MEM-ENT-002..009) -------------------------------------------------------

def normalise_tags(value: object, pointer: str = "/tags") -> list[str]:
    """MEM-ENT-004, the exact algorithm."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise _invalid(pointer, "tags must be an array of strings")
    out: list[str] = []
    for index, raw in enumerate(value):
        where = f"{pointer}/{index}"
        if not isinstance(raw, str):
            raise _invalid(where, "each tag must be a string")
        tag = js_trim(raw)
        if tag == "":
            raise _invalid(where, "a tag must not be empty after trimming")
        if _has_control(tag):
            raise _invalid(where, "a tag must not contain control characters")
        if units(tag) > MAX_TAG_UNITS:
            raise _invalid(where, f"a tag must be at most {MAX_TAG_UNITS} UTF-16 units")
        if any(_is_surrogate(ch) for ch in tag):
            raise _invalid(where, "a tag must not contain lone surrogates")
        if tag not in out:
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise _invalid(pointer, f"at most {MAX_TAGS} distinct tags")
    return out


def check_text(value: object, pointer: str = "/text") -> str:
    """MEM-ENT-003."""
    if not isinstance(value, str) or js_trim(value) == "":
        raise _invalid(pointer, "text must have at least one non-whitespace character")
    for ch in value:
        if (ord(ch) < 0x20 and ch not in "\t\n\r") or ord(ch) == 0x7F:
            raise _invalid(pointer, f"text must not contain U+{ord(ch):04X}")
        if _is_surrogate(ch):
            raise _invalid(pointer, "text must not contain lone surrogates")
    return value


def check_source(value: object, pointer: str = "/source") -> str:
    """MEM-ENT-005."""
    if value is None:
        return DEFAULT_SOURCE
    if not isinstance(value, str) or value == "":
        raise _invalid(pointer, "source must be a non-empty string")
    if units(value) > MAX_SOURCE_UNITS or _has_control(value) \
            or any(_is_surrogate(ch) for ch in value):
        raise _invalid(pointer, "source must be at most 64 units without control characters")
    return value


def check_bucket(data: Mapping[str, Any], base: str = "") -> tuple[str, str]:
    """MEM-ENT-002."""
    track, scope = data.get("track"), data.get("scope")
    if track not in TRACKS:
        raise _invalid(f"{base}/track", "track must be user or agent")
    if scope not in SCOPES:
        raise _invalid(f"{base}/scope", "scope must be user-global or workspace")
    return str(track), str(scope)


def check_match(value: object, pointer: str) -> str:
    """MEM-MAT-002: a non-empty string, not trimmed."""
    if not isinstance(value, str) or value == "":
        raise _invalid(pointer, "match must be a non-empty string")
    return value


def _check_keys(data: Mapping[str, Any], allowed: Iterable[str], base: str = "") -> None:
    """MEM-ENT-009."""
    allowed_set = set(allowed)
    for key in data:
        if key not in allowed_set:
            raise _invalid(f"{base}/{key}", f"unknown field {key!r}")


def _object(value: object, pointer: str = "/") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _invalid(pointer, "must be an object")
    return value


@dataclass(frozen=True, slots=True)
class NewEntry:
    track: str
    scope: str
    text: str
    tags: tuple[str, ...]
    source: str
    workspace: str
    agent: str


def entry_input(value: object, writer: Writer, base: str = "") -> NewEntry:
    """An add/seed entry input, validated and defaulted (MEM-WRT-009, MEM-KEY-003)."""
    data = _object(value, base or "/")
    _check_keys(data, ("track", "scope", "text", "tags", "source", "workspaceKey", "agentKey"),
                base)
    track, scope = check_bucket(data, base)
    text = check_text(data.get("text"), f"{base}/text")
    tags = normalise_tags(data.get("tags"), f"{base}/tags")
    source = check_source(data.get("source"), f"{base}/source")
    workspace = ""
    if scope == "workspace":
        explicit = data.get("workspaceKey")
        if explicit is not None and not isinstance(explicit, str):
            raise _invalid(f"{base}/workspaceKey", "must be a string")
        workspace = workspace_key(explicit) if explicit is not None else writer.workspace
    explicit_agent = data.get("agentKey")
    if explicit_agent is not None and not isinstance(explicit_agent, str):
        raise _invalid(f"{base}/agentKey", "must be a string")
    agent = agent_key(explicit_agent) if explicit_agent is not None else writer.agent
    return NewEntry(track, scope, text, tuple(tags), source, workspace, agent)


# -- approval (MEM-GATE-001..008) --------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Policy:
    default: str = "ask"
    overrides: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def build(cls, default: str, overrides: Mapping[str, str] | None) -> Policy:
        """MEM-GATE-001."""
        if default not in POLICIES:
            raise _invalid("/writePolicy", "writePolicy must be ask, auto or off")
        table = dict(overrides or {})
        for key, value in table.items():
            if not isinstance(key, str) or not _POLICY_KEY.match(key):
                raise _invalid(f"/writePolicies/{key}", "bad override key")
            if value not in POLICIES:
                raise _invalid(f"/writePolicies/{key}", "values are ask, auto or off")
        return cls(default, table)

    def resolve(self, source: str | None, buckets: Sequence[str]) -> tuple[str, str]:
        """MEM-GATE-002: per bucket, the configured keys among the source key and the bucket
        key (the global policy when neither is configured); the strictest of all of them
        decides (off > ask > auto), the first found on a tie (source key, then buckets in
        sorted order)."""
        rank = {"auto": 0, "ask": 1, "off": 2}
        seen: list[tuple[str, str]] = []
        source_key = f"source:{source}"
        for bucket in sorted(set(buckets)) or [""]:
            keys = [k for k in (source_key if source is not None else "", bucket)
                    if k and k in self.overrides]
            seen += [(self.overrides[k], k) for k in keys] or [(self.default, "global")]
        best = seen[0]
        for pair in seen[1:]:
            if rank[pair[0]] > rank[best[0]]:
                best = pair
        return best


def approval_payload(action: str, track: str, scope: str, text: str, *, source: str | None,
                     targets: Sequence[Mapping[str, Any]],
                     count: int | None = None) -> dict[str, Any]:
    """MEM-GATE-007."""
    out: dict[str, Any] = {"action": action, "track": track, "scope": scope, "text": text}
    if source is not None:
        out["source"] = source
    if count is not None:
        out["count"] = count
    out["targets"] = [{"id": t["id"], "version": t["version"]} for t in targets]
    return out


def replace_payload_text(old: str, new: str) -> str:
    return f"from:\n{old}\n\nto:\n{new}"


def consolidate_payload_text(matches: Sequence[str], olds: Sequence[str], new: str) -> str:
    parts = [f"remove: {m}\n{excerpt(o, EXCERPT_UNITS)}" for m, o in zip(matches, olds,
                                                                          strict=True)]
    parts.append(f"new text: {new}")
    return "\n".join(parts)


def seed_payload_text(items: Sequence[NewEntry]) -> str:
    return "\n".join(f"{n.track}/{n.scope}: {n.text}" for n in items)


# -- snapshot (MEM-SNP-002) --------------------------------------------------------------------

def render_snapshot(entries: Iterable[Mapping[str, Any]],
                    budget_rows: Sequence[Mapping[str, Any]],
                    proposals: Sequence[Mapping[str, Any]] = ()) -> str:
    """MEM-SNP-002; ``proposals``: the pending proposals shown (MEM-PRO-009), in order."""
    usage = {(r["track"], r["scope"]): (r["used"], r["limit"]) for r in budget_rows}
    pool = list(entries)
    sections: list[str] = []
    for bucket in BUCKETS:
        group = sorted((e for e in pool if (e["track"], e["scope"]) == bucket),
                       key=lambda e: (e["createdAt"], e["id"]))
        if not group:
            continue
        used, limit = usage[bucket]
        lines = [f"## {SNAPSHOT_TITLES[bucket]} \u2014 {used}/{limit} units used"]
        lines += [f"- {one_line(e['text'])}" for e in group]
        sections.append("\n".join(lines))
    if proposals:
        sections.append("\n".join([f"## {PROPOSALS_TITLE}", *(
            f"- [{p['id']}] {p['track']}/{p['scope']}: {one_line(p['text'])}"
            for p in proposals)]))
    return "\n\n".join([SNAPSHOT_HEADER, *sections]) if sections else ""


# -- reconstruction (MEM-AUD-005) --------------------------------------------------------------

def replay(rows: Iterable[Mapping[str, Any]]) -> list[Entry]:
    """Replay audit rows oldest-first over an empty store; entries in (createdAt, id) order."""
    state: dict[str, Entry] = {}
    for row in sorted(rows, key=lambda r: int(r["seq"])):
        action, entry = row["action"], row.get("entry")
        if action in ("add", "consolidate-add", "replace"):
            assert isinstance(entry, dict), f"audit row {row['seq']} ({action}) has no entry"
            state[entry["id"]] = copy.deepcopy(entry)
        elif action in ("remove", "consolidate-remove"):
            assert isinstance(entry, dict), f"audit row {row['seq']} ({action}) has no entry"
            state.pop(entry["id"], None)
        elif action == "recalled":
            for entry_id in row.get("entryIds") or []:
                if entry_id in state:
                    state[entry_id]["recallCount"] += 1
                    state[entry_id]["lastRecalled"] = row["ts"]
    return sorted(state.values(), key=lambda e: (e["createdAt"], e["id"]))


# -- budgets config ----------------------------------------------------------------------------

def budget_limits(budgets: Mapping[str, Any] | None) -> dict[tuple[str, str], int]:
    """MEM-BUD-002."""
    config = budgets if budgets is not None else DEFAULT_BUDGETS
    limits: dict[tuple[str, str], int] = {}
    for track in TRACKS:
        layer = config.get(track)
        for key, scope in (("userGlobal", "user-global"), ("workspace", "workspace")):
            value = layer.get(key) if isinstance(layer, dict) else None
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise _invalid(f"/budgets/{track}/{key}", "must be a positive integer")
            limits[(track, scope)] = value
    return limits


def iso_utc(ms: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS.mmmZ`` (MEM-EXP-001)."""
    moment = datetime.fromtimestamp(ms // 1000, tz=UTC)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{ms % 1000:03d}Z"


def _system_clock() -> int:
    return time.time_ns() // 1_000_000


def _uuid4() -> str:
    return str(uuid.uuid4())


@dataclass(frozen=True, slots=True)
class _Decision:
    outcome: str
    label: str
    cause: tuple[str, str] | None = None  # MEM-GATE-010: (errorType, cause)


def _gate_error(decider: str, error_type: str, message: str) -> _Decision:
    """MEM-GATE-010: outcome ``gate-error``, the cause cut to 200 units."""
    cause = excerpt(message, 200)
    return _Decision("gate-error", f"gate-error (via {decider}): {error_type}: {cause}",
                     (error_type, cause))


# -- the model ---------------------------------------------------------------------------------

class MemoryModel:
    """The protocol state (entries, audit ledger) and its operations, in memory."""

    def __init__(self, *, budgets: Mapping[str, Any] | None = None, gate: Gate | None = None,
                 clock: Clock | None = None, ids: IdFactory | None = None,
                 write_policy: str = "ask", write_policies: Mapping[str, str] | None = None,
                 audit_retention_days: int = 0) -> None:
        self.limits = budget_limits(budgets)
        self.policy = Policy.build(write_policy, write_policies)
        if isinstance(audit_retention_days, bool) or not isinstance(audit_retention_days, int) \
                or audit_retention_days < 0:
            raise _invalid("/auditRetentionDays", "must be a non-negative integer")
        self.retention_days = audit_retention_days
        self.gate = gate
        self.clock: Clock = clock or _system_clock
        self.ids: IdFactory = ids or _uuid4
        self.entries: dict[str, Entry] = {}
        self.pending_and_decided: dict[str, dict[str, Any]] = {}  # proposals by id
        self.audit: list[AuditRow] = []
        self._seq = 0

    # -- configuration (what reopening a store with other settings does) ------------------------

    def reopen(self, *, budgets: Mapping[str, Any] | None = None,
               write_policy: str | None = None, write_policies: Mapping[str, str] | None = None,
               audit_retention_days: int | None = None) -> None:
        """Same entries and ledger, new settings; retention applies at open (MEM-AUD-004)."""
        self.limits = budget_limits(budgets)
        if write_policy is not None:
            self.policy = Policy.build(write_policy, write_policies)
        if audit_retention_days:
            cutoff = self.clock() - audit_retention_days * 86_400_000
            self.audit = [r for r in self.audit if r["ts"] >= cutoff]

    def close(self) -> None:
        """Nothing to release."""

    # -- helpers -------------------------------------------------------------------------------

    def _usage(self) -> dict[tuple[str, str], int]:
        used = dict.fromkeys(BUCKETS, 0)
        for e in self.entries.values():
            used[(e["track"], e["scope"])] += units(e["text"])
        return used

    def _usage_row(self, track: str, scope: str) -> dict[str, Any]:
        return {"track": track, "scope": scope, "used": self._usage()[(track, scope)],
                "limit": self.limits[(track, scope)]}

    def _ordered(self) -> list[Entry]:
        return sorted(self.entries.values(), key=lambda e: (e["createdAt"], e["id"]))

    def _resolve(self, track: str, scope: str, match: str, writer: Writer) -> Entry:
        """MEM-MAT-002..005 over the writer's visible set (MEM-KEY-005)."""
        needle = ascii_fold(match)
        hits = [e for e in self._ordered()
                if e["track"] == track and e["scope"] == scope
                and visible(e, writer.workspace, writer.agent) and needle in ascii_fold(e["text"])]
        if not hits:
            raise ModelError("ENTRY_NOT_FOUND", f'no entry in {track}/{scope} contains "{match}"; '
                             "nothing was changed", {"track": track, "scope": scope,
                                                     "match": match})
        if len(hits) > 1:
            raise ModelError(
                "AMBIGUOUS_MATCH", f'{len(hits)} entries in {track}/{scope} contain "{match}"; '
                "use a longer, unique substring",
                {"track": track, "scope": scope, "match": match, "candidates": len(hits),
                 "sample": [excerpt(e["text"], SAMPLE_UNITS) for e in hits[:SAMPLE_SIZE]]})
        return hits[0]

    def _guard(self, track: str, scope: str, match: str, writer: Writer,
               approved: Entry) -> Entry:
        """MEM-WRT-004: the approved target, unchanged, or STALE_WRITE."""
        try:
            current: Entry | None = self._resolve(track, scope, match, writer)
        except ModelError:
            current = None
        if current is None or current["id"] != approved["id"] \
                or current["version"] != approved["version"]:
            actual = self.entries.get(approved["id"])
            actual_version = actual["version"] if actual is not None else None
            raise ModelError(
                "STALE_WRITE", f"entry {approved['id']} changed after it was approved",
                {"entryId": approved["id"], "expectedVersion": approved["version"],
                 "actualVersion": actual_version})
        return current

    def _check_budget(self, additions: Mapping[tuple[str, str], int]) -> None:
        """MEM-BUD-003/004, buckets in the order of ``additions`` (a seed's batch order);
        G3: additions ≤ 0 always pass."""
        usage = self._usage()
        for bucket, addition in additions.items():
            if addition <= 0:
                continue
            used, limit = usage[bucket], self.limits[bucket]
            if used + addition > limit:
                track, scope = bucket
                needed = used + addition
                raise ModelError(
                    "BUDGET_EXCEEDED",
                    f"memory budget exceeded: {track}/{scope} at {used}/{limit} units, this write "
                    f"needs {needed} units; consolidate or remove entries, then retry",
                    {"track": track, "scope": scope, "used": used, "limit": limit,
                     "needed": needed})

    def _row(self, action: str, writer: Writer, *, outcome: str, track: str | None = None,
             scope: str | None = None, text: str | None = None, source: str | None = None,
             entry: Entry | None = None, entry_ids: list[str] | None = None,
             ts: int | None = None) -> None:
        self._seq += 1
        if entry is not None:
            track, scope, text, source = entry["track"], entry["scope"], entry["text"], \
                entry["source"]
        self.audit.append({
            "seq": self._seq, "ts": self.clock() if ts is None else ts, "action": action,
            "track": track, "scope": scope, "entryId": entry["id"] if entry else None,
            "text": text, "outcome": outcome, "source": source, "sessionId": writer.session_id,
            "entry": copy.deepcopy(entry), "entryIds": entry_ids})

    def _payload_row(self, action: str, writer: Writer, payload: Mapping[str, Any],
                     outcome: str, ts: int | None = None) -> None:
        """The row of a denied or failed write, and the ``seed`` row (MEM-AUD-002): track and
        scope from the payload ("batch" → null), the payload text, its source or "dshkit"."""
        def real(value: str) -> str | None:
            return None if value == "batch" else value

        self._row(action, writer, outcome=outcome, track=real(payload["track"]),
                  scope=real(payload["scope"]), text=payload["text"],
                  source=payload.get("source") or DEFAULT_SOURCE, ts=ts)

    def _decide(self, writer: Writer, payload: dict[str, Any], write: object,
                source: str | None, buckets: Sequence[str]) -> _Decision:
        """MEM-GATE-003..005 and the MEM-GATE-008 label."""
        if writer.approval_policy == "never":
            return _Decision("rejected", "rejected (via session never)")
        chosen, key = self.policy.resolve(source, buckets)
        if chosen == "off":
            return _Decision("rejected", f"rejected (via writePolicy off from {key})")
        if chosen == "auto":
            return _Decision(APPROVED, f"{APPROVED} (via writePolicy auto from {key})")
        if self.gate is None:
            return _Decision("unavailable", f"unavailable (via no gate, writePolicy ask from {key})")
        decider = f"gate, writePolicy ask from {key}"
        try:
            answer = self.gate(copy.deepcopy(payload), write)
        except Exception as exc:  # an approver that fails denies, with its cause (MEM-GATE-010)
            return _gate_error(decider, type(exc).__name__, str(exc) or type(exc).__name__)
        if not isinstance(answer, str) or not answer:
            return _gate_error(decider, "InvalidGateAnswer",
                               "the gate's answer is not a non-empty string")
        return _Decision(answer, f"{answer} (via {decider})")

    def _approve(self, op: str, writer: Writer, payload: dict[str, Any], write: object,
                 source: str | None, buckets: Sequence[str]) -> _Decision:
        decision = self._decide(writer, payload, write, source, buckets)
        if decision.outcome != APPROVED:
            self._payload_row(f"{op}-denied", writer, payload, decision.label)  # MEM-GATE-006
            details: dict[str, Any] = {"outcome": decision.outcome}
            if decision.cause is not None:
                details["errorType"], details["cause"] = decision.cause
            # Contract silent: the message wording (MEM-ERR-002); the model's is short.
            raise ModelError("WRITE_DENIED", f"the memory write was not approved (outcome "
                             f"{decision.outcome}); nothing was changed", details)
        return decision

    def _commit(self, op: str, writer: Writer, payload: dict[str, Any], decision: _Decision,
                apply: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """Step 6 of MEM-WRT-002: all or nothing; a refusal leaves one ``<op>-failed`` row."""
        saved = (copy.deepcopy(self.entries), copy.deepcopy(self.pending_and_decided),
                 list(self.audit), self._seq)
        try:
            return apply()
        except ModelError as exc:
            self.entries, self.pending_and_decided, self.audit, self._seq = saved
            self._payload_row(f"{op}-failed", writer, payload,
                              f"{decision.label}; not applied: {exc.code}")
            raise

    def _insert(self, new: NewEntry, writer: Writer, now: int, entry_id: str | None = None,
                ) -> Entry:
        entry: Entry = {
            "id": self.ids() if entry_id is None else entry_id, "track": new.track, "scope": new.scope,
            "workspaceKey": new.workspace, "agentKey": new.agent, "text": new.text,
            "source": new.source, "tags": list(new.tags), "version": 1, "createdAt": now,
            "updatedAt": now, "lastRecalled": None, "recallCount": 0,
            "sessionId": writer.session_id}
        self.entries[entry["id"]] = entry
        return entry

    # -- writes (MEM-WRT-*) --------------------------------------------------------------------

    def add(self, input: object, write: object) -> dict[str, Any]:
        writer = writer_of(write)
        new = entry_input(input, writer)
        bucket = (new.track, new.scope)
        additions = {bucket: units(new.text)}
        self._check_budget(additions)
        payload = approval_payload("add", new.track, new.scope, new.text, source=new.source,
                                   targets=[])
        decision = self._approve("add", writer, payload, write, new.source,
                                 [f"{new.track}/{new.scope}"])

        def apply() -> dict[str, Any]:
            self._check_budget(additions)
            now = self.clock()  # MEM-AUD-007: one clock reading per transaction
            entry = self._insert(new, writer, now)
            self._row("add", writer, outcome=decision.label, entry=entry, ts=now)
            return {"entry": copy.deepcopy(entry), "usage": self._usage_row(*bucket)}

        return self._commit("add", writer, payload, decision, apply)

    def replace(self, input: object, write: object) -> dict[str, Any]:
        writer = writer_of(write)
        data = _object(input)
        _check_keys(data, ("track", "scope", "match", "text", "tags", "source"))
        track, scope = check_bucket(data)
        match = check_match(data.get("match"), "/match")
        text = check_text(data.get("text"))
        tags = None if data.get("tags") is None else normalise_tags(data["tags"])
        source = check_source(data.get("source"))
        target = copy.deepcopy(self._resolve(track, scope, match, writer))
        self._check_budget({(track, scope): units(text) - units(target["text"])})
        payload = approval_payload("replace", track, scope,
                                   replace_payload_text(target["text"], text), source=source,
                                   targets=[target])
        decision = self._approve("replace", writer, payload, write, source, [f"{track}/{scope}"])

        def apply() -> dict[str, Any]:
            current = self._guard(track, scope, match, writer, target)
            self._check_budget({(track, scope): units(text) - units(current["text"])})
            previous = copy.deepcopy(current)
            now = self.clock()
            updated = {**current, "text": text, "version": current["version"] + 1,
                       "updatedAt": max(now, current["updatedAt"]),
                       "sessionId": writer.session_id}
            if tags is not None:  # MEM-WRT-005: an explicit array, even [], replaces the tags
                updated["tags"] = list(tags)
            self.entries[updated["id"]] = updated
            self._row("replace", writer, outcome=decision.label, entry=updated, ts=now)
            return {"previous": previous, "entry": copy.deepcopy(updated),
                    "usage": self._usage_row(track, scope)}

        return self._commit("replace", writer, payload, decision, apply)

    def remove(self, input: object, write: object) -> dict[str, Any]:
        writer = writer_of(write)
        data = _object(input)
        _check_keys(data, ("track", "scope", "match"))
        track, scope = check_bucket(data)
        match = check_match(data.get("match"), "/match")
        target = copy.deepcopy(self._resolve(track, scope, match, writer))
        payload = approval_payload("remove", track, scope, target["text"],
                                   source=target["source"], targets=[target])
        decision = self._approve("remove", writer, payload, write, target["source"],
                                 [f"{track}/{scope}"])

        def apply() -> dict[str, Any]:
            current = self._guard(track, scope, match, writer, target)
            del self.entries[current["id"]]
            self._row("remove", writer, outcome=decision.label, entry=current,
                      ts=self.clock())
            return {"entry": copy.deepcopy(current), "usage": self._usage_row(track, scope)}

        return self._commit("remove", writer, payload, decision, apply)

    def consolidate(self, input: object, write: object) -> dict[str, Any]:
        writer = writer_of(write)
        data = _object(input)
        _check_keys(data, ("track", "scope", "matches", "text", "tags", "source"))
        track, scope = check_bucket(data)
        matches = data.get("matches")
        if not isinstance(matches, list) or not 1 <= len(matches) <= MAX_CONSOLIDATE:
            raise _invalid("/matches", "matches must be an array of 1 to 20 non-empty strings")
        checked = [check_match(m, f"/matches/{i}") for i, m in enumerate(matches)]
        text = check_text(data.get("text"))
        tags = normalise_tags(data.get("tags"))
        source = check_source(data.get("source"))
        targets = [copy.deepcopy(self._resolve(track, scope, m, writer)) for m in checked]
        first_index: dict[str, int] = {}
        for index, target in enumerate(targets):
            if target["id"] in first_index:  # MEM-WRT-006 / G15
                raise _invalid(f"/matches/{index}", "resolves to the same entry as "
                               f"/matches/{first_index[target['id']]}")
            first_index[target["id"]] = index
        layers = {(t["agentKey"], t["workspaceKey"]) for t in targets}
        if len(layers) != 1:
            raise _invalid("/matches", "consolidated entries must share one agentKey and "
                           "workspaceKey")
        agent, workspace = next(iter(layers))
        self._check_budget({(track, scope): units(text) - sum(units(t["text"]) for t in targets)})
        payload = approval_payload(
            "consolidate", track, scope,
            consolidate_payload_text(checked, [t["text"] for t in targets], text),
            source=source, targets=targets)
        decision = self._approve("consolidate", writer, payload, write, source,
                                 [f"{track}/{scope}"])
        new = NewEntry(track, scope, text, tuple(tags), source, workspace, agent)

        def apply() -> dict[str, Any]:
            current = [self._guard(track, scope, m, writer, t)
                       for m, t in zip(checked, targets, strict=True)]
            self._check_budget({(track, scope): units(text)
                                - sum(units(c["text"]) for c in current)})
            removed = []
            now = self.clock()
            for entry in current:
                del self.entries[entry["id"]]
                self._row("consolidate-remove", writer, outcome=decision.label, entry=entry,
                          ts=now)
                removed.append(copy.deepcopy(entry))
            merged = self._insert(new, writer, now)
            self._row("consolidate-add", writer, outcome=decision.label, entry=merged, ts=now)
            return {"removed": removed, "entry": copy.deepcopy(merged),
                    "usage": self._usage_row(track, scope)}

        return self._commit("consolidate", writer, payload, decision, apply)

    def seed(self, entries: object, write: object) -> dict[str, Any]:
        writer = writer_of(write)
        if not isinstance(entries, list) or not 1 <= len(entries) <= MAX_SEED:
            raise _invalid("/", "seed takes an array of 1 to 1000 entry inputs")
        news = [entry_input(item, writer, f"/{i}") for i, item in enumerate(entries)]
        additions: dict[tuple[str, str], int] = {}
        for n in news:
            additions[(n.track, n.scope)] = additions.get((n.track, n.scope), 0) + units(n.text)
        self._check_budget(additions)  # G4: before approval
        buckets = {(n.track, n.scope) for n in news}
        sources = {n.source for n in news}
        track, scope = next(iter(buckets)) if len(buckets) == 1 else ("batch", "batch")
        common = next(iter(sources)) if len(sources) == 1 else None
        payload = approval_payload("seed", track, scope, seed_payload_text(news), source=common,
                                   targets=[], count=len(news))
        decision = self._approve("seed", writer, payload, write, common,
                                 [f"{t}/{s}" for t, s in buckets])

        def apply() -> dict[str, Any]:
            self._check_budget(additions)
            now = self.clock()
            self._payload_row("seed", writer, payload, decision.label, ts=now)
            inserted = []
            ids = sorted(self.ids() for _ in news)  # MEM-WRT-013: ids increase in batch order
            for n, entry_id in zip(news, ids, strict=True):
                entry = self._insert(n, writer, now, entry_id)
                self._row("add", writer, outcome=decision.label, entry=entry, ts=now)
                inserted.append(copy.deepcopy(entry))
            return {"added": len(inserted), "entries": inserted}

        return self._commit("seed", writer, payload, decision, apply)

    # -- reads ---------------------------------------------------------------------------------

    def query(self, filter: object = None, opts: object = None) -> dict[str, Any]:
        """MEM-QRY-001..005."""
        data = {} if filter is None else _object(filter)
        _check_keys(data, ("track", "scope", "text", "limit"))
        options = {} if opts is None else _object(opts, "/opts")
        _check_keys(options, ("reader", "recall", "sessionId", "agentKey"), "/opts")
        if data.get("track") is not None and data["track"] not in TRACKS:
            raise _invalid("/track", "track must be user or agent")
        if data.get("scope") is not None and data["scope"] not in SCOPES:
            raise _invalid("/scope", "scope must be user-global or workspace")
        text = data.get("text")
        if text is not None and not isinstance(text, str):
            raise _invalid("/text", "text must be a string")
        limit = data.get("limit")
        if limit is None:
            limit = DEFAULT_QUERY_LIMIT
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise _invalid("/limit", "limit must be a positive integer")
        limit = min(limit, MAX_QUERY_LIMIT)
        memento = [k for k in ("sessionId", "agentKey") if options.get(k) is not None]
        if memento and options.get("reader") is not None:
            raise _invalid(f"/opts/{memento[0]}", "reader or sessionId/agentKey, not both")
        for k in memento:
            if not isinstance(options[k], str):
                raise _invalid(f"/opts/{k}", f"{k} must be a string")
        recall = options.get("recall", "sessionId" in memento)
        if not isinstance(recall, bool):
            raise _invalid("/opts/recall", "recall must be a boolean")
        reader = writer_of(options["reader"]) if options.get("reader") is not None else None
        if not memento and recall and (reader is None or reader.session_id is None):
            raise _invalid("/opts/reader", "a recall needs a reader with a session id")
        if "sessionId" in memento and not recall:
            raise _invalid("/opts/recall", "sessionId asks for a recall: recall must be true")
        if memento and recall and "sessionId" not in memento:
            raise _invalid("/opts/sessionId", "a recall needs the session id")
        agent_only = None
        if memento:  # MEM-QRY-007: dsh-memento's spelling of a reader
            if "agentKey" in memento:
                agent_only = agent_key(options["agentKey"])
            reader = Writer(options.get("sessionId"), "", agent_only or "", None) \
                if recall else None
        rows = [e for e in self.entries.values()
                if data.get("track") in (None, e["track"]) and data.get("scope") in (None,
                                                                                    e["scope"])]
        if text:
            rows = [e for e in rows if ascii_fold(text) in ascii_fold(e["text"])]
        if agent_only is not None:
            rows = [e for e in rows if e["agentKey"] in ("", agent_only)]
        elif reader is not None and not memento:
            rows = [e for e in rows if visible(e, reader.workspace, reader.agent)]
        rows.sort(key=lambda e: (-e["recallCount"], -e["updatedAt"], e["id"]))
        page = rows[:limit]
        if recall and reader is not None:
            now = self.clock()
            for e in page:
                e["recallCount"] += 1
                e["lastRecalled"] = now
            # MEM-QRY-005: a recall is audited even when it returns nothing.
            self._row("recalled", reader, outcome="ok", track=data.get("track"),
                      scope=data.get("scope"), text=text or None, source=DEFAULT_SOURCE,
                      entry_ids=[e["id"] for e in page], ts=now)
        return {"entries": copy.deepcopy(page), "total": len(rows),
                "truncated": len(rows) > len(page)}

    def budgets(self) -> list[dict[str, Any]]:
        usage = self._usage()
        return [{"track": t, "scope": s, "used": usage[(t, s)], "limit": self.limits[(t, s)]}
                for t, s in BUCKETS]

    def list_entries(self) -> list[Entry]:
        return copy.deepcopy(self._ordered())

    def audit_list(self, limit: int = 100, after: int | None = None) -> list[AuditRow]:
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
            raise _invalid("/limit", "limit must be an integer from 1 to 1000")
        if after is None:
            return copy.deepcopy(list(reversed(self.audit))[:limit])
        if isinstance(after, bool) or not isinstance(after, int) or after < 0:
            raise _invalid("/after", "after must be a non-negative integer")
        return copy.deepcopy([r for r in self.audit if r["seq"] > after][:limit])  # MEM-AUD-008

    def snapshot(self, write: object) -> str:
        """MEM-SNP-001: rendered once per session id; later calls return the frozen text."""
        writer = writer_of(write)
        if writer.session_id is None:
            raise _invalid("/agent/session/id", "a snapshot needs the session id")
        for row in self.audit:
            if row["action"] == "snapshot" and row["sessionId"] == writer.session_id:
                return str(row["text"])
        shown = [p for p in self._proposal_order() if p["status"] == "pending"
                 and visible(p, writer.workspace, writer.agent)][:PROPOSALS_SHOWN]
        text = render_snapshot((e for e in self.entries.values()
                                if visible(e, writer.workspace, writer.agent)), self.budgets(),
                               shown)
        self._row("snapshot", writer, outcome="ok", text=text, source=DEFAULT_SOURCE)
        return text

    # -- proposals (MEM-PRO-*) ------------------------------------------------------------------

    def _proposal_order(self) -> list[dict[str, Any]]:
        return sorted(self.pending_and_decided.values(), key=lambda p: (p["createdAt"], p["id"]))

    def _proposal_row(self, action: str, writer: Writer, proposal: Mapping[str, Any],
                      outcome: str, ts: int, entry_ids: list[str] | None = None) -> None:
        """MEM-PRO-008: the proposal id in entryId."""
        self._seq += 1
        self.audit.append({
            "seq": self._seq, "ts": ts, "action": action, "track": proposal["track"],
            "scope": proposal["scope"], "entryId": proposal["id"], "text": proposal["text"],
            "outcome": outcome, "source": proposal["source"], "sessionId": writer.session_id,
            "entry": None, "entryIds": entry_ids})

    def propose(self, input: object, write: object) -> dict[str, Any]:
        """MEM-PRO-002/003."""
        writer = writer_of(write)
        data = _object(input)
        _check_keys(data, ("kind", "track", "scope", "text", "source", "workspaceKey",
                           "agentKey"))
        kind = data.get("kind")
        if not isinstance(kind, str) or not _KIND.match(kind):
            raise _invalid("/kind", "kind must be 1 to 64 of a-z, 0-9, '-', not starting with -")
        new = entry_input({k: v for k, v in data.items() if k != "kind"}, writer)
        if units(new.text) > MAX_PROPOSAL_UNITS:
            raise _invalid("/text", "a proposal text is at most 2000 units")
        if writer.session_id is None:
            raise _invalid("/agent/session/id", "a proposal needs the session id")
        for proposal in self.pending_and_decided.values():
            if proposal["sessionId"] == writer.session_id and proposal["kind"] == kind:
                return {"proposal": copy.deepcopy(proposal), "created": False}
        now = self.clock()
        proposal = {"id": self.ids(), "kind": kind, "track": new.track, "scope": new.scope,
                    "workspaceKey": new.workspace, "agentKey": new.agent, "text": new.text,
                    "source": new.source, "sessionId": writer.session_id, "status": "pending",
                    "createdAt": now, "decidedAt": None, "entryId": None}
        self.pending_and_decided[proposal["id"]] = proposal
        self._proposal_row("proposal", writer, proposal, "pending", now)
        return {"proposal": copy.deepcopy(proposal), "created": True}

    def proposals(self, filter: object = None, write: object = None) -> list[dict[str, Any]]:
        """MEM-PRO-006: status filter, visibility before the limit, (createdAt, id) order."""
        data = {} if filter is None else _object(filter)
        _check_keys(data, ("status", "limit"))
        status = data.get("status")
        if status is not None and status not in PROPOSAL_STATUSES:
            raise _invalid("/status", "status must be pending, approved or dismissed")
        limit = data.get("limit")
        limit = 100 if limit is None else limit
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
            raise _invalid("/limit", "limit must be an integer from 1 to 1000")
        reader = None if write is None else writer_of(write)
        chosen = [p for p in self._proposal_order()
                  if (status is None or p["status"] == status)
                  and (reader is None or visible(p, reader.workspace, reader.agent))]
        return copy.deepcopy(chosen[:limit])

    def _pending(self, input: object, writer: Writer) -> dict[str, Any]:
        """MEM-PRO-007."""
        data = _object(input)
        _check_keys(data, ("id",))
        proposal_id = data.get("id")
        if not isinstance(proposal_id, str) or proposal_id == "":
            raise _invalid("/id", "id must be a non-empty string")
        proposal = self.pending_and_decided.get(proposal_id)
        if proposal is None or proposal["status"] != "pending" \
                or not visible(proposal, writer.workspace, writer.agent):
            # Contract silent: the message wording (MEM-ERR-002).
            raise ModelError("PROPOSAL_NOT_FOUND", f"no pending proposal {proposal_id}",
                             {"id": proposal_id})
        return proposal

    def approve_proposal(self, input: object, write: object) -> dict[str, Any]:
        """MEM-PRO-004: the pipeline of an add, the proposal decided in its transaction."""
        writer = writer_of(write)
        proposal = self._pending(input, writer)
        bucket = (proposal["track"], proposal["scope"])
        additions = {bucket: units(proposal["text"])}
        self._check_budget(additions)
        payload = approval_payload("add", *bucket, proposal["text"], source=proposal["source"],
                                   targets=[])
        decision = self._approve("add", writer, payload, write, proposal["source"],
                                 [f"{bucket[0]}/{bucket[1]}"])
        new = NewEntry(*bucket, proposal["text"], (), proposal["source"],
                       proposal["workspaceKey"], proposal["agentKey"])

        def apply() -> dict[str, Any]:
            current = self._pending({"id": proposal["id"]}, writer)
            self._check_budget(additions)
            now = self.clock()
            entry = self._insert(new, writer, now)
            self._row("add", writer, outcome=decision.label, entry=entry, ts=now)
            current.update(status="approved", decidedAt=now, entryId=entry["id"])
            self._proposal_row("proposal-approved", writer, current, decision.label, now,
                               [entry["id"]])
            return {"proposal": copy.deepcopy(current), "entry": copy.deepcopy(entry),
                    "usage": self._usage_row(*bucket)}

        return self._commit("add", writer, payload, decision, apply)

    def dismiss_proposal(self, input: object, write: object) -> dict[str, Any]:
        """MEM-PRO-005: not gated, audited."""
        writer = writer_of(write)
        proposal = self._pending(input, writer)
        now = self.clock()
        proposal.update(status="dismissed", decidedAt=now)
        self._proposal_row("proposal-dismissed", writer, proposal, "dismissed", now)
        return {"proposal": copy.deepcopy(proposal)}

    def export(self, ledger: bool = False) -> dict[str, Any]:
        if not isinstance(ledger, bool):
            raise _invalid("/ledger", "ledger must be a boolean")
        out = {"plugin": EXPORT_PLUGIN, "schema": EXPORT_SCHEMA,
               "exportedAt": iso_utc(self.clock()), "budgets": self.budgets(),
               "entries": self.list_entries()}
        if ledger:  # MEM-EXP-005
            out["ledger"] = copy.deepcopy(self.audit)
        return out

    def import_envelope(self, envelope: object, write: object) -> dict[str, Any]:
        """MEM-EXP-002/003: validated, then seeded (content kept, identity reset)."""
        writer_of(write)
        return self.seed(envelope_inputs(envelope), write)


ENVELOPE_FIELDS = ("plugin", "schema", "exportedAt", "budgets", "entries")
#: The members an exported entry must have; ``sessionId`` may be missing (dsh-memento 0.4).
EXPORTED_REQUIRED = ENTRY_FIELDS[:-1]
_EXPORTED_AT = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$")
_ANY_CASE_UUID4 = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$")


def _integer(value: object, low: int, pointer: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise _invalid(pointer, f"must be an integer of at least {low}")


def envelope_inputs(envelope: object) -> list[dict[str, Any]]:
    """MEM-EXP-002: check a ``memory-export-v1`` envelope (pointers into the envelope,
    MEM-ERR-003) and return the seed inputs it imports as (MEM-EXP-003).

    Accepted: any non-empty ``plugin``, entries with or without ``sessionId``, any-case ids and
    any workspace/agent keys (what dsh-memento 0.4 writes); text, tags and source must follow
    dshkit's rules, because import keeps them.
    """
    data = _object(envelope)
    if data.get("schema") != EXPORT_SCHEMA:
        raise ModelError("ENVELOPE_UNSUPPORTED", f"export envelope schema {data.get('schema')!r} "
                         f"is not supported; this reader imports only {EXPORT_SCHEMA}",
                         {"schema": data.get("schema")})
    _check_keys(data, (*ENVELOPE_FIELDS, "ledger"))
    for key in ENVELOPE_FIELDS:
        if key not in data:
            raise _invalid(f"/{key}", "required")
    if not isinstance(data["plugin"], str) or data["plugin"] == "":
        raise _invalid("/plugin", "plugin must be a non-empty string")
    if not isinstance(data["exportedAt"], str) or not _EXPORTED_AT.match(data["exportedAt"]):
        raise _invalid("/exportedAt", "exportedAt must be YYYY-MM-DDTHH:MM:SS.mmmZ")
    rows = data["budgets"]
    if not isinstance(rows, list) or len(rows) != len(BUCKETS):
        raise _invalid("/budgets", "budgets must be the four budget rows")
    for index, (row, bucket) in enumerate(zip(rows, BUCKETS, strict=True)):
        where = f"/budgets/{index}"
        row = _object(row, where)
        _check_keys(row, ("track", "scope", "used", "limit"), where)
        if (row.get("track"), row.get("scope")) != bucket:
            raise _invalid(where, f"row {index} must be {bucket[0]}/{bucket[1]}")
        _integer(row.get("used"), 0, f"{where}/used")
        _integer(row.get("limit"), 1, f"{where}/limit")
    entries = data["entries"]
    if not isinstance(entries, list):
        raise _invalid("/entries", "entries must be an array")
    out = []
    for index, raw in enumerate(entries):
        where = f"/entries/{index}"
        item = _object(raw, where)
        _check_keys(item, ENTRY_FIELDS, where)
        for key in EXPORTED_REQUIRED:
            if key not in item:
                raise _invalid(f"{where}/{key}", "required")
        if not isinstance(item["id"], str) or not _ANY_CASE_UUID4.match(item["id"]):
            raise _invalid(f"{where}/id", "id must be a UUID v4")
        check_bucket(item, where)
        for key in ("workspaceKey", "agentKey"):
            if not isinstance(item[key], str):
                raise _invalid(f"{where}/{key}", "must be a string")
        check_text(item["text"], f"{where}/text")
        if item["source"] is None:
            raise _invalid(f"{where}/source", "source must be a non-empty string")
        check_source(item["source"], f"{where}/source")
        tags = item["tags"]
        if not isinstance(tags, list) or normalise_tags(tags, f"{where}/tags") != tags:
            raise _invalid(f"{where}/tags", "tags must be stored tags: trimmed, distinct")
        _integer(item["version"], 1, f"{where}/version")
        _integer(item["createdAt"], 0, f"{where}/createdAt")
        _integer(item["updatedAt"], 0, f"{where}/updatedAt")
        if item["lastRecalled"] is not None:
            _integer(item["lastRecalled"], 0, f"{where}/lastRecalled")
        _integer(item["recallCount"], 0, f"{where}/recallCount")
        if item.get("sessionId") is not None and not isinstance(item["sessionId"], str):
            raise _invalid(f"{where}/sessionId", "must be a string or null")
        out.append({k: item[k] for k in ("track", "scope", "text", "tags", "source")})
    if not 1 <= len(out) <= MAX_SEED:
        raise _invalid("/entries", "entries must be an array of 1 to 1000 entries")
    if "ledger" in data:  # MEM-EXP-005: checked, then ignored
        if not isinstance(data["ledger"], list):
            raise _invalid("/ledger", "ledger must be an array of audit rows")
        for index, row in enumerate(data["ledger"]):
            _object(row, f"/ledger/{index}")
    return out


def check_entry_shape(item: Mapping[str, Any], where: str = "") -> None:
    """The stored entry shape of ``entry.json`` (MEM-ENT-001..010); raises INVALID_INPUT."""
    _check_keys(item, ENTRY_FIELDS, where)
    for key in ENTRY_FIELDS:
        if key not in item:
            raise _invalid(f"{where}/{key}", "required")
    if not isinstance(item["id"], str) or not _UUID4.match(item["id"]):
        raise _invalid(f"{where}/id", "id must be a lower-case UUID v4")
    _, scope = check_bucket(item, where)
    if not isinstance(item["workspaceKey"], str) or not isinstance(item["agentKey"], str):
        raise _invalid(f"{where}/workspaceKey", "keys must be strings")
    if scope == "user-global" and item["workspaceKey"] != "":
        raise _invalid(f"{where}/workspaceKey", "user-global entries have workspaceKey \"\"")
    if workspace_key(item["workspaceKey"]) != item["workspaceKey"] and item["workspaceKey"]:
        raise _invalid(f"{where}/workspaceKey", "not a normalised workspace key")
    if agent_key(item["agentKey"]) != item["agentKey"]:
        raise _invalid(f"{where}/agentKey", "not a normalised agent key")
    check_text(item["text"], f"{where}/text")
    check_source(item["source"], f"{where}/source")
    if not isinstance(item["tags"], list) or normalise_tags(item["tags"]) != item["tags"]:
        raise _invalid(f"{where}/tags", "tags must be normalised")
    _integer(item["version"], 1, f"{where}/version")
    _integer(item["createdAt"], 0, f"{where}/createdAt")
    _integer(item["updatedAt"], item["createdAt"], f"{where}/updatedAt")
    if item["lastRecalled"] is not None:
        _integer(item["lastRecalled"], 0, f"{where}/lastRecalled")
    _integer(item["recallCount"], 0, f"{where}/recallCount")
    if item["sessionId"] is not None and not isinstance(item["sessionId"], str):
        raise _invalid(f"{where}/sessionId", "must be a string or null")


__all__ = [
    "AUDIT_FIELDS", "BUCKETS", "DEFAULT_BUDGETS", "DEFAULT_SOURCE", "ENTRY_FIELDS",
    "SNAPSHOT_HEADER", "SNAPSHOT_TITLES", "MemoryModel", "ModelError", "Policy", "Writer",
    "agent_key", "ascii_fold", "check_entry_shape", "cut_units", "envelope_inputs", "excerpt",
    "iso_utc", "js_trim", "normalise_tags", "one_line", "render_snapshot", "replay", "units",
    "visible", "workspace_key", "writer_of",
]
