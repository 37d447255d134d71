"""The dshkit reference, seen through the kit's interface (``py:dshkit.conformance.reference_impl:create``).

It runs every discovered suite's ``reference()`` function (each uses only the public API of
:mod:`dshkit.reference`) and declares every capability of every suite.
"""

from __future__ import annotations

from dshkit import __version__

from .interface import Approver, JsonObject, NotSupported
from .registry import Registry, registry

__all__ = ["ReferenceImplementation", "create"]


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
        return suite.reference(operation, input, params, approver)


def create() -> ReferenceImplementation:
    return ReferenceImplementation()
