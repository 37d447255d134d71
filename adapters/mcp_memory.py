"""The knowledge graph of the MCP reference memory server (``memory.jsonl``: one entity or
relation per line) to entries and back (spec chapter ``adapters/mcp-memory``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from dshkit.reference.json.inputs import JsonInputError, parse_json

from .entries import Entry, EntryBuilder, read_entries, tags_of
from .errors import PAYLOAD, AdapterError
from .jsonio import payload_error, pointer_token, small
from .model import AdaptResult, ExportResult, Loss, Where
from .options import Options
from .textutil import strip_bom

FORMAT = "mcp-graph"
ENTITY, TYPE, RELATION, FROM, TO = "entity:", "type:", "relation:", "from:", "to:"
ENTITY_KEYS = ("type", "name", "entityType", "observations")
RELATION_KEYS = ("type", "from", "to", "relationType")
IMPORT_OPTIONS = frozenset({"track", "scope", "source"})
EXPORT_OPTIONS = frozenset({"track", "scope", "source", "entity", "entity_type"})


def observation_text(name: str, observation: str) -> str:
    return f"{name}: {observation}"


def relation_text(source: str, relation: str, target: str) -> str:
    return f"{source} {relation} {target}"


def entity_tags(name: str, entity_type: str) -> list[str]:
    return [ENTITY + name] + ([TYPE + entity_type] if entity_type else [])


def relation_tags(source: str, relation: str, target: str) -> list[str]:
    return [RELATION + relation, FROM + source, TO + target]


def adapt(payload: Any, *, options: dict[str, Any] | None = None) -> AdaptResult:
    opts = Options(options, IMPORT_OPTIONS)
    bucket = (opts.track("user"), opts.scope("user-global"))
    source = opts.source(FORMAT)
    if not isinstance(payload, str):
        raise AdapterError(PAYLOAD, "payload must be the text of a memory.jsonl file",
                           key="payload")
    result = AdaptResult()
    builder = EntryBuilder(result)
    for number, line in enumerate(strip_bom(payload).split("\n"), start=1):
        if line.strip():
            _line(_record(line, number), number, builder, bucket, source)
    return result


def _record(line: str, number: int) -> dict[str, Any]:
    try:
        record = parse_json(line, allow_non_finite=True)
    except JsonInputError as exc:
        raise payload_error(exc, f"line {number}", number) from None
    if not isinstance(record, dict):
        raise AdapterError(PAYLOAD, f"line {number} is not a JSON object", line=number,
                           pointer="/")
    kind = record.get("type")
    keys = ENTITY_KEYS if kind == "entity" else RELATION_KEYS if kind == "relation" else None
    if keys is None:
        raise AdapterError(PAYLOAD, f"line {number}: type must be \"entity\" or \"relation\"",
                           line=number, pointer="/type")
    for key in keys[1:]:
        value = record.get(key)
        if key == "observations":
            ok = isinstance(value, list) and all(isinstance(o, str) for o in value)
        else:
            ok = isinstance(value, str)
        if not ok:
            wanted = "an array of strings" if key == "observations" else "a string"
            raise AdapterError(PAYLOAD, f"line {number}: {key} must be {wanted}", line=number,
                               pointer=f"/{pointer_token(key)}")
    return record


def _line(record: dict[str, Any], number: int, builder: EntryBuilder, bucket: tuple[str, str],
          source: str) -> None:
    track, scope = bucket
    where = Where(number)
    first = builder.next_index
    if record["type"] == "entity":
        name, kind = record["name"], record["entityType"]
        tags = [(tag, where.at(pointer="/name")) for tag in entity_tags(name, kind)]
        observations = record["observations"]
        for i, observation in enumerate(observations):
            builder.add(track=track, scope=scope, text=observation_text(name, observation),
                        source=source, tags=tags, where=where.at(pointer=f"/observations/{i}"))
        if not observations:
            builder.add(track=track, scope=scope, text=name, source=source, tags=tags,
                        where=where.at(pointer="/name"))
        keys = ENTITY_KEYS
    else:
        src, rel, dst = record["from"], record["relationType"], record["to"]
        tags = [(tag, where.at(pointer="/relationType")) for tag in relation_tags(src, rel, dst)]
        builder.add(track=track, scope=scope, text=relation_text(src, rel, dst), source=source,
                    tags=tags, where=where.at(pointer="/"))
        keys = RELATION_KEYS
    for key, value in record.items():
        if key not in keys:
            builder.loss("field-dropped", f"member {key!r} has no place in an entry",
                         where.at(pointer=f"/{pointer_token(key)}"), entry=first, field=key,
                         value=small(value))


# -- export -----------------------------------------------------------------------------------


def _first(tags: tuple[str, ...], prefix: str) -> str | None:
    return next((t[len(prefix):] for t in tags if t.startswith(prefix)), None)


@dataclass(slots=True)
class _Entity:
    name: str
    kind: str
    observations: list[tuple[int, str]] = field(default_factory=list)
    bare: list[int] = field(default_factory=list)


def export(entries: Any, *, options: dict[str, Any] | None = None) -> ExportResult:
    """Entities first, in order of first appearance, then relations, one JSON object per line
    as the server writes them (ADP-MCP-005)."""
    opts = Options(options, EXPORT_OPTIONS)
    bucket = (opts.track("user"), opts.scope("user-global"))
    source = opts.source(FORMAT)
    fallback = (opts.text("entity", "dshkit"), opts.text("entity_type", "memory"))
    items = read_entries(entries)
    entities: dict[str, _Entity] = {}
    relations: list[tuple[int, tuple[str, str, str]]] = []
    for index, entry in enumerate(items):
        rel = (_first(entry.tags, FROM), _first(entry.tags, RELATION), _first(entry.tags, TO))
        if rel[0] is not None and rel[1] is not None and rel[2] is not None:
            relations.append((index, (rel[0], rel[1], rel[2])))
            continue
        name = _first(entry.tags, ENTITY)
        kind = _first(entry.tags, TYPE) if name is not None else None
        name, kind = (name, kind or "") if name is not None else fallback
        entity = entities.setdefault(name, _Entity(name, kind))
        if entry.text == name and _first(entry.tags, ENTITY) == name:
            entity.bare.append(index)
        elif entry.text.startswith(f"{name}: ") and _first(entry.tags, ENTITY) == name:
            entity.observations.append((index, entry.text[len(name) + 2:]))
        else:
            entity.observations.append((index, entry.text))
    predicted: dict[int, dict[str, Any] | None] = {}
    lines: list[str] = []
    for entity in entities.values():
        observations = [o for _, o in entity.observations]
        lines.append(_dump({"type": "entity", "name": entity.name, "entityType": entity.kind,
                            "observations": observations}))
        tags = tags_of(entity_tags(entity.name, entity.kind))
        for index, observation in entity.observations:
            predicted[index] = _entry(bucket, observation_text(entity.name, observation), tags,
                                      source)
        for position, index in enumerate(entity.bare):
            keep = position == 0 and not entity.observations
            predicted[index] = _entry(bucket, entity.name, tags, source) if keep else None
    for index, (src, kind_, dst) in relations:
        lines.append(_dump({"type": "relation", "from": src, "to": dst, "relationType": kind_}))
        predicted[index] = _entry(bucket, relation_text(src, kind_, dst),
                                  tags_of(relation_tags(src, kind_, dst)), source)
    losses: list[Loss] = []
    for index, entry in enumerate(items):
        _compare(index, entry, predicted[index], losses)
    return ExportResult("\n".join(lines), "text", losses)


def _dump(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def _entry(bucket: tuple[str, str], text: str, tags: list[str], source: str) -> dict[str, Any]:
    return {"track": bucket[0], "scope": bucket[1], "text": text, "tags": tags,
            "source": source}


def _compare(index: int, entry: Entry, back: dict[str, Any] | None, losses: list[Loss]) -> None:
    where = Where(pointer=f"/{index}")
    if back is None:
        losses.append(Loss("entry-dropped", "an entity with observations (or a second bare "
                           "entry of one entity) has no line of its own", index, where, "text"))
        return
    if (entry.track, entry.scope) != (back["track"], back["scope"]):
        losses.append(Loss("bucket-changed", f"{entry.track}/{entry.scope} is not carried; "
                           f"reads back as {back['track']}/{back['scope']}", index, where,
                           "bucket", f"{entry.track}/{entry.scope}"))
    for tag in entry.tags:
        if tag not in back["tags"]:
            losses.append(Loss("tag-dropped", f"tag {tag!r} has no place in the graph", index,
                               where, "tags", tag))
    if entry.source != back["source"]:
        losses.append(Loss("source-changed", "source is not carried; reads back as "
                           f"{back['source']!r}", index, where, "source", entry.source))
    if entry.text != back["text"]:
        losses.append(Loss("text-approximated", "the graph rebuilds this text from names",
                           index, where, "text", back["text"]))
    if back["tags"] != [t for t in entry.tags if t in back["tags"]]:
        losses.append(Loss("tags-changed", "the graph adds or reorders tags: reads back with "
                           f"tags {back['tags']}", index, where, "tags", back["tags"]))
