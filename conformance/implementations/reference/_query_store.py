"""The ``session-query`` operations on files: reading a log, the engine's settings and opening,
the index schema, and programs that index, change and search log files (used by
:mod:`dshkit.conformance.suites.session_query`; not a suite itself).

Paths in inputs are relative to a fresh directory of the case.

- ``query.source``: input ``{"path", "text" | "base64"?}`` (no content: the file does not
  exist); result ``{"valid": true, "sessionId", "createdAt", "events": [...]}``.
- ``query.config``: input ``{"config": {path, openAt, journalMode, defaultLimit, maxLimit,
  snippetChars, readWindowMax}}``; result ``{"valid": true}`` or ``INVALID_CONFIG``.
- ``query.engine``: input ``{"config", "file"?: {"text" | "base64"}, "dirs"?: [path...],
  "links"?: {path: target}}`` (the content of the file at ``config.path``, directories and
  symbolic links made before the engine is; a link's target is taken as written); the engine
  is created, then a sessions search for ``"x"`` runs. Result ``{"valid": true, "create":
  null | {code, message}, "search": null | {code, message}, "fileSha256": hex | null}`` (a
  step that did not run is absent) and, when links were made, ``"tree"``: every path under
  the case directory, sorted, with ``"dir"``, ``"file"`` or ``"link -> target"``.
- ``query.schema``: a new index is created at ``input.path``; result ``{"valid": true,
  "tables", "strict", "indexState", "sessions", "docs"}`` read back from the SQLite file.
- ``query.files``: input ``{"index": path, "steps": [...]}``; each step is ``{"write": {path:
  text | {"base64"}}}``, ``{"delete": path}``, ``{"chmod": {path: "0644"}}``, ``{"index":
  [path...]}`` (result ``{"failed": [{"path", "code"}...]}``, or ``{"error": code}`` when the
  run is refused as a whole), ``{"search": request,
  "scope": "sessions" | "events", "next"?: true}`` (``next``: continue with the cursor of the
  previous search; result ``{"ids" | "seqs", "more"}`` or ``{"error": code}``), ``{"modes":
  [path...]}`` (result ``{path: "0700"...}``) or ``{"sql": statement}``: one SQL statement run
  on the index file by another connection of the host (in autocommit mode) while the
  implementation may hold the index open, as another process would; result the rows, each a
  list of values. Result ``{"valid": true, "steps": [...]}``.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import sqlite3
import stat
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dshkit.conformance.suites.session_query import STORE_OPERATIONS
from dshkit.reference.query import (
    SearchConfig,
    SessionQueryError,
    SessionSearchEngine,
    load_session,
)

__all__ = ["OPERATIONS", "run"]

OPERATIONS = STORE_OPERATIONS

JsonObject = dict[str, Any]
_CONFIG_KEYS = {"path": "path", "openAt": "open_at", "journalMode": "journal_mode",
                "defaultLimit": "default_limit", "maxLimit": "max_limit",
                "snippetChars": "snippet_chars", "readWindowMax": "read_window_max"}


@contextmanager
def _directory() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="dshkit-case-") as name:
        yield Path(name)


def _content(value: Any) -> bytes:
    if isinstance(value, dict) and "base64" in value:
        return base64.b64decode(str(value["base64"]))
    if isinstance(value, dict) and "text" in value:
        return str(value["text"]).encode("utf-8")
    return str(value).encode("utf-8")


def _put(root: Path, relative: str, data: bytes) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _config(raw: JsonObject, root: Path | None) -> SearchConfig:
    options = {_CONFIG_KEYS[k]: v for k, v in raw.items() if k in _CONFIG_KEYS}
    path = options.get("path", ":memory:")
    if root is not None and isinstance(path, str) and path.strip() and path != ":memory:":
        options["path"] = str(root / path)
    return SearchConfig(**options)


def _refusal(exc: SessionQueryError) -> JsonObject:
    return {"code": exc.code, "message": exc.message}


def _source(data: JsonObject) -> JsonObject:
    with _directory() as root:
        path = root / data["path"]
        if "text" in data or "base64" in data:
            _put(root, data["path"], _content(data))
        loaded = load_session(path)
        return {"valid": True, "sessionId": loaded.session_id,
                "createdAt": loaded.header.get("createdAt"), "events": list(loaded.events)}


def _config_check(data: JsonObject) -> JsonObject:
    _config(data["config"], None)
    return {"valid": True}


def _tree(root: Path) -> JsonObject:
    out: JsonObject = {}
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[name] = f"link -> {os.readlink(path)}"
        else:
            out[name] = "dir" if path.is_dir() else "file"
    return out


def _engine(data: JsonObject) -> JsonObject:
    with _directory() as root:
        raw = data["config"]
        target = root / str(raw.get("path", ""))
        for relative in data.get("dirs", []):
            (root / relative).mkdir(parents=True, exist_ok=True)
        if "file" in data:
            _put(root, str(raw["path"]), _content(data["file"]))
        for relative, link_target in data.get("links", {}).items():
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            os.symlink(str(link_target), root / relative)
        out: JsonObject = {"valid": True}
        engine: SessionSearchEngine | None = None
        try:
            engine = SessionSearchEngine(_config(raw, root))
            out["create"] = None
            engine.search_sessions({"query": "x"})
            out["search"] = None
        except SessionQueryError as exc:
            out["search" if engine is not None else "create"] = _refusal(exc)
        finally:
            if engine is not None:
                engine.close()
        out["fileSha256"] = (hashlib.sha256(target.read_bytes()).hexdigest()
                             if target.is_file() and not target.is_symlink() else None)
        if "links" in data:
            out["tree"] = _tree(root)
        return out


_ARGUMENT = re.compile(r"\s*([^,]+?)\s*(?:,|$)")


def _fts_arguments(sql: str) -> list[str]:
    inner = sql[sql.index("(") + 1: sql.rindex(")")]
    return [m.group(1) for m in _ARGUMENT.finditer(inner) if m.group(1)]


def _schema(data: JsonObject) -> JsonObject:
    with _directory() as root:
        path = root / data.get("path", "index.sqlite")
        SessionSearchEngine(_config({"path": str(path)}, None)).close()
        conn = sqlite3.connect(path)
        try:
            tables = {str(r[0]): str(r[1] or "") for r in conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'table' "
                "AND name NOT GLOB 'sqlite_*' ORDER BY name")}
            listed = {str(r[1]): bool(r[5]) for r in conn.execute("PRAGMA table_list")}
            columns = {name: [{"name": c[1], "type": c[2], "notNull": bool(c[3]),
                               "primaryKey": bool(c[5])}
                              for c in conn.execute(f'PRAGMA table_info("{name}")')]
                       for name in ("index_state", "sessions")}
            sessions = columns.pop("sessions")
            rows = conn.execute("SELECT instance, global_generation FROM index_state").fetchall()
            arguments = _fts_arguments(tables.get("docs", "()"))
        finally:
            conn.close()
    try:
        version: int | None = uuid.UUID(str(rows[0][0])).version if rows else None
    except ValueError:
        version = None
    docs_columns = [a.split()[0] for a in arguments if "=" not in a]
    return {
        "valid": True,
        "tables": sorted(n for n in tables if not n.startswith("docs_")),
        "strict": sorted(n for n, strict in listed.items() if strict),
        "indexState": {"columns": columns["index_state"], "rows": len(rows),
                       "instanceUuidVersion": version},
        "sessions": {"columns": [c["name"] for c in sessions],
                     "primaryKey": [{"name": c["name"], "type": c["type"]} for c in sessions
                                    if c["primaryKey"]]},
        "docs": {"module": "fts5" if "USING FTS5" in tables.get("docs", "").upper() else None,
                 "columns": docs_columns,
                 "unindexed": [a.split()[0] for a in arguments
                               if a.upper().endswith(" UNINDEXED")],
                 "options": {k.strip(): v.strip().strip("'\"") for k, v in
                             (a.split("=", 1) for a in arguments if "=" in a)}},
    }


class _Program:
    def __init__(self, root: Path, index: str) -> None:
        self.root = root
        self.index = index
        self.engine: SessionSearchEngine | None = None
        self.cursor: str | None = None
        self.last: JsonObject | None = None

    def _engine(self) -> SessionSearchEngine:
        if self.engine is None:
            self.engine = SessionSearchEngine(_config({"path": self.index}, self.root))
        return self.engine

    def step(self, step: JsonObject) -> Any:
        if "write" in step:
            for relative, value in step["write"].items():
                _put(self.root, relative, _content(value))
            return None
        if "delete" in step:
            (self.root / step["delete"]).unlink()
            return None
        if "chmod" in step:
            for relative, mode in step["chmod"].items():
                os.chmod(self.root / relative, int(str(mode), 8))
            return None
        if "modes" in step:
            return {p: f"{stat.S_IMODE((self.root / p).stat().st_mode):04o}"
                    for p in step["modes"]}
        if "index" in step:
            try:
                report = self._engine().index_paths([self.root / p for p in step["index"]])
            except SessionQueryError as exc:  # the whole run was refused
                return {"error": exc.code}
            return {"failed": [{"path": Path(f.path).relative_to(self.root).as_posix(),
                                "code": f.error.code if f.error else None}
                               for f in report.failed]}
        if "search" in step:
            return self._search(step)
        if "sql" in step:
            return self._sql(str(step["sql"]))
        raise ValueError(f"unknown query.files step {sorted(step)}")

    def _sql(self, statement: str) -> list[list[Any]]:
        conn = sqlite3.connect(self.root / self.index, isolation_level=None, timeout=10)
        try:
            return [list(row) for row in conn.execute(statement).fetchall()]
        finally:
            conn.close()

    def _search(self, step: JsonObject) -> JsonObject:
        request = dict(step["search"])
        if step.get("next"):
            request["cursor"] = self.cursor
        engine = self._engine()
        try:
            if step.get("scope", "sessions") == "events":
                page = engine.search_events(request)
                found: JsonObject = {"seqs": [h["seq"] for h in page.items]}
            else:
                page = engine.search_sessions(request)
                found = {"ids": [h["header"]["id"] for h in page.items]}
        except SessionQueryError as exc:
            return {"error": exc.code}
        self.cursor = page.next_cursor
        found["more"] = page.next_cursor is not None
        return found


def _files(data: JsonObject) -> JsonObject:
    with _directory() as root:
        program = _Program(root, str(data.get("index", "index.sqlite")))
        try:
            return {"valid": True, "steps": [program.step(s) for s in data["steps"]]}
        finally:
            if program.engine is not None:
                program.engine.close()


_RUN = {"query.source": _source, "query.config": _config_check, "query.engine": _engine,
        "query.schema": _schema, "query.files": _files}


def run(operation: str, data: JsonObject) -> JsonObject:
    return _RUN[operation](data)
