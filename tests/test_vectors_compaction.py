"""Every compaction conformance vector against the reference implementation."""

from __future__ import annotations

import pytest
from kit_support import suite_vectors as sv
from kit_support.reference_suites import compaction as suite
from kit_support.suite_vectors import Case

CASES = sv.load_cases(suite, "compaction")
#: Worked examples A-1 .. A-12 of the compaction spec.
WORKED_EXAMPLES = [f"cmp-a{number}-" for number in range(1, 13)]


@pytest.mark.parametrize("case", CASES, ids=sv.case_ids(CASES))
def test_case_passes(case: Case) -> None:
    sv.check_case(suite, case)


def test_ids_are_unique_and_well_formed() -> None:
    sv.check_ids(CASES, "cmp")


def test_requirements_exist_in_the_spec() -> None:
    sv.check_requirements(CASES, "CMP")


def test_cases_are_well_formed() -> None:
    sv.check_case_members(suite, CASES)


def test_every_worked_example_is_a_vector() -> None:
    sv.check_worked_examples(CASES, WORKED_EXAMPLES, tagged=True)


def test_every_operation_has_a_case() -> None:
    sv.check_operations(suite, CASES)


def test_compare_reports_differences() -> None:
    sv.check_compare_reports_differences(suite)


def test_unknown_operation_is_reported() -> None:
    sv.check_unknown_operation(suite)
