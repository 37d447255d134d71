"""The session core's front door (``run_log``), the shared text rules and the error base."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dshkit.adapters.errors import AdapterError
from dshkit.reference import session
from dshkit.reference.compaction.errors import CompactionError
from dshkit.reference.errors import DshkitError
from dshkit.reference.goal.errors import GoalError
from dshkit.reference.json.inputs import JsonInputError, parse_json
from dshkit.reference.memory.errors import MemoryProtocolError
from dshkit.reference.problems import ProblemError, fail
from dshkit.reference.projection.errors import SessionReferenceError
from dshkit.reference.query.errors import SessionQueryError
from dshkit.reference.session import Level, LogRun, run_log
from dshkit.reference.session.folding import fold_checks
from dshkit.reference.session.pipeline import EventProblem
from dshkit.reference.text import WHITESPACE, has_lone_surrogate, js_trim, units

FIXTURES = Path(__file__).parent / "fixtures" / "session"
LOGS = sorted(FIXTURES.glob("*.jsonl"))


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_the_front_door_gives_what_the_reports_give(path: Path) -> None:
    run = run_log(path, checks=Level.LOAD, every_problem=True, closers="append", keep=True)
    assert isinstance(run, LogRun)
    validation = session.validate_path(path, Level.LOAD)
    assert run.problems == validation.errors
    assert run.failed_level == validation.failed_level
    assert run.events == validation.events
    assert run.torn == validation.torn and run.form == validation.form
    fold = session.fold_path(path)
    assert (run.stop is None) == fold.valid
    if fold.valid:
        surface = run.surface()
        assert surface.nodes == fold.nodes and surface.messages == fold.messages
        assert run.closers == fold.closers and run.header == fold.header
        assert run.events + len(run.closers) == fold.events


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_a_file_and_its_events_in_memory_fold_alike(path: Path) -> None:
    on_file = run_log(path, checks=fold_checks(True), closers="append", keep=True)
    if on_file.stop is not None or on_file.header is not None or on_file.torn is not None:
        pytest.skip("legacy ids depend on the header's id; a damaged file is not its events")
    events = [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    in_memory = run_log(events, checks=fold_checks(True), closers="append", keep=True)
    assert in_memory.stop is None and in_memory.kept == on_file.kept
    assert in_memory.surface() == on_file.surface()
    assert in_memory.path == "<memory>" and in_memory.form is None


def test_the_result_is_immutable() -> None:
    run = run_log(LOGS[0], checks=Level.SEED)
    with pytest.raises(AttributeError):
        run.events = 0  # type: ignore[misc]


def test_a_sink_sees_every_event_once() -> None:
    path = next(p for p in LOGS if run_log(p, checks=Level.LOAD).valid)
    seen: list[Any] = []
    run = run_log(path, checks=Level.LOAD, sink=seen.extend)
    kept = run_log(path, checks=Level.LOAD, keep=True).kept
    assert run.kept is None and kept is not None
    assert seen == list(kept)


def test_importing_the_front_door_loads_no_heavy_dependency() -> None:
    code = ("import sys, dshkit.reference.session as s; s.run_log; s.validate_path; "
            "print(sorted(m for m in ('pydantic', 'jsonschema') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_text_rules() -> None:
    assert units("a\U0001f600") == 3 and units("\ud800") == 1 and units("abc") == 3
    assert js_trim("\ufeff\u3000 x \u2028") == "x"
    assert "\x85" not in WHITESPACE  # NEL is not ECMAScript white space
    assert has_lone_surrogate("a\udc00") and not has_lone_surrogate("\U0001f600")


ERRORS: list[tuple[DshkitError, dict[str, Any]]] = [
    (GoalError("GOAL_X", "GOL-1", "m", seq=3),
     {"code": "GOAL_X", "message": "m", "requirement": "GOL-1", "seq": 3}),
    (CompactionError("CMP_X", "CMP-1", "m", seq=2),
     {"code": "CMP_X", "message": "m", "requirement": "CMP-1", "seq": 2}),
    (SessionQueryError("SESSION_QUERY_X", "m", path="p"),
     {"code": "SESSION_QUERY_X", "message": "m", "path": "p"}),
    (SessionReferenceError("X", "m"),
     {"code": "X", "message": "m", "requirement": "REF-ERR-001"}),
    (MemoryProtocolError("INVALID_INPUT", "m", {"field": "f"}),
     {"code": "INVALID_INPUT", "message": "m", "details": {"field": "f"}}),
    (AdapterError("ADAPTER_PAYLOAD", "m", line=2),
     {"code": "ADAPTER_PAYLOAD", "message": "m", "details": {"line": 2}}),
]


@pytest.mark.parametrize(("error", "wire"), ERRORS, ids=lambda e: type(e).__name__)
def test_every_area_error_is_a_dshkit_error_with_its_own_wire_form(
        error: DshkitError, wire: dict[str, Any]) -> None:
    assert isinstance(error, DshkitError)
    assert error.to_json() == wire
    assert error.args == (error.message,)


def test_problem_and_json_input_errors_share_the_base() -> None:
    problem = fail("JSON_SYNTAX", "SES-JSON-004", "bad", line=3)
    assert isinstance(problem, DshkitError) and problem.code == "JSON_SYNTAX"
    assert problem.to_json() == problem.problem.to_json()
    assert problem.details["line"] == 3
    with pytest.raises(DshkitError) as caught:
        parse_json("[1,")
    assert isinstance(caught.value, JsonInputError) and isinstance(caught.value, ValueError)
    assert caught.value.details == {"line": caught.value.line, "column": caught.value.column}


def test_a_problem_error_survives_pickling() -> None:
    error = fail("X", "R-1", "m")
    again = pickle.loads(pickle.dumps(ProblemError(error.problem)))
    assert again.problem == error.problem and again.code == "X"
    event = pickle.loads(pickle.dumps(EventProblem(error.problem, Level.SEED)))
    assert type(event) is EventProblem and event.level is Level.SEED
