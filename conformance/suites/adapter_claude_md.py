"""Suite ``adapter-claude-md``: the ``claude-md`` adapter (spec chapter ``adapters/claude-md``).
Operations, results and comparison: :mod:`dshkit.conformance.suites._adapters`."""

from __future__ import annotations

from typing import Any

from ._adapters import compare, operations

SUITE = "adapter-claude-md"
CAPABILITY = "adapter-claude-md"
OPERATIONS = operations("claude-md", update=True)
CAPABILITIES = {
    "adapter-claude-md.imports": "expanding @path imports (option expand, with files)",
    "adapter-claude-md.update": "updating the managed region of an existing file",
}


def requires(case: dict[str, Any]) -> list[str]:
    needs = [CAPABILITY]
    if case.get("params", {}).get("expand"):
        needs.append("adapter-claude-md.imports")
    if case.get("operation") == "claude-md.update":
        needs.append("adapter-claude-md.update")
    return needs


__all__ = ["CAPABILITIES", "CAPABILITY", "OPERATIONS", "SUITE", "compare",
           "requires"]
