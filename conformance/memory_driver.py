"""Running one memory case (operation ``memory.calls``) against a Python provider.

A memory case is a program of steps in the JSON call form of ``spec/memory/provider.md``:

- ``{"open": {options}, "path"?: "memory.db"}``: close any open handle and open the provider
  with ``harness-call.json#/$defs/options`` on a store path relative to the case directory;
- ``{"call": {"op": ..., "input"?, "opts"?, "write"?}}``: one provider call;
- ``{"prepare": {"sql": [...]} | {"base64": "..."} | {"symlink": "..."}, "path"?}``: build the
  store file before it is opened (older store versions, foreign or damaged files), or put a
  symbolic link at ``path`` to another path of the case directory (which need not exist);
  capability ``memory.store``;
- ``{"prepare": {"memento": {"version", "tables", "schemaVersion"?, "extra"?}}, "path"}``:
  write a closed dsh-memento store of that schema version holding ``tables`` (rows as column →
  value), with dsh-memento's DDL (:mod:`.memento_fixture`); ``schemaVersion`` is the ``meta``
  value when it is not the version, ``extra`` more DDL; capability ``memory.store``;
- ``{"inspect": "file" | {"sql": "..."}, "path"?}``: read the store file as a kit would (its
  bytes, size and modes; or one read-only SQL statement); capability ``memory.store``;
- ``{"defaultPath": {"env": {...}}}``: the store path the provider would choose with exactly
  these environment variables set (MEM-STO-003); capability ``memory.store``.
- ``{"tool": {"name", "arguments"?, "reader"?: {"cwd"?, "agentPreset"?}}, "path"?}``: one
  call of a tool of the read-only MCP server (spec ``memory/mcp``) on the store at ``path``,
  as the session with that header; capability ``memory.mcp``. With ``"sessions"`` (and
  ``"indexPath"``?, as for a recall step) the server was started with ``--sessions``: its
  ``memory_recall`` tool reads the index built from them, with the case clock as ``now``
  (MEM-MCP-003); the factory's ``recall_tool`` answers it (capabilities ``memory.mcp`` and
  ``memory.recall``).
- ``{"recall": request, "sessions": [{"header", "events"}...] | null, "indexPath"?: path}``:
  ``recall`` (spec ``memory/recall``) with a session query index built from the sessions
  (none when ``sessions`` is null); with ``indexPath`` the index is a file of the case
  directory, built when it does not exist yet and then opened read-only, or, when
  ``sessions`` is null, whatever file is there (a ``prepare`` step may put one); capability
  ``memory.recall``. The factory's ``recall(provider, step, workdir)`` answers it.

Steps may carry ``"at"``: the clock reading for that step. ``params.clock`` is ``{"start",
"step"}`` (a clock frozen within a step that moves ``step`` ms from one step to the next) or
``{"start", "tick"}`` (every reading ``tick`` ms after the previous one). ``params.ids`` is
``{"prefix", "start"}``: ids ``prefix + 12 hex digits`` counting from ``start``, shared by
every handle of the case.

Case stores live in a fresh directory under :func:`scratch_root`, removed after the case.

Each step is answered ``{"ok": true, "result": R}`` or ``{"ok": false, "error": E}``; the case
result is ``{"valid": true, "steps": [...]}``. The gate of every handle calls the kit's
approver; ``concurrent`` calls of the approver run on a second handle of the same store whose
own gate approves (``allowed-once``).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import sqlite3
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .interface import Approver, JsonObject, NotSupported

__all__ = ["DEFAULT_CLOCK", "DEFAULT_IDS", "CaseClock", "CaseIds", "ProviderFactory",
           "ToolFactory", "dispatch", "run_memory_case"]

DEFAULT_CLOCK: JsonObject = {"start": 1_700_000_000_000, "step": 1000}
DEFAULT_IDS: JsonObject = {"prefix": "00000000-0000-4000-8000-", "start": 1}
WRITE_OPS = ("add", "replace", "remove", "consolidate", "seed", "import_envelope")
#: MEM-MIG-001..010: ``{"op": "migrate_memento", "input": {"source": PATH}, "write"}``, PATH
#: relative to the case directory; capability ``memory.migrate-memento``.
MIGRATE_OP = "migrate_memento"
#: The proposal calls (capability ``memory.proposals``, MEM-PRO-010): ``(input, write)``.
PROPOSAL_OPS = ("propose", "proposals", "approve_proposal", "dismiss_proposal")
Gate = Callable[[JsonObject, Any], Any]


class ProviderFactory(Protocol):
    """How the driver opens providers of one implementation."""

    #: the exception class that carries protocol errors (``code`` and ``to_json()``)
    error_type: type[Exception]
    #: whether ``prepare``/``inspect``/``defaultPath`` steps can run (a SQLite store file)
    store_steps: bool

    def open(self, path: Path, options: JsonObject, gate: Gate, clock: Callable[[], int],
             ids: Callable[[], str]) -> Any:
        """Open a provider (raising ``error_type`` for a bad configuration or store)."""
        ...

    def default_path(self, env: Mapping[str, str]) -> str:
        """MEM-STO-003 with exactly ``env`` set."""
        ...


class ToolFactory(Protocol):
    """An implementation that also serves the read-only MCP tools (capability
    ``memory.mcp``): a provider factory with a ``tool`` method."""

    def tool(self, path: Path, reader: JsonObject, name: Any, arguments: Any) -> Any:
        """The result of one tool call on the store at ``path`` (raising ``error_type``)."""
        ...

    def recall_tool(self, path: Path, reader: JsonObject, name: Any, arguments: Any,
                    step: JsonObject, workdir: Path, clock: Callable[[], int]) -> Any:
        """The same, for a server started with session history: the index of the step's
        ``sessions`` and ``indexPath`` (as for a recall step), ``clock`` its ``now``."""
        ...


@dataclass
class CaseClock:
    """The deterministic clock of a case."""

    start: int
    step: int = 0
    tick: int = 0
    now: int = 0
    _started: bool = False

    @classmethod
    def of(cls, spec: Mapping[str, Any] | None) -> CaseClock:
        spec = dict(DEFAULT_CLOCK if spec is None else spec)
        start = int(spec.get("start", DEFAULT_CLOCK["start"]) or 0)
        return cls(start=start, step=int(spec.get("step", 0)), tick=int(spec.get("tick", 0)),
                   now=start)

    def enter(self, step: Mapping[str, Any]) -> None:
        """Set the reading for the next step."""
        if "at" in step:
            self.now = int(step["at"])
        elif self._started and not self.tick:
            self.now += self.step
        self._started = True

    def __call__(self) -> int:
        if self.tick:
            value = self.now
            self.now += self.tick
            return value
        return self.now


@dataclass
class CaseIds:
    prefix: str
    counter: int

    @classmethod
    def of(cls, spec: Mapping[str, Any] | None) -> CaseIds:
        spec = dict(DEFAULT_IDS if spec is None else spec)
        return cls(str(spec.get("prefix", DEFAULT_IDS["prefix"])),
                   int(spec.get("start", DEFAULT_IDS["start"]) or 0))

    def __call__(self) -> str:
        value = f"{self.prefix}{self.counter:012x}"
        self.counter += 1
        return value


def _plain(value: Any) -> Any:
    """The JSON value of a result (a crash if it is not JSON: MEM-PRV-003)."""
    return json.loads(json.dumps(value, ensure_ascii=False, allow_nan=False))


def dispatch(provider: Any, call: Mapping[str, Any]) -> Any:
    """One call of the JSON call form on a provider object (MEM-PRV-004 table)."""
    op = call.get("op")
    if op in WRITE_OPS or op in PROPOSAL_OPS:
        return getattr(provider, str(op))(call.get("input"), call.get("write"))
    if op == "query":
        return provider.query(call.get("input"), call.get("opts"))
    if op == "audit_list":
        given = call.get("input")
        given = given if isinstance(given, dict) else {}
        if "after" in given:  # MEM-AUD-008
            return provider.audit_list(given.get("limit", 100), given["after"])
        if "limit" in given:
            return provider.audit_list(given["limit"])
        return provider.audit_list()
    if op == "export" and isinstance(call.get("input"), dict) and "ledger" in call["input"]:
        return provider.export(call["input"]["ledger"])  # MEM-EXP-005
    if op == MIGRATE_OP:
        given = call.get("input")
        source = given.get("source") if isinstance(given, dict) else None
        return provider.migrate_memento(source, call.get("write"))
    if op == "snapshot":
        return provider.snapshot(call.get("write"))
    if op in ("budgets", "list_entries", "export", "close"):
        return getattr(provider, str(op))()
    raise ValueError(f"unknown memory call op {op!r}")


def case_path(workdir: Path, relative: object) -> Path:
    name = "memory.db" if relative is None else str(relative)
    candidate = Path(name)
    if candidate.is_absolute() or ".." in candidate.parts:
        raise ValueError(f"store path {name!r} must stay inside the case directory")
    return workdir / candidate


def _mode(path: Path) -> str | None:
    try:
        return f"{stat.S_IMODE(path.stat().st_mode):04o}"
    except OSError:
        return None


def inspect_file(path: Path) -> JsonObject:
    """What the kit knows of a store file: existence, size, digest, modes."""
    if not path.is_file():
        return {"exists": False, "size": None, "sha256": None, "mode": None,
                "dirMode": _mode(path.parent)}
    data = path.read_bytes()
    return {"exists": True, "size": len(data), "sha256": hashlib.sha256(data).hexdigest(),
            "mode": _mode(path), "dirMode": _mode(path.parent)}


def inspect_sql(path: Path, statement: str) -> list[list[Any]]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return [list(row) for row in conn.execute(statement).fetchall()]


def prepare_file(path: Path, spec: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if "symlink" in spec:
        os.symlink(str(spec["symlink"]), path)
        return
    if "memento" in spec:
        from .memento_fixture import materialise

        given = dict(spec["memento"])
        materialise(path, int(given["version"]), dict(given.get("tables", {})),
                    schema_version=given.get("schemaVersion"),
                    extra=tuple(given.get("extra", ())))
        return
    if "base64" in spec:
        path.write_bytes(base64.b64decode(str(spec["base64"])))
        return
    with contextlib.closing(sqlite3.connect(path)) as conn:
        for statement in spec.get("sql", []):
            conn.execute(str(statement))
        conn.commit()


@contextlib.contextmanager
def exact_environment(env: Mapping[str, str], names: tuple[str, ...]) -> Iterator[None]:
    """Exactly ``env`` for the variables in ``names`` (others untouched) for the block."""
    saved = {name: os.environ.get(name) for name in names}
    try:
        for name in names:
            if name in env:
                os.environ[name] = str(env[name])
            else:
                os.environ.pop(name, None)
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@dataclass
class _Handles:
    factory: ProviderFactory
    workdir: Path
    clock: CaseClock
    ids: CaseIds
    approver: Approver
    primary: Any = None
    secondary: Any = None
    path: Path | None = None
    options: JsonObject = field(default_factory=dict)
    step: int = 0

    def gate(self, payload: JsonObject, write: Any) -> Any:
        return self.approver(self.step, payload, write, self.concurrent)

    def concurrent(self, call: JsonObject) -> JsonObject:
        """A call on the second handle (opened on first use; its gate approves)."""
        if self.path is None:
            raise RuntimeError("no open provider for a concurrent call")
        if self.secondary is None:
            self.secondary = self.factory.open(self.path, self.options,
                                               lambda payload, write: "allowed-once",
                                               self.clock, self.ids)
        return self.respond(lambda: dispatch(self.secondary, call))

    def respond(self, action: Callable[[], Any]) -> JsonObject:
        try:
            return {"ok": True, "result": _plain(action())}
        except self.factory.error_type as exc:
            return {"ok": False, "error": _plain(exc.to_json())}  # type: ignore[attr-defined]

    def close(self) -> None:
        for handle in (self.secondary, self.primary):
            if handle is not None:
                with contextlib.suppress(Exception):
                    handle.close()
        self.primary = self.secondary = None

    def open(self, step: Mapping[str, Any]) -> None:
        self.close()
        self.path = case_path(self.workdir, step.get("path"))
        self.options = dict(step["open"] or {})
        self.primary = self.factory.open(self.path, self.options, self.gate, self.clock,
                                         self.ids)

    def run_step(self, step: Mapping[str, Any]) -> JsonObject:
        if "open" in step:
            return self.respond(lambda: self.open(step))
        if "call" in step:
            if self.primary is None:
                raise RuntimeError(f"step {self.step}: a call with no open provider")
            call = step["call"]
            if call.get("op") == MIGRATE_OP and isinstance(call.get("input"), dict):
                source = call["input"].get("source")
                call = {**call, "input": {**call["input"], "source": str(
                    case_path(self.workdir, source)) if isinstance(source, str) else source}}
            response = self.respond(lambda: dispatch(self.primary, call))
            if call.get("op") == "close":
                self.primary = None
            return response
        if "tool" in step:
            return self.tool_step(step)
        if "recall" in step:  # MEM-RCL-*: capability memory.recall
            recall = getattr(self.factory, "recall", None)
            if recall is None:
                raise NotSupported("recall steps need the capability memory.recall")
            if self.primary is None:
                raise RuntimeError(f"step {self.step}: a recall with no open provider")
            return self.respond(lambda: recall(self.primary, step, self.workdir))
        if not self.factory.store_steps:
            raise NotSupported("store steps (prepare, inspect, defaultPath) need a store file")
        if "prepare" in step:
            target = case_path(self.workdir, step.get("path"))
            spec = dict(step["prepare"])
            if "symlink" in spec:  # to a path of the case directory, never outside it
                spec["symlink"] = str(case_path(self.workdir, spec["symlink"]))
            return self.respond(lambda: prepare_file(target, spec))
        if "inspect" in step:
            target = case_path(self.workdir, step.get("path"))
            what = step["inspect"]
            if what == "file":
                return {"ok": True, "result": inspect_file(target)}
            return {"ok": True, "result": _plain(inspect_sql(target, str(what["sql"])))}
        if "defaultPath" in step:
            env = dict(step["defaultPath"].get("env", {}))
            return self.respond(lambda: self.factory.default_path(env))
        raise ValueError(f"step {self.step}: unknown step {sorted(step)}")


    def tool_step(self, step: Mapping[str, Any]) -> JsonObject:
        tool = getattr(self.factory, "tool", None)
        if tool is None:
            raise NotSupported("tool steps need the read-only MCP tools (memory.mcp)")
        target = case_path(self.workdir, step.get("path"))
        spec = dict(step["tool"])
        given = spec.get("reader")
        reader = given if isinstance(given, dict) else {}
        if "sessions" in step:  # a server started with --sessions (MEM-MCP-003)
            recall_tool = getattr(self.factory, "recall_tool", None)
            if recall_tool is None:
                raise NotSupported("tool steps with sessions need memory.mcp and memory.recall")
            return self.respond(lambda: recall_tool(target, reader, spec.get("name"),
                                                    spec.get("arguments"), dict(step),
                                                    self.workdir, self.clock))
        return self.respond(lambda: tool(target, reader, spec.get("name"),
                                         spec.get("arguments")))


def scratch_root() -> str | None:
    """Where case stores live: ``$DSHKIT_KIT_TMPDIR``, else ``/dev/shm`` when writable (stores
    are throwaway, and a provider that syncs every commit is much faster on a RAM disk), else
    the system's temporary directory."""
    chosen = os.environ.get("DSHKIT_KIT_TMPDIR")
    if chosen:
        return chosen
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK):
        return shm
    return None


def allow_all(step: int, payload: JsonObject, write: Any, concurrent: Any) -> str:
    """The approver used when the kit gives none: approves every write."""
    return "allowed-once"


def run_memory_case(factory: ProviderFactory, input: JsonObject, params: JsonObject,
                    approver: Approver | None = None) -> JsonObject:
    """Run every step of one case; a store directory is created and removed around it."""
    steps = input.get("steps")
    if not isinstance(steps, list):
        return {"valid": False, "error": {"code": "CASE_INVALID",
                                          "message": "input.steps must be an array"}}
    with tempfile.TemporaryDirectory(prefix="dshkit-mem-", dir=scratch_root()) as tmp:
        handles = _Handles(factory, Path(tmp), CaseClock.of(params.get("clock")),
                           CaseIds.of(params.get("ids")), approver or allow_all)
        responses: list[JsonObject] = []
        try:
            for index, step in enumerate(steps):
                handles.step = index
                handles.clock.enter(step)
                responses.append(handles.run_step(step))
        finally:
            handles.close()
    return {"valid": True, "steps": responses}
