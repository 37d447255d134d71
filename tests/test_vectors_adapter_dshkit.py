"""Every ``adapter-dshkit`` conformance vector (the hub format and the registry across
formats) against the dshkit adapters, plus the suite's capabilities and comparison."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from kit_support.reference_suites import adapter_dshkit as suite

from dshkit import schemas
from dshkit.conformance.registry import registry
from dshkit.spec_index import build_index

REPO = Path(__file__).resolve().parents[1]
VECTORS = REPO / "conformance" / "vectors" / "adapter-dshkit"
CASE_ID = re.compile(r"^adp-[a-z0-9][a-z0-9-]*$")


def _cases() -> list[dict[str, Any]]:
    out = []
    for path in sorted(VECTORS.glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        assert document["suite"] == suite.SUITE == path.parent.name
        out += [{**case, "_file": path.name} for case in document["cases"]]
    return out


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case_passes(case: dict[str, Any]) -> None:
    assert case["operation"] in suite.OPERATIONS
    result = suite.reference(case["operation"], case["input"], case.get("params", {}))
    assert suite.compare(case["expect"], result) == "", case["id"]


def test_ids_unique_and_well_formed() -> None:
    counts = Counter(case["id"] for case in CASES)
    assert not [i for i, n in counts.items() if n > 1]
    assert not [i for i in counts if not CASE_ID.match(i)]


def test_requirements_exist() -> None:
    known = {r.id for r in build_index(REPO / "spec")}
    for case in CASES:
        assert case["requirements"], case["id"]
        assert not [r for r in case["requirements"] if r not in known], case["id"]


def test_files_follow_the_vector_format() -> None:
    for path in sorted(VECTORS.glob("*.json")):
        text = path.read_text(encoding="utf-8")
        assert text.endswith("\n")
        assert not schemas.errors("conformance/v1/vector-file.json", json.loads(text)), path


def test_capabilities_name_both_formats() -> None:
    declared = set(registry().capabilities())
    for case in CASES:
        needed = suite.requires(case)
        assert set(needed) <= declared, (case["id"], needed)
        if case["operation"] == "adapters.convert":
            formats = {case["input"]["from"], case["input"]["to"]}
            assert {suite.FORMAT_CAPABILITIES[f] for f in formats} <= set(needed), case["id"]


def test_every_format_has_a_capability() -> None:
    listed = suite.reference("adapters.list", {}, {})
    assert set(listed["ids"]) == set(suite.FORMAT_CAPABILITIES)


def test_compare_reports_differences() -> None:
    ok = {"valid": True, "output": {"a": {"id": "0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"}}}
    assert suite.compare({"valid": True, "outputUuid4": ["/a/id"]}, ok) == ""
    assert suite.compare({"valid": True, "outputUuid4": ["/a/missing"]}, ok) != ""
    assert suite.compare({"valid": True, "outputMatch": {"/a/id": "x"}}, ok) != ""
    refusal = {"valid": False, "error": {"code": "ADAPTER_LOSS", "details": {"losses": []}}}
    assert suite.compare({"valid": False, "error": {"code": "ADAPTER_LOSS"},
                          "detailsHas": ["format"]}, refusal) != ""
    assert suite.compare({"valid": False, "error": {"code": "ADAPTER_LOSS"},
                          "detailsLosses": [{"kind": "x"}]}, refusal) != ""
