"""``dshkit schemas export DIR``: every packaged schema at the path its ``$id`` names, plus
the catalog, so that plain ``jsonschema`` validates offline against the exported files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest
import referencing
import referencing.exceptions
from referencing.jsonschema import DRAFT202012

from dshkit import schemas
from dshkit.cli import exits, main

VECTORS = Path(schemas.__file__).resolve().parents[1] / "conformance" / "vectors"


def _export(target: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, Any]:
    code = main(["schemas", "export", str(target), "--json", *extra])
    out = capsys.readouterr().out
    return code, json.loads(out.splitlines()[-1])


def _offline_registry(root: Path) -> referencing.Registry[Any]:
    """Resolves a URI to the exported file its path names, and fails on anything else."""
    def retrieve(uri: str) -> referencing.Resource[Any]:
        parts = urlsplit(uri)
        path = root / parts.path.lstrip("/")
        if parts.netloc != "dshkit.dev" or not path.is_file():
            raise referencing.exceptions.NoSuchResource(ref=uri)  # type: ignore[call-arg]
        return DRAFT202012.create_resource(json.loads(path.read_text(encoding="utf-8")))
    return referencing.Registry(retrieve=retrieve)  # type: ignore[call-arg]


def test_export_writes_every_schema_at_its_id_path(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out"
    code, answer = _export(target, capsys)
    entries = schemas.catalog()
    assert code == exits.OK
    assert answer == {"ok": True, "written": len(entries) + 1, "dir": str(target)}
    for entry in entries:
        path = target / urlsplit(entry["$id"]).path.lstrip("/")
        assert json.loads(path.read_text(encoding="utf-8")) == schemas.load(entry["$id"])
    catalog = json.loads((target / "schemas" / "catalog.json").read_text(encoding="utf-8"))
    assert [e["$id"] for e in catalog["schemas"]] == [e["$id"] for e in entries]
    assert (target / "schemas" / "session" / "v0" / "envelope.json").is_file()


def test_plain_jsonschema_validates_a_vector_file_offline_against_the_export(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out"
    assert _export(target, capsys)[0] == exits.OK
    registry = _offline_registry(target)
    schema = json.loads((target / "schemas" / "conformance" / "v1" / "vector-file.json")
                        .read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema, registry=registry)
    document = json.loads((VECTORS / "memory" / "memento.json").read_text(encoding="utf-8"))
    assert not list(validator.iter_errors(document))
    # and a $ref into another exported schema resolves from the export alone
    envelope = registry.get_or_retrieve(
        "https://dshkit.dev/schemas/session/v0/envelope.json").value.contents
    assert envelope["$id"].endswith("/session/v0/envelope.json")
    with pytest.raises(referencing.exceptions.NoSuchResource):
        registry.get_or_retrieve("https://dshkit.dev/schemas/nowhere.json")


def test_a_non_empty_dir_is_refused_unless_force(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out"
    target.mkdir()
    (target / "keep.txt").write_text("mine", encoding="utf-8")
    code, answer = _export(target, capsys)
    assert code == exits.USAGE and answer["ok"] is False
    assert answer["command"] == "schemas" and answer["error"]["flag"] == "--force"
    assert "not empty" in answer["error"]["message"]
    assert not (target / "schemas").exists()
    assert not schemas.errors("cli/v1/refusal.json", answer)
    code, answer = _export(target, capsys, "--force")
    assert code == exits.OK and answer["written"] == len(schemas.catalog()) + 1
    assert (target / "keep.txt").read_text(encoding="utf-8") == "mine"


def test_a_file_as_dir_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "file"
    target.write_text("x", encoding="utf-8")
    code, answer = _export(target, capsys, "--force")
    assert code == exits.USAGE and answer["error"]["code"] == "IO_ERROR"
    assert "not a directory" in answer["error"]["message"]
