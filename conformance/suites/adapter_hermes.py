"""Suite ``adapter-hermes``: the ``hermes`` adapter (MEMORY.md / USER.md) and the
``hermes-bullets`` variant (spec chapter ``adapters/hermes``). Operations, results and
comparison: :mod:`dshkit.conformance.suites._adapters`."""

from __future__ import annotations

from typing import Any

from ._adapters import compare, operations

SUITE = "adapter-hermes"
CAPABILITY = "adapter-hermes"
OPERATIONS = operations("hermes", "hermes-bullets")
CAPABILITIES = {"adapter-hermes.bullets": "the ## section + bullets variant (hermes-bullets)"}


def requires(case: dict[str, Any]) -> list[str]:
    if str(case.get("operation", "")).startswith("hermes-bullets."):
        return [CAPABILITY, "adapter-hermes.bullets"]
    return [CAPABILITY]


__all__ = ["CAPABILITIES", "CAPABILITY", "OPERATIONS", "SUITE", "compare",
           "requires"]
