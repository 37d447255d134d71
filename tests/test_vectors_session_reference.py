"""Every session-reference conformance vector against the reference implementation.

The suite's ``reference`` raises on an undeclared operation instead of refusing it with
``UNKNOWN_OPERATION``, and its cases carry no ``worked-example`` tags: those two checks of the
other suites do not apply here.
"""

from __future__ import annotations

import pytest
from kit_support import suite_vectors as sv
from kit_support.reference_suites import session_reference as suite
from kit_support.suite_vectors import Case

CASES = sv.load_cases(suite, "session-reference")
#: The worked examples of the session-reference spec (B-5 .. B-10 and the named ones).
WORKED_EXAMPLES = [
    "ref-uri-encode", "ref-uri-reject", "ref-mention-escape", "ref-parse-mixed", "ref-normalize",
    "ref-prepare-read-failed", "ref-prepare-empty",
    *(f"ref-b{number}-" for number in range(5, 11)),
    "ref-truncate-direct", "ref-head-tail-cjk",
]


@pytest.mark.parametrize("case", CASES, ids=sv.case_ids(CASES))
def test_case_passes(case: Case) -> None:
    sv.check_case(suite, case)


def test_ids_are_unique_and_well_formed() -> None:
    sv.check_ids(CASES, "ref")


def test_requirements_exist_in_the_spec() -> None:
    sv.check_requirements(CASES, "REF")


def test_operations_are_declared() -> None:
    sv.check_case_members(suite, CASES)
    sv.check_operations(suite, CASES)


def test_every_worked_example_is_a_vector() -> None:
    sv.check_worked_examples(CASES, WORKED_EXAMPLES, tagged=False)


def test_compare_reports_differences() -> None:
    sv.check_compare_reports_differences(suite)


def test_unknown_operation_is_reported() -> None:
    sv.check_unknown_operation(suite)
