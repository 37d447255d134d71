"""Suite ``adapter-mcp-memory``: the ``mcp-graph`` adapter (spec chapter ``adapters/mcp-memory``).
Operations, results and comparison: :mod:`dshkit.conformance.suites._adapters`."""

from __future__ import annotations

from ._adapters import compare, operations

SUITE = "adapter-mcp-memory"
CAPABILITY = "adapter-mcp-memory"
OPERATIONS = operations("mcp-graph")

__all__ = ["CAPABILITY", "OPERATIONS", "SUITE", "compare"]
