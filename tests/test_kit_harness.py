"""The subprocess harness path, end to end.

The reference wrapped as a harness (``python -m dshkit.conformance.harness_reference``) must
give the same verdicts as in-process on the whole session-log and memory suites; a
deliberately broken harness must be caught case by case with the right codes; a crash must
error only its case (the harness is restarted); a hang must hit the per-case timeout; stderr
must end up in the report.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import dshkit
from dshkit.conformance.harness_client import SubprocessImplementation
from dshkit.conformance.implementations.reference import create
from dshkit.conformance.runner import KitError, RunResult, run_case, run_kit
from dshkit.conformance.suites import session_log
from dshkit.conformance.vectors import Case, load_cases

BROKEN = Path(__file__).parent / "kit_support" / "broken_harness.py"
SESSION = load_cases("session-log")
MEMORY = load_cases("memory")
ENV = {**os.environ,
       "PYTHONPATH": os.pathsep.join([str(Path(dshkit.__file__).parents[1]),
                                      os.environ.get("PYTHONPATH", "")])}


def harness(*argv: str, timeout: float = 30.0) -> SubprocessImplementation:
    return SubprocessImplementation(list(argv), timeout=timeout, env=ENV)


def broken(mode: str, target: str = "", timeout: float = 30.0) -> SubprocessImplementation:
    return harness(sys.executable, str(BROKEN), mode, target, timeout=timeout)


@pytest.fixture
def reference_harness() -> Iterator[SubprocessImplementation]:
    impl = harness(sys.executable, "-m", "dshkit.conformance.harness_reference")
    yield impl
    impl.close()


def statuses(run: RunResult) -> dict[str, str]:
    return {o.case.id: o.status for o in run.outcomes}


def failed(run: RunResult) -> dict[str, str]:
    return {o.case.id: o.detail for o in run.outcomes if o.status != "passed"}


def test_reference_harness_passes_everything(reference_harness: SubprocessImplementation) -> None:
    assert reference_harness.name == "dshkit-reference"
    assert reference_harness.language == "python"
    assert {"session-log", "memory"} <= set(reference_harness.capabilities)
    run = run_kit(reference_harness, SESSION + MEMORY)
    assert failed(run) == {}
    assert run.ok and len(run.outcomes) == len(SESSION) + len(MEMORY) >= 640
    assert reference_harness.restarts == 0


def test_same_verdicts_in_process(reference_harness: SubprocessImplementation) -> None:
    sample = SESSION[::25] + MEMORY[::10]
    local = create()
    for case in sample:
        assert run_case(reference_harness, case).status == run_case(local, case).status


def test_broken_surface_fails_exactly_the_replacement_cases() -> None:
    impl = broken("surface")
    try:
        run = run_kit(impl, SESSION)
    finally:
        impl.close()
    reference = create()
    expected = {c.id for c in SESSION if c.operation == "fold" and c.expect.get("valid")
                and reference.run(c.operation, c.input, c.params).get("shadowed")
                and ("nodes" in c.expect or "shadowed" in c.expect)}
    got = failed(run)
    assert expected and set(got) == expected
    assert all(d.startswith(("nodes:", "shadowed:")) for d in got.values()), got


@pytest.mark.parametrize(("mode", "key", "wrong"), [("requirements", "requirement",
                                                     "SES-XXX-999"),
                                                    ("pointers", "pointer", "/nonsense"),
                                                    ("later", "problems", "")])
def test_a_wrong_answer_beyond_the_code_fails_cases(mode: str, key: str, wrong: str) -> None:
    """Every problem with a wrong requirement id or pointer, or one extra problem after the
    first (a seq gap reported again on a later event), fails every case that expects that
    member, with the difference in the detail."""
    impl = broken(mode)
    try:
        run = run_kit(impl, SESSION)
    finally:
        impl.close()
    got = failed(run)
    if key == "problems":
        expected = {c.id for c in SESSION if not c.expect["valid"] and "problems" in c.expect}
    else:
        expected = {c.id for c in SESSION if not c.expect["valid"]
                    and key in c.expect.get("error", {})}
    assert len(expected) >= 50
    assert set(got) == expected
    assert all((wrong in d) if wrong else ("problems" in d) for d in got.values()), got


def test_broken_closers_fail_with_the_closer_difference() -> None:
    impl = broken("closers")
    try:
        run = run_kit(impl, SESSION)
    finally:
        impl.close()
    got = failed(run)
    assert got and all(d.startswith("closers:") for d in got.values()), got
    cases = {c.id: c for c in SESSION}
    assert all(cases[i].operation == "repair" and cases[i].expect.get("closers") for i in got)
    with_closers = {c.id for c in SESSION if c.operation == "repair" and c.expect.get("closers")}
    assert set(got) == with_closers


def test_broken_budgets_fail_with_budget_exceeded() -> None:
    impl = broken("budgets")
    try:
        run = run_kit(impl, MEMORY)
    finally:
        impl.close()
    got = failed(run)
    assert len(got) >= 10
    assert all("expected error BUDGET_EXCEEDED, got success" in d for d in got.values()), got
    expecting = {c.id for c in MEMORY
                 if any(s and s.get("error", {}).get("code") == "BUDGET_EXCEEDED"
                        for s in c.expect["steps"])}
    assert set(got) <= expecting
    assert {"mem-memento-c1", "mem-memento-c2", "mem-bud-exactly-full"} <= set(got)


def _memento() -> list[Case]:
    return [c for c in MEMORY if c.id.startswith("mem-memento-b")]


def test_crash_errors_only_its_case_and_restarts() -> None:
    impl = broken("crash", "mem-memento-b3")
    try:
        run = run_kit(impl, _memento())
        assert impl.restarts == 1
        assert "about to crash in mem-memento-b3" in impl.stderr_text()
    finally:
        impl.close()
    outcome = next(o for o in run.outcomes if o.case.id == "mem-memento-b3")
    assert outcome.status == "errored"
    assert "exited (status 3)" in outcome.detail and "about to crash" in outcome.stderr
    assert {i: s for i, s in statuses(run).items() if s != "passed"} == {
        "mem-memento-b3": "errored"}


def test_hang_hits_the_timeout() -> None:
    impl = broken("hang", "mem-memento-b2", timeout=1.0)
    try:
        run = run_kit(impl, _memento())
        assert impl.restarts == 1
    finally:
        impl.close()
    outcome = next(o for o in run.outcomes if o.case.id == "mem-memento-b2")
    assert outcome.status == "errored" and outcome.detail.startswith("timeout")
    assert sum(o.status == "passed" for o in run.outcomes) == len(run.outcomes) - 1


def test_garbage_is_a_protocol_error() -> None:
    impl = broken("garbage", "ses-env-not-object-null")
    try:
        run = run_kit(impl, SESSION[:5])
    finally:
        impl.close()
    outcome = next(o for o in run.outcomes if o.case.id == "ses-env-not-object-null")
    assert outcome.status == "errored" and "not JSON" in outcome.detail
    assert sum(o.status == "passed" for o in run.outcomes) == 4


def test_stderr_is_captured_per_case() -> None:
    impl = broken("noisy")
    try:
        run = run_kit(impl, SESSION[:3])
    finally:
        impl.close()
    for outcome in run.outcomes:
        assert f"noise from {outcome.case.id}" in outcome.stderr


def test_handshake_failures_stop_the_run(tmp_path: Path) -> None:
    with pytest.raises(KitError) as info:
        harness(sys.executable, "-c", "import sys; sys.exit(4)", timeout=5)
    assert info.value.code == "HARNESS_HANDSHAKE"
    script = tmp_path / "v2.py"
    script.write_text("import json, sys\nsys.stdin.readline()\n"
                      "print(json.dumps({'version': 2, 'implementation': {'name': 'x', "
                      "'version': '1', 'language': 'py', 'capabilities': []}}), flush=True)\n")
    with pytest.raises(KitError) as info:
        harness(sys.executable, str(script))
    assert "protocol version 2" in info.value.message
    script.write_text("import json, sys\nsys.stdin.readline()\n"
                      "print(json.dumps({'version': 1, 'implementation': {'name': 'x', "
                      "'version': 'main', 'language': 'py', 'capabilities': []}}), flush=True)\n")
    with pytest.raises(KitError) as info:
        harness(sys.executable, str(script))
    assert "invalid handshake" in info.value.message
    with pytest.raises(KitError) as info:
        harness(str(tmp_path / "missing-program"))
    assert info.value.code == "HARNESS_UNAVAILABLE"


def test_session_suite_operations_cover_the_vectors() -> None:
    assert {c.operation for c in SESSION} <= set(session_log.OPERATIONS)


def test_the_problems_list_is_compared_only_when_declared() -> None:
    case = next(c for c in SESSION if len(c.expect.get("problems", [])) > 1)
    result = {**case.expect, "problems": case.expect["problems"][:1]}
    assert session_log.compare(case.expect, result) == ""
    assert "problems" in session_log.compare(case.expect, result,
                                             capabilities=("session-log.problems",))
    assert session_log.compare(case.expect, case.expect, capabilities=("session-log",)) == ""


def test_folds_that_need_the_loader_are_gated_under_load() -> None:
    """A fold with repair whose answer comes from the loader's rules (legacy migration,
    unknown-type refusal) is not applicable to an implementation without session-log.load."""
    reference = create()
    cases = {c.id: c for c in SESSION}
    for case_id in ("ses-unk-fold-refuses-unknown", "ses-e17-legacy-log-fold",
                    "ses-ans-legacy-tool-result-replace-fold"):
        declared = ("session-log.core", "session-log.repair")
        assert run_case(reference, cases[case_id], declared=declared).status == "not_applicable"
        assert run_case(reference, cases[case_id],
                        declared=(*declared, "session-log.load")).status == "passed"
