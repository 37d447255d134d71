"""spec/compatibility.md lists every version number dshkit has; each figure there is the one
the code reads and writes, and the specification version is written only once."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import dshkit
from dshkit.conformance import harness_client, harness_server, report
from dshkit.reference.goal import decode
from dshkit.reference.memory import exchange
from dshkit.reference.memory import store as memory_store
from dshkit.reference.projection import prompt
from dshkit.reference.query import cursor
from dshkit.reference.query import store as query_store
from dshkit.reference.session import vocabulary
from dshkit.spec_index import index_document
from dshkit.spec_version import SPEC_VERSION

REPO = Path(__file__).resolve().parents[1]
PAGE = (REPO / "spec" / "compatibility.md").read_text(encoding="utf-8")
_ROW = re.compile(r"^\| (?P<name>[^|]+?) \| `(?P<value>[^`]+)` \|", re.MULTILINE)


def _table() -> dict[str, str]:
    return {m.group("name"): m.group("value") for m in _ROW.finditer(PAGE)}


def _json(path: str) -> dict[str, object]:
    document: dict[str, object] = json.loads((REPO / path).read_text(encoding="utf-8"))
    return document


def test_every_number_is_the_one_the_code_uses() -> None:
    manifest = _json("conformance/vectors/manifest.json")
    spec_versions = manifest["specVersions"]
    assert isinstance(spec_versions, dict)
    vector_id = _json("schemas/conformance/v1/vector-file.json")["$id"]
    assert isinstance(vector_id, str)
    expected = {
        "Specification": "{{ spec_version }}",
        "dshkit tool": dshkit.__version__,
        "Session log format": str(vocabulary.FORMAT_VERSION),
        "Memory protocol": str(spec_versions["dshkit-memory-protocol"]),
        "Memory store": str(memory_store.SCHEMA_VERSION),
        "Memory export envelope": exchange.SCHEMA,
        "Query index": str(query_store.SCHEMA_VERSION),
        "Query cursor": str(cursor.CURSOR_VERSION),
        "Goal change": str(decode.GOAL_CHANGE_VERSION),
        "Prompt source": str(prompt.SOURCE_VERSION),
        "Harness protocol": str(harness_client.PROTOCOL_VERSION),
        "Vector file format": re.sub(r"^.*/schemas/(conformance/v\d+)/.*$", r"\1", vector_id),
        "Vector manifest": str(manifest["manifestVersion"]),
        "Case digests": str(_json("conformance/vectors/digests.json")["digestVersion"]),
        "Conformance report": str(report.REPORT_VERSION),
        "Schema catalog": str(_json("schemas/catalog.json")["catalogVersion"]),
    }
    assert _table() == expected
    assert harness_server.PROTOCOL_VERSION == harness_client.PROTOCOL_VERSION
    assert spec_versions["session-log-format"] == vocabulary.FORMAT_VERSION
    assert spec_versions["conformance-harness-protocol"] == harness_client.PROTOCOL_VERSION


def test_the_tool_version_is_the_distribution_version() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["version"] == dshkit.__version__


def test_the_spec_version_is_read_from_one_place() -> None:
    assert index_document([])["specVersion"] == SPEC_VERSION
    assert _json("spec/requirements.json")["specVersion"] == SPEC_VERSION
    index = (REPO / "spec" / "index.md").read_text(encoding="utf-8")
    assert "specification version **{{ spec_version }}**" in index
    for page in (REPO / "spec").rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"(?i)spec(?:ification)? version \**`?\d+\.\d+\.\d+", text), page
    mkdocs = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    assert SPEC_VERSION not in mkdocs
