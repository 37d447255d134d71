"""Provider-independent filters over session records and documents (QRY-FLT-*).

Clauses are ANDed, the values of one list clause are ORed, ranges are inclusive, an empty
value list matches nothing. Every malformed clause is ``SESSION_QUERY_INVALID_FILTER``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from .documents import SURFACES, Document
from .errors import INVALID_FILTER, SessionQueryError
from .whitespace import CLASS, RUN, trim

SESSION_KINDS: Final = ("id", "cwd", "created-at", "parent", "availability")
EVENT_KINDS: Final = ("seq", "time", "type", "surface", "text")
AVAILABILITY: Final = ("live", "persisted")
RANGE_KINDS: Final = ("created-at", "seq", "time")
_JS_META: Final = re.compile(r"[.*+?^${}()|\[\]\\]")

Filter = dict[str, Any]


def invalid(detail: str) -> SessionQueryError:
    return SessionQueryError(INVALID_FILTER, f"session {detail}")


def is_finite_number(value: Any) -> bool:
    return (not isinstance(value, bool) and isinstance(value, (int, float))
            and math.isfinite(value))


def _strings(kind: str, values: Any, nullable: bool = False) -> list[Any]:
    if not isinstance(values, list) or any(
            not isinstance(v, str) and not (nullable and v is None) for v in values):
        what = "strings or null" if nullable else "strings"
        raise invalid(f"{kind} filter values must be an array of {what}")
    return list(values)


def _allowed(kind: str, values: list[Any], allowed: Sequence[str]) -> None:
    for value in values:
        if value not in allowed:
            raise invalid(f"{kind} filter contains unknown value \"{value}\"")


def _range(kind: str, clause: Filter) -> Filter:
    out: Filter = {"kind": kind}
    for end in ("from", "to"):
        if end in clause:  # present, even as null: it must be a finite number
            if not is_finite_number(clause[end]):
                raise invalid(f"{kind} filter {end} must be finite")
            out[end] = clause[end]
    if "from" in out and "to" in out and out["from"] > out["to"]:
        raise invalid(f"{kind} filter from must be less than or equal to to")
    return out


def _kind(clause: Any) -> str:
    if not isinstance(clause, dict):
        raise invalid("filter clause must be an object")
    kind = clause.get("kind")
    return kind if isinstance(kind, str) else ""


def _unknown(clause: Any) -> SessionQueryError:
    kind = clause.get("kind") if isinstance(clause, dict) else None
    shown = f'"{kind}"' if isinstance(kind, str) else "(missing)"
    return invalid(f"unknown filter kind {shown}")


def materialize_session_filters(filters: Any) -> list[Filter]:
    """A validated copy of session clauses (QRY-FLT-002)."""
    if not isinstance(filters, list):
        raise invalid("filters must be an array")
    out: list[Filter] = []
    for clause in filters:
        kind = _kind(clause)
        if kind == "id":
            out.append({"kind": kind, "values": _strings(kind, clause.get("values"))})
        elif kind in ("cwd", "parent"):
            out.append({"kind": kind, "values": _strings(kind, clause.get("values"), True)})
        elif kind == "created-at":
            out.append(_range(kind, clause))
        elif kind == "availability":
            values = _strings(kind, clause.get("values"))
            _allowed(kind, values, AVAILABILITY)
            out.append({"kind": kind, "values": values})
        else:
            raise _unknown(clause)
    return out


def materialize_event_filters(filters: Any, *, allow_text: bool = True) -> list[Filter]:
    """A validated copy of event clauses (QRY-FLT-003); ``allow_text=False`` for the
    metadata-only clauses an index search takes (QRY-REQ-005)."""
    if not isinstance(filters, list):
        raise invalid("filters must be an array")
    for clause in filters:
        if not allow_text and _kind(clause) == "text":
            raise invalid("search metadata filters do not accept text clauses")
    out: list[Filter] = []
    for clause in filters:
        kind = _kind(clause)
        if kind in ("seq", "time"):
            out.append(_range(kind, clause))
        elif kind == "type":
            out.append({"kind": kind, "values": _strings(kind, clause.get("values"))})
        elif kind == "surface":
            values = _strings(kind, clause.get("values"))
            _allowed(kind, values, SURFACES)
            out.append({"kind": kind, "values": values})
        elif kind == "text":
            if not isinstance(clause.get("text"), str):
                raise invalid("text filter text must be a string")
            out.append({"kind": kind, "text": clause["text"]})
        else:
            raise _unknown(clause)
    return out


@dataclass(frozen=True, slots=True)
class TextFilter:
    """A literal, case-insensitive, whitespace-flexible matcher (QRY-FLT-006).

    ``source`` is the equivalent ECMAScript pattern (flags ``iu``); ``pattern`` is what
    this implementation runs.
    """

    source: str
    pattern: re.Pattern[str]
    flags: str = "iu"

    def matches(self, text: str) -> bool:
        return self.pattern.search(text) is not None


def compile_text_filter(text: str) -> TextFilter:
    trimmed = trim(text)
    if not trimmed:
        raise invalid("text filter must contain non-whitespace text")
    parts = RUN.split(trimmed)
    source = r"\s+".join(_JS_META.sub(lambda m: "\\" + m.group(), p) for p in parts)
    pattern = re.compile((CLASS + "+").join(re.escape(p) for p in parts), re.IGNORECASE)
    return TextFilter(source=source, pattern=pattern)


def _in_range(value: Any, clause: Filter) -> bool:
    return ((clause.get("from") is None or value >= clause["from"])
            and (clause.get("to") is None or value <= clause["to"]))


def session_predicate(clause: Filter) -> Callable[[dict[str, Any]], bool]:
    """A predicate over records ``{header, live, persisted}``."""
    kind = clause["kind"]
    if kind == "id":
        return lambda r: r["header"].get("id") in clause["values"]
    if kind == "cwd":
        return lambda r: r["header"].get("cwd") in clause["values"]
    if kind == "parent":
        return lambda r: r["header"].get("parentSession") in clause["values"]
    if kind == "created-at":
        return lambda r: _in_range(r["header"].get("createdAt"), clause)
    if kind == "availability":
        return lambda r: any(bool(r.get(v)) for v in clause["values"])
    raise _unknown(clause)


def event_predicate(clause: Filter) -> Callable[[Document], bool]:
    kind = clause["kind"]
    if kind == "seq":
        return lambda d: _in_range(d.seq, clause)
    if kind == "time":
        return lambda d: _in_range(d.time, clause)
    if kind == "type":
        return lambda d: d.type in clause["values"]
    if kind == "surface":
        return lambda d: d.surface in clause["values"]
    if kind == "text":
        matcher = compile_text_filter(clause["text"])
        return lambda d: matcher.matches(d.text)
    raise _unknown(clause)


def filter_sessions(records: Sequence[dict[str, Any]], filters: Any) -> list[dict[str, Any]]:
    """Records accepted by every clause, input order kept (QRY-FLT-001)."""
    predicates = [session_predicate(c) for c in materialize_session_filters(filters)]
    return [r for r in records if all(p(r) for p in predicates)]


def filter_documents(documents: Sequence[Document], filters: Any) -> list[Document]:
    predicates = [event_predicate(c) for c in materialize_event_filters(filters)]
    return [d for d in documents if all(p(d) for p in predicates)]
