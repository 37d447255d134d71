"""Shared checks for the vector files of one conformance suite against its reference.

``tests/test_vectors.py`` loads each suite's cases with :func:`load_cases` and calls the
``check_*`` functions; what differs between suites (id and requirement prefixes, the worked
examples) comes from its table of suites. pytest does not rewrite the assertions of this module,
so each names what failed itself.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from dshkit.conformance.interface import JsonObject
from dshkit.spec_index import build_index
from dshkit.spec_version import SPEC_VERSION as _SPEC_VERSION

REPO = Path(__file__).resolve().parents[2]
VECTORS = REPO / "conformance" / "vectors"
SPEC_VERSION = _SPEC_VERSION
WORKED_EXAMPLE = "worked-example"
CASE_MEMBERS = frozenset({"id", "description", "requirements", "operation", "input", "params",
                          "expect", "tags", "_file"})

#: One vector case, with ``_file`` naming the vector file it came from.
Case = dict[str, Any]


class Suite(Protocol):
    """What these checks use of a suite module of :mod:`dshkit.conformance.suites`."""

    SUITE: str
    OPERATIONS: tuple[str, ...]

    def reference(self, operation: str, input: JsonObject, params: JsonObject) -> JsonObject: ...

    def compare(self, expect: JsonObject, result: JsonObject) -> str: ...


def load_cases(suite: Suite, directory: str) -> list[Case]:
    """The cases of every vector file of ``conformance/vectors/<directory>``, in file order."""
    out: list[Case] = []
    for path in sorted((VECTORS / directory).glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        assert document["suite"] == suite.SUITE, (path.name, document["suite"])
        assert document["specVersion"] == SPEC_VERSION, (path.name, document["specVersion"])
        assert document["description"], path.name
        out += [{**case, "_file": path.name} for case in document["cases"]]
    return out


def case_ids(cases: Iterable[Case]) -> list[str]:
    """The ids of ``cases``, for ``pytest.mark.parametrize``."""
    return [case["id"] for case in cases]


def check_case(suite: Suite, case: Case) -> None:
    """The reference satisfies the case's expectation."""
    result = suite.reference(case["operation"], case["input"], case.get("params", {}))
    difference = suite.compare(case["expect"], result)
    assert difference == "", f"{case['_file']}: {case['id']}: {difference}"


def check_ids(cases: Iterable[Case], prefix: str) -> None:
    """Case ids are unique and read ``<prefix>-`` then lower-case words joined by hyphens."""
    pattern = re.compile(rf"^{re.escape(prefix)}-[a-z0-9][a-z0-9-]*$")
    counts = Counter(case["id"] for case in cases)
    duplicates = [i for i, n in counts.items() if n > 1]
    assert not duplicates, duplicates
    assert all(pattern.match(i) for i in counts), [i for i in counts if not pattern.match(i)]


@cache
def _spec_requirement_ids() -> frozenset[str]:
    return frozenset(r.id for r in build_index(REPO / "spec"))


def check_requirements(cases: Iterable[Case], area: str) -> None:
    """Every case names requirements, all in the spec and all of the area ``<area>-``."""
    known = _spec_requirement_ids()
    for case in cases:
        assert case["requirements"], case["id"]
        missing = [r for r in case["requirements"] if r not in known]
        assert not missing, (case["id"], missing)
        foreign = [r for r in case["requirements"] if not r.startswith(f"{area}-")]
        assert not foreign, (case["id"], foreign)


def check_case_members(suite: Suite, cases: Iterable[Case]) -> None:
    """Cases have only known members, a declared operation and a well-formed expectation."""
    for case in cases:
        assert set(case) <= CASE_MEMBERS, (case["id"], sorted(set(case) - CASE_MEMBERS))
        assert case["operation"] in suite.OPERATIONS, (case["id"], case["operation"])
        expect = case["expect"]
        assert isinstance(expect.get("valid"), bool), case["id"]
        if not expect["valid"]:
            assert isinstance(expect["error"]["code"], str), case["id"]


def check_operations(suite: Suite, cases: Iterable[Case]) -> None:
    """The cases use exactly the suite's declared operations."""
    used, declared = {case["operation"] for case in cases}, set(suite.OPERATIONS)
    assert used == declared, (sorted(used - declared), sorted(declared - used))


def check_worked_examples(cases: Iterable[Case], prefixes: Iterable[str], *,
                          tagged: bool) -> None:
    """Every prefix starts the id of some case (of a case tagged ``worked-example`` when
    ``tagged``)."""
    ids = {case["id"] for case in cases
           if not tagged or WORKED_EXAMPLE in case.get("tags", [])}
    for prefix in prefixes:
        assert any(i.startswith(prefix) for i in ids), prefix


def check_compare_reports_differences(suite: Suite) -> None:
    """``compare`` reports a differing, mistyped or missing member and a differing refusal,
    and lets the result carry members the expectation does not name."""
    differing: list[tuple[JsonObject, JsonObject]] = [
        ({"valid": True, "x": 1}, {"valid": True, "x": 2}),
        ({"valid": True, "x": True}, {"valid": True, "x": 1}),
        ({"valid": True, "x": 1}, {"valid": True}),
        ({"valid": False, "error": {"code": "A"}}, {"valid": False, "error": {"code": "B"}}),
        ({"valid": False, "error": {"code": "A", "seq": 1}},
         {"valid": False, "error": {"code": "A", "seq": 2}}),
        ({"valid": False, "error": {"code": "A", "messageContains": "x"}},
         {"valid": False, "error": {"code": "A", "message": "y"}}),
        ({"valid": True}, {"valid": False, "error": {"code": "B"}}),
    ]
    for expect, result in differing:
        assert suite.compare(expect, result) != "", (expect, result)
    extra = suite.compare({"valid": True, "x": [1]}, {"valid": True, "x": [1], "y": 2})
    assert extra == "", extra


def check_unknown_operation(suite: Suite) -> None:
    """An operation the suite does not declare is refused with ``UNKNOWN_OPERATION``."""
    result = suite.reference(f"{suite.SUITE}.nope", {}, {})
    assert result["valid"] is False, result
    assert result["error"]["code"] == "UNKNOWN_OPERATION", result
