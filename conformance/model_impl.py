"""The executable memory model seen as an implementation (``py:dshkit.conformance.model_impl:create``).

:mod:`dshkit.conformance.memory_model` is written from the specification, independently of the
reference provider. Running the memory vectors against both is how the kit checks that its
vectors say what the specification says, not what one implementation happens to do. The model
keeps no file, so it declares ``memory.protocol`` and not ``memory.store``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from dshkit import __version__

from .interface import Approver, JsonObject, NotSupported
from .memory_driver import Gate, run_memory_case
from .memory_model import MemoryModel, ModelError

__all__ = ["MemoryModelImplementation", "ModelFactory", "create"]


class _Handle:
    """One provider handle on a shared model: its own gate, the model's state."""

    def __init__(self, model: MemoryModel, gate: Gate) -> None:
        self._model = model
        self._gate = gate

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self._model, name)

        def call(*args: Any) -> Any:
            saved = self._model.gate
            self._model.gate = self._gate
            try:
                return method(*args)
            finally:
                self._model.gate = saved

        return call


def _configured(options: Mapping[str, Any], clock: Callable[[], int], ids: Callable[[], str],
                gate: Gate | None) -> MemoryModel:
    return MemoryModel(budgets=options.get("budgets"), gate=gate, clock=clock, ids=ids,
                       write_policy=options.get("writePolicy", "ask"),
                       write_policies=options.get("writePolicies"),
                       audit_retention_days=options.get("auditRetentionDays", 0))


class ModelFactory:
    """Opens handles on in-memory models, one model per store path of the case."""

    error_type: type[Exception] = ModelError
    store_steps = False

    def __init__(self) -> None:
        self.models: dict[Path, MemoryModel] = {}

    def open(self, path: Path, options: JsonObject, gate: Gate, clock: Any, ids: Any) -> Any:
        model = self.models.get(path)
        if model is None:
            model = _configured(options, clock, ids, gate)
            self.models[path] = model
            return _Handle(model, gate)
        _configured(options, clock, ids, None)  # the configuration is checked first
        model.reopen(budgets=options.get("budgets"),
                     write_policy=options.get("writePolicy", "ask"),
                     write_policies=options.get("writePolicies"),
                     audit_retention_days=options.get("auditRetentionDays", 0))
        return _Handle(model, gate)

    def default_path(self, env: Mapping[str, str]) -> str:
        raise NotSupported("the model has no store file")


class MemoryModelImplementation:
    name = "dshkit-memory-model"
    version = __version__
    language = "python"
    capabilities: tuple[str, ...] = ("memory.protocol", "memory.proposals")

    def run(self, operation: str, input: JsonObject, params: JsonObject,
            approver: Approver | None = None) -> JsonObject:
        if operation != "memory.calls":
            raise NotSupported(f"the memory model does not implement {operation!r}")
        return run_memory_case(ModelFactory(), input, params, approver)


def create() -> MemoryModelImplementation:
    return MemoryModelImplementation()
