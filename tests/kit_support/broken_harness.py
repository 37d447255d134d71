"""A deliberately broken harness: the reference with one fault, for the kit's own tests.

Usage: ``python broken_harness.py MODE [CASE_ID]``, where MODE is

- ``surface``: the fold ignores replacements (shadowed nodes stay current);
- ``closers``: repair closers get the wrong seq numbers;
- ``budgets``: memory budgets are not enforced (a refused write is reported as a success);
- ``retain``: a retained reference that cut a text counts one omitted byte too many;
- ``range``: validation never checks that a replace's range ends on a current node (a log
  refused only for that is reported valid);
- ``cuts``: a compaction checkpoint's span is stretched to end inside a structural unit (after
  an assistant message whose tool calls are not all answered yet);
- ``requirements``: every session-log problem names requirement ``SES-XXX-999``;
- ``pointers``: every session-log problem points at ``/nonsense``;
- ``later``: a refused validation reports its first problem once more, on a later event
  (a seq gap reported again after it);
- ``crash``: the process exits in the middle of case CASE_ID;
- ``hang``: the process never answers case CASE_ID;
- ``garbage``: a line that is not JSON instead of the answer to CASE_ID;
- ``noisy``: every case writes a line to stderr.
"""

from __future__ import annotations

import copy
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from dshkit.conformance.harness_server import serve
from dshkit.conformance.implementations.reference import ReferenceImplementation
from dshkit.conformance.interface import Approver, JsonObject
from dshkit.reference.compaction import LogView, is_checkpoint_event

MODES = ("surface", "closers", "budgets", "retain", "range", "cuts", "requirements",
         "pointers", "later", "crash", "hang", "garbage", "noisy")
_WRONG = {"requirements": ("requirement", "SES-XXX-999"), "pointers": ("pointer", "/nonsense")}


class Broken:
    def __init__(self, mode: str, target: str) -> None:
        self.reference = ReferenceImplementation()
        self.mode = mode
        self.target = target
        self.name = f"broken-{mode}"
        self.version = "0.0.1"
        self.language = "python"
        self.capabilities: Sequence[str] = self.reference.capabilities

    def run(self, operation: str, input: JsonObject, params: JsonObject,
            approver: Approver | None = None) -> JsonObject:
        return self.run_request({"id": "", "operation": operation, "input": input,
                                 "params": params}, approver)

    def run_request(self, case: JsonObject, approver: Any) -> JsonObject:
        if case["id"] == self.target:
            if self.mode == "crash":
                sys.stderr.write(f"about to crash in {case['id']}\n")
                sys.stderr.flush()
                os._exit(3)
            if self.mode == "hang":
                time.sleep(3600)
            if self.mode == "garbage":
                sys.stdout.write("this is not JSON\n")
                sys.stdout.flush()
        if self.mode == "noisy":
            sys.stderr.write(f"noise from {case['id']}\n")
            sys.stderr.flush()
        result = self.reference.run(case["operation"], case["input"], case["params"], approver)
        if self.mode == "cuts" and case["operation"] == "compaction.plan":
            return _stretch(case["input"], result)
        return self.damage(case["operation"], result)

    def damage(self, operation: str, result: JsonObject) -> JsonObject:
        if self.mode == "range" and operation == "validate" and (
                result.get("error") or {}).get("code") == "SURFACE_REPLACE_END_NOT_FOUND":
            return {"valid": True}
        if result.get("valid") is False and operation in ("validate", "fold"):
            return _problems(self.mode, result)
        if not result.get("valid"):
            return result
        if self.mode == "surface" and operation == "fold" and result.get("shadowed"):
            result = dict(result)
            result["nodes"] = sorted(result["nodes"] + result["shadowed"])
            result["shadowed"] = []
        elif self.mode == "closers" and operation == "repair" and result.get("closers"):
            result = dict(result)
            result["closers"] = [{**c, "seq": c["seq"] + 1} for c in result["closers"]]
        elif self.mode == "retain" and operation == "reference.retain" and any(
                "\n[\u2026 omitted " in str(m.get("text")) for m in
                result["data"]["conversation"]):
            stats = {**result["stats"], "omittedBytes": result["stats"]["omittedBytes"] + 1}
            result = {**result, "stats": stats}
        elif self.mode == "budgets" and operation == "memory.calls":
            steps = []
            for step in result["steps"]:
                if not step["ok"] and step["error"]["code"] == "BUDGET_EXCEEDED":
                    step = {"ok": True, "result": {"note": "budget not enforced"}}
                steps.append(step)
            result = {**result, "steps": steps}
        return result


def _problems(mode: str, result: JsonObject) -> JsonObject:
    """A refusal with every problem damaged as ``mode`` says."""
    if mode in _WRONG:
        key, wrong = _WRONG[mode]
        problems = [{**p, key: wrong} for p in result.get("problems", [result["error"]])]
        return {**result, "error": {**result["error"], key: wrong}, "problems": problems}
    if mode == "later" and "problems" in result:
        first = result["problems"][0]
        again = {**first, "seq": (first.get("seq") or 0) + 1}
        return {**result, "problems": [*result["problems"], again]}
    return result


def _stretch(data: JsonObject, result: JsonObject) -> JsonObject:
    """The plan with its first checkpoint's span ending at an unbalanced cut, when there is one
    at or after the span's start."""
    if not result.get("valid"):
        return result
    events = copy.deepcopy(result["events"])
    bounds = LogView.of(data["events"]).boundaries()
    for event in events:
        if is_checkpoint_event(event):
            op = event["surfaceOp"]
            first = bounds.index(op["start"])
            inside = [i for i in range(first, len(bounds.seqs)) if not bounds.cuts[i + 1]]
            if inside:
                op["end"] = bounds.seqs[inside[0]]
                return {**result, "events": events}
            break
    return result


def main(argv: Sequence[str]) -> int:
    if not argv or argv[0] not in MODES:
        sys.stderr.write(f"usage: broken_harness.py {{{','.join(MODES)}}} [CASE_ID]\n")
        return 2
    return serve(Broken(argv[0], argv[1] if len(argv) > 1 else ""))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
