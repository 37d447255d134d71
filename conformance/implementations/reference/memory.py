"""The dshkit reference bound to the kit's ``memory`` suite: :func:`run` answers one case
(what ``--impl reference`` runs for the suite's operations)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dshkit.conformance.interface import Approver, JsonObject
from dshkit.conformance.memory_driver import Gate, exact_environment, run_memory_case
from dshkit.conformance.suites.memory import PATH_VARIABLES
from dshkit.reference.memory import MemoryProtocolError, open_provider
from dshkit.reference.memory import store as _store


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


def run(operation: str, input: JsonObject, params: JsonObject,
              approver: Approver | None = None) -> JsonObject:
    """Run the dshkit reference provider on one memory case (approving every write when no
    approver is given)."""
    if operation != "memory.calls":
        raise ValueError(f"unknown memory operation {operation!r}")
    return run_memory_case(ReferenceFactory(), input, params, approver)
