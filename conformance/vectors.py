"""Loading the kit's language-neutral test vectors (``conformance/vectors/**/*.json``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any


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


def _files(root: Traversable, prefix: str = "") -> list[tuple[str, Traversable]]:
    out: list[tuple[str, Traversable]] = []
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        name = f"{prefix}{entry.name}"
        if entry.is_dir():
            out.extend(_files(entry, name + "/"))
        elif entry.name.endswith(".json") and entry.name != "manifest.json":
            out.append((name, entry))
    return out


def vector_root() -> Traversable:
    return resources.files("dshkit.conformance") / "vectors"


def load_cases(suite: str | None = None) -> list[Case]:
    """Every case of every vector file (optionally of one suite), in file order."""
    cases: list[Case] = []
    for name, entry in _files(vector_root()):
        document = json.loads(entry.read_text(encoding="utf-8"))
        if suite is not None and document.get("suite") != suite:
            continue
        for raw in document["cases"]:
            cases.append(Case(
                id=raw["id"],
                description=raw["description"],
                requirements=tuple(raw["requirements"]),
                operation=raw["operation"],
                input=raw["input"],
                params=raw.get("params", {}),
                expect=raw["expect"],
                file=name,
                tags=tuple(raw.get("tags", ())),
            ))
    return cases
