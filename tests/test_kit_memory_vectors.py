"""The memory vectors: against the reference provider and against the executable model.

Two independent implementations (the SQLite reference and the in-memory model written from
the spec) must both pass every case that applies to them, which is the kit's evidence that the
vectors say what the specification says.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dshkit.conformance.implementations.reference import create as create_reference
from dshkit.conformance.model_impl import create as create_model
from dshkit.conformance.runner import run_case
from dshkit.conformance.suites import memory
from dshkit.conformance.vectors import Case, load_cases
from dshkit.spec_index import build_index

REPO = Path(__file__).resolve().parents[1]
CASES = load_cases("memory")
REFERENCE = create_reference()
MODEL = create_model()
MEMENTO = [f"mem-memento-{group}{n}" for group, count in
           (("a", 7), ("b", 7), ("c", 3), ("d", 3), ("e", 2)) for n in range(1, count + 1)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_reference_passes(case: Case) -> None:
    outcome = run_case(REFERENCE, case)
    assert outcome.status == "passed", f"{case.file}: {outcome.detail}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_model_passes_or_is_not_applicable(case: Case) -> None:
    outcome = run_case(MODEL, case)
    # the model keeps no store file, serves no MCP tools and has no session index: it declares
    # none of those capabilities
    needs = set(memory.requires(case.to_json()))
    expected = "not_applicable" if needs & {"memory.store", "memory.mcp", "memory.recall"} \
        else "passed"
    assert outcome.status == expected, f"{case.file}: {outcome.detail}"


def test_count_and_memento_cases() -> None:
    ids = {c.id for c in CASES}
    assert len(CASES) >= 120
    assert len(MEMENTO) == 22
    assert set(MEMENTO) <= ids
    assert all(re.match(r"^mem-[a-z0-9-]+$", i) for i in ids)


def test_every_mem_requirement_is_covered() -> None:
    spec = [r for r in build_index(REPO / "spec")
            if r.id.startswith("MEM-") and r.scope != "tool"]  # tool ones: dshkit's tests
    assert len(spec) >= 80
    covered = {r for c in CASES for r in c.requirements}
    missing = sorted(r.id for r in spec if r.id not in covered)
    assert not missing, missing
    known = {r.id for r in build_index(REPO / "spec")}
    unknown = sorted({r for c in CASES for r in c.requirements} - known)
    assert not unknown, unknown


def test_expectations_are_never_sent() -> None:
    """What an implementation receives is the request, never expect or the approver script."""
    seen: list[dict[str, object]] = []

    class Spy:
        name, version, language = "spy", "1.0.0", "python"
        capabilities = ("memory",)

        def run(self, operation: str, input: dict[str, object], params: dict[str, object],
                approver: object = None) -> dict[str, object]:
            raise AssertionError("run_request is preferred")

        def run_request(self, request: dict[str, object], approver: object) -> dict[str, object]:
            seen.append(request)
            return {"valid": True, "steps": []}

    case = next(c for c in CASES if c.approver)
    outcome = run_case(Spy(), case)
    assert outcome.status == "failed"
    assert set(seen[0]) == {"id", "suite", "operation", "input", "params"}
    assert "expect" not in str(seen[0].keys()) and seen[0]["id"] == case.id
