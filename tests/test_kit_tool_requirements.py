"""Requirement scopes (CNF-SCO-001, CNF-SCO-002): requirements on the dshkit tool itself are
marked ``.tool``, kept out of the kit's counts, and each is named by a test of this suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from dshkit.conformance import lint
from dshkit.conformance.coverage import coverage
from dshkit.conformance.kitdata import manifest
from dshkit.conformance.tooltests import scan, scan_file
from dshkit.conformance.vectors import case_from_json, load_cases
from dshkit.spec_index import SpecIndexError, build_index, parse_requirements

REPO = Path(__file__).resolve().parents[1]
SPEC = build_index(REPO / "spec")
TOOL = {r.id for r in SPEC if r.scope == "tool"}
MARKED = scan(REPO / "tests")


def test_every_tool_requirement_is_named_by_a_test() -> None:
    assert TOOL, "the specification has tool-scoped requirements"
    untested = sorted(TOOL - set(MARKED))
    assert untested == [], ("tool-scoped requirements that no test names with "
                            f"@pytest.mark.requirement: {untested}")


def test_markers_name_only_tool_requirements() -> None:
    strays = sorted(set(MARKED) - TOOL)
    assert strays == [], ("@pytest.mark.requirement names requirements that are not "
                          f"tool-scoped (vectors cover those): {strays}")


def test_the_manifest_records_the_tests() -> None:
    assert manifest().get("toolVerified") == MARKED, (
        "conformance/vectors/manifest.json is stale: PYTHONPATH=src python -m "
        "dshkit.conformance.lint --write --spec spec")


def test_tool_requirements_are_the_cli_and_pkg_groups() -> None:
    for requirement in SPEC:
        group = requirement.id.split("-")[1]
        assert (requirement.scope == "tool") == (group in ("CLI", "PKG")), requirement.id


def test_no_case_names_a_tool_requirement() -> None:
    named = {r for case in load_cases() for r in case.requirements}
    assert not named & TOOL


def test_the_index_refuses_misplaced_marks() -> None:
    good = parse_requirements("**AB-CLI-001**{#AB-CLI-001 .tool} *T.* It MUST x.\n", "a.md")
    assert good[0].scope == "tool"
    plain = parse_requirements("**AB-CDE-001**{#AB-CDE-001} *T.* It MUST x.\n", "a.md")
    assert plain[0].scope == "implementation"
    for text, message in (
            ("**AB-CLI-002**{#AB-CLI-002} *T.* It MUST x.\n", "needs the class .tool"),
            ("**AB-CDE-002**{#AB-CDE-002 .tool} *T.* It MUST x.\n", "only the id groups"),
            ("**AB-CLI-003**{#AB-CLI-003 .other} *T.* It MUST x.\n", "unknown class")):
        with pytest.raises(SpecIndexError, match=message):
            parse_requirements(text, "a.md")


def test_tool_requirements_are_counted_apart() -> None:
    index = [{"id": "AB-CDE-001", "level": "MUST", "scope": "implementation"},
             {"id": "AB-CLI-001", "level": "MUST", "scope": "tool"},
             {"id": "AB-CLI-002", "level": "MUST", "scope": "tool"}]
    traced = coverage([], index, {}, {"AB-CLI-001": ["tests/test_x.py::test_y"]})
    assert (traced.total, traced.must, traced.uncovered_must) == (1, 1, ("AB-CDE-001",))
    assert traced.to_json()["tool"] == {"total": 2, "tested": 1, "untested": ["AB-CLI-002"]}


def test_lint_refuses_a_case_that_names_a_tool_requirement() -> None:
    case = case_from_json({"id": "ses-x", "requirements": ["QRY-CLI-001"], "operation": "fold",
                           "input": {}, "params": {}, "expect": {}}, suite="session-log",
                           file="f.json")
    problems = lint.lint_ids([case], {"QRY-CLI-001"}, {"QRY-CLI-001"})
    assert problems and "requirement on the dshkit tool" in problems[0]


def test_scanner_reads_functions_classes_and_module_marks(tmp_path: Path) -> None:
    source = tmp_path / "test_sample.py"
    source.write_text(
        "import pytest\n"
        "pytestmark = [pytest.mark.requirement('AB-CLI-009'), pytest.mark.slow]\n"
        "@pytest.mark.requirement('AB-CLI-001', 'AB-CLI-002')\n"
        "def test_a() -> None: ...\n"
        "@pytest.mark.requirement('AB-CLI-003')\n"
        "class TestGroup:\n"
        "    @pytest.mark.requirement('AB-CLI-004')\n"
        "    def test_b(self) -> None: ...\n"
        "def helper() -> None: ...\n", encoding="utf-8")
    found = scan_file(source, "tests/test_sample.py")
    assert found == {
        "AB-CLI-009": ["tests/test_sample.py::test_a", "tests/test_sample.py::TestGroup::test_b"],
        "AB-CLI-001": ["tests/test_sample.py::test_a"],
        "AB-CLI-002": ["tests/test_sample.py::test_a"],
        "AB-CLI-003": ["tests/test_sample.py::TestGroup::test_b"],
        "AB-CLI-004": ["tests/test_sample.py::TestGroup::test_b"]}
