"""Loading the kit's language-neutral test vectors (``conformance/vectors/<dir>/*.json``).

Every file is ``{"suite", "specVersion", "description", "cases": [...]}`` (schema
``conformance/v1/vector-file.json``). The root of ``vectors/`` also holds the kit's
bookkeeping (``manifest.json``, ``digests.json``, ``tombstones.json``), which is not a vector
file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

__all__ = ["Case", "VectorFile", "case_from_json", "format_json", "load_cases", "load_files",
           "vector_root"]


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    description: str
    requirements: tuple[str, ...]
    operation: str
    input: dict[str, Any]
    params: dict[str, Any]
    expect: dict[str, Any]
    file: str
    tags: tuple[str, ...] = ()
    suite: str = ""
    approver: dict[str, Any] | None = None
    capabilities: tuple[str, ...] = ()

    def request(self) -> dict[str, Any]:
        """What an implementation is sent: never ``expect``, never the approver's script."""
        return {"id": self.id, "suite": self.suite, "operation": self.operation,
                "input": self.input, "params": self.params}

    def to_json(self) -> dict[str, Any]:
        """The case as it appears in a vector file."""
        out: dict[str, Any] = {"id": self.id, "description": self.description,
                               "requirements": list(self.requirements),
                               "operation": self.operation, "input": self.input,
                               "params": self.params, "expect": self.expect}
        if self.approver is not None:
            out["approver"] = self.approver
        if self.capabilities:
            out["capabilities"] = list(self.capabilities)
        if self.tags:
            out["tags"] = list(self.tags)
        return out


@dataclass(frozen=True, slots=True)
class VectorFile:
    path: str  # relative to vectors/, e.g. "memory/writes.json"
    document: dict[str, Any]

    @property
    def suite(self) -> str:
        return str(self.document.get("suite", ""))


def case_from_json(raw: dict[str, Any], *, suite: str, file: str) -> Case:
    return Case(
        id=raw["id"],
        description=raw.get("description", ""),
        requirements=tuple(raw.get("requirements", ())),
        operation=raw["operation"],
        input=raw.get("input", {}),
        params=raw.get("params", {}),
        expect=raw.get("expect", {}),
        file=file,
        tags=tuple(raw.get("tags", ())),
        suite=suite,
        approver=raw.get("approver"),
        capabilities=tuple(raw.get("capabilities", ())),
    )


def vector_root() -> Traversable:
    return resources.files("dshkit.conformance") / "vectors"


def load_files(root: Traversable | None = None) -> list[VectorFile]:
    """Every vector file, sorted by path (one directory level below the root)."""
    base = root if root is not None else vector_root()
    out: list[VectorFile] = []
    for folder in sorted(base.iterdir(), key=lambda e: e.name):
        if not folder.is_dir() or folder.name.startswith((".", "_")):
            continue
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            if entry.is_file() and entry.name.endswith(".json"):
                document = json.loads(entry.read_text(encoding="utf-8"))
                out.append(VectorFile(f"{folder.name}/{entry.name}", document))
    return out


def load_cases(suite: str | None = None, root: Traversable | None = None) -> list[Case]:
    """Every case of every vector file (optionally of one suite), in file order."""
    cases: list[Case] = []
    for vector_file in load_files(root):
        if suite is not None and vector_file.suite != suite:
            continue
        for raw in vector_file.document.get("cases", []):
            cases.append(case_from_json(raw, suite=vector_file.suite, file=vector_file.path))
    return cases


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def format_json(value: Any, width: int = 100) -> str:
    """The house style of vector files: two-space indentation, containers that fit in
    ``width`` columns on one line, UTF-8 text with lone surrogates escaped (``\\udXXX``), and a
    final newline. ``json.loads(format_json(v)) == v`` for every JSON value ``v``."""
    text = _format(value, 0, width)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"


def _format(value: Any, indent: int, width: int) -> str:
    compact = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    if not isinstance(value, dict | list) or not value or indent + len(compact) <= width:
        return compact
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        members = [f"{pad}{json.dumps(k, ensure_ascii=False)}: {_format(v, indent + 2, width)}"
                   for k, v in value.items()]
        return "{\n" + ",\n".join(members) + "\n" + " " * indent + "}"
    items = [pad + _format(v, indent + 2, width) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"
