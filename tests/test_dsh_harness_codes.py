"""The DSH harness derives a problem's requirement and level from its code with a copy of the
specification's error table (harnesses/dsh/lib/codes.mjs); the copy must stay equal to it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC_ROW = re.compile(r"\| `([A-Z0-9_]+)` \| (?:\[([A-Z]+-[A-Z]+-\d+)\]\([^)]*\)|none) \| (\w+) \|")
HARNESS_ROW = re.compile(r"^  ([A-Z0-9_]+): \[(?:'([A-Z]+-[A-Z]+-\d+)'|null), '(\w+)'\],$", re.M)


def test_the_harness_code_table_is_the_specification_s() -> None:
    spec = {m.group(1): (m.group(2), m.group(3)) for line in
            (ROOT / "spec/session/errors.md").read_text(encoding="utf-8").splitlines()
            if (m := SPEC_ROW.match(line))}
    harness = {m.group(1): (m.group(2), m.group(3)) for m in HARNESS_ROW.finditer(
        (ROOT / "harnesses/dsh/lib/codes.mjs").read_text(encoding="utf-8"))}
    assert len(spec) > 70
    assert harness == spec
