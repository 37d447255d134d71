"""Links into the specification site: a requirement's rendered ``url`` (from requirements.json),
kept absolute, or made relative to a spec site built next to this one (``--spec-site``)."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["SpecLinks"]


def _page_path(spec_file: str) -> str:
    """The directory URL MkDocs gives a chapter: ``memory/index.md`` -> ``memory/``."""
    stem = spec_file[:-3] if spec_file.endswith(".md") else spec_file
    if stem == "index":
        return ""
    if stem.endswith("/index"):
        return stem[: -len("index")]
    return stem + "/"


@dataclass(frozen=True, slots=True)
class SpecLinks:
    requirements: Mapping[str, Mapping[str, Any]]  # id -> requirements.json entry
    base: str  # the spec site's root URL, ending in "/"
    spec_site: str | None  # the spec site relative to this site's root, or None: absolute

    @classmethod
    def of(cls, entries: Iterable[Mapping[str, Any]], spec_site: str | None) -> SpecLinks:
        table = {str(e["id"]): e for e in entries}
        base = "https://dshkit.dev/"
        for entry in table.values():
            url, file = str(entry.get("url", "")), str(entry.get("file", ""))
            suffix = f"{_page_path(file)}#{entry['id']}"
            if file and url.endswith(suffix):
                base = url[: -len(suffix)]
                break
        return cls(table, base, spec_site.rstrip("/") if spec_site is not None else None)

    def _href(self, path: str, depth: int) -> str:
        if self.spec_site is None:
            return self.base + path
        prefix = posixpath.join(*([".."] * depth), self.spec_site) if depth else self.spec_site
        return posixpath.join(prefix, path) if path else prefix + "/"

    def requirement(self, requirement: str, depth: int) -> str | None:
        entry = self.requirements.get(requirement)
        if entry is None or not entry.get("file"):
            return None
        return self._href(f"{_page_path(str(entry['file']))}#{requirement}", depth)

    def chapter(self, spec_file: str, anchor: str, depth: int) -> str:
        return self._href(f"{_page_path(spec_file)}#{anchor}", depth)
