"""Differential property test: the dshkit reference and DSH (through harnesses/dsh, one
long-lived harness process) agree on acceptance and on the surface of generated logs, valid
and near-valid, except where a documented divergence class of the DSH baseline explains the
difference (``dshkit.conformance.differential``).

Needs ``node`` and the pinned npm packages (``npm ci`` in harnesses/dsh); skipped otherwise.
``DSHKIT_DIFFERENTIAL_EXAMPLES`` sets the number of examples (default 25, derandomized so that
a test run is repeatable; ``nox -s differential-dsh`` draws thousands with a random seed),
``DSHKIT_DSH_HARNESS`` the harness directory (default harnesses/dsh),
``DSHKIT_DIFFERENTIAL_REPORT`` a JSON file for the counts of the run.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from kit_support.reference_suites import session_log

from dshkit.conformance.differential import (
    DSH_READINGS,
    Disagreement,
    Runner,
    Sample,
    compare,
    explain,
    samples,
)
from dshkit.conformance.divergences import parse_reason
from dshkit.conformance.harness_client import SubprocessImplementation

ROOT = Path(__file__).resolve().parents[1]
HARNESS = Path(os.environ.get("DSHKIT_DSH_HARNESS", ROOT / "harnesses" / "dsh"))
BASELINE = ROOT / "harnesses" / "dsh" / "baseline.json"
EXAMPLES = int(os.environ.get("DSHKIT_DIFFERENTIAL_EXAMPLES", "25"))
REPORT = os.environ.get("DSHKIT_DIFFERENTIAL_REPORT")


def _baseline_classes() -> set[str]:
    document: dict[str, Any] = json.loads(BASELINE.read_text(encoding="utf-8"))
    reasons = (parse_reason(str(e.get("reason", ""))) for e in document["expectedFailures"]
               if e.get("status") == "failed")
    return {r.cls for r in reasons if r is not None}


def test_every_reading_is_a_documented_class() -> None:
    """A disagreement is excused only by a class that the DSH baseline documents."""
    assert set(DSH_READINGS) <= _baseline_classes()


def test_reference_refuses_negative_zero_in_memory() -> None:
    events = [{"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1, "z": -0.0}}]
    result = session_log.reference("validate", {"events": events}, {"level": "append"})
    assert result["valid"] is False
    assert result["error"]["code"] == "JSON_NEGATIVE_ZERO"


def _skip_reason() -> str:
    if shutil.which("node") is None:
        return "node is not installed"
    if not (HARNESS / "node_modules").is_dir():
        return f"the DSH packages are not installed (run `npm ci` in {HARNESS})"
    return ""


needs_node = pytest.mark.skipif(bool(_skip_reason()), reason=_skip_reason() or "ready")


@dataclass
class Tally:
    examples: int = 0
    labels: Counter[str] = field(default_factory=Counter)
    explained: Counter[str] = field(default_factory=Counter)

    def write(self, path: str) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps({
            "examples": self.examples, "samples": dict(sorted(self.labels.items())),
            "documentedDisagreements": dict(sorted(self.explained.items()))}, indent=1) + "\n",
            encoding="utf-8")


@dataclass
class Pair:
    reference: Runner
    dsh: Runner
    tally: Tally


def _reference(operation: str, log: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    return session_log.reference(operation, log, params)


@pytest.fixture(scope="module")
def pair() -> Iterator[Pair]:
    node = shutil.which("node")
    assert node is not None
    impl = SubprocessImplementation([node, str(HARNESS / "harness.mjs")], timeout=60.0,
                                    cwd=str(ROOT), env=dict(os.environ))

    def dsh(operation: str, log: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
        return impl.run_request({"id": "differential", "suite": "session-log",
                                 "operation": operation, "input": log, "params": params})

    tally = Tally()
    try:
        yield Pair(_reference, dsh, tally)
    finally:
        impl.close()
        if REPORT:
            tally.write(REPORT)
    assert impl.restarts <= 1, "the harness process was restarted during the run"


def _unexplained(found: list[Disagreement], pair: Pair) -> list[str]:
    problems = []
    for disagreement in found:
        cls = explain(disagreement, pair.reference, DSH_READINGS)
        if cls is None:
            problems.append(disagreement.describe())
        else:
            pair.tally.explained[cls] += 1
    return problems


@needs_node
@settings(max_examples=EXAMPLES, deadline=None, derandomize="DSHKIT_DIFFERENTIAL_EXAMPLES"
          not in os.environ, suppress_health_check=[HealthCheck.too_slow,
                                                     HealthCheck.data_too_large,
                                                     HealthCheck.function_scoped_fixture])
@given(sample=samples())
def test_reference_and_dsh_agree(pair: Pair, sample: Sample) -> None:
    pair.tally.examples += 1
    pair.tally.labels[sample.label] += 1
    problems = _unexplained(compare(pair.reference, pair.dsh, sample), pair)
    assert not problems, "undocumented disagreement:\n" + "\n".join(problems)
