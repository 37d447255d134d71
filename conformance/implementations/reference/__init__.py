"""The dshkit reference seen through the kit's interface (``--impl reference``, the default;
``py:dshkit.conformance.implementations.reference:create``).

Each suite module of :mod:`dshkit.conformance.suites` has a binding here of the same name
whose ``run(operation, input, params)`` answers the suite's operations with the public API of
:mod:`dshkit.reference` (the memory binding also takes ``approver``). The implementation
declares every capability of every suite.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from types import ModuleType
from typing import Any, cast

from dshkit import __version__
from dshkit.conformance.interface import Approver, JsonObject, NotSupported
from dshkit.conformance.registry import Registry, Suite, registry

from . import statements

__all__ = ["ReferenceImplementation", "binding", "create"]


def binding(suite: Suite) -> ModuleType:
    """The module binding the reference to ``suite`` (same name as the suite's module)."""
    return importlib.import_module(f"{__name__}.{suite.module.__name__.rpartition('.')[2]}")


class ReferenceImplementation:
    name = "dshkit-reference"
    version = __version__
    language = "python"

    def __init__(self, suites: Registry | None = None) -> None:
        self._registry = suites if suites is not None else registry()
        self.capabilities: tuple[str, ...] = tuple(
            suite.capability for suite in self._registry.suites.values())

    def run(self, operation: str, input: JsonObject, params: JsonObject,
            approver: Approver | None = None) -> JsonObject:
        suite = self._registry.by_operation(operation)
        if suite is None:
            raise NotSupported(f"no suite has the operation {operation!r}")
        try:
            module = binding(suite)
        except ModuleNotFoundError as exc:
            raise NotSupported(f"the reference has no binding for suite {suite.name!r}") \
                from exc
        run = cast(Callable[..., Any], module.run)
        if approver is not None and "approver" in inspect.signature(run).parameters:
            return cast(JsonObject, run(operation, input, params, approver=approver))
        return cast(JsonObject, run(operation, input, params))

    def statement(self, property: str, request: JsonObject) -> Callable[[JsonObject], str] | None:
        """What ``property`` states of any result for ``request``, read with the reference
        (see :mod:`.statements`); the kit's properties ask for it."""
        return statements.statement(property, request)


def create() -> ReferenceImplementation:
    return ReferenceImplementation()
