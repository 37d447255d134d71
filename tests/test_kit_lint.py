"""Self-lint of the vectors: schema, ids, requirement ids, digests, tombstones, manifest."""

from __future__ import annotations

import copy
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from dshkit import __version__
from dshkit.conformance import lint
from dshkit.conformance.coverage import coverage
from dshkit.conformance.kitdata import case_digest, digests, manifest
from dshkit.conformance.vectors import load_cases, load_files
from dshkit.spec_index import build_index

REPO = Path(__file__).resolve().parents[1]
VECTORS = REPO / "conformance" / "vectors"
FILES = load_files()
CASES = load_cases()
SPEC = build_index(REPO / "spec")
KNOWN = {r.id for r in SPEC}
SUITES = sorted({f.suite for f in FILES})


def test_vector_files_follow_the_schema() -> None:
    assert lint.lint_schema(FILES) == []


def test_ids_are_unique_well_formed_and_name_known_requirements() -> None:
    assert lint.lint_ids(CASES, KNOWN) == []


@pytest.mark.parametrize("suite", SUITES)
def test_digests_are_recorded_and_unchanged(suite: str) -> None:
    cases = [c for c in CASES if c.suite == suite]
    recorded = digests()
    problems = [p for p in lint.lint_digests(cases, recorded)
                if not p.endswith("retire it with `python -m dshkit.conformance.lint "
                                  "--retire ID --reason ...`")]
    assert problems == [], problems[:5]


def test_no_recorded_id_is_orphaned() -> None:
    orphans = [p for p in lint.lint_digests(CASES, digests()) if "recorded, but no case" in p]
    assert orphans == []


def test_manifest_matches_the_vectors() -> None:
    current = manifest()
    assert lint.lint_manifest(FILES, current, KNOWN) == []
    assert current["kit"] == {"name": "dshkit-conformance", "version": __version__}
    counts = Counter(f["suite"] for f in current["files"])
    assert counts["session-log"] >= 10 and counts["memory"] >= 10


def test_every_must_is_covered_or_verified_by_the_kit() -> None:
    index = [{"id": r.id, "level": r.level, "scope": r.scope} for r in SPEC
             if r.id.startswith(("MEM-", "CNF-"))]
    traced = coverage(CASES, index, manifest()["kitVerified"])
    assert traced.uncovered_must == ()
    assert set(traced.kit_verified) <= {r["id"] for r in index if r["id"].startswith("CNF-")}


# -- the lint catches changes of meaning --------------------------------------------------------

@pytest.fixture
def vectors(tmp_path: Path) -> Path:
    target = tmp_path / "vectors"
    target.mkdir()
    shutil.copytree(VECTORS / "memory", target / "memory")
    shutil.copy(VECTORS / "digests.json", target / "digests.json")
    shutil.copy(VECTORS / "manifest.json", target / "manifest.json")
    return target


def _edit(path: Path, change: Any) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)
    path.write_text(json.dumps(document, ensure_ascii=False, indent=2), encoding="utf-8")


def _problems(root: Path) -> list[str]:
    files = load_files(root)
    cases = lint._cases(files)
    return lint.lint_digests(cases, digests(root))


def test_editing_a_case_fails_until_its_id_changes(vectors: Path) -> None:
    target = vectors / "memory" / "memento.json"
    assert not [p for p in _problems(vectors) if "mem-memento" in p]

    def tamper(document: dict[str, Any]) -> None:
        document["cases"][0]["expect"]["steps"][1]["result"]["entry"]["version"] = 2

    _edit(target, tamper)
    problems = [p for p in _problems(vectors) if "mem-memento-a1" in p]
    assert len(problems) == 1 and "changed meaning" in problems[0]

    def rename(document: dict[str, Any]) -> None:
        document["cases"][0]["id"] = "mem-memento-a1-v2"

    _edit(target, rename)
    problems = _problems(vectors)
    assert any("mem-memento-a1-v2 has no recorded digest" in p for p in problems)
    assert any(p.startswith("mem-memento-a1: recorded, but no case") for p in problems)
    assert lint.main(["--vectors", str(vectors), "--retire", "mem-memento-a1", "--reason",
                      "expectation corrected", "--replaced-by", "mem-memento-a1-v2",
                      "--record"]) == 1  # the manifest of the copy is partial; digests are fine
    assert [p for p in _problems(vectors) if "memento-a1" in p] == []
    recorded = digests(vectors)
    tombstone = recorded["tombstones"]["mem-memento-a1"]
    assert tombstone["replacedBy"] == ["mem-memento-a1-v2"] and tombstone["retired"] == __version__

    def reuse(document: dict[str, Any]) -> None:
        document["cases"].append(copy.deepcopy(document["cases"][1]))
        document["cases"][-1]["id"] = "mem-memento-a1"

    _edit(target, reuse)
    assert any("is a retired id" in p for p in _problems(vectors))


def test_description_edits_keep_the_digest() -> None:
    case = CASES[0]
    changed = type(case)(**{**{f: getattr(case, f) for f in case.__dataclass_fields__},
                            "description": "better words", "tags": ("x",)})
    assert case_digest(changed) == case_digest(case)


def test_record_never_overwrites(vectors: Path) -> None:
    recorded = digests(vectors)
    recorded["cases"]["mem-memento-a1"] = "0" * 64
    cases = lint._cases(load_files(vectors))
    assert lint.record(cases, recorded) == []
    assert recorded["cases"]["mem-memento-a1"] == "0" * 64


def test_stale_manifest_is_reported() -> None:
    current = copy.deepcopy(manifest())
    current["files"] = current["files"][1:]
    assert any("stale" in p for p in lint.lint_manifest(FILES, current))
    current = copy.deepcopy(manifest())
    current["kitVerified"]["CNF-XYZ-999"] = "nothing"
    assert any("CNF-XYZ-999" in p for p in lint.lint_manifest(FILES, current, KNOWN))
