"""The migration tables of schemas/migrations/ are true of the reference: every table and
vector file satisfies its schema, every rule and refusal has a vector, the store table's DDL
is the reference's, and every vector gives the expected result when run through the
reference's legacy migration, store migration, export import or schema check."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dshkit import schemas
from dshkit.reference.memory import store as memory_store
from dshkit.reference.memory.errors import MemoryProtocolError
from dshkit.reference.memory.exchange import envelope_entries
from dshkit.reference.problems import ProblemError
from dshkit.reference.session import checks, header, legacy
from dshkit.spec_index import build_index

REPO = Path(__file__).resolve().parents[1]
FOLDER = REPO / "schemas" / "migrations" / "v1"
BASE = "https://dshkit.dev/schemas/migrations/v1/"
TABLE_SCHEMA = BASE + "migration-table.json"
VECTORS_SCHEMA = BASE + "migration-vectors.json"
#: Every versioned format dshkit has a table for (spec/compatibility.md).
FORMATS = ("session-log", "memory-store", "memory-export", "conformance-vector-file",
           "conformance-report")


def _load(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((FOLDER / name).read_text(encoding="utf-8"))
    return document


TABLES = {name: _load(f"{name}.json") for name in FORMATS}
VECTORS = {name: _load(f"{name}.vectors.json") for name in FORMATS}
CASES = [(name, vector) for name in FORMATS for vector in VECTORS[name]["vectors"]]


def test_every_table_and_vector_file_satisfies_its_schema() -> None:
    on_disk = {p.name for p in FOLDER.glob("*.json")}
    assert on_disk == {"migration-table.json", "migration-vectors.json",
                       *(f"{n}.json" for n in FORMATS), *(f"{n}.vectors.json" for n in FORMATS)}
    for name in FORMATS:
        assert schemas.errors(TABLE_SCHEMA, TABLES[name]) == [], name
        assert schemas.errors(VECTORS_SCHEMA, VECTORS[name]) == [], name
        assert TABLES[name]["format"] == name
        assert TABLES[name]["vectors"] == VECTORS[name]["$id"]
        assert VECTORS[name]["table"] == TABLES[name]["$id"]


def test_requirements_named_by_the_tables_exist() -> None:
    known = {r.id for r in build_index(REPO / "spec")}
    for name, table in TABLES.items():
        named = {*table.get("requirements", []), *(r["requirement"] for r in table["rules"]),
                 *(r["requirement"] for r in table["refused"])}
        assert named <= known, (name, named - known)


def test_every_rule_and_refusal_has_a_vector() -> None:
    for name, table in TABLES.items():
        applied = {v["applies"] for v in VECTORS[name]["vectors"]}
        rules = {r["id"] for r in table["rules"]}
        if name == "memory-store":
            # create-1 builds every vector's store (_build_store) and finish is checked by
            # every accepted vector's userVersion.
            rules -= {"create-1", "finish"}
            assert all(v["expect"]["output"]["userVersion"] == table["current"]
                       for v in VECTORS[name]["vectors"] if "output" in v["expect"])
        codes = {r["code"] for r in table["refused"]}
        assert rules - applied == set(), (name, rules - applied)
        assert codes - applied == set(), (name, codes - applied)
        assert applied <= rules | codes | {str(v["version"]) for v in table["versions"]}, name
        assert len({v["id"] for v in VECTORS[name]["vectors"]}) == len(VECTORS[name]["vectors"])


def test_session_log_table_order_is_the_reference_order() -> None:
    ordered = sorted((r for r in TABLES["session-log"]["rules"]), key=lambda r: r["order"])
    assert [r["requirement"] for r in ordered] == ["SES-LEG-002", "SES-LEG-003", "SES-LEG-004",
                                                   "SES-LEG-005"]


def _sql(statement: str) -> str:
    return re.sub(r"\s+", " ", statement).strip()


def test_store_table_ddl_is_the_reference_ddl() -> None:
    rules = {r["id"]: r for r in TABLES["memory-store"]["rules"]}
    create = [s for s in rules["create-1"]["steps"] if not s.startswith("PRAGMA")]
    assert [_sql(s) for s in create] == [_sql(s) for s in memory_store.V1_SCHEMA]
    assert f"PRAGMA application_id = {memory_store.APPLICATION_ID}" in rules["create-1"]["steps"]
    for migration in memory_store.MIGRATIONS:
        step = rules[f"step-{migration.version}-{migration.version + 1}"]
        assert step["from"] == migration.version and step["to"] == migration.version + 1
        assert [_sql(s) for s in step["steps"]] == [_sql(s) for s in migration.statements]
    assert TABLES["memory-store"]["current"] == memory_store.SCHEMA_VERSION
    assert rules["finish"]["steps"] == [f"PRAGMA user_version = {memory_store.SCHEMA_VERSION}"]


# Running the vectors.

def _session(vector: dict[str, Any], _: Path) -> Any:
    event = vector["input"]
    if vector["operation"] == "header":
        problem = header.refuse_foreign_version(event)
        if problem is not None:
            raise problem
        return None
    if vector["operation"] == "refuse":
        for refuse in (legacy.refuse_retired, checks.refuse_header_delta,
                       checks.refuse_header_fallback):
            problem = refuse(event)
            if problem is not None:
                raise problem
        return event
    context = vector["context"]
    ids = {int(seq): mid for seq, mid in context["messageIds"].items()}
    return legacy.normalise(event, context["sessionId"], ids.get)


def _build_store(path: Path, spec: dict[str, Any]) -> None:
    """A store made with the table's own DDL (not the reference's) at ``layoutVersion``,
    stamped ``userVersion``, filled with the vector's rows."""
    rules = {r["id"]: r for r in TABLES["memory-store"]["rules"]}
    layout = spec.get("layoutVersion", spec["userVersion"])
    statements = [s for s in rules["create-1"]["steps"] if not s.startswith("PRAGMA user_version")]
    for version in range(1, max(layout, 1)):
        statements += rules[f"step-{version}-{version + 1}"]["steps"]
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        for statement in [*statements, *spec.get("extraSql", [])]:
            conn.execute(statement)
        for table in ("entries", "audit"):
            for row in spec[table]:
                conn.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES "
                             f"({', '.join('?' * len(row))})", tuple(row.values()))
        conn.execute(f"PRAGMA user_version = {int(spec['userVersion'])}")
    finally:
        conn.close()


def _store(vector: dict[str, Any], tmp: Path) -> Any:
    path = tmp / "memory.db"
    _build_store(path, vector["input"])
    store = memory_store.open_store(path)
    try:
        version = store.conn.execute("PRAGMA user_version").fetchone()[0]
        return {"userVersion": version, "entries": store.entries(),
                "audit": store.audit_rows(order="ORDER BY seq")}
    finally:
        store.close()


def _export(vector: dict[str, Any], _: Path) -> Any:
    return envelope_entries(vector["input"])


class _SchemaInvalid(Exception):
    code = "SCHEMA_INVALID"


def _schema(vector: dict[str, Any], _: Path) -> Any:
    if schemas.errors(vector["context"]["schema"], vector["input"]):
        raise _SchemaInvalid
    return None


RUNNERS: dict[str, Callable[[dict[str, Any], Path], Any]] = {
    "session-log": _session, "memory-store": _store, "memory-export": _export,
    "conformance-vector-file": _schema, "conformance-report": _schema,
}


def _refusal(error: Exception) -> dict[str, str]:
    if isinstance(error, ProblemError):
        return {"code": error.problem.code, "pointer": error.problem.pointer}
    if isinstance(error, MemoryProtocolError):
        found = {"code": error.code}
        if "field" in error.details:
            found["pointer"] = error.details["field"] or "/"
        return found
    if isinstance(error, _SchemaInvalid):
        return {"code": error.code}
    raise error


@pytest.mark.parametrize(("table", "vector"), CASES, ids=[f"{t}:{v['id']}" for t, v in CASES])
def test_the_reference_follows_the_table(table: str, vector: dict[str, Any],
                                         tmp_path: Path) -> None:
    expect = vector["expect"]
    try:
        result = RUNNERS[table](vector, tmp_path)
    except (ProblemError, MemoryProtocolError, _SchemaInvalid) as error:
        found = _refusal(error)
        assert "refused" in expect, f"refused with {found}, expected {expect}"
        wanted = expect["refused"]
        assert found["code"] == wanted["code"]
        if "pointer" in wanted:
            assert found.get("pointer") == wanted["pointer"]
        return
    assert "output" in expect, f"accepted, expected the refusal {expect}"
    assert result == expect["output"]
    if table == "session-log" and isinstance(result, dict):
        assert list(result) == list(expect["output"])  # member order is part of the rule
