"""Run the vectors against an implementation and report (``dshkit-conformance``)."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .interface import JsonObject, SessionLogImplementation
from .vectors import Case, load_cases


@dataclass(frozen=True, slots=True)
class Outcome:
    case: Case
    status: str  # "pass" | "fail" | "error" | "skip"
    detail: str = ""


def run_case(impl: SessionLogImplementation, case: Case) -> Outcome:
    params = case.params
    session_id = params.get("sessionId")
    try:
        if case.operation == "validate":
            result = impl.validate(case.input, params.get("level", "load"), session_id)
        elif case.operation == "fold":
            result = impl.fold(case.input, params.get("repair", True), session_id)
        elif case.operation == "repair":
            result = impl.repair(case.input, session_id)
        elif case.operation == "load":
            result = impl.load(case.input, session_id)
        else:
            return Outcome(case, "error", f"unknown operation {case.operation!r}")
    except NotImplementedError:
        return Outcome(case, "skip", f"{case.operation} not supported by the implementation")
    except Exception as exc:  # an implementation crash marks the case, not the run
        return Outcome(case, "error", f"{type(exc).__name__}: {exc}")
    mismatch = compare(case.expect, result)
    return Outcome(case, "fail", mismatch) if mismatch else Outcome(case, "pass")


def compare(expect: JsonObject, result: JsonObject) -> str:
    """An empty string when ``result`` meets ``expect``, else what differs."""
    if result.get("valid") is not expect["valid"]:
        got = result.get("error") if not result.get("valid") else "valid"
        return f"expected valid={expect['valid']}, got {json.dumps(got)}"
    if not expect["valid"]:
        want = expect["error"]
        error = result.get("error") or {}
        for key in ("code", "seq", "line"):
            if key in want and error.get(key) != want[key]:
                return f"expected error {key} {want[key]!r}, got {error.get(key)!r} " \
                       f"({error.get('message', '')})"
        return ""
    for key in ("nodes", "shadowed", "messages", "closers", "events"):
        if key in expect and result.get(key) != expect[key]:
            return f"{key}: expected {json.dumps(expect[key])}, got {json.dumps(result.get(key))}"
    if "messageIds" in expect:
        ids = [m.get("id") for m in result.get("messages", [])]
        if ids != expect["messageIds"]:
            return f"messageIds: expected {expect['messageIds']}, got {ids}"
    if "closerTypes" in expect:
        types = [c.get("type") for c in result.get("closers", [])]
        if types != expect["closerTypes"]:
            return f"closerTypes: expected {expect['closerTypes']}, got {types}"
    return ""


def load_implementation(spec: str) -> SessionLogImplementation:
    """``py:package.module:factory`` (the factory returns the implementation)."""
    if spec.startswith("py:"):
        module_name, _, factory = spec[3:].partition(":")
        module = importlib.import_module(module_name)
        impl = getattr(module, factory or "create")()
        if not isinstance(impl, SessionLogImplementation):
            raise SystemExit(f"{spec} does not provide the SessionLogImplementation interface")
        return impl
    raise SystemExit(f"unsupported --impl {spec!r}; use py:module:factory")


def requirement_ids() -> list[dict[str, Any]]:
    from importlib import resources

    index = resources.files("dshkit.conformance") / "requirements.json"
    if not index.is_file():
        return []
    data: dict[str, Any] = json.loads(index.read_text(encoding="utf-8"))
    return list(data["requirements"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dshkit-conformance",
                                     description="Run the dshkit conformance vectors.")
    parser.add_argument("--impl", default="py:dshkit.conformance.reference_impl:create",
                        help="implementation under test (default: the reference)")
    parser.add_argument("--suite", help="only this suite (e.g. session-log)")
    parser.add_argument("--json", metavar="FILE", help="write a JSON report")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every case")
    args = parser.parse_args(argv)
    impl = load_implementation(args.impl)
    cases = load_cases(args.suite)
    outcomes = [run_case(impl, case) for case in cases]
    counts = {s: sum(o.status == s for o in outcomes) for s in ("pass", "fail", "error", "skip")}
    for outcome in outcomes:
        if args.verbose or outcome.status in ("fail", "error"):
            print(f"{outcome.status.upper():5} {outcome.case.id}: {outcome.detail}".rstrip(": "))
    covered = {r for o in outcomes for r in o.case.requirements}
    known = requirement_ids()
    musts = [r["id"] for r in known if r["level"] in ("MUST", "MUST NOT")]
    uncovered = [r for r in musts if r not in covered]
    print(f"implementation: {impl.name}")
    print(f"cases: {len(outcomes)}  " + "  ".join(f"{k}: {v}" for k, v in counts.items()))
    if known:
        print(f"requirements covered: {len(covered & {r['id'] for r in known})}/{len(known)}; "
              f"MUST without a case: {len(uncovered)}")
        if args.verbose and uncovered:
            print("  " + " ".join(uncovered))
    print(f"{counts['pass']} passed, {counts['fail'] + counts['error']} failed")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({
                "implementation": impl.name,
                "counts": counts,
                "cases": [{"id": o.case.id, "status": o.status, "detail": o.detail,
                           "requirements": list(o.case.requirements)} for o in outcomes],
                "uncoveredMust": uncovered,
            }, out, indent=2)
            out.write("\n")
    return 0 if counts["fail"] == counts["error"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
