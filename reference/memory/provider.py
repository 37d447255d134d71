"""The reference memory provider: one write pipeline for every operation (chapter ``memory/writes``).

Order for every write (MEM-WRT-002): writer context, input validation, target resolution in the
writer's visible set, budget pre-check, approval, then one ``BEGIN IMMEDIATE`` transaction that
re-resolves the targets, applies the optimistic guard, re-checks the budget, mutates and writes
the audit rows. A refused write changes nothing but its audit row.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from ..text import units
from . import approval, snapshot
from . import proposals as pro
from .approval import CANCELLED, Decision, Gate, Policy
from .cancel import CancelToken
from .errors import MemoryProtocolError, invalid
from .exchange import envelope_entries, export_envelope, restored_entries
from .inputs import (
    BUCKETS,
    DEFAULT_SOURCE,
    MAX_CONSOLIDATE,
    MAX_SEED,
    SCOPES,
    TRACKS,
    Context,
    NewEntry,
    check_bucket,
    check_keys,
    check_match,
    check_source,
    check_text,
    context_of,
    new_entry,
    normalise_tags,
)
from .keys import agent_key, visible
from .store import CREATION, RANKING, Store, default_path, open_store
from .text import excerpt

Clock = Callable[[], int]
IdFactory = Callable[[], str]
Entry = dict[str, Any]

DEFAULT_BUDGETS = {"user": {"userGlobal": 2000, "workspace": 2000},
                   "agent": {"userGlobal": 4000, "workspace": 4000}}
DEFAULT_QUERY_LIMIT = 20
MAX_QUERY_LIMIT = 1000
SAMPLE_SIZE = 5
SAMPLE_UNITS = 200
EXPORT_ATTEMPTS = 10


def _system_clock() -> int:
    return time.time_ns() // 1_000_000


def _uuid4() -> str:
    return str(uuid.uuid4())


def _limits(budgets: dict[str, Any] | None) -> dict[tuple[str, str], int]:
    """MEM-BUD-002: every limit a positive integer."""
    config = budgets if budgets is not None else DEFAULT_BUDGETS
    limits: dict[tuple[str, str], int] = {}
    for track in ("user", "agent"):
        layer = config.get(track) if isinstance(config, dict) else None
        for key, scope in (("userGlobal", "user-global"), ("workspace", "workspace")):
            value = layer.get(key) if isinstance(layer, dict) else None
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise invalid(f"/budgets/{track}/{key}", "must be a positive integer")
            limits[(track, scope)] = value
    return limits


class Provider:
    """An open memory store with its budgets, policy and approver."""

    def __init__(self, store: Store, *, limits: dict[tuple[str, str], int], gate: Gate | None,
                 policy: Policy, clock: Clock, ids: IdFactory) -> None:
        self.store = store
        self.limits = limits
        self.gate = gate
        self.policy = policy
        self.clock = clock
        self.ids = ids

    # -- context, resolution, budgets ----------------------------------------------------------

    @staticmethod
    def _context(write: Any) -> Context:
        ctx = context_of(write)
        if ctx is None:
            raise MemoryProtocolError(
                "WRITE_REQUIRES_AGENT",
                "a memory write needs the owning agent (write.agent with its session); nothing "
                "was changed", {})
        return ctx

    def _resolve(self, track: str, scope: str, match: str, ctx: Context,
                 by_id: bool = False) -> Entry:
        """MEM-MAT-002..005: exactly one visible entry containing ``match`` (ASCII fold);
        with ``by_id``, the visible entry of the bucket whose id is ``match`` (MEM-CLI-003)."""
        if by_id:
            return self._resolve_id(track, scope, match, ctx)
        hits, count = self.store.select(track=track, scope=scope, keys=(ctx.workspace, ctx.agent),
                                        needle=match, order=CREATION, limit=SAMPLE_SIZE)
        if count == 0:
            raise MemoryProtocolError(
                "ENTRY_NOT_FOUND", f'no entry in {track}/{scope} contains "{match}"; nothing was '
                "changed", {"track": track, "scope": scope, "match": match})
        if count > 1:
            raise MemoryProtocolError(
                "AMBIGUOUS_MATCH", f'{count} entries in {track}/{scope} contain "{match}"; '
                "use a longer, unique substring",
                {"track": track, "scope": scope, "match": match, "candidates": count,
                 "sample": [excerpt(e["text"], SAMPLE_UNITS) for e in hits]})
        return hits[0]

    def _resolve_id(self, track: str, scope: str, entry_id: str, ctx: Context) -> Entry:
        entry = self.store.entry(entry_id)
        if entry is None or (entry["track"], entry["scope"]) != (track, scope) \
                or not visible(entry, ctx.workspace, ctx.agent):
            raise MemoryProtocolError(
                "ENTRY_NOT_FOUND", f'no entry in {track}/{scope} has id "{entry_id}"; nothing '
                "was changed", {"track": track, "scope": scope, "match": entry_id})
        return entry

    def _reresolve(self, track: str, scope: str, match: str, ctx: Context,
                   expected: Entry, state: tuple[int, int], by_id: bool = False) -> Entry:
        """MEM-WRT-004: the approved target, unchanged, or STALE_WRITE.

        ``state`` is the store's commit token taken before the first resolution. When nobody
        has committed since, resolving again would read the same rows and give ``expected``.
        """
        if self.store.state() == state:
            return expected
        try:
            current: Entry | None = self._resolve(track, scope, match, ctx, by_id)
        except MemoryProtocolError:
            current = None
        if current is None or current["id"] != expected["id"] \
                or current["version"] != expected["version"]:
            now = self.store.entry(expected["id"])
            actual = now["version"] if now is not None else None
            raise MemoryProtocolError(
                "STALE_WRITE", f"entry {expected['id']} changed after it was approved (version "
                f"{expected['version']} approved, now {actual}); nothing was changed, review "
                "and retry", {"entryId": expected["id"], "expectedVersion": expected["version"],
                              "actualVersion": actual})
        return current

    def _check_budget(self, additions: dict[tuple[str, str], int]) -> None:
        """MEM-BUD-003/004 against the current store-wide usage; never refuses a shrink.
        Buckets are checked in the order of ``additions``: a seed's batch order."""
        usage = self.store.bucket_usage()
        for bucket, addition in additions.items():
            if addition <= 0:
                continue
            used = usage.get(bucket, 0)
            limit = self.limits[bucket]
            if used + addition > limit:
                track, scope = bucket
                raise MemoryProtocolError(
                    "BUDGET_EXCEEDED",
                    f"memory budget exceeded: {track}/{scope} at {used}/{limit} units, this "
                    f"write needs {used + addition} units; consolidate or remove entries, then "
                    "retry", {"track": track, "scope": scope, "used": used, "limit": limit,
                              "needed": used + addition})

    def _usage_row(self, track: str, scope: str) -> dict[str, Any]:
        used = self.store.bucket_usage().get((track, scope), 0)
        return {"track": track, "scope": scope, "used": used, "limit": self.limits[(track, scope)]}

    # -- approval and commit -------------------------------------------------------------------

    def _approve(self, op: str, ctx: Context, payload: dict[str, Any], write: dict[str, Any],
                 lookup_source: str | None, lookup_bucket: str | Iterable[str] | None,
                 cancel: CancelToken | None) -> Decision:
        if _cancelled(cancel):
            decision = CANCELLED
        else:
            decision = approval.decide(self.policy, self.gate, ctx, payload, write,
                                       lookup_source, lookup_bucket)
            if decision.approved and _cancelled(cancel):
                decision = CANCELLED
        if not decision.approved:
            with self.store.transaction():
                self._audit(f"{op}-denied", ctx, payload=payload, outcome=decision.label)
            raise _denied(decision)
        return decision

    def _commit(self, op: str, ctx: Context, payload: dict[str, Any], decision: Decision,
                apply: Callable[[], dict[str, Any]],
                cancel: CancelToken | None) -> dict[str, Any]:
        try:
            with self.store.transaction():
                if not _cancelled(cancel):
                    return apply()
                # MEM-PKG-002: cancelled while approved and not yet committed
                self._audit(f"{op}-denied", ctx, payload=payload, outcome=CANCELLED.label)
        except MemoryProtocolError as exc:
            if exc.code in ("STORE_BUSY", "STORE_CORRUPT"):
                raise
            with self.store.transaction():
                self._audit(f"{op}-failed", ctx, payload=payload,
                            outcome=f"{decision.label}; not applied: {exc.code}")
            raise
        raise _denied(CANCELLED)

    def _audit(self, action: str, ctx: Context, *, payload: dict[str, Any] | None = None,
               entry: Entry | None = None, outcome: str, text: str | None = None,
               track: str | None = None, scope: str | None = None, source: str | None = None,
               entry_ids: list[str] | None = None, ts: int | None = None) -> None:
        if payload is not None:
            track = track or _real(payload["track"])
            scope = scope or _real(payload["scope"])
            text = payload["text"] if text is None else text
            source = source or payload.get("source") or DEFAULT_SOURCE
        if entry is not None:
            track, scope = entry["track"], entry["scope"]
            text = entry["text"] if text is None else text
            source = entry["source"]
        self.store.audit({
            "ts": self.clock() if ts is None else ts, "action": action, "track": track, "scope": scope,
            "entryId": entry["id"] if entry is not None else None, "text": text,
            "outcome": outcome, "source": source, "sessionId": ctx.session_id,
            "entry": entry, "entryIds": entry_ids,
        })

    def _insert(self, new: NewEntry, ctx: Context, now: int, entry_id: str | None = None) -> Entry:
        entry: Entry = {
            "id": self.ids() if entry_id is None else entry_id, "track": new.track, "scope": new.scope,
            "workspaceKey": new.workspace_key, "agentKey": new.agent_key, "text": new.text,
            "source": new.source, "tags": list(new.tags), "version": 1, "createdAt": now,
            "updatedAt": now, "lastRecalled": None, "recallCount": 0,
            "sessionId": ctx.session_id,
        }
        self.store.insert(entry)
        return entry

    # -- writes --------------------------------------------------------------------------------

    def add(self, input: Any, write: Any, *, cancel: CancelToken | None = None,
            ) -> dict[str, Any]:
        ctx = self._context(write)
        new = new_entry(input, ctx)
        bucket = (new.track, new.scope)
        additions = {bucket: units(new.text)}
        self._check_budget(additions)
        payload = approval.payload("add", new.track, new.scope, new.text, source=new.source,
                                   targets=[])
        decision = self._approve("add", ctx, payload, write, new.source,
                                 f"{new.track}/{new.scope}", cancel)

        def apply() -> dict[str, Any]:
            self._check_budget(additions)
            now = self.clock()
            entry = self._insert(new, ctx, now)
            self._audit("add", ctx, entry=entry, outcome=decision.label, ts=now)
            return {"entry": entry, "usage": self._usage_row(*bucket)}

        return self._commit("add", ctx, payload, decision, apply, cancel)

    def replace(self, input: Any, write: Any, *, cancel: CancelToken | None = None,
                by_id: bool = False) -> dict[str, Any]:
        """With ``by_id`` (MEM-CLI-003) ``match`` is the exact id of the target entry."""
        ctx = self._context(write)
        data = _object(input)
        check_keys(data, {"track", "scope", "match", "text", "tags", "source"})
        track, scope = check_bucket(data)
        match = check_match(data.get("match"), "/match")
        text = check_text(data.get("text"), "/text")
        tags = None if data.get("tags") is None else normalise_tags(data["tags"], "/tags")
        source = check_source(data.get("source"), "/source")
        state = self.store.state()
        target = self._resolve(track, scope, match, ctx, by_id)
        self._check_budget({(track, scope): units(text) - units(target["text"])})
        payload = approval.payload("replace", track, scope,
                                   approval.replace_text(target["text"], text), source=source,
                                   targets=[_ref(target)])
        decision = self._approve("replace", ctx, payload, write, source, f"{track}/{scope}",
                                 cancel)

        def apply() -> dict[str, Any]:
            current = self._reresolve(track, scope, match, ctx, target, state, by_id)
            self._check_budget({(track, scope): units(text) - units(current["text"])})
            now = self.clock()
            updated = {**current, "text": text, "version": current["version"] + 1,
                       "updatedAt": max(now, current["updatedAt"]),
                       "sessionId": ctx.session_id}
            if tags is not None:
                updated["tags"] = tags
            self.store.update(updated)
            self._audit("replace", ctx, entry=updated, outcome=decision.label, ts=now)
            return {"previous": current, "entry": updated, "usage": self._usage_row(track, scope)}

        return self._commit("replace", ctx, payload, decision, apply, cancel)

    def remove(self, input: Any, write: Any, *, cancel: CancelToken | None = None,
               by_id: bool = False) -> dict[str, Any]:
        """With ``by_id`` (MEM-CLI-003) ``match`` is the exact id of the target entry."""
        ctx = self._context(write)
        data = _object(input)
        check_keys(data, {"track", "scope", "match"})
        track, scope = check_bucket(data)
        match = check_match(data.get("match"), "/match")
        state = self.store.state()
        target = self._resolve(track, scope, match, ctx, by_id)
        payload = approval.payload("remove", track, scope, target["text"],
                                   source=target["source"], targets=[_ref(target)])
        decision = self._approve("remove", ctx, payload, write, target["source"],
                                 f"{track}/{scope}", cancel)

        def apply() -> dict[str, Any]:
            current = self._reresolve(track, scope, match, ctx, target, state, by_id)
            self.store.delete(current["id"])
            self._audit("remove", ctx, entry=current, outcome=decision.label, ts=self.clock())
            return {"entry": current, "usage": self._usage_row(track, scope)}

        return self._commit("remove", ctx, payload, decision, apply, cancel)

    def consolidate(self, input: Any, write: Any, *, cancel: CancelToken | None = None,
                    by_id: bool = False) -> dict[str, Any]:
        """With ``by_id`` (MEM-CLI-003) each of ``matches`` is the exact id of a target."""
        ctx = self._context(write)
        data = _object(input)
        check_keys(data, {"track", "scope", "matches", "text", "tags", "source"})
        track, scope = check_bucket(data)
        matches = data.get("matches")
        if not isinstance(matches, list) or not 1 <= len(matches) <= MAX_CONSOLIDATE:
            raise invalid("/matches", f"matches must be an array of 1 to {MAX_CONSOLIDATE} "
                                      "non-empty strings")
        for index, match in enumerate(matches):
            check_match(match, f"/matches/{index}")
        text = check_text(data.get("text"), "/text")
        tags = normalise_tags(data.get("tags"), "/tags")
        source = check_source(data.get("source"), "/source")
        state = self.store.state()
        targets = [self._resolve(track, scope, m, ctx, by_id) for m in matches]
        seen: dict[str, int] = {}
        for index, target in enumerate(targets):
            if target["id"] in seen:
                raise invalid(f"/matches/{index}", f"resolves to the same entry as "
                                                   f"/matches/{seen[target['id']]}")
            seen[target["id"]] = index
        layers = {(t["agentKey"], t["workspaceKey"]) for t in targets}
        if len(layers) > 1:
            raise invalid("/matches", "consolidated entries must share one agentKey and "
                                      "workspaceKey")
        agent, workspace = next(iter(layers))
        removed_units = sum(units(t["text"]) for t in targets)
        self._check_budget({(track, scope): units(text) - removed_units})
        payload = approval.payload(
            "consolidate", track, scope,
            approval.consolidate_text(matches, [t["text"] for t in targets], text),
            source=source, targets=[_ref(t) for t in targets])
        decision = self._approve("consolidate", ctx, payload, write, source,
                                 f"{track}/{scope}", cancel)
        new = NewEntry(track, scope, text, tuple(tags), source, workspace, agent)

        def apply() -> dict[str, Any]:
            current = [self._reresolve(track, scope, m, ctx, t, state, by_id)
                       for m, t in zip(matches, targets, strict=True)]
            self._check_budget({(track, scope): units(text) - sum(units(c["text"])
                                                                   for c in current)})
            now = self.clock()
            for entry in current:
                self.store.delete(entry["id"])
                self._audit("consolidate-remove", ctx, entry=entry, outcome=decision.label,
                            ts=now)
            merged = self._insert(new, ctx, now)
            self._audit("consolidate-add", ctx, entry=merged, outcome=decision.label, ts=now)
            return {"removed": current, "entry": merged, "usage": self._usage_row(track, scope)}

        return self._commit("consolidate", ctx, payload, decision, apply, cancel)

    def seed(self, entries: Any, write: Any, *, cancel: CancelToken | None = None,
            ) -> dict[str, Any]:
        ctx = self._context(write)
        if not isinstance(entries, list) or not 1 <= len(entries) <= MAX_SEED:
            raise invalid("/", f"seed takes an array of 1 to {MAX_SEED} entry inputs")
        news = [new_entry(item, ctx, f"/{index}") for index, item in enumerate(entries)]
        additions: dict[tuple[str, str], int] = {}
        for new in news:
            key = (new.track, new.scope)
            additions[key] = additions.get(key, 0) + units(new.text)
        self._check_budget(additions)
        payload, common_source, buckets = approval.seed_payload(
            [(n.track, n.scope, n.text, n.source) for n in news], [])
        decision = self._approve("seed", ctx, payload, write, common_source,
                                 [f"{t}/{s}" for t, s in buckets], cancel)

        def apply() -> dict[str, Any]:
            self._check_budget(additions)
            now = self.clock()
            self._audit("seed", ctx, payload=payload, outcome=decision.label, ts=now)
            # MEM-WRT-013: one clock reading for the batch, so increasing ids keep its order
            ids = sorted(self.ids() for _ in news)
            inserted = []
            for new, entry_id in zip(news, ids, strict=True):
                entry = self._insert(new, ctx, now, entry_id)
                self._audit("add", ctx, entry=entry, outcome=decision.label, ts=now)
                inserted.append(entry)
            return {"added": len(inserted), "entries": inserted}

        return self._commit("seed", ctx, payload, decision, apply, cancel)

    # -- proposals (chapter memory/proposals) ---------------------------------------------------

    def propose(self, input: Any, write: Any) -> dict[str, Any]:
        """MEM-PRO-002: a pending proposal, once per (session id, kind); not gated."""
        ctx = self._context(write)
        kind, new = pro.new_proposal(input, ctx)
        assert ctx.session_id is not None  # checked by new_proposal
        existing = pro.by_key(self.store, ctx.session_id, kind)
        if existing is not None:
            return {"proposal": existing, "created": False}
        with self.store.transaction():
            existing = pro.by_key(self.store, ctx.session_id, kind)
            if existing is not None:  # proposed by another process meanwhile
                return {"proposal": existing, "created": False}
            now = self.clock()
            proposal: pro.Proposal = {
                "id": self.ids(), "kind": kind, "track": new.track, "scope": new.scope,
                "workspaceKey": new.workspace_key, "agentKey": new.agent_key,
                "text": new.text, "source": new.source, "sessionId": ctx.session_id,
                "status": pro.PENDING, "createdAt": now, "decidedAt": None,
                "entryId": None}
            pro.insert(self.store, proposal)
            self._proposal_audit("proposal", ctx, proposal, "pending", now)
        return {"proposal": proposal, "created": True}

    def proposals(self, filter: Any = None, write: Any = None) -> list[pro.Proposal]:
        """MEM-PRO-006: in (createdAt, id) order; with ``write``, the writer's visible ones."""
        status, limit = pro.list_filter(filter)
        keys = None
        if write is not None:
            ctx = self._context(write)
            keys = (ctx.workspace, ctx.agent)
        return pro.select(self.store, status, keys, limit)

    def approve_proposal(self, input: Any, write: Any, *, cancel: CancelToken | None = None,
                         ) -> dict[str, Any]:
        """MEM-PRO-004: an ``add`` of the proposal's text through the whole write pipeline,
        and the proposal approved in the same transaction."""
        ctx = self._context(write)
        proposal_id = pro.proposal_id(input)
        proposal = pro.pending_visible(self.store, proposal_id, ctx)
        bucket = (proposal["track"], proposal["scope"])
        additions = {bucket: units(proposal["text"])}
        self._check_budget(additions)
        payload = approval.payload("add", *bucket, proposal["text"], source=proposal["source"],
                                   targets=[])
        decision = self._approve("add", ctx, payload, write, proposal["source"],
                                 f"{bucket[0]}/{bucket[1]}", cancel)
        new = NewEntry(*bucket, proposal["text"], (), proposal["source"],
                       proposal["workspaceKey"], proposal["agentKey"])

        def apply() -> dict[str, Any]:
            current = pro.pending_visible(self.store, proposal_id, ctx)
            self._check_budget(additions)
            now = self.clock()
            entry = self._insert(new, ctx, now)
            self._audit("add", ctx, entry=entry, outcome=decision.label, ts=now)
            decided = pro.decide(self.store, current, pro.APPROVED, now, entry["id"])
            self._proposal_audit("proposal-approved", ctx, decided, decision.label, now,
                                 entry_ids=[entry["id"]])
            return {"proposal": decided, "entry": entry, "usage": self._usage_row(*bucket)}

        return self._commit("add", ctx, payload, decision, apply, cancel)

    def dismiss_proposal(self, input: Any, write: Any) -> dict[str, Any]:
        """MEM-PRO-005: pending → dismissed, audited; memory is not changed, so not gated."""
        ctx = self._context(write)
        proposal_id = pro.proposal_id(input)
        pro.pending_visible(self.store, proposal_id, ctx)
        with self.store.transaction():
            current = pro.pending_visible(self.store, proposal_id, ctx)
            now = self.clock()
            decided = pro.decide(self.store, current, pro.DISMISSED, now)
            self._proposal_audit("proposal-dismissed", ctx, decided, "dismissed", now)
        return {"proposal": decided}

    def _proposal_audit(self, action: str, ctx: Context, proposal: pro.Proposal,
                        outcome: str, ts: int, entry_ids: list[str] | None = None) -> None:
        """MEM-PRO-008: the proposal id in ``entryId``, its text, its source."""
        self.store.audit({
            "ts": ts, "action": action, "track": proposal["track"], "scope": proposal["scope"],
            "entryId": proposal["id"], "text": proposal["text"], "outcome": outcome,
            "source": proposal["source"], "sessionId": ctx.session_id, "entry": None,
            "entryIds": entry_ids})

    # -- reads ---------------------------------------------------------------------------------

    def query(self, filter: Any = None, opts: Any = None) -> dict[str, Any]:
        """MEM-QRY-001..005."""
        data = {} if filter is None else _object(filter)
        check_keys(data, {"track", "scope", "text", "limit"})
        options = {} if opts is None else _object(opts, "/opts")
        check_keys(options, {"reader", "recall", "sessionId", "agentKey"}, "/opts")
        for key, allowed in (("track", TRACKS), ("scope", SCOPES)):
            if data.get(key) is not None and data[key] not in allowed:
                raise invalid(f"/{key}", f"{key} must be one of {', '.join(allowed)}")
        text = data.get("text")
        if text is not None and not isinstance(text, str):
            raise invalid("/text", "text must be a string")
        limit = data.get("limit", DEFAULT_QUERY_LIMIT)
        if limit is None:
            limit = DEFAULT_QUERY_LIMIT
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise invalid("/limit", "limit must be a positive integer")
        limit = min(limit, MAX_QUERY_LIMIT)
        reader, keys, agent_only, recall = self._query_options(options)
        if agent_only is None:
            page, total = self.store.select(track=data.get("track"), scope=data.get("scope"),
                                            keys=keys, needle=text, order=RANKING, limit=limit)
        else:  # MEM-QRY-007: the agent rule alone, as dsh-memento's agentKey filters
            ranked, _ = self.store.select(track=data.get("track"), scope=data.get("scope"),
                                          needle=text, order=RANKING)
            chosen = [e for e in ranked if e["agentKey"] in ("", agent_only)]
            page, total = chosen[:limit], len(chosen)
        if recall and reader is not None:
            now = self.clock()
            ids = [e["id"] for e in page]
            with self.store.transaction():
                self.store.recall(ids, now)
                for entry in page:
                    entry["recallCount"] += 1
                    entry["lastRecalled"] = now
                self._audit("recalled", reader, outcome="ok", text=text or None,
                            track=data.get("track"), scope=data.get("scope"),
                            source=DEFAULT_SOURCE, entry_ids=ids, ts=now)
        return {"entries": page, "total": total, "truncated": total > len(page)}

    def _query_options(self, options: dict[str, Any],
                       ) -> tuple[Context | None, tuple[str, str] | None, str | None, bool]:
        """MEM-QRY-006/007: (the session of a recall, the visibility keys, the agent key of an
        agent-only filter, recall?).

        dsh-memento's ``sessionId`` makes the query a recall for that session; its ``agentKey``
        filters by agent only. They are the other spelling of ``reader``, not an addition."""
        memento = [key for key in ("sessionId", "agentKey") if options.get(key) is not None]
        if memento and options.get("reader") is not None:
            raise invalid(f"/opts/{memento[0]}", "give either reader or dsh-memento's "
                                                 "sessionId/agentKey, not both")
        for key in memento:
            if not isinstance(options[key], str):
                raise invalid(f"/opts/{key}", f"{key} must be a string")
        recall = options.get("recall", "sessionId" in memento)
        if not isinstance(recall, bool):
            raise invalid("/opts/recall", "recall must be a boolean")
        if not memento:
            reader = None
            if options.get("reader") is not None:
                reader = self._context(options["reader"])
            if recall and (reader is None or reader.session_id is None):
                raise invalid("/opts/reader", "a recall needs a reader with a session id")
            keys = None if reader is None else (reader.workspace, reader.agent)
            return reader, keys, None, recall
        if "sessionId" in memento and not recall:
            raise invalid("/opts/recall", "sessionId asks for a recall: recall must be true")
        if recall and "sessionId" not in memento:
            raise invalid("/opts/sessionId", "a recall needs the session id")
        agent = agent_key(options.get("agentKey")) if "agentKey" in memento else None
        session = options.get("sessionId")
        reader = Context(session_id=session, workspace="", agent=agent or "",
                         approval_policy=None) if recall else None
        return reader, None, agent, recall

    def budgets(self) -> list[dict[str, Any]]:
        """MEM-BUD-005."""
        usage = self.store.bucket_usage()
        return [{"track": t, "scope": s, "used": usage.get((t, s), 0),
                 "limit": self.limits[(t, s)]} for t, s in BUCKETS]

    def list_entries(self) -> list[Entry]:
        return self.store.entries("ORDER BY created_at, id")

    def audit_list(self, limit: int = 100, after: int | None = None) -> list[dict[str, Any]]:
        """MEM-AUD-003: newest first; MEM-AUD-008: with ``after``, the rows past that ``seq``,
        oldest first (a cursor over the whole ledger)."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
            raise invalid("/limit", "limit must be an integer from 1 to 1000")
        if after is None:
            return self.store.audit_rows(limit=limit)
        if isinstance(after, bool) or not isinstance(after, int) or after < 0:
            raise invalid("/after", "after must be a non-negative integer (a seq, 0 for the "
                                    "start of the ledger)")
        return self.store.audit_rows("WHERE seq > ?", (after,), order="ORDER BY seq ASC",
                                     limit=limit)

    def _ledger(self, after: int = 0, page: int = 1000) -> Iterator[dict[str, Any]]:
        """Every audit row past ``after``, oldest first, read through the cursor in pages."""
        while True:
            rows = self.audit_list(page, after=after)
            yield from rows
            if len(rows) < page:
                return
            after = rows[-1]["seq"]

    def snapshot(self, write: Any) -> str:
        """MEM-SNP-001: rendered once per session id, then the same bytes from the ledger."""
        ctx = self._context(write)
        if ctx.session_id is None:
            raise invalid("/agent/session/id", "a snapshot needs the session id")
        frozen = self._frozen(ctx.session_id)
        if frozen is not None:
            return frozen
        keys = (ctx.workspace, ctx.agent)
        entries, _ = self.store.select(keys=keys, order=CREATION)
        pending = pro.select(self.store, pro.PENDING, keys, pro.MAX_PENDING_SHOWN)
        text = snapshot.render(entries, self.budgets(), pending)
        with self.store.transaction():
            frozen = self._frozen(ctx.session_id)
            if frozen is not None:
                return frozen
            self._audit("snapshot", ctx, outcome="ok", text=text, source=DEFAULT_SOURCE)
        return text

    def _frozen(self, session_id: str) -> str | None:
        rows = self.store.audit_rows("WHERE action = 'snapshot' AND session_id = ?",
                                     (session_id,), order="ORDER BY seq ASC", limit=1)
        return str(rows[0]["text"]) if rows else None

    def export(self, ledger: bool = False) -> dict[str, Any]:
        """MEM-EXP-001; MEM-EXP-005: with ``ledger``, the whole audit ledger as well."""
        if not isinstance(ledger, bool):
            raise invalid("/ledger", "ledger must be a boolean")
        for _ in range(EXPORT_ATTEMPTS):  # entries and ledger of one state, without a lock
            state = self.store.state()
            entries = self.list_entries()
            rows = list(self._ledger()) if ledger else None
            usage = self.budgets()
            if self.store.state() == state:
                return export_envelope(entries, usage, self.clock(), rows)
        raise MemoryProtocolError(
            "STORE_BUSY", "the store kept changing while it was exported; retry the export",
            {"path": str(self.store.path)})

    def import_envelope(self, envelope: Any, write: Any, *, cancel: CancelToken | None = None,
                        restore: bool = False, replace: bool = False) -> dict[str, Any]:
        """MEM-EXP-002/003: validated, then seeded (keeps content, resets identity); with
        ``restore``, the entries as they were (MEM-CLI-004), ``replace`` overwriting a
        stored entry of the same id and other content."""
        if not isinstance(restore, bool) or not isinstance(replace, bool):
            raise invalid("/restore" if not isinstance(restore, bool) else "/replace",
                          "must be a boolean")
        if restore:
            return self._restore(envelope, write, replace, cancel)
        if replace:
            raise invalid("/replace", "replace applies to a restore (restore=True)")
        self._context(write)
        return self.seed(envelope_entries(envelope), write, cancel=cancel)

    def _restore(self, envelope: Any, write: Any, replace: bool,
                 cancel: CancelToken | None) -> dict[str, Any]:
        """MEM-CLI-004: write an envelope's entries back as they were (ids, keys, timestamps,
        versions, recall members, session ids), under one approval. An entry whose id is
        stored with the same content is skipped; with other content it is an
        ``IMPORT_CONFLICT`` unless ``replace``. Nothing to write asks nothing."""
        ctx = self._context(write)
        entries = restored_entries(envelope)
        state = self.store.state()
        stored = {e["id"]: self.store.entry(e["id"]) for e in entries}
        same = {e["id"] for e in entries
                if (old := stored[e["id"]]) is not None and _same_content(old, e)}
        conflicts = [e["id"] for e in entries if stored[e["id"]] is not None
                     and e["id"] not in same]
        if conflicts and not replace:
            raise MemoryProtocolError(
                "IMPORT_CONFLICT", f"{len(conflicts)} entries of the envelope have the id of a "
                f"stored entry with other content (first {conflicts[0]}); nothing was changed",
                {"ids": conflicts})
        skipped = [e["id"] for e in entries if e["id"] in same]
        writes = [e for e in entries if e["id"] not in same]
        if not writes:
            return {"added": 0, "replaced": 0, "skipped": skipped, "entries": []}
        replaced = [old for old in (stored[e["id"]] for e in writes) if old is not None]
        additions = _restore_additions(writes, replaced)
        self._check_budget(additions)
        payload, common_source, buckets = approval.seed_payload(
            [(e["track"], e["scope"], e["text"], e["source"]) for e in writes],
            [_ref(old) for old in replaced])
        decision = self._approve("seed", ctx, payload, write, common_source,
                                 _one_bucket(buckets), cancel)

        def apply() -> dict[str, Any]:
            if self.store.state() != state:
                for entry_id, before in stored.items():
                    _unchanged(entry_id, before, self.store.entry(entry_id))
            self._check_budget(additions)
            now = self.clock()
            self._audit("seed", ctx, payload=payload, outcome=decision.label, ts=now)
            for entry in writes:
                if stored[entry["id"]] is None:
                    self.store.insert(entry)
                    self._audit("add", ctx, entry=entry, outcome=decision.label, ts=now)
                else:  # delete and insert: the envelope's bucket and keys may differ
                    self.store.delete(entry["id"])
                    self.store.insert(entry)
                    self._audit("replace", ctx, entry=entry, outcome=decision.label, ts=now)
            return {"added": len(writes) - len(replaced), "replaced": len(replaced),
                    "skipped": skipped, "entries": writes}

        return self._commit("seed", ctx, payload, decision, apply, cancel)

    def migrate_memento(self, source: Any, write: Any) -> dict[str, Any]:
        """MEM-MIG-001..010: bring the dsh-memento store at ``source`` into this store."""
        from .migrate import migrate_memento  # the migration builds on this module

        if not isinstance(source, (str, Path)) or source == "":
            raise invalid("/source", "source must be the path of a dsh-memento store")
        return migrate_memento(self, source, write)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Provider:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


#: What a restore compares: every member but the recall members, which reading changes.
_RECALL = ("recallCount", "lastRecalled")


def _same_content(stored: Entry, entry: Entry) -> bool:
    return all(stored[key] == entry[key] for key in entry if key not in _RECALL)


def _unchanged(entry_id: str, before: Entry | None, after: Entry | None) -> None:
    """A restore's view of one id, approved and now: an entry that appeared is a conflict,
    one that changed or went away is stale (MEM-WRT-004)."""
    if before is None:
        if after is not None:
            raise MemoryProtocolError(
                "IMPORT_CONFLICT", f"entry {entry_id} was stored after the restore was "
                "approved; nothing was changed, review and retry", {"ids": [entry_id]})
        return
    if after is None or not _same_content(after, before):
        actual = after["version"] if after is not None else None
        raise MemoryProtocolError(
            "STALE_WRITE", f"entry {entry_id} changed after it was approved (version "
            f"{before['version']} approved, now {actual}); nothing was changed, review and "
            "retry", {"entryId": entry_id, "expectedVersion": before["version"],
                      "actualVersion": actual})


def _restore_additions(writes: list[Entry], replaced: list[Entry],
                       ) -> dict[tuple[str, str], int]:
    additions: dict[tuple[str, str], int] = {}
    for entry, sign in [(e, 1) for e in writes] + [(e, -1) for e in replaced]:
        key = (entry["track"], entry["scope"])
        additions[key] = additions.get(key, 0) + sign * units(entry["text"])
    return additions


def _cancelled(cancel: CancelToken | None) -> bool:
    return cancel is not None and cancel.cancelled


def _denied(decision: Decision) -> MemoryProtocolError:
    """MEM-GATE-006, with what to do about it when the cause is known (MEM-GATE-010)."""
    if decision.error_type is not None:
        why = (f"the approval gate failed ({decision.error_type}: {decision.cause}); fix the "
               "gate and retry")
    elif decision.label.startswith("unavailable (via no gate"):
        why = ("no approval gate is configured; pass gate= to open_provider, or approve "
               "without asking with write_policy=\"auto\" or a writePolicies override")
    else:
        why = None
    head = f"the memory write was not approved (outcome {decision.outcome})"
    message = f"{head}: {why}; nothing was changed" if why else f"{head}; nothing was changed"
    return MemoryProtocolError("WRITE_DENIED", message, decision.details())


def _ref(entry: Entry) -> dict[str, Any]:
    return {"id": entry["id"], "version": entry["version"]}


def _real(value: str) -> str | None:
    return None if value == "batch" else value


def _object(value: Any, field: str = "/") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise invalid(field, "must be an object")
    return value


def open_provider(db_path: str | Path | None = None, *, budgets: dict[str, Any] | None = None,
                  gate: Gate | None = None, clock: Clock | None = None,
                  ids: IdFactory | None = None, write_policy: str = "ask",
                  write_policies: dict[str, str] | None = None,
                  audit_retention_days: int = 0, durability: str = "normal") -> Provider:
    """Open (creating or migrating) a store and wrap it in the protocol pipeline.

    ``durability`` is the store's commit durability (MEM-STO-001): ``"normal"`` (a commit
    survives a crash of the process; a power loss may take the last commits, whole) or
    ``"full"`` (every commit also survives a power loss, at one ``fsync`` per commit).
    """
    limits = _limits(budgets)
    if gate is not None and not callable(gate):
        raise invalid("/gate", "gate must be a callable gate(payload, write) that returns an "
                               "outcome string")
    policy = Policy.build(write_policy, write_policies)
    if isinstance(audit_retention_days, bool) or not isinstance(audit_retention_days, int) \
            or audit_retention_days < 0:
        raise invalid("/auditRetentionDays", "must be a non-negative integer")
    store = open_store(db_path if db_path is not None else default_path(),
                       durability=durability)
    provider = Provider(store, limits=limits, gate=gate, policy=policy,
                        clock=clock or _system_clock, ids=ids or _uuid4)
    if audit_retention_days > 0:
        cutoff = provider.clock() - audit_retention_days * 86_400_000
        with store.transaction():
            store.conn.execute("DELETE FROM audit WHERE ts < ?", (cutoff,))
    return provider


def _one_bucket(buckets: set[tuple[str, str]]) -> str | None:
    """The policy lookup key of a restore: its bucket when it has one, else none."""
    return "/".join(next(iter(buckets))) if len(buckets) == 1 else None
