"""CHANGELOG.md cannot lie: every requirement added, changed in meaning or withdrawn since the
last recorded release is listed, nothing unchanged is listed, and no id is reused or
renumbered."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from dshkit.spec_changes import (
    Snapshot,
    SnapshotError,
    check,
    diff,
    main,
    parse_changelog,
    releases,
    snapshot_from,
)
from dshkit.spec_index import build_index, index_document, text_digest
from dshkit.spec_version import SPEC_VERSION

REPO = Path(__file__).resolve().parents[1]
CHANGELOG = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")


def _current() -> Snapshot:
    return snapshot_from(index_document(build_index(REPO / "spec")), "spec/")


def test_the_changelog_records_every_change_since_the_last_release() -> None:
    history = releases(REPO / "spec" / "releases")
    assert history, "no release snapshot under spec/releases/"
    problems = check(history, _current(), CHANGELOG)
    assert problems == [], "\n".join(map(str, problems)) + (
        "\nrecord the changes: python -m dshkit.spec_index && python -m dshkit.spec_changes --markdown "
        f"spec/releases/{history[-1].version}/requirements.json spec/requirements.json")


def test_every_release_has_a_section_and_the_current_version_is_not_older() -> None:
    sections = parse_changelog(CHANGELOG)
    for snapshot in releases(REPO / "spec" / "releases"):
        assert snapshot.version in sections
    assert "Unreleased" in sections or SPEC_VERSION in sections


def test_the_release_snapshot_is_a_requirement_index() -> None:
    for snapshot in releases(REPO / "spec" / "releases"):
        for req in snapshot.requirements.values():
            assert req["digest"].startswith("sha256:") and len(req["digest"]) == 71
            assert req["url"].endswith("#" + req["id"])


def test_digest_ignores_wrapping_but_not_words() -> None:
    assert text_digest("The `seq` MUST\n  be   a number.") == text_digest("The `seq` MUST be a number.")
    assert text_digest("The `seq` MUST be a number.") != text_digest("The `seq` MAY be a number.")
    assert text_digest("caf\u00e9") == text_digest("cafe\u0301")


# Synthetic histories.

def _req(req_id: str, text: str, title: str = "T") -> dict[str, Any]:
    return {"id": req_id, "title": title, "digest": text_digest(text),
            "url": f"https://dshkit.dev/x/#{req_id}"}


def _snap(version: str, *reqs: Mapping[str, Any]) -> Snapshot:
    return snapshot_from({"specVersion": version, "requirements": list(reqs)}, f"v{version}")


BASE = _snap("1.0.0", _req("SES-ENV-001", "A MUST be b."), _req("SES-ENV-002", "C MUST be d."))
LOG_1_0 = "# Changelog\n\n## [1.0.0] - 2026-01-01\n\n### Specification\n\nFirst.\n"


def _codes(history: list[Snapshot], current: Snapshot, log: str) -> list[str]:
    return [p.code for p in check(history, current, log)]


def test_a_changed_text_needs_a_changelog_entry() -> None:
    current = _snap("1.0.0", _req("SES-ENV-001", "A MUST NOT be b."), _req("SES-ENV-002", "C MUST be d."))
    problems = check([BASE], current, LOG_1_0)
    assert [p.code for p in problems] == ["CHANGELOG_SECTION_MISSING"]
    with_section = "## [Unreleased]\n\n### Specification\n\n" + LOG_1_0
    problems = check([BASE], current, "# Changelog\n\n" + with_section)
    assert [p.code for p in problems] == ["CHANGELOG_CHANGED_MISSING"]
    assert "SES-ENV-001 was changed since 1.0.0" in problems[0].message
    recorded = ("# Changelog\n\n## [Unreleased]\n\n### Specification\n\n#### Changed\n\n"
                "- SES-ENV-001: b is now forbidden.\n\n" + LOG_1_0[len("# Changelog\n\n"):])
    assert check([BASE], current, recorded) == []


def test_the_changelog_may_not_list_what_did_not_change() -> None:
    log = ("# Changelog\n\n## [Unreleased]\n\n### Specification\n\n#### Withdrawn\n\n"
           "- SES-ENV-002\n\n" + LOG_1_0[len("# Changelog\n\n"):])
    assert _codes([BASE], BASE, log) == ["CHANGELOG_WITHDRAWN_FALSE"]


def test_a_new_version_takes_its_own_section() -> None:
    current = _snap("1.1.0", *BASE.requirements.values(), _req("SES-ENV-003", "E MAY be f."))
    assert _codes([BASE], current, LOG_1_0) == ["CHANGELOG_SECTION_MISSING"]
    log = ("# Changelog\n\n## [1.1.0]\n\n### Specification\n\n#### Added\n\n- SES-ENV-003\n\n"
           + LOG_1_0[len("# Changelog\n\n"):])
    assert _codes([BASE], current, log) == []


def test_renumbering_is_refused() -> None:
    current = _snap("2.0.0", _req("SES-ENV-001", "A MUST be b."), _req("SES-ENV-009", "C MUST be d."))
    changes = diff(BASE, current)
    assert changes.renumbered == [("SES-ENV-002", "SES-ENV-009")]
    log = ("# Changelog\n\n## [2.0.0]\n\n### Specification\n\n#### Added\n\n- SES-ENV-009\n\n"
           "#### Withdrawn\n\n- SES-ENV-002\n\n" + LOG_1_0[len("# Changelog\n\n"):])
    assert _codes([BASE], current, log) == ["SPEC_ID_RENUMBERED"]


def test_reusing_a_withdrawn_id_is_refused() -> None:
    later = _snap("2.0.0", _req("SES-ENV-001", "A MUST be b."))
    current = _snap("3.0.0", _req("SES-ENV-001", "A MUST be b."), _req("SES-ENV-002", "G MUST be h."))
    log = ("# Changelog\n\n## [3.0.0]\n\n### Specification\n\n#### Added\n\n- SES-ENV-002\n\n"
           "## [2.0.0]\n\n### Specification\n\n#### Withdrawn\n\n- SES-ENV-002\n\n"
           + LOG_1_0[len("# Changelog\n\n"):])
    assert _codes([BASE, later], current, log) == ["SPEC_ID_REUSED"]


def test_a_snapshot_without_digests_is_refused() -> None:
    with pytest.raises(SnapshotError, match="no digest"):
        snapshot_from({"specVersion": "1.0.0", "requirements": [{"id": "SES-ENV-001"}]}, "x")


def test_the_command_diffs_two_snapshots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps({"specVersion": "1.0.0", "requirements": [
        _req("SES-ENV-001", "A MUST be b."), _req("SES-ENV-002", "C MUST be d.")]}))
    new.write_text(json.dumps({"specVersion": "1.1.0", "requirements": [
        _req("SES-ENV-001", "A MUST be c."), _req("SES-ENV-003", "E MAY be f.")]}))
    assert main([str(old), str(new)]) == 0
    out = capsys.readouterr().out
    assert "added: 1 (SES-ENV-003)" in out and "changed: 1 (SES-ENV-001)" in out
    assert "withdrawn: 1 (SES-ENV-002)" in out
    assert main(["--markdown", str(old), str(new)]) == 0
    stanza = capsys.readouterr().out
    assert stanza.startswith("### Specification") and "#### Withdrawn" in stanza
    assert parse_changelog("## [1.1.0]\n\n" + stanza)["1.1.0"].ids == {
        "added": {"SES-ENV-003": 7}, "changed": {"SES-ENV-001": 11}, "withdrawn": {"SES-ENV-002": 15}}


def test_the_command_reports_unreadable_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "missing.json"), str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert main(["--check", "--root", str(REPO)]) == 0
