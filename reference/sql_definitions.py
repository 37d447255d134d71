"""The definitions of a database's schema objects, compared as SQL, not as text.

A file can carry the right object names and columns with different definitions (an audit
column ``NOT NULL ON CONFLICT IGNORE`` silently drops every row that leaves it NULL), so a store
is adopted only when the ``sql`` of each of its ``sqlite_schema`` rows is the one its own DDL
gives. Two definitions are the same when their tokens are: whitespace and comments do not
count, keywords and names are compared without case, and a quoted name equals the bare name,
except a quoted keyword, which is a name where the bare word would be syntax.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Mapping

#: SQLite's keywords (https://sqlite.org/lang_keywords.html).
KEYWORDS = frozenset(["abort", "action", "add", "after", "all", "alter", "always", "analyze", "and", "as", "asc", "attach", "autoincrement", "before", "begin", "between", "by", "cascade", "case", "cast", "check", "collate", "column", "commit", "conflict", "constraint", "create", "cross", "current", "current_date", "current_time", "current_timestamp", "database", "default", "deferrable", "deferred", "delete", "desc", "detach", "distinct", "do", "drop", "each", "else", "end", "escape", "except", "exclude", "exclusive", "exists", "explain", "fail", "filter", "first", "following", "for", "foreign", "from", "full", "generated", "glob", "group", "groups", "having", "if", "ignore", "immediate", "in", "index", "indexed", "initially", "inner", "insert", "instead", "intersect", "into", "is", "isnull", "join", "key", "last", "left", "like", "limit", "match", "materialized", "natural", "no", "not", "nothing", "notnull", "null", "nulls", "of", "offset", "on", "or", "order", "others", "outer", "over", "partition", "plan", "pragma", "preceding", "primary", "query", "raise", "range", "recursive", "references", "regexp", "reindex", "release", "rename", "replace", "restrict", "returning", "right", "rollback", "row", "rows", "savepoint", "select", "set", "table", "temp", "temporary", "then", "ties", "to", "transaction", "trigger", "unbounded", "union", "unique", "update", "using", "vacuum", "values", "view", "virtual", "when", "where", "window", "with", "without"])

_TOKEN = re.compile(r"""
    (?P<skip>\s+|--[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<string>'(?:[^']|'')*')
  | (?P<quoted>"(?:[^"]|"")*"|`(?:[^`]|``)*`|\[[^\]]*\])
  | (?P<number>0[xX][0-9A-Fa-f]+|(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<word>[A-Za-z_\x80-\U0010FFFF][A-Za-z0-9_$\x80-\U0010FFFF]*)
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)

Key = tuple[str, str, str]  # (type, name, tbl_name) of one sqlite_schema row
Definition = tuple[str, ...] | None  # normalised tokens; None for SQLite's implicit indexes


def normalise(sql: str | None) -> Definition:
    """The tokens of one definition, in the form that makes equivalent spellings equal."""
    if sql is None:
        return None
    tokens: list[str] = []
    for match in _TOKEN.finditer(sql):
        kind, text = match.lastgroup, match.group()
        if kind == "skip":
            continue
        if kind == "quoted":
            inner = text[1:-1]
            if text[0] != "[":
                inner = inner.replace(text[0] * 2, text[0])
            name = inner.lower()
            tokens.append(f'"{name}"' if name in KEYWORDS else name)
        elif kind in ("word", "number"):
            tokens.append(text.lower())
        else:
            tokens.append(text)
    return tuple(tokens)


def read(conn: sqlite3.Connection) -> dict[Key, Definition]:
    """Every row of ``sqlite_schema`` with its normalised definition."""
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    return {(str(kind), str(name), str(table)): normalise(sql)
            for kind, name, table, sql in rows}


def built(statements: Iterable[str]) -> dict[Key, Definition]:
    """What ``statements`` create, read from an in-memory database that ran them."""
    conn = sqlite3.connect(":memory:")
    try:
        for statement in statements:
            conn.execute(statement)
        return read(conn)
    finally:
        conn.close()


def altered(found: Mapping[Key, Definition], expected: Mapping[Key, Definition]) -> list[Key]:
    """The objects present in both whose definitions differ, in name order."""
    return sorted(key for key in found.keys() & expected.keys() if found[key] != expected[key])
