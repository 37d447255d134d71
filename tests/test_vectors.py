"""Every conformance vector of the session, compaction, goal and adapter suites against the
reference implementation, plus the shape of the vector files and each suite's comparison.

One table (:data:`SUITES`) says per suite what its ids, requirements and worked examples look
like; the checks common to every suite are parametrised over it (ids ``[<suite>]``, and
``[<suite>/<case id>]`` for the cases). What only one suite has follows, by suite.

The ``session-log`` cases run through the kit's runner, exactly as ``dshkit conformance
--suite session-log`` runs them. A case tagged ``reference-bug`` records a disagreement
between the reference and the specification (the vector follows the specification); it is
expected to fail, strictly, so a fix in the reference shows up as an unexpected pass and the
tag gets removed. The memory suite has its own module (``test_kit_memory_vectors.py``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from kit_support import suite_vectors as sv
from kit_support.reference_suites import (
    adapter_claude_md,
    adapter_dshkit,
    adapter_hermes,
    adapter_mcp_memory,
    adapter_mem0,
    compaction,
    goal,
    session_log,
    session_ops,
    session_query,
    session_reference,
)
from kit_support.suite_vectors import Case

from dshkit import schemas
from dshkit.conformance.implementations.reference import create
from dshkit.conformance.registry import registry
from dshkit.conformance.runner import run_case
from dshkit.conformance.vectors import Case as KitCase
from dshkit.conformance.vectors import load_cases as load_kit_cases
from dshkit.spec_index import build_index

REPO = Path(__file__).resolve().parents[1]
VECTORS = REPO / "conformance" / "vectors"


@dataclass(frozen=True)
class Suite:
    """One suite's vector files (``conformance/vectors/<directory>``) and its conventions."""

    module: ModuleType
    directory: str
    #: Case ids read ``<prefix>-`` then lower-case words joined by hyphens.
    prefix: str
    #: Every requirement a case names is of this area (``None``: any area of the spec).
    area: str | None = None
    #: Each starts the id of some case (tagged ``worked-example`` when ``tagged``).
    worked_examples: tuple[str, ...] = ()
    tagged: bool = False
    #: The suite's ``compare`` and ``reference`` follow the common contract (checked by
    #: ``sv.check_compare_reports_differences`` and ``sv.check_unknown_operation``).
    common_contract: bool = True

    @property
    def name(self) -> str:
        return str(self.module.SUITE)


SUITES = [
    Suite(compaction, "compaction", "cmp", "CMP",
          tuple(f"cmp-a{number}-" for number in range(1, 13)), tagged=True),  # A-1 .. A-12
    Suite(goal, "goal", "goal", "GOAL",
          tuple(f"goal-d{number}-" for number in range(1, 10)), tagged=True),  # D-1 .. D-9
    # C-1 .. C-12 and the CJK example; its cases carry no worked-example tags
    Suite(session_query, "session-query", "qry", "QRY",
          (*(f"qry-c{number}-" for number in range(1, 13)), "qry-cjk-")),
    # B-5 .. B-10 and the named ones; its cases carry no worked-example tags
    Suite(session_reference, "session-reference", "ref", "REF",
          ("ref-uri-encode", "ref-uri-reject", "ref-mention-escape", "ref-parse-mixed",
           "ref-normalize", "ref-prepare-read-failed", "ref-prepare-empty",
           *(f"ref-b{number}-" for number in range(5, 11)),
           "ref-truncate-direct", "ref-head-tail-cjk")),
    Suite(session_ops, "session-ops", "ses-ops", common_contract=False),
    Suite(adapter_dshkit, "adapter-dshkit", "adp", common_contract=False),
    Suite(adapter_mem0, "adapter-mem0", "adp", common_contract=False),
    Suite(adapter_hermes, "adapter-hermes", "adp", common_contract=False),
    Suite(adapter_claude_md, "adapter-claude-md", "adp", common_contract=False),
    Suite(adapter_mcp_memory, "adapter-mcp-memory", "adp", common_contract=False),
]
BY_NAME = {suite.name: suite for suite in SUITES}
CASES: dict[str, list[Case]] = {s.name: sv.load_cases(s.module, s.directory) for s in SUITES}
ADAPTER_SUITES = ("adapter-mem0", "adapter-hermes", "adapter-claude-md", "adapter-mcp-memory")

SESSION_SUITE = "session-log"
SESSION_CASES: list[KitCase] = load_kit_cases(SESSION_SUITE)
SESSION_CASE_ID = re.compile(r"^ses-[a-z0-9-]+$")
REFERENCE = create()


def _suites(*, where: str = "") -> list[Any]:
    chosen = [s for s in SUITES if not where or getattr(s, where)]
    return [pytest.param(s, id=s.name) for s in chosen]


def _known_requirements() -> set[str]:
    return {r.id for r in build_index(REPO / "spec")}


# --------------------------------------------------------------------------- every suite


def _session_param(case: KitCase) -> Any:
    marks = []
    if "reference-bug" in case.tags:
        marks.append(pytest.mark.xfail(strict=True, reason="reference disagrees with the spec"))
    return pytest.param(SESSION_SUITE, case, id=f"{SESSION_SUITE}/{case.id}", marks=marks)


CASE_PARAMS = [
    *(pytest.param(suite.name, case, id=f"{suite.name}/{case['id']}")
      for suite in SUITES for case in CASES[suite.name]),
    *(_session_param(case) for case in SESSION_CASES),
]


@pytest.mark.parametrize(("suite", "case"), CASE_PARAMS)
def test_case_passes(suite: str, case: Case | KitCase) -> None:
    if isinstance(case, KitCase):
        outcome = run_case(REFERENCE, case)
        assert outcome.status == "passed", f"{case.file}: {outcome.status}: {outcome.detail}"
        return
    module = BY_NAME[suite].module
    assert case["operation"] in module.OPERATIONS, case["id"]
    sv.check_case(module, case)


@pytest.mark.parametrize("suite", _suites())
def test_ids_are_unique_and_well_formed(suite: Suite) -> None:
    sv.check_ids(CASES[suite.name], suite.prefix)


def test_case_ids_are_unique_across_suites() -> None:
    counts = Counter(case["id"] for cases in CASES.values() for case in cases)
    duplicates = sorted(i for i, n in counts.items() if n > 1)
    assert not duplicates, duplicates


@pytest.mark.parametrize("suite", _suites())
def test_requirements_exist_in_the_spec(suite: Suite) -> None:
    if suite.area is not None:
        sv.check_requirements(CASES[suite.name], suite.area)
        return
    known = _known_requirements()
    for case in CASES[suite.name]:
        assert case["requirements"], case["id"]
        missing = [r for r in case["requirements"] if r not in known]
        assert not missing, (case["id"], missing)


@pytest.mark.parametrize("suite", _suites())
def test_files_follow_the_vector_format(suite: Suite) -> None:
    for path in sorted((VECTORS / suite.directory).glob("*.json")):
        text = path.read_text(encoding="utf-8")
        document = json.loads(text)
        assert document["suite"] == suite.name == path.parent.name, path.name
        assert document["specVersion"] == "0.1.0", path.name
        assert text.endswith("\n"), path.name
        assert not schemas.errors("conformance/v1/vector-file.json", document), path.name


@pytest.mark.parametrize("suite", _suites(where="common_contract"))
def test_cases_are_well_formed(suite: Suite) -> None:
    sv.check_case_members(suite.module, CASES[suite.name])


@pytest.mark.parametrize("suite", _suites(where="common_contract"))
def test_every_operation_has_a_case(suite: Suite) -> None:
    sv.check_operations(suite.module, CASES[suite.name])


@pytest.mark.parametrize("suite", _suites(where="worked_examples"))
def test_every_worked_example_is_a_vector(suite: Suite) -> None:
    sv.check_worked_examples(CASES[suite.name], suite.worked_examples, tagged=suite.tagged)


@pytest.mark.parametrize("suite", _suites(where="common_contract"))
def test_compare_reports_differences(suite: Suite) -> None:
    sv.check_compare_reports_differences(suite.module)


@pytest.mark.parametrize("suite", _suites(where="common_contract"))
def test_unknown_operation_is_reported(suite: Suite) -> None:
    sv.check_unknown_operation(suite.module)


# --------------------------------------------------------------------------- session-query


def test_session_query_has_every_snippet_case() -> None:
    """C-7 has eleven snippet cases."""
    ids = sv.case_ids(CASES["session-query"])
    assert sum(i.startswith("qry-c7-snippet-") for i in ids) == 11


# --------------------------------------------------------------------------- session-log


def test_session_log_suite_module_contract() -> None:
    assert session_log.SUITE == SESSION_SUITE == session_log.CAPABILITY
    assert set(session_log.OPERATIONS) == {c.operation for c in SESSION_CASES}
    case = SESSION_CASES[0]
    result = session_log.reference(case.operation, case.input, case.params)
    assert session_log.compare(case.expect, result) == ""


def test_session_log_suite_is_substantial() -> None:
    assert len(SESSION_CASES) >= 180
    files = {c.file for c in SESSION_CASES}
    for name in ("examples", "envelope", "json", "messages", "request-header", "surface",
                 "invariants", "repair", "versioning", "jsonl"):
        assert f"session/{name}.json" in files, name


def test_session_log_case_ids_are_unique_and_well_formed() -> None:
    counts = Counter(c.id for c in load_kit_cases())
    duplicates = sorted(i for i, n in counts.items() if n > 1)
    assert not duplicates, duplicates
    malformed = [c.id for c in SESSION_CASES if not SESSION_CASE_ID.match(c.id)]
    assert not malformed, malformed


def test_session_log_cases_are_well_formed() -> None:
    for case in SESSION_CASES:
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


def test_session_log_vector_files_are_two_space_json() -> None:
    root = VECTORS / "session"
    for path in sorted(root.glob("*.json")):
        text = path.read_text(encoding="utf-8")
        document = json.loads(text)
        assert document["suite"] == SESSION_SUITE, path.name
        assert text.endswith("\n"), path.name
        indents = {len(line) - len(line.lstrip(" ")) for line in text.splitlines()}
        assert all(n % 2 == 0 for n in indents), path.name


def test_session_log_requirement_ids_exist() -> None:
    known = _known_requirements()
    unknown = sorted({f"{c.id}: {r}" for c in SESSION_CASES for r in c.requirements
                      if r not in known})
    assert not unknown, unknown


# --------------------------------------------------------------------------- session-ops


def test_session_ops_every_operation_has_a_case_and_one_log_input() -> None:
    cases = CASES["session-ops"]
    assert {c["operation"] for c in cases} == set(session_ops.OPERATIONS)
    for case in cases:
        assert len(case["input"]) == 1, case["id"]
        assert next(iter(case["input"])) in ("events", "text", "base64"), case["id"]


def test_session_ops_capabilities_follow_the_operation() -> None:
    for case in CASES["session-ops"]:
        (needed,) = session_ops.requires(case)
        assert needed in session_ops.CAPABILITIES, case["id"]


def test_session_ops_compare_reports_differences() -> None:
    compare = session_ops.compare
    assert compare({"valid": True, "nodes": [1]}, {"valid": True, "nodes": [2]}) != ""
    assert compare({"valid": True, "header": {"a": 1}},
                   {"valid": True, "header": {"a": True}}) != ""
    assert compare({"valid": False, "error": {"code": "A"}},
                   {"valid": False, "error": {"code": "B"}}) != ""
    assert compare({"valid": True}, {"valid": False, "error": {"code": "B"}}) != ""
    typed = {"valid": True, "typed": [{"code": "PAYLOAD_INVALID", "seq": 1}]}
    assert compare(typed, {"valid": True, "typed": []}) != ""
    assert compare(typed, {"valid": True, "typed": [
        {"code": "PAYLOAD_INVALID", "seq": 1}, {"code": "PAYLOAD_INVALID", "seq": 2}]}) != ""
    assert compare(typed, {"valid": True, "typed": [
        {"code": "PAYLOAD_INVALID", "seq": 1, "pointer": "/data"},
        {"code": "PAYLOAD_INVALID", "seq": 1, "pointer": "/data/x"}]}) == ""


def test_session_ops_compare_checks_what_a_writer_keeps() -> None:
    compare = session_ops.compare
    header = {"type": "session"}
    expect = {"valid": True, "files": [[header], [header, {"seq": 0}]]}
    first = '{"type":"session"}\n'
    assert compare(expect, {"valid": True, "files": [first, first + '{"seq":0}\n']}) == ""
    rewritten = '{"type": "session"}\n{"seq":0}\n'
    assert "unchanged" in compare(expect, {"valid": True, "files": [first, rewritten]})
    assert "line feed" in compare(expect, {"valid": True, "files": [first, first + '{"seq":0}']})


def test_session_ops_unknown_operation_is_refused() -> None:
    result = session_ops.reference("session.nope", {"events": []}, {})
    assert result["valid"] is False and result["error"]["code"] == "UNKNOWN_OPERATION"


# --------------------------------------------------------------------------- adapter-dshkit


def test_adapter_dshkit_capabilities_name_both_formats() -> None:
    declared = set(registry().capabilities())
    for case in CASES["adapter-dshkit"]:
        needed = adapter_dshkit.requires(case)
        assert set(needed) <= declared, (case["id"], needed)
        if case["operation"] == "adapters.convert":
            formats = {case["input"]["from"], case["input"]["to"]}
            assert {adapter_dshkit.FORMAT_CAPABILITIES[f] for f in formats} <= set(needed), \
                case["id"]


def test_adapter_dshkit_every_format_has_a_capability() -> None:
    listed = adapter_dshkit.reference("adapters.list", {}, {})
    assert set(listed["ids"]) == set(adapter_dshkit.FORMAT_CAPABILITIES)


def test_adapter_dshkit_compare_reports_differences() -> None:
    compare = adapter_dshkit.compare
    ok = {"valid": True, "output": {"a": {"id": "0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"}}}
    assert compare({"valid": True, "outputUuid4": ["/a/id"]}, ok) == ""
    assert compare({"valid": True, "outputUuid4": ["/a/missing"]}, ok) != ""
    assert compare({"valid": True, "outputMatch": {"/a/id": "x"}}, ok) != ""
    refusal = {"valid": False, "error": {"code": "ADAPTER_LOSS", "details": {"losses": []}}}
    assert compare({"valid": False, "error": {"code": "ADAPTER_LOSS"},
                    "detailsHas": ["format"]}, refusal) != ""
    assert compare({"valid": False, "error": {"code": "ADAPTER_LOSS"},
                    "detailsLosses": [{"kind": "x"}]}, refusal) != ""


# --------------------------------------------------------------------------- format adapters


def test_every_adapter_requirement_has_a_vector_or_a_test() -> None:
    """Requirements without vectors are covered by pytest modules (CLI, registry, hub,
    purity); the rest must be named by at least one vector of the format adapters."""
    covered = {r for name in ADAPTER_SUITES for case in CASES[name] for r in case["requirements"]}
    by_tests = {"ADP-GEN-001", "ADP-GEN-007", "ADP-GEN-008", "ADP-ERR-001", "ADP-ERR-003",
                "ADP-REG-001", "ADP-REG-002", "ADP-REG-003", "ADP-REG-004", "ADP-REG-005",
                "ADP-HUB-001", "ADP-HUB-002", "ADP-HUB-003", "ADP-CLI-001", "ADP-CLI-002",
                "ADP-CLI-003", "ADP-CLI-004", "ADP-CLI-005", "ADP-CLI-006"}
    every = {r for r in _known_requirements() if r.startswith("ADP-")}
    assert not every - covered - by_tests, sorted(every - covered - by_tests)


def test_adapter_suite_sizes() -> None:
    sizes = {name: len(CASES[name]) for name in ADAPTER_SUITES}
    assert sizes["adapter-mem0"] >= 40 and sizes["adapter-hermes"] >= 40
    assert sizes["adapter-claude-md"] >= 40 and sizes["adapter-mcp-memory"] >= 20
