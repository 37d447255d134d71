"""The suites of the kit, discovered from the modules of ``dshkit.conformance.suites``.

A suite module exposes ``SUITE``, ``CAPABILITY``, ``OPERATIONS`` and ``compare(expect,
result)`` (kit-contract): the suite's data, never an implementation (the reference's binding
of each suite is in :mod:`dshkit.conformance.implementations.reference`). Optional members:

- ``CAPABILITIES: dict[str, str]``: finer capabilities (``"<CAPABILITY>.<name>"``) with a
  one-line description each;
- ``requires(case: dict) -> Sequence[str]``: the capabilities one case needs (default: the
  suite's ``CAPABILITY``); a case may also list them itself (``"capabilities"``);
- ``compare`` may take a keyword ``capabilities`` (the implementation's declared
  capabilities), to compare more of a result when the implementation declares more;
- ``make_approver(case)`` and ``attach(result, approver)``: the kit's approver for a case
  and the result with what it recorded (memory cases).
- ``OPERATION_DOCS: dict[str, dict]``: per operation its ``summary``, ``input``, ``params``
  (name -> ``{"default" or "default_text", "description"}``) and ``result``, for the
  implementer's contract pages (:mod:`dshkit.conformance.contract`).

A module that fails to import or lacks a member is reported as a problem of the registry;
the cases of its suite then error, and the rest of the kit still runs.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import Any, cast

from .interface import JsonObject
from .vectors import Case

__all__ = ["Registry", "Suite", "covers", "discover", "registry"]

_REQUIRED = ("SUITE", "CAPABILITY", "OPERATIONS", "compare")


def covers(declared: Iterable[str], required: str) -> bool:
    """``required`` is declared, or a parent of it is (``memory`` covers ``memory.store``)."""
    return any(required == d or required.startswith(d + ".") for d in declared)


@dataclass(frozen=True, slots=True)
class Suite:
    name: str
    capability: str
    operations: tuple[str, ...]
    module: ModuleType
    capabilities: dict[str, str]

    def compare(self, expect: JsonObject, result: JsonObject,
                capabilities: Sequence[str] = ()) -> str:
        """The suite's verdict; ``capabilities`` (what the implementation declares) reaches
        the module's ``compare`` only when it takes a ``capabilities`` keyword."""
        if capabilities and "capabilities" in inspect.signature(
                self.module.compare).parameters:
            return str(self.module.compare(expect, result, capabilities=tuple(capabilities)))
        return str(self.module.compare(expect, result))

    def requires(self, case: Case) -> tuple[str, ...]:
        if case.capabilities:
            return case.capabilities
        hook: Callable[[JsonObject], Sequence[str]] | None = getattr(
            self.module, "requires", None)
        if hook is None:
            return (self.capability,)
        return tuple(hook(case.to_json())) or (self.capability,)


@dataclass(frozen=True, slots=True)
class Registry:
    suites: dict[str, Suite]
    problems: dict[str, str] = field(default_factory=dict)  # module -> what is wrong

    def by_operation(self, operation: str) -> Suite | None:
        for suite in self.suites.values():
            if operation in suite.operations:
                return suite
        return None

    def declarable(self) -> tuple[str, ...] | None:
        """The capability names an implementation may declare; ``None`` (anything goes) when a
        suite module failed to load, since its names are then unknown."""
        return None if self.problems else tuple(self.capabilities())

    def capabilities(self) -> dict[str, str]:
        """Every capability of every suite with its description, suite order."""
        out: dict[str, str] = {}
        for suite in self.suites.values():
            out.update(suite.capabilities)
        return out


def _load(module: ModuleType) -> Suite:
    missing = [name for name in _REQUIRED if not hasattr(module, name)]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    name, capability = str(module.SUITE), str(module.CAPABILITY)
    finer = {str(k): str(v) for k, v in dict(getattr(module, "CAPABILITIES", {})).items()}
    capabilities = {capability: f"every case of the {name} suite", **finer}
    bad = [c for c in capabilities if not covers([capability], c)]
    if bad:
        raise ValueError(f"capabilities {bad} are not below {capability!r}")
    return Suite(name=name, capability=capability, operations=tuple(module.OPERATIONS),
                 module=module, capabilities=capabilities)


def discover(package: str | None = None) -> Registry:
    """Import every module of the suites package (sorted by module name)."""
    package_name = package or f"{__package__}.suites"
    root = importlib.import_module(package_name)
    suites: dict[str, Suite] = {}
    problems: dict[str, str] = {}
    owners: dict[str, str] = {}
    for info in sorted(pkgutil.iter_modules(root.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        qualified = f"{package_name}.{info.name}"
        try:
            suite = _load(importlib.import_module(qualified))
        except Exception as exc:  # a broken suite module must not stop the kit
            problems[qualified] = f"{type(exc).__name__}: {exc}"
            continue
        if suite.name in suites:
            problems[qualified] = f"suite {suite.name!r} is already defined"
            continue
        clash = sorted(op for op in suite.operations if op in owners)
        if clash:
            problems[qualified] = f"operations {clash} already belong to another suite"
            continue
        for op in suite.operations:
            owners[op] = suite.name
        suites[suite.name] = suite
    return Registry(suites, problems)


@cache
def registry() -> Registry:
    """The registry of the installed kit (discovered once per process)."""
    return discover()


def suite_names() -> list[str]:
    return list(registry().suites)


def result_of(value: Any) -> JsonObject:
    """Coerce an implementation's return value to a JSON object (anything else is wrapped)."""
    return cast(JsonObject, value) if isinstance(value, dict) else {"valid": None, "value": value}
