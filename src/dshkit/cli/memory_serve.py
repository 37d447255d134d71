"""``dshkit memory serve``: the read-only MCP server over a store, on stdio (spec chapter
``memory/mcp``).

Only this module imports the MCP SDK (the optional extra ``mcp``), and only when the command
runs. The tools are the pure functions of :mod:`dshkit.reference.memory.mcp_tools`; each call
reads the store through :func:`~dshkit.reference.memory.readonly.read_store`, so the server
holds no connection between calls and never writes.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import exits
from .report import Refusal, Reporter, from_error, io_error, usage

if TYPE_CHECKING:
    from ..reference.memory.mcp_recall import History
    from ..reference.memory.mcp_tools import Reader

INSTRUCTIONS = ("Read-only access to the dshkit memory store of one workspace and agent: "
                "search, list, read and count the entries this session can see, and, when "
                "the server has session history, recall earlier sessions of this project. "
                "There is no tool that changes memory.")


def _sdk_missing() -> Refusal:
    return Refusal("MCP_UNAVAILABLE", "dshkit memory serve needs the MCP Python SDK, which is "
                   "not installed; install it with: pip install 'dshkit[mcp]'",
                   exit_code=exits.USAGE, details={"package": "mcp", "extra": "mcp"})


def serve(args: argparse.Namespace, out: Reporter, path: Path) -> int:
    """Check everything that can be refused before the first message, then serve stdio until
    the client closes it."""
    from ..reference.memory import MemoryProtocolError
    from ..reference.memory.mcp_tools import Reader
    from ..reference.memory.readonly import read_store

    try:
        import anyio
        from mcp.server.lowlevel import Server  # noqa: F401  (a missing SDK is refused here)
    except ImportError:
        raise _sdk_missing() from None
    try:
        read_store(path, lambda store: None)  # refused now rather than at the first call
    except MemoryProtocolError as exc:
        raise from_error(exc.to_json(), exits.USAGE, flag="--db") from None
    history = None if args.sessions is None else session_history(args.sessions, out)
    cwd = args.cwd if args.cwd is not None else os.getcwd()
    reader = Reader.of(cwd, args.agent_preset)
    anyio.run(_run, path, reader, history)
    return exits.OK


def session_history(given: str, out: Reporter) -> History:
    """``--sessions`` (MEM-MCP-003): logs (a directory or a log file) indexed in memory once,
    now, or an index file checked now and opened read-only for each call. A path that does not
    exist or cannot be read is refused before the first message."""
    import time

    from ..reference.memory.mcp_recall import History
    from ..reference.memory.recall_index import index_logs, open_readonly
    from ..reference.query import SessionQueryError
    from .memory_recall import LOG_SUFFIXES

    path = Path(given)
    if not path.exists():
        raise usage(f"--sessions {given}: no such file or directory; give a folder of session "
                    "logs or an index built by dshkit query index", "--sessions", path=given)
    if not os.access(path, os.R_OK | (os.X_OK if path.is_dir() else 0)):
        raise io_error(given, "cannot be read", flag="--sessions")

    def clock() -> int:
        return time.time_ns() // 1_000_000

    try:
        if path.is_file() and not path.name.endswith(LOG_SUFFIXES):
            open_readonly(path).close()
            return History(lambda: open_readonly(path), clock)
        index, report = index_logs([path])
    except SessionQueryError as exc:
        raise from_error(exc.to_json(), exits.USAGE, flag="--sessions") from None
    for failed in report.failed:
        assert failed.error is not None
        out.note(f"{failed.path}: left out: {failed.error.code}: {failed.error.message}")
    return History(index, clock)


async def _run(path: Path, reader: Reader, history: History | None) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(path, reader, history)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def build_server(path: Path, reader: Reader, history: History | None = None) -> Any:
    """The SDK server: ``tools/list`` and ``tools/call`` over the tool functions, with
    ``memory_recall`` only when there is session ``history`` (MEM-MCP-003)."""
    import mcp.types as types
    from mcp.server.lowlevel import Server

    from .. import __version__
    from ..reference.memory import MemoryProtocolError
    from ..reference.memory.mcp_tools import SERVER_NAME, call_tool, tool_list
    from ..reference.memory.readonly import read_store

    tools = [types.Tool(name=name, description=description, input_schema=schema,
                        annotations=types.ToolAnnotations(read_only_hint=True,
                                                          destructive_hint=False,
                                                          idempotent_hint=True,
                                                          open_world_hint=False))
             for name, (description, schema) in tool_list(recall=history is not None).items()]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            result = read_store(path, lambda store: call_tool(store, reader, params.name,
                                                               params.arguments, history))
        except MemoryProtocolError as exc:
            failure = {"error": exc.to_json()}
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=_json(failure))],
                structured_content=failure, is_error=True)
        return types.CallToolResult(content=[types.TextContent(type="text", text=_json(result))],
                                    structured_content=result, is_error=False)

    return Server(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
