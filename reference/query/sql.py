"""Compiling metadata filters into SQL predicates, and their budgets (QRY-SQL-*)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from .errors import INVALID_FILTER, SessionQueryError
from .filters import Filter

#: Outer predicates a search statement may carry next to its MATCH (QRY-SQL-004).
PREDICATE_BUDGET: Final = 14
#: Host parameters one statement may bind (QRY-SQL-005).
BINDING_BUDGET: Final = 32_766

HIGHLIGHT_START: Final = "\ufdd0"
HIGHLIGHT_END: Final = "\ufdd1"


@dataclass(frozen=True, slots=True)
class SqlWhere:
    sql: str = ""
    params: tuple[Any, ...] = field(default=())
    predicate_count: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"sql": self.sql, "params": list(self.params),
                "predicateCount": self.predicate_count}


def check_predicates(count: int) -> None:
    if count > PREDICATE_BUDGET:
        raise SessionQueryError(
            INVALID_FILTER, "session-search request exceeds the supported outer-predicate "
            f"budget of {PREDICATE_BUDGET}; reduce filters")


def check_bindings(count: int) -> None:
    if count > BINDING_BUDGET:
        raise SessionQueryError(
            INVALID_FILTER, f"session-search request exceeds the portable {BINDING_BUDGET}-"
            "variable limit; reduce filter values")


class _Builder:
    def __init__(self) -> None:
        self.clauses: list[str] = []
        self.params: list[Any] = []

    def _bind(self, values: Sequence[Any]) -> str:
        check_bindings(len(self.params) + len(values))
        self.params.extend(values)
        return ", ".join("?" for _ in values)

    def list(self, column: str, values: Sequence[Any]) -> None:
        if not values:
            self.clauses.append("0")
            return
        self.clauses.append(f"{column} IN ({self._bind(values)})")

    def nullable(self, column: str, values: Sequence[Any]) -> None:
        if not values:
            self.clauses.append("0")
            return
        concrete = [v for v in values if v is not None]
        parts = [f"{column} IN ({self._bind(concrete)})"] if concrete else []
        if None in values:
            parts.append(f"{column} IS NULL")
        self.clauses.append(f"({' OR '.join(parts)})")

    def range(self, column: str, clause: Filter) -> None:
        for end, op in (("from", ">="), ("to", "<=")):
            if clause.get(end) is not None:
                self._bind([clause[end]])
                self.clauses.append(f"CAST({column} AS INTEGER) {op} ?")

    def done(self) -> SqlWhere:
        check_predicates(len(self.clauses))
        return SqlWhere(" AND ".join(self.clauses), tuple(self.params), len(self.clauses))


def session_where(filters: Sequence[Filter]) -> SqlWhere:
    """Session clauses over the selected documents' session columns (QRY-SQL-001..003)."""
    b = _Builder()
    for clause in filters:
        kind = clause["kind"]
        if kind == "id":
            b.list("session_id", clause["values"])
        elif kind == "cwd":
            b.nullable("cwd", clause["values"])
        elif kind == "parent":
            b.nullable("parent_session", clause["values"])
        elif kind == "created-at":
            b.range("created_at", clause)
        elif kind == "availability":
            distinct = list(dict.fromkeys(clause["values"]))
            if not distinct:
                b.clauses.append("0")
            elif len(distinct) == 1:
                b.clauses.append("live = 1" if distinct[0] == "live" else "persisted = 1")
    return b.done()


def event_where(filters: Sequence[Filter]) -> SqlWhere:
    b = _Builder()
    for clause in filters:
        kind = clause["kind"]
        if kind in ("seq", "time"):
            b.range(kind, clause)
        elif kind in ("type", "surface"):
            b.list(kind, clause["values"])
    return b.done()


def quote_phrase(query: str) -> str:
    """One literal FTS5 phrase: ``"`` + the text with ``"`` doubled + ``"`` (QRY-REQ-003)."""
    return '"' + query.replace('"', '""') + '"'


def sanitize(text: str) -> str:
    """NUL and the two highlight markers become U+FFFD (QRY-IDX-009)."""
    return (text.replace("\0", "\ufffd").replace(HIGHLIGHT_START, "\ufffd")
            .replace(HIGHLIGHT_END, "\ufffd"))
