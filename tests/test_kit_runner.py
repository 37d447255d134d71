"""The registry, the runner, capabilities and the command lines of the kit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dshkit.cli import main as dshkit_main
from dshkit.conformance import console
from dshkit.conformance.implementations.reference import ReferenceImplementation
from dshkit.conformance.interface import Approver, Implementation, JsonObject, NotSupported
from dshkit.conformance.registry import covers, discover, registry
from dshkit.conformance.runner import KitError, load_implementation, run_case, run_kit
from dshkit.conformance.vectors import load_cases

SESSION = load_cases("session-log")
MEMORY = load_cases("memory")


class Declared:
    """The reference, declaring only some capabilities (and optionally misbehaving)."""

    def __init__(self, *capabilities: str, fail: str = "") -> None:
        self.name, self.version, self.language = "declared", "1.0.0", "python"
        self.capabilities = capabilities
        self.fail = fail
        self.reference = ReferenceImplementation()

    def run(self, operation: str, input: JsonObject, params: JsonObject,
            approver: Approver | None = None) -> JsonObject:
        if self.fail == "crash":
            raise RuntimeError("boom")
        if self.fail == "unsupported":
            raise NotSupported("not here")
        return self.reference.run(operation, input, params, approver)


# -- registry -----------------------------------------------------------------------------------

def test_registry_discovers_the_suites() -> None:
    found = registry()
    assert {"session-log", "memory"} <= set(found.suites)
    assert found.by_operation("fold") is found.suites["session-log"]
    assert found.by_operation("memory.calls") is found.suites["memory"]
    capabilities = found.capabilities()
    assert {"memory.protocol", "memory.store", "session-log.load"} <= set(capabilities)


def test_registry_reports_broken_suite_modules(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "kitpkg_suites"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "good.py").write_text(
        "SUITE = 'good'\nCAPABILITY = 'good'\nOPERATIONS = ('good.op',)\n"
        "CAPABILITIES = {'good.fine': 'a finer one'}\n"
        "def reference(operation, input, params):\n    return {'valid': True}\n"
        "def compare(expect, result):\n    return ''\n")
    (package / "broken.py").write_text("raise ImportError('half written')\n")
    (package / "incomplete.py").write_text("SUITE = 'incomplete'\n")
    (package / "zclash.py").write_text(
        "SUITE = 'clash'\nCAPABILITY = 'clash'\nOPERATIONS = ('good.op',)\n"
        "def reference(operation, input, params):\n    return {}\n"
        "def compare(expect, result):\n    return ''\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = discover("kitpkg_suites")
    assert list(found.suites) == ["good"]
    assert set(found.problems) == {"kitpkg_suites.broken", "kitpkg_suites.incomplete",
                                   "kitpkg_suites.zclash"}
    assert "half written" in found.problems["kitpkg_suites.broken"]
    assert "missing" in found.problems["kitpkg_suites.incomplete"]
    assert found.capabilities() == {"good": "every case of the good suite",
                                    "good.fine": "a finer one"}


def test_capabilities_are_dotted() -> None:
    assert covers(["memory"], "memory.store")
    assert covers(["memory.store"], "memory.store")
    assert not covers(["memory.protocol"], "memory.store")
    assert not covers(["mem"], "memory")
    assert not covers([], "memory")


# -- outcomes and not-applicable accounting -----------------------------------------------------

def test_not_applicable_is_never_a_pass() -> None:
    impl = Declared("session-log.core")
    run = run_kit(impl, SESSION + MEMORY[:5])
    by_status: dict[str, int] = {}
    for outcome in run.outcomes:
        by_status[outcome.status] = by_status.get(outcome.status, 0) + 1
        if outcome.status == "not_applicable":
            assert outcome.duration == 0 and outcome.detail.startswith("needs ")
    assert by_status["not_applicable"] >= 5 + 140
    assert by_status["passed"] + by_status["not_applicable"] == len(run.outcomes)
    passed = {o.case.id for o in run.outcomes if o.status == "passed"}
    for case in SESSION:
        needed = registry().suites["session-log"].requires(case)
        assert (case.id in passed) == (needed == ("session-log.core",))


def test_skips_and_crashes_are_unsuccessful_and_do_not_stop_the_run() -> None:
    for fail, status in (("crash", "errored"), ("unsupported", "skipped")):
        run = run_kit(Declared("session-log", fail=fail), SESSION[:10])
        assert [o.status for o in run.outcomes] == [status] * 10
        assert not run.ok and all(o.unexpected for o in run.outcomes)
    run = run_kit(Declared("session-log", fail="crash"), SESSION[:1])
    assert run.outcomes[0].detail == "RuntimeError: boom"


def test_a_wrong_result_fails_with_the_difference() -> None:
    class Wrong(Declared):
        def run(self, operation: str, input: JsonObject, params: JsonObject,
                approver: Approver | None = None) -> JsonObject:
            return {"valid": True, "events": 0}

    case = next(c for c in SESSION if c.expect.get("valid") is False)
    outcome = run_case(Wrong("session-log"), case)
    assert outcome.status == "failed" and outcome.detail.startswith("expected valid=False")


def test_unknown_suite_errors_its_cases() -> None:
    case = SESSION[0]
    stray = type(case)(**{**{f: getattr(case, f) for f in case.__dataclass_fields__},
                          "suite": "no-such-suite"})
    assert run_case(ReferenceImplementation(), stray).status == "errored"


# -- implementations ----------------------------------------------------------------------------

def test_load_implementation_forms() -> None:
    assert load_implementation("reference").name == "dshkit-reference"
    assert load_implementation("model").capabilities == ("memory.protocol", "memory.proposals")
    impl = load_implementation("py:dshkit.conformance.implementations.reference:create")
    assert isinstance(impl, Implementation)
    for spec, code in (("py:no.such.module:create", "IMPL_UNAVAILABLE"),
                       ("py:dshkit.conformance.vectors:load_cases", "IMPL_INVALID"),
                       ("cmd:", "IMPL_INVALID"), ("java:Main", "IMPL_INVALID")):
        with pytest.raises(KitError) as info:
            load_implementation(spec)
        assert info.value.code == code, spec


class LegacySessionLog:
    """The kit's first interface: four session-log methods."""

    name = "legacy"

    def __init__(self) -> None:
        self.reference = ReferenceImplementation()

    def _run(self, operation: str, log: JsonObject, params: JsonObject) -> JsonObject:
        return self.reference.run(operation, log, params)

    def validate(self, log: JsonObject, level: str, session_id: str | None) -> JsonObject:
        return self._run("validate", log, {"level": level, **_sid(session_id)})

    def fold(self, log: JsonObject, repair: bool, session_id: str | None) -> JsonObject:
        return self._run("fold", log, {"repair": repair, **_sid(session_id)})

    def repair(self, log: JsonObject, session_id: str | None) -> JsonObject:
        return self._run("repair", log, _sid(session_id))

    def load(self, log: JsonObject, session_id: str | None) -> JsonObject:
        return self._run("load", log, _sid(session_id))


def _sid(session_id: str | None) -> dict[str, Any]:
    return {"sessionId": session_id} if session_id else {}


def create_legacy() -> LegacySessionLog:
    return LegacySessionLog()


def test_the_first_interface_still_works() -> None:
    impl = load_implementation(f"py:{__name__}:create_legacy")
    assert impl.capabilities == ("session-log",)
    run = run_kit(impl, SESSION)
    assert run.ok, [o.detail for o in run.outcomes if o.status != "passed"][:3]


# -- command lines ------------------------------------------------------------------------------

def test_dshkit_conformance_console(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = dshkit_main(["conformance", "--suite", "memory", "--case", "mem-memento-*",
                        "--report", str(tmp_path / "r.json")])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out[-1] == "22 passed, 0 failed"
    assert any(line.startswith("Capability") for line in out)
    assert any("uncovered MUST requirements:" in line for line in out)
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["summary"]["passed"] == 22


def test_console_script_main(capsys: pytest.CaptureFixture[str]) -> None:
    assert console.main(["--impl", "model", "--suite", "memory", "--case", "mem-sto-*"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "1 passed, 0 failed"  # mem-sto-reopen; the rest is not applicable


def test_usage_errors_are_structured(capsys: pytest.CaptureFixture[str]) -> None:
    assert dshkit_main(["conformance", "--suite", "nope", "--json"]) == 2
    envelope = json.loads(capsys.readouterr().out)
    assert envelope["ok"] is False and envelope["command"] == "conformance"
    error = envelope["error"]
    assert error["code"] == "SUITE_UNKNOWN" and "memory" in error["message"]
    assert dshkit_main(["conformance", "--impl", "py:no.such:thing"]) == 2
    assert "IMPL_UNAVAILABLE" in capsys.readouterr().err
    assert dshkit_main(["conformance", "--impl", f"cmd:{sys.executable} -c pass"]) == 2
    assert "HARNESS_HANDSHAKE" in capsys.readouterr().err


def test_failing_implementation_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    code = console.main(["--impl", f"py:{__name__}:create_crashing", "--suite", "session-log",
                        "--case", "ses-env-*", "--properties", "0"])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert out[-1].endswith("failed") and not out[-1].endswith(" 0 failed")
    assert any(line.startswith("ERROR ses-env-") for line in out)


def create_crashing() -> Declared:
    return Declared("session-log", fail="crash")


#: A kit process in which the reference's dependencies cannot be imported.
WITHOUT_REFERENCE = ("import sys; sys.modules['zstandard'] = sys.modules['orjson'] = None; "
                     "from dshkit.conformance.console import main; sys.exit(main(sys.argv[1:]))")


def _kit_without_reference(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", WITHOUT_REFERENCE, *args], capture_output=True,
                          text=True, cwd=cwd, check=False, timeout=300)


def test_without_the_reference_the_default_is_a_coded_error(tmp_path: Path) -> None:
    result = _kit_without_reference("--properties", "0", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "REFERENCE_UNAVAILABLE" in result.stderr and "zstandard" in result.stderr
    assert "pip install" in result.stderr and "--impl cmd:" in result.stderr


def test_without_the_reference_another_implementation_runs(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = _kit_without_reference("--impl", "model", "--suite", "memory", "--suite",
                                    "session-log", "--properties", "2", "--seed", "3",
                                    "--report", str(report), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads(report.read_text(encoding="utf-8"))["summary"]
    assert summary["failed"] == summary["errored"] == 0 and summary["passed"] > 100, summary
    properties = summary["property_tests"]
    assert properties["memory-model"]["status"] == "passed", properties["memory-model"]
    # the model declares no session-log capability: not applicable, the reference not needed
    assert properties["session-fold"]["status"] == "not_applicable", properties["session-fold"]


def test_a_property_needing_the_reference_errors_with_the_code(tmp_path: Path) -> None:
    code = ("import sys, json; sys.modules['zstandard'] = sys.modules['orjson'] = None\n"
            "from dshkit.conformance.properties import session_fold_check\n"
            "class Impl:\n"
            "    name, version, capabilities = 'x', '1', ('session-log',)\n"
            "    def run(self, *args, **kwargs): raise AssertionError('not reached')\n"
            "print(json.dumps(session_fold_check(Impl(), max_examples=2, seed=1)))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=tmp_path, check=False, timeout=300)
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["status"] == "errored" and outcome["ok"] is False, outcome
    assert outcome["detail"].startswith("REFERENCE_UNAVAILABLE"), outcome


def test_an_unknown_suite_lists_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert console.main(["--suite", "nope", "--properties", "0"]) == 2
    message = capsys.readouterr().err
    assert "SUITE_UNKNOWN" in message
    assert all(name in message.split("known: ", 1)[1] for name in registry().suites)
