"""The adapter registry: the dsh-memento adapter contract with its gaps closed (spec chapter
``adapters/index``, section "Registry")."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dshkit.reference.memory.errors import MemoryProtocolError
from dshkit.reference.memory.inputs import Context, new_entry
from dshkit.schemas import errors as schema_errors

from . import claude_md, hermes, hermes_bullets, hub, mcp_memory, mem0
from .errors import INVALID, LOSS, NOT_FOUND, OUTPUT, PAYLOAD, AdapterError
from .model import AdaptResult, ExportResult, Loss

ADAPTER_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
ENTRY_INPUT_SCHEMA = "memory/v1/entry-input.json"
_NO_KEYS = Context(None, "", "", None)

AdaptFn = Callable[..., AdaptResult]
ExportFn = Callable[..., ExportResult]


@dataclass(frozen=True, slots=True)
class Adapter:
    """One format: identity, the formats it reads and writes, and its two conversions."""

    id: str
    name: str
    description: str
    version: str
    import_formats: tuple[str, ...]
    export_format: str
    adapt: AdaptFn
    export: ExportFn

    def descriptor(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "description": self.description,
                "version": self.version, "importFormats": list(self.import_formats),
                "exportFormat": self.export_format}


def check_adapter(adapter: Any) -> None:
    """ADP-REG-001: every member present and well formed."""
    ident = getattr(adapter, "id", None)
    if not isinstance(ident, str) or not ADAPTER_ID.match(ident):
        raise AdapterError(INVALID, "adapter id must be lower-case words of a-z and 0-9 joined "
                           "by single hyphens", key="id")
    for name in ("name", "description", "version", "export_format"):
        value = getattr(adapter, name, None)
        if not isinstance(value, str) or not value.strip():
            raise AdapterError(INVALID, f"adapter {name} must be a non-empty string", key=name)
    formats = getattr(adapter, "import_formats", None)
    if not isinstance(formats, tuple | list) or not formats or not all(
            isinstance(f, str) and f.strip() for f in formats):
        raise AdapterError(INVALID, "adapter import_formats must be a non-empty list of "
                           "non-empty strings", key="import_formats")
    for name in ("adapt", "export"):
        if not callable(getattr(adapter, name, None)):
            raise AdapterError(INVALID, f"adapter {name} must be callable", key=name)


def check_output(result: Any, fmt: str) -> AdaptResult:
    """ADP-REG-003: what an adapter returns is checked: every entry against
    ``entry-input.json`` and the protocol's own input rules, tags already normalised."""
    if not isinstance(result, AdaptResult):
        raise AdapterError(OUTPUT, f"adapter {fmt!r} did not return an AdaptResult",
                           key="adapt", fmt=fmt)
    for index, entry in enumerate(result.entries):
        base = f"/entries/{index}"
        found = schema_errors(ENTRY_INPUT_SCHEMA, entry)
        if found:
            where = "".join(f"/{p}" for p in found[0].absolute_path)
            raise AdapterError(OUTPUT, f"adapter {fmt!r} produced an invalid entry: "
                               f"{found[0].message}", pointer=base + where, fmt=fmt)
        try:
            checked = new_entry(entry, _NO_KEYS, base)
        except MemoryProtocolError as exc:
            raise AdapterError(OUTPUT, f"adapter {fmt!r} produced an invalid entry: "
                               f"{exc.message}", pointer=str(exc.details.get("field", base)),
                               fmt=fmt) from None
        if list(checked.tags) != list(entry.get("tags") or []):
            raise AdapterError(OUTPUT, f"adapter {fmt!r} produced tags that are not normalised",
                               pointer=f"{base}/tags", fmt=fmt)
    if not all(isinstance(loss, Loss) for loss in result.losses):
        raise AdapterError(OUTPUT, f"adapter {fmt!r} returned a loss that is not a Loss",
                           key="losses", fmt=fmt)
    return result


def strict_check(losses: list[Loss], fmt: str) -> None:
    """ADP-LOS-004: under ``strict``, any loss is an error that lists them all."""
    if losses:
        first = losses[0].to_json()
        raise AdapterError(LOSS, f"strict conversion refused: {len(losses)} loss(es), first: "
                           f"{first['message']}", key="strict", fmt=fmt,
                           losses=[loss.to_json() for loss in losses])


def _split(options: Mapping[str, Any] | None) -> tuple[dict[str, Any] | None, bool]:
    if options is None:
        return None, False
    if not isinstance(options, Mapping):
        raise AdapterError(PAYLOAD, "options must be an object", key="options")
    rest = {k: v for k, v in options.items() if k != "strict"}
    strict = options.get("strict", False)
    if not isinstance(strict, bool):
        raise AdapterError(PAYLOAD, "option 'strict' must be true or false", key="strict")
    return rest, strict


class Registry:
    """Adapters by id. ``adapt`` and ``export`` wrap the adapter's own functions with the
    output checks and the ``strict`` option."""

    def __init__(self) -> None:
        self._adapters: dict[str, Adapter] = {}

    def register(self, adapter: Adapter) -> Callable[[], None]:
        check_adapter(adapter)
        if adapter.id in self._adapters:
            raise AdapterError(INVALID, f"adapter {adapter.id!r} is already registered", key="id")
        self._adapters[adapter.id] = adapter

        def dispose() -> None:
            if self._adapters.get(adapter.id) is adapter:
                del self._adapters[adapter.id]

        return dispose

    def get(self, ident: str) -> Adapter:
        adapter = self._adapters.get(ident)
        if adapter is None:
            raise AdapterError(NOT_FOUND, f"no adapter {ident!r} (known: "
                               f"{', '.join(sorted(self._adapters))})", key="format",
                               adapterId=ident)
        return adapter

    def list(self) -> list[dict[str, Any]]:
        return [self._adapters[k].descriptor() for k in sorted(self._adapters)]

    def adapt(self, ident: str, payload: Any,
              options: Mapping[str, Any] | None = None) -> AdaptResult:
        adapter = self.get(ident)
        rest, strict = _split(options)
        try:
            result = adapter.adapt(payload, options=rest)
        except AdapterError as exc:
            raise exc.with_format(ident) from None
        except (RecursionError, MemoryError, ValueError, TypeError, KeyError,
                AttributeError, IndexError) as exc:
            raise AdapterError(PAYLOAD, f"adapt failed: {type(exc).__name__}: {exc}",
                               key="payload", fmt=ident) from None
        check_output(result, ident)
        if strict:
            strict_check(result.losses, ident)
        return result

    def export(self, ident: str, entries: Any,
               options: Mapping[str, Any] | None = None) -> ExportResult:
        adapter = self.get(ident)
        rest, strict = _split(options)
        try:
            result = adapter.export(entries, options=rest)
        except AdapterError as exc:
            raise exc.with_format(ident) from None
        except (RecursionError, MemoryError, ValueError, TypeError, KeyError,
                AttributeError, IndexError) as exc:
            raise AdapterError(PAYLOAD, f"export failed: {type(exc).__name__}: {exc}",
                               key="entries", fmt=ident) from None
        if not isinstance(result, ExportResult):
            raise AdapterError(OUTPUT, f"adapter {ident!r} did not return an ExportResult",
                               key="export", fmt=ident)
        if strict:
            strict_check(result.losses, ident)
        return result


BUILTIN = (
    Adapter("mem0", "mem0", "mem0 get_all/search output ({\"results\": [...]} or a bare list) "
            "and the legacy {\"facts\": [...]} shape. Reads memory, metadata.track/scope/source/"
            "tags/category and categories; other members (user_id, agent_id, run_id, score, "
            "...) are reported as losses. Writes get_all output with ISO timestamps; lossless.",
            "1", ("mem0-get-all", "mem0-search", "mem0-list", "mem0-facts"), "mem0-get-all",
            mem0.adapt, mem0.export),
    Adapter("hermes", "Hermes agent memory", "hermes-agent MEMORY.md (agent track) and USER.md "
            "(user track): entries separated by a line holding only §. No tags, no scope, no "
            "source: those are reported as losses on export; files over Hermes's character "
            "limits are refused.", "1", ("hermes-memory-md", "hermes-user-md"),
            "hermes-memory-files", hermes.adapt, hermes.export),
    Adapter("hermes-bullets", "Markdown bullets (dsh-memento hermes-memory-md)",
            "## section headings and bullet lists, as dsh-memento's hermes-memory-md reads "
            "them; bucket headings (## agent/workspace) carry track and scope, a section "
            "heading carries one tag. Prose lines are refused with their line number.", "1",
            ("markdown-bullets",), "markdown-bullets", hermes_bullets.adapt,
            hermes_bullets.export),
    Adapter("claude-md", "CLAUDE.md", "Claude Code memory files: headings become tags, list "
            "items, paragraphs and code blocks become entries, @path imports are kept and "
            "optionally expanded (5 hops, cycles detected, never in code). Export writes a "
            "managed region and updates only that region of an existing file; managed-policy "
            "files are never written.", "1", ("claude-md",), "claude-md", claude_md.adapt,
            claude_md.export),
    Adapter("mcp-graph", "MCP memory server graph", "memory.jsonl of the MCP reference memory "
            "server: one entry per observation (\"name: observation\", tags entity:NAME and "
            "type:TYPE) and per relation (\"from relation to\", tags relation:, from:, to:).",
            "1", ("mcp-memory-jsonl",), "mcp-memory-jsonl", mcp_memory.adapt,
            mcp_memory.export),
    Adapter("dshkit", "dshkit export envelope", "memory-export-v1, the lossless hub format of "
            "every conversion.", "1", ("memory-export-v1",), "memory-export-v1", hub.adapt,
            hub.export),
)


def default_registry() -> Registry:
    registry = Registry()
    for adapter in BUILTIN:
        registry.register(adapter)
    return registry


REGISTRY = default_registry()
FORMATS = tuple(adapter.id for adapter in BUILTIN)


def adapt(fmt: str, payload: Any, options: Mapping[str, Any] | None = None) -> AdaptResult:
    return REGISTRY.adapt(fmt, payload, options)


def export(fmt: str, entries: Any, options: Mapping[str, Any] | None = None) -> ExportResult:
    return REGISTRY.export(fmt, entries, options)


@dataclass(frozen=True, slots=True)
class Conversion:
    """A conversion through the hub: the entries in between and both loss reports."""

    entries: list[dict[str, Any]]
    read_losses: list[Loss]
    result: ExportResult

    def to_json(self) -> dict[str, Any]:
        return {"entries": self.entries, "readLosses": [x.to_json() for x in self.read_losses],
                "writeLosses": [x.to_json() for x in self.result.losses],
                "kind": self.result.kind, "output": self.result.output}


def convert(source: str, target: str, payload: Any, *,
            read_options: Mapping[str, Any] | None = None,
            write_options: Mapping[str, Any] | None = None, strict: bool = False) -> Conversion:
    """ADP-GEN-007: read with one adapter, write with another; ``strict`` refuses any loss of
    either step."""
    read = REGISTRY.adapt(source, payload, read_options)
    if strict:
        strict_check(read.losses, source)
    written = REGISTRY.export(target, read.entries, write_options)
    if strict:
        strict_check(written.losses, target)
    return Conversion(read.entries, read.losses, written)
