"""Each suite of the kit with the reference's answer beside it, for the tests that check a
suite's vectors against the reference: ``session_log.reference(operation, input, params)``
runs the reference's binding of the suite (``dshkit.conformance.implementations.reference``);
every other member is the suite module's own (``SUITE``, ``OPERATIONS``, ``compare``, ...).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any, cast

from dshkit.conformance.interface import JsonObject

__all__ = ["ReferenceSuite", "adapter_claude_md", "adapter_dshkit", "adapter_hermes",
           "adapter_mcp_memory", "adapter_mem0", "compaction", "goal", "memory", "session_log",
           "session_ops", "session_query", "session_reference"]


class ReferenceSuite(ModuleType):
    """A suite module and the reference's binding of it, as one (module-like) object."""

    def __init__(self, module_name: str) -> None:
        super().__init__(f"{__name__}.{module_name}")
        self.module: ModuleType = importlib.import_module(
            f"dshkit.conformance.suites.{module_name}")
        self.binding: ModuleType = importlib.import_module(
            f"dshkit.conformance.implementations.reference.{module_name}")
        self.SUITE = str(self.module.SUITE)
        self.OPERATIONS = tuple(str(op) for op in self.module.OPERATIONS)

    def reference(self, operation: str, input: JsonObject, params: JsonObject,
                  **options: Any) -> JsonObject:
        run = cast(Callable[..., JsonObject], self.binding.run)
        return run(operation, input, params, **options)

    def compare(self, expect: JsonObject, result: JsonObject) -> str:
        return str(self.module.compare(expect, result))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.module, name)


adapter_claude_md = ReferenceSuite("adapter_claude_md")
adapter_dshkit = ReferenceSuite("adapter_dshkit")
adapter_hermes = ReferenceSuite("adapter_hermes")
adapter_mcp_memory = ReferenceSuite("adapter_mcp_memory")
adapter_mem0 = ReferenceSuite("adapter_mem0")
compaction = ReferenceSuite("compaction")
goal = ReferenceSuite("goal")
memory = ReferenceSuite("memory")
session_log = ReferenceSuite("session_log")
session_ops = ReferenceSuite("session_ops")
session_query = ReferenceSuite("session_query")
session_reference = ReferenceSuite("session_reference")
