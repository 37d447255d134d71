"""The dshkit reference bound to the kit's ``memory`` suite: :func:`run` answers one case
(what ``--impl reference`` runs for the suite's operations)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from dshkit.conformance.interface import Approver, JsonObject
from dshkit.conformance.memory_driver import Gate, case_path, exact_environment, run_memory_case
from dshkit.conformance.suites.memory import PATH_VARIABLES
from dshkit.reference.memory import MemoryProtocolError, open_provider
from dshkit.reference.memory import store as _store
from dshkit.reference.memory.mcp_recall import History
from dshkit.reference.memory.mcp_tools import Reader, call_tool
from dshkit.reference.memory.readonly import read_store
from dshkit.reference.memory.recall import IndexSource, recall
from dshkit.reference.memory.recall_index import open_readonly
from dshkit.reference.query import IndexStore, index_sessions, open_index, session_of_events


class ReferenceFactory:
    """Opens the dshkit reference provider (``dshkit.reference.memory.open_provider``)."""

    error_type: type[Exception] = MemoryProtocolError
    store_steps = True

    def open(self, path: Path, options: JsonObject, gate: Gate, clock: Any, ids: Any) -> Any:
        return open_provider(
            path, budgets=options.get("budgets"), gate=gate, clock=clock, ids=ids,
            write_policy=options.get("writePolicy", "ask"),
            write_policies=options.get("writePolicies"),
            audit_retention_days=options.get("auditRetentionDays", 0))

    def default_path(self, env: Mapping[str, str]) -> str:
        with exact_environment(env, PATH_VARIABLES):
            return str(_store.default_path())

    def tool(self, path: Path, reader: JsonObject, name: Any, arguments: Any) -> Any:
        """The read-only MCP tools (``dshkit.reference.memory.mcp_tools``) through the same
        read-only view as ``dshkit memory serve``; the SDK is not needed."""
        session = Reader.of(reader.get("cwd"), reader.get("agentPreset"))
        return read_store(path, lambda store: call_tool(store, session, name, arguments))

    def recall_tool(self, path: Path, reader: JsonObject, name: Any, arguments: Any,
                    step: JsonObject, workdir: Path, clock: Callable[[], int]) -> Any:
        """A tool call on a server started with ``--sessions`` (MEM-MCP-003)."""
        session = Reader.of(reader.get("cwd"), reader.get("agentPreset"))
        index = _index(step, workdir)
        try:
            history = History(index, clock)
            return read_store(path, lambda store: call_tool(store, session, name, arguments,
                                                            history))
        finally:
            if isinstance(index, IndexStore):
                index.close()

    def recall(self, provider: Any, step: JsonObject, workdir: Path) -> Any:
        """A ``recall`` step (capability ``memory.recall``)."""
        return recall(provider, step["recall"], _index(step, workdir))


def _build(sessions: list[JsonObject], path: str) -> IndexStore:
    store = open_index(path, "delete")
    index_sessions(store, (session_of_events(s["header"]["id"], s["events"], s["header"])
                           for s in sessions))
    return store


def _index(step: JsonObject, workdir: Path) -> IndexSource:
    """The session query index of a recall step: in memory, or a file of the case directory
    built once and then opened read-only."""
    sessions = step.get("sessions")
    relative = step.get("indexPath")
    if relative is None:
        return None if sessions is None else _build(list(sessions), ":memory:")
    path = case_path(workdir, relative)
    if sessions is not None and not path.exists():
        _build(list(sessions), str(path)).close()
    return lambda: open_readonly(path)


def run(operation: str, input: JsonObject, params: JsonObject,
              approver: Approver | None = None) -> JsonObject:
    """Run the dshkit reference provider on one memory case (approving every write when no
    approver is given)."""
    if operation != "memory.calls":
        raise ValueError(f"unknown memory operation {operation!r}")
    return run_memory_case(ReferenceFactory(), input, params, approver)
