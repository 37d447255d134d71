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
from .report import Refusal, Reporter, from_error

if TYPE_CHECKING:
    from ..reference.memory.mcp_tools import Reader

INSTRUCTIONS = ("Read-only access to the dshkit memory store of one workspace and agent: "
                "search, list, read and count the entries this session can see. There is no "
                "tool that changes memory.")


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
    if args.sessions is not None:
        raise Refusal("RECALL_UNAVAILABLE", "--sessions (the memory_recall tool over session "
                      "history) is not wired into this build yet; start the server without it",
                      exit_code=exits.USAGE, flag="--sessions",
                      details={"flag": "--sessions"})
    try:
        read_store(path, lambda store: None)  # refused now rather than at the first call
    except MemoryProtocolError as exc:
        raise from_error(exc.to_json(), exits.USAGE, flag="--db") from None
    cwd = args.cwd if args.cwd is not None else os.getcwd()
    reader = Reader.of(cwd, args.agent_preset)
    anyio.run(_run, path, reader)
    return exits.OK


async def _run(path: Path, reader: Reader) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(path, reader)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def build_server(path: Path, reader: Reader) -> Any:
    """The SDK server: ``tools/list`` and ``tools/call`` over the tool functions."""
    import mcp.types as types
    from mcp.server.lowlevel import Server

    from .. import __version__
    from ..reference.memory import MemoryProtocolError
    from ..reference.memory.mcp_tools import SERVER_NAME, TOOLS, call_tool
    from ..reference.memory.readonly import read_store

    tools = [types.Tool(name=name, description=description, input_schema=schema,
                        annotations=types.ToolAnnotations(read_only_hint=True,
                                                          destructive_hint=False,
                                                          idempotent_hint=True,
                                                          open_world_hint=False))
             for name, (description, schema) in TOOLS.items()]
    # RECALL SEAM (MEM-MCP-003): with --sessions the integrator appends the memory_recall tool
    # here and routes it to reference/memory/recall.py; without --sessions it is never listed.

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            result = read_store(path, lambda store: call_tool(store, reader, params.name,
                                                               params.arguments))
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
