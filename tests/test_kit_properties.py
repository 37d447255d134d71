"""The kit's property tests, as a third party would run them."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from kit_support.broken_harness import Broken

from dshkit import schemas
from dshkit.conformance.properties import (
    expectation,
    memory_programs,
    program_case,
    session_fold_check,
    stateful_memory_check,
)
from dshkit.conformance.reference_impl import create
from dshkit.conformance.runner import run_case
from dshkit.conformance.suites import memory
from dshkit.conformance.vectors import case_from_json


def test_reference_agrees_with_the_model() -> None:
    result = stateful_memory_check(create(), max_examples=25, seed=20240601)
    assert result["ok"], result.get("detail")
    assert result["seed"] == 20240601 and result["examples_run"] == 25


def test_reference_session_fold_property() -> None:
    result = session_fold_check(create(), max_examples=15, seed=7)
    assert result["ok"], result.get("detail")


@settings(max_examples=10, deadline=None, database=None)
@given(memory_programs(max_steps=6))
def test_programs_are_valid_vector_cases(program: dict[str, object]) -> None:
    case = program_case(program)
    document = {"suite": "memory", "specVersion": "0.1.0", "description": "generated",
                "cases": [case.to_json()]}
    assert not schemas.errors("conformance/v1/vector-file.json", document)
    assert case.id.startswith("mem-prop-") and case.requirements
    assert memory.compare(case.expect, {"valid": True, "steps": []}) != ""


def test_broken_budgets_give_a_shrunk_ready_to_commit_vector(tmp_path: Path) -> None:
    broken = Broken("budgets", "")
    result = stateful_memory_check(broken, max_examples=200, seed=3,
                                   counterexample_dir=tmp_path)
    assert not result["ok"]
    assert "expected error BUDGET_EXCEEDED, got success" in result["detail"]
    path = Path(result["counterexample"])
    assert path.parent == tmp_path and path.name.startswith("mem-prop-")
    text = path.read_text(encoding="utf-8")
    document = json.loads(text)
    assert not schemas.errors("conformance/v1/vector-file.json", document)
    assert text.endswith("\n") and all((len(line) - len(line.lstrip(" "))) % 2 == 0
                                       for line in text.splitlines())
    [raw] = document["cases"]
    assert "counterexample" in raw["tags"] and "MEM-BUD-004" in raw["requirements"]
    case = case_from_json(raw, suite="memory", file=path.name)
    assert run_case(create(), case).status == "passed"
    assert run_case(broken, case).status == "failed"
    assert len(raw["input"]["steps"]) <= 6  # shrunk


def test_broken_surface_is_found_by_the_fold_property(tmp_path: Path) -> None:
    broken = Broken("surface", "")
    result = session_fold_check(broken, max_examples=100, seed=3,
                                counterexample_dir=tmp_path)
    assert not result["ok"] and result["detail"].startswith("failed: nodes:")
    document = json.loads(Path(result["counterexample"]).read_text(encoding="utf-8"))
    assert not schemas.errors("conformance/v1/vector-file.json", document)
    assert document["cases"][0]["id"].startswith("ses-prop-")


def test_expectation_is_the_models() -> None:
    program = {"input": {"steps": [{"open": {"writePolicy": "auto"}},
                                   {"call": {"op": "budgets"}}]},
               "params": {}, "approver": {}}
    want = expectation(program)
    assert want["steps"][1]["result"][0] == {"track": "user", "scope": "user-global",
                                             "used": 0, "limit": 2000}
