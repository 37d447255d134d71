"""The benchmark's log generator (bench/generate.py) and report (bench/report.py): deterministic,
realistic, valid, and the same log in every form. No timing here: ratios belong to the bench."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).parent.parent / "bench"
sys.path.insert(0, str(BENCH))

from generate import realistic_log, write_logs  # noqa: E402
from report import BEGIN, END, Target, markdown, update_spec  # noqa: E402

from dshkit.reference.session.folding import fold_path  # noqa: E402
from dshkit.reference.session.single_pass import validate_and_fold  # noqa: E402

N = 6_000


def test_generator_is_deterministic_and_exact() -> None:
    first = list(realistic_log(N, seed=3))
    assert first == list(realistic_log(N, seed=3))
    assert first != list(realistic_log(N, seed=4))
    assert [e["seq"] for e in first] == list(range(N))


def test_generated_log_is_realistic() -> None:
    events = list(realistic_log(N, seed=3))
    kinds = Counter(e["type"] for e in events)
    assert kinds["compaction/start"] >= 1 and kinds["tool/result"] > 20
    assert kinds["assistant/chunk"] > N // 2
    for event in events:
        if event["type"] == "assistant/message":
            assert 5 <= len(event["sourceEventSeqs"]) <= 40
        if event["type"] == "tool/result":
            text = event["data"]["message"]["content"][0]["content"][0]["text"]
            assert 100 <= len(text) <= 2000
        if event["type"] == "user/message" and isinstance(event.get("surfaceOp"), dict):
            sources = event["sourceEventSeqs"]
            assert event["surfaceOp"]["start"] in sources and event["surfaceOp"]["end"] in sources


def test_every_form_validates_typed_and_folds_the_same(tmp_path: Path) -> None:
    files = write_logs(tmp_path, N, seed=3)
    folds = []
    for path in (files.jsonl, files.session, files.zstd):
        both = validate_and_fold(path, typed=True)
        assert both.valid, both.validation.errors[:1]
        assert both.validation.typed == ()
        assert both.validation.events == N
        folds.append(both.fold)
    assert folds[0].nodes == folds[1].nodes == folds[2].nodes
    assert folds[0].messages == folds[1].messages == folds[2].messages
    assert folds[0].shadowed and folds[0].replacements
    assert files.session.stat().st_size < files.jsonl.stat().st_size
    assert fold_path(files.jsonl) == folds[0]


def test_report_markdown_and_spec_section(tmp_path: Path) -> None:
    goals = [Target("ratio", "≤ 2.5", {"median": 2.0, "min": 1.9, "max": 2.2}, lambda v: v <= 2.5),
             Target("dsh", "< 1.0", None, None, missing="npm ci failed")]
    report = {"rounds": 3, "seconds": 12.0, "machine": {
        "cpu": "cpu", "cores": 2, "memory": "1 GiB", "platform": "linux", "python": "3.11",
        "implementation": "CPython", "dshkit": "0.1.0", "orjson": "3", "jsonschema": "4",
        "zstandard": "0.2", "node": "v20", "dshSession": "0.1.0-rc.8"},
        "sizes": {"100": {"bytes": {"jsonl": 10, "session": 5, "zstd": 2}, "rows": [
            {"name": "dshkit", "note": "", "seconds": {"median": 1.0, "min": 0.9, "max": 1.1},
             "toFloor": {"median": 2.0, "min": 1.9, "max": 2.2}, "maxRssBytes": 2**20,
             "cpuSeconds": {"median": 0.9, "min": 0.8, "max": 1.0},
             "cpuToFloor": {"median": 1.9, "min": 1.8, "max": 2.0}},
            {"name": "dsh", "note": "", "missing": "npm ci failed"}]}},
        "components": [{"title": "Memory", "rows": [
            {"name": "query", "median": 1.5, "min": 1.0, "max": 2.0, "goal": "< 5 ms",
             "ok": True, "unit": "ms"}]}, {"title": "Index", "rows": [], "missing": "boom"}]}
    text = markdown(report, goals)
    assert "| ratio | ≤ 2.5 | 2.00 (1.90-2.20) | yes |" in text
    assert "| query | 1.5 ms | 1 | 2 | < 5 ms | yes |" in text and "Not measured: boom" in text
    assert "not measured: npm ci failed" in text
    page = tmp_path / "performance.md"
    page.write_text(f"# P\n\n{BEGIN}\nOLD-RESULTS\n{END}\n")
    update_spec(page, text)
    updated = page.read_text()
    assert "OLD-RESULTS" not in updated and text in updated and updated.endswith(f"{END}\n")
