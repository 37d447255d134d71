"""``dshkit memory serve``: the read-only MCP server (spec memory/mcp: MEM-CLI-008 and
MEM-MCP-001..010).

One test drives the real server over stdio with the SDK's own client; the others prove that no
tool, argument or tool name writes anything, and that a store that cannot be read without
writing is refused before the first message.
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from builders import session_header, user_message
from cli_support import dshkit_env

import dshkit
from dshkit import schemas
from dshkit.reference.memory import MemoryProtocolError, open_provider
from dshkit.reference.memory.mcp_recall import History
from dshkit.reference.memory.mcp_tools import RECALL_TOOL, TOOLS, Reader, call_tool, tool_list
from dshkit.reference.memory.readonly import read_store
from dshkit.reference.memory.recall_index import index_logs, open_readonly
from dshkit.reference.memory.store import create_store_at_version
from dshkit.reference.query import index_paths, open_index

SHOP, BLOG = "/home/ana/shop", "/home/ana/blog"
DAY = 86_400_000
NOW = 1_800_000_000_000
WRITE_SHAPED = ("memory_add", "memory_replace", "memory_remove", "memory_seed",
                "memory_consolidate", "memory_import", "memory_snapshot", "add", "replace",
                "remove", "seed", "consolidate", "import_envelope", "query", "", "MEMORY_SEARCH")


def _ctx(cwd: str, preset: str | None, session: str = "s-1") -> dict[str, Any]:
    header: dict[str, Any] = {"cwd": cwd}
    if preset is not None:
        header["agentPreset"] = preset
    return {"agent": {"session": {"id": session, "header": header}}}


def _store(path: Path) -> dict[str, str]:
    """The worked example of the chapter: e1 shared, e2 visible, e3 other workspace, e4 other
    agent. Returns the ids by name."""
    ids = {}
    ticks = itertools.count(1_700_000_000_000, 10)  # apart, so they list in this order
    with open_provider(path, write_policy="auto", clock=lambda: next(ticks)) as provider:
        for name, track, scope, cwd, preset, text in (
                ("e1", "user", "user-global", SHOP, None, "Prefers short answers"),
                ("e2", "agent", "workspace", SHOP, "Coder", "Lint with ruff"),
                ("e3", "agent", "workspace", BLOG, "Coder", "ruff is pinned"),
                ("e4", "agent", "user-global", SHOP, "Reviewer", "Squash-merge ruff fixes")):
            result = provider.add({"track": track, "scope": scope, "text": text},
                                  _ctx(cwd, preset))
            ids[name] = result["entry"]["id"]
    return ids


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    path = tmp_path / "memory.db"
    return path, _store(path)


def _log(folder: Path, session_id: str, cwd: str, texts: list[str], created: int) -> None:
    lines = [session_header(session_id, created_at=created, cwd=cwd),
             *(user_message(seq, text) for seq, text in enumerate(texts))]
    (folder / f"{session_id}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def _logs(folder: Path, now: int) -> Path:
    """Sessions of the reader's project (one with a hit), of another project and one too old
    for the default window."""
    folder.mkdir()
    _log(folder, "shop-1", SHOP, ["why ruff?", "unrelated", "RUFF  is configured"], now - DAY)
    _log(folder, "blog-1", BLOG, ["ruff in the blog"], now - DAY)
    _log(folder, "shop-old", SHOP, ["ruff long ago"], now - 31 * DAY)
    return folder


def _index_file(logs: Path, path: Path) -> Path:
    """An index file at rest (rollback journal, so no sidecar files while it is closed)."""
    store = open_index(str(path), "delete")
    try:
        index_paths(store, [logs])
    finally:
        store.close()
    return path


def _files(path: Path) -> dict[str, Any]:
    """Everything about the store's files that a write could change."""
    found: dict[str, Any] = {}
    for suffix in ("", "-wal", "-shm", "-journal"):
        name = Path(f"{path}{suffix}")
        if name.exists():
            st = name.stat()
            found[suffix] = (name.read_bytes(), st.st_mtime_ns, st.st_size)
    found["dir"] = sorted(os.listdir(path.parent))
    return found


def _rows(path: Path) -> tuple[int, int, list[Any]]:
    """(entries, audit rows, recall counts), read without touching the files."""
    uri = f"file:{path}?mode=ro&immutable=1"
    with closing(sqlite3.connect(uri, uri=True)) as conn:
        entries = conn.execute("SELECT count(*) FROM entries").fetchone()[0]
        audit = conn.execute("SELECT count(*) FROM audit").fetchone()[0]
        recalls = conn.execute("SELECT id, recall_count, last_recalled FROM entries "
                               "ORDER BY id").fetchall()
    return entries, audit, recalls


def _argument_shapes(ids: dict[str, str]) -> Iterator[tuple[str, Any]]:
    """Every tool with every argument shape: valid, null, absent, wrong type, unknown member."""
    for text in (None, "", "ruff", "RUFF", "nothing"):
        for track in (None, "agent", "user", "bogus"):
            for limit in (None, 1, 5000, 0, "3", True):
                yield "memory_search", {"text": text, "track": track, "limit": limit}
    yield "memory_search", {"scope": "workspace"}
    yield "memory_search", {"colour": "red"}
    for workspace in (None, "", SHOP, BLOG + "/", 5):
        for offset in (None, 0, 1, 99, -1):
            yield "memory_list", {"workspaceKey": workspace, "offset": offset, "limit": 1}
    yield "memory_list", {"scope": "user-global", "track": "user"}
    for entry_id in (*ids.values(), "missing", "", 7, None):
        yield "memory_read", {"id": entry_id}
    yield "memory_read", {}
    yield "memory_stats", {}
    yield "memory_stats", {"x": 1}
    not_objects: tuple[Any, ...] = (None, [], "x", 3)
    for name in TOOLS:
        for arguments in not_objects:
            yield name, arguments
    for name in WRITE_SHAPED:
        yield name, {"track": "agent", "scope": "workspace", "text": "new", "match": "ruff"}


def _call(path: Path, reader: Reader, name: Any, arguments: Any) -> dict[str, Any]:
    try:
        return {"ok": read_store(path, lambda s: call_tool(s, reader, name, arguments))}
    except MemoryProtocolError as exc:
        return {"error": exc.to_json()}


# -- results and visibility ----------------------------------------------------------------------


def test_tools_see_the_readers_visible_set(store: tuple[Path, dict[str, str]]) -> None:
    path, ids = store
    reader = Reader.of(SHOP + "/", "  Coder")
    found = _call(path, reader, "memory_search", {"text": "ruff"})["ok"]
    assert [e["id"] for e in found["entries"]] == [ids["e2"]]
    assert (found["total"], found["truncated"]) == (1, False)
    listed = _call(path, reader, "memory_list", {})["ok"]
    assert [e["id"] for e in listed["entries"]] == [ids["e1"], ids["e2"]]
    assert (listed["total"], listed["offset"], listed["nextOffset"]) == (2, 0, None)
    page = _call(path, reader, "memory_list", {"limit": 1})["ok"]
    assert ([e["id"] for e in page["entries"]], page["nextOffset"]) == ([ids["e1"]], 1)
    user_global = _call(path, reader, "memory_list", {"workspaceKey": ""})["ok"]
    assert [e["id"] for e in user_global["entries"]] == [ids["e1"]]
    other = _call(path, reader, "memory_list", {"workspaceKey": BLOG})["ok"]
    assert other["entries"] == [] and other["total"] == 0
    assert _call(path, reader, "memory_read", {"id": ids["e2"]})["ok"]["entry"]["text"] == \
        "Lint with ruff"
    for hidden in ("e3", "e4"):
        assert _call(path, reader, "memory_read", {"id": ids[hidden]})["ok"] == {"entry": None}
    stats = _call(path, reader, "memory_stats", {})["ok"]
    assert stats["total"] == 2
    assert stats["buckets"][3] == {"track": "agent", "scope": "workspace", "count": 1,
                                   "used": 28, "limit": 4000}
    assert stats["buckets"][2]["count"] == 0 and stats["buckets"][2]["used"] == 23
    # the default reader of a session without a preset sees only shared entries
    shared = _call(path, Reader.of(SHOP, None), "memory_list", {})["ok"]
    assert [e["id"] for e in shared["entries"]] == [ids["e1"]]


def test_results_match_their_schemas(store: tuple[Path, dict[str, str]]) -> None:
    path, ids = store
    reader = Reader.of(SHOP, "coder")
    document = schemas.load("memory/v1/mcp-tools.json")
    for name, (_, input_schema) in tool_list(recall=True).items():
        assert document["$defs"][f"{name}-input"] == input_schema
    for name, arguments in (("memory_search", {"text": "ruff"}), ("memory_list", {"limit": 1}),
                            ("memory_read", {"id": ids["e1"]}),
                            ("memory_read", {"id": "missing"}), ("memory_stats", {})):
        result = _call(path, reader, name, arguments)["ok"]
        assert schemas.errors(f"memory/v1/mcp-tools.json#/$defs/{name}-result", result) == []
    failure = _call(path, reader, "memory_add", {})
    assert schemas.errors("memory/v1/mcp-tools.json#/$defs/tool-error", failure) == []


def test_argument_errors_point_at_the_member(store: tuple[Path, dict[str, str]]) -> None:
    path, _ = store
    reader = Reader.of(SHOP, "coder")
    for name, arguments, field in (("memory_search", {"limit": 0}, "/limit"),
                                   ("memory_search", {"limit": True}, "/limit"),
                                   ("memory_search", {"track": "bogus"}, "/track"),
                                   ("memory_search", {"colour": 1}, "/colour"),
                                   ("memory_list", {"offset": -1}, "/offset"),
                                   ("memory_list", {"workspaceKey": 5}, "/workspaceKey"),
                                   ("memory_read", {}, "/id"),
                                   ("memory_stats", {"x": 1}, "/x"),
                                   ("memory_stats", [], "/"),
                                   ("memory_remove", {"match": "ruff"}, "/name")):
        error = _call(path, reader, name, arguments)["error"]
        assert error["code"] == "INVALID_INPUT", (name, arguments)
        assert error["details"]["field"] == field, (name, arguments)


def test_the_recall_tool_is_offered_only_with_history(
        store: tuple[Path, dict[str, str]]) -> None:
    path, _ = store
    assert list(tool_list(recall=False)) == list(TOOLS)
    assert list(tool_list(recall=True)) == [*TOOLS, RECALL_TOOL]
    error = _call(path, Reader.of(SHOP, "coder"), RECALL_TOOL, {"text": "ruff"})["error"]
    assert error["code"] == "INVALID_INPUT" and error["details"]["field"] == "/name"


def test_the_recall_tool_joins_memory_and_the_projects_history(
        store: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    path, ids = store
    index, _ = index_logs([_logs(tmp_path / "logs", NOW)])
    history = History(index, lambda: NOW)
    result = _recall(path, Reader.of(SHOP + "/", "Coder"), {"text": "ruff"}, history)["ok"]
    assert [e["id"] for e in result["memory"]["entries"]] == [ids["e2"]]
    assert (result["memory"]["total"], result["memory"]["truncated"]) == (1, False)
    assert result["history"] == {"available": True, "sessions": []}  # the project is "shop/"
    reader = Reader.of(SHOP, "Coder")
    result = _recall(path, reader, {"text": "ruff", "snippetChars": 5}, history)["ok"]
    assert result["history"] == {"available": True, "sessions": [
        {"sessionId": "shop-1", "createdAt": NOW - DAY, "matches": 2,
         "snippets": ["why r…", "RUFF …"]}]}
    assert schemas.errors(f"memory/v1/mcp-tools.json#/$defs/{RECALL_TOOL}-result", result) == []
    wide = _recall(path, reader, {"text": "ruff", "windowDays": 40, "historyLimit": 1,
                                  "sessionId": "shop-1"}, history)["ok"]
    assert [s["sessionId"] for s in wide["history"]["sessions"]] == ["shop-old"]
    assert _recall(path, reader, {"text": "ruff", "memoryLimit": 1}, history)["ok"][
        "memory"]["entries"][0]["id"] == ids["e2"]
    gone = History(lambda: open_readonly(tmp_path / "missing.db"), lambda: NOW)
    unavailable = _recall(path, reader, {"text": "ruff"}, gone)["ok"]
    assert unavailable["memory"]["total"] == 1
    assert unavailable["history"]["available"] is False
    assert unavailable["history"]["error"]["code"] == "SESSION_QUERY_INDEX_FAILED"


def test_recall_argument_errors_point_at_the_member(store: tuple[Path, dict[str, str]]) -> None:
    path, _ = store
    history = History(None, lambda: NOW)
    for arguments, field in (({}, "/text"), ({"text": " "}, "/text"), ({"text": 3}, "/text"),
                             ({"text": "a", "sessionId": ""}, "/sessionId"),
                             ({"text": "a", "historyLimit": 0}, "/historyLimit"),
                             ({"text": "a", "snippetChars": 10_001}, "/snippetChars"),
                             ({"text": "a", "memoryLimit": True}, "/memoryLimit"),
                             ({"text": "a", "cwd": "/x"}, "/cwd"),
                             ({"text": "a", "now": 1}, "/now"), ([], "/")):
        error = _recall(path, Reader.of(SHOP, "coder"), arguments, history)["error"]
        assert error["code"] == "INVALID_INPUT", arguments
        assert error["details"]["field"] == field, arguments


# -- no write path -------------------------------------------------------------------------------


def test_no_tool_and_no_argument_writes_anything(store: tuple[Path, dict[str, str]]) -> None:
    path, ids = store
    before, rows = _files(path), _rows(path)
    assert "-wal" not in before and "-shm" not in before  # a store at rest
    outcomes = {"ok": 0, "error": 0}
    for reader in (Reader.of(SHOP, "coder"), Reader.of(BLOG, None), Reader.of("", "reviewer")):
        for name, arguments in _argument_shapes(ids):
            outcomes[next(iter(_call(path, reader, name, arguments)))] += 1
    assert outcomes["ok"] > 100 and outcomes["error"] > 100
    assert _files(path) == before
    assert _rows(path) == rows


def _recall_shapes() -> Iterator[Any]:
    """memory_recall with every argument shape: valid, null, wrong type, out of range,
    unknown (recall's own cwd, now and agentKey are not arguments of the tool)."""
    for text in ("ruff", "RUFF", "nothing", "", "  ", None, 5):
        for session in (None, "shop-1", "", 3):
            yield {"text": text, "sessionId": session}
    for key, bad in (("memoryLimit", 1001), ("historyLimit", 101), ("snippetCap", 51),
                     ("snippetChars", 10_001), ("windowDays", 3651)):
        for value in (None, 1, bad, 0, True, "2"):
            yield {"text": "ruff", key: value}
    for extra in ("cwd", "now", "agentKey", "colour"):
        yield {"text": "ruff", extra: "x"}
    yield from (None, [], "ruff", {})


def _recall(path: Path, reader: Reader, arguments: Any, history: History) -> dict[str, Any]:
    try:
        return {"ok": read_store(path, lambda s: call_tool(s, reader, RECALL_TOOL, arguments,
                                                           history))}
    except MemoryProtocolError as exc:
        return {"error": exc.to_json()}


def test_the_recall_tool_writes_nothing(store: tuple[Path, dict[str, str]],
                                        tmp_path: Path) -> None:
    path, _ = store
    index = _index_file(_logs(tmp_path / "logs", NOW), tmp_path / "index.db")
    before, rows, index_before = _files(path), _rows(path), _files(index)
    outcomes = {"ok": 0, "error": 0}
    for source in (lambda: open_readonly(index), index_logs([tmp_path / "logs"])[0]):
        history = History(source, lambda: NOW)
        for reader in (Reader.of(SHOP, "coder"), Reader.of(BLOG, None)):
            for arguments in _recall_shapes():
                outcomes[next(iter(_recall(path, reader, arguments, history)))] += 1
    assert outcomes["ok"] > 20 and outcomes["error"] > 20
    assert _files(path) == before and _rows(path) == rows  # no recall count, no audit row
    assert _files(index) == index_before


@pytest.mark.parametrize("name", WRITE_SHAPED)
def test_write_shaped_tool_names_are_tool_errors(store: tuple[Path, dict[str, str]],
                                                 name: str) -> None:
    path, _ = store
    before = _files(path)
    error = _call(path, Reader.of(SHOP, "coder"), name, {"text": "x"})["error"]
    assert error["code"] == "INVALID_INPUT" and error["details"]["field"] == "/name"
    assert _files(path) == before


def test_a_live_writer_sees_its_store_and_wal_untouched(
        store: tuple[Path, dict[str, str]]) -> None:
    path, ids = store
    with open_provider(path, write_policy="auto") as provider:
        provider.add({"track": "agent", "scope": "workspace", "text": "Added while serving"},
                     _ctx(SHOP, "coder"))
        before = _files(path)
        assert "-wal" in before
        reader = Reader.of(SHOP, "coder")
        found = _call(path, reader, "memory_search", {"text": "serving"})["ok"]
        assert found["total"] == 1  # the uncheckpointed commit is seen
        for name, arguments in _argument_shapes(ids):
            _call(path, reader, name, arguments)
        after = _files(path)
        assert after[""] == before[""] and after["-wal"] == before["-wal"]
        audit = provider.audit_list(1000)
        assert [row["action"] for row in audit].count("recalled") == 0


def test_a_commit_during_an_immutable_read_is_read_again(
        store: tuple[Path, dict[str, str]]) -> None:
    path, _ = store
    reader = Reader.of(SHOP, "coder")
    calls = []

    def racing(s: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:  # another process commits while this read is under way
            with open_provider(path, write_policy="auto") as provider:
                provider.add({"track": "agent", "scope": "workspace", "text": "late ruff"},
                             _ctx(SHOP, "coder"))
        return call_tool(s, reader, "memory_search", {"text": "ruff"})

    result = read_store(path, racing)
    assert len(calls) == 2
    assert result["total"] == 2


# -- refusals at start-up ------------------------------------------------------------------------


def _env() -> dict[str, str]:
    return dshkit_env()


def _serve(*args: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    code = f"{prelude}import sys; from dshkit.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, "memory", "serve", "--json", *args],
                          capture_output=True, text=True, env=_env(), timeout=120,
                          stdin=subprocess.DEVNULL)


def _refusal(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    envelope = json.loads(proc.stdout)
    assert envelope["ok"] is False and envelope["command"] == "memory"
    error: dict[str, Any] = envelope["error"]
    return error


@pytest.mark.requirement("MEM-CLI-008")
def test_a_missing_store_is_refused_and_not_created(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "memory.db"
    error = _refusal(_serve("--db", str(path)))
    assert error["code"] == "STORE_MISSING" and error["details"]["path"] == str(path)
    assert not path.parent.exists()
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    assert _refusal(_serve("--db", str(empty)))["code"] == "STORE_MISSING"
    assert empty.read_bytes() == b"" and sorted(os.listdir(tmp_path)) == ["empty.db"]


@pytest.mark.requirement("MEM-CLI-008")
def test_stores_that_cannot_be_read_without_writing_are_refused(tmp_path: Path) -> None:
    old = tmp_path / "old.db"
    create_store_at_version(old, 2)
    foreign = tmp_path / "foreign.db"
    with closing(sqlite3.connect(foreign)) as conn:
        conn.execute("CREATE TABLE t (x)")
        conn.commit()
    text = tmp_path / "notes.db"
    text.write_text("not a database at all, just some words here " * 3)
    for path, code in ((old, "STORE_UNSUPPORTED_VERSION"), (foreign, "STORE_CORRUPT"),
                       (text, "STORE_CORRUPT")):
        before = _files(path)
        error = _refusal(_serve("--db", str(path)))
        assert error["code"] == code, path
        assert _files(path) == before
    assert "memory migrate" in _refusal(_serve("--db", str(old)))["message"]


@pytest.mark.requirement("MEM-CLI-008")
def test_without_the_sdk_the_command_refuses(store: tuple[Path, dict[str, str]]) -> None:
    path, _ = store
    error = _refusal(_serve("--db", str(path), prelude="import sys; sys.modules['mcp'] = None; "))
    assert error["code"] == "MCP_UNAVAILABLE" and "dshkit[mcp]" in error["message"]


@pytest.mark.requirement("MEM-CLI-008")
def test_sessions_that_cannot_be_read_are_refused(store: tuple[Path, dict[str, str]],
                                                   tmp_path: Path) -> None:
    path, _ = store
    missing = tmp_path / "no-logs"
    error = _refusal(_serve("--db", str(path), "--sessions", str(missing)))
    assert error["code"] == "USAGE" and error["details"]["path"] == str(missing)
    assert not missing.exists()
    foreign = tmp_path / "foreign.db"
    with closing(sqlite3.connect(foreign)) as conn:
        conn.execute("CREATE TABLE t (x)")
        conn.commit()
    before = _files(foreign)
    error = _refusal(_serve("--db", str(path), "--sessions", str(foreign)))
    assert error["code"] == "SESSION_QUERY_INDEX_FAILED" and str(foreign) in error["message"]
    assert _files(foreign) == before
    # the store is still checked first
    error = _refusal(_serve("--db", str(tmp_path / "none.db"), "--sessions", str(missing)))
    assert error["code"] == "STORE_MISSING"


@pytest.mark.requirement("MEM-CLI-008")
def test_other_commands_do_not_import_the_sdk() -> None:
    code = ("import sys, contextlib, io\nfrom dshkit.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    for argv in (['--help'], ['memory', '--help'], ['memory', 'serve', '--help']):\n"
            "        try:\n            main(argv)\n        except SystemExit:\n            pass\n"
            "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


# -- the real server over stdio, driven by the SDK's client ----------------------------------------


@pytest.mark.requirement("MEM-CLI-008")
def test_the_sdk_client_drives_the_server_over_stdio(store: tuple[Path, dict[str, str]]) -> None:
    pytest.importorskip("mcp")
    import anyio
    import mcp.types as types
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    path, ids = store
    before, rows = _files(path), _rows(path)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "dshkit", "memory", "serve", "--db", str(path),
                                      "--cwd", SHOP, "--agent-preset", "Coder"],
        env=_env())

    def structured(result: types.CallToolResult) -> Any:
        assert len(result.content) == 1 and isinstance(result.content[0], types.TextContent)
        assert json.loads(result.content[0].text) == result.structured_content
        return result.structured_content

    async def session() -> None:
        async with stdio_client(params) as (receive, send), ClientSession(receive, send) as client:
            init = await client.initialize()
            assert init.server_info.name == "dshkit-memory"
            assert init.server_info.version == dshkit.__version__
            listed = await client.list_tools()
            assert [t.name for t in listed.tools] == list(TOOLS)
            for tool in listed.tools:
                assert tool.input_schema == TOOLS[tool.name][1]
                assert tool.annotations is not None and tool.annotations.read_only_hint
            found = await client.call_tool("memory_search", {"text": "ruff"})
            assert not found.is_error
            assert [e["id"] for e in structured(found)["entries"]] == [ids["e2"]]
            listed_entries = await client.call_tool("memory_list", {"limit": 1})
            assert structured(listed_entries)["nextOffset"] == 1
            hidden = await client.call_tool("memory_read", {"id": ids["e3"]})
            assert structured(hidden) == {"entry": None}
            read = await client.call_tool("memory_read", {"id": ids["e1"]})
            assert structured(read)["entry"]["text"] == "Prefers short answers"
            stats = await client.call_tool("memory_stats", {})
            assert structured(stats)["total"] == 2
            for name in ("memory_add", "memory_remove", "memory_seed"):
                refused = await client.call_tool(name, {"text": "x", "match": "ruff"})
                assert refused.is_error
                assert structured(refused)["error"]["details"]["field"] == "/name"
            bad = await client.call_tool("memory_search", {"limit": 0})
            assert bad.is_error and structured(bad)["error"]["details"]["field"] == "/limit"

    anyio.run(session)
    assert _files(path) == before
    assert _rows(path) == rows


@pytest.mark.requirement("MEM-CLI-008")
@pytest.mark.parametrize("kind", ["logs", "index"])
def test_the_sdk_client_recalls_over_stdio(store: tuple[Path, dict[str, str]], tmp_path: Path,
                                           kind: str) -> None:
    pytest.importorskip("mcp")
    import time

    import anyio
    import mcp.types as types
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    path, ids = store
    logs = _logs(tmp_path / "logs", int(time.time() * 1000))
    sessions = logs if kind == "logs" else _index_file(logs, tmp_path / "index.db")
    watched = [path, sessions] if kind == "index" else [path]
    before, rows = [_files(p) for p in watched], _rows(path)
    logs_before = {p.name: p.read_bytes() for p in logs.iterdir()}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "dshkit", "memory", "serve", "--db", str(path),
                                      "--cwd", SHOP, "--agent-preset", "Coder",
                                      "--sessions", str(sessions)], env=_env())

    async def session() -> None:
        async with stdio_client(params) as (receive, send), ClientSession(receive, send) as client:
            await client.initialize()
            listed = await client.list_tools()
            assert [t.name for t in listed.tools] == [*TOOLS, RECALL_TOOL]
            recall_tool = listed.tools[-1]
            assert recall_tool.input_schema == tool_list(recall=True)[RECALL_TOOL][1]
            assert recall_tool.annotations is not None
            assert recall_tool.annotations.read_only_hint
            result = await client.call_tool(RECALL_TOOL, {"text": "ruff"})
            assert not result.is_error
            assert isinstance(result.content[0], types.TextContent)
            found = result.structured_content
            assert found is not None and json.loads(result.content[0].text) == found
            assert [e["id"] for e in found["memory"]["entries"]] == [ids["e2"]]
            assert found["history"]["available"] is True
            assert [(s["sessionId"], s["snippets"]) for s in found["history"]["sessions"]] == [
                ("shop-1", ["why ruff?", "RUFF  is configured"])]
            bad = await client.call_tool(RECALL_TOOL, {"text": "ruff", "cwd": BLOG})
            assert bad.is_error and bad.structured_content is not None
            assert bad.structured_content["error"]["details"]["field"] == "/cwd"

    anyio.run(session)
    assert [_files(p) for p in watched] == before
    assert _rows(path) == rows
    assert {p.name: p.read_bytes() for p in logs.iterdir()} == logs_before
