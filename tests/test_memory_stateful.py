"""The reference provider against the in-memory model of the contract, step by step.

A hypothesis state machine drives random writes (add, replace, remove, consolidate, seed),
queries (plain and recall), snapshots, exports and reopenings from three writer contexts
(different cwd and agentPreset; one sharing a workspace with another, one on the shared agent
layer, and a session-level "never" variant), through a scripted approver that sometimes denies,
crashes, answers a non-string or changes the store itself before answering (a concurrent
writer: STALE_WRITE and ``<op>-failed`` rows).

Both sides get the same injected clock (frozen within a step) and deterministic id sequences,
so results, errors, approval payloads, entries, budgets and the whole audit ledger are compared
for equality after every step, and every value the provider returns (results, errors, payloads,
new audit rows, exports) is checked against its JSON Schema (schemas/memory/v1). Invariants on
the provider:

* no bucket over its limit unless it started over (then it never grows);
* a refused or denied write changes no entry and leaves exactly its one audit row
  (``<op>-denied`` or ``<op>-failed``) or none (validation errors, pre-approval refusals,
  WRITE_REQUIRES_AGENT);
* replaying the ledger (MEM-AUD-005) reproduces ``list_entries()`` exactly.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from memory_support import CountingIds, FrozenClock, Json, budgets, make_write

from dshkit import schemas
from dshkit.conformance.memory_model import MemoryModel, ModelError, replay, visible, writer_of
from dshkit.reference.memory import MemoryProtocolError, open_provider
from dshkit.reference.memory.provider import Provider

SMALL = budgets(60, 60, 90, 90)
BIG = budgets(4000, 4000, 4000, 4000)
POLICIES = {"source:cli": "auto", "source:blocked": "off", "agent/workspace": "auto"}
BUCKETS = [("user", "user-global"), ("user", "workspace"), ("agent", "user-global"),
           ("agent", "workspace")]
WRITERS = [
    make_write("s1", "/home/me/proj", "coder"),
    make_write("s2", "C:\\Work\\Proj", " Reviewer "),
    make_write("s3", "/home/me/proj/./", None),  # s1's workspace, the shared agent layer ""
]
NEVER = make_write("s1", "/home/me/proj", "coder", approval_policy="never")
WORDS = ["alpha", "Beta", "GAMMA", "tea 😀", "éclair", "ΑΣ", "two\nlines", "tab\there", "𝄞a"]
SOURCES: list[str | None] = [None, "cli", "blocked", "manual"]
TAGS: list[list[str] | None] = [None, [], ["x"], [" a ", "a", "b"]]
RAISE, NON_STRING = "<raise>", "<non-string>"
ANSWERS = ["allowed-once"] * 6 + ["rejected", "cancelled", "allowed-always", RAISE,
                                  NON_STRING]
Match = tuple[str, Any]

writer_st = st.sampled_from([0, 0, 1, 1, 2, 2, len(WRITERS)])  # len(WRITERS): "never"
bucket_st = st.sampled_from(BUCKETS)
word_st = st.sampled_from(WORDS)
match_st: st.SearchStrategy[Match] = st.one_of(
    st.tuples(st.just("token"), st.integers(0, 99)),
    st.tuples(st.just("token"), st.integers(0, 99)),
    st.tuples(st.just("word"), word_st),
    st.tuples(st.just("literal"), st.sampled_from(["zzz", "#", "ALPHA", "\u03c3", "Σ", "😀"])))
answer_st = st.sampled_from(ANSWERS)
interfere_st = st.sampled_from([False, False, False, True])
INVALID_WRITES: list[tuple[str, Json, str]] = [
    ("add", {"track": "team", "scope": "workspace", "text": "x"}, "/track"),
    ("add", {"track": "user", "scope": "global", "text": "x"}, "/scope"),
    ("add", {"track": "user", "scope": "workspace", "text": " \t\n"}, "/text"),
    ("add", {"track": "user", "scope": "workspace", "text": "a\u0000b"}, "/text"),
    ("add", {"track": "user", "scope": "workspace", "text": "x", "tags": [" "]}, "/tags/0"),
    ("add", {"track": "user", "scope": "workspace", "text": "x", "source": ""}, "/source"),
    ("add", {"track": "user", "scope": "workspace", "text": "x", "extra": 1}, "/extra"),
    ("replace", {"track": "user", "scope": "workspace", "match": "", "text": "x"}, "/match"),
    ("replace", {"track": "user", "scope": "workspace", "match": "a", "text": "\u007f"},
     "/text"),
    ("remove", {"track": "agent", "scope": "workspace"}, "/match"),
    ("consolidate", {"track": "user", "scope": "workspace", "matches": [], "text": "x"},
     "/matches"),
    ("consolidate", {"track": "user", "scope": "workspace", "matches": ["a", 3], "text": "x"},
     "/matches/1"),
    ("seed", {"entries": []}, "/"),
    ("seed", {"entries": [{"track": "user", "scope": "user-global", "text": "ok"},
                          {"track": "user", "scope": "user-global", "text": ""}]}, "/1/text"),
]
VALID_INPUTS: dict[str, Json] = {
    "add": {"track": "user", "scope": "user-global", "text": "x"},
    "replace": {"track": "user", "scope": "user-global", "match": "x", "text": "y"},
    "remove": {"track": "user", "scope": "user-global", "match": "x"},
    "consolidate": {"track": "user", "scope": "user-global", "matches": ["x"], "text": "y"},
    "seed": {"entries": [{"track": "user", "scope": "user-global", "text": "x"}]},
}
NO_AGENT: list[tuple[str, Any]] = [
    (op, write) for op in VALID_INPUTS for write in ({}, {"agent": None}, {"agent": "coder"},
                                                     None)][::3]


class ScriptedGate:
    """The approver of one side: answers from the script, optionally interferes first."""

    def __init__(self) -> None:
        self.answer = "allowed-once"
        self.interfere: Callable[[], None] | None = None
        self.seen: list[Json] = []

    def __call__(self, payload: Json, write: Json) -> object:
        self.seen.append(payload)
        if self.interfere is not None:
            action, self.interfere = self.interfere, None
            action()
        if self.answer == RAISE:
            raise RuntimeError("the approver crashed")
        if self.answer == NON_STRING:
            return None
        return self.answer


Outcome = tuple[str, Any]


RESULT_SCHEMAS = {
    "add": "write-result.json#/$defs/entryResult",
    "remove": "write-result.json#/$defs/entryResult",
    "replace": "write-result.json#/$defs/replaceResult",
    "consolidate": "write-result.json#/$defs/consolidateResult",
    "seed": "write-result.json#/$defs/seedResult",
    "query": "query-result.json",
    "export": "export-envelope.json#/$defs/dshkitExport",
}


def conforms(schema: str, instance: object) -> None:
    """Assert that ``instance`` is valid against ``memory/v1/<schema>``."""
    problems = schemas.errors(f"memory/v1/{schema}", instance)
    assert not problems, f"{schema}: {problems[0].message} at {list(problems[0].absolute_path)}"


def run_provider(call: Callable[[], Any], op: str = "") -> Outcome:
    try:
        result = call()
    except MemoryProtocolError as exc:
        conforms("error.json", exc.to_json())
        return ("error", _error(exc.code, exc.message, exc.details))
    if op in RESULT_SCHEMAS:
        conforms(RESULT_SCHEMAS[op], result)
    return ("ok", result)


def run_model(call: Callable[[], Any]) -> Outcome:
    try:
        return ("ok", call())
    except ModelError as exc:
        return ("error", _error(exc.code, exc.message, exc.details))


def _error(code: str, message: str, details: dict[str, Any]) -> Json:
    """What the contract fixes of an error: the code, its details, some messages."""
    if code == "INVALID_INPUT":  # the reason text is the implementation's
        return {"code": code, "field": details.get("field")}
    if code in ("BUDGET_EXCEEDED", "ENTRY_NOT_FOUND"):  # MEM-BUD-004, MEM-MAT-003
        return {"code": code, "details": details, "message": message}
    return {"code": code, "details": details}


class MemoryMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="dshkit-mem-"))
        self.path = self.dir / "memory.db"
        self.clock = FrozenClock()
        self.provider_ids = CountingIds()  # shared by both provider handles
        self.provider_gate = ScriptedGate()
        self.model_gate = ScriptedGate()
        self.model = MemoryModel(budgets=BIG, gate=self.model_gate, clock=self.clock,
                                 ids=CountingIds(), write_policy="ask", write_policies=POLICIES)
        self.provider: Provider = self._open(BIG)
        self.other: Provider | None = None  # a second handle: the concurrent writer
        self.limits = BIG
        self.previous_used: dict[tuple[str, str], int] = {}
        self.token = 0
        self.baseline: tuple[list[Json], int] | None = None
        self.sides: dict[str, Outcome] = {}  # the concurrent writer's add, per side

    def _open(self, limits: Json) -> Provider:
        return open_provider(self.path, budgets=limits, gate=self.provider_gate,
                             clock=self.clock, ids=self.provider_ids, write_policy="ask",
                             write_policies=POLICIES)

    def teardown(self) -> None:
        self.provider.close()
        if self.other is not None:
            self.other.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    # -- helpers -------------------------------------------------------------------------------

    def _text(self, word: str, repeat: int = 1) -> str:
        self.token += 1
        return f"{' '.join([word] * repeat)} #{self.token};"

    def _targets(self, choices: list[Match], writer: Json,
                 bucket: tuple[str, str]) -> tuple[list[str], tuple[str, str]]:
        """Match strings and the bucket to use: mostly the unique tokens of entries the writer
        can see, the first one picking the bucket, the others from its bucket and layer."""
        keys = writer_of(writer)
        everything = self.model.list_entries()
        seen = [e for e in everything if visible(e, keys.workspace, keys.agent)]
        matches: list[str] = []
        first: Json | None = None
        for kind, value in choices:
            if kind == "token":
                pool = seen if first is None else [
                    e for e in seen if (e["track"], e["scope"], e["agentKey"], e["workspaceKey"])
                    == (first["track"], first["scope"], first["agentKey"], first["workspaceKey"])]
                pool = pool or everything
                if not pool:
                    matches.append("#0;")
                    continue
                entry = pool[value % len(pool)]
                if first is None:
                    first = entry
                    bucket = (entry["track"], entry["scope"])
                text = str(entry["text"])
                matches.append(text[text.rindex("#"):] if "#" in text else text)
            elif kind == "word":
                matches.append(str(value).swapcase() if value.isascii() else str(value))
            else:
                matches.append(str(value))
        return matches, bucket

    def _writer(self, index: int) -> Json:
        return NEVER if index == len(WRITERS) else WRITERS[index]

    def _script(self, answer: str, interfere: bool, bucket: tuple[str, str], writer: Json,
                text: str) -> None:
        """Set both approvers; an interfering gate first adds a look-alike (source cli: auto)."""
        self.provider_gate.answer = self.model_gate.answer = answer
        self.provider_gate.seen.clear()
        self.model_gate.seen.clear()
        self.baseline = None
        self.sides.clear()
        if not interfere:
            self.provider_gate.interfere = self.model_gate.interfere = None
            return
        item = {"track": bucket[0], "scope": bucket[1], "text": f"{text} dup", "source": "cli"}
        sides = self.sides

        def on_provider() -> None:
            other = self.other or self._open(self.limits)
            self.other = other
            sides["provider"] = run_provider(lambda: other.add(item, writer))
            self.baseline = (self.provider.list_entries(), len(self.provider.audit_list(1000)))

        def on_model() -> None:
            sides["model"] = run_model(lambda: self.model.add(item, writer))

        self.provider_gate.interfere = on_provider
        self.model_gate.interfere = on_model

    def _both(self, op: str, provider_call: Callable[[], Any],
              model_call: Callable[[], Any]) -> Outcome:
        """Run one call on both sides; results, errors and approval payloads must agree."""
        self.clock.advance()
        before = (self.provider.list_entries(), len(self.provider.audit_list(1000)))
        got = run_provider(provider_call, op)
        want = run_model(model_call)
        assert got == want, f"{op}: provider {got!r} != model {want!r}"
        assert self.provider_gate.seen == self.model_gate.seen, f"{op}: approval payloads differ"
        for payload in self.provider_gate.seen:
            conforms("approval-payload.json", payload)
        for row in self.provider.audit_list(1000)[: -before[1] or None]:
            conforms("audit-row.json", row)
        assert self.sides.get("provider") == self.sides.get("model"), "concurrent add differs"
        if got[0] == "error" and op != "query":
            self._check_refusal(op, got[1], self.baseline or before)
        return got

    def _check_refusal(self, op: str, error: Json, before: tuple[list[Json], int]) -> None:
        """A refused write changes no entry and leaves one ``-denied``/``-failed`` row or none."""
        entries, count = before
        assert self.provider.list_entries() == entries, f"refused {op} changed entries"
        rows = self.provider.audit_list(1000)
        new = rows[: len(rows) - count]
        code = error["code"]
        if code == "WRITE_DENIED":
            assert [r["action"] for r in new] == [f"{op}-denied"]
            assert new[0]["entry"] is None and new[0]["entryId"] is None
        elif code == "STALE_WRITE" or (code == "BUDGET_EXCEEDED" and self.baseline is not None):
            # Refused at commit after approval (only a concurrent writer can cause it).
            assert [r["action"] for r in new] == [f"{op}-failed"]
            assert new[0]["outcome"].endswith(f"; not applied: {code}")
        else:
            assert new == [], f"{code} on {op} must not be audited"

    # -- setup ---------------------------------------------------------------------------------

    @initialize(prefill=st.lists(st.tuples(bucket_st, word_st, st.integers(1, 4)), max_size=8))
    def start(self, prefill: list[tuple[tuple[str, str], str, int]]) -> None:
        """Optionally fill the store under big budgets, then reopen with small ones (G3)."""
        if prefill:
            items = [{"track": t, "scope": s, "text": self._text(w, n), "source": "cli"}
                     for (t, s), w, n in prefill]
            writer = WRITERS[0]
            self._script("allowed-once", False, ("user", "user-global"), writer, "")
            got = self._both("seed", lambda: self.provider.seed(items, writer),
                             lambda: self.model.seed(items, writer))
            assert got[0] == "ok"
        self.provider.close()
        self.provider = self._open(SMALL)
        self.model.reopen(budgets=SMALL)
        self.limits = SMALL
        self.previous_used = {(r["track"], r["scope"]): r["used"] for r in self.model.budgets()}

    # -- writes --------------------------------------------------------------------------------

    @rule(who=writer_st, bucket=bucket_st, word=word_st, repeat=st.integers(1, 4),
          source=st.sampled_from(SOURCES), tags=st.sampled_from(TAGS), answer=answer_st,
          interfere=interfere_st)
    def add(self, who: int, bucket: tuple[str, str], word: str, repeat: int, source: str | None,
            tags: list[str] | None, answer: str, interfere: bool) -> None:
        writer = self._writer(who)
        item: Json = {"track": bucket[0], "scope": bucket[1], "text": self._text(word, repeat)}
        if source is not None:
            item["source"] = source
        if tags is not None:
            item["tags"] = tags
        self._script(answer, interfere, bucket, writer, item["text"])
        self._both("add", lambda: self.provider.add(item, writer),
                   lambda: self.model.add(item, writer))

    @rule(who=writer_st, bucket=bucket_st, choice=match_st, word=word_st,
          repeat=st.integers(1, 3), source=st.sampled_from(SOURCES),
          tags=st.sampled_from(TAGS), answer=answer_st, interfere=interfere_st)
    def replace(self, who: int, bucket: tuple[str, str], choice: Match, word: str, repeat: int,
                source: str | None, tags: list[str] | None, answer: str,
                interfere: bool) -> None:
        writer = self._writer(who)
        [match], bucket = self._targets([choice], writer, bucket)
        item: Json = {"track": bucket[0], "scope": bucket[1], "match": match,
                      "text": self._text(word, repeat)}
        if source is not None:
            item["source"] = source
        if tags is not None:
            item["tags"] = tags
        self._script(answer, interfere, bucket, writer, match)
        self._both("replace", lambda: self.provider.replace(item, writer),
                   lambda: self.model.replace(item, writer))

    @rule(who=writer_st, bucket=bucket_st, choice=match_st, answer=answer_st,
          interfere=interfere_st)
    def remove(self, who: int, bucket: tuple[str, str], choice: Match, answer: str,
               interfere: bool) -> None:
        writer = self._writer(who)
        [match], bucket = self._targets([choice], writer, bucket)
        item: Json = {"track": bucket[0], "scope": bucket[1], "match": match}
        self._script(answer, interfere, bucket, writer, match)
        self._both("remove", lambda: self.provider.remove(item, writer),
                   lambda: self.model.remove(item, writer))

    @rule(who=writer_st, bucket=bucket_st, choices=st.lists(match_st, min_size=1, max_size=3),
          word=word_st, source=st.sampled_from(SOURCES), tags=st.sampled_from(TAGS),
          answer=answer_st, interfere=interfere_st)
    def consolidate(self, who: int, bucket: tuple[str, str], choices: list[Match], word: str,
                    source: str | None, tags: list[str] | None, answer: str,
                    interfere: bool) -> None:
        writer = self._writer(who)
        matches, bucket = self._targets(choices, writer, bucket)
        item: Json = {"track": bucket[0], "scope": bucket[1], "matches": matches,
                      "text": self._text(word)}
        if source is not None:
            item["source"] = source
        if tags is not None:
            item["tags"] = tags
        self._script(answer, interfere, bucket, writer, matches[0])
        self._both("consolidate", lambda: self.provider.consolidate(item, writer),
                   lambda: self.model.consolidate(item, writer))

    @rule(who=writer_st, items=st.lists(st.tuples(bucket_st, word_st, st.sampled_from(SOURCES)),
                                        min_size=1, max_size=3), answer=answer_st)
    def seed(self, who: int, items: list[tuple[tuple[str, str], str, str | None]],
             answer: str) -> None:
        writer = self._writer(who)
        batch: list[Json] = []
        for (track, scope), word, source in items:
            item: Json = {"track": track, "scope": scope, "text": self._text(word)}
            if source is not None:
                item["source"] = source
            batch.append(item)
        self._script(answer, False, items[0][0], writer, "")
        self._both("seed", lambda: self.provider.seed(batch, writer),
                   lambda: self.model.seed(batch, writer))

    @rule(index=st.integers(-len(NO_AGENT), len(INVALID_WRITES) - 1), who=writer_st)
    def bad_write(self, index: int, who: int) -> None:
        """A validation error (INVALID_INPUT) or a write without an agent: never audited."""
        if index >= 0:
            op, item, field = INVALID_WRITES[index]
            writer: Any = self._writer(who)
            expected: Json = {"code": "INVALID_INPUT", "field": field}
        else:
            op, writer = NO_AGENT[index]
            item = VALID_INPUTS[op]
            expected = {"code": "WRITE_REQUIRES_AGENT", "details": {}}
        self._script("allowed-once", False, ("user", "user-global"), WRITERS[0], "")
        payload: Any = item["entries"] if op == "seed" else item
        got = self._both(op, lambda: getattr(self.provider, op)(payload, writer),
                         lambda: getattr(self.model, op)(payload, writer))
        assert got == ("error", expected)
        assert self.provider_gate.seen == []  # refused before the approver (MEM-WRT-001/002)

    # -- reads ---------------------------------------------------------------------------------

    @rule(track=st.sampled_from([None, "user", "agent"]),
          scope=st.sampled_from([None, "user-global", "workspace"]),
          text=st.sampled_from([None, None, None, "", "a", "ALPHA", "#", "😀", "zzz", "Σ", "\n"]),
          limit=st.sampled_from([None, 1, 2, 5000]), reader=st.integers(-1, len(WRITERS) - 1),
          recall=st.booleans())
    def query(self, track: str | None, scope: str | None, text: str | None, limit: int | None,
              reader: int, recall: bool) -> None:
        filt: Json = {k: v for k, v in (("track", track), ("scope", scope), ("text", text),
                                        ("limit", limit)) if v is not None}
        opts: Json = {}
        if reader >= 0:
            opts["reader"] = WRITERS[reader]
            if recall:
                opts["recall"] = True
        before = len(self.provider.audit_list(1000))
        got = self._both("query", lambda: self.provider.query(filt, opts),
                         lambda: self.model.query(filt, opts))
        assert got[0] == "ok"
        rows = self.provider.audit_list(1000)
        if opts.get("recall"):
            assert len(rows) == before + 1 and rows[0]["action"] == "recalled"
            assert rows[0]["entryIds"] == [e["id"] for e in got[1]["entries"]]
        else:
            assert len(rows) == before  # MEM-QRY-005: plain queries never bump or audit

    @rule(who=st.integers(-1, len(WRITERS) - 1))
    def snapshot_or_export(self, who: int) -> None:
        """A session's frozen snapshot (MEM-SNP-001), or the export envelope (who = -1)."""
        if who < 0:
            got = self._both("export", self.provider.export, self.model.export)
        else:
            writer = WRITERS[who]
            got = self._both("snapshot", lambda: self.provider.snapshot(writer),
                             lambda: self.model.snapshot(writer))
        assert got[0] == "ok"

    @rule()
    def reopen(self) -> None:
        """Close and reopen the provider on the same file: nothing may change."""
        self.provider.close()
        self.provider = self._open(self.limits)

    # -- invariants ----------------------------------------------------------------------------

    @invariant()
    def same_state(self) -> None:
        entries = self.provider.list_entries()
        assert entries == self.model.list_entries()
        budget_rows = self.provider.budgets()
        assert budget_rows == self.model.budgets()
        conforms("budgets-report.json", budget_rows)
        for entry in entries:
            conforms("entry.json", entry)
        ledger = self.provider.audit_list(1000)
        assert ledger == self.model.audit_list(1000)
        assert replay(ledger) == entries  # MEM-AUD-005

    @invariant()
    def buckets_within_limits(self) -> None:
        for row in self.provider.budgets():
            bucket = (row["track"], row["scope"])
            previous = self.previous_used.get(bucket, 0)
            if row["used"] > row["limit"]:
                assert row["used"] <= previous, f"{bucket} grew while over its limit"
            self.previous_used[bucket] = row["used"]


MemoryMachine.TestCase.settings = settings(
    max_examples=25, stateful_step_count=30, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
test_provider_matches_model = MemoryMachine.TestCase
