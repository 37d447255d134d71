"""Every row of the bad-input table (``tests/hardening/bad_inputs.py``) is a test: the input
gets exactly the outcome the table states. Rows that document a known defect are strict
xfails with the defect as the reason, so fixing the defect makes them fail until the row's
``bug`` is cleared."""

from __future__ import annotations

from pathlib import Path

import pytest
from hardening.bad_inputs import ROWS, BadInput, markdown_table


def _param(row: BadInput) -> object:
    marks = [pytest.mark.xfail(strict=True, reason=row.bug)] if row.bug else []
    return pytest.param(row, id=row.id, marks=marks)


@pytest.mark.parametrize("row", [_param(row) for row in ROWS])
def test_bad_input(row: BadInput, tmp_path: Path) -> None:
    assert row.run(tmp_path) == row.expect


def test_table_is_well_formed() -> None:
    ids = [row.id for row in ROWS]
    assert len(ids) == len(set(ids))
    classes = {row.klass for row in ROWS}
    # every class of bad input issue 9 names has at least one row
    assert classes >= {
        "malformed JSON line", "wrong types", "oversize values", "deep nesting", "-0", "1e400",
        "lone surrogates", "NUL", "BOM", "CRLF", "invalid UTF-8", "a 1 GiB line",
        "a zstd bomb", "a seq gap", "a forged surface replace", "an unknown required event",
        "a newer format version", "a foreign SQLite file", "a symlinked store path",
        "path traversal in an import", "invisible and bidi Unicode",
        # issue 15, class 4
        "not a regular file", "an input too large", "a link out of a directory import",
        "a quadratic pattern"}
    assert markdown_table().count("\n") == len(ROWS) + 1


def test_docs_table_is_current() -> None:
    """spec/hardening.md holds the table as generated from the rows (regenerate with
    ``python -m tests.hardening.run --only table``)."""
    from hardening.report import BAD_INPUTS, read_block

    text = (Path(__file__).resolve().parents[1] / "spec" / "hardening.md").read_text(
        encoding="utf-8")
    assert read_block(text, BAD_INPUTS) == markdown_table()
