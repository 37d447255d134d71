"""``dshkit memory`` as a careful user expects it (issue 17, item 1): entries named by id,
export and import as a faithful backup and restore, read-only commands that create nothing, a
denied write that creates nothing and says how to approve, and plain output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_memory_cli import _env, cli, cli_json

from dshkit.reference.memory import open_provider

USER = ("--track", "user", "--scope", "user-global")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


def _seed(tmp_path: Path, db: Path, texts: list[str]) -> list[dict[str, Any]]:
    path = tmp_path / "seed.json"
    path.write_text(json.dumps([{"track": "user", "scope": "user-global", "text": t}
                                for t in texts]), encoding="utf-8")
    cli_json(db, "seed", str(path), "--yes")
    entries: list[dict[str, Any]] = cli_json(db, "list")
    return entries


def _create(path: Path) -> None:
    """An empty store, made through the library (the command line only creates one on an
    approved write)."""
    open_provider(path).close()


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


# -- --id ------------------------------------------------------------------------------------

@pytest.mark.requirement("MEM-CLI-003")
def test_remove_by_id_removes_one_of_two_exact_duplicates(tmp_path: Path, db: Path) -> None:
    first, second = _seed(tmp_path, db, ["prefers tea", "prefers tea"])
    out = cli_json(db, "remove", *USER, "--match", "prefers tea", "--yes", expect=1)
    assert out["error"]["code"] == "AMBIGUOUS_MATCH"
    assert "--id" in out["error"]["message"]
    removed = cli_json(db, "remove", *USER, "--id", second["id"], "--yes")
    assert removed["entry"]["id"] == second["id"]
    assert cli_json(db, "list") == [first]


@pytest.mark.requirement("MEM-CLI-003")
def test_replace_and_consolidate_by_id(tmp_path: Path, db: Path) -> None:
    first, second, third = _seed(tmp_path, db, ["same", "same", "same"])
    replaced = cli_json(db, "replace", *USER, "--id", first["id"], "--text", "changed",
                        "--yes")
    assert replaced["entry"]["id"] == first["id"] and replaced["entry"]["version"] == 2
    merged = cli_json(db, "consolidate", *USER, "--id", second["id"], "--id", third["id"],
                      "--text", "merged", "--yes")
    assert sorted(e["id"] for e in merged["removed"]) == sorted([second["id"], third["id"]])
    assert sorted(e["text"] for e in cli_json(db, "list")) == ["changed", "merged"]


@pytest.mark.requirement("MEM-CLI-003")
def test_an_absent_id_is_a_clear_refusal(tmp_path: Path, db: Path) -> None:
    [entry] = _seed(tmp_path, db, ["prefers tea"])
    missing = "00000000-0000-4000-8000-000000000000"
    out = cli_json(db, "remove", *USER, "--id", missing, "--yes", expect=1)
    assert out["error"]["code"] == "ENTRY_NOT_FOUND"
    assert missing in out["error"]["message"]
    assert out["error"]["details"] == {"track": "user", "scope": "user-global",
                                       "match": missing}
    out = cli_json(db, "remove", "--track", "agent", "--scope", "user-global", "--id",
                   entry["id"], "--yes", expect=1)
    assert out["error"]["code"] == "ENTRY_NOT_FOUND"
    code, _, err = cli(db, "remove", *USER, "--id", entry["id"], "--match", "tea", "--yes")
    assert code == 2 and "--id" in err and "--match" in err
    assert cli_json(db, "list") == [entry]


# -- import: backup and restore -----------------------------------------------------------------

def _populated(tmp_path: Path, db: Path) -> Path:
    cli_json(db, "add", *USER, "--text", "prefers tea", "--tags", "a,b", "--yes")
    cli_json(db, "add", "--track", "agent", "--scope", "workspace", "--text", "uses pnpm",
             "--agent-preset", "Coder", "--session-id", "s-1", "--yes")
    cli_json(db, "query", "--text", "pnpm", "--session-id", "s-2")  # a recall
    path = tmp_path / "backup.json"
    code, _, err = cli(db, "export", "--output", str(path))
    assert code == 0, err
    return path


@pytest.mark.requirement("MEM-CLI-004")
def test_export_then_import_is_a_faithful_backup_and_restore(tmp_path: Path, db: Path) -> None:
    backup = _populated(tmp_path, db)
    restored = tmp_path / "restored.db"
    _create(restored)
    result = cli_json(restored, "import", str(backup), "--yes", cwd="/elsewhere")
    assert result["added"] == 2 and result["skipped"] == [] and result["replaced"] == 0
    assert cli_json(restored, "export")["entries"] == cli_json(db, "export")["entries"]
    assert any(e["recallCount"] == 1 for e in cli_json(restored, "list"))


@pytest.mark.requirement("MEM-CLI-004")
def test_import_twice_is_a_no_op_that_reports_what_it_skipped(tmp_path: Path,
                                                              db: Path) -> None:
    backup = _populated(tmp_path, db)
    before = cli_json(db, "list")
    audit_before = cli_json(db, "audit")
    result = cli_json(db, "import", str(backup))  # nothing to write: no approval needed
    assert result["added"] == 0 and result["replaced"] == 0
    assert sorted(result["skipped"]) == sorted(e["id"] for e in before)
    assert cli_json(db, "list") == before and cli_json(db, "audit") == audit_before
    code, out, err = cli(db, "import", str(backup))
    assert code == 0 and "skipped 2" in out, err


@pytest.mark.requirement("MEM-CLI-004")
def test_same_id_other_content_is_a_conflict_unless_replace(tmp_path: Path, db: Path) -> None:
    backup = _populated(tmp_path, db)
    envelope = json.loads(backup.read_text(encoding="utf-8"))
    envelope["entries"][0]["text"] = "prefers coffee"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(envelope), encoding="utf-8")
    before = cli_json(db, "list")
    out = cli_json(db, "import", str(changed), "--yes", expect=1)
    assert out["error"]["code"] == "IMPORT_CONFLICT"
    assert out["error"]["details"]["ids"] == [envelope["entries"][0]["id"]]
    assert "--replace" in out["error"]["message"]
    assert cli_json(db, "list") == before
    result = cli_json(db, "import", str(changed), "--replace", "--yes")
    assert result["replaced"] == 1 and result["added"] == 0 and len(result["skipped"]) == 1
    assert cli_json(db, "list")[0]["text"] == "prefers coffee"


# -- read-only commands create nothing --------------------------------------------------------

@pytest.mark.requirement("MEM-CLI-002")
@pytest.mark.parametrize("op", [["list"], ["query"], ["audit"], ["budgets"], ["snapshot"],
                                ["export"], ["export", "--format", "mem0"], ["migrate"],
                                ["remove", *USER, "--match", "x", "--yes"],
                                ["replace", *USER, "--id", "x", "--text", "y", "--yes"]])
def test_a_read_of_a_missing_store_is_refused_and_creates_nothing(tmp_path: Path,
                                                                 op: list[str]) -> None:
    missing = tmp_path / "typo" / "dir" / "m.db"
    out = cli_json(missing, *op, expect=2)
    assert out["error"]["code"] == "STORE_MISSING"
    assert out["error"]["details"]["path"] == str(missing)
    assert str(missing) in out["error"]["message"]
    assert _tree(tmp_path) == []


@pytest.mark.requirement("MEM-CLI-002")
def test_the_default_store_is_not_created_by_a_read(tmp_path: Path) -> None:
    env = {**_env(), "DSHKIT_HOME": str(tmp_path / "home")}
    proc = subprocess.run([sys.executable, "-m", "dshkit", "memory", "list", "--json"],
                          capture_output=True, env=env, timeout=60, check=False,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert json.loads(proc.stdout)["error"]["code"] == "STORE_MISSING"
    assert _tree(tmp_path) == []


@pytest.mark.requirement("MEM-CLI-002")
def test_an_empty_existing_file_is_refused_not_adopted(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    out = cli_json(empty, "list", expect=2)
    assert out["error"]["code"] == "STORE_MISSING" and "empty" in out["error"]["message"]
    assert empty.read_bytes() == b"" and _tree(tmp_path) == ["empty.db"]


@pytest.mark.requirement("MEM-CLI-002")
def test_a_denied_write_creates_nothing_and_says_how_to_approve(tmp_path: Path) -> None:
    missing = tmp_path / "new" / "m.db"
    out = cli_json(missing, "add", *USER, "--text", "x", expect=1)
    assert out["error"]["code"] == "WRITE_DENIED"
    assert "--yes" in out["error"]["message"] and "--policy auto" in out["error"]["message"]
    assert "gate=" not in out["error"]["message"]
    assert _tree(tmp_path) == []


@pytest.mark.requirement("MEM-CLI-002")
def test_a_denial_in_an_existing_store_says_how_to_approve(db: Path) -> None:
    _create(db)
    out = cli_json(db, "add", *USER, "--text", "x", expect=1)
    assert out["error"]["code"] == "WRITE_DENIED"
    assert "--yes" in out["error"]["message"] and "--policy auto" in out["error"]["message"]
    assert out["error"]["details"] == {"outcome": "unavailable"}


# -- output ------------------------------------------------------------------------------------

@pytest.mark.requirement("MEM-CLI-005")
def test_export_output_without_format_writes_the_envelope(tmp_path: Path, db: Path) -> None:
    cli_json(db, "add", *USER, "--text", "prefers tea", "--yes")
    target = tmp_path / "out.json"
    code, out, err = cli(db, "export", "--output", str(target))
    assert code == 0 and out == "", err
    envelope = json.loads(target.read_text(encoding="utf-8"))
    assert envelope["schema"] == "memory-export-v1"
    assert envelope["entries"] == cli_json(db, "list")


@pytest.mark.requirement("MEM-CLI-005")
def test_an_empty_list_says_so(db: Path) -> None:
    _create(db)
    assert cli_json(db, "list") == []
    code, out, _ = cli(db, "list")
    assert code == 0 and out == "no entries\n"


@pytest.mark.requirement("MEM-CLI-005")
def test_add_prints_one_line_without_json(db: Path) -> None:
    code, out, err = cli(db, "add", *USER, "--text", "prefers tea", "--yes")
    assert code == 0, err
    [entry] = cli_json(db, "list")
    assert out == f"added {entry['id']} user/user-global: prefers tea (11/2000 units)\n"
    assert entry["sessionId"] == "dshkit-cli"  # the default session of a write


# -- the new provider API ----------------------------------------------------------------------

@pytest.mark.requirement("MEM-CLI-005")
def test_audit_after_and_all(tmp_path: Path, db: Path) -> None:
    _seed(tmp_path, db, [f"entry {n}" for n in range(5)])
    rows = cli_json(db, "audit", "--all")
    assert [r["seq"] for r in rows] == sorted(r["seq"] for r in rows) and len(rows) == 6
    page = cli_json(db, "audit", "--after", str(rows[1]["seq"]), "--limit", "2")
    assert page == rows[2:4]
    code, _, err = cli(db, "audit", "--all", "--after", "1")
    assert code == 2 and "--all" in err


@pytest.mark.requirement("MEM-CLI-005")
def test_export_ledger(db: Path) -> None:
    cli_json(db, "add", *USER, "--text", "prefers tea", "--yes")
    envelope = cli_json(db, "export", "--ledger")
    assert [r["action"] for r in envelope["ledger"]] == ["add"]
    assert "ledger" not in cli_json(db, "export")


@pytest.mark.requirement("MEM-CLI-005")
def test_query_session_id_and_agent_key(db: Path) -> None:
    cli_json(db, "add", "--track", "agent", "--scope", "user-global", "--text", "coder note",
             "--agent-preset", "coder", "--yes")
    cli_json(db, "add", "--track", "agent", "--scope", "user-global", "--text", "ops note",
             "--agent-preset", "ops", "--yes")
    found = cli_json(db, "query", "--agent-key", "Coder")
    assert [e["text"] for e in found["entries"]] == ["coder note"]
    recalled = cli_json(db, "query", "--agent-key", "coder", "--session-id", "s-5")
    assert recalled["entries"][0]["recallCount"] == 1
    assert cli_json(db, "audit", "--limit", "1")[0]["action"] == "recalled"
    assert all(e["recallCount"] == 0 for e in cli_json(db, "query")["entries"]
               if e["text"] == "ops note")


@pytest.mark.requirement("MEM-CLI-004")
def test_import_fresh_keeps_the_old_re_homing(tmp_path: Path, db: Path) -> None:
    backup = _populated(tmp_path, db)
    result = cli_json(db, "import", str(backup), "--fresh", "--yes", cwd="/elsewhere")
    assert result["added"] == 2
    assert len(cli_json(db, "list")) == 4



@pytest.mark.requirement("MEM-CLI-004")
def test_envelope_flags_are_usage_errors_elsewhere(tmp_path: Path, db: Path) -> None:
    backup = _populated(tmp_path, db)
    for args, flag in ((["import", str(backup), "--fresh", "--replace", "--yes"], "--replace"),
                       (["import", str(backup), "--format", "mem0", "--replace", "--yes"],
                        "--replace"),
                       (["export", "--format", "mem0", "--ledger"], "--ledger")):
        out = cli_json(db, *args, expect=2)
        assert out["error"]["code"] == "USAGE" and out["error"]["flag"] == flag, out


@pytest.mark.requirement("MEM-CLI-012")
def test_reading_operations_refuse_write_options(db: Path) -> None:
    """Every option the help lists works (issue 17): an operation that asks no approval does
    not list --yes or --policy and refuses them, before or after its name; serve also refuses
    --durability and --session-id, which it has no use for."""
    cli_json(db, "add", "--track", "user", "--scope", "user-global", "--text", "x", "--yes")
    for op in ("list", "budgets", "audit", "snapshot", "export", "query"):
        for flags, flag in ((["--yes"], "--yes"), (["--policy", "auto"], "--policy")):
            after = cli_json(db, op, *flags, expect=2)
            assert after["error"]["code"] == "USAGE" and after["error"]["flag"] == flag
            before = cli_json(db, *flags, op, expect=2)  # given before the operation's name
            assert before["error"]["code"] == "USAGE" and before["error"]["flag"] == flag
    for flags, flag in ((["--durability", "full"], "--durability"),
                        (["--session-id", "s1"], "--session-id"), (["--yes"], "--yes")):
        out = cli_json(db, *flags, "serve", expect=2)
        assert out["error"]["code"] == "USAGE" and out["error"]["flag"] == flag, out
