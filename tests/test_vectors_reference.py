"""Every session-log conformance vector against the reference implementation.

The cases run through the kit's runner and the ``session-log`` suite module, exactly as
``dshkit conformance --suite session-log`` runs them. A case tagged ``reference-bug`` records
a disagreement between the reference and the specification (the vector follows the
specification); it is expected to fail, strictly, so a fix in the reference shows up as an
unexpected pass and the tag gets removed.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from kit_support.reference_suites import session_log

from dshkit.conformance.implementations.reference import create
from dshkit.conformance.runner import run_case
from dshkit.conformance.vectors import Case, load_cases
from dshkit.spec_index import build_index

REPO = Path(__file__).resolve().parents[1]
CASE_ID = re.compile(r"^ses-[a-z0-9-]+$")
SESSION_SUITE = "session-log"

CASES: list[Case] = load_cases(SESSION_SUITE)
REFERENCE = create()


def _param(case: Case) -> object:
    marks = []
    if "reference-bug" in case.tags:
        marks.append(pytest.mark.xfail(strict=True, reason="reference disagrees with the spec"))
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_case_passes_against_reference(case: Case) -> None:
    outcome = run_case(REFERENCE, case)
    assert outcome.status == "passed", f"{case.file}: {outcome.status}: {outcome.detail}"


def test_suite_module_contract() -> None:
    assert session_log.SUITE == SESSION_SUITE == session_log.CAPABILITY
    assert set(session_log.OPERATIONS) == {c.operation for c in CASES}
    case = CASES[0]
    result = session_log.reference(case.operation, case.input, case.params)
    assert session_log.compare(case.expect, result) == ""


def test_suite_is_substantial() -> None:
    assert len(CASES) >= 180
    files = {c.file for c in CASES}
    for name in ("examples", "envelope", "json", "messages", "request-header", "surface",
                 "invariants", "repair", "versioning", "jsonl"):
        assert f"session/{name}.json" in files, name


def test_case_ids_are_unique_and_well_formed() -> None:
    counts = Counter(c.id for c in load_cases())
    duplicates = sorted(i for i, n in counts.items() if n > 1)
    assert not duplicates, duplicates
    malformed = [c.id for c in CASES if not CASE_ID.match(c.id)]
    assert not malformed, malformed


def test_cases_are_well_formed() -> None:
    for case in CASES:
        assert case.requirements, case.id
        assert case.operation in session_log.OPERATIONS, case.id
        assert len(case.input) == 1 and next(iter(case.input)) in ("events", "text", "base64"), \
            case.id
        assert isinstance(case.expect.get("valid"), bool), case.id
        if not case.expect["valid"]:
            assert isinstance(case.expect.get("error"), dict), case.id
        if case.operation == "validate":
            assert case.params.get("level") in ("append", "seed", "invariants", "load"), case.id
        assert all(isinstance(tag, str) and tag for tag in case.tags), case.id


def test_vector_files_are_two_space_json() -> None:
    root = REPO / "conformance" / "vectors" / "session"
    for path in sorted(root.glob("*.json")):
        text = path.read_text(encoding="utf-8")
        document = json.loads(text)
        assert document["suite"] == SESSION_SUITE, path.name
        assert text.endswith("\n"), path.name
        indents = {len(line) - len(line.lstrip(" ")) for line in text.splitlines()}
        assert all(n % 2 == 0 for n in indents), path.name


def test_requirement_ids_exist() -> None:
    known = {r.id for r in build_index(REPO / "spec")}
    unknown = sorted({f"{c.id}: {r}" for c in CASES for r in c.requirements if r not in known})
    assert not unknown, unknown
