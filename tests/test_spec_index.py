"""The Markdown specification parses into a complete, consistent requirement index."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dshkit.spec_index import (
    LEVELS,
    SPEC_VERSION,
    Requirement,
    SpecIndexError,
    build_index,
    index_document,
    main,
    parse_requirements,
    render,
)

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "spec"
INDEX_JSON = SPEC / "requirements.json"
ID_PATTERN = re.compile(r"^[A-Z]{2,4}-[A-Z]{2,5}-\d{3}$")

# The requirement ids of the plan of record (plan/session-requirements.md), ids only.
PLAN_IDS: tuple[str, ...] = (
    "SES-JSON-001", "SES-JSON-002", "SES-JSON-003", "SES-JSON-004", "SES-JSON-005",
    "SES-JSON-006", "SES-JSON-007",
    "SES-ENV-001", "SES-ENV-002", "SES-ENV-003", "SES-ENV-004", "SES-ENV-005", "SES-ENV-006",
    "SES-ENV-007", "SES-ENV-008", "SES-ENV-009", "SES-ENV-010", "SES-ENV-011", "SES-ENV-012",
    "SES-VOC-001", "SES-VOC-002", "SES-VOC-003", "SES-VOC-004",
    "SES-MSG-001", "SES-MSG-002", "SES-MSG-003", "SES-MSG-004", "SES-MSG-005", "SES-MSG-006",
    "SES-MSG-007", "SES-MSG-008", "SES-MSG-009", "SES-MSG-010", "SES-MSG-011",
    "SES-RQH-001", "SES-RQH-002", "SES-RQH-003", "SES-RQH-004", "SES-RQH-005", "SES-RQH-006",
    "SES-RQH-007",
    "SES-SURF-001", "SES-SURF-002", "SES-SURF-003", "SES-SURF-004", "SES-SURF-005",
    "SES-SURF-006", "SES-SURF-007", "SES-SURF-008", "SES-SURF-009", "SES-SURF-010",
    "SES-PROV-001", "SES-PROV-002", "SES-PROV-003", "SES-PROV-004", "SES-PROV-005",
    "SES-PROV-006",
    "SES-TRW-001", "SES-TRW-002", "SES-TRW-003",
    "SES-DER-001", "SES-DER-002", "SES-DER-003", "SES-DER-004", "SES-DER-005",
    "SES-ENC-001", "SES-ENC-002", "SES-ENC-003", "SES-ENC-004", "SES-ENC-005", "SES-ENC-006",
    "SES-ENC-007", "SES-ENC-008", "SES-ENC-009", "SES-ENC-010", "SES-ENC-011", "SES-ENC-012",
    "SES-REP-001", "SES-REP-002", "SES-REP-003", "SES-REP-004", "SES-REP-005", "SES-REP-006",
    "SES-REP-007", "SES-REP-008", "SES-REP-009", "SES-REP-010",
    "SES-UNK-001", "SES-UNK-002", "SES-UNK-003",
    "SES-VER-001", "SES-VER-002", "SES-VER-003", "SES-VER-004",
    "SES-LEG-001", "SES-LEG-002", "SES-LEG-003", "SES-LEG-004", "SES-LEG-005", "SES-LEG-006",
    "SES-FILE-001", "SES-FILE-002", "SES-FILE-003", "SES-FILE-004", "SES-FILE-005",
    "SES-FILE-006", "SES-FILE-007", "SES-FILE-008", "SES-FILE-009", "SES-FILE-010",
    "SES-FILE-011", "SES-FILE-012",
    "SES-LVL-001", "SES-LVL-002", "SES-LVL-003", "SES-LVL-004", "SES-LVL-005",
)


@pytest.fixture(scope="module")
def requirements() -> list[Requirement]:
    return build_index(SPEC)


def test_plan_list_is_complete() -> None:
    assert len(PLAN_IDS) == 117
    assert len(set(PLAN_IDS)) == len(PLAN_IDS)


def test_no_duplicate_ids(requirements: list[Requirement]) -> None:
    ids = [req.id for req in requirements]
    assert len(ids) == len(set(ids))


def test_id_format(requirements: list[Requirement]) -> None:
    for req in requirements:
        assert ID_PATTERN.match(req.id), req.id


def test_every_requirement_has_title_level_and_section(requirements: list[Requirement]) -> None:
    for req in requirements:
        assert req.title, req.id
        assert not req.title.endswith("."), req.id
        assert req.level in LEVELS, req.id
        assert req.section, req.id
        assert req.text, req.id
        assert req.file.endswith(".md"), req.id


def test_every_plan_id_is_defined(requirements: list[Requirement]) -> None:
    defined = {req.id for req in requirements}
    missing = [req_id for req_id in PLAN_IDS if req_id not in defined]
    assert missing == []


def test_requirements_json_is_up_to_date(requirements: list[Requirement]) -> None:
    fresh = index_document(requirements)
    assert INDEX_JSON.is_file(), "run: PYTHONPATH=src python -m dshkit.spec_index"
    text = INDEX_JSON.read_text(encoding="utf-8")
    assert json.loads(text) == fresh
    assert text == render(fresh)
    assert fresh["specVersion"] == SPEC_VERSION


def test_main_check_passes_on_repository() -> None:
    assert main(["--check", str(SPEC), str(INDEX_JSON)]) == 0


def test_main_writes_and_detects_stale(tmp_path: Path) -> None:
    spec = tmp_path / "spec"
    (spec / "session").mkdir(parents=True)
    (spec / "session" / "a.md").write_text(
        "# A\n\n**XY-ABC-001**{#XY-ABC-001} *First.* It MUST work.\n", encoding="utf-8"
    )
    out = spec / "requirements.json"
    assert main(["--check", str(spec), str(out)]) == 1  # missing
    assert main([str(spec), str(out)]) == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["requirements"][0]["anchor"] == "session/a.md#XY-ABC-001"
    assert out.read_text(encoding="utf-8").endswith("}\n")
    assert main(["--check", str(spec), str(out)]) == 0
    (spec / "session" / "a.md").write_text(
        "# A\n\n**XY-ABC-001**{#XY-ABC-001} *First.* It SHOULD work.\n", encoding="utf-8"
    )
    assert main(["--check", str(spec), str(out)]) == 1  # stale


def test_main_reports_duplicates_across_files(tmp_path: Path) -> None:
    for name in ("a.md", "b.md"):
        (tmp_path / name).write_text(
            "**XY-ABC-001**{#XY-ABC-001} *Twice.* It MUST fail.\n", encoding="utf-8"
        )
    with pytest.raises(SpecIndexError, match="duplicate requirement id XY-ABC-001"):
        build_index(tmp_path)
    assert main([str(tmp_path)]) == 2


SAMPLE = """\
# Chapter

Intro prose without keywords.

## Rules {#rules}

**XY-ABC-001**{#XY-ABC-001} *First rule.* A reader MUST NOT do this, and it MUST
do that instead. Reported as `CODE_ONE`.

**XY-ABC-002**{#XY-ABC-002} *Second rule*. The word `MUST` in code does not count;
a writer SHOULD NOT do it, and MAY warn.

```markdown
**XY-ABC-003**{#XY-ABC-003} *Inside a fence.* This MUST be ignored.
# Not a heading
```

> **XY-ABC-004** *Quoted.* A quotation MUST NOT define anything.

### Later section

**XY-ABC-005**{#XY-ABC-005} *Optional thing.* Implementations MAY do it.
"""


def test_parser_on_sample() -> None:
    reqs = parse_requirements(SAMPLE, "session/sample.md")
    assert [req.id for req in reqs] == ["XY-ABC-001", "XY-ABC-002", "XY-ABC-005"]
    first, second, third = reqs
    assert first.title == "First rule"
    assert first.level == "MUST NOT"
    assert first.section == "Rules"
    assert first.file == "session/sample.md"
    assert first.anchor == "session/sample.md#XY-ABC-001"
    assert first.text.startswith("A reader MUST NOT do this, and it MUST do that")
    assert second.title == "Second rule"
    assert second.level == "SHOULD NOT"
    assert third.level == "MAY"
    assert third.section == "Later section"


def test_parser_rejects_duplicate_id() -> None:
    text = SAMPLE + "\n**XY-ABC-001**{#XY-ABC-001} *Again.* This MUST fail.\n"
    with pytest.raises(SpecIndexError, match="duplicate requirement id XY-ABC-001"):
        parse_requirements(text, "dup.md")


def test_parser_rejects_missing_keyword() -> None:
    text = "# T\n\n**XY-ABC-009**{#XY-ABC-009} *No keyword.* This must be lower case.\n"
    with pytest.raises(SpecIndexError, match="XY-ABC-009 has no RFC 2119 keyword"):
        parse_requirements(text, "nokw.md")


def test_parser_rejects_keyword_only_in_code() -> None:
    text = "**XY-ABC-010**{#XY-ABC-010} *Code only.* See `MUST` here.\n"
    with pytest.raises(SpecIndexError, match="no RFC 2119 keyword"):
        parse_requirements(text, "code.md")


def test_parser_rejects_malformed_and_mismatched_anchor() -> None:
    with pytest.raises(SpecIndexError, match="malformed requirement paragraph"):
        parse_requirements("**XY-ABC-011**{#XY-ABC-011} no title. It MUST.\n", "m.md")
    with pytest.raises(SpecIndexError, match="anchor must be #XY-ABC-012"):
        parse_requirements("**XY-ABC-012**{#XY-ABC-013} *T.* It MUST.\n", "m.md")


_KEYWORD = re.compile(r"\b(MUST|SHALL|SHOULD|MAY|REQUIRED|RECOMMENDED|OPTIONAL)\b")
_REQUIREMENT_START = re.compile(r"^\*\*[A-Z]{2,4}-[A-Z]{2,5}-\d{3}\*\*\{#")


def _prose_paragraphs(markdown_text: str) -> list[str]:
    """Paragraphs outside fenced code, with inline code removed."""
    out: list[str] = []
    current: list[str] = []
    fence = False
    for line in markdown_text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            continue
        if fence:
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            if current:
                out.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        out.append("\n".join(current))
    return [re.sub(r"`[^`]*`", "", paragraph) for paragraph in out]


def test_keywords_only_in_requirement_paragraphs() -> None:
    offenders: list[str] = []
    paths = [SPEC / "index.md", *sorted((SPEC / "session").glob("*.md"))]
    for path in paths:
        for paragraph in _prose_paragraphs(path.read_text(encoding="utf-8")):
            if _REQUIREMENT_START.match(paragraph):
                continue
            if _KEYWORD.search(paragraph):
                offenders.append(f"{path.relative_to(SPEC)}: {paragraph[:80]!r}")
    assert offenders == []
