"""``dshkit adapt``: import, export, convert and list on real files (spec chapter
``adapters/index``, section "Command line"). Mostly in process; one real subprocess checks that
no traceback ever reaches the terminal."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import dshkit
from dshkit.cli import main
from dshkit.reference.memory import open_provider

WRITE = {"agent": {"session": {"id": "s", "header": {"cwd": "/w"}}}}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["adapt", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str, expect: int = 0) -> Any:
    """The printed object; for a refusal (``expect`` not 0), the ``error`` of its envelope."""
    code, out, err = run(capsys, *argv, "--json")
    assert code == expect, (code, out, err)
    printed = json.loads(out)
    if expect == 0:
        return printed
    assert printed["ok"] is False and printed["command"] == "adapt", printed
    return printed["error"]


def store(tmp_path: Path, entries: list[dict[str, Any]]) -> Path:
    db = tmp_path / "memory.db"
    provider = open_provider(db, write_policy="auto")
    if entries:
        provider.seed(entries, WRITE)
    provider.close()
    return db


def test_list(capsys: pytest.CaptureFixture[str]) -> None:
    listed = run_json(capsys, "list")
    assert [a["id"] for a in listed["adapters"]] == sorted(
        ["mem0", "hermes", "hermes-bullets", "claude-md", "mcp-graph", "dshkit"])


@pytest.mark.requirement("ADP-CLI-001")
def test_import_hermes_directory_and_files(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "MEMORY.md").write_text("Uses zsh\n§\nRepo at ~/src", encoding="utf-8")
    out = run_json(capsys, "import", "hermes", str(tmp_path))
    assert [(e["track"], e["text"]) for e in out["entries"]] == [("agent", "Uses zsh"),
                                                                  ("agent", "Repo at ~/src")]
    (tmp_path / "USER.md").write_bytes(b"Likes tea\r\n")
    out = run_json(capsys, "import", "hermes", str(tmp_path / "USER.md"))
    assert out["entries"][0]["track"] == "user" and out["losses"][0]["kind"] == "line-endings"
    other = tmp_path / "notes.md"
    other.write_text("a", encoding="utf-8")
    assert run_json(capsys, "import", "hermes", str(other), expect=2)["code"] == "ADAPTER_OPTION"
    assert run_json(capsys, "import", "hermes", str(other), "--target", "user")["entries"]
    code, out, _ = run(capsys, "import", "hermes", str(tmp_path))
    assert code == 0 and "agent/user-global: Uses zsh" in out and "loss report" in out


@pytest.mark.requirement("ADP-CLI-001")
def test_import_strict_missing_and_bad_options(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    payload = tmp_path / "mem0.json"
    payload.write_text(json.dumps({"results": [{"memory": "a", "user_id": "ana"}]}),
                       encoding="utf-8")
    error = run_json(capsys, "import", "mem0", str(payload), "--strict", expect=1)
    assert error["code"] == "ADAPTER_LOSS" and error["details"]["losses"][0]["field"] == "user_id"
    assert run_json(capsys, "import", "mem0", str(tmp_path / "nope.json"),
                    expect=2)["code"] == "IO_ERROR"
    assert run_json(capsys, "import", "mem0", str(payload), "--option", "colour=red",
                    expect=2)["details"]["key"] == "colour"
    (tmp_path / "latin.json").write_bytes(b"\xff\xfe")
    assert run_json(capsys, "import", "mem0", str(tmp_path / "latin.json"),
                    expect=2)["code"] == "IO_ERROR"
    code, _, err = run(capsys, "import", "mem0", str(payload), "--strict")
    assert code == 1 and "ADAPTER_LOSS" in err and "user_id" in err


@pytest.mark.requirement("ADP-CLI-005")
def test_import_claude_md_confined_by_real_paths(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    project, outside = tmp_path / "proj", tmp_path / "secret"
    (project / "docs").mkdir(parents=True)
    outside.mkdir()
    (outside / "keys.md").write_text("- token abc", encoding="utf-8")
    (project / "docs" / "a.md").write_text("- from a", encoding="utf-8")
    (project / "link.md").symlink_to(outside / "keys.md")
    main_file = project / "CLAUDE.md"
    main_file.write_text("- see @docs/a.md and @link.md and @../secret/keys.md",
                         encoding="utf-8")
    out = run_json(capsys, "import", "claude-md", str(main_file), "--expand-imports")
    assert [e["text"] for e in out["entries"]][1:] == ["from a"]
    assert [x["kind"] for x in out["losses"]] == ["import-unreadable", "import-outside-root"]
    assert [r["expanded"] for r in out["references"]] == [True, False, False]
    wide = run_json(capsys, "import", "claude-md", str(main_file), "--expand-imports",
                    "--root", str(tmp_path))
    assert "token abc" in [e["text"] for e in wide["entries"]]


@pytest.mark.requirement("ADP-CLI-002")
def test_import_into_db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = store(tmp_path, [])
    source = tmp_path / "graph.jsonl"
    source.write_text('{"type":"entity","name":"ana","entityType":"person",'
                      '"observations":["Likes tea"]}', encoding="utf-8")
    denied = run_json(capsys, "import", "mcp-graph", str(source), "--into-db", str(db),
                      expect=1)
    assert denied["code"] == "WRITE_DENIED"  # no terminal, no --yes: fail closed
    done = run_json(capsys, "import", "mcp-graph", str(source), "--into-db", str(db), "--yes",
                    "--cwd", "/w")
    assert done["added"] == 1 and done["entries"][0]["text"] == "ana: Likes tea"
    provider = open_provider(db)
    assert [r["action"] for r in provider.audit_list()][:2] == ["add", "seed"]
    provider.close()
    big = tmp_path / "big.json"
    big.write_text(json.dumps([{"memory": "x" * 1500}, {"memory": "y" * 600}]),
                   encoding="utf-8")
    refused = run_json(capsys, "import", "mem0", str(big), "--into-db", str(db), "--yes",
                       expect=1)
    assert refused["code"] == "ADAPTER_BUDGET"
    assert (refused["details"]["used"], refused["details"]["limit"],
            refused["details"]["needed"]) == (14, 2000, 2114)
    empty = tmp_path / "empty.json"
    empty.write_text("[]", encoding="utf-8")
    assert run_json(capsys, "import", "mem0", str(empty), "--into-db", str(db))["added"] == 0


@pytest.mark.requirement("ADP-CLI-003")
def test_export_formats_and_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = store(tmp_path, [{"track": "agent", "scope": "workspace", "text": "Use pnpm",
                           "tags": ["Tools"], "source": "claude-md"},
                          {"track": "user", "scope": "user-global", "text": "Likes tea"}])
    assert run_json(capsys, "export", "mem0", "--db", str(tmp_path / "none.db"),
                    expect=2)["code"] == "STORE_MISSING"
    assert not (tmp_path / "none.db").exists()
    out = run_json(capsys, "export", "hermes", "--db", str(db), "--output",
                   str(tmp_path / "memories"))
    assert sorted(Path(p).name for p in out["written"]) == ["MEMORY.md", "USER.md"]
    assert (tmp_path / "memories" / "USER.md").read_text(encoding="utf-8") == "Likes tea"
    # seeded entries share one createdAt, so the store lists them in id order
    assert sorted(x["kind"] for x in out["losses"]) == ["bucket-changed", "source-changed",
                                                        "source-changed", "tag-dropped"]
    code, doc, err = run(capsys, "export", "mem0", "--db", str(db))
    assert code == 0
    assert sorted(i["memory"] for i in json.loads(doc)["results"]) == ["Likes tea", "Use pnpm"]
    assert "nothing lost" in err
    strict_target = tmp_path / "strict.md"
    assert run_json(capsys, "export", "hermes", "--db", str(db), "--target", "user",
                    "--output", str(strict_target), "--strict", expect=1)["code"] == \
        "ADAPTER_LOSS"
    assert not strict_target.exists()


@pytest.mark.requirement("ADP-CLI-003")
def test_export_update_claude_md(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = store(tmp_path, [{"track": "agent", "scope": "workspace", "text": "Use pnpm",
                           "tags": ["Tools"], "source": "claude-md"}])
    target = tmp_path / "CLAUDE.md"
    mine = "# Mine\r\n- keep me\r\n"
    target.write_bytes(mine.encode())
    os.chmod(target, 0o640)
    run_json(capsys, "export", "claude-md", "--db", str(db), "--update", str(target))
    text = target.read_bytes().decode()
    assert text.startswith(mine) and "\r\n- Use pnpm\r\n" in text
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    run_json(capsys, "export", "claude-md", "--db", str(db), "--update", str(target))
    assert target.read_bytes().decode() == text
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    refused = run_json(capsys, "export", "claude-md", "--db", str(db), "--output",
                       "/etc/claude-code/CLAUDE.md", expect=1)
    assert refused["code"] == "ADAPTER_READ_ONLY"
    assert run_json(capsys, "export", "mem0", "--db", str(db), "--update", str(target),
                    expect=2)["code"] == "ADAPTER_OPTION"


@pytest.mark.requirement("ADP-CLI-004")
def test_convert(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "memory.jsonl"
    source.write_text('{"type":"relation","from":"a","to":"b","relationType":"knows"}',
                      encoding="utf-8")
    out = run_json(capsys, "convert", "--from", "mcp-graph", "--to", "mem0", str(source),
                   "-o", str(tmp_path / "out.json"), "--write-option", "now=0")
    assert out["entries"] == 1 and out["readLosses"] == [] and out["losses"] == []
    written = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert written["results"][0]["metadata"]["tags"] == ["relation:knows", "from:a", "to:b"]
    back = run_json(capsys, "convert", "--from", "mem0", "--to", "mcp-graph",
                    str(tmp_path / "out.json"))
    assert back["output"] == source.read_text(encoding="utf-8")
    lossy = run_json(capsys, "convert", "--from", "mcp-graph", "--to", "hermes", str(source),
                     "--strict", expect=1)
    assert lossy["code"] == "ADAPTER_LOSS" and lossy["details"]["format"] == "hermes"


@pytest.mark.requirement("ADP-CLI-001")
def test_subprocess_never_shows_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(dshkit.__file__).resolve().parent.parent)}
    proc = subprocess.run([sys.executable, "-m", "dshkit", "adapt", "import", "mem0", str(bad)],
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "ADAPTER_PAYLOAD" in proc.stderr and "line 1" in proc.stderr


MEM0_WITH_BOOKKEEPING = {"results": [{
    "id": "9b1c2f3e-6a8d-4c1e-9f00-2b7d5e4a1c11", "memory": "Prefers pnpm",
    "hash": "5033521b499b63a35048457970a18426",
    "created_at": "2026-08-01T10:00:00.123456-07:00", "updated_at": None}]}


@pytest.mark.requirement("ADP-CLI-001")
@pytest.mark.requirement("ADP-CLI-004")
def test_mem0_ids_and_times_are_reported_as_renewed(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    payload = tmp_path / "mem0.json"
    payload.write_text(json.dumps(MEM0_WITH_BOOKKEEPING), encoding="utf-8")
    out = run_json(capsys, "import", "--format", "mem0", str(payload))
    assert out["losses"] == [] and out["renewed"] == ["created_at", "hash", "id"]
    code, _, err = run(capsys, "convert", "--from", "mem0", "--to", "mem0", str(payload))
    assert code == 0 and "nothing lost" not in err.replace("nothing lost but", "")
    assert "renewed, not kept: mem0 created_at, hash, id" in err
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps([{"memory": "Prefers tea"}]), encoding="utf-8")
    assert "renewed" not in run_json(capsys, "import", "--format", "mem0", str(plain))


@pytest.mark.requirement("ADP-CLI-002")
@pytest.mark.requirement("ADP-CLI-003")
def test_one_grammar_for_formats_and_stores(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    payload = tmp_path / "mem0.json"
    payload.write_text(json.dumps([{"memory": "Prefers tea"}]), encoding="utf-8")
    db = tmp_path / "memory.db"
    seeded = run_json(capsys, "import", "--format", "mem0", str(payload), "--db", str(db),
                      "--yes")
    assert seeded["added"] == 1
    target = tmp_path / "out.json"
    assert main(["memory", "--db", str(db), "export", "--format", "mem0", "-o",
                 str(target)]) == 0
    capsys.readouterr()
    assert json.loads(target.read_text(encoding="utf-8"))["results"][0]["memory"] == \
        "Prefers tea"
    written = run_json(capsys, "export", "--format", "hermes", "--db", str(db), "-o",
                       str(tmp_path / "USER.md"))
    assert written["written"] == [str(tmp_path / "USER.md")]
    assert run_json(capsys, "import", str(payload), expect=2)["flag"] == "--format"


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.requirement("ADP-CLI-003")
@pytest.mark.parametrize("empty", [False, True])
def test_export_of_no_store_is_store_missing_and_creates_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], empty: bool) -> None:
    db = tmp_path / ("empty.db" if empty else "typo/dir/m.db")
    if empty:
        db.write_bytes(b"")
    before = _tree(tmp_path)
    refused = run_json(capsys, "export", "mem0", "--db", str(db), expect=2)
    assert refused["code"] == "STORE_MISSING"
    assert refused["details"]["path"] == str(db) and str(db) in refused["message"]
    assert _tree(tmp_path) == before
    if empty:
        assert db.read_bytes() == b""


@pytest.mark.requirement("ADP-CLI-002")
@pytest.mark.parametrize("policy", [[], ["--policy", "off"]])
def test_a_denied_import_into_no_store_creates_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], policy: list[str]) -> None:
    source = tmp_path / "in" / "mem0.json"
    source.parent.mkdir()
    source.write_text(json.dumps([{"memory": "Likes tea"}]), encoding="utf-8")
    db = tmp_path / "new" / "m.db"
    refused = run_json(capsys, "import", "mem0", str(source), "--db", str(db), *policy,
                       expect=1)
    assert refused["code"] == "WRITE_DENIED"
    assert "no store was created" in refused["message"]
    assert _tree(tmp_path) == ["in", "in/mem0.json"]
