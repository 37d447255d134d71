"""Property tests shipped with the kit: run them against any implementation.

- :func:`memory_programs` draws a stateful program of memory calls (writes from several
  sessions, scripted approvals that deny, crash, answer non-strings or let a concurrent writer
  interfere, queries and recalls, snapshots, exports, reopenings with other budgets, invalid
  writes) in the kit's vector format;
- :func:`expectation` computes what the specification requires of a program by running it on
  the executable model (:mod:`dshkit.conformance.memory_model`);
- :func:`stateful_memory_check` draws programs and compares the implementation with the model
  step by step (results, errors, approval payloads, the ledger); the shrunk failing program is
  returned, and written to a directory when asked, as a ready-to-commit vector file;
- :func:`session_fold_check` does the same for session logs drawn by
  :func:`dshkit.conformance.strategies.valid_logs` (valid at level ``invariants``; the fold
  agrees with the reference's nodes, shadowed seqs and message ids);
- :func:`projection_budget_check` (:mod:`~dshkit.conformance.properties_projection`): a
  reference's retention never exceeds its budget, accounts for every omitted byte and keeps
  every checkpoint and the newest unit;
- :func:`compaction_boundary_check` (:mod:`~dshkit.conformance.properties_compaction`): a
  compaction plan never cuts inside a structural unit and the log with it appended folds
  validly;
- :func:`invalid_log_check` (:mod:`~dshkit.conformance.properties_invalid`): logs broken on
  purpose are refused at levels invariants and load with the reference's problem (code, seq,
  line), the counterexample naming the requirement that problem cites;
- :func:`memory_recall_check` (:mod:`~dshkit.conformance.properties_recall`): a recall
  returns only sessions of its project within its window, bounded snippets, and only text
  that is on the surface of its session;
- :data:`PROPERTIES` lists the six with the capabilities each needs, and
  :func:`run_properties` runs them all (what ``dshkit conformance`` does by default).

Every property runs through the kit's interface (:func:`dshkit.conformance.runner.run_case`),
so it works over a subprocess harness too; its outcome is ``passed``, ``failed``, ``errored``
or ``not_applicable`` (:mod:`dshkit.conformance.propcheck`).

Example, with pytest and hypothesis installed::

    from dshkit.conformance.properties import stateful_memory_check
    result = stateful_memory_check(my_impl, max_examples=200, seed=1234,
                                   counterexample_dir="counterexamples")
    assert result["ok"], result["detail"]

Requires ``hypothesis`` (the ``test`` extra).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from .interface import Implementation, JsonObject
from .memory_driver import DEFAULT_IDS
from .model_impl import create as create_model
from .propcheck import SPEC_VERSION, Probe, case_id, check, check_against, counterexample_file
from .properties_compaction import compaction_boundary_check
from .properties_invalid import CAPABILITIES as INVALID_CAPABILITIES
from .properties_invalid import invalid_log_check
from .properties_projection import projection_budget_check
from .properties_recall import CAPABILITIES as RECALL_CAPABILITIES
from .properties_recall import memory_recall_check
from .strategies import valid_logs
from .suites.memory import attach, make_approver
from .vectors import Case, case_from_json

__all__ = [
    "PROPERTIES",
    "SPEC_VERSION",
    "Probe",
    "Property",
    "case_id",
    "compaction_boundary_check",
    "counterexample_file",
    "expectation",
    "invalid_log_check",
    "memory_programs",
    "memory_recall_check",
    "program_case",
    "projection_budget_check",
    "run_properties",
    "session_fold_check",
    "stateful_memory_check",
]

WRITE_OPS = ("add", "replace", "remove", "consolidate", "seed", "import_envelope")


def _writer(session: str, cwd: Any, preset: Any, policy: str | None = None) -> JsonObject:
    header: JsonObject = {}
    if cwd is not None:
        header["cwd"] = cwd
    if preset is not None:
        header["agentPreset"] = preset
    body: JsonObject = {"id": session, "header": header}
    if policy is not None:
        body["approvalPolicy"] = policy
    return {"agent": {"session": body}}


WRITERS = [_writer("s1", "/home/me/proj", "coder"), _writer("s2", "C:\\Work\\Proj", " Reviewer "),
           _writer("s3", "/home/me/proj/./", None)]
NEVER = _writer("s1", "/home/me/proj", "coder", "never")
BUCKETS = [("user", "user-global"), ("user", "workspace"), ("agent", "user-global"),
           ("agent", "workspace")]
WORDS = ["alpha", "Beta", "GAMMA", "tea 😀", "éclair", "ΑΣ", "two\nlines", "tab\there", "𝄞a"]
SOURCES: list[str | None] = [None, "cli", "blocked", "manual"]
TAGS: list[list[str] | None] = [None, [], ["x"], [" a ", "a", "b"]]
POLICIES = {"source:cli": "auto", "source:blocked": "off", "agent/workspace": "auto"}
ANSWERS: list[Any] = ["allowed-once"] * 6 + ["rejected", "cancelled", "allowed-always",
                                             {"raise": "the approver crashed"},
                                             {"outcome": None}]
LITERALS = ["zzz", "#", "ALPHA", "\u03c3", "\u03a3", "😀"]


def _budgets(a: int, b: int, c: int, d: int) -> JsonObject:
    return {"user": {"userGlobal": a, "workspace": b}, "agent": {"userGlobal": c, "workspace": d}}


BIG, SMALL = _budgets(4000, 4000, 4000, 4000), _budgets(60, 60, 90, 90)
INVALID_WRITES: list[tuple[str, Any]] = [
    ("add", {"track": "team", "scope": "workspace", "text": "x"}),
    ("add", {"track": "user", "scope": "workspace", "text": " \t\n"}),
    ("add", {"track": "user", "scope": "workspace", "text": "x", "tags": [" "]}),
    ("add", {"track": "user", "scope": "workspace", "text": "x", "extra": 1}),
    ("replace", {"track": "user", "scope": "workspace", "match": "", "text": "x"}),
    ("remove", {"track": "agent", "scope": "workspace"}),
    ("consolidate", {"track": "user", "scope": "workspace", "matches": [], "text": "x"}),
    ("seed", []),
]


@st.composite
def memory_programs(draw: st.DrawFn, max_steps: int = 12) -> JsonObject:
    """A memory case without its expectation: ``{"input", "params", "approver"}``."""
    texts: list[str] = []
    counter = [0]
    steps: list[JsonObject] = [{"open": {"budgets": draw(st.sampled_from([BIG, SMALL])),
                                         "writePolicy": "ask", "writePolicies": POLICIES}}]
    script: dict[str, list[Any]] = {}

    def text(word: str, repeat: int = 1) -> str:
        counter[0] += 1
        value = f"{' '.join([word] * repeat)} #{counter[0]};"
        texts.append(value)
        return value

    def match() -> str:
        kind = draw(st.sampled_from(["token", "token", "word", "literal"]))
        if kind == "token" and texts:
            chosen = texts[draw(st.integers(0, len(texts) - 1))]
            return chosen[chosen.rindex("#"):]
        if kind == "word":
            return str(draw(st.sampled_from(WORDS))).swapcase()
        return str(draw(st.sampled_from(LITERALS)))

    def writer() -> JsonObject:
        return draw(st.sampled_from([*WRITERS, *WRITERS, NEVER]))

    def optional(item: JsonObject) -> JsonObject:
        source = draw(st.sampled_from(SOURCES))
        tags = draw(st.sampled_from(TAGS))
        if source is not None:
            item["source"] = source
        if tags is not None:
            item["tags"] = tags
        return item

    def approve(index: int, bucket: tuple[str, str], who: JsonObject) -> None:
        answer = draw(st.sampled_from(ANSWERS))
        if draw(st.integers(0, 5)) == 0:  # a concurrent writer while the approver looks
            look_alike = {"op": "add", "input": {"track": bucket[0], "scope": bucket[1],
                                                 "text": text("dup"), "source": "cli"},
                          "write": who}
            answer = {"outcome": answer if isinstance(answer, str) else "allowed-once",
                      "before": [look_alike]}
        script[str(index)] = [answer]

    for _ in range(draw(st.integers(1, max_steps))):
        kind = draw(st.sampled_from(["add", "add", "add", "replace", "remove", "consolidate",
                                     "seed", "query", "recall", "snapshot", "export",
                                     "reopen", "invalid", "read"]))
        index = len(steps)
        bucket = draw(st.sampled_from(BUCKETS))
        track, scope = bucket
        who = writer()
        call: JsonObject
        if kind == "add":
            item = optional({"track": track, "scope": scope,
                             "text": text(draw(st.sampled_from(WORDS)), draw(st.integers(1, 4)))})
            call = {"op": "add", "input": item, "write": who}
        elif kind == "replace":
            item = optional({"track": track, "scope": scope, "match": match(),
                             "text": text(draw(st.sampled_from(WORDS)))})
            call = {"op": "replace", "input": item, "write": who}
        elif kind == "remove":
            call = {"op": "remove", "input": {"track": track, "scope": scope, "match": match()},
                    "write": who}
        elif kind == "consolidate":
            matches = [match() for _ in range(draw(st.integers(1, 3)))]
            item = optional({"track": track, "scope": scope, "matches": matches,
                             "text": text("merged")})
            call = {"op": "consolidate", "input": item, "write": who}
        elif kind == "seed":
            batch = [optional({"track": t, "scope": s, "text": text(draw(st.sampled_from(WORDS)))})
                     for t, s in draw(st.lists(st.sampled_from(BUCKETS), min_size=1, max_size=3))]
            call = {"op": "seed", "input": batch, "write": who}
        elif kind in ("query", "recall"):
            flt: JsonObject = {}
            if draw(st.booleans()):
                flt["text"] = draw(st.sampled_from(["", "a", "ALPHA", "#", "😀", "Σ", "\n"]))
            if draw(st.booleans()):
                flt["track"] = track
            if draw(st.booleans()):
                flt["limit"] = draw(st.sampled_from([1, 2, 5000]))
            opts: JsonObject = {"reader": draw(st.sampled_from(WRITERS))}
            if kind == "recall":
                opts["recall"] = True
            call = {"op": "query", "input": flt, "opts": opts}
        elif kind == "snapshot":
            call = {"op": "snapshot", "write": draw(st.sampled_from(WRITERS))}
        elif kind == "export":
            call = {"op": "export"}
        elif kind == "read":
            call = {"op": draw(st.sampled_from(["list_entries", "budgets", "audit_list"]))}
        elif kind == "reopen":
            steps.append({"open": {"budgets": draw(st.sampled_from([BIG, SMALL])),
                                   "writePolicy": "ask", "writePolicies": POLICIES}})
            continue
        else:
            op, payload = draw(st.sampled_from(INVALID_WRITES))
            call = {"op": op, "input": payload, "write": who}
        if call["op"] in WRITE_OPS:
            approve(index, bucket, who)
        steps.append({"call": call})
    return {"input": {"steps": steps},
            "params": {"clock": {"start": 1_700_000_000_000, "step": 1000},
                       "ids": dict(DEFAULT_IDS)},
            "approver": {"default": "allowed-once", "steps": script}}


# -- expectations from the model ----------------------------------------------------------------

def _normalise_error(error: JsonObject) -> JsonObject:
    out: JsonObject = {"code": error["code"]}
    details = dict(error.get("details", {}))
    if error["code"] == "INVALID_INPUT":
        details.pop("reason", None)
    out["details"] = details
    if error["code"] in ("BUDGET_EXCEEDED", "ENTRY_NOT_FOUND"):
        out["message"] = error["message"]
    return out


def _step_expectation(response: JsonObject, approvals: list[JsonObject],
                      write: bool) -> JsonObject:
    if response["ok"]:
        out: JsonObject = {"ok": True, "result": response["result"]}
    else:
        out = {"ok": False, "error": _normalise_error(response["error"])}
    if write or approvals:
        out["approvals"] = [a["payload"] for a in approvals]
    concurrent = [r for a in approvals for r in a.get("concurrent", [])]
    if concurrent:
        out["concurrent"] = [_step_expectation(r, [], False) for r in concurrent]
    return out


def expectation(program: JsonObject) -> JsonObject:
    """The expectation the specification gives a program (computed with the model)."""
    approver = make_approver(program)
    result = attach(create_model().run("memory.calls", program["input"], program["params"],
                                 approver), approver)
    steps = program["input"]["steps"]
    expected = []
    for index, (step, response) in enumerate(zip(steps, result["steps"], strict=True)):
        approvals = [a for a in result["approvals"] if a["step"] == index]
        write = "call" in step and step["call"].get("op") in WRITE_OPS
        expected.append(_step_expectation(response, approvals, write))
    return {"valid": True, "steps": expected}


_OP_REQUIREMENTS = {"add": "MEM-WRT-002", "replace": "MEM-WRT-005", "remove": "MEM-WRT-010",
                    "consolidate": "MEM-WRT-006", "seed": "MEM-WRT-007",
                    "import_envelope": "MEM-EXP-002", "query": "MEM-QRY-003",
                    "snapshot": "MEM-SNP-001", "export": "MEM-EXP-001",
                    "audit_list": "MEM-AUD-003", "budgets": "MEM-BUD-005",
                    "list_entries": "MEM-AUD-005"}
_CODE_REQUIREMENTS = {"BUDGET_EXCEEDED": "MEM-BUD-004", "ENTRY_NOT_FOUND": "MEM-MAT-003",
                      "AMBIGUOUS_MATCH": "MEM-MAT-004", "WRITE_DENIED": "MEM-GATE-006",
                      "STALE_WRITE": "MEM-WRT-004", "INVALID_INPUT": "MEM-ERR-003",
                      "WRITE_REQUIRES_AGENT": "MEM-WRT-001"}


def _requirements(program: JsonObject, expect: JsonObject) -> list[str]:
    found = {"MEM-AUD-005"}
    for step in program["input"]["steps"]:
        if "call" in step and step["call"].get("op") in _OP_REQUIREMENTS:
            found.add(_OP_REQUIREMENTS[step["call"]["op"]])
    for want in expect["steps"]:
        code = (want or {}).get("error", {}).get("code")
        if code in _CODE_REQUIREMENTS:
            found.add(_CODE_REQUIREMENTS[code])
    return sorted(found)


def program_case(program: JsonObject, expect: JsonObject | None = None) -> Case:
    """A drawn program as a kit case (its expectation from the model unless given)."""
    want = expect if expect is not None else expectation(program)
    meaning = {"input": program["input"], "params": program["params"],
               "approver": program.get("approver"), "expect": want}
    raw: JsonObject = {
        "id": case_id("mem", meaning),
        "description": "A generated memory program on which an implementation disagreed with "
                       "the executable model of the specification (shrunk by hypothesis); "
                       "review it, then keep it under a descriptive id.",
        "requirements": _requirements(program, want),
        "operation": "memory.calls",
        "input": program["input"],
        "params": program["params"],
        "approver": program.get("approver") or {},
        "expect": want,
        "tags": ["generated", "counterexample"],
    }
    return case_from_json(raw, suite="memory", file="generated")


# -- running the properties ---------------------------------------------------------------------

def stateful_memory_check(impl: Implementation, *, max_examples: int = 50,
                          seed: int | None = None, max_steps: int = 12,
                          counterexample_dir: str | Path | None = None) -> JsonObject:
    """Compare ``impl`` with the model on drawn programs; ``{"ok", "detail"?, "case"?,
    "counterexample"?}``, where ``case`` is the shrunk failing program as a vector case."""
    return check(memory_programs(max_steps=max_steps), lambda p: [program_case(p)], impl,
                 name="memory-model", capabilities=MEMORY_CAPABILITIES,
                 max_examples=max_examples, seed=seed, counterexample_dir=counterexample_dir)


def _fold_cases(expected: Implementation, log: list[Any]) -> list[Case]:
    folded = expected.run("fold", {"events": log}, {"repair": False})
    expect = {"valid": True, "nodes": folded.get("nodes"), "shadowed": folded.get("shadowed"),
              "messageIds": [m.get("id") for m in folded.get("messages", [])]}
    raws = [{"operation": "validate", "input": {"events": log}, "params": {"level": "invariants"},
             "expect": {"valid": True}, "requirements": ["SES-LVL-003"]},
            {"operation": "fold", "input": {"events": log}, "params": {"repair": False},
             "expect": expect, "requirements": ["SES-SURF-001"]}]
    cases = []
    for raw in raws:
        raw["id"] = case_id("ses", {k: raw[k] for k in ("operation", "input", "params",
                                                        "expect")})
        raw["description"] = ("A generated valid log on which an implementation disagreed "
                              "with the reference (shrunk by hypothesis).")
        raw["tags"] = ["generated", "counterexample"]
        cases.append(case_from_json(raw, suite="session-log", file="generated"))
    return cases


def session_fold_check(impl: Implementation, *, max_examples: int = 50, seed: int | None = None,
                       counterexample_dir: str | Path | None = None,
                       expected: Implementation | None = None) -> JsonObject:
    """Generated valid logs: valid at level invariants, and folded to the nodes, shadowed
    seqs and message ids of ``expected`` (default: the reference)."""
    return check_against(expected, lambda _: valid_logs(), _fold_cases, impl,
                         name="session-fold", capabilities=FOLD_CAPABILITIES,
                         max_examples=max_examples, seed=seed,
                         counterexample_dir=counterexample_dir)


MEMORY_CAPABILITIES = ("memory.protocol",)
FOLD_CAPABILITIES = ("session-log.core", "session-log.invariants")


@dataclass(frozen=True, slots=True)
class Property:
    """One property of the kit: its name, the capabilities it needs, what it states."""

    name: str
    suite: str  # the suite whose operations it runs
    capabilities: tuple[str, ...]
    statement: str
    run: Callable[..., JsonObject]


PROPERTIES: tuple[Property, ...] = (
    Property("memory-model", "memory", MEMORY_CAPABILITIES,
             "stateful memory programs agree with the executable model step by step",
             stateful_memory_check),
    Property("session-fold", "session-log", FOLD_CAPABILITIES,
             "generated valid logs are valid at level invariants and fold to the reference's "
             "surface", session_fold_check),
    Property("projection-budget", "session-reference", ("session-reference",),
             "a retained reference never exceeds its byte budget, accounts for every omitted "
             "byte and keeps every checkpoint and the newest unit", projection_budget_check),
    Property("compaction-boundary", "compaction", ("compaction",),
             "a plan never cuts inside a structural unit and the log with the plan appended "
             "folds validly", compaction_boundary_check),
    Property("session-invalid", "session-log", INVALID_CAPABILITIES,
             "logs broken on purpose are refused at levels invariants and load with the "
             "reference's problem (code, seq, line)", invalid_log_check),
    Property("memory-recall", "memory", RECALL_CAPABILITIES,
             "a recall returns only sessions of the project within the window, bounded "
             "snippets, and only text on the surface of its session", memory_recall_check),
)


def run_properties(impl: Implementation, *, max_examples: int, seed: int | None,
                   counterexample_dir: str | Path | None = None,
                   names: Sequence[str] | None = None,
                   suites: Sequence[str] | None = None) -> dict[str, JsonObject]:
    """Every property of the kit (or those named, or those of the given suites) against
    ``impl``, by name; a property whose capabilities ``impl`` does not declare is
    ``not_applicable`` without running."""
    return {p.name: p.run(impl, max_examples=max_examples, seed=seed,
                          counterexample_dir=counterexample_dir)
            for p in PROPERTIES if (names is None or p.name in names)
            and (not suites or p.suite in suites)}
