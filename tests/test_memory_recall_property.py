"""The memory-recall property of the kit and the statements it checks."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dshkit.conformance.implementations.reference import create
from dshkit.conformance.properties import PROPERTIES, memory_recall_check
from dshkit.conformance.strategies_recall import NOW

DAY = 86_400_000


def _message(seq: int, text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "user/message", "seq": seq, "time": seq, "data": {
        "id": f"u{seq}", "role": "user", "content": [{"type": "text", "text": text}],
        "source": {"kind": "user"}}, "surfaceOp": "append", **extra}


def _session(session_id: str, events: list[dict[str, Any]], cwd: str = "/w",
             created: int = NOW - DAY) -> dict[str, Any]:
    return {"header": {"version": 0, "id": session_id, "createdAt": created,
                       "delegationDepth": 0, "cwd": cwd}, "events": events}


DRAWN = {
    "sessions": [
        _session("a", [_message(0, "deploy secret"), _message(
            1, "deploy summary", surfaceOp={"op": "replace", "start": 0, "end": 0},
            sourceEventSeqs=[0])]),
        _session("b", [_message(0, "deploy elsewhere")], cwd="/x"),
        _session("c", [_message(0, "deploy " + "x" * 30)], created=NOW - 2 * DAY),
    ],
    "recall": {"text": "deploy", "cwd": "/w", "now": NOW, "snippetChars": 10},
}


def _result() -> dict[str, Any]:
    reference = create()
    program = {"steps": [{"open": {"writePolicy": "auto"}},
                         {"recall": DRAWN["recall"], "sessions": DRAWN["sessions"]}]}
    return reference.run("memory.calls", program, {})


def _check(result: dict[str, Any]) -> str:
    check = create().statement("memory-recall", DRAWN)
    assert check is not None
    return check(result)


def test_the_reference_meets_the_statement() -> None:
    result = _result()
    assert result["steps"][1]["result"]["history"]["sessions"] == [
        {"sessionId": "a", "createdAt": NOW - DAY, "matches": 1,
         "snippets": ["deploy sum\u2026"]},
        {"sessionId": "c", "createdAt": NOW - 2 * DAY, "matches": 1,
         "snippets": ["deploy xxx\u2026"]}]
    assert _check(result) == ""


@pytest.mark.parametrize(("change", "cites"), [
    (lambda h: h["sessions"][0]["snippets"].__setitem__(0, "deploy sec\u2026"), "MEM-RCL-013"),
    (lambda h: h["sessions"][1]["snippets"].__setitem__(0, "deploy " + "x" * 30),
     "MEM-RCL-014"),
    (lambda h: h["sessions"].append({"sessionId": "b", "createdAt": NOW - DAY, "matches": 1,
                                     "snippets": ["deploy els\u2026"]}), "MEM-RCL-010"),
    (lambda h: h["sessions"][1].update(snippets=["xxxxxxxxxx\u2026"]), "MEM-RCL-013"),
    (lambda h: h.update(available=False), "MEM-RCL-015"),
    (lambda h: h["sessions"][0]["snippets"].extend(["deploy sum\u2026"] * 5), "MEM-RCL-014"),
])
def test_broken_recalls_are_caught(change: Any, cites: str) -> None:
    result = copy.deepcopy(_result())
    change(result["steps"][1]["result"]["history"])
    assert cites in _check(result)


def test_the_property_passes_on_the_reference_and_is_listed() -> None:
    outcome = memory_recall_check(create(), max_examples=25, seed=3)
    assert outcome["status"] == "passed", outcome.get("detail")
    assert "memory-recall" in [p.name for p in PROPERTIES]


def test_the_property_is_not_applicable_without_the_capability() -> None:
    class Without:
        name, version, language = "without", "0", "python"
        capabilities = ("memory.protocol",)

        def run(self, *args: Any, **kwargs: Any) -> Any:
            raise AssertionError("must not run")

    outcome = memory_recall_check(Without(), max_examples=5, seed=1)
    assert outcome["status"] == "not_applicable"
