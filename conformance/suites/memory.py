"""Suite ``memory``: programs of provider calls in the JSON call form (spec ``memory/*``).

One operation, ``memory.calls``: the input is ``{"steps": [...]}`` (see
:mod:`dshkit.conformance.memory_driver` for the step kinds), the params fix the clock and the
id source, and the case's ``approver`` member is the kit's script for the approval callbacks
(never sent to the implementation). The result is ``{"valid": true, "steps": [response...]}``;
the kit adds ``approvals`` (what its approver was asked, per step) before comparing.

Expectation: ``{"valid": true, "steps": [step-expectation | null, ...], "equal"?: [[pointer,
...], ...]}``; a step expectation is ``{"ok": true, "result"?: R, "match"?: {pointer: value},
"approvals"?: [payload...], "concurrent"?: [step-expectation...]}`` or ``{"ok": false,
"error": {"code", "message"?, "details"?}, ...}``. ``result`` is compared exactly, ``match``
member by member (JSON pointers into the result, or into the error object of a failed step),
``message`` exactly when given, and
``details`` exactly except that the ``reason`` of ``INVALID_INPUT`` (the provider's own
wording, MEM-ERR-002) only has to be a non-empty string.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..interface import ApproverFailure, Concurrent, JsonObject
from ..memory_driver import DEFAULT_CLOCK, DEFAULT_IDS, MIGRATE_OP, PROPOSAL_OPS

SUITE = "memory"
CAPABILITY = "memory"
OPERATIONS = ("memory.calls",)
CAPABILITIES = {
    "memory.protocol": "the provider calls in the JSON call form (entries, keys, budgets, writes, "
                       "matching, approval, audit, query, snapshot, export, errors)",
    "memory.store": "the SQLite store file: layout, opening, migrations, modes, default path "
                    "(prepare, inspect and defaultPath steps)",
    "memory.proposals": "pending proposals: propose, proposals, approve_proposal, "
                        "dismiss_proposal and the snapshot's proposal section (MEM-PRO-*)",
    "memory.mcp": "the tools of the read-only MCP server over a store: search, list, read, "
                  "stats, tool errors, visibility and no side effects (tool steps)",
    "memory.migrate-memento": "the migrate_memento call: a dsh-memento SQLite store, built by "
                              "a prepare step, brought into the store (memory/migrate-memento)",
    "memory.recall": "recall across sessions: a memory query plus snippets of earlier sessions "
                     "of the same project from a session query index (recall steps)",
}
#: The implementer's contract of the operation (``python -m dshkit.conformance.contract``).
OPERATION_DOCS: dict[str, dict[str, Any]] = {
    "memory.calls": {
        "summary": "Run a program of provider calls on a fresh store directory and answer each "
                   "step; the kit answers the approval callbacks (harness: CNF-HAR-004).",
        "input": "`{\"steps\": [...]}`: `{\"open\": options, \"path\"?}`, `{\"call\": {\"op\", "
                 "\"input\"?, \"opts\"?, \"write\"?}}`, and with `memory.store` `{\"prepare\": "
                 "...}` (a `{\"memento\": {version, tables}}` prepare builds a dsh-memento store), "
                 "`{\"inspect\": ...}`, `{\"defaultPath\": {\"env\"}}`; with "
                 "`memory.migrate-memento` the call op `migrate_memento` (input `{\"source\"}`, "
                 "a path of the case directory); with `memory.mcp` `{\"tool\": {\"name\", "
                 "\"arguments\"?, \"reader\"?}, \"path\"?}` (with `memory.recall` also "
                 "`\"sessions\"` or `\"indexPath\"`: the `memory_recall` tool); with "
                 "`memory.recall` `{\"recall\": request, \"sessions\": [{header, events}] | "
                 "null, \"indexPath\"?}`; a step may "
                 "carry `\"at\"`, the clock reading for that step.",
        "params": {
            "clock": {"default_text": f"`{json.dumps(DEFAULT_CLOCK)}`",
                      "description": "`{start, step}`: a clock frozen within a step, moving "
                                     "`step` ms between steps; or `{start, tick}`: every "
                                     "reading `tick` ms after the previous one"},
            "ids": {"default_text": f"`{json.dumps(DEFAULT_IDS)}`",
                    "description": "`{prefix, start}`: new ids are `prefix` + 12 hex digits "
                                   "counting from `start`, shared by every handle of the case"},
        },
        "result": "`{\"valid\": true, \"steps\": [{\"ok\": true, \"result\": R} | {\"ok\": "
                  "false, \"error\": E}, ...]}`; the kit adds `approvals` before comparing.",
    },
}
STORE_STEPS = ("prepare", "inspect", "defaultPath")
PATH_VARIABLES = ("DSHKIT_MEMORY_DB", "DSHKIT_HOME", "HOME")
_MISSING = object()


def requires(case: JsonObject) -> list[str]:
    steps = [s for s in case.get("input", {}).get("steps", []) if isinstance(s, dict)]
    needed = ["memory.protocol"]
    if any(any(k in s for k in STORE_STEPS) for s in steps):
        needed.append("memory.store")
    if any(isinstance(s.get("call"), dict) and s["call"].get("op") in PROPOSAL_OPS
           for s in steps):
        needed.append("memory.proposals")
    if any("tool" in s for s in steps):
        needed.append("memory.mcp")
    if any(isinstance(s.get("call"), dict) and s["call"].get("op") == MIGRATE_OP for s in steps):
        needed.append("memory.migrate-memento")
    if any("recall" in s or ("tool" in s and ("sessions" in s or "indexPath" in s))
           for s in steps):
        needed.append("memory.recall")
    return needed


# -- the kit's approver -------------------------------------------------------------------------

@dataclass
class KitApprover:
    """Answers approval callbacks from a case's script and records what it was asked.

    Script: ``{"default": ANSWER, "steps": {"<step index>": [ANSWER, ...]}}``; an ANSWER is
    an outcome string, or ``{"outcome": any JSON value}``, or ``{"raise": "message"}`` (the
    approver crashes), each object optionally with ``"before": [call, ...]``: calls run on a
    second handle of the store before the answer is given (a concurrent writer).
    """

    script: Mapping[str, Any]
    record: list[JsonObject] = field(default_factory=list)
    _used: dict[int, int] = field(default_factory=dict)

    def __call__(self, step: int, payload: JsonObject, write: Any,
                 concurrent: Concurrent) -> Any:
        queue = list(dict(self.script.get("steps", {})).get(str(step), []))
        used = self._used.get(step, 0)
        self._used[step] = used + 1
        answer = queue[used] if used < len(queue) else self.script.get("default",
                                                                        "allowed-once")
        entry: JsonObject = {"step": step, "payload": json.loads(json.dumps(payload)),
                             "concurrent": []}
        self.record.append(entry)
        if not isinstance(answer, dict):
            return answer
        for call in answer.get("before", []):
            entry["concurrent"].append(concurrent(call))
        if "raise" in answer:
            raise ApproverFailure(str(answer["raise"]))
        return answer.get("outcome")


def make_approver(case: JsonObject) -> KitApprover:
    return KitApprover(dict(case.get("approver") or {}))


def attach(result: JsonObject, approver: KitApprover) -> JsonObject:
    """The result with the kit's own record of the approvals (the implementation's claims,
    if any, are replaced)."""
    out = dict(result)
    out["approvals"] = approver.record
    return out



def resolve(document: Any, pointer: str) -> Any:
    """RFC 6901; ``_MISSING`` when the pointer does not resolve."""
    if pointer == "":
        return document
    if not pointer.startswith("/"):
        return _MISSING
    node = document
    for raw in pointer[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return _MISSING
    return node


def _show(value: Any) -> str:
    text = "(missing)" if value is _MISSING else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 300 else text[:297] + "..."


def _same(a: Any, b: Any) -> bool:
    """JSON equality (``True`` is not ``1``)."""
    if type(a) is not type(b) and not (isinstance(a, int | float) and isinstance(b, int | float)
                                       and not isinstance(a, bool) and not isinstance(b, bool)):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _first_difference(want: Any, got: Any, where: str = "") -> str:
    if isinstance(want, dict) and isinstance(got, dict):
        for key in want:
            if key not in got:
                return f"{where}/{key}: missing"
            inner = _first_difference(want[key], got[key], f"{where}/{key}")
            if inner:
                return inner
        extra = sorted(set(got) - set(want))
        return f"{where}/{extra[0]}: unexpected member" if extra else ""
    if isinstance(want, list) and isinstance(got, list):
        for index, (w, g) in enumerate(zip(want, got, strict=False)):
            inner = _first_difference(w, g, f"{where}/{index}")
            if inner:
                return inner
        if len(want) != len(got):
            return f"{where}: expected {len(want)} items, got {len(got)}"
        return ""
    return "" if _same(want, got) else f"{where or '/'}: expected {_show(want)}, got {_show(got)}"


def _compare_error(want: JsonObject, got: Any) -> str:
    if not isinstance(got, dict):
        return f"error is not an object: {_show(got)}"
    if got.get("code") != want.get("code"):
        return (f"expected error {want.get('code')}, got {got.get('code')} "
                f"{_show(got.get('details'))}")
    if "message" in want and got.get("message") != want["message"]:
        return f"{want['code']}: message {_show(got.get('message'))}, expected {_show(want['message'])}"
    if not isinstance(got.get("message"), str) or not got.get("message"):
        return f"{want['code']}: message must be a non-empty string (MEM-ERR-001)"
    if "details" in want:
        details = got.get("details")
        if not isinstance(details, dict):
            return f"{want['code']}: details is not an object"
        expected = dict(want["details"])
        actual = dict(details)
        if want["code"] == "INVALID_INPUT" and "reason" not in expected:
            reason = actual.pop("reason", None)
            if not isinstance(reason, str) or not reason:
                return "INVALID_INPUT: details.reason must be a non-empty string"
        problem = _first_difference(expected, actual)
        if problem:
            return f"{want['code']} details {problem}"
    return ""


def _compare_step(want: JsonObject, got: Any, approvals: list[JsonObject] | None,
                  label: str) -> str:
    if not isinstance(got, dict) or "ok" not in got:
        return f"{label}: not a response: {_show(got)}"
    if got["ok"] is not want.get("ok", True):
        if got["ok"] is False:
            raw = got.get("error")
            error: dict[str, Any] = raw if isinstance(raw, dict) else {}
            return (f"{label}: expected success, got error {error.get('code')} "
                    f"{_show(error.get('details'))}")
        code = dict(want.get("error", {})).get("code")
        return f"{label}: expected error {code}, got success {_show(got.get('result'))}"
    if got["ok"]:
        if "result" in want:
            problem = _first_difference(want["result"], got.get("result"))
            if problem:
                return f"{label} result {problem}"
    else:
        problem = _compare_error(dict(want.get("error", {})), got.get("error"))
        if problem:
            return f"{label}: {problem}"
    member = "result" if got["ok"] else "error"
    for pointer, value in dict(want.get("match", {})).items():
        actual = resolve(got.get(member), pointer)
        if actual is _MISSING or not _same(value, actual):
            return f"{label} {member}{pointer}: expected {_show(value)}, got {_show(actual)}"
    if "approvals" in want and approvals is not None:
        payloads = [a["payload"] for a in approvals]
        problem = _first_difference(want["approvals"], payloads)
        if problem:
            return f"{label} approvals {problem}"
    if "concurrent" in want and approvals is not None:
        responses = [r for a in approvals for r in a.get("concurrent", [])]
        if len(responses) != len(want["concurrent"]):
            return (f"{label}: expected {len(want['concurrent'])} concurrent calls, "
                    f"got {len(responses)}")
        for index, (w, g) in enumerate(zip(want["concurrent"], responses, strict=True)):
            problem = _compare_step(w, g, None, f"{label} concurrent {index}")
            if problem:
                return problem
    return ""


def compare(expect: JsonObject, result: JsonObject) -> str:
    """An empty string when ``result`` meets ``expect``, else the first difference."""
    if result.get("valid") is not expect.get("valid", True):
        return f"expected valid={expect.get('valid', True)}, got {_show(result.get('error'))}"
    if not expect.get("valid", True):
        want = expect.get("error", {}).get("code")
        got = (result.get("error") or {}).get("code")
        return "" if want == got else f"expected error {want}, got {got}"
    steps = result.get("steps")
    wanted = expect.get("steps", [])
    if not isinstance(steps, list) or len(steps) != len(wanted):
        count = len(steps) if isinstance(steps, list) else "no"
        return f"expected {len(wanted)} step responses, got {count}"
    record = result.get("approvals")
    for index, (want, got) in enumerate(zip(wanted, steps, strict=True)):
        if want is None:
            continue
        approvals = [a for a in (record or []) if a.get("step") == index]
        problem = _compare_step(want, got, approvals, f"step {index}")
        if problem:
            return problem
    document = {"steps": steps}
    for group in expect.get("equal", []):
        values = [resolve(document, pointer) for pointer in group]
        if any(v is _MISSING for v in values) or any(not _same(values[0], v) for v in values):
            return "expected equal values: " + ", ".join(
                f"{p}={_show(v)}" for p, v in zip(group, values, strict=True))
    return ""
