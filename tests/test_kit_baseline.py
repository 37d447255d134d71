"""Expected-failure baselines: expected failures pass the run, stale entries fail it."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from dshkit.conformance.baseline import Baseline, BaselineError, baseline_from, load_baseline
from dshkit.conformance.console import main
from dshkit.conformance.implementations.reference import ReferenceImplementation
from dshkit.conformance.interface import Approver, JsonObject
from dshkit.conformance.runner import run_kit
from dshkit.conformance.vectors import load_cases

CASES = [c for c in load_cases("memory") if c.id.startswith("mem-memento-")]
IDS = {c.id for c in load_cases()}


class WrongOnC1:
    """The reference, except that mem-memento-c1 and -c2 fail."""

    name, version, language = "wrong", "1.0.0", "python"
    capabilities = ("memory.protocol",)

    def __init__(self) -> None:
        self.reference = ReferenceImplementation()

    def run(self, operation: str, input: JsonObject, params: JsonObject,
            approver: Approver | None = None) -> JsonObject:
        result = self.reference.run(operation, input, params, approver)
        text = json.dumps(input)
        if "x" * 150 in text or "y" * 120 in text:
            return {"valid": True, "steps": []}
        return result


def create_wrong() -> WrongOnC1:
    return WrongOnC1()


def baseline(*entries: dict[str, Any]) -> Baseline:
    return Baseline.from_json({"expectedFailures": list(entries)})


def test_listed_failures_are_expected() -> None:
    run = run_kit(WrongOnC1(), CASES, all_ids=IDS,
                  baseline=baseline({"id": "mem-memento-c1", "reason": "no budgets yet"},
                                    {"id": "mem-memento-c2", "reason": "no budgets yet",
                                     "status": "failed"}))
    failing = {o.case.id: o for o in run.outcomes if o.status != "passed"}
    assert set(failing) == {"mem-memento-c1", "mem-memento-c2"}
    assert all(o.expected and not o.unexpected for o in failing.values())
    assert run.stale == [] and run.ok


def test_unlisted_failure_fails_the_run() -> None:
    run = run_kit(WrongOnC1(), CASES, all_ids=IDS,
                  baseline=baseline({"id": "mem-memento-c1", "reason": "no budgets yet"}))
    assert not run.ok
    assert [o.case.id for o in run.outcomes if o.unexpected] == ["mem-memento-c2"]


@pytest.mark.parametrize(("entry", "problem"), [
    ({"id": "mem-memento-a1", "reason": "r"}, "listed as failing, but it passed"),
    ({"id": "mem-sto-settings-v4", "reason": "r"}, "not applicable"),
    ({"id": "mem-does-not-exist", "reason": "r"}, "no case of the kit has this id"),
    ({"id": "mem-retired-one", "reason": "r"}, "retired"),
    ({"id": "mem-memento-c1", "reason": "r", "status": "errored"}, "listed as errored, but it failed"),
    ({"id": "mem-memento-c1", "reason": "r", "expires": "2020-01-01"}, "expired on 2020-01-01"),
])
def test_stale_entries_are_caught(entry: dict[str, Any], problem: str) -> None:
    cases = CASES + [c for c in load_cases("memory") if c.id == "mem-sto-settings-v4"]
    run = run_kit(WrongOnC1(), cases, all_ids=IDS, retired=["mem-retired-one"],
                  baseline=baseline(entry, {"id": "mem-memento-c2", "reason": "known"}))
    assert [s["id"] for s in run.stale] == [entry["id"]]
    assert problem in run.stale[0]["problem"]
    assert not run.ok


def test_entries_outside_the_selection_are_not_stale() -> None:
    run = run_kit(WrongOnC1(), CASES[:3], all_ids=IDS,
                  baseline=baseline({"id": "ses-env-not-object-null", "reason": "other suite"}))
    assert run.stale == [] and run.ok


def test_baseline_files_are_validated(tmp_path: Path) -> None:
    for document, message in (({"expectedFailures": [{"id": "mem-x"}]}, "reason"),
                              ({"expectedFailures": [{"id": "mem-x", "reason": ""}]}, "non-empty"),
                              ({"expected": []}, "expectedFailures"),
                              ({"expectedFailures": [{"id": "m", "reason": "a"},
                                                     {"id": "m", "reason": "b"}]}, "twice")):
        path = tmp_path / "b.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        with pytest.raises(BaselineError) as info:
            load_baseline(path)
        assert message in str(info.value)
    with pytest.raises(BaselineError):
        load_baseline(tmp_path / "missing.json")


def test_cli_with_baseline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = run_kit(WrongOnC1(), CASES, all_ids=IDS)
    document = baseline_from(run.outcomes, "budgets are not implemented yet")
    assert [e["id"] for e in document["expectedFailures"]] == ["mem-memento-c1", "mem-memento-c2"]
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    args = ["--impl", f"py:{__name__}:create_wrong", "--suite", "memory", "--case",
            "mem-memento-*", "--baseline", str(path)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "2 expected failures" in out and out.splitlines()[-1] == (
        "20 passed, 2 failed (2 expected by the baseline, 0 unexpected)")
    document["expectedFailures"].append({"id": "mem-memento-a1", "reason": "stale",
                                         "expires": (dt.date.today() + dt.timedelta(days=9))
                                         .isoformat()})
    path.write_text(json.dumps(document), encoding="utf-8")
    assert main(args) == 1
    assert "STALE mem-memento-a1: listed as failing, but it passed" in capsys.readouterr().out
    path.write_text("{", encoding="utf-8")
    assert main(args) == 2
    assert "BASELINE_INVALID" in capsys.readouterr().err
