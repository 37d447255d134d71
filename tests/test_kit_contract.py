"""The implementer's contract pages (spec/conformance/suites/) are generated from the suite
modules and the vectors, committed up to date, and in the site's navigation."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT

from dshkit.conformance import contract
from dshkit.conformance.registry import registry

PAGES = ROOT / "spec" / "conformance" / "suites"


def test_committed_pages_are_up_to_date() -> None:
    generated = contract.pages()
    assert sorted(generated) == sorted(p.name for p in PAGES.glob("*.md"))
    for name, text in generated.items():
        assert (PAGES / name).read_text(encoding="utf-8") == text, (
            f"{name} is stale: run python -m dshkit.conformance.contract --write")
    assert contract.main(["--check", "--dir", str(PAGES)]) == 0


def test_check_finds_a_stale_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert contract.main(["--write", "--dir", str(tmp_path)]) == 0
    assert contract.main(["--check", "--dir", str(tmp_path)]) == 0
    (tmp_path / "goal.md").write_text("edited\n", encoding="utf-8")
    assert contract.main(["--check", "--dir", str(tmp_path)]) == 1
    assert "goal.md is out of date" in capsys.readouterr().err


def test_a_page_per_suite_in_the_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "conformance/suites/index.md" in nav
    for name in registry().suites:
        assert f"conformance/suites/{name}.md" in nav


def test_pages_state_the_contract() -> None:
    session = (PAGES / "session-log.md").read_text(encoding="utf-8")
    for operation in ("validate", "fold", "repair", "load"):
        assert f"### `{operation}`" in session
    assert "`session-log.invariants`" in session and "`base64`" in session
    assert "](../../session/" in session  # requirement links into the spec
    goal = (PAGES / "goal.md").read_text(encoding="utf-8")
    assert "| `defaultMaxGoalRounds` | `256` |" in goal  # a default from OPERATION_DOCS
