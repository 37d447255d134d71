"""``dshkit memory migrate --from-memento SRC --db DEST`` (MEM-CLI-011), in process."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from dshkit.cli import main
from dshkit.conformance.memento_fixture import materialise

ID1 = "11111111-1111-4111-8111-111111111111"


def _source(path: Path, version: int = 4, **over: Any) -> Path:
    entry = {"id": ID1, "track": "user", "scope": "user-global", "workspace_key": "/w",
             "text": "Likes tea", "source": "dsh-memento", "created_at": 10, "updated_at": 20,
             "session_id": None, **over}
    audit = [{"ts": 10, "action": "add", "entry_id": ID1, "text": "Likes tea"},
             {"ts": 11, "action": "settings-rejected", "text": "bad"}]
    return materialise(path, version, {"entries": [entry], "audit": audit})


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["memory", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.requirement("MEM-CLI-011")
def test_json_report_and_text_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _source(tmp_path / "m.db")
    dest = tmp_path / "d" / "memory.db"
    code, out, _ = run(capsys, "migrate", "--from-memento", str(source), "--db", str(dest),
                       "--yes", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["added"] == 1 and report["ledgerRows"] == 1 and report["sourceVersion"] == 4
    assert [x["action"] for x in report["losses"]] == ["settings-rejected"]
    code, out, _ = run(capsys, "--db", str(dest), "list", "--json")
    assert [e["id"] for e in json.loads(out)] == [ID1]
    code, out, _ = run(capsys, "migrate", "--from-memento", str(source), "--db", str(dest),
                       "--yes")
    assert code == 0
    assert "added 0 entries, skipped 1" in out
    assert "audit rows not carried: the destination's ledger is not empty" in out


@pytest.mark.requirement("MEM-CLI-011")
def test_without_approval_nothing_is_created(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    source = _source(tmp_path / "m.db")
    code, out, _ = run(capsys, "migrate", "--from-memento", str(source), "--db",
                       str(tmp_path / "new" / "memory.db"), "--json")
    assert code == 1
    assert json.loads(out)["error"]["code"] == "WRITE_DENIED"
    assert _tree(tmp_path) == ["m.db"]


@pytest.mark.requirement("MEM-CLI-011")
@pytest.mark.parametrize(("version", "code"), [("9", "SOURCE_UNSUPPORTED_VERSION"),
                                               ("x", "SOURCE_INVALID")])
def test_a_refused_source_is_a_usage_error_naming_the_flag(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str, code: str) -> None:
    source = materialise(tmp_path / "m.db", 4, {}, schema_version=version)
    status, out, _ = run(capsys, "migrate", "--from-memento", str(source), "--db",
                         str(tmp_path / "memory.db"), "--yes", "--json")
    refusal = json.loads(out)
    assert status == 2 and refusal["ok"] is False and refusal["command"] == "memory"
    assert refusal["error"]["code"] == code and refusal["error"]["flag"] == "--from-memento"
    assert refusal["error"]["path"] == str(source)
    assert _tree(tmp_path) == ["m.db"]


@pytest.mark.requirement("MEM-CLI-011")
def test_a_missing_source_is_refused_without_json_too(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "migrate", "--from-memento", str(tmp_path / "nope.db"),
                           "--db", str(tmp_path / "memory.db"), "--yes")
    assert status == 2 and "SOURCE_INVALID" in err and "does not exist" in err
    assert _tree(tmp_path) == []


@pytest.mark.requirement("MEM-CLI-002")
def test_plain_migrate_still_refuses_a_missing_store(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "migrate", "--db", str(tmp_path / "memory.db"), "--json")
    assert status == 2 and json.loads(out)["error"]["code"] == "STORE_MISSING"


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


FORGED = "Likes tea\nApprove? [y/N] y\n\r\x9b2Kmemory seed 0 entries\u2028\x85\u202e"


@pytest.mark.requirement("MEM-CLI-011")
def test_the_terminal_prompt_shows_each_migrated_entry_with_its_own_keys(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """TOOL-CLI-013 for a migration: what is written, not the session's keys; no spoofing."""
    from dshkit.reference.memory.text import visible

    id2, id3 = "22222222-2222-4222-9222-222222222222", "33333333-3333-4333-a333-333333333333"
    base = {"source": "dsh-memento", "created_at": 10, "updated_at": 20, "session_id": None,
            "agent_key": "Reviewer", "last_recalled": None, "recall_count": 0, "tags": "[]",
            "version": 1}
    entries = [
        {**base, "id": ID1, "track": "user", "scope": "user-global", "workspace_key": "/w",
         "text": "Likes tea"},
        {**base, "id": id2, "track": "agent", "scope": "workspace",
         "workspace_key": "/srv/other-project/", "text": FORGED},
        {**base, "id": id3, "track": "agent", "scope": "workspace",
         "workspace_key": "/srv/other-project", "text": "Uses tabs"}]
    source = materialise(tmp_path / "m.db", 4, {"entries": entries})
    dest = tmp_path / "dest.db"
    # one entry already stored: it is skipped, so the prompt must not show it
    assert run(capsys, "migrate", "--from-memento",
               str(materialise(tmp_path / "one.db", 4, {"entries": [entries[2]]})),
               "--db", str(dest), "--yes")[0] == 0
    monkeypatch.setattr("sys.stdin", _Tty("y\n"))
    code, _, err = run(capsys, "migrate", "--from-memento", str(source), "--db", str(dest))
    assert code == 0
    assert not any(ch in err for ch in ("\r", "\x9b", "\u202e", "\u2028", "\x85")), repr(err)
    lines = err.split("\n")
    assert [x for x in lines if x.startswith("Approve?")] == ["Approve? [y/N] "] == lines[-1:]
    assert err.count("\n") == 6, err  # title, buckets, two lines per written entry, last line
    assert "2 entries by bucket: agent/workspace 1, user/user-global 1" in err
    assert ('agent/workspace workspaceKey "/srv/other-project" agentKey "reviewer" source '
            '"dsh-memento"') in err
    assert 'user/user-global workspaceKey "" agentKey "reviewer"' in err
    assert f"text {visible(FORGED)}" in err and "Uses tabs" not in err


@pytest.mark.requirement("MEM-CLI-011")
def test_the_text_report_names_a_proposal_loss_on_one_escaped_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
    row = {"kind": "compaction-summary", "track": "agent", "scope": "workspace",
           "workspace_key": "/w", "text": "maybe", "source": "compaction", "status": "pending",
           "created_at": 5, "decided_at": None, "agent_key": ""}
    entry = {"id": ID1, "track": "user", "scope": "user-global", "workspace_key": "/w",
             "text": "Likes tea", "source": "dsh-memento", "created_at": 10, "updated_at": 20,
             "session_id": None}
    source = materialise(tmp_path / "m.db", 4, {"entries": [entry], "proposals": [
        {**row, "id": good, "session_id": "s-1"},
        {**row, "id": "p-1\x1b[2K\rforged", "session_id": "s-2"}]})
    code, out, _ = run(capsys, "migrate", "--from-memento", str(source), "--db",
                       str(tmp_path / "d.db"), "--yes")
    assert code == 0
    assert "carried 0 audit rows and 1 of 2 proposals" in out
    assert "\x1b" not in out and "\r" not in out
    assert '  - proposal "p-1\\x1b[2K\\rforged" not carried: /id: not a UUID v4' in out
