"""The issue-level spellings of the adapter commands: ``dshkit convert`` and
``dshkit memory import|export --adapter``, which run the same code as ``dshkit adapt``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dshkit.cli import main

MEM0 = [{"memory": "prefers tea", "metadata": {"category": "pref"}}]


def test_convert_between_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "mem0.json"
    source.write_text(json.dumps(MEM0), encoding="utf-8")
    assert main(["convert", "--from", "mem0", "--to", "hermes-bullets", str(source)]) == 0
    out = capsys.readouterr().out
    assert "- prefers tea" in out


def test_memory_import_and_export_through_an_adapter(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "mem0.json"
    source.write_text(json.dumps(MEM0), encoding="utf-8")
    db = tmp_path / "memory.db"
    assert main(["memory", "--db", str(db), "import", "--adapter", "mem0", str(source),
                 "--yes", "--json"]) == 0
    imported = json.loads(capsys.readouterr().out)
    assert imported["added"] == 1
    assert main(["memory", "--db", str(db), "audit", "--json"]) == 0
    actions = [row["action"] for row in json.loads(capsys.readouterr().out)]
    assert actions == ["add", "seed"]  # one approved seed, audited (newest first)
    assert main(["memory", "--db", str(db), "export", "--adapter", "mem0", "--json"]) == 0
    assert "prefers tea" in capsys.readouterr().out


def test_memory_import_through_an_adapter_is_gated(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "mem0.json"
    source.write_text(json.dumps(MEM0), encoding="utf-8")
    db = tmp_path / "memory.db"
    code = main(["memory", "--db", str(db), "import", "--adapter", "mem0", str(source), "--json"])
    assert code == 1  # no terminal, no --yes: the approval fails closed
    assert "WRITE_DENIED" in capsys.readouterr().out
