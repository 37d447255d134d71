"""The kit's bookkeeping files: manifest, digests and tombstones, the requirement index.

- ``vectors/manifest.json``: kit version, spec versions, every vector file with its suite and
  case count, the requirements verified by the kit's own machinery (schema
  ``conformance/v1/manifest.json``);
- ``vectors/digests.json``: the digest of the meaning of every case, and the tombstones of
  retired ids (schema ``conformance/v1/digests.json``);
- ``requirements.json``: the requirement index of the specification (a copy shipped with the
  kit; in a source checkout, a link to ``spec/requirements.json``).
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from dshkit import __version__

from .vectors import Case, vector_root

__all__ = ["DIGEST_ALGORITHM", "KIT_NAME", "case_digest", "digests", "kit_root", "manifest",
           "meaning", "requirements", "spec_versions"]

KIT_NAME = "dshkit-conformance"
DIGEST_ALGORITHM = "sha256-canonical-json-v1"
MEANING_KEYS = ("suite", "operation", "input", "params", "expect", "approver")


def kit_root() -> Traversable:
    return resources.files("dshkit.conformance")


def _read(entry: Traversable, default: Any) -> Any:
    if not entry.is_file():
        return default
    return json.loads(entry.read_text(encoding="utf-8"))


def manifest(root: Traversable | None = None) -> dict[str, Any]:
    base = root if root is not None else vector_root()
    found: dict[str, Any] = _read(base / "manifest.json", {})
    return found


def digests(root: Traversable | None = None) -> dict[str, Any]:
    base = root if root is not None else vector_root()
    found: dict[str, Any] = _read(base / "digests.json", {
        "digestVersion": 1, "algorithm": DIGEST_ALGORITHM, "cases": {}, "tombstones": {}})
    return found


def requirements() -> dict[str, Any]:
    """``{"specVersion", "requirements": [{id, title, level, section, file, anchor}]}``."""
    found: dict[str, Any] = _read(kit_root() / "requirements.json",
                                  {"specVersion": None, "requirements": []})
    return found


def spec_versions(root: Traversable | None = None) -> dict[str, Any]:
    versions = dict(manifest(root).get("specVersions", {}))
    return versions or {"dshkit-spec": requirements().get("specVersion") or __version__}


def meaning(case: Case) -> dict[str, Any]:
    """What a case means to an implementation: everything but id, description, requirements,
    tags and capabilities."""
    return {"suite": case.suite, "operation": case.operation, "input": case.input,
            "params": case.params, "expect": case.expect, "approver": case.approver}


def case_digest(case: Case) -> str:
    """sha256 of the canonical JSON (sorted keys, no spaces, ASCII escapes) of the meaning."""
    text = json.dumps(meaning(case), sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)
    return hashlib.sha256(text.encode("ascii")).hexdigest()
