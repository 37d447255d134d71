"""Suite ``adapter-mem0``: the ``mem0`` adapter (spec chapter ``adapters/mem0``).
Operations, results and comparison: :mod:`dshkit.conformance.suites._adapters`."""

from __future__ import annotations

from ._adapters import compare, operations

SUITE = "adapter-mem0"
CAPABILITY = "adapter-mem0"
OPERATIONS = operations("mem0")

__all__ = ["CAPABILITY", "OPERATIONS", "SUITE", "compare"]
