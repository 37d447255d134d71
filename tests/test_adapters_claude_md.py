"""CLAUDE.md adapter details that the vectors do not show: a loader function, path rules,
managed-policy locations and the spec's worked example (spec chapter ``adapters/claude-md``)."""

from __future__ import annotations

import pytest

from dshkit.adapters import AdapterError, adapt, export
from dshkit.adapters.claude_imports import inside, is_managed_policy, resolve

FIXTURE = ("# Project conventions\n- Use pnpm, never npm\n- Run `pnpm test` before every commit"
           "\n\n## Architecture\nSee @docs/architecture.md for module layout.\nPersonal "
           "overrides: @~/.claude/my-prefs.md\n\n```sh\n# @not-an-import — inside a code block, "
           "must be ignored\n```\n")


def test_spec_example() -> None:
    read = adapt("claude-md", FIXTURE)
    assert [e["tags"] for e in read.entries] == [
        ["Project conventions"], ["Project conventions"],
        ["Project conventions", "Architecture"], ["Project conventions", "Architecture"]]
    assert [(r["line"], r["path"], r["resolved"]) for r in read.references] == [
        (6, "docs/architecture.md", "docs/architecture.md"), (7, "~/.claude/my-prefs.md", None)]
    assert read.losses == []


def test_loader_function_failures() -> None:
    def loader(path: str) -> str | None:
        if path == "bad.md":
            raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
        if path == "denied.md":
            raise PermissionError("denied.md resolves outside the root")
        return None

    read = adapt("claude-md", "- @bad.md @denied.md @none.md", {"expand": True,
                                                                "loader": loader})
    assert [x.kind for x in read.losses] == ["import-unreadable", "import-unreadable",
                                             "import-missing"]
    with pytest.raises(AdapterError) as caught:
        adapt("claude-md", "- a", {"expand": True, "loader": "not callable"})
    assert caught.value.details["key"] == "loader"


@pytest.mark.parametrize(("path", "managed"), [
    ("/etc/claude-code/CLAUDE.md", True), ("/etc/claude-code/rules/x.md", True),
    ("/Library/Application Support/ClaudeCode/CLAUDE.md", True),
    ("C:\\ProgramData\\ClaudeCode\\CLAUDE.md", True), ("c:/program files/claudecode/CLAUDE.md", True),
    ("/etc/claude-code-backup/CLAUDE.md", False), ("/home/a/.claude/CLAUDE.md", False),
    ("CLAUDE.md", False)])
def test_managed_policy_locations(path: str, managed: bool) -> None:
    assert is_managed_policy(path) is managed


def test_resolution_is_lexical_and_confined() -> None:
    assert resolve("x.md", "docs/a.md", ".", None) == "docs/x.md"
    assert resolve("../x.md", "docs/a.md", ".", None) == "x.md"
    assert resolve("../../x.md", "docs/a.md", ".", None) is None
    assert resolve("/abs/x.md", "CLAUDE.md", ".", None) is None
    assert resolve("~/x.md", "/h/p/CLAUDE.md", "/h", "/h") == "/h/x.md"
    assert resolve("~/x.md", "/h/p/CLAUDE.md", "/h/p", "/h") is None
    assert inside("/a/b", "/") and inside("/a", "/a") and not inside("/ab", "/a")
    assert not inside("a", "/a") and inside("a/b", "a") and not inside("..", ".")


def test_update_twice_is_stable() -> None:
    entries = [{"track": "agent", "scope": "workspace", "text": "x", "tags": ["T"],
                "source": "claude-md"}]
    once = export("claude-md", entries, {"update": FIXTURE}).output
    assert isinstance(once, str) and once.startswith(FIXTURE)
    assert export("claude-md", entries, {"update": once}).output == once
    read = adapt("claude-md", once)
    assert read.entries[-1] == entries[0]
