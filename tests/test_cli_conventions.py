"""Command-line conventions (spec chapter ``cli``): one exit-code table, one ``--json`` refusal
envelope for every command (schema ``cli/v1/refusal.json``), usage and internal errors in the
same envelope, one spelling per shared option, and a start-up that loads one command only."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dshkit import schemas
from dshkit.adapters import FORMATS
from dshkit.cli import build_parser, exits, main
from dshkit.cli.registry import COMMANDS

ENVELOPE = "cli/v1/refusal.json"
HEADER = {"type": "session", "version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}
FOREIGN = '{"type":"session","version":99,"id":"s"}\n'  # a format version nobody reads
LONG_MEM0 = [{"memory": "x" * 40, "metadata": {"track": "agent"}}]

#: One refusal per command: argv (PATHs are relative to a fresh directory) and its status.
REFUSALS: dict[str, tuple[list[str], int]] = {
    "validate": (["validate", "foreign.jsonl"], exits.INVALID),
    "fold": (["fold", "foreign.jsonl"], exits.INVALID),
    "repair": (["repair", "foreign.jsonl"], exits.INVALID),
    "memory": (["memory", "--db", "m.db", "add", "--track", "user", "--scope", "user-global",
                "--text", "x"], exits.INVALID),
    "reference": (["reference", "missing.jsonl"], exits.USAGE),
    "query": (["query", "search", "tea", "--db", "missing.sqlite"], exits.USAGE),
    "compact": (["compact", "plan", "missing.jsonl"], exits.USAGE),
    "goal": (["goal", "foreign.jsonl"], exits.INVALID),
    "compliance": (["compliance", "build", "--out", "o", "--reports", "nowhere"], exits.USAGE),
    "adapt": (["adapt", "import", "--format", "mem0", "missing.json"], exits.USAGE),
    "convert": (["convert", "--from", "mem0", "--to", "hermes", "long.json", "-o", "MEMORY.md",
                 "--memory-char-limit", "10"], exits.INVALID),
    "conformance": (["conformance", "--properties", "many"], exits.USAGE),
    "schemas": (["schemas", "export", "foreign.jsonl"], exits.USAGE),
}


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "foreign.jsonl").write_text(FOREIGN, encoding="utf-8")
    (tmp_path / "long.json").write_text(json.dumps(LONG_MEM0), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _json_lines(capsys: pytest.CaptureFixture[str]) -> list[Any]:
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return [json.loads(line) for line in captured.out.splitlines() if line.strip()]


def test_every_command_has_a_refusal_case() -> None:
    assert set(REFUSALS) == {command.name for command in COMMANDS}


@pytest.mark.requirement("TOOL-CLI-001")
@pytest.mark.requirement("TOOL-CLI-002")
@pytest.mark.parametrize("command", sorted(REFUSALS))
def test_one_refusal_envelope_per_command(command: str, workdir: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    argv, status = REFUSALS[command]
    assert main([*argv, "--json"]) == status
    [refusal] = _json_lines(capsys)
    assert schemas.errors(ENVELOPE, refusal) == []
    assert refusal["ok"] is False and refusal["command"] == command
    # the text form: one line on stderr, CODE: message (a usage error: the usage line and
    # the message), nothing on stdout
    assert main(argv) == status
    captured = capsys.readouterr()
    if refusal["error"]["code"] == "USAGE":
        assert captured.out == "" and captured.err.startswith(f"usage: dshkit {command}")
    elif command not in ("validate", "fold", "repair"):  # these print their report instead
        assert captured.out == ""
        assert captured.err.startswith(f"{refusal['error']['code']}: ")


@pytest.mark.requirement("TOOL-CLI-002")
def test_reports_travel_with_the_refusal(workdir: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    good = workdir / "good.jsonl"
    good.write_text(json.dumps(HEADER) + "\n", encoding="utf-8")
    assert main(["validate", "--json", str(good), "foreign.jsonl"]) == exits.INVALID
    valid, refused = _json_lines(capsys)
    assert valid["valid"] is True and "ok" not in valid
    assert schemas.errors(ENVELOPE, refused) == []
    assert refused["report"]["valid"] is False
    assert refused["error"]["code"] == refused["report"]["errors"][0]["code"]
    assert refused["error"]["path"] == "foreign.jsonl"


@pytest.mark.requirement("TOOL-CLI-003")
def test_successes_keep_their_own_shapes(workdir: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    good = workdir / "good.jsonl"
    good.write_text(json.dumps(HEADER) + "\n", encoding="utf-8")
    for argv in (["validate", str(good)], ["adapt", "list"], ["goal", str(good)]):
        assert main([*argv, "--json"]) == exits.OK
        [result] = _json_lines(capsys)
        assert result.get("ok") is not False and "error" not in result


@pytest.mark.requirement("TOOL-CLI-004")
def test_usage_errors(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--json"]) == exits.USAGE
    [missing] = _json_lines(capsys)
    assert schemas.errors(ENVELOPE, missing) == []
    assert missing["error"]["code"] == "USAGE"
    assert missing["error"]["details"]["usage"].startswith("usage: dshkit validate")
    assert main(["validate", "--level", "strictest", "x", "--json"]) == exits.USAGE
    [choice] = _json_lines(capsys)
    assert choice["error"]["flag"] == "--level"
    assert main(["validate", "--level", "strictest", "x"]) == exits.USAGE
    captured = capsys.readouterr()
    assert captured.out == "" and "usage: dshkit validate" in captured.err
    assert main(["nonsense", "--json"]) == exits.USAGE
    [unknown] = _json_lines(capsys)
    assert unknown["command"] == "dshkit" and schemas.errors(ENVELOPE, unknown) == []


@pytest.mark.requirement("TOOL-CLI-005")
def test_an_internal_error_is_an_envelope_with_status_3(
        workdir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from dshkit.cli import goal

    def broken(args: argparse.Namespace, out: Any) -> int:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(goal, "run", broken)
    assert main(["goal", "foreign.jsonl", "--json"]) == exits.INTERNAL
    [refusal] = _json_lines(capsys)
    assert schemas.errors(ENVELOPE, refusal) == []
    assert refusal["error"]["code"] == "INTERNAL_ERROR"
    assert "ZeroDivisionError" in refusal["error"]["message"]
    assert main(["goal", "foreign.jsonl"]) == exits.INTERNAL
    captured = capsys.readouterr()
    assert captured.err.startswith("INTERNAL_ERROR: ") and "Traceback" not in captured.err


def _options(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
             ) -> list[tuple[tuple[str, ...], argparse.Action]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found += _options(child, (*path, name))
        elif not isinstance(action, argparse._HelpAction | argparse._VersionAction):
            found.append((path, action))
    return found


@pytest.mark.requirement("TOOL-CLI-006")
def test_shared_spellings_and_help() -> None:
    options = _options(build_parser(every=True))
    undescribed = [(p, a.dest) for p, a in options if not a.help]
    assert undescribed == []
    json_help = {a.help for p, a in options if "--json" in a.option_strings
                 and p[0] != "conformance"}  # the kit's own report is its --json output
    assert len(json_help) == 1
    databases = {s for _, a in options if a.dest == "db" for s in a.option_strings
                 if a.help != argparse.SUPPRESS}
    assert databases == {"--db"}
    outputs = {tuple(a.option_strings) for p, a in options if a.dest == "output"}
    assert outputs == {("-o", "--output")}
    formats = {p: a for p, a in options if a.help != argparse.SUPPRESS and (
        "--format" in a.option_strings or {"--from", "--to"} & set(a.option_strings))}
    assert {p for p in formats} >= {("adapt", "import"), ("adapt", "export"),
                                    ("adapt", "convert"), ("convert",), ("memory", "import"),
                                    ("memory", "export")}
    for path, action in formats.items():
        assert all(name in str(action.help) for name in FORMATS), (path, action.help)
    reading = {p for p, a in options if a.dest == "read_options"}
    writing = {p for p, a in options if a.dest == "write_options"}
    assert reading >= {("adapt", "import"), ("adapt", "convert"), ("convert",)}
    assert writing >= {("adapt", "export"), ("adapt", "convert"), ("convert",)}


def _refusal_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main([*argv, "--json"]) != exits.OK
    [refusal] = _json_lines(capsys)
    error: dict[str, Any] = refusal["error"]
    return error


@pytest.mark.requirement("TOOL-CLI-007")
def test_refusals_name_the_flag(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    budget = _refusal_of(REFUSALS["convert"][0], capsys)
    assert budget["code"] == "ADAPTER_BUDGET" and budget["flag"] == "--memory-char-limit"
    assert "--memory-char-limit" in budget["message"]
    option = _refusal_of(["adapt", "import", "--format", "mem0", "long.json",
                          "--read-option", "novalue"], capsys)
    assert option["code"] == "ADAPTER_OPTION" and '"novalue"' in option["message"]
    hermes = _refusal_of(["adapt", "import", "--format", "hermes", "long.json"], capsys)
    assert hermes["flag"] == "--target" and "--target" in hermes["message"]
    for error in (budget, option, hermes):
        assert not any(word in error["message"] for word in ("None", "False", "True"))


@pytest.mark.requirement("TOOL-CLI-008")
def test_one_hermes_file_for_one_file_name(workdir: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "tea.json").write_text(json.dumps([{"memory": "prefers tea"}]), "utf-8")
    assert main(["convert", "--from", "mem0", "--to", "hermes", "tea.json",
                 "-o", "USER.md"]) == exits.OK
    assert (workdir / "USER.md").is_file()
    assert (workdir / "USER.md").read_text(encoding="utf-8").strip() == "prefers tea"


def _child(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, timeout=120)


@pytest.mark.requirement("TOOL-CLI-009")
def test_validate_loads_only_the_validator(tmp_path: Path) -> None:
    log = tmp_path / "one.jsonl"
    log.write_text(json.dumps(HEADER) + "\n", encoding="utf-8")
    done = _child("import sys, json\nfrom dshkit.cli import main\n"
                  f"code = main(['validate', {str(log)!r}])\n"
                  "print(json.dumps([code, sorted(sys.modules)]))")
    code, modules = json.loads(done.stdout.splitlines()[-1])
    assert code == 0, done.stderr
    heavy = {"pydantic", "jsonschema", "hypothesis", "sqlite3", "referencing"}
    assert heavy.isdisjoint(modules)
    other_commands = [m for m in modules if m.startswith(("dshkit.adapters",
                                                          "dshkit.reference.memory",
                                                          "dshkit.reference.query",
                                                          "dshkit.conformance",
                                                          "dshkit.cli.adapt",
                                                          "dshkit.cli.memory"))]
    assert other_commands == []


#: What ``dshkit validate`` of a plain log leaves to the commands and inputs that need it
#: (issue 13): argparse's help formatter (shutil, and through it lzma and bz2), pathlib (and
#: urllib, ipaddress), decimal (only non-integral floats are formatted with it), and the session
#: core's modules for the other front doors (fold, repair, the single pass, the typed layer).
DEFERRED_BY_VALIDATE = frozenset({
    "shutil", "lzma", "bz2", "pathlib", "urllib.parse", "ipaddress", "decimal",
    "dshkit.reference.session.folding", "dshkit.reference.session.recovery",
    "dshkit.reference.session.single_pass", "dshkit.reference.session.typed",
    "dshkit.reference.session.writer", "dshkit.reference.session.models"})


@pytest.mark.requirement("TOOL-CLI-009")
def test_validate_start_up_leaves_out_what_it_does_not_use(tmp_path: Path) -> None:
    """The modules ``python -m dshkit validate`` imports (as the console script runs it), by
    name from ``-X importtime``: a guard on start-up that does not time anything."""
    log = tmp_path / "one.jsonl"
    log.write_text(json.dumps(HEADER) + "\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "dshkit", "validate",
                           str(log)], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "valid at level load" in done.stdout
    imported = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:") and "|" in line}
    assert "dshkit.reference.session.runlog" in imported  # the parse of the trace works
    assert sorted(imported & DEFERRED_BY_VALIDATE) == []
