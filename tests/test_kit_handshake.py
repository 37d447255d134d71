"""The handshake in plain words (issue 14): unknown capabilities are refused with the closest
known names, a branch name as version names the rule, and the ``cmd:`` forms of the docs work
as written."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from dshkit.conformance.handshake import hello_problem, unknown_capabilities
from dshkit.conformance.runner import KitError, command_line, load_implementation

HELLO = Path(__file__).parent / "kit_support" / "hello_harness.py"
KNOWN = ["session-log", "session-log.core", "session-log.invariants", "memory"]
GOOD = {"name": "x", "version": "1.0.0", "language": "python",
        "capabilities": ["session-log.core"]}


def _impl(identity: dict[str, Any]) -> Any:
    command = shlex.join([sys.executable, str(HELLO), json.dumps(identity)])
    return load_implementation(f"cmd:{command}", timeout=10)


def test_a_misspelled_capability_is_refused_with_a_suggestion() -> None:
    with pytest.raises(KitError) as caught:
        _impl({**GOOD, "capabilities": ["session-log.invariant"]})
    assert caught.value.code == "HARNESS_HANDSHAKE"
    message = caught.value.message
    assert "did you mean 'session-log.invariants'?" in message
    assert "Known capabilities:" in message and "memory.store" in message
    assert "CNF-HAR-002" in message


def test_a_branch_name_as_version_names_the_rule() -> None:
    with pytest.raises(KitError) as caught:
        _impl({**GOOD, "version": "main"})
    assert caught.value.message.endswith(
        "implementation.version must be a released version or a commit, not a branch name "
        "such as main (CNF-HAR-002)")


@pytest.mark.parametrize("identity, words", [
    ({**GOOD, "name": ""}, "implementation.name must be a non-empty string"),
    ({**GOOD, "colour": "red"}, "unknown member(s) 'colour'"),
    ({**GOOD, "capabilities": "session-log"}, "must be a list of capability names"),
    ({**GOOD, "capabilities": ["Session_Log"]}, "'Session_Log' is not a capability name"),
    ({**GOOD, "capabilities": ["memory", "memory"]}, "lists 'memory' more than once"),
    ({**GOOD, "homepage": "not a uri"}, "implementation.homepage must be a URI"),
])
def test_handshake_problems_in_plain_words(identity: dict[str, Any], words: str) -> None:
    problem = hello_problem({"version": 1, "implementation": identity}, KNOWN)
    assert words in problem and problem.endswith("(CNF-HAR-002)")
    assert "is not valid under" not in problem and "[" not in problem.split(":")[0]


def test_a_good_handshake_has_no_problem() -> None:
    assert hello_problem({"version": 1, "implementation": GOOD}, KNOWN) == ""
    assert unknown_capabilities(["memory", "session-log.core"], KNOWN) == ""
    assert "did you mean" not in unknown_capabilities(["zzz"], KNOWN)


@pytest.mark.parametrize("form", [
    "cmd:{python} {harness}",            # README
    "cmd:'{python} {harness}'",          # spec/conformance/kit.md, quoted as a whole
    'cmd:"{python} {harness}"',
])
def test_the_documented_cmd_forms_work(form: str) -> None:
    impl = load_implementation(form.format(python=sys.executable, harness=HELLO), timeout=10)
    try:
        assert impl.name == "hello-harness"
    finally:
        impl.close()  # type: ignore[attr-defined]


def test_command_line_splitting() -> None:
    assert command_line("node harness.mjs") == ["node", "harness.mjs"]
    assert command_line("'node harness.mjs'") == ["node", "harness.mjs"]
    assert command_line("'node' 'my harness.mjs'") == ["node", "my harness.mjs"]
    assert command_line(f"'{sys.executable}'") == [sys.executable]
    for bad in ("", "   ", "'unclosed"):
        with pytest.raises(KitError) as caught:
            command_line(bad)
        assert caught.value.code == "IMPL_INVALID"


class _Misspelled:
    name, version, language = "misspelled", "1.0.0", "python"
    capabilities = ("session-log.invariant",)

    def run(self, operation: str, input: Any, params: Any, approver: Any = None) -> Any:
        return {"valid": True}


def create_misspelled() -> _Misspelled:
    return _Misspelled()


def test_a_python_implementation_with_an_unknown_capability_is_refused() -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    try:
        with pytest.raises(KitError) as caught:
            load_implementation("py:test_kit_handshake:create_misspelled")
    finally:
        sys.path.remove(str(Path(__file__).parent))
    assert caught.value.code == "IMPL_INVALID"
    assert "did you mean 'session-log.invariants'?" in caught.value.message


def _run_with_spec_version(version: str, tmp_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, Any], str]:
    from dshkit.conformance.console import main

    identity = {**GOOD, "specVersion": version}
    command = shlex.join([sys.executable, str(HELLO), json.dumps(identity)])
    out = tmp_path / "r.json"
    main(["--impl", f"cmd:{command}", "--case", "ses-env-*", "--properties", "0",
          "--report", str(out)])
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return report, capsys.readouterr().out


def test_a_declared_spec_version_is_recorded_in_the_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dshkit.conformance.kitdata import spec_versions

    kit_spec = spec_versions()["dshkit-spec"]
    report, console = _run_with_spec_version(kit_spec, tmp_path, capsys)
    assert report["implementation"]["specVersion"] == kit_spec
    assert "WARNING" not in console


def test_a_spec_version_of_another_major_gives_a_warning_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dshkit.conformance.kitdata import spec_versions

    kit_spec = spec_versions()["dshkit-spec"]
    other = f"{int(kit_spec.split('.')[0]) + 7}.0.0"
    report, console = _run_with_spec_version(other, tmp_path, capsys)
    assert report["implementation"]["specVersion"] == other
    warning = [line for line in console.splitlines() if line.startswith("WARNING")]
    assert warning == [f"WARNING: the implementation targets spec {other}; this kit checks "
                       f"spec {kit_spec} (another major version): read the results "
                       "against that (CNF-HAR-002)"]


@pytest.mark.parametrize("version", ["1", "one", "1.0", "v1.0.0", ""])
def test_a_spec_version_must_be_semver(version: str) -> None:
    problem = hello_problem({"version": 1, "implementation": {**GOOD, "specVersion": version}},
                            KNOWN)
    assert "implementation.specVersion must be a semantic version" in problem
    assert problem.endswith("(CNF-HAR-002)")


def test_a_semver_spec_version_is_no_problem() -> None:
    assert hello_problem({"version": 1, "implementation": {**GOOD, "specVersion": "0.2.0-rc.1"}},
                         KNOWN) == ""
