"""Every adapter conformance vector against the dshkit adapters, through the suite modules
(``dshkit.conformance.suites.adapter_*``), plus the shape of the vector files."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from kit_support.reference_suites import (
    adapter_claude_md,
    adapter_hermes,
    adapter_mcp_memory,
    adapter_mem0,
)

from dshkit import schemas
from dshkit.spec_index import build_index

REPO = Path(__file__).resolve().parents[1]
VECTORS = REPO / "conformance" / "vectors"
SUITES: dict[str, ModuleType] = {m.SUITE: m for m in (adapter_mem0, adapter_hermes,
                                                       adapter_claude_md, adapter_mcp_memory)}
CASE_ID = re.compile(r"^adp-[a-z0-9][a-z0-9-]*$")


def _files() -> list[Path]:
    return sorted(p for suite in SUITES for p in (VECTORS / suite).glob("*.json"))


def _cases() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in _files():
        document = json.loads(path.read_text(encoding="utf-8"))
        out += [(document["suite"], case) for case in document["cases"]]
    return out


CASES = _cases()


@pytest.mark.parametrize(("suite", "case"), [pytest.param(s, c, id=c["id"]) for s, c in CASES])
def test_case_passes(suite: str, case: dict[str, Any]) -> None:
    module = SUITES[suite]
    assert case["operation"] in module.OPERATIONS
    result = module.reference(case["operation"], case["input"], case.get("params", {}))
    assert module.compare(case["expect"], result) == ""


def test_ids_unique_and_well_formed() -> None:
    counts = Counter(case["id"] for _, case in CASES)
    assert not [i for i, n in counts.items() if n > 1]
    assert not [i for i in counts if not CASE_ID.match(i)]


def test_requirements_exist() -> None:
    known = {r.id for r in build_index(REPO / "spec")}
    for _, case in CASES:
        assert case["requirements"], case["id"]
        missing = [r for r in case["requirements"] if r not in known]
        assert not missing, (case["id"], missing)


def test_files_follow_the_vector_format() -> None:
    for path in _files():
        text = path.read_text(encoding="utf-8")
        document = json.loads(text)
        assert document["suite"] == path.parent.name
        assert document["specVersion"] == "0.1.0"
        assert text.endswith("\n")
        assert not schemas.errors("conformance/v1/vector-file.json", document), path


def test_every_adapter_requirement_has_a_vector_or_a_test() -> None:
    """Requirements without vectors are covered by pytest modules (CLI, registry, hub,
    purity); the rest must be named by at least one vector."""
    covered = {r for _, case in CASES for r in case["requirements"]}
    by_tests = {"ADP-GEN-001", "ADP-GEN-007", "ADP-GEN-008", "ADP-ERR-001", "ADP-ERR-003",
                "ADP-REG-001", "ADP-REG-002", "ADP-REG-003", "ADP-REG-004", "ADP-REG-005",
                "ADP-HUB-001", "ADP-HUB-002", "ADP-HUB-003", "ADP-CLI-001", "ADP-CLI-002",
                "ADP-CLI-003", "ADP-CLI-004", "ADP-CLI-005", "ADP-CLI-006"}
    every = {r.id for r in build_index(REPO / "spec") if r.id.startswith("ADP-")}
    assert not every - covered - by_tests, sorted(every - covered - by_tests)


def test_suite_sizes() -> None:
    sizes = Counter(suite for suite, _ in CASES)
    assert sizes["adapter-mem0"] >= 40 and sizes["adapter-hermes"] >= 40
    assert sizes["adapter-claude-md"] >= 40 and sizes["adapter-mcp-memory"] >= 20
